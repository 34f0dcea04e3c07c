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
from models.ioengines.call_costs import CallCosts
from models.ioengines.host import EngineHost
from models.ioengines.job import FioJob
from models.ioengines.kernel_context import URING_ENGINES, open_context
from models.ioengines.latency_target import LatencyTarget
from models.ioengines.sync_io import ZONE_OPS, SyncThread
from models.os.block.annotations import HINT_FLAGS, flag_batch
from models.os.block.blk_mq import NO_SAVINGS
from models.os.block.request import Request
from models.os.costs.bundle import Cost
from models.os.io_uring.ring import IoRing
from simcore.errors import ConfigError
from simcore.grid import CountGrid

#: no IOs: what a thread's pending submission holds between two calls (never mutated)
NO_IOS: list = []


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

    def __init__(
        self, host: EngineHost, job: FioJob, job_idx: int, clone: int, cpu: int, end_ns: float, stream
    ) -> None:
        super().__init__(host, job, job_idx, clone, cpu, end_ns, stream)
        self.engine_name: str = job.ioengine
        self.depth: int = job.iodepth
        self.lat: LatencyTarget | None = None  # fio's latency_target depth search, from the first IO
        #: rate / rate_iops pace the issues (the pacer's rates are fixed from the start)
        self._paced: bool = self.pacer.active
        self.batch: int = max(1, min(job.iodepth_batch_submit, self.depth))
        self.cmin: int = job.iodepth_batch_complete_min
        self.cmax: int = max(job.iodepth_batch_complete_max, 1)
        #: fio's iodepth_low: a full queue is reaped, one getevents call after another, until at
        #: most this many remain queued (wait_for_completions' loop); ``_low_drain`` while it runs
        self.low: int = job.iodepth_low if 0 < job.iodepth_low < self.depth else self.depth  # init.c's fixup
        self._low_drain = False
        #: io_uring_cmd: NVMe passthrough on the character device (no file system, no IO scheduler)
        self.passthru: bool = job.ioengine == "io_uring_cmd"
        #: io_uring_cmd on a namespace with metadata: its commands' metadata and PRINFO, fio's tuple
        #: work (a models.ioengines.pi.PiPlan; None: no metadata)
        self._pi: Any = None
        self.iopoll = bool(job.ioengine in IOPOLL_ENGINES and job.hipri)
        self.sqpoll = bool(job.ioengine in ("io_uring", "io_uring_cmd") and job.sqthread_poll)
        self._setup_kernel(job)
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
        self._bind_async_loop()
        #: IOPOLL without SQPOLL (the thread reaps by polling): its requests in flight on each
        #: polled queue (it may have moved since they were submitted)
        self._polls_itself = self.iopoll and self.sq_thread is None
        self._polled: dict = {}
        #: IOPOLL waits that also polled queues of CPUs the thread had left
        self.remote_queue_waits = 0
        self._setup_costs(host)
        #: the job's stacksim_irq_hint flags, or -1 for the kernel's rule (models.os.block.annotations.flag_batch)
        self._hint_flags: int = -1 if job.stacksim_irq_hint == "default" else HINT_FLAGS[job.stacksim_irq_hint]

    def _setup_costs(self, host: EngineHost) -> None:
        """The bundles of the thread's calls (models.ioengines.call_costs), with the memos in front
        of them (_reap_cost's without PI checks by n, flushes, syscall; the engines' own, _acosts),
        and those of its waits, built once."""
        self._calls = CallCosts(
            host,
            self.engine_name,
            self.kctx,
            self.sq_thread is not None,
            self.passthru,
            self.plug_min,
            self._per_io_parts,
            self.batch_request_parts,
        )
        self._acosts: dict = {}
        self._reap_costs = CountGrid()
        #: entering and leaving io_getevents / io_uring_enter(GETEVENTS) (per wait: built once);
        #: io_uring_enter's own work per call is the ring's (none with an SQPOLL thread)
        self._call_cycles = self.kctx.enter_cycles
        self._enter_cost: Cost = host.costs.get(
            "getevents_enter", syscall=self.k.syscall_entry_cycles + self._call_cycles
        )
        self._exit_cost: Cost = host.costs.get("getevents_exit", syscall=self.k.syscall_exit_cycles)
        #: one post of the completions a task-work run found (DEFER_TASKRUN: charged at the enter)
        self._flush_cost: Cost = host.costs.get("uring_cq_flush", syscall=self.k.uring_cq_flush_cycles)

    def _bind_async_loop(self) -> None:
        """What the IO loop keeps so as to build nothing per IO: the last one-IO submitting call's
        cost (with its IO's direction and size), the submitting call under way (its IOs and
        requests, from _commit to _submitted_call: no closure per call), and the continuations it
        passes to the runner and the completion callback, bound once."""
        self._one_op = ""
        self._one_nbytes = -1
        self._one_cost: Cost | None = None
        self._sub_ios: list = NO_IOS
        self._sub_reqs: list = NO_IOS
        self._submitted_cb = self._submitted_call
        self._fill_cb = self._fill
        self._after_submit_cb = self._after_submit
        # SQPOLL: a completion is the SQ thread's task work before its CQE is posted
        self._on_done_cb = self._on_done_sq if self.sq_thread is not None else self._on_done

    def _setup_kernel(self, job: FioJob) -> None:
        """Open the kernel's context (:func:`models.ioengines.kernel_context.open_context`: an
        io_uring ring or a libaio context, as fio's engines do through liburing and libaio), whose
        rules this thread follows: DEFER_TASKRUN, the plug threshold, how CQEs become visible.
        (The rules' flags are copied into this object: compiled, the completion path reads them
        as its own native fields.)"""
        #: an io_uring ring: fio reaps its CQ ring in user space (fio_ioring_getevents) and enters the
        #: kernel only when too few CQEs are there; libaio's io_getevents(min=1) is a system call
        self.uring = job.ioengine in URING_ENGINES
        #: the kernel's context this thread submits to and reaps from
        kctx = self.kctx = open_context(job, self.k, self.passthru, self.iopoll, self.sqpoll)
        #: DEFER_TASKRUN: an interrupt's completion is queued on the ring's work list and its CQE
        #: posted only when the thread enters with GETEVENTS (io_run_local_work)
        self.defer_tw = kctx.defer_taskrun
        #: requests one submitting call must carry for the kernel to plug them
        self.plug_min = kctx.plug_min
        #: the oldest ``visible`` entries of ``ring`` are posted (fio sees them); the rest are
        #: completed but, with DEFER_TASKRUN, still on the ring's work list until an enter with
        #: GETEVENTS runs it (io_run_local_work)
        self.visible = 0
        #: completions posted since the last flush of the CQ (one task-work run posts them together)
        self._unflushed = 0
        #: the CQ flush is paid per batch (io_uring), not per event (libaio's aio_complete locks per
        #: event; the SQ thread's posting is its own)
        self._flush_split = kctx.flush_split
        #: system calls of the IO loop (io_submit / io_getevents / io_uring_enter; nanosleep)
        self.syscalls = 0

    # -- costs -------------------------------------------------------------------------------
    def _per_io_parts(self, op: str, nbytes: int) -> dict:
        """The work of one IO (bio) in the submitting call: fio's in user space, then the kernel's
        (the engine's issue and the file system's, or passthrough's command: the context's)."""
        user = self.k.user_io_cycles
        if self.passthru and self._pi is not None and op == "write":
            user += self._pi.cycles(op, nbytes)  # fio builds each block's protection information
        return {"user": user, **self.sqe_issue_parts(op, nbytes)}

    def sq_complete_parts(self, n: int) -> dict:
        """The SQ thread's task-work run that completes ``n`` of this ring's requests (the ring's:
        :meth:`models.os.io_uring.ring.IoRing.sq_complete_parts`)."""
        kctx = self.kctx
        assert isinstance(kctx, IoRing)
        return kctx.sq_complete_parts(n)

    def sqe_issue_parts(self, op: str, nbytes: int) -> dict:
        """The kernel's work to issue one SQE of this ring, cycles by layer: what an SQPOLL thread
        (:mod:`models.os.io_uring.sqpoll`) runs for it; fio's user-space share stays with the
        application."""
        return self.kctx.issue_parts(op, nbytes, self._fs_file_cycles)

    def _submit_cost(self, ios, nreq: int, with_syscall: bool, saved: tuple[int, int, int] = NO_SAVINGS) -> Cost:
        """The submitting call for ``ios`` that became ``nreq`` requests in the plug, which shares
        ``saved`` (SQ doorbells, sq_lock rounds, tag allocations: BlkMq.plug_savings) among them."""
        if len(ios) == 1 and nreq == 1 and with_syscall and not (saved[0] or saved[1] or saved[2]):
            # fio's default batch, one IO per call: most often the same call as the last
            one: Request = ios[0]
            cost = self._one_cost
            if cost is None or one.nbytes != self._one_nbytes or one.op != self._one_op:
                cost = self._one_cost = self._calls.submit(ios, nreq, with_syscall, saved)
                self._one_op, self._one_nbytes = one.op, one.nbytes
            return cost
        return self._calls.submit(ios, nreq, with_syscall, saved)

    def _reap_cost(self, n: int, syscall: bool, flushes: int, pi_cycles: float = 0.0) -> Cost:
        """fio reaping ``n`` events (with a system call or not), and ``flushes`` posts of CQEs
        (io_uring: one per task-work run, however many completions it posts); ``pi_cycles``: fio's
        checks of the reads' protection information among them."""
        if not pi_cycles:  # (the common case: found by machine integers, no tuple built and hashed)
            sc = 1 if syscall else 0
            found: Cost | None = self._reap_costs.get(n, flushes, sc)
            if found is None:
                found = self._calls.reap(n, syscall, flushes, 0.0)
                self._reap_costs.put(n, flushes, sc, found)
            return found
        key = ("reap", n, syscall, flushes, pi_cycles)
        cost = self._acosts.get(key)
        if cost is None:
            cost = self._acosts[key] = self._calls.reap(n, syscall, flushes, pi_cycles)
        return cost

    # -- program -----------------------------------------------------------------------------
    def _issue_first(self) -> None:
        if self.job.latency_target_ns:
            self.lat = LatencyTarget.for_job(self.job, self.host.engine.now)
            self.depth = self.lat.qd
        self.min_rate.start_ns = self.host.engine.now
        if self._paced:
            self.pacer.start(self.host.engine.now)
        if self._flow is not None:
            self._flow.join()
        self._fill()

    def _rate_due(self, now: float) -> float:
        """With a rate: the direction of the next IO (drawn once, kept as pending) and when it is
        due (fio's rate_ddir); ``<= now`` without a rate."""
        if not self._paced:
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
        if self._low_drain:
            if self.inflight + len(self.ring) > self.low:
                self._reap()  # wait_for_completions: while (full && cur_depth > iodepth_low)
                return
            self._low_drain = False
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
        if self._paced:
            n = 1  # one IO per due time; a late thread catches up (the schedule is cumulative)
            first, self._pending_op = self._pending_op, None
        ios = self._prepare(n, first, now)
        n = len(ios)
        if not n:
            if self._trim_req is not None:
                self._after_submit()
            elif self.offsets.region_end:
                self.stopping = True
                self._reap()
            else:
                self._flow_held_async(first)
            return
        flag_batch(ios, self._hint_flags)  # the batch's calibrated-interrupt flags (the kernel's rule)
        self.inflight += n
        self._commit(ios)

    def use_pi(self, plan: Any) -> None:
        """io_uring_cmd on a namespace with metadata (a :class:`models.ioengines.pi.PiPlan`)."""
        self._pi = plan

    def _commit(self, ios: list) -> None:
        """Submit the prepared IOs: one io_submit / io_uring_enter, or SQEs for the SQ thread."""
        runner = self.runner
        n = len(ios)
        if self.sq_thread is not None:
            # SQPOLL: write the SQEs (user work only); the SQ thread submits them
            cost = self.host.costs.get("uring_sqe_write", user=n * (self.k.user_io_cycles + self.k.sqe_write_cycles))
            runner.run(cost, lambda: self._handoff(ios))
        else:
            # split and merged inside the call (passthrough commands are neither); requests pay blk-mq + NVMe work
            blk = self._blk
            reqs = ios if self.passthru else blk.plug(ios)
            self.syscalls += 1
            saved = NO_SAVINGS if self.passthru or n < 2 else blk.plug_savings(reqs, n, self.plug_min)
            self._sub_ios, self._sub_reqs = ios, reqs  # (one submitting call at a time: no closure per call)
            runner.run(self._submit_cost(ios, len(reqs), True, saved), self._submitted_cb)

    def _prepare(self, n: int, first: str | None, now: float) -> list:
        """Up to ``n`` IOs of one submission (fio's io_u preparation, ``user_io_cycles`` each);
        a trim with a synchronous engine ends the batch and waits in ``_trim_req``."""
        ios = []
        runner = self.runner
        t = now
        depth = self.inflight + len(self.ring) + n  # fio's cur_depth at the commit
        flow = self._flow
        paced = self._paced
        user_ns = self._user_io_cycles / runner.freq  # fio's preparation of each
        offs = self.offsets  # (one per thread: its region_end read after each IO)
        for _ in range(n):
            if flow is not None and not flow.take():
                break  # fio's flow holds this IO back
            op, bs, off = self._next_io(first)
            if op in ZONE_OPS:  # zonemode=zbd: a zone ioctl ends the batch (or the job ends)
                if op == "zbd_eof":
                    offs.region_end = True
                else:
                    self.issued_ios += 1 if bs else 0
                    self.issued_bytes += bs
                    self._trim_req = self._trims.zone_request(op, bs, off)
                break
            if paced:
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
            req.done_cb = self._on_done_cb
            if self._fdp is not None and op == "write":
                req.placement = self._fdp()  # fio's fdp=1: the write's placement handle
            if self._wmode is not None and op == "write":
                req.opcode = self._wmode()  # io_uring_cmd's write_mode: the write's NVM command
            if self._pi is not None:  # the separate metadata buffer's bytes, PRACT and the PRCHK checks
                req.meta_bytes = self._pi.meta_bytes(op, bs)
                req.prinfo = self._pi.prinfo if op != "trim" else 0
            if self._cmdprio is not None and op != "trim":
                req.ioprio = self._cmdprio(op, bs)
            t += user_ns
            req.t_submit = t
            req.depth = depth
            ios.append(req)
            if offs.region_end:
                break  # a sequential job with holes reached the end of its region
        return ios

    def _submitted_call(self) -> None:
        """The submitting call's segment ended: :meth:`_submitted` for the IOs it carried."""
        ios, reqs = self._sub_ios, self._sub_reqs
        self._sub_ios = self._sub_reqs = NO_IOS
        self._submitted(ios, reqs)

    def _submitted(self, ios, reqs) -> None:
        t = self.runner.clock()
        for req in ios:  # fio's issue_time: io_submit / io_uring_enter returned
            req.t_issued = t
        # dispatched as the call returns (blk_finish_plug), or queued for the CPU's kblockd worker,
        # which then preempts at the return to user space
        self._blk.issue_batch(
            reqs,
            plugged=True,
            runner=self.runner,
            nsubmit=len(ios),
            passthru=self.passthru,
            plug_min=self.plug_min,
            own_plug=self.dio_batch_plug(),
        )
        if self.defer_tw:
            self._run_local_work()  # fio's submit enter carries GETEVENTS
        self.runner.preemption_point(self._after_submit_cb)

    def _run_local_work(self) -> None:
        """DEFER_TASKRUN: an enter with GETEVENTS runs the ring's work list (io_run_local_work):
        every completion queued there is posted, under one CQ lock (one flush, carried into what
        the thread runs next)."""
        if self.visible < len(self.ring):
            self.visible = len(self.ring)
            self.runner.add_carry(self._flush_cost)

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
        zone = req.op in ZONE_OPS
        self._trims.run(req, self._trims.cost(0 if zone else req.nbytes, False, req.op), "trim_return", self._trim_done)

    def _trim_done(self, req: Request, t: float, cost: Cost) -> None:
        self._trim_req = None
        req.t_issued = t
        if req.op in ZONE_OPS:
            self._zone_done(req, t)
        else:
            self._io_completed(req, t)
        self.runner.run(cost, self._after_submit)

    def _flow_held_async(self, op: str | None) -> None:
        """fio's flow holds the next IO back: spin in fio's loop without reaping until the flow
        lets it go, or (``flow_sleep``) reap everything in flight, sleep, and check again."""
        if op is not None:
            self._pending_op = op
        flow = self._flow
        if flow.sleep_ns:
            self.quiescing = True
            self._quiesce_for_ns = flow.sleep_ns
            self._think()
            return
        w = self.wait
        w.done, w.waiter_sleeping = True, False
        flow.spin(self.runner, self._runner_now, self._fill)

    def _after_submit(self) -> None:
        if self._trim_req is not None:
            if self._trim_req.op in ZONE_OPS and (self.inflight or self.ring):
                self.quiescing = True  # fio's io_u_quiesce before a zone reset or finish
                self._reap()
                return
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
        if self._trim_req is not None:  # quiesced for a zone ioctl
            self._sync_trim()
            return
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
        if self.stopping or queued >= self.depth or self._low_drain:
            need = max(need, 1)
        return min(need, queued)

    def _exit_if_drained(self) -> bool:
        """fio's thread ends once it is stopping with nothing in flight or left to reap: it leaves its
        flow group and exits (its SQ thread is told); True when it did."""
        if not (self.stopping and self.inflight == 0 and not self.ring):
            return False
        if self._flow is not None:
            self._flow.leave()
        self.runner.exit_task()
        if self.sq_thread is not None:
            self.sq_thread.client_exited()
        return True

    def _reap(self) -> None:
        runner = self.runner
        if self._exit_if_drained():
            return
        if self.low < self.depth and self.inflight + len(self.ring) >= self.depth:
            self._low_drain = True  # fio's `full`: reap down to iodepth_low before refilling
        need = self._need()
        w = self.wait
        seen = self.visible
        if seen >= need and (seen or need == 0):
            if not seen:
                self._fill()
                return
            # libaio: io_getevents is a system call; io_uring: the CQEs are read from the shared ring
            syscall = self.sq_thread is None and not self.uring
            if syscall:
                self.syscalls += 1
            self._take(syscall=syscall)
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
            self.syscalls += 1
            runner.run(self._enter_cost, lambda: runner.poll(qp, w, self._reap_ready, more))
        else:
            self.syscalls += 1
            runner.run(self._enter_cost, self._block)

    def _block(self) -> None:
        """Inside io_getevents / io_uring_enter: sleep unless enough completed meanwhile."""
        w = self.wait
        if self.defer_tw:
            self._run_local_work()  # io_cqring_wait runs the ring's work list first
            if len(self.ring) >= w.need:
                w.done = True  # completions that came before the enter: no sleep
        if w.done:
            self._reap_ready()
            return
        w.waiter_sleeping = True
        self.runner.sleep(self._reap_ready, iowait=False)

    def _reap_ready(self) -> None:
        if self.defer_tw:
            self._run_local_work()  # woken in io_cqring_wait: it runs the work list again
        self._take(syscall=False if self.sq_thread is not None else True, entered=self.sq_thread is None)

    def _take(self, syscall: bool, entered: bool = False) -> None:
        """Reap up to complete_max events from the ring (fio's io_u completion)."""
        runner = self.runner
        take = max(self.cmax, self._need())
        got = self.ring[: min(take, self.visible)]
        del self.ring[: len(got)]
        self.visible -= len(got)
        flushes = len(got)
        if self._flush_split:
            # posted by the task-work runs since the last reap: one flush for all (with DEFER_TASKRUN
            # the enters that ran the work list paid theirs)
            flushes = 1 if self._unflushed and not self.defer_tw else 0
            self._unflushed = 0
        pi_cycles = 0.0
        if self._pi is not None:  # fio_ioring_event checks each read's protection information
            pi_cycles = sum(self._pi.cycles(r.op, r.nbytes) for r in got if r.op == "read")
        if entered:
            # the wait already paid the syscall entry; the exit and per-event work remain
            cost = self._reap_cost(len(got), False, flushes, pi_cycles)
            runner.add_carry(self._exit_cost)
        else:
            cost = self._reap_cost(len(got), syscall, flushes, pi_cycles)
        t0 = runner.clock()
        for r in got:
            # an event posted by another CPU's handler, whose time runs ahead of this CPU's clock
            # (its work is carried), is seen once it is in the ring
            if r.t_reaped > t0:
                t0 = r.t_reaped
        t = t0 + cost.cycles / runner.freq
        ledger = self._ledger  # (a direct call each, not a bound method)
        self.reaped_since_think += len(got)
        lat = self.lat
        for req in got:
            req.t_complete = t
            ledger.done(req)
            if self._min_rate_on:
                self._check_min_rate(req, t)
            if lat is not None:
                lat.completed(t - req.t_submit)
            if self.steady:
                self._count_done(req)
            if req.status:
                self._io_error(req)
        if lat is not None:
            self.depth = lat.check(t)
            if lat.done:
                self.stopping = True  # fio ends the job once the search has settled
        runner.run(cost, self._fill_cb)

    def _on_done_sq(self, runner, req) -> None:
        """SQPOLL: a request completed (io_complete_rw -> io_req_task_work_add): its task work goes
        to the task that issued it, the SQ thread, which completes it and posts the CQE
        (:meth:`_on_done`) when it next runs its task work."""
        self.sq_thread.complete(runner, req, self)

    def _on_done(self, runner, req) -> None:
        """Completion posted to the ring (aio_complete / io_cqring_fill_event) on ``runner``."""
        self.inflight -= 1
        self.ring.append(req)
        if not self.defer_tw:
            self.visible += 1
            self._unflushed += 1
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

        self.syscalls += 1

        runner.run(
            self.host.costs.get(
                "nanosleep",
                syscall=self.k.syscall_entry_cycles + self.k.syscall_exit_cycles,
                actions={"hrtimer_program": 1},
            ),
            sleep,
        )
