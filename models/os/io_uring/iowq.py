"""io_uring's io-wq (io_uring/io-wq.c): the worker threads that run a request the submitter could
not complete without blocking, here buffered writes punted by :mod:`.buffered_uring` and its fsyncs.

A punted request is queued on the ring's io-wq (``io_wq_enqueue``); a sleeping worker is woken, or
a new one created while fewer than the bounded maximum exist (``io_wq_create_worker``; at most
``min(sq_entries, 4 x online CPUs)``: ``io_init_wq_offload``, recalled). A worker is a thread of
the submitting process (``iou-wrk-<pid>``, PF_IO_WORKER, created by ``create_io_thread``): nice 0,
any CPU, it competes for CPUs like any task. It runs the write blocking (``io_wq_submit_work`` ->
``io_issue_sqe`` without IOCB_NOWAIT): ``generic_perform_write`` (a partial page not cached is read
first and waited for), the copy, ``balance_dirty_pages_ratelimited`` (which may put it to sleep),
then posts the completion (``io_req_complete_post``; with DEFER_TASKRUN queued for the submitter,
which sees it at its next enter with GETEVENTS).

**Hashed work.** Writes to a regular file are hashed by inode (``io_prep_async_work``:
``hash_reg_file``; recalled): io-wq runs one request of a hash at a time, so buffered writes to one
file are serialized in the workers whatever the queue depth. A block device's are not hashed: up to
the bounded maximum run in parallel.

**fsync** (IORING_OP_FSYNC; fio's ``fsync=N`` / ``fdatasync=N`` / ``end_fsync`` on an io_uring
ring): it can never run in the submitter (io_fsync_prep sets REQ_F_FORCE_ASYNC; before 5.19
io_fsync returned -EAGAIN under IO_URING_F_NONBLOCK; recalled), so every one is queued here. Its
opcode has no ``hash_reg_file``: it is not hashed, and runs beside the file's serialized writes. A
worker runs ``vfs_fsync_range`` as fsync(2) does (:class:`models.ioengines.buffered_io.BufferedThread`):
the file's dirty pages written back (WB_SYNC_ALL) from the worker, which then sleeps until they and
the flusher's bios in flight for the file are written (filemap_fdatawait), and posts the CQE.
IORING_FSYNC_DATASYNC (fdatasync) is the same: neither the journal commit nor the SSD's flush
command is modelled (on a drive without a volatile write cache the block layer drops the flush).

Costs (``PageCacheConfig``): ``iowq_work_cycles`` per request (the worker's dequeue and
``io_write``'s retry set-up), the page cache's work as for any buffered write, the completion
(``KernelCosts.uring_cq_flush_cycles``), ``iowq_create_cycles`` when a worker is created.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from models.os.io_uring.host import UringHost
from models.os.mm.folio_wait import BioWaits
from models.os.sched.task import SLEEPING, kernel_thread

__all__ = ["IoWq"]


class IoWq:
    """The io-wq of one fio io_uring thread (``ring``: its :class:`BufferedUringThread`), running
    its punted buffered writes; ``max_workers`` bounded workers."""

    def __init__(self, ring: Any, max_workers: int):
        self.ring = ring
        self.host: UringHost = ring.host
        self.max_workers = max(1, max_workers)
        self.queue: deque[tuple[Any, Any, bool]] = deque()  # (request, mapping, hashed)
        self.workers: list[IoWorker] = []
        self.busy_hashes: set[int] = set()  # mappings (inodes) a worker is writing
        self.punted = 0

    def enqueue(self, req: Any, m: Any, hashed: bool, waker: Any) -> None:
        """``io_wq_enqueue`` from the submitting call on ``waker``: wake a free worker or create one."""
        self.queue.append((req, m, hashed))
        if req.op == "write":
            self.punted += 1  # (a punted write: fsyncs always come here)
        for w in self.workers:
            if w.idle:
                w.wake(waker)
                return
        if len(self.workers) < self.max_workers and self._wants_worker(hashed):
            w = IoWorker(self, len(self.workers))
            self.workers.append(w)
            w.wake(waker, created=True)

    def _wants_worker(self, hashed: bool) -> bool:
        """No worker is free: a new one is needed for unhashed work, or for hashed work when fewer
        workers are running (or starting) than there are hashes with work (one runs a hash at a time)."""
        if not hashed:
            return True
        active = sum(not w.idle for w in self.workers)
        hashes = {item[1].id for item in self.queue if item[2]} | self.busy_hashes
        return active < len(hashes)

    def take(self) -> tuple[Any, Any, bool] | None:
        """``io_get_next_work``: the oldest request whose hash no other worker is running."""
        busy = self.busy_hashes
        for i, item in enumerate(self.queue):
            if not (item[2] and item[1].id in busy):
                del self.queue[i]
                return item
        return None


class IoWorker(BioWaits):
    """One io-wq worker thread of ``wq``."""

    def __init__(self, wq: IoWq, index: int):
        self.wq = wq
        ring = wq.ring
        host: UringHost = ring.host
        self.host = host
        writeback = host.writeback
        if writeback is None:
            raise RuntimeError("io-wq's buffered writes need the page cache's writeback")
        self.writeback = writeback
        ncpu = len(host.runners)
        task = kernel_thread(host.all_tasks, f"iou-wrk-{ring.task.tid}.{index}", ring.task.cpu, nice=0)
        task.kthread = False  # a thread of the fio process (PF_IO_WORKER), not a kernel thread
        task.affinity = ring.task.affinity if ring.task.affinity is not None else frozenset(range(ncpu))
        task.owner = self
        self.task = task
        self.runner = host.runners[task.cpu]
        self.idle = True
        self._created = False
        # balance_dirty_pages_ratelimited's per-task state (the worker dirties pages itself)
        self.nr_dirtied = 0
        self.nr_dirtied_pause = 32
        self.dev = ring.dev
        self._item: tuple[Any, Any, bool] | None = None
        self._plan: Any = None
        self._waits = 0
        self._batch_done_cb = self._batch_done

    def can_migrate(self) -> bool:
        return True

    def migrated(self, runner: Any) -> None:
        self.runner = runner

    def wake(self, waker: Any, created: bool = False) -> None:
        if self.task.state == SLEEPING:
            self.idle = False
            self._created = created
            self.task.resume = self._next
            waker.wake(self.task)

    def _next(self) -> None:
        """``io_worker_handle_work``: the next request, or sleep (``io_wqe_worker`` idles)."""
        self.runner = runner = self.host.runners[self.task.cpu]
        wq = self.wq
        if self._item is not None:
            if self._item[2]:
                wq.busy_hashes.discard(self._item[1].id)
            self._item = None
        item = wq.take()
        if item is None:
            self.idle = True
            runner.sleep(self._next, iowait=False)
            return
        self._item = item
        req, m, hashed = item
        if hashed:
            wq.busy_hashes.add(m.id)
        ring = wq.ring
        self.dev = m.dev  # (the flusher whose bandwidth paces this worker's dirtying)
        c = ring._pc.cfg
        if req.op == "sync":
            work = c.iowq_work_cycles + (c.iowq_create_cycles if self._created else 0.0)
            self._created = False
            runner.run(self.host.costs.get("iowq_fsync", pagecache=work), self._fsync)
            return
        plan = self._plan = ring._fm.write_plan(m, req.offset - m.start, req.nbytes, runner.clock())
        parts = ring.write_plan_parts(plan, c.iowq_work_cycles + (c.iowq_create_cycles if self._created else 0.0))
        self._created = False
        runner.run(self.host.costs.get("iowq_write", **parts), self._looked_up)

    def _fsync(self) -> None:
        """io_fsync -> vfs_fsync_range: the file's dirty pages written back from this worker
        (file_write_and_wait_range's WB_SYNC_ALL writeback), then the wait."""
        m = self._item[1]  # type: ignore[index]
        runs = self.wq.ring._pc.take_dirty(m, len(m.dirty))
        self.writeback.flushers[m.dev].write_pages(m, runs, self.runner, self._fsync_wait, self.task)

    def _fsync_wait(self) -> None:
        """filemap_fdatawait: the file's pages still under writeback (this worker's and the
        flusher's); then the CQE."""
        self._wait_bios(self._item[1].writing, self._post)  # type: ignore[index]

    def _looked_up(self) -> None:
        """Submit the reads of partial pages; wait for them (the worker may sleep: it is io-wq's)."""
        plan = self._plan
        ring = self.wq.ring
        self.writeback.allocated(self.runner)
        if plan.bios:
            ring._fm.submit_reads(plan, self.task, ring.job_idx, self.runner)
        self._wait_bios(plan.waits, self._copy)

    def _copy(self) -> None:
        req = self._item[0]  # type: ignore[index]
        ring = self.wq.ring
        cost = self.host.costs.get("iowq_copy", pagecache=req.nbytes / ring._copy_bpc)
        self.runner.run(cost, self._balance)

    def _balance(self) -> None:
        """balance_dirty_pages_ratelimited: the worker may be paused (it blocks, the ring does not)."""
        self.writeback.dirtied(self, self._plan.dirtied, self.runner, self._post)

    def _post(self) -> None:
        """io_req_complete_post: the CQE (or, with DEFER_TASKRUN, the submitter's task work)."""
        req = self._item[0]  # type: ignore[index]
        ring = self.wq.ring
        runner = self.runner
        cost = self.host.costs.get("iowq_complete", syscall=ring.k.uring_cq_flush_cycles)
        ring._on_done(runner, req)
        runner.run(cost, lambda: runner.preemption_point(self._next))
