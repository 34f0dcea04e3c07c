"""Timeline tests of each mechanism: exact times from cycles, frequencies and exit latencies."""

import pytest

from models.os.irq.irqwork import FixedIrq
from models.os.sched.task import Task
from models.platforms import optane900p_e3_1230v5
from scenarios.run.assembly import build_host


def make_host(**queue):
    plat = optane900p_e3_1230v5()
    return build_host(plat, plat.queue.model_copy(update=queue), seed=1, keep_requests=True)


def idle_runner(host, cstate_name):
    r = host.runners[0]
    idx = [s.name for s in host.platform.cpu.cstates].index(cstate_name)
    r.cpu.set_idle(0.0, idx)
    r.mode = "idle"
    r._idle_since = 0.0
    return r


def test_interrupt_on_a_core_in_c1_runs_handler_after_exit_latency():
    host = make_host()
    r = idle_runner(host, "C1")
    cost = host.costs.get("test_irq", irq=3800)  # 3800 cycles at 3.8 GHz = 1000 ns
    log = []
    # the handler's effects apply at rr.clock(): the CPU's own time after exit + handler
    host.engine.call_at(10_000, r.raise_irq, FixedIrq(cost, lambda rr: log.append(rr.clock()), "test"))
    host.engine.run(50_000)
    exit_ns = 2_000  # Skylake C1 exit latency
    assert host.pkg.freq_ghz == pytest.approx(3.8)
    assert log == [pytest.approx(10_000 + exit_ns + 1_000)]
    # the CPU was in C1 for the 10 us before the interrupt
    assert r.cpu.cstate_ns[1] == pytest.approx(10_000)


def test_interrupt_on_a_core_in_poll_state_has_no_exit_latency():
    host = make_host()
    r = idle_runner(host, "POLL")
    cost = host.costs.get("test_irq", irq=3800)
    log = []
    host.engine.call_at(5_000, r.raise_irq, FixedIrq(cost, lambda rr: log.append(rr.clock()), "test"))
    host.engine.run(50_000)
    assert log == [pytest.approx(6_000)]


def test_segment_time_is_cycles_over_frequency_and_irq_pushes_it_back():
    host = make_host()
    r = host.runners[0]
    t = Task(0, "t", 0)
    host.all_tasks.append(t)
    log = []
    seg = host.costs.get("work", fs=38_000)  # 10 us at 3.8 GHz
    irq = host.costs.get("test_irq", irq=7_600)  # 2 us

    def body():
        r.run(seg, lambda: log.append(("seg_end", host.engine.now)))

    t.resume = body
    r.add_task(t)  # switches in: context switch carried into the segment
    host.start()  # the other CPUs go idle at t = 0 (an SMT sibling spinning at boot would slow cpu0)
    cs_ns = r.cost_cs.cycles / 3.8
    host.engine.call_at(4_000, r.raise_irq, FixedIrq(irq, lambda rr: log.append(("irq_end", host.engine.now)), "test"))
    host.engine.run(100_000)
    assert log[0] == ("irq_end", pytest.approx(6_000))
    assert log[1] == ("seg_end", pytest.approx(cs_ns + 10_000 + 2_000))


def _hrtimer_sleep(**kernel):
    """A task on CPU 0 arms a 20 us hrtimer and sleeps (iowait); returns (the task's clock when it
    runs again, the C-state it woke from, the task)."""
    plat = optane900p_e3_1230v5()
    plat = plat.model_copy(update={"kernel": plat.kernel.model_copy(update=kernel)})
    host = build_host(plat, plat.queue, seed=1, keep_requests=True)
    r = host.runners[0]
    t = Task(0, "t", 0)
    host.all_tasks.append(t)
    log, woke_from = [], []

    def body():
        def after_wake():
            log.append(r.clock())  # the task's own time: after the handler, wake-up and switch-in
            woke_from.append(host.platform.cpu.cstates[r.cpu.cstate].name)
            r.exit_task()

        r.start_timer(20_000, lambda rr: rr.wake(t))
        r.sleep(after_wake, iowait=True)

    t.resume = body
    r.add_task(t)
    host.engine.run(200_000)
    assert host.pkg.freq_ghz == pytest.approx(3.8)
    return log, woke_from, t


def test_hrtimer_sleep_wakes_task_at_expiry_plus_handler():
    log, woke_from, t = _hrtimer_sleep()
    # expected from the kernel cost table (docs/os.md), not from the model's own cost objects
    k = optane900p_e3_1230v5().kernel
    f = 3.8  # GHz: the E3-1230 v5's turbo, the performance governor's frequency
    cs_in = k.ctx_switch_cycles / f  # the CPU was not idle yet at t=0 (boot), so a plain switch
    expiry = cs_in + 20_000  # armed at the end of the carried switch-in
    handler = (k.irq_entry_cycles + k.hrtimer_expire_cycles) / f  # hard-IRQ entry + hrtimer_interrupt
    # the wake-up enqueues the task (with its load and pressure accounting), then switches it in
    wake_and_switch = (k.wakeup_cycles + k.accounting_cycles() + k.ctx_switch_cycles + k.idle_exit_cycles) / f
    # an iowait sleeper keeps the CPU in POLL (menu: exit latency limit / (1 + 10 iowaiters)): no exit latency
    assert woke_from == ["POLL"]
    assert log == [pytest.approx(expiry + handler + wake_and_switch, abs=1e-6)]
    assert t.nvcsw == 1 and t.nivcsw == 0


def test_hrtimer_handler_cycles_delay_the_wakeup_one_for_one():
    """3800 more cycles in hrtimer_interrupt (1 us at 3.8 GHz) wake the sleeper exactly 1 us later,
    and a costlier context switch moves both the arming (switch-in) and the wake-up switch."""
    k = optane900p_e3_1230v5().kernel
    (base,), _, _ = _hrtimer_sleep()
    (slow_timer,), _, _ = _hrtimer_sleep(hrtimer_expire_cycles=k.hrtimer_expire_cycles + 3800)
    (slow_cs,), _, _ = _hrtimer_sleep(ctx_switch_cycles=k.ctx_switch_cycles + 3800)
    assert slow_timer - base == pytest.approx(1_000, abs=1e-6)
    assert slow_cs - base == pytest.approx(2_000, abs=1e-6)


def test_classic_poll_detects_completion_within_one_poll_iteration():
    from scenarios.run.assembly import build_run
    from tests.conftest import make_cfg

    cfg = make_cfg("classic", runtime_ms=5, ramp_ms=1)
    host, _fio, ramp, end = build_run(cfg, keep_requests=True)
    host.engine.run(end)
    k = host.kcosts
    it_ns = k.poll_iteration_cycles / host.pkg.freq_ghz
    reap_ns = (k.nvme_complete_cycles + k.blk_complete_cycles) / host.pkg.freq_ghz
    gaps = [r.t_reaped - r.t_cqe for r in host.records]
    # found at the end of the poll iteration in progress, completed after the reap
    assert gaps and max(gaps) <= it_ns + reap_ns + 1e-6
    assert min(gaps) >= 0
