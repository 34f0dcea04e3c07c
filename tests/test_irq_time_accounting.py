"""Whose CPU time is an interrupt handler: the task it interrupted (no IRQ time accounting, the
Kconfig default) or nobody's (CONFIG_IRQ_TIME_ACCOUNTING with irqtime: ``sched.irq_time_accounting``)."""

from __future__ import annotations

import pytest

from models.platforms import optane_p4801x_e3_1230
from scenarios.config.host import RunConfig
from scenarios.inputs.fio.parser import job_from_options
from scenarios.run.simulate import simulate


def _run(irqtime: bool) -> dict:
    plat = optane_p4801x_e3_1230()
    plat = plat.model_copy(update={"sched": plat.sched.model_copy(update={"irq_time_accounting": irqtime})})
    opts = {
        "rw": "randread",
        "bs": "4k",
        "direct": "1",
        "runtime": "10ms",
        "ramp_time": "2ms",
        "time_based": "1",
        "ioengine": "libaio",
        "iodepth": "128",
    }
    job = job_from_options(opts, name="j")
    return simulate(RunConfig(name="t", platform=plat, queue=plat.queue, jobs=(job,), seed=1))


@pytest.fixture(scope="module")
def runs() -> tuple[dict, dict]:
    return _run(False), _run(True)


def test_without_irq_time_accounting_the_interrupted_thread_is_charged(runs):
    """One CPU-bound thread at depth 128 with its completions' interrupts on its own CPU: its
    usr + sys is its whole time on the CPU, 100%, the handlers counted as system time."""
    off, _on = runs
    job = off["jobs"][0]
    share = off["summary"]["per_job"][0]["cpu_share"]
    assert share > 0.99
    assert job["usr_cpu"] + job["sys_cpu"] == pytest.approx(100 * share, abs=0.5)


def test_with_irq_time_accounting_interrupts_are_nobodys_task_time(runs):
    """irqtime on: the thread's exec time and usr + sys leave out the handlers that hit it (at
    least their IRQ-entry layer); its user time and the IO path itself are unchanged."""
    off, on = runs
    j_off, j_on = off["jobs"][0], on["jobs"][0]
    share = on["summary"]["per_job"][0]["cpu_share"]
    assert j_on["usr_cpu"] + j_on["sys_cpu"] == pytest.approx(100 * share, abs=0.5)
    assert j_on["usr_cpu"] == pytest.approx(j_off["usr_cpu"])
    s = on["summary"]
    irq_entry_share = s["layers"]["irq"] * s["iops"] / 1e9
    assert off["summary"]["per_job"][0]["cpu_share"] - share > irq_entry_share
    assert s["iops"] == off["summary"]["iops"]  # accounting only: a lone thread runs the same


def _depth1(only_state: str) -> dict:
    """One psync thread at depth 1 with interrupts, its CPU idling in ``only_state`` between IOs."""
    plat = optane_p4801x_e3_1230()
    off = tuple(st.name for st in plat.cpu.cstates if st.name != only_state)
    plat = plat.model_copy(update={"cpu": plat.cpu.model_copy(update={"cpuidle_disable": off})})
    opts = {"rw": "randread", "bs": "4k", "direct": "1", "runtime": "10ms", "ramp_time": "2ms"}
    job = job_from_options({**opts, "time_based": "1", "ioengine": "psync"}, name="j")
    return simulate(RunConfig(name="t", platform=plat, queue=plat.queue, jobs=(job,), seed=1))["summary"]


def test_a_c_state_exit_and_the_interrupt_on_the_idle_cpu_are_not_the_woken_threads_time():
    """Linux starts a task's clock at its pick (set_next_entity): the C-state exit, and the handler
    that ran on the idle CPU, are the idle task's. A deeper exit (C1E, 10 us, against C1's 2 us; no
    cache flush in either) lengthens every IO by the difference but leaves the thread's CPU time per
    IO as it is."""
    c1, c1e = _depth1("C1"), _depth1("C1E")
    ns_c1 = c1["per_job"][0]["cpu_share"] * 1e9 / c1["iops"]
    ns_c1e = c1e["per_job"][0]["cpu_share"] * 1e9 / c1e["iops"]
    assert c1e["latency_us"]["mean"] - c1["latency_us"]["mean"] > 6.0  # the exits differ by 8 us
    assert ns_c1e == pytest.approx(ns_c1, rel=0.03)
    # and the thread's time is its own work: well under the time between two of its IOs
    assert ns_c1 < 0.8 * (1e9 / c1["iops"] - 2000 - 4000)
