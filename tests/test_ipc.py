"""Instructions and IPC (issue 30, item 2): each cost bundle retires its cycles / its layer's warm CPI,
a cold core pays refetch stalls (cycles, no instructions), and the run reports what ``perf stat -a``
counts: unhalted cycles (the cpuidle POLL spin included, halted idle not) and instructions retired."""

from __future__ import annotations

import pytest

from scenarios.config.host import resolve
from scenarios.run.simulate import simulate
from simcore.errors import ConfigError

BASE = {"runtime": "20ms", "ramp_time": "2ms"}


def _run(**sets):
    cfg = resolve(sets={**BASE, **{k.replace("__", "."): str(v) for k, v in sets.items()}})
    return cfg, simulate(cfg)["summary"]


def _conserved(s: dict) -> None:
    rows = s["perf_by_layer"].values()
    assert sum(r["instructions_per_io"] for r in rows) == pytest.approx(s["instructions_per_io"], rel=1e-12)
    assert sum(r["cycles_per_io"] for r in rows) == pytest.approx(s["cycles_per_io"], rel=1e-12)
    assert s["ipc"] == pytest.approx(s["instructions_per_io"] / s["cycles_per_io"], rel=1e-12)


def test_a_loop_that_repeats_on_its_cpu_runs_every_layer_at_its_warm_cpi():
    """One thread polling its completions never leaves its CPU: no refetch stalls, and each layer
    (the poll loop's included) retires its cycles / its warm CPI."""
    cfg, s = _run(queue__io_poll=1, hipri=1)
    cpi = cfg.platform.kernel.cpi_by_layer
    assert "cache" not in s["perf_by_layer"] and "idle_spin" not in s["perf_by_layer"]
    for layer, row in s["perf_by_layer"].items():
        assert row["ipc"] == pytest.approx(1 / cpi[layer], rel=1e-9), layer
    assert s["perf_by_layer"]["polling"]["instructions_per_io"] > s["perf_by_layer"]["fs"]["instructions_per_io"]
    _conserved(s)


def test_after_a_cache_flushing_idle_state_the_same_instructions_take_more_cycles():
    """At 2,000 IO/s the CPU idles in C6 and deeper (they flush L1/L2) between IOs: the wake-up's
    work retires the same instructions as on a core whose caches survive, in more cycles."""
    sets = {"rate_iops": 2000, "runtime": "60ms"}
    _, warm = _run(**sets, kernel__cold_idle_refill_cycles=0)
    cfg, cold = _run(**sets)

    def work(s: dict, what: str) -> float:  # the IO path's own, without the POLL spin before a deeper state
        return sum(row[what] for k, row in s["perf_by_layer"].items() if k not in ("idle_spin", "cache"))

    assert work(cold, "instructions_per_io") == pytest.approx(work(warm, "instructions_per_io"), rel=0.02)
    assert work(cold, "cycles_per_io") == pytest.approx(work(warm, "cycles_per_io"), rel=0.02)
    refill = cfg.platform.kernel.cold_idle_refill_cycles
    stalls = cold["perf_by_layer"]["cache"]
    assert stalls["instructions_per_io"] == 0.0 and refill * 0.9 < stalls["cycles_per_io"] < 2.1 * refill
    cold_ipc = work(cold, "instructions_per_io") / (work(cold, "cycles_per_io") + stalls["cycles_per_io"])
    assert cold_ipc < 0.95 * work(warm, "instructions_per_io") / work(warm, "cycles_per_io")
    _conserved(cold)


def test_the_switch_refill_grows_with_the_other_work_since_the_task_left_its_cpu():
    """Two threads share cpu0: each switch in refetches the share of the working set the other's
    work displaced, up to all of it (cold_switch_evict_cycles of other work)."""
    common = {"numjobs": 2, "cpus_allowed": "0", "kernel.cold_switch_refill_cycles": 8000}
    _, full = _run(**common, kernel__cold_switch_evict_cycles=1)
    _, little = _run(**common, kernel__cold_switch_evict_cycles=1e9)
    ratio = little["perf_by_layer"]["cache"]["cycles_per_io"] / full["perf_by_layer"]["cache"]["cycles_per_io"]
    assert ratio == pytest.approx(1 / 8, rel=0.1)  # the smallest step: 1 / REFILL_STEPS


def test_halted_idle_counts_no_cycles():
    """Idle in halted states only (POLL disabled): the cycles per IO are the work's, whatever the
    idle time between IOs (halving the rate doubles the idle time, not the cycles)."""
    cpu = resolve(sets=BASE).platform.cpu
    rows = {}
    for rate in (1000, 2000):
        _, s = _run(rate_iops=rate, cpu__cpuidle_disable="[POLL]", kernel__cold_idle_refill_cycles=0)
        assert "idle_spin" not in s["perf_by_layer"]
        rows[rate] = s
    assert rows[1000]["cycles_per_io"] == pytest.approx(rows[2000]["cycles_per_io"], rel=0.1)  # ticks differ
    assert rows[1000]["cycles_per_io"] < 0.05 * cpu.base_freq_ghz * 1e9 / 1000  # idle is ~99% of the time


def test_polling_idle_counts_cycles_and_retires_its_pause_loop():
    """idle=poll: every CPU spins in POLL when idle, so every CPU counts cycles all the time, and
    the spin retires poll_idle_loop_instructions per PAUSE."""
    cpu = resolve(sets=BASE).platform.cpu
    names = [st.name for st in cpu.cstates]
    # the clock pinned at 3.8 GHz (no active-core turbo limit: with every core spinning the E3
    # would run at its 3.6 GHz all-core turbo, where this identity is off by ~1e-5)
    cfg, s = _run(cpu__cpuidle_disable="[" + ",".join(names[1:]) + "]", cpu__all_core_turbo_ghz="null")
    spin = s["perf_by_layer"]["idle_spin"]
    assert spin["ipc"] == pytest.approx(cfg.platform.kernel.poll_idle_loop_instructions / cpu.pause_cycles)
    # every logical CPU counts every cycle: work, SMT contention with its spinning sibling, the spin
    # (the frequency stays at its top under the performance governor)
    ghz = s["freq_ghz_mean"]["core0"]
    assert s["perf_by_layer"]["smt_contention"]["cycles_per_io"] > 0
    assert s["cycles_per_io"] * s["iops"] == pytest.approx(cpu.logical_cpus * ghz * 1e9, rel=1e-6)
    _conserved(s)


def test_a_warm_cpi_outside_the_cores_limits_is_refused():
    with pytest.raises(ConfigError, match="cpi_by_layer.*fs.*0.25"):
        resolve(sets={"kernel.cpi_by_layer": "{fs: 0.1}"})
    with pytest.raises(ConfigError, match="cpi_by_layer.*unknown layer 'cache'"):
        resolve(sets={"kernel.cpi_by_layer": "{cache: 1.0}"})


# CHEOPS'23 (Ren and Trivedi, "Performance Characterization of Modern Storage Stacks", CHEOPS'23;
# artifact github.com/atlarge-research/Performance-Characterization-Storage-Stacks, MIT): perf stat -a
# during one fio thread at depth 1, 4 KiB random reads on an Optane SSD, 2 x 10-core Xeon at 2.41 GHz:
# instructions per IO and IPC = instructions_per_5s / (5 s x IOPS) and instructions / cycles
CHEOPS23_QD1 = {
    "psync": ({"ioengine": "psync"}, 10422775675.0 / (5 * 94377), 10422775675.0 / 12063457933.5),
    "io_uring hipri": (
        {"ioengine": "io_uring", "hipri": 1, "queue.io_poll": 1},
        31148166032.5 / (5 * 110886),
        31148166032.5 / 12071962240.5,
    ),
}


@pytest.mark.parametrize("name", CHEOPS23_QD1)
def test_depth_1_instructions_and_ipc_match_perf_stat_on_the_measured_host_class(name):
    """The sleep-in-POLL path (psync) and the completion-polling path (io_uring hipri) on the
    measured host's platform (cheops23-optane: Broadwell-EP at 2.41 GHz): instructions per IO within
    15%, IPC within 17%: the platform's block-device step runs at the CPI calibrated from a CPU-bound
    loop (0.39), which a depth-1 path, run after the idle loop and an interrupt, does not reach (a
    CPI that depends on what the core ran before is the missing mechanism: psync's IPC is 16% high)."""
    sets, ins, ipc = CHEOPS23_QD1[name]
    cfg = resolve(
        platform="cheops23-optane",
        sets={**BASE, "rw": "randread", "bs": "4k", "iodepth": "1", **{k: str(v) for k, v in sets.items()}},
    )
    s = simulate(cfg)["summary"]
    assert s["instructions_per_io"] == pytest.approx(ins, rel=0.15)
    assert s["ipc"] == pytest.approx(ipc, rel=0.17)
