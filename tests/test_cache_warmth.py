"""Cache warmth (issue 15): a user task switched in after another one, or after its CPU idled in a
state that flushes the core caches, first refetches its working set (kernel.cold_*_refill_cycles,
the ``cache`` layer); a task that keeps its CPU warm pays nothing."""

from __future__ import annotations

from scenarios.config.host import resolve
from scenarios.run.simulate import simulate

BASE = {"runtime": "20ms", "ramp_time": "2ms"}


def _summary(**sets):
    return simulate(resolve(sets={**BASE, **{k: str(v) for k, v in sets.items()}}))["summary"]


def test_one_thread_idling_in_shallow_states_stays_warm():
    s = _summary()
    assert s["layers"]["cache"] == 0.0
    assert _summary(**{"queue.io_poll": 1, "hipri": 1})["layers"]["cache"] == 0.0  # classic polling


def test_two_tasks_sharing_a_cpu_pay_a_refill_per_switch_between_them():
    s = _summary(numjobs=2, cpus_allowed="0", **{"kernel.cold_switch_refill_cycles": 5000})
    cfg = resolve(sets=BASE)
    per_switch_ns = 5000 / cfg.platform.cpu.base_freq_ghz
    assert s["layers"]["cache"] > 0.3 * per_switch_ns  # most IOs end with a switch between the two
    none = _summary(
        numjobs=2, cpus_allowed="0", **{"kernel.cold_switch_refill_cycles": 0, "kernel.cold_idle_refill_cycles": 0}
    )
    assert none["layers"]["cache"] == 0.0
    assert s["latency_us"]["mean"] > none["latency_us"]["mean"]


def test_a_cache_flushing_idle_state_makes_the_next_io_pay_the_refill():
    """At 2,000 IO/s the CPU idles ~500 us between IOs, deep enough for C6 and beyond (they flush
    L1/L2): the wake-ups after them pay cold_idle_refill_cycles."""
    sets = {"rate_iops": 2000}
    warm = _summary(**sets, **{"kernel.cold_idle_refill_cycles": 0})
    cold = _summary(**sets)
    cfg = resolve(sets=BASE)
    refill_ns = cfg.platform.kernel.cold_idle_refill_cycles / cfg.platform.cpu.base_freq_ghz
    # one refill after the rate's sleep, and one more when the wait for the IO itself went deep
    assert refill_ns * 0.9 < cold["layers"]["cache"] < 2.1 * refill_ns
    assert warm["layers"]["cache"] == 0.0
    assert cold["latency_us"]["mean"] > warm["latency_us"]["mean"]


def test_refill_stalls_add_no_memory_operations():
    s = _summary(numjobs=2, cpus_allowed="0")
    assert s["layers"]["cache"] > 0
    from models.os.costs.memops import SOURCE_CELLS

    assert SOURCE_CELLS["cache"] == ()
