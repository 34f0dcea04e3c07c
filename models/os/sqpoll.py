"""The io_uring SQPOLL kernel thread (IORING_SETUP_SQPOLL).

A kernel thread pinned to ``sqthread_poll_cpu`` spins on the submission rings of its io_uring
instances: SQEs written by applications are picked up within one loop iteration and submitted
without any system call (io_uring issue + fs + blk-mq + NVMe submit per IO, doorbell at the end of
the batch); the requests go to the hardware queue of the SQ thread's CPU. With IOPOLL the thread
also polls that queue's completions. After ``sq_thread_idle_ns`` without work it sleeps, and the
next submitter pays an io_uring_enter(IORING_ENTER_SQ_WAKEUP) system call to wake it.

The thread serves rings (:class:`SqRing`): what it reads of one is the ring's set-up and state in
io_uring's terms, whoever implements it (fio's io_uring engine: :mod:`models.ioengines.async_io`).
"""

from __future__ import annotations

from typing import Any, Protocol

from models.os.task import DEAD, Task


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
    """the CPU runner (models.os.sched.CpuRunner) the application thread runs on"""

    def sqe_issue_parts(self, op: str, nbytes: int) -> dict:
        """The kernel's work to issue one SQE (io_uring issue, file system or passthrough), cycles
        by layer."""
        ...

    def per_request_parts(self, nsubmit: int = 1) -> dict:
        """The submitting context's work per request after the plug when ``nsubmit`` SQEs are
        submitted together (blk-mq, IO scheduler, NVMe command), cycles by layer."""
        ...


class _Work:
    __slots__ = ("done", "waiter_sleeping")

    def __init__(self):
        self.done = False
        self.waiter_sleeping = False


class SqThread:
    def __init__(self, host, cpu: int):
        self.host = host
        self.cpu = cpu
        self.runner = host.runners[cpu]
        self.task = Task(len(host.all_tasks), f"io_uring-sq/{cpu}", cpu, job=-1)
        self.task.kthread = True
        host.all_tasks.append(self.task)
        self.sq: list = []  # (request, its ring)
        self.work = _Work()
        self.iopoll = False
        self.clients: set[SqRing] = set()
        self.last_work_ns = 0.0
        self.sleeping = False
        self.wakeups = 0
        self._idle_call = None
        self.submitted = 0
        self.qp = None

    def start(self) -> None:
        self.task.resume = self._loop
        self.runner.add_task(self.task)

    def register(self, thread: SqRing) -> None:
        self.clients.add(thread)
        self.iopoll = self.iopoll or thread.iopoll

    def enqueue(self, ios, thread: SqRing) -> None:
        """An application wrote SQEs and bumped the SQ tail (called on the application's CPU)."""
        for req in ios:
            req.qp = self.host.driver.queue_for(thread.dev, self.cpu, thread.iopoll)
            self.sq.append((req, thread))
        if self.sleeping:
            # the application must enter the kernel to wake the SQ thread
            k = self.host.kcosts
            thread.runner.add_carry(
                self.host.costs.get("sq_wakeup", syscall=k.syscall_entry_cycles + k.syscall_exit_cycles)
            )
            self.sleeping = False
            self.wakeups += 1
            thread.runner.wake(self.task)
        else:
            self._nudge()

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
            ios = [req for req, _thread in batch]
            reqs = ios if batch[0][1].passthru else self.host.blk.plug(ios)
            runner.run(self._submit_cost(batch, len(reqs)), lambda: self._submitted(batch, reqs))
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
        qp = self.host.driver.queue_for(0, self.cpu, True) if self.iopoll else None
        runner.poll(qp, self.work, self._loop)

    def _submitted(self, batch, reqs) -> None:
        self.host.blk.issue_batch(
            reqs, plugged=True, runner=self.runner, nsubmit=len(batch), passthru=batch[0][1].passthru
        )
        self.submitted += len(batch)
        self._loop()

    def _submit_cost(self, batch, nreq: int):
        """The SQ thread submitting ``batch`` (``nreq`` requests after its plug)."""
        parts: dict[str, float] = {}
        for req, thread in batch:  # (the application already did the user-space work)
            for layer, cyc in thread.sqe_issue_parts(req.op, req.nbytes).items():
                parts[layer] = parts.get(layer, 0.0) + cyc
        for layer, cyc in batch[0][1].per_request_parts(len(batch)).items():
            parts[layer] = parts.get(layer, 0.0) + nreq * cyc
        return self.host.costs.get("sqpoll_submit", **parts)

    def _idle_check(self) -> None:
        """At the idle deadline, make the spinning thread re-evaluate (it may go to sleep)."""
        self._idle_call = None
        self._nudge()

    def client_exited(self) -> None:
        self._nudge()
