"""teo's bins as both its rule sets keep them (Linux ``drivers/cpuidle/governors/teo.c``, 6.1.192 and
6.12.118): the per-update decay of every bin's metrics, the bins the sleep length and the measured
idle duration fall into, and ``teo_find_shallower_state``. Used by :mod:`policies.cpu_idle.teo`
(6.1's rules) and :mod:`policies.cpu_idle.teo612`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from policies.cpu_idle.teo import TeoGovernor

PULSE: Final = 1024
"""teo.c: the amount added to a bin's metric per event."""
DECAY_SHIFT: Final = 3
"""teo.c: each update keeps 7/8 of every metric (``m -= m >> DECAY_SHIFT``)."""

_INF = float("inf")


def decay_bins(gov: TeoGovernor, measured_ns: float, tick_wakeup: bool) -> tuple[int, int, int, float]:
    """teo_reflect's safety net and teo_update's first loop: decay every bin's hits and intercepts
    and find the bins of the sleep length and of the measured duration. A wake-up by the tick with a
    sleep length beyond a tick, or one at or after the expected timer, counts as the whole sleep
    length (the measured duration is infinite). Returns (the decayed total, the sleep length's bin,
    the measured duration's bin, the measured duration)."""
    sleep = gov.sleep_length_ns
    if (tick_wakeup and sleep > gov.tick_period_ns) or measured_ns >= sleep:
        measured_ns = _INF
    hits, intercepts, res = gov.hits, gov.intercepts, gov._residency
    total = 0
    idx_timer = idx_duration = 0
    for i in range(len(res)):
        h = hits[i] = hits[i] - (hits[i] >> DECAY_SHIFT)
        c = intercepts[i] = intercepts[i] - (intercepts[i] >> DECAY_SHIFT)
        total += h + c
        if res[i] <= sleep:
            idx_timer = i
            if res[i] <= measured_ns:
                idx_duration = i
    return total, idx_timer, idx_duration, measured_ns


def shallower(gov: TeoGovernor, idx: int, duration_ns: float) -> int:
    """teo_find_shallower_state: the deepest enabled state below ``idx`` fitting ``duration_ns``
    (the shallowest enabled one below it if none does)."""
    off, res = gov._off, gov._residency
    for i in range(idx - 1, -1, -1):
        if off[i]:
            continue
        idx = i
        if res[i] <= duration_ns:
            break
    return idx
