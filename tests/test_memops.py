"""Memory-operation attribution: calibrated on the interrupt and classic-polling columns of
table 2 (4 KiB, 32 threads); hybrid polling's column follows from its mechanism."""

import pytest

from models.os.memops import KEYS, rates_per_s
from models.platforms import POLL_ENERGY_FIT
from scenarios.studies.calibrate_memops import table2
from scenarios.studies.calibrate_poll_energy import run_mode


@pytest.fixture(scope="module")
def runs():
    return {
        m: run_mode(POLL_ENERGY_FIT, m, runtime_ms=40, threads=32)
        for m in ("interrupt", "classic_polling", "hybrid_polling")
    }


def test_keys_and_totals(runs):
    m = runs["interrupt"]["mem_ops_per_s"]
    assert list(m)[: len(KEYS)] == list(KEYS) and "total" in m
    assert m["total"] == pytest.approx(
        m["block/"] + m["drivers/nvme/host/"] + m["kernel/sched/"] + m["kernel/time/"] + m["other"]
    )
    assert m["blk_poll"] + m["blk_mq_*"] <= m["block/"] + 1


def test_calibrated_columns_agree_in_total_and_in_the_defining_groups(runs):
    meas = table2()
    for mode in ("interrupt", "classic_polling"):
        m = runs[mode]["mem_ops_per_s"]
        assert m["total"] / 1e6 == pytest.approx(meas[mode]["total"], rel=0.15), mode
    # the groups that define each mode
    assert runs["classic_polling"]["mem_ops_per_s"]["blk_poll"] / 1e6 == pytest.approx(
        meas["classic_polling"]["blk_poll"], rel=0.15
    )
    assert runs["interrupt"]["mem_ops_per_s"]["blk_poll"] == 0 == meas["interrupt"]["blk_poll"]
    assert runs["interrupt"]["mem_ops_per_s"]["__schedule"] / 1e6 == pytest.approx(
        meas["interrupt"]["__schedule"], rel=0.15
    )
    assert runs["classic_polling"]["mem_ops_per_s"]["__schedule"] / 1e6 < 1


def test_hybrid_column_follows_from_timer_sleep_and_partial_polling(runs):
    h = runs["hybrid_polling"]["mem_ops_per_s"]
    i = runs["interrupt"]["mem_ops_per_s"]
    c = runs["classic_polling"]["mem_ops_per_s"]
    assert h["*hrtimer*"] > max(i["*hrtimer*"], c["*hrtimer*"])  # only hybrid arms a timer per IO
    assert 0 < h["blk_poll"] < c["blk_poll"]  # it polls, but only after its sleep
    assert h["__schedule"] > c["__schedule"]  # one context switch per IO


def test_rates_scale_with_cycles():
    intensity = {"polling": {"blk_poll": 0.01}}
    assert rates_per_s(intensity, {"polling": 2e9})["blk_poll"] == pytest.approx(2e7)


# -- per kernel action -----------------------------------------------------------------------------


def _interrupt_run(**kernel):
    from models.platforms import optane900p_e3_1230v5
    from scenarios.config.host import RunConfig
    from scenarios.inputs.fio.parser import job_from_options
    from scenarios.run.simulate import simulate

    plat = optane900p_e3_1230v5()
    plat = plat.model_copy(update={"kernel": plat.kernel.model_copy(update=kernel)})
    job = job_from_options(
        {"rw": "randread", "bs": "4k", "ioengine": "pvsync2", "direct": "1", "runtime": "20ms", "time_based": "1"},
        name="j",
    )
    return simulate(RunConfig(name="memops-actions", platform=plat, jobs=(job,), seed=3))["summary"]


def test_actions_per_io_follow_the_interrupt_path():
    """One thread, interrupts: per IO the task sleeps (dequeue) and is woken (enqueue), each with
    PELT and PSI at every cgroup level; its CPU switches to idle and back."""
    s = _interrupt_run()
    a = s["kernel_actions_per_io"]
    levels = 3 + 1  # cgroup_depth + root
    assert a["wakeup"] == pytest.approx(1.0, abs=0.02)
    assert a["pelt_update"] == pytest.approx(2 * levels, rel=0.02)
    assert a["psi_change"] == pytest.approx(2 * levels, rel=0.02)
    assert a["switch"] == pytest.approx(2.0, abs=0.05)  # to the idle task and back
    assert a["idle_entry"] == pytest.approx(a["idle_exit"], rel=0.02)
    assert a["migrate"] == 0


@pytest.mark.parametrize("mode", ["interrupt", "hybrid_polling"])
def test_every_scheduler_and_timer_cycle_is_an_action(runs, mode):
    """The scheduler and timer layers' cycles are exactly their actions' (a bundle that added
    scheduler or timer cycles without naming the action would escape the per-action charge)."""
    from models.platforms import optane900p_e3_1230v5
    from scenarios.run.summary import non_action_cycles

    s = runs[mode]
    actions = {k: v * s["iops"] for k, v in s["kernel_actions_per_io"].items()}
    rest = non_action_cycles(optane900p_e3_1230v5().kernel, s["cycles_per_s"], actions)
    for layer in ("scheduler", "timer"):
        assert s["cycles_per_s"][layer] > 0
        assert rest[layer] <= 1e-6 * s["cycles_per_s"][layer], layer


def test_memory_operations_are_charged_per_action_not_per_cycle():
    """Doubling the cycles of a context switch leaves its memory operations per IO unchanged (they
    are counted per switch), while the scheduler's cycles per IO grow."""
    from models.platforms import optane900p_e3_1230v5

    base = _interrupt_run()
    k = optane900p_e3_1230v5().kernel
    slow = _interrupt_run(ctx_switch_cycles=2 * k.ctx_switch_cycles)
    per_io = lambda s, key: s["mem_ops_per_s"][key] / s["iops"]  # noqa: E731
    assert per_io(slow, "__schedule") == pytest.approx(per_io(base, "__schedule"), rel=0.01)
    assert slow["cycles_per_s"]["scheduler"] / slow["iops"] > 1.3 * base["cycles_per_s"]["scheduler"] / base["iops"]


def test_rates_count_actions():
    per_action = {"switch": {"__schedule": 10.0}}
    r = rates_per_s({}, {}, per_action, {"switch": 3e5})
    assert r["__schedule"] == pytest.approx(3e6) and r["kernel/sched/"] == pytest.approx(3e6)


@pytest.mark.parametrize(
    "field, value, words",
    [
        ("mem_ops_per_action", {"swtich": {"__schedule": 1.0}}, "unknown kernel action 'swtich'"),
        ("mem_ops_per_action", {"switch": {"sched": 1.0}}, "unknown cell 'sched'"),
        ("mem_ops_per_cycle", {"scheduler": {"__schedule": 1.0}}, "unknown source 'scheduler'"),
        ("mem_ops_per_action", {"switch": {"__schedule": -1.0}}, "must be >= 0"),
    ],
)
def test_bad_memory_operation_tables_are_refused(field, value, words):
    from pydantic import ValidationError

    from models.os.costs import KernelCosts

    with pytest.raises(ValidationError, match=words):
        KernelCosts(**{field: value})
