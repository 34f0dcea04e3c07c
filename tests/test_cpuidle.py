"""cpuidle governors as policies: teo's defining behaviour, the selection by name, the plug-in point."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models.cpu.cpuidle import NO_TIMER_NS, CpuidleGovernor
from policies.cpu_idle import CPUIDLE_GOVERNORS
from policies.cpu_idle.menu import MenuGovernor, _floor_div
from policies.cpu_idle.teo import NR_RECENT, TeoGovernor
from scenarios.config.host import resolve
from scenarios.run.replay import resolve_replay
from scenarios.run.simulate import simulate
from stacksim.cli import main
from tests.conftest import docs_plugin

CPU = resolve(sets={}).platform.cpu  # Xeon E3-1230 v5: POLL, C1, C1E, C3, C6, C7s, C8
NAMES = [s.name for s in CPU.cstates]
RES = [s.target_residency_ns for s in CPU.cstates]
TICK_NS = 4e6  # CONFIG_HZ=250
PLAT = "optane900p-e3-1230v5"


def simulate_replay(trace: str, fmt: str, **kw):
    return simulate(resolve_replay(trace, fmt, **kw))


def deepest_fitting(sleep_ns: float, cpu=CPU) -> int:
    """The deepest enabled state whose target residency fits ``sleep_ns`` (kernel semantics)."""
    off = set(cpu.cpuidle_disable)
    fit = [i for i, s in enumerate(cpu.cstates) if s.target_residency_ns <= sleep_ns and s.name not in off]
    return fit[-1]


def idle_periods(gov: CpuidleGovernor, sleep_ns: float, woke_ns: float, n: int) -> list[str]:
    """``n`` idle periods with the next timer ``sleep_ns`` away, each ended at ``woke_ns`` (a timer
    wake-up when equal, an interrupt before it); the tick runs and is far (so it changes nothing)."""
    chosen = []
    for _ in range(n):
        chosen.append(NAMES[gov.select(sleep_ns, 0, TICK_NS, TICK_NS)])
        gov.reflect(woke_ns)
    return chosen


# -- teo: the defining property -------------------------------------------------------------------
@settings(max_examples=25, deadline=None)
@given(sleep_us=st.floats(min_value=0.5, max_value=3000.0))
def test_teo_with_timer_wakeups_picks_the_state_matching_the_sleep_length(sleep_us):
    sleep = sleep_us * 1e3
    chosen = idle_periods(TeoGovernor(CPU, TICK_NS), sleep, sleep, 12)
    assert set(chosen) == {NAMES[deepest_fitting(sleep)]}


@pytest.mark.parametrize("woke_us, state", [(5, "C1"), (50, "C1E"), (150, "C3"), (400, "C6")])
def test_teo_with_early_interrupt_wakeups_moves_to_the_state_of_their_bin(woke_us, state):
    """No timer (4 ms sleep length: C8), but an IO interrupt ends every idle period early: these
    intercepts fall into the bin [target residency i, i+1) of ``state``, which teo then picks."""
    gov = TeoGovernor(CPU, TICK_NS)
    chosen = idle_periods(gov, 4e6, woke_us * 1e3, 10)
    assert chosen[0] == "C8" and set(chosen[2:]) == {state}
    # the timer wake-ups come back: hits outweigh the decayed intercepts again within a few periods
    back = idle_periods(gov, 4e6, 4e6, 12)
    assert back[-1] == "C8" and back.index("C8") <= 8


def test_teo_follows_the_majority_of_wakeups():
    """One intercept in four periods: the timer's state; three in four: the intercepts' state."""
    rare, often = TeoGovernor(CPU, TICK_NS), TeoGovernor(CPU, TICK_NS)
    rare_seen, often_seen = [], []
    for k in range(40):
        early = k % 4 == 0
        rare_seen += idle_periods(rare, 1e6, 10e3 if early else 1e6, 1)
        often_seen += idle_periods(often, 1e6, 1e6 if early else 10e3, 1)
    assert set(rare_seen[8:]) == {"C8"}
    assert set(often_seen[8:]) == {"C1"}


def test_teo_keeps_the_tick_for_a_short_expected_idle_and_fits_the_state_before_it():
    gov = TeoGovernor(CPU, TICK_NS)
    idle_periods(gov, 4e6, 5e3, 4)  # intercepts in C1's bin: expected idle = middle of that bin
    assert NAMES[gov.select(4e6, 0, TICK_NS, 3e6)] == "C1" and not gov.stop_tick
    fresh = TeoGovernor(CPU, TICK_NS)
    assert NAMES[fresh.select(4e6, 0, TICK_NS, 3e6)] == "C8" and fresh.stop_tick
    # a kept tick 50 us away rules out states whose target residency exceeds 50 us (teo_find_shallower_state)
    assert NAMES[fresh.select(150e3, 0, TICK_NS, 50e3)] == "C1E" and not fresh.stop_tick


@settings(max_examples=30, deadline=None)
@given(
    periods=st.lists(st.tuples(st.floats(0.5, 5000.0), st.floats(0.0, 1.0)), min_size=1, max_size=40),
    disabled=st.sets(st.sampled_from(NAMES)),
    tick=st.booleans(),
)
def test_teo_invariants(periods, disabled, tick):
    """Never a disabled state (unless all are), never deeper than the sleep length allows (except
    the first enabled state, the fallback); the metrics add up."""
    cpu = CPU.model_copy(update={"cpuidle_disable": tuple(sorted(disabled))})
    gov = TeoGovernor(cpu, TICK_NS)
    enabled = [i for i, n in enumerate(NAMES) if n not in disabled]
    for sleep_us, frac in periods:
        sleep = sleep_us * 1e3
        idx = gov.select(sleep, 0, TICK_NS if tick else None, TICK_NS / 2)
        if enabled:
            assert idx in enabled
            assert RES[idx] <= sleep or idx == enabled[0]
        else:
            assert idx == 0
        gov.reflect(sleep * frac)
        assert gov.total == sum(gov.hits) + sum(gov.intercepts)
        assert sum(gov.recent) == sum(1 for b in gov.recent_idx if b >= 0) <= NR_RECENT


# -- in the simulator -----------------------------------------------------------------------------
def run(**sets) -> dict:
    return simulate(resolve(sets={"runtime": "40ms", "ramp_time": "10ms", **sets}))


def test_teo_in_the_default_scenario_waits_for_io_in_c1_where_menu_polls():
    """The IO thread's CPU: menu (an iowaiter's latency limit) spins in POLL; teo sees the IO
    interrupts as intercepts in C1's bin and picks C1, so each IO pays C1's exit latency. CPUs with
    nothing to do reach the deepest state under both."""
    menu, teo = run(), run(**{"cpu.cpuidle_governor": "teo"})
    m0, t0 = menu["summary"]["cstate_residency"]["cpu0"], teo["summary"]["cstate_residency"]["cpu0"]
    assert m0["POLL"] > 0.3 and m0["C1"] == 0.0
    assert t0["C1"] > 0.3 and t0["POLL"] < 0.001 and sum(t0[n] for n in ("C3", "C6", "C7s", "C8")) < 0.01
    for r in (menu, teo):
        assert r["summary"]["cstate_residency"]["cpu1"]["C8"] > 0.95
    c1_exit_us = CPU.cstates[NAMES.index("C1")].exit_latency_ns / 1e3
    delta = teo["summary"]["latency_us"]["mean"] - menu["summary"]["latency_us"]["mean"]
    assert delta == pytest.approx(c1_exit_us, rel=0.05)


def test_unknown_governor_exits_2_with_one_message(capsys):
    rc = main(["run", "--set", "cpu.cpuidle_governor=tao", "--set", "runtime=5ms"])
    err = capsys.readouterr().err
    assert rc == 2
    assert "unknown cpuidle governor 'tao'" in err and "did you mean 'teo'" in err and "Traceback" not in err


def test_registry_lists_both_and_the_default_is_menu():
    assert {"menu", "teo"} <= set(CPUIDLE_GOVERNORS.names())
    assert CPU.cpuidle_governor == "menu" and CPUIDLE_GOVERNORS.get("menu") is MenuGovernor


def test_docs_example_governor_loads_and_runs(tmp_path):
    """The docs' timer-only governor drives the idle loop: with no timer armed, every IO wait is
    spent in the deepest state, so each IO pays its exit latency."""
    with docs_plugin("cpu.md", "timer_only", CPUIDLE_GOVERNORS, "timer-only", tmp_path):
        r = run(**{"cpu.cpuidle_governor": "timer-only"})
    res = r["summary"]["cstate_residency"]["cpu0"]
    assert res["C8"] > 0.0 and res["C0"] + res["C8"] == pytest.approx(1.0)  # (the exit itself counts as C0)
    c8_exit_us = CPU.cstates[NAMES.index("C8")].exit_latency_ns / 1e3
    delta = r["summary"]["latency_us"]["mean"] - run()["summary"]["latency_us"]["mean"]
    assert delta == pytest.approx(c8_exit_us, rel=0.05)


# -- NOHZ idle: tick wake-ups teach the governors to stop the tick ----------------------------------
def tick_wakeups_until_stopped(gov: CpuidleGovernor, limit: int = 50) -> int:
    """Idle periods with no timer armed (NO_TIMER_NS) and the tick running, each ended by the tick
    (``tick_wakeup``): how many tick wake-ups until the governor lets the tick stop."""
    for n in range(limit):
        gov.select(NO_TIMER_NS, 0, TICK_NS, 3.5e6)
        if gov.stop_tick:
            return n
        gov.reflect(3.5e6, tick_wakeup=True)
    return limit


@pytest.mark.parametrize("cls", [MenuGovernor, TeoGovernor])
def test_an_idle_cpu_with_no_timer_stops_its_tick_after_a_few_tick_wakeups(cls):
    """After a stretch of short IO waits (the governor keeps the tick), the IO stops: the tick
    wakes the CPU a few times, each counted as a long idle (menu_update's tick_wakeup, teo's safety
    net), and then the tick stops. Counted as short idles (the bug), the tick never stops."""
    gov = cls(CPU, TICK_NS)
    for _ in range(20):  # IO interrupts every ~5 us, no timer armed
        gov.select(NO_TIMER_NS, 0, TICK_NS, TICK_NS)
        gov.reflect(5e3)
    assert not gov.stop_tick  # the short-idle history keeps the tick
    assert tick_wakeups_until_stopped(gov) <= 9
    assert NAMES[gov.select(NO_TIMER_NS, 0, TICK_NS, TICK_NS)] == "C8" and gov.stop_tick
    if cls is MenuGovernor:  # the bug: tick wake-ups (3.5 ms after idle entry) learnt as short idles
        short = cls(CPU, TICK_NS)
        for _ in range(50):
            short.select(NO_TIMER_NS, 0, TICK_NS, 3.5e6)
            short.reflect(3.5e6)
        assert not short.stop_tick


@pytest.mark.parametrize("cls", [MenuGovernor, TeoGovernor])
def test_a_timer_shorter_than_a_tick_keeps_the_tick(cls):
    gov = cls(CPU, TICK_NS)
    for _ in range(20):  # a 1 ms timer wakes the CPU every time
        gov.select(1e6, 0, TICK_NS, TICK_NS)
        gov.reflect(1e6)
    assert not gov.stop_tick
    assert NAMES[gov.select(1e6, 0, TICK_NS, TICK_NS)] == NAMES[deepest_fitting(1e6)] and not gov.stop_tick


def alibaba_trace(path, times_us):
    path.write_text("".join(f"7,R,{4096 * i * 3},4096,{1_600_000_000_000_000 + t}\n" for i, t in enumerate(times_us)))
    return str(path)


@pytest.mark.parametrize("governor", ["menu", "teo"])
def test_idle_cpus_stay_tickless_and_an_hour_long_trace_gap_costs_few_events(tmp_path, governor):
    """Two IOs 1 s apart: the 4 CPUs idle with no timer for a second; with NOHZ idle the tick fires a
    handful of times, not 4 x 250. An hour apart: the engine processes a bounded number of events
    (the old tick-bound idle cost ~900 events per simulated second), and both IOs see the same
    latencies as with the 1 s gap: both find every CPU in its deepest state with the tick stopped
    (the first after the setup's idle, the second after the gap), so nothing differs but the clock."""
    sets = {"cpu.cpuidle_governor": governor}
    second = simulate_replay(alibaba_trace(tmp_path / "s.csv", [0, 1_000_000]), "alibaba", platform=PLAT, sets=sets)
    assert second["summary"]["completed_ios"] == 2
    assert second["summary"]["interrupts"]["tick"] < 20
    hour = simulate_replay(alibaba_trace(tmp_path / "h.csv", [0, 3_600_000_000]), "alibaba", platform=PLAT, sets=sets)
    assert hour["sim"]["simulated_s"] > 3600
    assert hour["sim"]["events"] < 10_000
    assert hour["summary"]["interrupts"]["tick"] < 20
    for key in ("p50", "max", "mean"):
        assert hour["summary"]["latency_us"][key] == pytest.approx(second["summary"]["latency_us"][key], rel=1e-6)


# -- menu: the repeating-interval detector is menu.c's get_typical_interval ------------------------
def typical_interval_menu_c(intervals: list[int]) -> float | None:
    """menu.c get_typical_interval, written out plainly (whole us; at most 3 passes as the model)."""
    thresh = None
    for _ in range(3):
        vals = [v for v in intervals if thresh is None or v <= thresh]
        if not vals:
            return None  # (6.1 has no 'if (!max)': a ring of zeros is a 0 us pattern)
        n = len(vals)
        avg = sum(vals) // n
        var = sum((v - avg) ** 2 for v in vals) // n
        if (avg * avg > 36 * var and n * 4 >= 8 * 3) or var <= 400:
            return avg * 1000.0
        if n * 4 <= 8 * 3:
            return None
        thresh = max(vals) - 1
    return None


@settings(max_examples=60, deadline=None)
@given(
    periods_ns=st.lists(st.floats(min_value=0.0, max_value=NO_TIMER_NS), min_size=1, max_size=40),
    spread=st.sampled_from([0, 1, 3]),
)
def test_menu_detector_with_running_sums_equals_menu_c(periods_ns, spread):
    """The fast detector (running sums of the ring) gives exactly what menu.c's loops give, after any
    sequence of idle periods (``spread``: how many of them are scaled, to make outliers)."""
    gov = MenuGovernor(CPU, TICK_NS)
    for i, ns in enumerate(periods_ns):
        gov.select(NO_TIMER_NS, 0, TICK_NS, TICK_NS)
        gov.reflect(ns * (10 if spread and i % (spread + 1) == 0 else 1) / 10)
        assert gov.intervals == [int(v) for v in gov.intervals]
        ref = typical_interval_menu_c(gov.intervals)
        assert gov._typical_interval() == (-1.0 if ref is None else ref)  # (-1.0: no pattern)


def test_stopping_and_restarting_the_tick_programs_the_hrtimer():
    """NOHZ idle costs CPU work: stopping the tick (tick_nohz_idle_stop_tick: cancel the tick's
    hrtimer, program the next event) runs before the CPU idles, restarting it (tick_nohz_idle_exit)
    is carried into the wake-up; each is one hrtimer programming (hrtimer_start_cycles)."""
    from scenarios.run.assembly import build_run

    def ticks(**sets):
        cfg = resolve(sets={"runtime": "50ms", "ramp_time": "0", **sets})
        host, _fio, _ramp, end = build_run(cfg)
        host.engine.run(end)
        r = host.runners[0]
        assert r.cost_tick_stop.cycles == r.cost_tick_restart.cycles == cfg.platform.kernel.hrtimer_start_cycles
        return r.counts.get(r.cost_tick_stop.idx, 0), r.counts.get(r.cost_tick_restart.idx, 0)

    # 10 ms of think time after each IO: the IO thread's CPU idles long, stops its tick each time
    # and restarts it when the thread's timer wakes it
    stops, restarts = ticks(thinktime="10ms")
    assert stops >= 4 and restarts >= stops - 1
    # back-to-back IOs: the CPU idles for microseconds and menu keeps its tick
    assert ticks() == (1, 1)  # the single stop is the first idle, before the tick's history


@settings(max_examples=300, deadline=None)
@given(
    x=st.one_of(
        st.floats(min_value=-1e15, max_value=1e15, allow_nan=False),
        # the quotients next to whole numbers, where a rounded division lands on the wrong side
        st.integers(min_value=-(10**12), max_value=10**12)
        .map(lambda k: k * 1000.0)
        .flatmap(lambda v: st.sampled_from([v, math.nextafter(v, -math.inf), math.nextafter(v, math.inf)])),
    ),
    d=st.sampled_from([8.0, 1000.0, 3.0]),
)
def test_menu_floor_division_is_pythons(x, d):
    """The menu governor's floor division (a division and a comparison, not fmod) gives what
    Python's ``//`` gives, bit for bit, also for quotients a hair below a whole number."""
    got = _floor_div(x, d)
    assert got == x // d and math.copysign(1.0, got + 0.0) == math.copysign(1.0, (x // d) + 0.0)
