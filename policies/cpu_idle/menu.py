"""The cpuidle ``menu`` governor: pick an idle state from the predicted idle duration.

Follows Linux ``drivers/cpuidle/governors/menu.c`` of 5.x-6.1 (read in 6.1.192), simplified where
noted, for kernels before 6.12; from 6.12 (``kernel.version``, :data:`RULES_612`) its 6.12.118 rules,
:meth:`MenuGovernor._select_612`. The 6.1 rules:
- predicted idle = time to the next known timer x a correction factor learned per bucket
  (12 buckets by magnitude of the timer distance, doubled when IO waiters exist), decayed with
  weight 1/8 (``DECAY``), in units of 1/1024 (``RESOLUTION``);
- a repeating-interval detector over the last 8 idle periods, kept in whole microseconds as menu.c
  keeps them (``ktime_to_us``), with menu.c's integer arithmetic: when their spread is small, their
  average replaces the prediction if shorter (the largest values are dropped, 3 tries);
- state 0 at once when state 1 cannot pay off (next timer under its target residency, PM QoS limit
  under its exit latency, or a limit of 0);
- the prediction in whole us; with the tick stopped, a prediction under a tick becomes the next
  timer; with it running, the exit latency must not exceed min(PM QoS, predicted / (1 + 10 x
  iowaiters)) (the "performance multiplier", still in 6.1.192);
- the deepest enabled state with target residency <= prediction and exit latency within the limit
  is chosen; a POLL choice gives way to the next state if its exit latency is within the limit and
  its residency within the next timer; a running tick with a prediction of a tick or more that the
  deepest state does not fit keeps the tick (the prediction becomes the chosen state's residency);
- with a running tick, the tick is kept for a POLL state or a prediction shorter than a tick; a
  wake-up by that tick with the next timer beyond it is learnt as a long idle (menu_update's
  ``tick_wakeup`` case), so a CPU with no timer stops its tick after a few tick wake-ups; a short
  idle loses the exit latency menu_update deducts (halved within twice the exit latency).
:meth:`MenuGovernor._select_61` lists them in menu.c's order.

The 6.12 rules drop the IO-wait terms (6 buckets, no multiplier: a CPU whose thread waits 60 us
for a flash read picks a state of up to 60 us target residency, C1E rather than C1 on a server
table), read the repeating-interval detector before the timer, and give a POLL state up for a
physical one whose exit latency fits the prediction.

The POLL state spins in C0 until an interrupt. (Linux bounds one POLL spin by ``cpuidle_poll_time``
and then asks the governor again, which, with unchanged inputs, returns the same answer, so the
model simply keeps spinning.)
"""

from __future__ import annotations

from typing import Final

from models.cpu.config import CpuConfig
from models.cpu.cpuidle import DEFAULT_TICK_NS, NO_TIMER_NS, CpuidleGovernor
from policies.cpu_idle.base import CPUIDLE_GOVERNORS

RESOLUTION: Final = 1024
DECAY: Final = 8
BUCKETS: Final = 6
MAX_INTERESTING_NS: Final = 50_000_000.0
INTERVALS: Final = 8
INTERVAL_SHIFT: Final = 3  # menu.c: INTERVALS = 1 << INTERVAL_SHIFT
RESIDENCY_THRESHOLD_NS: Final = 15_000.0
"""drivers/cpuidle/governors/gov.h (6.12.118): below it a typical interval is trusted without
reading the time to the next timer, and a polling state yields to a physical one."""
KTIME_MAX_NS: Final = 9.223372036854775807e18
"""KTIME_MAX, ns: 6.12's next timer when it is not read (so the correction of that bucket decays)."""
RULES_612: Final = (6, 12)
"""The first release whose menu follows :meth:`MenuGovernor._select_612`: in 6.12.118, not in
6.1.192. Its two changes: the IO-wait terms removed ("cpuidle: menu: Remove iowait influence", 6.12
from the release history) and the typical interval read first (between 6.1 and 6.12, the release not
read in a tree: releases before 6.12 keep 6.1's rules here)."""


def _which_bucket(next_timer_ns: float) -> int:
    """menu.c which_bucket(): buckets by decade of the timer distance, from 10 us to 100 ms (a second
    set of buckets with IO waiters is the caller's)."""
    if next_timer_ns < 10_000.0:
        return 0
    if next_timer_ns < 100_000.0:
        return 1
    if next_timer_ns < 1_000_000.0:
        return 2
    if next_timer_ns < 10_000_000.0:
        return 3
    if next_timer_ns < 100_000_000.0:
        return 4
    return 5


def _floor_div(x: float, d: float) -> float:
    """``x // d`` (the exact floor of the quotient, as Python's float floor division gives it) for
    a whole ``d > 0`` and a quotient below 2**53 / d (so ``q * d`` is exact): the rounded quotient,
    stepped down when it rounded up to the next whole number (compiled, a division and a
    comparison; Python's ``//`` on floats calls fmod)."""
    q = float(int(x / d))
    if q * d > x:
        q -= 1.0
    return q


def _whole_us(ns: float) -> int:
    """menu.c's ``ktime_to_us``: whole microseconds of ``ns``."""
    return int(_floor_div(ns, 1000.0))


class MenuGovernor(CpuidleGovernor):
    """Per-CPU menu governor state (correction factors and recent intervals)."""

    __slots__ = (
        "states",
        "correction",
        "intervals",
        "interval_ptr",
        "bucket",
        "next_timer_ns",
        "_first",
        "_enabled",
        "_polling",
        "_residency",
        "_exit_ns",
        "_sum_us",
        "_sq_us",
        "_typical_ns",
        "_typical_known",
        "_rules612",
        "_last_idx",
        "_untouched",
    )

    def __init__(self, cfg: CpuConfig, tick_period_ns: float = DEFAULT_TICK_NS):
        super().__init__(cfg, tick_period_ns)
        self.states = cfg.cstates
        enabled = self.enabled_states()
        #: the first enabled state: the answer when nothing deeper fits (state 0 if none is enabled)
        self._first = enabled[0]
        self._enabled = enabled
        self._polling: tuple[bool, ...] = tuple(st.polling for st in cfg.cstates)
        self._residency: tuple[float, ...] = tuple(st.target_residency_ns for st in cfg.cstates)
        self._exit_ns: tuple[float, ...] = tuple(st.exit_latency_ns for st in cfg.cstates)
        self.correction: list[float] = [float(RESOLUTION * DECAY)] * (2 * BUCKETS)
        #: the last idle periods in whole us (menu.c's data->intervals), and their running sum and
        #: sum of squares (exact integers: the detector's first pass costs O(1)): zeroes, as
        #: menu_enable_device leaves them, ``_untouched`` until the first period is recorded. In 6.1
        #: a ring of zeros reads as a 0 us pattern and the CPU polls; poll_idle then stops after
        #: cpuidle_poll_time (the first state's target residency, at most TICK_NSEC / 16) and
        #: menu_update records the period as the next timer, so a few short polls later the ring
        #: holds long periods. That time limit is not modelled (a POLL here lasts until a wake-up),
        #: so the untouched ring reads as no pattern, which is where those polls lead. (``prime``
        #: sets another history: a machine idle long before the run holds tick-ended periods,
        #: 9/10 of MAX_INTERESTING = 45,000 us each.)
        self.prime(0.0)
        self._untouched = True
        #: the detector's answer for the ring as it is (ns, -1.0: no pattern; valid while
        #: ``_typical_known``, cleared when the ring changes: the ring mostly repeats itself, an idle
        #: period of the same whole us as 8 periods before leaves the ring, and the answer, unchanged)
        self._typical_ns = -1.0
        self._typical_known = False
        self.interval_ptr = 0
        self.bucket = 0
        self.next_timer_ns = NO_TIMER_NS
        self._rules612 = False
        #: the state chosen by the last select (menu_update deducts its exit latency)
        self._last_idx = 0

    def prime(self, idle_ns: float) -> None:
        """Fill the interval ring with ``idle_ns`` (what the generic loop of timer-ended periods
        leaves: their correction factor stays 1, so only the recent intervals change)."""
        us = _whole_us(idle_ns)
        self.intervals = [us] * INTERVALS
        self._sum_us = us * INTERVALS
        self._sq_us = us * us * INTERVALS
        self._typical_known = False
        self._untouched = False

    def _typical_interval(self) -> float:
        """The repeating-pattern detector of menu.c (get_typical_interval), ns (-1.0: no pattern;
        compiled, a float, where ``float | None`` would box each answer).

        In whole us with menu.c's integer arithmetic: the average and the variance (sum of squared
        deviations from the integer average, divided by the count) of the values up to ``thresh``;
        a pattern when avg^2 > 36 variance with at least 3/4 of the values left, or variance <= 400
        us^2; else the largest values are dropped (``thresh = max - 1``) and it tries again, at most
        3 times in all. The first pass reads the ring's running sums; each further one takes the
        sums of the values kept and of their squares in one loop."""
        total = self._sum_us
        if total == 0:
            # 6.12's 'if (!max) return UINT_MAX'; 6.1.192 has no such test: a ring of zeros has
            # average and variance 0, a pattern of 0 us (its 'min >= predicted_us' test only
            # matters for a prediction of 0, where the answer is the same)
            # (an untouched ring: see __init__, poll_idle's time limit)
            return -1.0 if self._rules612 or self._untouched else 0.0
        avg = total >> INTERVAL_SHIFT
        var = (self._sq_us - 2 * avg * total + INTERVALS * avg * avg) >> INTERVAL_SHIFT
        if avg * avg > 36 * var or var <= 400:  # all INTERVALS values count (>= 3/4 of them)
            return avg * 1000.0
        data = self.intervals
        thresh = -1
        for v in data:  # (native loops and non-negative products: compiled, no generic call)
            if v > thresh:
                thresh = v
        thresh -= 1
        for _ in range(2):
            total = n = top = sq = 0
            for v in data:
                if v <= thresh:
                    total += v
                    n += 1
                    sq += v * v
                    if v > top:
                        top = v
            if top == 0:
                return -1.0 if self._rules612 else 0.0
            avg = total // n
            # the squared deviations from avg, summed: sum(v^2) - 2 avg sum(v) + n avg^2, exactly
            var = (sq - 2 * avg * total + n * avg * avg) // n
            if (avg * avg > 36 * var and n * 4 >= INTERVALS * 3) or var <= 400:
                return avg * 1000.0
            if n * 4 <= INTERVALS * 3:
                return -1.0
            thresh = top - 1
        return -1.0

    def for_kernel(self, release: tuple[int, int]) -> None:
        """6.12's rules from :data:`RULES_612` on (:meth:`_select_612`), 6.1's before."""
        self.kernel_release = release
        self._rules612 = release >= RULES_612
        self._typical_known = False  # a ring of zeros reads differently (_typical_interval)

    def select(
        self, next_timer_ns: float, iowaiters: int, tick_ns: float | None = None, delta_tick_ns: float = 0.0
    ) -> int:
        """Index of the chosen state for a CPU about to idle. With a periodic tick (``tick_ns``, the
        next one ``delta_tick_ns`` away) it also decides ``stop_tick`` as menu.c does: the tick keeps
        running for a polling state or a predicted idle shorter than a tick, and then a state whose
        target residency exceeds the time to the tick is traded for a shallower one."""
        if self._rules612:
            return self._select_612(next_timer_ns, tick_ns, delta_tick_ns)
        return self._select_61(next_timer_ns, iowaiters, tick_ns, delta_tick_ns)

    # long: menu_select's rules in menu.c's own order, one pass (every idle entry runs it)
    def _select_61(self, nt: float, iowaiters: int, tick_ns: float | None, delta_tick_ns: float) -> int:
        """menu_select of 6.1.192 (drivers/cpuidle/governors/menu.c), rule by rule:

        1. state 0 at once when there is no choice: one state, a PM QoS limit of 0, or (state 0
           enabled) a next timer closer than state 1's target residency or a limit below state 1's
           exit latency; the tick then stops unless state 0 polls;
        2. predicted = next timer x correction, rounded to whole us (half up), or the typical interval
           if shorter (get_typical_interval);
        3. tick stopped (``tick_ns`` None): a prediction under a tick becomes the next timer itself;
           tick running: the latency limit is min(PM QoS, predicted / (1 + 10 x iowaiters));
        4. the deepest enabled state whose target residency fits and whose exit latency is within the
           limit; at the first state that does not fit: a POLL choice gives way to it if its exit
           latency is within the limit and its residency within the next timer; else, with a running
           tick and a prediction of at least a tick, the prediction becomes the chosen state's target
           residency (the tick is kept: the governor runs again at the next tick); with a stopped
           tick, the state deeper than a shallow choice (target residency under a tick) is taken if
           it fits the time to the next event (``delta_tick``: with the tick stopped, the clock event
           device is programmed for the next timer, so ``delta_tick_ns`` is the next timer);
        5. with a running tick, the tick is kept for a POLL state or a prediction under a tick, and a
           state deeper than the time to the next tick is traded for a shallower one."""
        stopped = tick_ns is None
        if tick_ns is None:
            tick = self.tick_period_ns
            delta_tick_ns = nt
        else:
            tick = tick_ns
        self.next_timer_ns = nt
        b = self.bucket = (BUCKETS if iowaiters else 0) + _which_bucket(nt)
        polling, residency, exit_ns = self._polling, self._residency, self._exit_ns
        lat = self.latency_req_ns
        self.stop_tick = True
        if len(residency) <= 1 or lat == 0.0 or ((nt < residency[1] or lat < exit_ns[1]) and self._first == 0):
            self.stop_tick = not polling[0]
            self._last_idx = 0
            return 0
        unit = RESOLUTION * DECAY * 1000.0
        predicted = _floor_div(unit / 2 + nt * self.correction[b], unit) * 1000.0
        typical = self._typical()
        if typical >= 0.0 and typical < predicted:
            predicted = typical
        if stopped:
            if predicted < tick:
                predicted = nt
        else:
            interactivity = _floor_div(predicted, 1.0 + 10.0 * iowaiters)
            if interactivity < lat:
                lat = interactivity
        idx = -1
        for i in self._enabled:
            if idx == -1:
                idx = i  # the first enabled state
            if residency[i] > predicted:
                if polling[idx] and exit_ns[i] <= lat and residency[i] <= nt:
                    predicted = residency[i]
                    idx = i
                    break
                if predicted < tick:
                    break
                if not stopped:
                    predicted = residency[idx]
                    break
                if residency[idx] < tick and residency[i] <= delta_tick_ns:
                    idx = i
                self._last_idx = idx
                return idx
            if exit_ns[i] > lat:
                break
            idx = i
        if idx == -1:
            idx = 0
        if (polling[idx] or predicted < tick) and not stopped:
            self.stop_tick = False
            if idx > 0 and residency[idx] > delta_tick_ns:
                idx = self._within_tick(idx, delta_tick_ns)
        self._last_idx = idx
        return idx

    def _typical(self) -> float:
        """The repeating-interval detector's answer for the ring as it is (ns, -1.0: no pattern),
        computed once per change of the ring; a new answer voids the state kept for it."""
        if not self._typical_known:
            self._typical_ns = self._typical_interval()
            self._typical_known = True
        return self._typical_ns

    def _within_tick(self, idx: int, delta_tick_ns: float) -> int:
        """The tick keeps running: the deepest enabled state below ``idx`` whose target residency
        is within the time to the next tick (the shallowest enabled one below it if none is)."""
        residency = self._residency
        for i in reversed(self._enabled):
            if i < idx:
                idx = i
                if residency[i] <= delta_tick_ns:
                    break
        return idx

    def _select_612(self, next_timer_ns: float, tick_ns: float | None, delta_tick_ns: float) -> int:
        """menu_select of 6.12.118: the repeating-interval detector first; the time to the next timer
        is read (and corrected) only when its answer exceeds RESIDENCY_THRESHOLD_NS or the tick is
        stopped (``tick_ns`` None), else the next timer is taken as far away and the tick as half a
        period off. No IO-wait term: one set of buckets, no performance multiplier (a CPU whose task
        waits for IO may pick any state whose target residency fits). The PM QoS limit
        (``latency_req_ns``) as in 6.1: state 0 when it is 0 or below state 1's exit latency, and no
        state whose exit latency exceeds it."""
        stopped = tick_ns is None
        tick = self.tick_period_ns
        typical = self._typical()
        predicted = typical if typical >= 0.0 else KTIME_MAX_NS
        if predicted > RESIDENCY_THRESHOLD_NS or stopped:
            nt = next_timer_ns
            b = self.bucket = _which_bucket(nt)
            unit = RESOLUTION * DECAY * 1000.0  # round up half microseconds (menu.c's timer_us)
            timer_ns = _floor_div(unit / 2 + nt * self.correction[b], unit) * 1000.0
            if timer_ns < predicted:
                predicted = timer_ns
            if stopped and predicted < tick:
                predicted = nt
        else:
            nt = KTIME_MAX_NS
            delta_tick_ns = tick / 2
            self.bucket = _which_bucket(nt)
        self.next_timer_ns = nt
        polling, residency, exit_ns = self._polling, self._residency, self._exit_ns
        self.stop_tick = True
        lat = self.latency_req_ns
        if len(residency) <= 1 or lat == 0.0 or ((nt < residency[1] or lat < exit_ns[1]) and self._first == 0):
            self.stop_tick = not polling[0]
            return 0
        idx = -1
        for i in self._enabled:
            if idx == -1:
                idx = i  # the first enabled state
            if residency[i] <= predicted:
                if exit_ns[i] > lat:  # the PM QoS limit (menu.c: 'exit_latency_ns > latency_req')
                    break
                idx = i
                continue
            if (
                polling[idx]
                and residency[i] < RESIDENCY_THRESHOLD_NS
                and residency[i] <= nt
                and exit_ns[i] <= predicted
                and exit_ns[i] <= lat
            ):
                predicted = residency[i]
                idx = i
                break
            if predicted < tick:
                break
            if not stopped:
                predicted = residency[idx]
                break
            if residency[idx] < tick and residency[i] <= delta_tick_ns:
                idx = i
            return idx
        if (polling[idx] or predicted < tick) and not stopped:
            self.stop_tick = False
            if idx > 0 and residency[idx] > delta_tick_ns:
                idx = self._within_tick(idx, delta_tick_ns)
        return idx

    def reflect(self, measured_ns: float, tick_wakeup: bool = False) -> None:
        """Learn from an idle period that lasted ``measured_ns`` (menu_update). A wake-up by the
        tick while the next timer lay beyond it counts as an idle of 9/10 of MAX_INTERESTING (the
        prediction kept a tick that was not needed: next time it stops); the measured time is
        capped at the sleep length (menu.c: "coefficients do not exceed unity")."""
        nt = self.next_timer_ns
        if tick_wakeup and nt > self.tick_period_ns:
            measured_ns = 0.9 * MAX_INTERESTING_NS
        elif not self._rules612:
            # 6.1's "Deduct exit latency": last_residency_ns runs to the end of the state's exit,
            # i.e. measured_ns + exit; more than twice the exit latency loses it (measured_ns
            # again), else it is halved
            exit_ns = self._exit_ns[self._last_idx]
            if measured_ns <= exit_ns:
                measured_ns = (measured_ns + exit_ns) / 2
        if measured_ns > nt:
            measured_ns = nt
        b = self.bucket
        c = self.correction[b]
        c -= _floor_div(c, float(DECAY))
        if nt > 0 and measured_ns < MAX_INTERESTING_NS:
            c += RESOLUTION * measured_ns / nt
        else:
            c += RESOLUTION
        if c <= 0:
            c = 1.0
        self.correction[b] = c
        us = _whole_us(measured_ns)
        if self._untouched:
            self._untouched = False
            self._typical_known = False
        ptr = self.interval_ptr
        old = self.intervals[ptr]
        if us != old:
            self.intervals[ptr] = us
            self._sum_us += us - old
            self._sq_us += us * us - old * old
            self._typical_known = False
        self.interval_ptr = (ptr + 1) % INTERVALS


# registered here, not by a class decorator: a decorated class would not be compiled (simcore.compiled)
CPUIDLE_GOVERNORS.register("menu")(MenuGovernor)
