"""Hard-IRQ entry and exit on a CPU: device MSI-X vectors, timer interrupts, IPIs.

A handler (:class:`~models.os.irq.irqwork.IrqWork`) runs on top of whatever it interrupted (mode
``IRQ``): a segment resumes afterwards, pushed back by the handler's duration; a poll loop resumes
polling; interrupts arriving meanwhile run one after the other. An interrupt that finds the CPU
idle first pays the C-state's exit latency; since nothing else can run on the CPU meanwhile, the
exit and the handler are carried into what runs next (one event fewer), the handler's effects
applying at once with timestamps from ``clock()``. SMT contention stretches a handler like any
other work (:meth:`IrqEntry.sibling_activity_changed`).
"""

from __future__ import annotations

from collections import defaultdict, deque

from models.cpu.core import LogicalCpu
from models.cpu.cpuidle import CpuidleGovernor
from models.os.costs.bundle import Cost
from models.os.interfaces import Balancer
from models.os.irq.irqwork import FixedIrq, IrqWork
from models.os.sched.config import SchedConfig
from models.os.sched.execution import IDLE, IRQ, NONE, POLL, RUN, Execution, Tally
from models.os.sched.host import SchedHost
from models.os.sched.idle import IdleLoop
from models.os.sched.task import Task
from simcore.engine import Call, handler_call


def _stalled(work_from: float, end: float, now: float, resume: float) -> tuple[bool, float, float]:
    """Work that runs from ``work_from`` (after a C-state exit) to ``end``, its core stalled from
    ``now`` to ``resume``: (whether it has work left after ``now``, where its work now starts,
    where it now ends), ns. The work left resumes after the stall (an exit under way overlaps it)."""
    start = now if now > work_from else work_from
    if end <= start:
        return False, work_from, end
    new_from = resume if resume > work_from else work_from
    return True, new_from, new_from + (end - start)


class IrqEntry(IdleLoop):
    """The hard-IRQ level of a CPU's runner (models.os.sched.execution)."""

    def __init__(
        self, host: SchedHost, cpu: LogicalCpu, governor: CpuidleGovernor, sched: SchedConfig, balancer: Balancer
    ):
        super().__init__(host, cpu, governor, sched, balancer)
        self._irq_end_cb = self._irq_end
        self._irq_tally: dict[str, Tally] = {}  # interrupts taken, by kind (first-come order)
        self._irqs: deque[IrqWork] = deque()
        self._irq_prev = NONE
        self._irq_call: Call | None = None
        self._irq_end_t = 0.0
        self._irq_work_from = 0.0
        self._seg_rem = 0.0  # what is left of the interrupted segment, ns
        self._seg_rem_fac = 1.0  # the SMT factor _seg_rem was measured at
        self._ipi_cost: Cost = host.ipi_cost
        self._ipi_ns: float = host.kcosts.ipi_latency_ns
        pcfg = host.pkg.cfg
        #: an IPI to another socket crosses the interconnect: its extra hop, estimated as the extra
        #: of a cross-socket cache-line transfer over an on-socket one (the same fabric), cycles
        self._ipi_remote_cycles: float = max(0.0, pcfg.cross_socket_line_transfer_cycles - pcfg.line_transfer_cycles)
        self._node_of: list[int] = host.pkg.node_of
        self._irqtime: bool = sched.irq_time_accounting

    def send_ipi(self, target: Execution, fire) -> None:
        """An IPI from code running on this CPU to ``target``: sent at the end of the work carried
        so far, it arrives ``ipi_latency_ns`` later (plus the interconnect's extra hop to another
        socket) and its handler runs ``fire(target)``."""
        delay = self._carry_ns + self._ipi_ns
        if self._node_of[self.id] != self._node_of[target.id]:
            delay += self._ipi_remote_cycles / self.freq
        self.engine.call_in(delay, target.raise_irq, FixedIrq(self._ipi_cost, fire, "ipi"))

    def sibling_activity_changed(self, now: float, activity: float) -> None:
        """The SMT sibling's executing activity changed at ``now``: the work under way from now
        runs at the new contention factor (the segment or interrupt handler end moves; loop
        iterations get their new length)."""
        fac = 1.0 + self._smt_excess * activity
        old = self._smt_fac
        if fac == old:
            return
        self._smt_fac = fac
        mode = self.mode
        if mode == RUN:
            start = now if now > self._seg_work_from else self._seg_work_from
            if self._seg_end > start:
                self._seg_end = end = start + self._stretch(self._seg_end - start, fac, old)
                old_call = self._seg_call
                assert old_call is not None  # a segment runs
                old_call.cancel()
                call = self._seg_call = handler_call(self, end)
                self.engine.schedule(call)
        elif mode == IRQ and self._irq_call is not None:
            start = now if now > self._irq_work_from else self._irq_work_from
            if self._irq_end_t > start:
                self._irq_end_t = end = start + self._stretch(self._irq_end_t - start, fac, old)
                work = self._irq_call.args[0]
                self._irq_call.cancel()
                self._irq_call = self.engine.call_at(end, self._irq_end_cb, work)
        self._set_loop_ns()

    def _pstate_stalled(self, now: float, ns: float) -> None:
        """The core's clock stops for ``ns`` from ``now`` (a P-state change takes effect): the work
        under way resumes after it (a C-state exit under way overlaps it), a poll loop's iterations
        and the completion it would notice move by ``ns``; the stall is nobody's CPU time."""
        mode = self.mode
        resume = now + ns
        if mode == RUN:
            left, new_from, end = _stalled(self._seg_work_from, self._seg_end, now, resume)
            if left:
                self._seg_end = end
                self._seg_work_from = new_from
                old_call = self._seg_call
                assert old_call is not None  # a segment runs
                old_call.cancel()
                call = self._seg_call = handler_call(self, end)
                self.engine.schedule(call)
        elif mode == IRQ and self._irq_call is not None:
            left, new_from, end = _stalled(self._irq_work_from, self._irq_end_t, now, resume)
            if left:
                self._irq_end_t = end
                self._irq_work_from = new_from
                work = self._irq_call.args[0]
                self._irq_call.cancel()
                self._irq_call = self.engine.call_at(end, self._irq_end_cb, work)
        elif mode == POLL:
            if self._poll_start > now:  # carried work runs first: it resumes after the stall
                self._poll_start += ns
            else:
                self._charge_poll(now)
                self._poll_start = resume
            pending = self._poll_call
            if pending is not None:
                fn, args, t = pending.fn, pending.args, pending.time
                pending.cancel()
                self._poll_call = self.engine.call_at(t + ns, fn, *args)

    @property
    def irq_kinds(self) -> defaultdict[str, int]:
        """Interrupts taken on this CPU so far, by kind ("nvme", "timer", "tick", "ipi", ...; a
        kind never taken reads 0): a snapshot (a new mapping per call; changing it changes nothing)."""
        return defaultdict(int, {kind: t.n for kind, t in self._irq_tally.items()})

    def raise_irq(self, work: IrqWork) -> None:
        """An interrupt (device MSI-X, timer, IPI) arrives at this CPU now."""
        if self.mode == IDLE and not self._irqs:
            self._irq_on_idle(work, self.engine.now)
            return
        self._irqs.append(work)
        if self.mode != IRQ:
            self._start_irq()

    def _start_irq(self) -> None:
        now = self.engine.now
        prev = self.mode
        delay = 0.0
        if prev == IDLE and len(self._irqs) == 1:
            self._irq_on_idle(self._irqs.popleft(), now)
            return
        if prev == IDLE:
            delay = self._exit_ns[self.cpu.cstate]
            self._end_idle(now, self._irqs[0] is self._tick_irq)
        elif prev == RUN:
            self._seg_rem = self._seg_end - now
            exit_left = self._seg_work_from - now
            if exit_left > 0.0:
                # the CPU is still leaving its C-state (the exit that started this segment): the
                # handler runs once it is awake, and the segment keeps only its work
                delay = exit_left
                self._seg_rem -= exit_left
            self._seg_rem_fac = self._smt_fac
            seg_call = self._seg_call
            assert seg_call is not None  # the interrupted segment's end
            seg_call.cancel()
        elif prev == POLL:
            # carried work not yet done when the interrupt came resumes after the handler
            self._poll_carry_left = self._poll_start - now if self._poll_start > now else 0.0
            self._charge_poll(now)
            if self._poll_call is not None:
                self._poll_call.cancel()
                self._poll_call = None
        self._irq_prev = prev
        self.mode = IRQ
        self._next_irq(delay)

    def _irq_on_idle(self, work: IrqWork, now: float) -> None:
        """An interrupt wakes an idle CPU: C-state exit, handler, then whatever it made runnable.
        Nothing else can run on this CPU meanwhile, so the exit and handler time are carried into
        the next segment and the handler's effects apply now with timestamps from ``clock()``."""
        self._end_idle(now, work is self._tick_irq)
        cost = self._account_irq(work, now)
        self.mode = NONE
        exit_ns = self._exit_ns[self.cpu.cstate]
        self._carry_ns += exit_ns + cost.cycles / self.freq
        self._carry_fixed_ns += exit_ns
        if self.engine.tracer is not None:
            self._trace_parts += [(f"{self.cstates[self.cpu.cstate].name} exit", exit_ns)] + [
                (f"hard IRQ ({work.kind}): {name}", ns) for name, ns in self._layer_parts(cost)
            ]
        work.fire(self)
        self._charge_tick_restart()
        if self.rq:
            self._schedule(from_idle=True)
        else:
            self.run(self.cost_idle_reenter, self._enter_idle_cb)

    def _take_irq(self, now: float) -> tuple[IrqWork, Cost]:
        """Dequeue the next interrupt, evaluate its cost (the handler sees the CQ as it is now) and
        account it; the CPU is busy from now."""
        work = self._irqs.popleft()
        return work, self._account_irq(work, now)

    def _account_irq(self, work: IrqWork, now: float) -> Cost:
        """Evaluate the cost of ``work``'s handler (it sees the CQ as it is now) and account it; the
        CPU is busy from now."""
        cost = work.cost(self)
        self._count(cost.idx)
        tally = self._irq_tally.get(work.kind)
        if tally is None:
            tally = self._irq_tally[work.kind] = Tally()
        tally.n += 1
        self.cpu.set_busy(now, cost.activity)
        return cost

    def _next_irq(self, delay: float) -> None:
        now = self.engine.now
        if self._pstate_stall_end > now + delay:  # the core's clock is stopped (a P-state change)
            delay = self._pstate_stall_end - now
        work, cost = self._take_irq(now)
        ns = cost.cycles / self.freq
        act = self._seg_act = cost.activity
        cpu = self.cpu
        if not cpu.busy or cpu.activity != act:
            cpu.set_busy(now, act)  # first: a CPU waking up learns its SMT sibling's activity here
        fac = self._smt_fac
        if fac != 1.0:  # the handler competes with the sibling like any other work
            self.smt_stall_ns += ns * (fac - 1.0)
            ns *= fac
        task = self.current
        if task is not None:  # the handler interrupted a task (not the idle task)
            self._account_irq_time(task, cost, ns)
        tr = self.engine.tracer
        if tr is not None:
            tr.span(1, self.id, f"hard IRQ ({work.kind})", now + delay, ns, "irq")
        self._irq_work_from = now + delay
        self._irq_end_t = now + delay + ns
        self._irq_call = self.engine.call_in(delay + ns, self._irq_end_cb, work)

    def _account_irq_time(self, task: Task, cost: Cost, ns: float) -> None:
        """Whose time is a handler that interrupted ``task`` (``ns`` on the CPU)? With IRQ time
        accounting (irqtime_account_irq) nobody's: the run queue's clock_task skips it, so the
        task's exec time and vruntime leave it out. Without, the task's: its clock runs on and the
        handler's CPU time is system time of the task (account_system_index_time, CPUTIME_IRQ
        charged to ``p->stime``), as its own kernel work is counted (cycles at the frequency)."""
        if self._irqtime:
            task.exec_ns -= ns
            task.vruntime -= ns * task.vscale
        else:
            task.sys_ns += cost.cycles / self.freq

    def _irq_end(self, work: IrqWork) -> None:
        self._irq_call = None
        work.fire(self)
        if self._irqs:
            self._next_irq(0.0)
            return
        prev = self._irq_prev
        now = self.engine.now
        if prev == RUN:
            self.mode = RUN
            self.cpu.set_busy(now, self._seg_act)
            rem = self._seg_rem
            if self._seg_rem_fac != self._smt_fac:  # the sibling changed meanwhile
                rem = self._stretch(rem, self._smt_fac, self._seg_rem_fac)
            self._seg_work_from = now
            end = self._seg_end = now + rem
            call = self._seg_call = handler_call(self, end)  # (the interrupted one stays queued, cancelled)
            self.engine.schedule(call)
        elif prev == POLL:
            self.mode = POLL
            self.cpu.set_busy(now, self._act_poll)
            self._poll_start = now + self._poll_carry_left
            self._poll_carry_left = 0.0
            self._poll_check()
        elif prev == IDLE:
            self.mode = NONE
            self._charge_tick_restart()
            if self.rq:
                self._schedule(from_idle=True)
            else:
                self.run(self.cost_idle_reenter, self._enter_idle_cb)
        else:
            self.mode = prev
