"""policies/cpu_power: cpufreq governors (static, ondemand, schedutil) and frequency-true accounting."""

from __future__ import annotations

import pytest

from policies.cpu_power import CPUFREQ_GOVERNORS
from policies.cpu_power.schedutil import CAPACITY, IOWAIT_BOOST_MIN, Schedutil, _CpuUtil
from scenarios.config.host import resolve
from scenarios.run.assembly import build_run
from scenarios.run.simulate import simulate
from simcore.errors import ConfigError
from tests.conftest import docs_plugin


def run(governor: str, runtime: str = "100ms", **sets) -> dict:
    cfg = resolve(
        sets={
            "runtime": runtime,
            "ramp_time": "20ms",
            "cpu.cpufreq_governor": governor,
            **{k.replace("__", "."): v for k, v in sets.items()},
        }
    )
    return simulate(cfg)


def freq_log(governor: str, runtime: str = "100ms", **sets):
    """(host, [(t_ns, GHz), ...] of core 0's frequency changes)."""
    cfg = resolve(
        sets={
            "runtime": runtime,
            "ramp_time": "0",
            "cpu.cpufreq_governor": governor,
            **{k.replace("__", "."): v for k, v in sets.items()},
        }
    )
    host, _fio, _ramp, end = build_run(cfg)
    log = []
    host.pkg.cores[0].listeners.append(lambda f: log.append((host.engine.now, f)))
    host.engine.run(end)
    return host, log


def busy_layers_match_busy_time(result: dict) -> None:
    """Conservation: the CPU time per layer plus the C-state exits adds up to the CPUs' busy time
    (POLL idle excluded: it is not busy)."""
    s = result["summary"]
    ios = s["ios"]
    layer_ns = (sum(v for k, v in s["layers_ns_per_io"].items() if k != "idle") + s["cstate_exit_ns_per_io"]) * ios
    busy_ns = sum(row["C0"] for row in s["cstate_residency"].values()) * result["sim"]["measured_s"] * 1e9
    assert layer_ns == pytest.approx(busy_ns, rel=0.01)


# -- the interface ------------------------------------------------------------------------------------
def test_registry_and_tunable_validation():
    assert {"performance", "powersave", "ondemand", "schedutil"} <= set(CPUFREQ_GOVERNORS.names())
    with pytest.raises(ConfigError, match="did you mean 'ondemand'"):
        run("ondemnd", runtime="5ms")
    with pytest.raises(ConfigError, match="up_threshold: unknown key"):
        run("schedutil", runtime="5ms", cpu__cpufreq__up_threshold="90")
    with pytest.raises(ConfigError, match="up_threshold"):
        run("ondemand", runtime="5ms", cpu__cpufreq__up_threshold="101")


def test_p_state_resolution_on_the_step_grid():
    host, _ = freq_log("performance", runtime="1ms")
    g = host.cpufreq
    lo, hi = g.cfg.min_freq_ghz, g.cfg.top_freq_ghz
    assert g.resolve_freq(0.1, round_up=True) == lo and g.resolve_freq(99.0, round_up=False) == hi
    assert g.resolve_freq(lo + 0.41, round_up=True) == pytest.approx(lo + 0.5)  # lowest step at or above
    assert g.resolve_freq(lo + 0.41, round_up=False) == pytest.approx(lo + 0.4)  # closest
    assert g.resolve_freq(lo + 0.5, round_up=True) == pytest.approx(lo + 0.5)


# -- static governors ------------------------------------------------------------------------------------
def test_static_governors_never_change_frequency():
    for gov, attr in (("performance", "top_freq_ghz"), ("powersave", "min_freq_ghz")):
        host, log = freq_log(gov, runtime="20ms")
        assert log == [] and all(c.freq_ghz == getattr(host.platform.cpu, attr) for c in host.pkg.cores)


# -- ondemand --------------------------------------------------------------------------------------------
def test_ondemand_counts_iowait_as_busy_on_intel():
    """io_is_busy is on by default for Intel: a thread blocked on IO looks 100% busy, so its core
    stays at the top frequency and the result equals the performance governor's."""
    perf = run("performance")
    od = run("ondemand")
    assert od["summary"]["latency_us"] == perf["summary"]["latency_us"]


def test_ondemand_without_io_is_busy_scales_with_load():
    host, log = freq_log("ondemand", cpu__cpufreq__io_is_busy="0")
    cfg = host.platform.cpu
    g = host.cpufreq
    assert g.period_ns == 10e6  # 20 us transition latency x 1000, capped at 10 ms (> 2 ticks of 4 ms)
    # a sample every 10 ms; each change applies the 20 us transition latency later
    assert log and all(abs((t - 20e3) / 10e6 - round((t - 20e3) / 10e6)) < 1e-9 for t, _f in log)
    final = host.pkg.cores[0].freq_ghz
    assert cfg.min_freq_ghz < final < cfg.top_freq_ghz  # the IO thread's core: proportional to its load
    assert host.pkg.cores[1].freq_ghz == cfg.min_freq_ghz  # idle cores: load 0
    slow = run("ondemand", cpu__cpufreq__io_is_busy="0")
    assert slow["summary"]["latency_us"]["mean"] > run("performance")["summary"]["latency_us"]["mean"] * 1.05
    busy_layers_match_busy_time(slow)


def test_ondemand_goes_to_the_top_above_up_threshold():
    """Classic polling keeps the CPU 100% busy: load > up_threshold -> the top frequency."""
    host, log = freq_log("ondemand", queue__io_poll="1", hipri="1", cpu__cpufreq__io_is_busy="0")
    assert host.pkg.cores[0].freq_ghz == host.platform.cpu.top_freq_ghz


# -- schedutil -------------------------------------------------------------------------------------------
class _FakeCpu:
    busy = False

    def busy_ns_at(self, now):
        return 0.0


class _FakeRunner:
    id = 0
    cpu = _FakeCpu()


def test_schedutil_iowait_boost_doubles_per_request_and_decays():
    g = Schedutil.__new__(Schedutil)
    g.tick_ns = 4e6
    sc = _CpuUtil(_FakeRunner(), 0.0)
    boosts = []
    t = 0.0
    for _ in range(5):  # an IO wake-up then a frequency evaluation, every 10 us
        t += 10e3
        g._iowait_boost(sc, t, True)
        sc.last_update = t
        boosts.append(g._iowait_apply(sc, t, 0.0))
    assert boosts == [IOWAIT_BOOST_MIN, 2 * IOWAIT_BOOST_MIN, 4 * IOWAIT_BOOST_MIN, CAPACITY, CAPACITY]
    g._iowait_boost(sc, t + 5e3, True)  # a second request before the evaluation: no second doubling
    assert sc.boost == CAPACITY and sc.boost_pending
    sc.boost_pending = False
    decays = [g._iowait_apply(sc, t + 6e3, 0.0) for _ in range(4)]  # evaluations without requests halve it
    assert decays == [CAPACITY / 2, CAPACITY / 4, CAPACITY / 8, 0.0]
    sc.boost, sc.last_update = CAPACITY, t
    assert g._iowait_apply(sc, t + 4e6 + 1, 0.0) == 0.0 and sc.boost == 0.0  # idle for more than a tick: reset


def test_schedutil_busy_cpu_ramps_to_the_top():
    """A polling CPU (never idle, no wake-ups). Frequency-invariant utilization saturates at
    1024 x f / top, so each step asks for at most 1.25 f: a geometric ramp that ends at the top."""
    host, log = freq_log("schedutil", runtime="500ms", queue__io_poll="1", hipri="1")
    cfg = host.platform.cpu
    freqs = [f for _t, f in log]
    assert freqs[0] == cfg.min_freq_ghz and freqs[-1] == cfg.top_freq_ghz == host.pkg.cores[0].freq_ghz
    assert all(b > a and b <= 1.25 * a + cfg.pstate_step_ghz + 1e-9 for a, b in zip(freqs, freqs[1:]))
    assert len(freqs) > 8 and log[-1][0] > 200e6  # many rate-limited steps, not one jump


def test_schedutil_iowait_boost_keeps_io_latency_low():
    perf = run("schedutil")
    plain = run("schedutil", cpu__cpufreq__iowait_boost="false")
    base_run = run("performance")
    base = base_run["summary"]["latency_us"]["mean"]
    boosted = perf["summary"]["latency_us"]["mean"]
    unboosted = plain["summary"]["latency_us"]["mean"]
    assert base <= boosted < unboosted

    # without the boost a 50%-busy IO thread runs at a low clock: the same cycles per layer take
    # longer. The latency grows by at least the slow-down of the layers every IO passes through in
    # series (system call, file system, block layer, driver, interrupt) plus the C-state exits the
    # slower clock lets the idle governor take, and by at most the slow-down of all the CPU's work
    def layers(r, names=None):
        ly = r["summary"]["layers_ns_per_io"]
        return sum(ly[n] for n in (names or ly) if n not in ("idle", "smt_contention"))

    serial = ("syscall", "fs", "block", "driver", "irq")
    exits = plain["summary"]["cstate_exit_ns_per_io"] - base_run["summary"]["cstate_exit_ns_per_io"]
    lo = (layers(plain, serial) - layers(base_run, serial) + exits) / 1e3
    hi = (layers(plain) - layers(base_run) + exits) / 1e3
    assert plain["summary"]["freq_ghz_mean"]["core0"] < base_run["summary"]["freq_ghz_mean"]["core0"]
    assert base + lo <= unboosted <= base + hi
    assert plain["summary"]["power_w"]["cpu"] < perf["summary"]["power_w"]["cpu"]
    busy_layers_match_busy_time(plain)
    busy_layers_match_busy_time(perf)


def test_governed_runs_are_deterministic():
    a, b = run("schedutil", runtime="40ms"), run("schedutil", runtime="40ms")
    assert {k: v for k, v in a.items() if k != "sim"} == {k: v for k, v in b.items() if k != "sim"}


# -- plug-ins ---------------------------------------------------------------------------------------------
def test_docs_example_governor_loads_and_runs(tmp_path):
    with docs_plugin("cpu.md", "race_to_idle", CPUFREQ_GOVERNORS, "race-to-idle", tmp_path):
        host, log = freq_log("race-to-idle", runtime="30ms", thinktime="500us")
        cfg = host.platform.cpu
        assert {f for _t, f in log} <= {cfg.min_freq_ghz, cfg.top_freq_ghz} and len(log) > 10
        with pytest.raises(ConfigError, match="min_idle_us"):
            run("race-to-idle", runtime="5ms", cpu__cpufreq__min_idle_us="-1")


# -- cpuidle: disabled states ------------------------------------------------------------------------------
def test_disabling_poll_puts_the_io_cpu_in_c1_and_adds_its_exit_latency():
    base = run("performance")
    no_poll = run("performance", cpu__cpuidle_disable="[POLL]")
    res = no_poll["summary"]["cstate_residency"]["cpu0"]
    assert res["POLL"] == 0.0 and res["C1"] > 0.3
    c1_exit_us = next(s.exit_latency_ns for s in resolve(sets={}).platform.cpu.cstates if s.name == "C1") / 1e3
    delta = no_poll["summary"]["latency_us"]["mean"] - base["summary"]["latency_us"]["mean"]
    # every interrupt now wakes the CPU from C1 (POLL was where the IO thread's CPU waited): the
    # mean latency moves by one C1 exit. Nothing else on the IO path changes; the 250 Hz tick
    # (about 1 us of handler per 4 ms, i.e. a few ns per ~12 us IO) now and then also pays the
    # exit, which bounds the rest at 10 ns (0.5% of the exit; rel 5% let 100 ns through)
    assert delta == pytest.approx(c1_exit_us, abs=0.010)


def test_idle_poll_keeps_every_cpu_in_c0_or_poll():
    names = [s.name for s in resolve(sets={}).platform.cpu.cstates]
    r = run("performance", cpu__cpuidle_disable="[" + ",".join(names[1:]) + "]")
    for row in r["summary"]["cstate_residency"].values():
        assert row["C0"] + row["POLL"] == pytest.approx(1.0)
    # package power from the power model's own terms: the uncore, three cores with both siblings
    # spinning, and core 0 whose cpu0 runs the IO thread (activity 1) for its C0 share of the time;
    # every core is active (spinning in C0), so all of them run at the all-core turbo limit
    cpu = resolve(sets={}).platform.cpu
    f, k, spin = cpu.turbo_limits_ghz()[cpu.physical_cores], cpu.smt_second_thread_activity, cpu.activity["spin"]
    assert f == cpu.all_core_turbo_ghz < cpu.top_freq_ghz
    busy = r["summary"]["cstate_residency"]["cpu0"]["C0"]
    both_spin = cpu.busy_power_w(f, spin + k * spin)
    expect = (
        cpu.uncore_active_w
        + (cpu.physical_cores - 1) * both_spin
        + busy * cpu.busy_power_w(f, 1.0 + k * spin)
        + (1 - busy) * both_spin
    )
    assert r["summary"]["power_w"]["cpu"] == pytest.approx(expect, rel=1e-9)
    assert r["summary"]["power_w"]["cpu"] > 2 * run("performance")["summary"]["power_w"]["cpu"]


def test_menu_skips_disabled_states():
    from policies.cpu_idle.menu import MenuGovernor

    cpu = resolve(sets={}).platform.cpu
    names = [s.name for s in cpu.cstates]
    deep = MenuGovernor(cpu).select(3e6, 0)  # 3 ms to the next timer, no IO waiter: a deep state
    assert names[deep] not in ("POLL", "C1")
    off = MenuGovernor(cpu.model_copy(update={"cpuidle_disable": (names[deep],)})).select(3e6, 0)
    assert names[off] != names[deep] and off != 0
    with pytest.raises(ConfigError, match="no idle state 'C9'"):
        run("performance", runtime="5ms", cpu__cpuidle_disable="[C9]")


def test_summary_reports_mean_frequency_and_transitions():
    cpu = resolve(sets={}).platform.cpu
    perf = run("performance")["summary"]
    assert perf["freq_ghz_mean"] == {"core0": cpu.top_freq_ghz} and perf["freq_transitions"] == 0
    assert run("powersave")["summary"]["freq_ghz_mean"] == {"core0": cpu.min_freq_ghz}
    su = run("schedutil", cpu__cpufreq__iowait_boost="false")["summary"]
    assert cpu.min_freq_ghz < su["freq_ghz_mean"]["core0"] < cpu.top_freq_ghz and su["freq_transitions"] > 0


# -- SMT contention: continuous, by the sibling's activity ------------------------------------------------
def test_a_spinning_sibling_slows_every_piece_of_work_by_its_activity():
    """idle=poll: the IO thread's sibling spins in POLL all the time, so every segment and every
    interrupt handler on cpu0 runs 1 + (smt_slowdown - 1) x spin activity times slower (exactly)."""
    cpu = resolve(sets={}).platform.cpu
    names = [s.name for s in cpu.cstates]
    s = run("performance", runtime="50ms", cpu__cpuidle_disable="[" + ",".join(names[1:]) + "]")["summary"]
    ly = s["layers_ns_per_io"]
    work = sum(v for k, v in ly.items() if k not in ("idle", "smt_contention"))
    assert ly["smt_contention"] / work == pytest.approx((cpu.smt_slowdown - 1) * cpu.activity["spin"], rel=1e-9)
    assert run("performance", runtime="50ms")["summary"]["layers_ns_per_io"]["smt_contention"] == 0.0  # sibling asleep


def test_a_segment_is_retimed_when_the_sibling_starts_and_stops():
    """5 us of work on cpu0; its sibling becomes busy (activity 1) 1 us in and goes back to sleep
    2 us later: 1 + 2 x smt_slowdown (the 2 us of sibling time cover 2 / smt_slowdown us of work)
    + the rest alone."""
    from scenarios.run.assembly import build_host

    cfg = resolve(sets={})
    host = build_host(cfg.platform, cfg.queue, 1)
    r0 = host.runners[0]
    sib = host.pkg.sibling_of(r0.cpu)
    f = r0.freq
    done = []
    host.engine.run(1_000.0)  # past boot (every CPU idle)
    t0 = host.engine.now
    deepest = len(cfg.platform.cpu.cstates) - 1
    sib.set_idle(t0, deepest)  # asleep (not spinning in POLL) when the work starts
    cost = host.costs.get("test_work", user=5_000.0 * f)
    r0.run(cost, lambda: done.append(host.engine.now))
    host.engine.call_at(t0 + 1_000.0, sib.set_busy, t0 + 1_000.0, 1.0)
    host.engine.call_at(t0 + 3_000.0, sib.set_idle, t0 + 3_000.0, deepest)
    host.engine.run(t0 + 20_000.0)
    slow = cfg.platform.cpu.smt_slowdown
    work_during = 2_000.0 / slow
    assert done == [pytest.approx(t0 + 1_000.0 + 2_000.0 + (5_000.0 - 1_000.0 - work_during))]
    assert r0.smt_stall_ns == pytest.approx(2_000.0 - work_during)
