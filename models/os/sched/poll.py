"""Polling on a CPU: the current task busy-polls a completion queue (blk_poll, io_uring IOPOLL) or
spins on a flag in memory (a user-space ring, fio's flow control) without leaving the CPU.

A poll loop is one mode of the runner (``POLL``): no event per iteration; a completion entry posted
on a polled queue (:meth:`Polling.cqe_posted`) or a waiter made done (:meth:`Polling.spin_notify`)
is noticed at the end of the loop iteration under way, when the reaping (carried) and the task's
completion path run. The loop's time is charged as it passes (``poll_ns``, the ``polling`` layer),
to the task's system time (its user time for a user-space spin). ``need_resched`` ends the loop
and the poller is preempted (:meth:`Polling._poll_interrupt_for_resched`).

A loop may have a time budget (:meth:`Polling.poll_for`, one :class:`PollBudget`): it stops after
the iteration that reaches the budget when its request is not done, and the caller falls back.
"""

from __future__ import annotations

import math
from typing import Any, Callable, cast

from models.cpu.core import LogicalCpu
from models.cpu.cpuidle import CpuidleGovernor
from models.os.interfaces import Balancer, QueueView
from models.os.sched.config import SchedConfig
from models.os.sched.execution import NONE, POLL, POLLING_LAYER, Execution
from models.os.sched.host import SchedHost
from models.os.sched.task import Task
from simcore.engine import Call


class Polling(Execution):
    """The polling level of a CPU's runner (models.os.sched.execution). (``self``:
    the queues and the driver know runners as the whole they are part of.)"""

    def __init__(
        self, host: SchedHost, cpu: LogicalCpu, governor: CpuidleGovernor, sched: SchedConfig, balancer: Balancer
    ):
        super().__init__(host, cpu, governor, sched, balancer)
        self._poll_hit_cb = self._poll_hit
        self._poll_resched_cb = self._poll_resched_after_carry
        self._act_poll = cpu.core._cfg.activity["poll"]
        k = host.kcosts
        self._poll_iter_cycles: float = k.poll_iteration_cycles
        self._spin_iter_cycles: float = k.spin_iteration_cycles
        self._iter_ns: float = self._poll_iter_cycles / self.freq
        self._spin_ns: float = self._spin_iter_cycles / self.freq
        self.poll_cycles = 0.0
        self.poll_ns = 0.0
        self._poll_qp: QueueView | None = None
        self._poll_req: Any = None  # a Request, or a waiter with ``done`` (spin)
        self._poll_then: Any = None
        self._poll_start = 0.0  # the loop's start: later than now while carried work runs first
        self._poll_carry_left = 0.0  # carried work an interrupt found unfinished, ns
        self._poll_call: Call | None = None
        self._poll_more: tuple = ()  # more queues polled with _poll_qp (a moved io_uring IOPOLL ring)
        #: the current spin's iteration, cycles (0: a plain ring spin, ``spin_iteration_cycles``)
        self._spin_loop_cycles = 0.0
        #: the budget of the current poll loop (:meth:`poll_for`; None: it polls until done)
        self._poll_budget: PollBudget | None = None

    def _set_loop_ns(self) -> None:
        """Poll and spin loop iteration times at the current frequency and SMT contention."""
        self._iter_ns = self._poll_iter_cycles / self.freq * self._smt_fac
        self._spin_ns = self._spin_iter_cycles / self.freq * self._smt_fac

    def layer_ns(self) -> list[float]:
        """Cumulative CPU time per stack layer (``models.os.costs.tables.LAYERS`` order) up to now, ns:
        each bundle at the frequency it ran at, polling as measured."""
        out = list(self.layer_ns_done)
        self._add_epoch_layer_ns(out)
        out[POLLING_LAYER] += self.poll_ns
        for j, ns in enumerate(self.lock_ns):
            out[j] += ns
        return out

    def poll(self, qp: QueueView | None, req: Any, then, more: tuple = ()) -> None:
        """The current task busy-polls ``qp`` (blk_poll) until ``req`` is complete, then ``then()``;
        each iteration also polls the queues ``more`` (io_iopoll_check: a ring's requests on
        several CPUs' queues, after its thread moved). Work carried from a context switch runs
        first: polling starts after it."""
        if req.done:
            then()
            return
        now = self.engine.now
        start = now
        if self._carry_ns:
            start += self._absorb_carry(self.current)
        if self._pstate_stall_end > start:  # the core's clock is stopped (a P-state change)
            start = self._pstate_stall_end
        self.mode = POLL
        self._poll_qp = qp
        if qp is not None and qp.cpu != self.id:
            qp.remote_pollers.append(self)  # blk_poll of another CPU's queue (the task moved)
        self._poll_more = more
        for q in more:
            if q.cpu != self.id:
                q.remote_pollers.append(self)
        self._poll_req = req
        self._poll_then = then
        self._poll_start = start
        self.cpu.set_busy(now, self._act_poll)
        self._poll_check()

    def poll_for(
        self,
        qp: QueueView | None,
        req: Any,
        budget_ns: float,
        then: Callable[[], None],
        expired: Callable[[Any], None],
    ) -> None:
        """:meth:`poll` with a time budget: the current task polls ``qp`` for ``req`` as :meth:`poll`
        does, for at most ``budget_ns`` from the loop's start (after carried work). The budget is
        counted in whole iterations of the loop at the CPU's frequency then (the smallest number
        of ``poll_iteration_cycles`` iterations that reaches it, at least one), checked between
        iterations, as net's busy polling checks its time budget (include/net/busy_poll.h
        ``busy_loop_timeout``, read by net/core/dev.c ``napi_busy_loop``). ``req`` done within it:
        ``then()``, as :meth:`poll`. Not done when the budget's last iteration ends: the loop stops
        (its time charged to the ``polling`` layer) and ``expired(runner)`` runs with the task
        running on ``runner`` (the CPU it polls from: a preempted task may have moved), for the
        caller's fallback (sleep until the interrupt, ...). An interrupt handler or a preemption
        during the loop counts against the budget (wall time, as ``local_clock`` is); a task
        preempted past its budget falls back when it is switched back in.

        On an interrupt-driven queue (a policy with ``polled = False``) the loop learns of the
        completion from the vector's handler, which reaps the entry and marks ``req`` done (the
        task is running, so nothing is woken): on this CPU, or on the queue's when the task was
        moved while preempted (the driver's :meth:`spin_notify`); the loop notices at the end of
        its iteration."""
        if req.done:
            then()
            return
        PollBudget(self, qp, req, budget_ns, then, expired).start(self, ())

    def poll_stop(self) -> None:
        """End the current task's poll loop now, its time charged; the task runs on (no switch)
        and what it does next is the caller's. Only between iterations (no reap pending)."""
        self._end_loop()

    def _end_loop(self) -> tuple:
        """Leave the poll loop (its time charged up to now): (qp, req, then, more) it had."""
        self._charge_poll(self.engine.now)
        qp, req, then, more = self._poll_qp, self._poll_req, self._poll_then, self._poll_more
        self._poll_qp = self._poll_req = self._poll_then = None
        self._poll_more = ()
        self._poll_budget = None
        self.mode = NONE
        if qp is not None and qp.cpu != self.id:
            qp.remote_pollers.remove(self)
        for q in more:
            if q.cpu != self.id:
                q.remote_pollers.remove(self)
        return qp, req, then, more

    def spin(self, waiter, then, loop_cycles: float = 0.0) -> None:
        """The current task spins (e.g. on a user-space ring) until ``waiter.done``; whoever makes
        it done calls :meth:`spin_notify`. ``loop_cycles``: one iteration of its loop, when it is
        not a plain ring spin (``spin_iteration_cycles``): a user-space driver checking several
        completion queues per pass."""
        self._spin_loop_cycles = loop_cycles
        self.poll(None, waiter, then)

    def _spin_iter_ns(self) -> float:
        """One iteration of the current spin at the current frequency and SMT contention, ns."""
        c = self._spin_loop_cycles
        return self._spin_ns if not c else c / self.freq * self._smt_fac

    def spin_notify(self, waiter, at: float | None = None) -> None:
        """``waiter`` became done (at time ``at``, default now; e.g. the clock of the CPU that
        completed it): a spinning or polling task notices at the end of its loop iteration."""
        if self.mode == POLL and self._poll_req is waiter and self._poll_call is None:
            it = self._spin_iter_ns() if self._poll_qp is None else self._iter_ns
            now = self.engine.now
            t = now if at is None or at < now else at
            elapsed = t - self._poll_start
            delay = (t - now) + (it - elapsed % it if elapsed >= 0 else it - elapsed)
            self._poll_call = self.engine.call_in(delay, self._poll_hit_cb)

    def _poll_check(self) -> None:
        if self.need_resched and self.rq:
            self._poll_interrupt_for_resched()
        elif self._poll_qp is None:
            if self._poll_req.done and self._poll_call is None:
                self._poll_call = self.engine.call_in(
                    max(0.0, self._poll_start - self.engine.now) + self._spin_iter_ns(), self._poll_hit_cb
                )
        elif (
            self._poll_qp.hw.cq
            or (self._poll_more and any(q.hw.cq for q in self._poll_more))
            or (not self._poll_qp.hw.polled and self._poll_req.done)
        ) and self._poll_call is None:
            # an entry to reap, or (an interrupt-driven queue: poll_for) the vector's handler
            # completed the request meanwhile
            self._poll_call = self.engine.call_in(self._poll_start - self.engine.now + self._iter_ns, self._poll_hit_cb)

    def cqe_posted(self, qp: QueueView) -> None:
        """A completion entry appeared on polled queue ``qp`` (mapped to this CPU, or polled by
        this CPU's task from here)."""
        if self.mode == POLL and (self._poll_qp is qp or qp in self._poll_more) and self._poll_call is None:
            it = self._iter_ns
            elapsed = self.engine.now - self._poll_start
            delay = it - elapsed % it if elapsed >= 0 else it - elapsed
            self._poll_call = self.engine.call_in(delay, self._poll_hit_cb)

    def _charge_poll(self, now: float) -> None:
        if self.engine.tracer is not None and now > self._poll_start:
            self.engine.tracer.span(
                1,
                self.id,
                "poll" if self._poll_qp is not None else "spin",
                self._poll_start,
                now - self._poll_start,
                "polling",
            )
        ns = max(0.0, now - self._poll_start)
        cyc = ns * self.freq
        self.poll_ns += ns
        self.poll_cycles += cyc
        if self.current is not None:
            if self._poll_qp is None and not self.current.kthread:  # a user-space spin (a ring, fio's flow)
                self.current.usr_ns += ns
            else:
                self.current.sys_ns += ns
        self._poll_start = now

    def _poll_resched_after_carry(self) -> None:
        """The carried work ended with need_resched set: the loop's first check switches out (or
        polls on, if the waker's task has run elsewhere meanwhile)."""
        self._poll_call = None
        if self.need_resched and self.rq:
            self._poll_interrupt_for_resched()
        else:
            self._poll_check()

    def _poll_hit(self) -> None:
        self._poll_call = None
        now = self.engine.now
        self._charge_poll(now)
        qp, req, then, more = self._poll_qp, self._poll_req, self._poll_then, self._poll_more
        self._poll_qp = self._poll_req = self._poll_then = None
        self.mode = NONE
        if qp is not None and qp.cpu != self.id:
            qp.remote_pollers.remove(self)
        # reaping (carried) runs before what follows: the task's completion path or more polling
        driver = self.driver
        assert driver is not None
        if qp is not None:
            driver.reap(self, qp)
        if more:
            self._poll_more = ()
            for q in more:
                if q.cpu != self.id:
                    q.remote_pollers.remove(self)
                if q.hw.cq:
                    driver.reap(self, q)
        if req.done:
            then()
        else:
            self.poll(qp, req, then, more)

    def _poll_interrupt_for_resched(self) -> None:
        """need_resched ends the poll loop, and the poller is preempted: it stays runnable and
        polls again when it is switched back in (or finds its request completed by whoever
        reaped the queue meanwhile). In 5.x every poll loop behaves so: blk_poll returns 0 on
        need_resched with the task set back to TASK_RUNNING, so the dio wait loop's
        blk_io_schedule() only yields; io_iopoll_check stops and fio enters again; the io_uring SQ
        thread calls cond_resched; user-space ring spins are preempted. The loop checks
        need_resched between iterations: work carried into the poll (the submission path that
        led to it) runs to its end first, and the switch happens then."""
        if self._poll_call is not None:
            self._poll_call.cancel()
            self._poll_call = None
        now = self.engine.now
        if self._poll_start > now:
            self._poll_call = self.engine.call_in(self._poll_start - now, self._poll_resched_cb)
            return
        budget = self._poll_budget
        qp, req, then, more = self._end_loop()
        task = self.current
        assert task is not None
        runners = self.runners
        loop_cycles = self._spin_loop_cycles

        def resume():
            if req.done:
                then()
            elif budget is not None:  # a loop with a budget goes on with what is left of it
                budget.resumed(cast(Polling, runners[task.cpu]), more)
            elif qp is None:  # a spin goes on with its own loop
                cast(Polling, runners[task.cpu]).spin(req, then, loop_cycles)
            else:  # on the CPU it is switched back in on (the balancer may have moved it)
                cast(Polling, runners[task.cpu]).poll(qp, req, then, more)

        self._switch_out(task, voluntary=False, resume=resume)


class PollBudget:
    """One poll loop with a time budget (:meth:`Polling.poll_for`): the expiry event at the end of
    the budget's last iteration, and where the loop is (``runner``: the CPU polling now)."""

    __slots__ = ("runner", "task", "qp", "req", "budget_ns", "then", "expired", "call", "due", "over")

    def __init__(
        self,
        runner: Polling,
        qp: QueueView | None,
        req: Any,
        budget_ns: float,
        then: Callable[[], None],
        expired: Callable[[Any], None],
    ) -> None:
        task = runner.current
        assert task is not None
        self.runner = runner
        self.task: Task = task
        self.qp = qp
        self.req = req
        self.budget_ns = budget_ns
        self.then = then
        self.expired = expired
        self.call: Call | None = None  # the expiry check
        self.due = False  # the budget ran out while the task was preempted
        self.over = False  # the loop ended: the request done, or the budget spent

    def start(self, r: Polling, more: tuple) -> None:
        """The loop starts on ``r`` (or goes on after a preemption); the first start arms the
        expiry: the end of the budget's last whole iteration at this CPU's iteration time."""
        self.runner = r
        r._poll_budget = self
        r.poll(self.qp, self.req, self.done, more)
        if self.call is None and not self.over and r.mode == POLL and r._poll_req is self.req:
            it = r._iter_ns
            n = max(1, math.ceil(self.budget_ns / it))
            self.call = r.engine.call_at(r._poll_start + n * it, self.check)

    def done(self) -> None:
        """``req`` completed while the loop ran: stop the expiry, the caller's ``then()``."""
        self.over = True
        r = self.runner
        if r._poll_budget is self:
            r._poll_budget = None
        call = self.call
        if call is not None:
            call.cancel()
            self.call = None
        self.then()

    def check(self) -> None:
        """The budget's last iteration ends: stop the loop and fall back (``expired``), or go on
        (``then``) if the request was completed meanwhile where the loop does not see it."""
        self.call = None
        if self.over:
            return
        r = self.runner
        if r._poll_req is not self.req or r.current is not self.task:
            self.due = True  # preempted: it falls back when it is switched back in (resumed)
            return
        now = r.engine.now
        if r.mode != POLL or r._poll_call is not None or r._poll_start > now:
            # an interrupt handler runs on the loop, an iteration found an entry and reaps it, or
            # carried work runs before the loop goes on: check again after the next iteration
            self.call = r.engine.call_in(max(r._poll_start - now, 0.0) + r._iter_ns, self.check)
            return
        r.poll_stop()
        if self.req.done:  # completed where the loop does not look (an interrupt on another CPU)
            self.done()
            return
        self.over = True
        self.expired(r)

    def resumed(self, r: Polling, more: tuple) -> None:
        """Switched back in on ``r`` after a preemption ended the loop, the request not done: fall
        back if the budget ran out meanwhile, else poll on for the rest of it."""
        if self.due:
            self.over = True
            self.runner = r
            self.expired(r)
        else:
            self.start(r, more)
