"""Tails from the idle governor (issue 44 item 5): the state a CPU picks while its thread waits for a
50-100 us flash read, by governor and kernel release, checked against the platform's C-state table
(a Xeon Silver 4210R: POLL, C1 2/2 us, C1E 10/20 us, C6 133/600 us exit/target residency)."""

from __future__ import annotations

import pytest

from models.cpu.presets import xeon_silver_4210r
from policies.cpu_idle.menu import KTIME_MAX_NS, MenuGovernor
from scenarios.config.host import resolve
from scenarios.inputs.fio.parser import job_from_options
from scenarios.run.simulate import simulate
from tests.conftest import composed_platform_file

CPU = xeon_silver_4210r()
NAMES = [s.name for s in CPU.cstates]
EXIT_US = {s.name: s.exit_latency_ns / 1e3 for s in CPU.cstates}
TICK_NS = 4e6


def menu(release: tuple[int, int], interval_us: float) -> MenuGovernor:
    """A menu governor of ``release`` whose last idle periods all lasted ``interval_us``."""
    gov = MenuGovernor(CPU, TICK_NS)
    gov.for_kernel(release)
    gov.prime(interval_us * 1e3)
    return gov


def test_menu_before_612_keeps_an_io_waiting_cpu_shallow_and_612_does_not():
    """6.1: the exit latency must fit predicted / (1 + 10 x iowaiters), 60 us / 11 = 5.5 us: C1.
    6.12 (IO-wait terms removed): C1E, whose 20 us target residency fits the 60 us pattern."""
    old, new = menu((6, 1), 60), menu((6, 12), 60)
    assert NAMES[old.select(2e6, 1, TICK_NS, 2e6)] == "C1"
    assert NAMES[new.select(2e6, 1, TICK_NS, 2e6)] == "C1E"
    assert NAMES[menu((6, 1), 60).select(2e6, 0, TICK_NS, 2e6)] == "C1E"  # no waiter: as 6.12


def test_menu_612_trusts_a_short_typical_interval_without_reading_the_timer():
    """Under RESIDENCY_THRESHOLD_NS (15 us) 6.12 takes the pattern and the next timer as far away
    (its bucket's correction then decays); above it, it reads the timer as 6.1 always does."""
    short, long_ = menu((6, 12), 10), menu((6, 12), 60)
    assert NAMES[short.select(3e6, 0, TICK_NS, 3e6)] == "C1" and short.next_timer_ns == KTIME_MAX_NS
    assert not short.stop_tick  # a 10 us idle: the tick keeps running
    long_.select(3e6, 0, TICK_NS, 3e6)
    assert long_.next_timer_ns == 3e6
    old = menu((6, 1), 10)
    old.select(3e6, 0, TICK_NS, 3e6)
    assert old.next_timer_ns == 3e6


@pytest.fixture(scope="module")
def box(tmp_path_factory):
    return composed_platform_file(tmp_path_factory.mktemp("tails"), "xeon-silver-4210r", "samsung-980pro", 1)


def flash_read(box: str, release: str, governor: str, **options) -> dict:
    """One psync thread's 4 KiB random reads at depth 1 on the 980 PRO, and its CPU's residency."""
    job = {"rw": "randread", "bs": "4k", "ioengine": "psync", "direct": "1", "filename": "/dev/nvme0n1"}
    job.update({"time_based": "1", "runtime": "60ms", "ramp_time": "10ms", **options})
    sets = {"kernel.version": release, "cpu.cpuidle_governor": governor}
    s = simulate(resolve(platform=box, jobs=[job_from_options(job, name="t")], sets=sets))["summary"]
    cpu = max(s["cstate_residency"].values(), key=lambda r: r["C0"])  # the fio thread's CPU
    return {"lat": s["latency_us"], "cpu": cpu, "exit_us": s["cstate_exit_ns_per_io"] / 1e3}


def test_a_flash_wait_pays_c1e_on_612_menu_and_on_teo(box):
    """Back-to-back reads: 6.1 menu waits in C1, 6.12 menu and teo (which has no IO-wait term) in
    C1E; every IO then pays C1E's exit latency instead of C1's, in the mean and in the tail."""
    old, new, teo = (flash_read(box, v, g) for v, g in (("6.1", "menu"), ("6.12", "menu"), ("6.1", "teo")))
    assert old["cpu"]["C1"] > 0.5 and new["cpu"]["C1E"] > 0.5 and teo["cpu"]["C1E"] > 0.5
    extra = EXIT_US["C1E"] - EXIT_US["C1"]
    for key in ("mean", "p50", "p99"):
        assert new["lat"][key] - old["lat"][key] == pytest.approx(extra, rel=0.35), key
    assert new["exit_us"] - old["exit_us"] == pytest.approx(extra, rel=0.2)


def test_teo_puts_the_short_wait_of_a_rate_limited_reader_in_c6(box):
    """A reader at 500 IOPS alternates 2 ms think times (ended by fio's timer: teo "hits" in C6's
    bin) with 60 us flash waits (ended by the IO interrupt: "intercepts" in C1E's bin). teo 6.1's
    recent-intercepts rule then flips with the parity of the last 9 periods: the wait (after a hit)
    goes to C6 and the think time (after an intercept) to C1E, so every read pays C6's 133 us exit
    and the latency triples; menu (its IO-wait limit) sleeps the wait in C1 and only the think time
    in C6, so no read pays C6's exit once its correction factors have settled."""
    m, t = (flash_read(box, "6.1", g, rate_iops="500", runtime="400ms", ramp_time="100ms") for g in ("menu", "teo"))
    assert t["lat"]["p50"] > 2.5 * m["lat"]["p50"]
    assert t["lat"]["mean"] - m["lat"]["mean"] == pytest.approx(EXIT_US["C6"], rel=0.2)
    assert m["lat"]["p99_9"] < m["lat"]["p50"] + EXIT_US["C6"] / 2  # no C6 exit in menu's tail
    assert m["cpu"]["C6"] > 0.8 and t["cpu"]["C1E"] > 0.8  # where each spends the think time


def test_612_menu_takes_an_optane_wait_out_of_poll():
    """The default scenario (an Optane read of ~10 us on an E3-1230 v5): 6.1's IO-wait limit keeps the
    waiting CPU in POLL; 6.12's menu trusts the ~10 us pattern (under RESIDENCY_THRESHOLD_NS) and
    picks C1, whose 2 us target residency fits it, so every IO pays C1's exit latency."""
    runs = {
        v: simulate(resolve(sets={"runtime": "30ms", "ramp_time": "5ms", "kernel.version": v})) for v in ("6.1", "6.12")
    }
    old, new = (runs[v]["summary"] for v in ("6.1", "6.12"))
    assert old["cstate_residency"]["cpu0"]["POLL"] > 0.3 and new["cstate_residency"]["cpu0"]["C1"] > 0.3
    c1 = resolve(sets={}).platform.cpu.cstates[1]
    assert c1.name == "C1"
    delta = new["latency_us"]["mean"] - old["latency_us"]["mean"]
    assert delta == pytest.approx(c1.exit_latency_ns / 1e3, rel=0.1)


def teo(release: tuple[int, int]):
    from policies.cpu_idle.teo import TeoGovernor

    gov = TeoGovernor(CPU, TICK_NS)
    gov.for_kernel(release)
    return gov


def period(gov, sleep_us: float, woke_us: float) -> None:
    """One idle period: the next timer ``sleep_us`` away, woken after ``woke_us``."""
    gov.select(sleep_us * 1e3, 1, TICK_NS, TICK_NS)
    gov.reflect(woke_us * 1e3)


def test_teo_612_has_no_recent_intercepts_rule():
    """30 timer wake-ups at 2 ms (hits in C6's bin), then 5 wake-ups by an IO interrupt at 60 us
    (intercepts in C1E's bin): 6.1's recent-intercepts rule (5 of the last 9 > 4) already moves to
    C1E; 6.12's decaying sums alone (about 4,000 intercepts against 4,200 hits) keep C6."""
    old, new = teo((6, 1)), teo((6, 12))
    for gov in (old, new):
        for _ in range(30):
            period(gov, 2000, 2000)
        for _ in range(5):
            period(gov, 2000, 60)
    assert NAMES[old.select(2e6, 1, TICK_NS, TICK_NS)] == "C1E"
    assert NAMES[new.select(2e6, 1, TICK_NS, TICK_NS)] == "C6"


def test_teo_612_takes_a_shallow_state_without_reading_the_timer():
    """Wake-ups ~10 us after idle entry (intercepts in C1's 2-20 us bin): 6.12 picks C1 from the
    intercepts alone, and with a polling state 0 and C1 under RESIDENCY_THRESHOLD_NS it neither
    reads the sleep length (left infinite) nor stops the tick; 6.1 reads it first."""
    old, new = teo((6, 1)), teo((6, 12))
    for gov in (old, new):
        for _ in range(20):
            period(gov, 3000, 10)
    assert NAMES[new.select(3e6, 1, TICK_NS, TICK_NS)] == "C1"
    assert new.sleep_length_ns == float("inf") and not new.stop_tick
    assert NAMES[old.select(3e6, 1, TICK_NS, TICK_NS)] == "C1" and old.sleep_length_ns == 3e6


def test_teo_612_counts_idle_periods_beyond_a_tick_as_tick_hits():
    """The deepest state's target residency (C6, 600 us) is under a tick (4 ms): an idle period of
    a tick or more is a hit in the extra bin beyond C6's, not in C6's own."""
    gov = teo((6, 12))
    for _ in range(10):
        period(gov, 20_000, 20_000)
    assert gov.tick_hits > 0 and sum(gov.hits) == 0
    assert NAMES[gov.select(20e6, 0, TICK_NS, TICK_NS)] == "C6" and gov.stop_tick


# ---------------------------------------------------------------- menu 6.1.192 rule by rule, PM QoS


def menu_qos(qos_us: int | None, release: tuple[int, int] = (6, 1), cpu=CPU) -> MenuGovernor:
    gov = MenuGovernor(cpu.model_copy(update={"cpu_latency_qos_us": qos_us}), TICK_NS)
    gov.for_kernel(release)
    return gov


def test_menu_61_returns_state_0_when_state_1_cannot_pay_off():
    """menu.c 6.1: state 0 at once (the tick kept, state 0 polls) when the next timer is closer than
    state 1's target residency, or the PM QoS limit is 0 or below state 1's exit latency; above it
    the prediction decides."""
    gov = menu_qos(None)
    assert gov.select(1500.0, 0, TICK_NS, TICK_NS) == 0 and not gov.stop_tick  # C1 needs 2 us
    for qos, state in ((0, "POLL"), (1, "POLL"), (2, "C6")):  # C1's exit latency is 2 us
        gov = menu_qos(qos if qos != 2 else None)
        gov.prime(45e6)  # a CPU that idled before: tick-ended periods (a zeroed ring reads as 0 us)
        assert NAMES[gov.select(20e6, 0, TICK_NS, TICK_NS)] == state, qos
    assert menu_qos(0, (6, 12)).select(20e6, 0, TICK_NS, TICK_NS) == 0  # 6.12 too


def test_menu_61_reads_a_ring_of_zeros_as_a_0_us_pattern():
    """get_typical_interval of 6.1 has no 'if (!max)' test (6.12's): eight idle periods under 1 us
    have average and variance 0, a pattern, so the CPU stays in POLL with the tick running even with
    a timer 20 ms away; 6.12 finds no pattern and trusts the timer (C6, tick stopped)."""
    old, new = menu((6, 1), 0.5), menu((6, 12), 0.5)
    assert NAMES[old.select(20e6, 0, TICK_NS, TICK_NS)] == "POLL" and not old.stop_tick
    assert NAMES[new.select(20e6, 0, TICK_NS, TICK_NS)] == "C6" and new.stop_tick


def test_menu_61_with_the_tick_stopped_trusts_the_timer_and_drops_the_io_wait_limit():
    """menu.c 6.1, tick stopped: a prediction under a tick (the 60 us pattern) becomes the next
    timer (2 ms), and the performance multiplier is not applied (only with the tick running): C6
    despite an IO waiter. With the tick running the same CPU takes C1 (60 us / 11 = 5.5 us)."""
    assert NAMES[menu((6, 1), 60).select(2e6, 1)] == "C6"
    assert NAMES[menu((6, 1), 60).select(2e6, 1, TICK_NS, 2e6)] == "C1"


def test_menu_61_keeps_the_tick_when_the_deepest_state_does_not_fit():
    """menu.c 6.1, tick running, prediction of at least a tick: if a state does not fit it, the
    prediction becomes the chosen state's target residency, so the tick is kept (the governor runs
    again at the next tick). A table whose deepest state needs 10 ms, a 6 ms prediction: C6
    chosen, tick kept; with a 20 ms prediction everything fits and the tick stops."""
    deep = CPU.cstates[-1].model_copy(update={"name": "C10", "target_residency_ns": 10e6, "exit_latency_ns": 500e3})
    cpu = CPU.model_copy(update={"cstates": (*CPU.cstates, deep)})
    short, long_ = (menu_qos(None, cpu=cpu) for _ in range(2))
    short.prime(6e6)
    long_.prime(20e6)
    assert [s.name for s in cpu.cstates][short.select(30e6, 0, TICK_NS, 3e6)] == "C6"
    assert not short.stop_tick
    assert [s.name for s in cpu.cstates][long_.select(30e6, 0, TICK_NS, 3e6)] == "C10" and long_.stop_tick


def test_menu_61_deducts_the_exit_latency_from_a_short_idle():
    """menu_update: the residency runs to the end of the state's exit (measured + exit); within
    twice the exit latency it is halved, so a 1 us wake-up from C1E (10 us exit) records 5 us."""
    gov = menu((6, 1), 30)
    assert NAMES[gov.select(2e6, 0, TICK_NS, 2e6)] == "C1E"
    gov.reflect(1000.0)
    assert gov.intervals[gov.interval_ptr - 1] == 5
    gov.select(2e6, 0, TICK_NS, 2e6)
    gov.reflect(40_000.0)  # beyond twice the exit: the measured time itself
    assert gov.intervals[gov.interval_ptr - 1] == 40


@pytest.mark.parametrize("governor", ["menu", "teo"])
@pytest.mark.parametrize("release", [(6, 1), (6, 12)])
def test_pm_qos_caps_the_depth_of_both_governors(governor, release):
    """cpu_latency_qos (/dev/cpu_dma_latency) at 50 us: a CPU with nothing to do for 20 ms takes
    C1E (10 us exit) instead of C6 (133 us); at 5 us, C1 (2 us)."""
    from policies.cpu_idle.teo import TeoGovernor

    for qos, want in ((None, "C6"), (50, "C1E"), (5, "C1")):
        cls = MenuGovernor if governor == "menu" else TeoGovernor
        gov = cls(CPU.model_copy(update={"cpu_latency_qos_us": qos}), TICK_NS)
        gov.for_kernel(release)
        for _ in range(20):
            gov.select(20e6, 0, TICK_NS, TICK_NS)
            gov.reflect(20e6)
        assert NAMES[gov.select(20e6, 0, TICK_NS, TICK_NS)] == want, qos


def test_a_deep_state_on_a_waiting_core_lengthens_the_tail_and_pm_qos_removes_it(box):
    """The rate-limited reader on teo 6.1 (above): its flash waits land in C6, and each read pays
    C6's 133 us exit. A PM QoS request of 20 us (what a latency-sensitive service writes to
    /dev/cpu_dma_latency) forbids C6: the waits take C1E (10 us exit) and p50 and p99 fall by the
    difference of the two exit latencies."""
    opts = {"rate_iops": "500", "runtime": "400ms", "ramp_time": "100ms"}
    deep = flash_read(box, "6.1", "teo", **opts)
    capped = simulate(
        resolve(
            platform=box,
            jobs=[
                job_from_options(
                    {
                        "rw": "randread",
                        "bs": "4k",
                        "ioengine": "psync",
                        "direct": "1",
                        "filename": "/dev/nvme0n1",
                        "time_based": "1",
                        **opts,
                    },
                    name="t",
                )
            ],
            sets={"kernel.version": "6.1", "cpu.cpuidle_governor": "teo", "cpu.cpu_latency_qos_us": 20},
        )
    )["summary"]
    cpu = max(capped["cstate_residency"].values(), key=lambda r: r["C0"])
    assert cpu["C6"] == 0 and cpu["C1E"] > 0.8 and deep["cpu"]["C6"] > 0
    for key in ("p50", "p99"):
        gain = deep["lat"][key] - capped["latency_us"][key]
        assert gain == pytest.approx(EXIT_US["C6"] - EXIT_US["C1E"], rel=0.25), key


def test_a_bad_pm_qos_limit_names_the_field():
    from simcore.errors import ConfigError

    with pytest.raises(ConfigError, match="cpu_latency_qos_us"):
        resolve(sets={"cpu.cpu_latency_qos_us": "-5"})
    assert resolve(sets={"cpu.cpu_latency_qos_us": "0"}).platform.cpu.cpu_latency_qos_us == 0


@pytest.mark.parametrize(
    "wait_us, waiters, state",
    [(50, 1, "C1"), (100, 1, "C1"), (109, 1, "C1"), (110, 1, "C1E"), (50, 0, "C1E"), (15, 0, "C1"), (700, 0, "C6")],
)
def test_menu_61_state_for_a_flash_wait_on_the_4210r(wait_us, waiters, state):
    """menu.c 6.1, tick running, a repeating wait of ``wait_us`` (the typical interval): the
    deepest state whose target residency fits it and whose exit latency is within wait / (1 + 10 x
    waiters): one IO waiter keeps a 50-109 us wait in C1 (C1E's 10 us exit needs 110 us); without
    one C1E's 20 us residency decides, and C6 needs 600 us."""
    gov = menu((6, 1), wait_us)
    assert NAMES[gov.select(3e6, waiters, TICK_NS, 3e6)] == state
