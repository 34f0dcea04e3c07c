"""fio's ``io_submit_mode=offload`` with a synchronous engine (fio 3.41 rate-submit.c, backend.c
do_io; HOWTO ``io_submit_mode``):

* the job thread prepares each IO (offset, size, direction; its rate and thinktime pacing) and
  hands it to a pool of ``iodepth`` submit workers (a work queue: the first idle worker, else the
  one with the shortest queue; a sleeping worker is woken with FUTEX_WAKE). It does not wait for
  the IO: it goes on to the next one, so the submission rate does not follow the completions;
* with ``iodepth`` IOs in flight it waits (a condition variable) until a worker finishes one;
* each worker runs its IOs one after another with the job's engine, as a synchronous thread does
  (syscall, block layer, device, completion policy), then sleeps (FUTEX_WAIT) when its queue is empty;
* an IO's latency counts from when the job thread queued it, so time spent waiting for a worker is
  in it (what offload is for: no coordinated omission); the IOs are the job's, the workers' CPU time
  is their own (fio reports per thread).

With ``ioengine=libaio`` (fio's examples/fixed-rate-submission.fio and poisson-rate-submission.fio;
fio documents that offload "cannot reliably be used with async IO engines", but runs it) a worker
(:class:`AioOffloadWorker`) runs rate-submit.c's io_workqueue_fn with the worker's own aio context:
``td_io_queue`` commits the IO with io_submit, ``io_u_queued_complete(td, 0)`` reaps without waiting
(io_getevents with min_nr 0: nothing is done yet), and with its queue empty the worker's pre-sleep
hook ``io_u_quiesce`` waits in io_getevents (min_nr 1) for its IO before it sleeps on the work queue;
an interrupt completes the IO and wakes it (aio_complete's wake-up, priced as the synchronous
engines' interrupt path). A worker with IOs queued behind the one in flight submits them only once
it is reaped here, where fio would submit them at once; with ``iodepth`` workers for ``iodepth``
io_us a worker has a backlog only while every worker is busy. io_uring with offload is not modelled.
At the end the job thread waits for the IOs in flight, then stops the workers.
"""

from __future__ import annotations

from collections import deque

from models.ioengines.host import EngineHost
from models.ioengines.job import FioJob
from models.ioengines.sync_io import SyncThread
from models.os.block.annotations import sync_flags
from models.os.block.request import Request
from models.os.sched.task import SLEEPING, Task


class OffloadWorker(SyncThread):
    """One submit worker: :class:`SyncThread`'s submission and completion path, fed by its job
    thread instead of drawing its own IOs."""

    def __init__(self, main: "OffloadThread", index: int, cpu: int):  # (super().__init__ not called)
        host: EngineHost = main.host
        self.host = host
        self.job: FioJob = main.job
        self.job_idx = main.job_idx
        self.main = main
        self.k = host.kcosts
        self.task = Task(len(host.all_tasks), f"{main.job.name}/{main.task.tid}.w{index}", cpu)
        self.task.io_tid = main.task.tid  # its IOs are the job thread's
        self.task.vscale = main.task.vscale  # a thread of the job's process: its nice value
        host.all_tasks.append(self.task)
        self.runner = host.runners[cpu]
        self._bind_hot_path(host)
        self.placed_cpu = cpu
        self.policy = main.policy
        self.hipri = main.hipri
        self.dev = main.dev
        self.req_flags = sync_flags(main.job.stacksim_irq_hint, main.job.nowait)
        self.req = None
        self.queue: deque = deque()
        self.sleeping = False
        self.stop = False
        self._costs = {}
        self._qps: dict = {}
        self._fs_file_cycles = main._fs_file_cycles
        self._file_io = main._file_io  # its IOs go where the job thread's go (the same direct-IO path)
        self._plug_read = self._batch_plug = -1
        self._sync_kiocb = True
        self._complete_cycles = self.k.fs_complete_cycles + self.k.syscall_exit_cycles

    def start(self) -> None:
        self.task.resume = self._issue_first
        self.runner.add_task(self.task)

    def _issue_first(self) -> None:
        self._issue(with_completion=False)

    def _issue(self, with_completion: bool) -> None:
        """After an IO (or at start): report it to the job thread, then run the next queued IO,
        or sleep until one comes (or exit once told to stop)."""
        runner = self.runner
        k = self.k
        t0 = runner.clock()
        prev = self.req
        if with_completion:
            t0 += self._complete_cycles / runner.freq
            self.main.io_finished(prev, t0, runner)
            self.req = None
        if self.queue:
            req = self.queue.popleft()
            req.cpu = runner.id
            qp = self._qps.get(req.op)
            if qp is None:
                qp = self._qps[req.op] = self.host.driver.queue_for(self.dev, runner.id, self.policy[req.op].polled)
            req.qp = qp
            self.req = req
            cost = self._costs.get((req.op, req.nbytes, with_completion)) or self._submit_cost(
                req.op, req.nbytes, with_completion
            )
            runner.run(cost, self._doorbell)
            return
        parts = dict(syscall=k.syscall_entry_cycles)  # FUTEX_WAIT (or the exit of a stopped worker)
        if with_completion:
            ret = self._return_parts()
            parts.update(fs=ret["fs"], syscall=k.syscall_entry_cycles + ret["syscall"])
        if self.stop:
            runner.run(self.host.costs.get("offload_worker_exit", **parts), runner.exit_task)
            return
        self.sleeping = True
        runner.run(self.host.costs.get("futex_wait" + ("_after_io" if with_completion else ""), **parts), self._sleep)

    def _return_parts(self) -> dict:
        """The return of the worker's call that waited for its IO: the direct-IO completion and the
        syscall exit."""
        return dict(fs=self.k.fs_complete_cycles, syscall=self.k.syscall_exit_cycles)

    def _sleep(self) -> None:
        """Inside FUTEX_WAIT: sleep unless work (or the stop) came meanwhile (the futex word changed)."""
        if self.queue or self.stop:
            self.sleeping = False
            self.runner.add_carry(self.host.costs.get("futex_return", syscall=self.k.syscall_exit_cycles))
            self._issue(with_completion=False)
            return
        self.runner.sleep(self._woken, iowait=False)

    def _woken(self) -> None:
        """FUTEX_WAIT returned: work (or the stop) arrived."""
        self.runner.add_carry(self.host.costs.get("futex_return", syscall=self.k.syscall_exit_cycles))
        self._issue(with_completion=False)

    def can_migrate(self) -> bool:
        return self.req is None

    def migrated(self, runner) -> None:
        self.runner = runner
        self._qps.clear()


class AioOffloadWorker(OffloadWorker):
    """A submit worker of a libaio offload job: io_submit, a non-blocking io_getevents, then
    io_getevents waiting for the IO (the quiesce before the worker sleeps), its event reaped."""

    def __init__(self, main: "OffloadThread", index: int, cpu: int):
        super().__init__(main, index, cpu)
        self._sync_kiocb = False  # io_submit: its kiocbs are asynchronous (the direct-IO path's plugs)
        ret = self._return_parts()
        self._complete_cycles = ret["fs"] + ret["syscall"]

    def _return_parts(self) -> dict:
        """io_getevents returns with the event: aio's reap (copy to user), the dio completion, the exit."""
        k = self.k
        return dict(fs=k.fs_complete_cycles, syscall=k.aio_reap_cycles + k.syscall_exit_cycles)

    def _submit_cost(self, op: str, nbytes: int, with_completion: bool):
        key = (op, nbytes, with_completion)
        cost = self._costs.get(key)
        if cost is None:
            k = self.k
            pages = max(1, -(-nbytes // 4096))
            call = k.syscall_entry_cycles + k.syscall_exit_cycles
            parts = dict(
                user=k.user_io_cycles,
                # io_submit (with the iocb's setup), io_getevents(min_nr=0), io_getevents(min_nr=1)'s entry
                syscall=2 * call + k.aio_issue_cycles + k.syscall_entry_cycles,
                fs=k.fs_submit_cycles + k.fs_per_page_cycles * pages + self._fs_file_cycles,
            )
            for layer, cyc in self.per_request_parts(own_plug=self.dio_plug(op, nbytes)).items():
                parts[layer] = cyc * self.host.blk.requests_for(nbytes)
            if with_completion:
                for layer, cyc in self._return_parts().items():
                    parts[layer] += cyc
            cost = self._costs[key] = self.host.costs.get(
                f"aio_offload_{'complete_' if with_completion else ''}submit", **parts
            )
        return cost


class OffloadThread(SyncThread):
    """The job thread of an offload job: prepares IOs and hands them to ``iodepth`` workers."""

    def __init__(self, host: EngineHost, job: FioJob, job_idx, clone, cpu, end_ns, stream):
        super().__init__(host, job, job_idx, clone, cpu, end_ns, stream)
        self.clone = clone
        self.depth = job.iodepth
        self.inflight = 0
        self.workers: list[OffloadWorker] = []
        self.blocked = False  # waiting for a free io_u (iodepth in flight, or draining at the end)
        self.draining = False
        self._next_worker = 0

    def add_workers(self, cpus: list[int]) -> list[OffloadWorker]:
        """The ``iodepth`` submit workers, started on ``cpus`` (fio's workqueue_init)."""
        cls = AioOffloadWorker if self.job.ioengine == "libaio" else OffloadWorker
        self.workers = [cls(self, i, c) for i, c in enumerate(cpus)]
        return self.workers

    def start(self) -> None:
        for w in self.workers:
            w.start()
        super().start()

    # -- the job thread's loop -----------------------------------------------------------------
    def _issue(self, with_completion: bool) -> None:
        """fio's do_io in offload mode: pace, prepare one IO, queue it to a worker, repeat."""
        host = self.host
        runner = self.runner
        now = runner.clock()
        if self._finished(now) or self.draining:
            self._drain()
            return
        if self.inflight >= self.depth:
            self._block()
            return
        op = None
        if self._paces:
            op = self._pending_op or self._draw_op()
            wait = self.job.thinktime_ns if self.issued_ios else 0.0
            if self.pacer.active:
                op, due = self.pacer.choose(op, now)
                wait = max(wait, due - now)
            if wait > 0 and not self._paused:  # (just back from that pause: go)
                self._pending_op = op
                self._pause(wait, False)
                return
            self._paused = False
            self._pending_op = None
        op, bs, off = self._next_io(op)
        self.pacer.issued(op, bs)
        self.issued_bytes += bs
        self.issued_ios += 1
        self.inflight += 1
        req = Request(host.next_io_id, None, self.job_idx, op, bs, off, runner.id, self.hipri)
        req.depth = self.inflight  # fio's cur_depth
        host.next_io_id += 1
        req.flags = self.req_flags
        if self._cmdprio is not None and op != "trim":
            req.ioprio = self._cmdprio(op, bs)
        req.t_submit = now + self._user_io_cycles / runner.freq
        w = self._pick_worker()
        req.task = w.task
        k = self.k
        parts = dict(user=k.user_io_cycles)
        if w.sleeping:
            parts["syscall"] = k.syscall_entry_cycles + k.syscall_exit_cycles  # FUTEX_WAKE
        runner.run(
            self.host.costs.get("offload_queue" + ("_wake" if w.sleeping else ""), **parts),
            lambda: self._hand_over(w, req),
        )

    def _pick_worker(self) -> OffloadWorker:
        """fio's workqueue_enqueue: an idle worker (in turn), else the one with the fewest queued."""
        ws = self.workers
        n = len(ws)
        for i in range(n):
            w = ws[(self._next_worker + i) % n]
            if w.req is None and not w.queue:
                self._next_worker = (self._next_worker + i + 1) % n
                return w
        return min(ws, key=lambda w: len(w.queue))

    def _hand_over(self, w: OffloadWorker, req) -> None:
        w.queue.append(req)
        _futex_wake(w, self.runner)
        self._issue(with_completion=False)

    def _block(self) -> None:
        """Every io_u is in flight: wait on fio's free-io_u condition (FUTEX_WAIT)."""
        self.blocked = True
        k = self.k
        self.runner.run(self.host.costs.get("futex_wait", syscall=k.syscall_entry_cycles), self._sleep)

    def _sleep(self) -> None:
        """Inside FUTEX_WAIT: sleep unless an io_u was freed meanwhile (the futex word changed)."""
        if not self.blocked:
            self._unblocked()
            return
        self.runner.sleep(self._unblocked, iowait=False)

    def _unblocked(self) -> None:
        self.runner.add_carry(self.host.costs.get("futex_return", syscall=self.k.syscall_exit_cycles))
        self._issue(with_completion=False)

    def io_finished(self, req, t: float, runner) -> None:
        """A worker finished ``req`` at ``t`` on ``runner``: fio has it back, an io_u is free again."""
        self._io_completed(req, t)
        self.inflight -= 1
        if self.blocked and (self.inflight < self.depth or (self.draining and not self.inflight)):
            self.blocked = False
            if self.task.state == SLEEPING:
                runner.wake(self.task)

    def _drain(self) -> None:
        """The job is done: wait for the IOs in flight, then stop the workers and exit."""
        self.draining = True
        if self.inflight:
            self._block()
            return
        for w in self.workers:
            w.stop = True
            _futex_wake(w, self.runner)
        self.runner.exit_task()


def _futex_wake(w: OffloadWorker, runner) -> None:
    """Wake worker ``w`` if it waits for work (one that is still on its way into FUTEX_WAIT sees
    the new work itself)."""
    if w.sleeping:
        w.sleeping = False
        if w.task.state == SLEEPING:
            runner.wake(w.task)
