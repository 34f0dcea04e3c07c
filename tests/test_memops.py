"""Memory-operation attribution: calibrated on the interrupt and classic-polling columns of
table 2 (4 KiB, 32 threads); hybrid polling's column follows from its mechanism."""

import pytest

from models.os.costs.memops import KEYS, rates_per_s
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

    from models.os.costs.tables import KernelCosts

    with pytest.raises(ValidationError, match=words):
        KernelCosts(**{field: value})


# -- the sub-actions and the derived operations (models.os.costs.tables.SUB_ACTIONS, models.os.costs.memops) -----


def _host(**kernel):
    from models.platforms import optane900p_e3_1230v5
    from scenarios.run.assembly import build_host

    plat = optane900p_e3_1230v5()
    plat = plat.model_copy(update={"kernel": plat.kernel.model_copy(update=kernel)})
    return build_host(plat, plat.queue, seed=1, keep_requests=True)


def _actions_by_cpu(host) -> list[dict[str, int]]:
    """Per runner: executions of each kernel action and sub-action so far (bundle uses x actions)."""
    from models.os.costs.tables import ACTION_INDEX

    names = {i: a for a, i in ACTION_INDEX.items()}
    out = []
    for r in host.runners:
        acts: dict[str, int] = {}
        for idx, n in r.counts.items():
            for a, times in host.costs.bundles[idx].actions:
                acts[names[a]] = acts.get(names[a], 0) + n * times
        out.append(acts)
    return out


def _sleeper_woken_by_irq_on(cpu: int):
    """A task on CPU 0 sleeps; at 50 us an interrupt on ``cpu`` wakes it; it runs to its exit."""
    from models.os.irq.irqwork import FixedIrq
    from models.os.sched.task import Task

    host = _host()
    r0 = host.runners[0]
    t = Task(0, "t", 0)
    host.all_tasks.append(t)
    done = []
    t.resume = lambda: r0.sleep(lambda: (done.append(r0.clock()), r0.exit_task()), iowait=True)
    r0.add_task(t)
    host.start()
    irq = FixedIrq(host.costs.get("test_irq", irq=1000), lambda rr: rr.wake(t), "test")
    host.engine.call_at(50_000, host.runners[cpu].raise_irq, irq)
    host.engine.run(2_000_000)  # (both CPUs idle in deep C-states meanwhile: their exits come first)
    assert done, "the task ran again"
    return host, _actions_by_cpu(host)


def test_a_remote_wakeup_queues_on_the_target_and_its_ipi_takes_it_off_a_local_one_does_neither():
    """ttwu_queue_wakelist on the waker's CPU, sched_ttwu_pending in the IPI on the task's CPU:
    once each for a wake-up from another core, never for one on the task's own CPU."""
    host, remote = _sleeper_woken_by_irq_on(2)  # CPU 2: another core of the E3-1230 v5
    assert host.runners[0].irq_kinds["ipi"] == 1
    assert remote[2].get("ttwu_queue") == 1 and remote[2].get("ttwu_pending", 0) == 0
    assert remote[0].get("ttwu_pending") == 1 and remote[0].get("ttwu_queue", 0) == 0
    _, local = _sleeper_woken_by_irq_on(0)
    assert sum(c.get("ttwu_queue", 0) + c.get("ttwu_pending", 0) for c in local) == 0
    assert local[0]["wakeup"] == remote[2]["wakeup"] == 1  # the same try_to_wake_up either way


def test_a_timer_that_becomes_the_first_reprograms_the_clock_event_device_a_later_one_does_not():
    """hrtimer_start_range_ns programs the clock event only for the CPU's earliest timer (the
    tick's included); every timer interrupt programs the next expiry."""
    host = _host()
    r = host.runners[0]
    ce = host.costs.get("clockevent_program", actions={"clockevent_program": 1})

    def programmed() -> int:
        return r.counts.get(ce.idx, 0) + len([c for c in r.carried() if c is ce])

    fired = []
    r.start_timer(50_000, lambda rr: fired.append(rr.engine.now))
    assert programmed() == 1  # no other timer (the tick is not running before the CPU starts)
    r.start_timer(20_000, lambda rr: fired.append(rr.engine.now))
    assert programmed() == 2  # earlier than the first
    r.start_timer(80_000, lambda rr: fired.append(rr.engine.now))
    assert programmed() == 2  # behind the others: no reprogramming
    host.start()
    host.engine.run(30_000)
    assert fired == [pytest.approx(20_000)]
    # + one per timer interrupt (hrtimer_interrupt programs the next expiry), one per NOHZ tick stop or restart
    uses = sum(r.counts.get(c.idx, 0) for c in (host.timer_cost, host.tick_cost, r.cost_tick_stop, r.cost_tick_restart))
    assert r.counts.get(host.timer_cost.idx) == 1
    assert _actions_by_cpu(host)[0]["clockevent_program"] == 2 + uses


@pytest.mark.parametrize("depth", [1, 3, 5])
def test_deeper_cgroup_nesting_adds_pelt_psi_and_group_updates_per_io(depth):
    """One interrupt-driven thread: per IO the sleep's dequeue and the wake-up's enqueue update
    PELT at every level (cgroup_depth + 1) and re-weight every group entity (cgroup_depth), and
    the switch in from idle sets the entity current and the task on the CPU at every level."""
    a = _interrupt_run(cgroup_depth=depth)
    per_io, sub = a["kernel_actions_per_io"], a["kernel_sub_actions_per_io"]
    levels = depth + 1
    assert per_io["pelt_update"] == pytest.approx(2 * levels, rel=0.02)
    assert sub["cfs_group_update"] == pytest.approx(2 * depth, rel=0.02)
    assert sub["pelt_switch"] == pytest.approx(levels, rel=0.02)
    assert sub["psi_switch"] == pytest.approx(levels, rel=0.02)
    # its CPU has no other task of the cgroup: every group level is queued at the wake-up and
    # dequeued at the sleep (with that level's update_curr); the simple path walks no update_curr
    assert sub["entity_enqueue"] == pytest.approx(depth, rel=0.02)
    assert sub["entity_dequeue"] == pytest.approx(depth, rel=0.02)
    assert sub["update_curr"] == pytest.approx(depth, rel=0.02)


def test_deeper_nesting_costs_more_scheduler_operations_per_io():
    """Two more cgroup levels: per IO, two more PELT updates of each of the enqueue, the dequeue
    and the switch, two more group re-weights at each, and two more psi groups at the switch."""
    from models.os.costs.memops import DERIVED_OPS
    from models.platforms import MEM_OPS

    base, deep = _interrupt_run(cgroup_depth=3), _interrupt_run(cgroup_depth=5)
    per_io = lambda s, key: s["mem_ops_per_s"][key] / s["iops"]  # noqa: E731
    pelt = MEM_OPS["per_action"]["pelt_update"]["load_avg"]
    assert per_io(deep, "update_load_avg") - per_io(base, "update_load_avg") == pytest.approx(2 * 3 * pelt, rel=0.05)
    group = ("cfs_group_update", "cfs_group_update", "psi_switch", "entity_enqueue", "entity_dequeue", "update_curr")
    extra = 2 * sum(DERIVED_OPS[a]["sched_rest"] for a in group)
    assert per_io(deep, "kernel/sched/") - per_io(base, "kernel/sched/") > extra


def test_task_to_task_switches_in_one_cgroup_walk_the_leaf_only(runs):
    """Hybrid polling at 32 threads on 8 CPUs switches from a sleeping fio thread to a queued one:
    pick_next_task_fair changes the leaf entity only and psi_task_switch stops at the first group
    (both threads are on it); with interrupts every switch in comes from the idle task."""
    h = runs["hybrid_polling"]["kernel_sub_actions_per_io"]
    i = runs["interrupt"]["kernel_sub_actions_per_io"]
    assert h["psi_switch"] < 0.1 and h["pelt_switch"] == pytest.approx(1.0, abs=0.1)
    assert i["psi_switch"] == pytest.approx(4.0, rel=0.02) and i["pelt_switch"] == pytest.approx(4.0, rel=0.02)
    # the walk down updates the ancestors' running entities; the cgroup stays queued on each CPU
    assert h["update_curr"] == pytest.approx(3.0, abs=0.2)
    assert h["entity_enqueue"] < 0.2 and h["entity_dequeue"] < 0.2
    assert h["clockevent_program"] >= 1.0  # at least the timer interrupt's, per sleep
    # the timer wakes a task on its busy CPU: select_idle_sibling searches the LLC at every wake-up;
    # an interrupt finds it idle
    assert h["select_idle_sibling"] == pytest.approx(1.0, abs=0.05) and i["select_idle_sibling"] < 0.1


def test_derived_actions_are_not_fitted_and_a_platform_may_override_them():
    from models.os.costs.memops import DERIVED_OPS, FITTED_ACTIONS, rates_per_s
    from models.platforms import MEM_OPS

    assert not set(DERIVED_OPS) & set(FITTED_ACTIONS)
    assert not set(DERIVED_OPS) & set(MEM_OPS["per_action"])  # the calibration's output keeps them
    derived = rates_per_s({}, {}, {}, {"hrtimer_expire": 1e6})
    assert derived["*hrtimer*"] == pytest.approx(DERIVED_OPS["hrtimer_expire"]["hrtimer"] * 1e6)
    over = rates_per_s({}, {}, {"hrtimer_expire": {"hrtimer": 5.0}}, {"hrtimer_expire": 1e6})
    assert over["*hrtimer*"] == pytest.approx(5e6) and over["kernel/time/"] == pytest.approx(5e6)
    # a sub-action that runs another action's function has that action's operations
    alias = rates_per_s({}, {}, {"pelt_update": {"load_avg": 2.0}}, {"pelt_switch": 1e6})
    assert alias["update_load_avg"] == pytest.approx(2e6)
