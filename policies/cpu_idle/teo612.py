"""teo's rules from Linux 6.12 (``drivers/cpuidle/governors/teo.c`` read in 6.12.118), used by
:class:`policies.cpu_idle.teo.TeoGovernor` on kernels from :data:`RULES_612`.

What changed from 6.1's (the bins, hits, intercepts and their decay stay):

* the candidate is the **deepest enabled state**, not the deepest that fits the sleep length; the
  intercepts of the bins below it decide whether a shallower one is taken (``2 x intercepts below >
  total - hits below``); there are no "recent" intercepts any more;
* the sleep length (the time to the next timer) is read only after that, unless the candidate is
  state 0 or, with a polling state 0, a state under ``RESIDENCY_THRESHOLD_NS`` (15 us, gov.h): then
  the tick keeps running and no timer is read; a candidate deeper than the sleep length allows is
  traded for a shallower one (``teo_find_shallower_state``);
* when the deepest state's target residency is under a tick, idle periods of at least a tick are
  counted in an extra hits-only bin (``tick_hits``), and the tick is kept when intercepts shorter
  than a tick are more than 5/8 of all events.

As for 6.1, the measured duration runs to the wake-up event, so teo_update's subtraction of half
the exit latency is not applied, and there is no PM QoS latency limit. The release in which these
rules came (between 6.1 and 6.12) is not read in a tree: releases before 6.12 keep 6.1's rules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from policies.cpu_idle.teo_bins import DECAY_SHIFT, PULSE, decay_bins, shallower

if TYPE_CHECKING:
    from policies.cpu_idle.teo import TeoGovernor

RULES_612: Final = (6, 12)
"""The first release whose teo follows this module (in 6.12.118, not in 6.1.192)."""
RESIDENCY_THRESHOLD_NS: Final = 15_000.0
"""drivers/cpuidle/governors/gov.h (6.12.118)."""
_INF = float("inf")


def reflect_612(gov: TeoGovernor, measured_ns: float, tick_wakeup: bool) -> None:
    """teo_reflect + teo_update of 6.12: a hit, an intercept or a tick hit, after the decay."""
    total, idx_timer, idx_duration, measured_ns = decay_bins(gov, measured_ns, tick_wakeup)
    tick = gov.tick_period_ns
    if gov._residency[-1] < tick:  # an extra hits-only bin beyond the deepest state's
        gov.tick_hits -= gov.tick_hits >> DECAY_SHIFT
        total += gov.tick_hits
        if tick <= gov.sleep_length_ns:
            idx_timer = len(gov._residency)
            if tick <= measured_ns:
                gov.tick_hits += PULSE
                gov.total = total + PULSE
                return
    if idx_timer == idx_duration:
        gov.hits[idx_timer] += PULSE
    else:
        gov.intercepts[idx_duration] += PULSE
    gov.total = total + PULSE


def _candidate(gov: TeoGovernor, stopped: bool) -> tuple[int, int, int, int]:
    """The deepest enabled state, shallower if intercepts dominate below it: (state, first enabled
    state, intercepts below a tick, state before the intercepts rule)."""
    off, res, intercepts, hits = gov._off, gov._residency, gov.intercepts, gov.hits
    n = len(res)
    idx = 0 if not off[0] else -1
    idx0 = 0
    intercept_sum = hit_sum = idx_intercept_sum = idx_hit_sum = 0
    for i in range(1, n):
        intercept_sum += intercepts[i - 1]
        hit_sum += hits[i - 1]
        if off[i]:
            continue
        if idx < 0:
            idx0 = i
        idx = i
        idx_intercept_sum, idx_hit_sum = intercept_sum, hit_sum
    tick_intercepts = intercept_sum + intercepts[n - 1]
    before = idx
    if idx < 0 or idx == idx0 or not 2 * idx_intercept_sum > gov.total - idx_hit_sum:
        return idx, idx0, tick_intercepts, before
    tick = gov.tick_period_ns
    first = idx
    isum = 0
    for i in range(idx - 1, -1, -1):
        isum += intercepts[i]
        ok = not stopped or res[i] >= tick  # teo_state_ok
        if 2 * isum > idx_intercept_sum:
            return (i if ok and not off[i] else first), idx0, tick_intercepts, before
        if off[i]:
            continue
        if not ok:
            if first != idx:
                continue
            break
        first = i
    return idx, idx0, tick_intercepts, before


def select_612(gov: TeoGovernor, next_timer_ns: float, tick_ns: float | None, delta_tick_ns: float) -> int:
    """teo_select of 6.12; sets ``gov.stop_tick`` and ``gov.sleep_length_ns`` (inf when the
    sleep length was not read)."""
    stopped = tick_ns is None
    tick = gov.tick_period_ns
    res, polling = gov._residency, gov._polling
    gov.sleep_length_ns = _INF
    gov.stop_tick = True
    if len(res) < 2:
        gov.stop_tick = False
        return 0
    idx, idx0, tick_intercepts, before = _candidate(gov, stopped)
    if idx < 0:
        gov.stop_tick = False
        return 0
    lat = gov.latency_req_ns
    if gov._exit_ns[idx] > lat:  # the PM QoS limit, as 6.1's constraint_idx
        while idx > 0 and (gov._exit_ns[idx] > lat or gov._off[idx]):
            idx -= 1
    if idx == idx0:  # one enabled state
        duration = res[idx]
        delta_tick = tick / 2
    else:
        if idx == 0:
            if before:  # read the sleep length, to know after the wake-up whether the guess was right
                gov.sleep_length_ns = next_timer_ns
            gov.stop_tick = False
            return 0
        if polling[0] and res[idx] < RESIDENCY_THRESHOLD_NS:
            gov.stop_tick = False
            return idx
        duration = gov.sleep_length_ns = next_timer_ns
        delta_tick = delta_tick_ns if not stopped else tick / 2
        if res[idx] > duration:
            idx = shallower(gov, idx, duration)
        total = gov.total
        if res[idx] < tick and tick_intercepts > total // 2 + total // 8:
            duration = tick / 2
    if (not polling[idx] and duration >= tick) or stopped:
        return idx
    if idx > idx0 and res[idx] > delta_tick:
        idx = shallower(gov, idx, delta_tick)
    gov.stop_tick = False
    return idx
