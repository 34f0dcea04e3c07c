"""The cpuidle ``teo`` governor (timer events oriented): trust the next timer unless early wake-ups
have dominated.

Follows Linux 6.1 ``drivers/cpuidle/governors/teo.c`` before 6.12 (from 6.12:
:mod:`policies.cpu_idle.teo612`) (Rafael Wysocki's bin-based rework of 5.17;
its ``DOC: teo-description`` comment, also in ``Documentation/admin-guide/pm/cpuidle.rst``): bins
aligned with the idle states' target residencies, each with a "hits" and an "intercepts" metric
(decaying sums); the deepest state whose target residency is within the time to the next timer
(the sleep length) is the candidate, and a shallower one is taken when intercepts dominate.

Each idle state *i* owns a bin of idle durations [target residency *i*, target residency *i+1*).
After every idle period (``teo_update``) the metrics of all bins decay by 1/8 (``DECAY_SHIFT``) and
one ``PULSE`` is added:

* a **hit** to the bin of the sleep length (the time to the next timer when the CPU went idle) if
  the measured idle duration fell into the same bin, i.e. the timer (or something in its bin) woke
  the CPU;
* otherwise an **intercept** to the bin the measured duration fell into (an earlier wake-up: a
  device interrupt, an IPI). The last ``NR_RECENT`` intercepts are also counted per bin ("recent").

``select`` (``teo_select``) takes the deepest enabled state whose target residency fits the sleep
length. If the intercepts of the shallower bins outweigh the hits and intercepts of that state's bin
and deeper ones (``2 x intercepts_below > total - hits_below``), or more than half of the recent
wake-ups were intercepts below it, it walks to shallower states and takes the deepest one below
which the intercepts (and recent intercepts) are not the majority; its expected idle duration
becomes the middle of that state's bin. The tick is kept for a polling state or an expected idle
duration shorter than a tick, and then a state whose target residency exceeds the time to the next
tick is traded for a shallower one (``teo_find_shallower_state``). With the tick already stopped a
shallower state is only taken if its bin's middle is at least a tick long (``teo_time_ok``).

A wake-up by the tick (``tick_wakeup``, teo.c's ``tick_nohz_idle_got_tick()``) with a sleep length
longer than a tick counts as if the CPU had slept for the whole sleep length (``teo_reflect``'s
safety net): a hit in the sleep length's bin, not an intercept, so a CPU with no timer soon picks
the deepest state and stops the tick. The PM QoS CPU latency limit (``cpu.cpu_latency_qos_us``,
teo.c's ``latency_req``) caps the choice at ``constraint_idx``, the deepest state fitting the sleep
length whose exit latency is within it (applied after the intercept rule, and not when the first
enabled state is the only candidate, as teo.c's ``goto end`` skips it). The model's deviations:
the measured duration is the time to the wake-up event, so teo.c's subtraction of half the exit
latency (an estimate of the exit time inside the measured residency) is not applied; a POLL stretch
is never cut by ``cpuidle_poll_time``; teo.c's bookkeeping
at the next ``select`` is done in ``reflect`` (nothing happens between them).
"""

from __future__ import annotations

from models.cpu.config import CpuConfig
from models.cpu.cpuidle import DEFAULT_TICK_NS, CpuidleGovernor
from policies.cpu_idle.base import CPUIDLE_GOVERNORS
from policies.cpu_idle.teo612 import RULES_612, reflect_612, select_612
from policies.cpu_idle.teo_bins import PULSE, decay_bins, shallower

NR_RECENT = 9
"""teo.c (5.17-6.11): number of recent idle periods whose intercepts are tracked per bin."""

_INF = float("inf")


@CPUIDLE_GOVERNORS.register("teo")
class TeoGovernor(CpuidleGovernor):
    """Per-CPU teo state: per-bin hits, intercepts and recent intercepts."""

    __slots__ = (
        "hits",
        "intercepts",
        "recent",
        "total",
        "recent_idx",
        "next_recent",
        "sleep_length_ns",
        "_residency",
        "_middle",
        "_polling",
        "_exit_ns",
        "_enabled",
        "_off",
        "_idx0",
        "tick_hits",
        "_rules612",
    )

    def __init__(self, cfg: CpuConfig, tick_period_ns: float = DEFAULT_TICK_NS):
        super().__init__(cfg, tick_period_ns)
        n = len(cfg.cstates)
        self.hits = [0] * n
        self.intercepts = [0] * n
        self.recent = [0] * n
        self.total = 0
        #: the bin of each of the last NR_RECENT intercepts (-1: that period was a hit)
        self.recent_idx = [-1] * NR_RECENT
        self.next_recent = 0
        #: the time to the next timer at the last select, ns (inf: no choice was made)
        self.sleep_length_ns = _INF
        self._residency = tuple(st.target_residency_ns for st in cfg.cstates)
        #: teo_middle_of_bin(i): the middle of bin i, the expected idle duration when state i is picked
        self._middle = tuple((self._residency[i] + self._residency[i + 1]) / 2 for i in range(n - 1))
        self._polling = tuple(st.polling for st in cfg.cstates)
        self._exit_ns = tuple(st.exit_latency_ns for st in cfg.cstates)
        self._enabled = self.enabled_states()
        off = set(cfg.cpuidle_disable)
        self._off = tuple(st.name in off for st in cfg.cstates)
        #: the first enabled state (state 0 if all are disabled)
        self._idx0 = self._enabled[0]
        #: 6.12's hits-only bin of idle periods of at least a tick (policies.cpu_idle.teo612)
        self.tick_hits = 0
        self._rules612 = False

    def for_kernel(self, release: tuple[int, int]) -> None:
        """6.12's rules from :data:`policies.cpu_idle.teo612.RULES_612` on, 6.1's before."""
        self.kernel_release = release
        self._rules612 = release >= RULES_612

    def select(
        self, next_timer_ns: float, iowaiters: int, tick_ns: float | None = None, delta_tick_ns: float = 0.0
    ) -> int:
        """teo_select (``iowaiters`` plays no part in teo)."""
        if self._rules612:
            return select_612(self, next_timer_ns, tick_ns, delta_tick_ns)
        self.sleep_length_ns = next_timer_ns
        idx, duration = self._pick(next_timer_ns, tick_ns)
        if tick_ns is None:  # no running tick: nothing to decide
            return idx
        # keep the tick for a polling state or an expected idle shorter than a tick
        self.stop_tick = not (self._polling[idx] or duration < tick_ns)
        if not self.stop_tick:
            res = self._residency
            if idx > self._idx0 and res[idx] > delta_tick_ns:
                idx = shallower(self, idx, delta_tick_ns)
        return idx

    def _pick(self, duration: float, tick_ns: float | None) -> tuple[int, float]:
        """The state and its expected idle duration, before the tick decision."""
        res = self._residency
        off = self._off
        n = len(res)
        if n < 2:
            return 0, duration
        if not off[0] and res[1] > duration:
            return 0, duration  # nothing deeper than state 0 fits the sleep length
        # the deepest enabled state fitting the sleep length; metric sums of the bins below it
        hits, intercepts, recent = self.hits, self.intercepts, self.recent
        idx = 0 if not off[0] else -1
        idx0 = constraint_idx = 0
        lat = self.latency_req_ns
        exit_ns = self._exit_ns
        intercept_sum = hit_sum = recent_sum = 0
        idx_intercept_sum = idx_hit_sum = idx_recent_sum = 0
        for i in range(1, n):
            intercept_sum += intercepts[i - 1]
            hit_sum += hits[i - 1]
            recent_sum += recent[i - 1]
            if off[i]:
                continue
            if idx < 0:
                idx = idx0 = i  # the first enabled state
            if res[i] > duration:
                break
            idx = i
            if exit_ns[i] <= lat:  # the PM QoS limit: teo.c's constraint_idx
                constraint_idx = i
            idx_intercept_sum = intercept_sum
            idx_hit_sum = hit_sum
            idx_recent_sum = recent_sum
        if idx < 0:
            return 0, duration  # no state enabled: state 0
        if idx == idx0:
            return idx, duration
        idx, duration = self._intercepted(idx, duration, tick_ns, idx_intercept_sum, idx_hit_sum, idx_recent_sum)
        if idx > constraint_idx:  # teo.c: 'if (idx > constraint_idx) idx = constraint_idx'
            idx = constraint_idx
        return idx, duration

    def _intercepted(
        self,
        idx: int,
        duration: float,
        tick_ns: float | None,
        idx_intercept_sum: int,
        idx_hit_sum: int,
        idx_recent_sum: int,
    ) -> tuple[int, float]:
        """teo_select's intercept rule: the candidate ``idx`` and its duration, or a shallower state
        and the middle of its bin when early wake-ups dominate below the candidate."""
        off = self._off
        intercepts, recent = self.intercepts, self.recent
        alt_intercepts = 2 * idx_intercept_sum > self.total - idx_hit_sum
        alt_recent = idx_recent_sum > NR_RECENT // 2
        if not (alt_intercepts or alt_recent):
            return idx, duration
        # early wake-ups dominate: the deepest shallower state below which they are not the majority
        tick_len = self.tick_period_ns if tick_ns is None else tick_ns
        stopped = tick_ns is None
        first_idx, first_span = idx, duration
        intercept_sum = recent_sum = 0
        middle = self._middle
        for i in range(idx - 1, -1, -1):
            intercept_sum += intercepts[i]
            recent_sum += recent[i]
            span = middle[i]
            time_ok = not stopped or span >= tick_len  # teo_time_ok
            if (not alt_recent or 2 * recent_sum > idx_recent_sum) and (
                not alt_intercepts or 2 * intercept_sum > idx_intercept_sum
            ):
                if time_ok and not off[i]:
                    return i, span
                return first_idx, first_span  # too shallow or disabled: the first suitable deeper one
            if off[i]:
                continue
            if not time_ok:
                if first_idx != idx:
                    continue
                break
            first_idx, first_span = i, span
        return idx, duration

    def reflect(self, measured_ns: float, tick_wakeup: bool = False) -> None:
        """teo_reflect + teo_update: a hit or an intercept, after decaying every bin."""
        if self._rules612:
            reflect_612(self, measured_ns, tick_wakeup)
            return
        total, idx_timer, idx_duration, _ = decay_bins(self, measured_ns, tick_wakeup)
        hits, intercepts = self.hits, self.intercepts
        k = self.next_recent
        self.next_recent = (k + 1) % NR_RECENT
        old = self.recent_idx[k]
        if old >= 0:
            self.recent[old] -= 1
        if idx_timer == idx_duration:
            hits[idx_timer] += PULSE
            self.recent_idx[k] = -1
        else:
            intercepts[idx_duration] += PULSE
            self.recent[idx_duration] += 1
            self.recent_idx[k] = idx_duration
        self.total = total + PULSE
