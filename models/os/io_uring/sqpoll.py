"""The io_uring SQPOLL kernel thread (IORING_SETUP_SQPOLL).

Each ring set up with SQPOLL gets a thread of its own (io_sq_offload_create -> io_get_sq_data: a
new ``io_sq_data`` unless the ring attaches to another's with IORING_SETUP_ATTACH_WQ, which fio
does not use). The thread spins on the submission ring: SQEs written by the application are
picked up within one loop iteration and submitted without any system call (io_uring issue + fs +
blk-mq + NVMe submit per IO, doorbell at the end of the batch); the requests go to the hardware
queue of the CPU the SQ thread runs on. With IOPOLL the thread also polls that queue's
completions. After ``sq_thread_idle_ns`` without work it sleeps, and the next submitter pays an
io_uring_enter(IORING_ENTER_SQ_WAKEUP) system call to wake it.

Where it runs: with IORING_SETUP_SQ_AFF (fio's ``sqthread_poll_cpu``) it is bound to that CPU;
without, it is an ordinary unbound task (io_sq_thread: ``set_cpus_allowed_ptr(current,
cpu_online_mask)``; before 5.11 a kthread, unbound too): the scheduler places it when it is
created (wake_up_new_task -> select_task_rq_fair with SD_BALANCE_FORK, find_idlest_cpu:
:func:`models.os.sched.placement.select_fork_cpu`), moves it when it is woken and balances it like any
task (with ``sched.placement=cfs``). Sharing a CPU with another task, it keeps that CPU until its
time slice ends: its loop only yields at ``cond_resched`` when ``need_resched`` is set (io_sq_thread),
so CFS's slices set the sharing (models.os.sched.cfs).

The thread serves rings (:class:`SqRing`): what it reads of one is the ring's set-up and state in
io_uring's terms, whoever implements it (fio's io_uring engine: :mod:`models.ioengines.async_io`).
"""

from __future__ import annotations

from typing import Any, Protocol

from models.os.block.blk_mq import PLUG_MIN_REQUESTS
from models.os.io_uring.host import UringHost
from models.os.sched.placement import select_fork_cpu
from models.os.sched.task import DEAD, Task


class SqRing(Protocol):
    """An io_uring instance served by an SQPOLL thread, as the thread sees it."""

    dev: int
    """the device its requests go to (index)"""
    iopoll: bool
    """set up with IORING_SETUP_IOPOLL: the SQ thread also polls completions"""
    passthru: bool
    """its SQEs are NVMe passthrough commands (IORING_OP_URING_CMD): no plug, no IO scheduler"""
    inflight: int
    """SQEs submitted and not completed"""
    task: Task
    """the application thread that owns it"""
    runner: Any
    """the CPU runner (models.os.sched.runner.CpuRunner) the application thread runs on"""

    def sqe_issue_parts(self, op: str, nbytes: int) -> dict:
        """The kernel's work to issue one SQE (io_uring issue, file system or passthrough), cycles
        by layer."""
        ...

    def per_request_parts(self, nsubmit: int = 1, plug_min: int = 3, own_plug: int = 0) -> dict:
        """The submitting context's work per request after the plug when ``nsubmit`` SQEs are
        submitted together (blk-mq, IO scheduler, NVMe command; the call plugs from ``plug_min``,
        ``own_plug`` the direct-IO path's plug: a ``PLUG_*`` of models.os.block.blk_mq), cycles by layer."""
        ...

    def dio_batch_plug(self) -> int:
        """The plug each of its IOs sits in on the direct-IO path (models.os.fs.direct_io)."""
        ...

    def sq_complete_parts(self, n: int) -> dict:
        """The SQ thread's task-work run that completes ``n`` of this ring's requests and posts
        their CQEs, cycles by layer."""
        ...

    def _on_done(self, runner, req) -> None:
        """Post ``req``'s CQE to the ring (on ``runner``, the SQ thread's CPU)."""
        ...


class _Work:
    __slots__ = ("done", "waiter_sleeping")

    def __init__(self):
        self.done = False
        self.waiter_sleeping = False


class SqThread:
    """The SQPOLL thread of one ring: bound to ``cpu``, or (None) placed and moved by the
    scheduler (see the module docstring)."""

    def __init__(self, host: UringHost, cpu: int | None):
        self.host = host
        self.bound = cpu is not None
        self.cpu = cpu if cpu is not None else 0  # (an unbound thread's CPU is chosen at start)
        self.runner = host.runners[self.cpu]
        self.task = Task(len(host.all_tasks), f"io_uring-sq/{len(host.sq_threads)}", self.cpu, job=-1)
        self.task.kthread = True
        host.all_tasks.append(self.task)
        self.sq: list = []  # (request, its ring)
        #: (request, its ring): completed requests whose task work this thread runs (it issued them:
        #: io_req_task_work_add queues to req->task), posting their CQEs
        self.tw: list = []
        self.work = _Work()
        self.iopoll = False
        self.clients: set[SqRing] = set()
        self.last_work_ns = 0.0
        self.sleeping = False
        self.wakeups = 0
        self._idle_call = None
        self.submitted = 0
        self.qp = None
        self._polled_devs: set[int] = set()  # devices of its IOPOLL requests (whose queues it polls)

    def start(self) -> None:
        """The thread starts: a bound one on its CPU; an unbound one where fork placement puts it
        (scanning from its creator's CPU), free to move later under CFS placement."""
        if not self.bound:
            runners = self.host.runners
            creator = next(iter(self.clients)).runner.id if self.clients else 0
            self.migrated(select_fork_cpu(runners, range(len(runners)), creator))
            self.task.cpu = self.cpu
            if self.host.platform.sched.placement == "cfs":
                self.task.affinity = frozenset(range(len(runners)))
                self.task.owner = self
                self.host.balancer.movable_tasks = True
        self.task.resume = self._loop
        self.runner.add_task(self.task)

    # -- placement (models.os.sched.placement, models.os.sched.balance) ------------------------------------
    def can_migrate(self) -> bool:
        """An unbound SQ thread may move; with IOPOLL only with nothing in flight (it polls the
        queues of the CPU it submitted from)."""
        return not self.iopoll or not any(c.inflight for c in self.clients)

    def migrated(self, runner) -> None:
        """The thread now runs on ``runner``'s CPU: its next requests go to that CPU's queues."""
        self.runner = runner
        self.cpu = runner.id

    def register(self, thread: SqRing) -> None:
        self.clients.add(thread)
        self.iopoll = self.iopoll or thread.iopoll

    def enqueue(self, ios, thread: SqRing) -> None:
        """An application wrote SQEs and bumped the SQ tail (called on the application's CPU)."""
        for req in ios:
            self.sq.append((req, thread))
        if self.sleeping:
            # the application must enter the kernel to wake the SQ thread
            k = self.host.kcosts
            thread.runner.add_carry(
                self.host.costs.get(
                    "sq_wakeup", syscall=k.syscall_entry_cycles + k.syscall_exit_cycles + k.io_uring_enter_cycles
                )
            )
            self.sleeping = False
            self.wakeups += 1
            thread.runner.wake(self.task)
        else:
            self._nudge()

    def complete(self, runner, req, thread: SqRing) -> None:
        """``req`` of ``thread``'s ring completed on ``runner``'s CPU: its task work is queued to this
        thread (task_work_add with TWA_SIGNAL: a spinning thread runs it at its next loop, a
        sleeping one is woken)."""
        self.tw.append((req, thread))
        if self.sleeping:
            self.sleeping = False
            self.wakeups += 1
            runner.wake(self.task)
        else:
            self._nudge()

    def _run_task_work(self, runner) -> None:
        """io_run_task_work: complete the queued requests, one CQ flush per ring."""
        batch, self.tw = self.tw, []
        by_ring: dict = {}
        for req, thread in batch:
            by_ring.setdefault(thread, []).append(req)
        parts: dict[str, float] = {}
        for thread, reqs in by_ring.items():
            for layer, cyc in thread.sq_complete_parts(len(reqs)).items():
                parts[layer] = parts.get(layer, 0.0) + cyc
        runner.run(self.host.costs.get("sqpoll_task_work", **parts), lambda: self._posted(by_ring))

    def _posted(self, by_ring: dict) -> None:
        runner = self.runner
        for thread, reqs in by_ring.items():
            for req in reqs:
                thread._on_done(runner, req)
        self._loop()

    def _nudge(self) -> None:
        if not self.work.done:
            self.work.done = True
            self.runner.spin_notify(self.work)

    def _loop(self) -> None:
        runner = self.runner
        now = runner.clock()
        if self.sq:
            batch, self.sq = self.sq, []
            self.last_work_ns = now
            driver = self.host.driver
            for req, thread in batch:  # the hardware queue of the CPU submitting (blk_mq_get_request)
                dev = req.qp.device.index
                req.qp = driver.queue_for(dev, self.cpu, thread.iopoll)
                if thread.iopoll:
                    self._polled_devs.add(dev)
            ios = [req for req, _thread in batch]
            reqs = ios if batch[0][1].passthru else self.host.blk.plug(ios)
            runner.run(self._submit_cost(batch, len(reqs)), lambda: self._submitted(batch, reqs))
            return
        if self.tw:  # io_sq_thread runs its task work after each submission pass
            self.last_work_ns = now
            self._run_task_work(runner)
            return
        busy = any(c.inflight for c in self.clients)
        if busy:
            self.last_work_ns = now
        if all(c.task.state == DEAD for c in self.clients):
            runner.exit_task()
            return
        if not busy and now - self.last_work_ns >= self.host.kcosts.sq_thread_idle_ns:
            self.sleeping = True
            runner.sleep(self._loop, iowait=False)
            return
        self.work.done = False
        if self._idle_call is None:
            self._idle_call = self.host.engine.call_at(
                max(now, self.last_work_ns + self.host.kcosts.sq_thread_idle_ns), self._idle_check
            )
        if self.iopoll:  # io_do_iopoll: every polled queue its requests went to (this CPU's, per device)
            qps = [self.host.driver.queue_for(d, self.cpu, True) for d in sorted(self._polled_devs)] or [
                self.host.driver.queue_for(0, self.cpu, True)
            ]
            runner.poll(qps[0], self.work, self._loop, tuple(qps[1:]))
        else:
            runner.poll(None, self.work, self._loop)

    def _submitted(self, batch, reqs) -> None:
        ring = batch[0][1]
        self.host.blk.issue_batch(
            reqs,
            plugged=True,
            runner=self.runner,
            nsubmit=len(batch),
            passthru=ring.passthru,
            own_plug=ring.dio_batch_plug(),
        )
        self.submitted += len(batch)
        self._loop()

    def _submit_cost(self, batch, nreq: int):
        """The SQ thread submitting ``batch`` (``nreq`` requests after its plug)."""
        parts: dict[str, float] = {}
        for req, thread in batch:  # (the application already did the user-space work)
            for layer, cyc in thread.sqe_issue_parts(req.op, req.nbytes).items():
                parts[layer] = parts.get(layer, 0.0) + cyc
        ring = batch[0][1]
        for layer, cyc in ring.per_request_parts(len(batch), PLUG_MIN_REQUESTS, ring.dio_batch_plug()).items():
            parts[layer] = parts.get(layer, 0.0) + nreq * cyc
        return self.host.costs.get("sqpoll_submit", **parts)

    def _idle_check(self) -> None:
        """At the idle deadline, make the spinning thread re-evaluate (it may go to sleep)."""
        self._idle_call = None
        self._nudge()

    def client_exited(self) -> None:
        self._nudge()
