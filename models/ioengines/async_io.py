"""fio's asynchronous engines: ``libaio`` (io_submit / io_getevents) and ``io_uring``
(io_uring_enter; ``hipri`` = IORING_SETUP_IOPOLL; ``sqthread_poll`` = IORING_SETUP_SQPOLL).

One fio thread keeps up to ``iodepth`` IOs in flight. Its loop, as fio's:
1. prepare IOs (fio user work each) until ``iodepth_batch_submit`` are queued or the depth is
   full, then submit them with one system call (libaio: io_submit; io_uring: io_uring_enter) --
   with SQPOLL no system call: the SQ thread picks them up. Inside the call each IO pays the
   engine's per-IO cost + fs + blk-mq + NVMe submit; the batch is plugged, so the doorbell rings
   once when the call ends (blk_finish_plug).
2. reap: wait until ``iodepth_batch_complete_min`` completions are available (at least one when
   the queue is full), then reap up to ``iodepth_batch_complete_max`` (at least all available up to
   the depth). Interrupt completions are posted to the ring by the IRQ handler, which wakes the
   waiter once enough are there; with IOPOLL the waiting thread polls the device queue itself in
   io_uring_enter(GETEVENTS); with SQPOLL + IOPOLL the SQ thread polls and the application spins
   on the CQ ring in user space.
fio latency: ``slat`` = prepare to submitted, ``clat`` = submitted to reaped, ``lat`` = both.
``rate``/``rate_iops`` pace issue times per direction (:mod:`.rate`, linear or poisson); the
thread reaps what is in flight, then sleeps on an hrtimer (with the 50 us timer slack of ordinary
tasks) when it is ahead. ``thinktime`` follows fio's handle_thinktime (thinktime_blocks=1):
after a submission that follows a completion, the thread waits for every queued IO (io_u_quiesce),
then sleeps ``thinktime`` the same way.
"""

from __future__ import annotations

from typing import Any

from mypy_extensions import mypyc_attr

from models.ioengines import IOPOLL_ENGINES
from models.ioengines.annotations import HINT_FLAGS
from models.ioengines.latency_target import LatencyTarget
from models.ioengines.sync_io import SyncThread
from models.os.cost import Cost
from models.os.request import REQ_BARRIER, Request
from simcore.errors import ConfigError


class Waiter:
    """What a thread waiting for completions polls or sleeps on (``done`` when enough)."""

    __slots__ = ("done", "waiter_sleeping", "need")

    def __init__(self):
        self.done = False
        self.waiter_sleeping = False
        self.need = 0


@mypyc_attr(allow_interpreted_subclasses=True)  # engines outside the compiled modules may extend it
class AsyncThread(SyncThread):
    """One fio thread of a libaio or io_uring job."""

    def can_migrate(self) -> bool:
        """An interrupt-driven libaio / io_uring thread may move with IOs in flight: they complete
        on the hardware queue they were submitted to, their interrupt posts them to the ring
        (aio_complete, io_cqring_fill_event) and wakes the thread wherever it runs; its next IOs go
        to its new CPU's queue. An IOPOLL thread may move with IOs in flight too: its reaping polls
        every queue that holds its requests (io_iopoll_check polls each request's queue), its new
        CPU's and the old ones (:meth:`_reap`). With SQPOLL the SQ thread polls: the application
        thread then moves only with nothing in flight."""
        return not self.iopoll or self.sq_thread is None or (self.inflight == 0 and not self.ring)

    def __init__(self, host, job, job_idx: int, clone: int, cpu: int, end_ns: float, stream) -> None:
        super().__init__(host, job, job_idx, clone, cpu, end_ns, stream)
        self.engine_name = job.ioengine
        self.depth = job.iodepth
        self.lat: LatencyTarget | None = None  # fio's latency_target depth search, from the first IO
        self.batch = max(1, min(job.iodepth_batch_submit, self.depth))
        self.cmin = job.iodepth_batch_complete_min
        self.cmax = max(job.iodepth_batch_complete_max, 1)
        #: io_uring_cmd: NVMe passthrough on the character device (no file system, no IO scheduler)
        self.passthru = job.ioengine == "io_uring_cmd"
        self.iopoll = job.ioengine in IOPOLL_ENGINES and job.hipri
        self.sqpoll = job.ioengine in ("io_uring", "io_uring_cmd") and job.sqthread_poll
        if self.iopoll and not host.queue.io_poll:
            raise ConfigError(f"job '{job.name}': io_uring hipri (IOPOLL) needs polled queues: set queue.io_poll=1")
        pol = host.policy_name(self.iopoll, reaps_itself=True)  # HIPRI only on an IOPOLL ring
        self.policy = {op: host.policy(pol) for op in ("read", "write")}
        if "trim" in job.rw:
            self.policy["trim"] = host.policy(host.policy_name(False))
        # fio's libaio and io_uring engines issue a trim synchronously (do_io_u_trim: the BLKDISCARD
        # ioctl, which sleeps until the interrupt); passthrough (a DSM command) and null queue it
        self._sync_trims = not self.passthru and job.ioengine != "null"
        self._trim_req: Any = None
        self._quiesce_for_ns = 0.0  # fio's flow_sleep after a quiesce (0: a thinktime's)
        self.inflight = 0
        self.ring: list[Request] = []  # completed, not yet reaped by fio
        self.wait = Waiter()
        self.stopping = False
        self.think_ns = float(job.thinktime_ns)
        self.reaped_since_think = 0  # fio's thinktime_blocks counter (completed IOs)
        self.quiescing = False
        self.sq_thread: Any = host.new_sq_thread(job.sqthread_poll_cpu) if self.sqpoll else None
        if self.sq_thread is not None:
            self.sq_thread.register(self)
        self._acosts: dict = {}
        #: IOPOLL without SQPOLL (the thread reaps by polling): its requests in flight on each
        #: polled queue (it may have moved since they were submitted)
        self._polls_itself = self.iopoll and self.sq_thread is None
        self._polled: dict = {}
        #: IOPOLL waits that also polled queues of CPUs the thread had left
        self.remote_queue_waits = 0
        #: entering and leaving io_getevents / io_uring_enter(GETEVENTS) (per wait: built once)
        self._enter_cost: Cost = host.costs.get("getevents_enter", syscall=self.k.syscall_entry_cycles)
        self._exit_cost: Cost = host.costs.get("getevents_exit", syscall=self.k.syscall_exit_cycles)
        #: the job's stacksim_irq_hint flags, or -1 for the kernel's rule (see _flag_batch)
        self._hint_flags: int = -1 if job.stacksim_irq_hint == "default" else HINT_FLAGS[job.stacksim_irq_hint]

    def _flag_batch(self, reqs: list[Request]) -> None:
        """The calibrated-interrupt flags of one io_submit / io_uring_enter batch
        (:mod:`~models.ioengines.annotations`: Barrier on the last request, unless the job's
        hint says otherwise)."""
        hint = self._hint_flags
        if hint >= 0:
            for req in reqs:
                req.flags = hint
            return
        for req in reqs:
            req.flags = 0
        if reqs:
            reqs[-1].flags = REQ_BARRIER

    # -- costs -------------------------------------------------------------------------------
    def _per_io_parts(self, op: str, nbytes: int) -> dict:
        """The work of one IO (bio) in the submitting call: fio's, the engine's, the filesystem's."""
        k = self.k
        pages = max(1, -(-nbytes // 4096))
        uring = self.engine_name in ("io_uring", "io_uring_cmd")
        eng_cycles = k.io_uring_issue_cycles if uring else k.aio_issue_cycles
        if uring and not self.job.registerfiles:
            eng_cycles += k.fget_cycles
        if self.passthru:  # no file system: the NVMe driver's uring_cmd path builds the request
            return dict(user=k.user_io_cycles, syscall=eng_cycles, driver=k.uring_cmd_cycles)
        fs = (
            k.fs_submit_cycles
            + self._fs_file_cycles
            + (0.0 if (uring and self.job.fixedbufs) else k.fs_per_page_cycles * pages)
        )
        return dict(user=k.user_io_cycles, syscall=eng_cycles, fs=fs)

    def sqe_issue_parts(self, op: str, nbytes: int) -> dict:
        """The kernel's work to issue one SQE of this ring (io_uring issue, the file system or the
        passthrough command), cycles by layer: what an SQPOLL thread (:mod:`models.os.sqpoll`) runs
        for it; fio's user-space share stays with the application."""
        return {layer: cyc for layer, cyc in self._per_io_parts(op, nbytes).items() if layer != "user"}

    def _submit_cost(self, ios, nreq: int, with_syscall: bool) -> Cost:
        """The submitting call for ``ios`` that became ``nreq`` requests in the plug."""
        key = (tuple((r.op, r.nbytes) for r in ios), nreq, with_syscall)
        cost = self._acosts.get(key)
        if cost is None:
            total: dict[str, float] = {}
            for r in ios:
                for layer, cyc in self._per_io_parts(r.op, r.nbytes).items():
                    total[layer] = total.get(layer, 0.0) + cyc
            for layer, cyc in self.per_request_parts(len(ios)).items():
                total[layer] = total.get(layer, 0.0) + nreq * cyc
            if with_syscall:
                total["syscall"] = total.get("syscall", 0.0) + self.k.syscall_entry_cycles + self.k.syscall_exit_cycles
            cost = self._acosts[key] = self.host.costs.get(f"{self.engine_name}_submit", **total)
        return cost

    def _reap_cost(self, n: int, syscall: bool) -> Cost:
        key = ("reap", n, syscall)
        cost = self._acosts.get(key)
        if cost is None:
            k = self.k
            parts = dict(user=n * k.user_complete_cycles, fs=n * k.fs_complete_cycles, syscall=n * k.aio_reap_cycles)
            if self.passthru:  # nvme_uring_cmd_end_io -> io_uring_cmd_done in task work, no bio end
                parts = dict(
                    user=n * k.user_complete_cycles, driver=n * k.uring_cmd_done_cycles, syscall=n * k.aio_reap_cycles
                )
            if syscall:
                parts["syscall"] += k.syscall_entry_cycles + k.syscall_exit_cycles
            cost = self._acosts[key] = self.host.costs.get(f"{self.engine_name}_getevents", **parts)
        return cost

    # -- program -----------------------------------------------------------------------------
    def _issue_first(self) -> None:
        job = self.job
        if job.latency_target_ns:
            self.lat = LatencyTarget(
                job.latency_target_ns,
                job.latency_window_ns,
                job.latency_percentile,
                job.latency_run,
                job.iodepth,
                self.host.engine.now,
            )
            self.depth = self.lat.qd
        self.min_rate.start_ns = self.host.engine.now
        if self.pacer.active:
            self.pacer.start(self.host.engine.now)
        if self._flow is not None:
            self._flow.join()
        self._fill()

    def _rate_due(self, now: float) -> float:
        """With a rate: the direction of the next IO (drawn once, kept as pending) and when it is
        due (fio's rate_ddir); ``<= now`` without a rate."""
        if not self.pacer.active:
            return now
        op, due = self.pacer.choose(self._pending_op or self._draw_op(), now)
        self._pending_op = op
        return due

    def _done_issuing(self, now: float) -> bool:
        return self._finished(now)

    def _fill(self) -> None:
        """Prepare and submit IOs while the depth allows, then go reap."""
        runner = self.runner
        if self.quiescing:
            self._think()
            return
        now = runner.clock()
        if self._done_issuing(now):
            self.stopping = True
        room = self.depth - self.inflight - len(self.ring)
        if self.stopping or room <= 0:
            self._reap()
            return
        due = self._rate_due(now)
        if due > now:
            if self.inflight:
                self._reap()
            else:
                self._sleep_until(due)
            return
        n = min(room, self.batch)
        if self.max_ios:
            n = min(n, self.max_ios - self.issued_ios)  # number_ios: no IO beyond it
        first = None
        if self.pacer.active:
            n = 1  # one IO per due time; a late thread catches up (the schedule is cumulative)
            first, self._pending_op = self._pending_op, None
        ios = self._prepare(n, first, now)
        n = len(ios)
        if not n:
            if self._trim_req is not None:
                self._sync_trim()
            else:
                self._flow_held_async(first)
            return
        self._flag_batch(ios)
        self.inflight += n
        self._commit(ios)

    def _commit(self, ios: list) -> None:
        """Submit the prepared IOs: one io_submit / io_uring_enter, or SQEs for the SQ thread."""
        runner = self.runner
        if self.sq_thread is not None:
            # SQPOLL: write the SQEs (user work only); the SQ thread submits them
            n = len(ios)
            cost = self.host.costs.get("uring_sqe_write", user=n * (self.k.user_io_cycles + self.k.sqe_write_cycles))
            runner.run(cost, lambda: self._handoff(ios))
        else:
            # split and merged inside the call (passthrough commands are neither); requests pay blk-mq + NVMe work
            reqs = ios if self.passthru else self.host.blk.plug(ios)
            runner.run(self._submit_cost(ios, len(reqs), with_syscall=True), lambda: self._submitted(ios, reqs))

    def _prepare(self, n: int, first: str | None, now: float) -> list:
        """Up to ``n`` IOs of one submission (fio's io_u preparation, ``user_io_cycles`` each);
        a trim with a synchronous engine ends the batch and waits in ``_trim_req``."""
        ios = []
        runner = self.runner
        t = now
        depth = self.inflight + len(self.ring) + n  # fio's cur_depth at the commit
        flow = self._flow
        for _ in range(n):
            if flow is not None and not flow.take():
                break  # fio's flow holds this IO back
            op, bs, off = self._next_io(first)
            self.pacer.issued(op, bs)
            first = None
            self.issued_bytes += bs
            self.issued_ios += 1
            req = Request(self._ledger.new_id(), self.task, self.job_idx, op, bs, off, runner.id, self.iopoll)
            if op == "trim" and self._sync_trims:
                req.hipri = False
                req.qp = self._driver.queue_for(self.dev, runner.id, False)
                req.flags = self.req_flags
                self._trim_req = req  # after the IOs queued before it are submitted
                break
            qp = req.qp = self._driver.queue_for(self.dev, runner.id, self.iopoll)
            if self._polls_itself:
                self._polled[qp] = self._polled.get(qp, 0) + 1
            req.done_cb = self._on_done
            if self._cmdprio is not None and op != "trim":
                req.ioprio = self._cmdprio(op, bs)
            t += self.k.user_io_cycles / runner.freq
            req.t_submit = t
            req.depth = depth
            ios.append(req)
            if self._region_end:
                break  # a sequential job with holes reached the end of its region
        return ios

    def _submitted(self, ios, reqs) -> None:
        t = self.runner.clock()
        for req in ios:  # fio's issue_time: io_submit / io_uring_enter returned
            req.t_issued = t
        # dispatched as the call returns (blk_finish_plug), or queued for the CPU's kblockd worker,
        # which then preempts at the return to user space
        self.host.blk.issue_batch(reqs, plugged=True, runner=self.runner, nsubmit=len(ios), passthru=self.passthru)
        self.runner.preemption_point(self._after_submit)

    def _handoff(self, ios) -> None:
        t = self.runner.clock()
        for req in ios:  # SQPOLL: fio's commit returns once the SQ tail is written
            req.t_issued = t
        self.sq_thread.enqueue(ios, self)
        self._after_submit()

    # -- trims (fio's do_io_u_trim from the job thread) ---------------------------------------
    def _sync_trim(self) -> None:
        """The BLKDISCARD ioctl of the pending trim: the thread sleeps until its interrupt; the
        ring's completions meanwhile wait for the next reap."""
        req = self._trim_req
        runner = self.runner
        req.t_submit = runner.clock() + self.k.user_io_cycles / runner.freq
        w = self.wait
        w.done, w.waiter_sleeping = True, False
        runner.run(self._trim_cost(req.nbytes, False), self._trim_doorbell)

    def _trim_doorbell(self) -> None:
        req = self._trim_req
        self.host.blk.issue(req, self.runner)
        self.policy["trim"].wait(self.runner, self.task, req, self._trim_done)

    def _trim_done(self) -> None:
        req, self._trim_req = self._trim_req, None
        runner = self.runner
        k = self.k
        cost = self.host.costs.get("trim_return", fs=k.fs_complete_cycles, syscall=k.syscall_exit_cycles)
        t = runner.clock() + cost.cycles / runner.freq
        req.t_issued = t
        self._io_completed(req, t)
        runner.run(cost, self._after_submit)

    def _flow_held_async(self, op: str | None) -> None:
        """fio's flow holds the next IO back: spin in fio's loop without reaping until the flow
        lets it go, or (``flow_sleep``) reap everything in flight, sleep, and check again."""
        if op is not None:
            self._pending_op = op
        flow = self._flow
        runner = self.runner
        if self._flow_sleep_ns:
            self.quiescing = True
            self._quiesce_for_ns = self._flow_sleep_ns
            self._think()
            return
        w = self.wait
        w.done, w.waiter_sleeping = True, False
        flow.hold(lambda: self.runner.spin_notify(flow))  # (its CPU now: it may have moved)
        runner.spin(flow, self._fill)

    def _after_submit(self) -> None:
        if self._trim_req is not None:
            self._sync_trim()
            return
        if self.think_ns and self.reaped_since_think and not self.stopping:
            self.quiescing = True
            self._think()
            return
        # fio keeps queueing while the depth allows and the batch was full
        queued = self.inflight + len(self.ring)  # fio's cur_depth: reaped or not, still in the queue
        now = self.runner.clock()
        if queued < self.depth and not self.stopping and not self._rate_due(now) > now:
            self._fill()
        else:
            self._reap()

    def _think(self) -> None:
        """fio's handle_thinktime: reap every queued IO first (io_u_quiesce), then nanosleep."""
        if self.inflight or self.ring:
            self._reap()  # _need() asks for everything while quiescing; the reap comes back to _fill
            return
        self.quiescing = False
        if self.stopping:
            self._reap()
            return
        if self._quiesce_for_ns:  # fio's flow_sleep: quiesced, now the sleep
            wait, self._quiesce_for_ns = self._quiesce_for_ns, 0.0
            self._sleep_until(self.runner.clock() + wait)
            return
        self.reaped_since_think = 0
        self._sleep_until(self.runner.clock() + self.think_ns)

    def _need(self) -> int:
        """Completions to wait for: iodepth_batch_complete_min, at least one when the queue is
        full (or when draining at the end), never more than are queued; everything queued while
        quiescing for a thinktime."""
        queued = self.inflight + len(self.ring)
        if queued == 0:
            return 0
        if self.quiescing:
            return queued
        need = self.cmin
        if self.stopping or queued >= self.depth:
            need = max(need, 1)
        return min(need, queued)

    def _reap(self) -> None:
        runner = self.runner
        if self.stopping and self.inflight == 0 and not self.ring:
            if self._flow is not None:
                self._flow.leave()
            runner.exit_task()
            if self.sq_thread is not None:
                self.sq_thread.client_exited()
            return
        need = self._need()
        w = self.wait
        if len(self.ring) >= need and (self.ring or need == 0):
            if not self.ring:
                self._fill()
                return
            self._take(syscall=self.sq_thread is None)
            return
        w.need = need
        w.done = False
        if self.sq_thread is not None:
            # SQPOLL: spin on the CQ ring in user space until enough completions are posted
            runner.spin(w, self._reap_ready)
        elif self.iopoll:
            # io_uring_enter(GETEVENTS) polls the device queue (blk_poll) until enough are done;
            # io_iopoll_check polls each in-flight request's queue: a thread that moved also polls
            # its old CPUs' queues holding its requests
            qp = self.host.driver.queue_for(self.dev, runner.id, True)
            more = tuple(q for q, n in self._polled.items() if n and q is not qp) if len(self._polled) > 1 else ()
            if more:
                self.remote_queue_waits += 1
            runner.run(self._enter_cost, lambda: runner.poll(qp, w, self._reap_ready, more))
        else:
            runner.run(self._enter_cost, self._block)

    def _block(self) -> None:
        """Inside io_getevents / io_uring_enter: sleep unless enough completed meanwhile."""
        w = self.wait
        if w.done:
            self._reap_ready()
            return
        w.waiter_sleeping = True
        self.runner.sleep(self._reap_ready, iowait=False)

    def _reap_ready(self) -> None:
        self._take(syscall=False if self.sq_thread is not None else True, entered=self.sq_thread is None)

    def _take(self, syscall: bool, entered: bool = False) -> None:
        """Reap up to complete_max events from the ring (fio's io_u completion)."""
        runner = self.runner
        take = max(self.cmax, self._need())
        got = self.ring[:take]
        del self.ring[: len(got)]
        if entered:
            # the wait already paid the syscall entry; the exit and per-event work remain
            cost = self._reap_cost(len(got), syscall=False)
            runner.add_carry(self._exit_cost)
        else:
            cost = self._reap_cost(len(got), syscall=syscall)
        t0 = runner.clock()
        for r in got:
            # an event posted by another CPU's handler, whose time runs ahead of this CPU's clock
            # (its work is carried), is seen once it is in the ring
            if r.t_reaped > t0:
                t0 = r.t_reaped
        t = t0 + cost.cycles / runner.freq
        done = self._ledger.done
        self.reaped_since_think += len(got)
        lat = self.lat
        for req in got:
            req.t_complete = t
            done(req)
            if self._min_rate_on:
                self._check_min_rate(req, t)
            if lat is not None:
                lat.completed(t - req.t_submit)
            if self.steady:
                self._count_done(req)
        if lat is not None:
            self.depth = lat.check(t)
            if lat.done:
                self.stopping = True  # fio ends the job once the search has settled
        runner.run(cost, self._fill)

    def _on_done(self, runner, req) -> None:
        """Completion posted to the ring (aio_complete / io_cqring_fill_event) on ``runner``."""
        self.inflight -= 1
        self.ring.append(req)
        if self._polls_itself:
            qp = req.qp
            n = self._polled[qp] - 1
            if n:
                self._polled[qp] = n
            else:
                del self._polled[qp]
        w = self.wait
        if not w.done and len(self.ring) >= w.need:
            w.done = True
            if w.waiter_sleeping:
                w.waiter_sleeping = False
                runner.wake(self.task)
            else:
                # a thread spinning on its CQ ring (SQPOLL), or polling its own queue (IOPOLL) for a
                # request completed elsewhere (merged into another CPU's request), notices at the end
                # of its loop iteration (io_iopoll_check also checks its completed list)
                self.runner.spin_notify(w, at=runner.clock())

    def _sleep_until(self, t: float) -> None:
        runner = self.runner
        delay = max(0.0, t - runner.clock()) + self.k.timer_slack_ns

        def fire(r, task=self.task):
            r.wake(task)

        def sleep() -> None:
            runner.start_timer(delay, fire)
            runner.sleep(self._fill, iowait=False)

        runner.run(
            self.host.costs.get(
                "nanosleep",
                syscall=self.k.syscall_entry_cycles + self.k.syscall_exit_cycles,
                actions={"hrtimer_program": 1},
            ),
            sleep,
        )
