"""fio's ``io_uring`` engine reading a file opened without O_DIRECT: io_uring's asynchronous
buffered reads (Linux 5.9+, files with FMODE_BUF_RASYNC: ext4, xfs, block devices).

io_uring issues each read with IOCB_NOWAIT and IOCB_WAITQ (``io_read`` -> ``filemap_read``). Pages
that are uptodate are copied at once: the read completes inside io_uring_enter (its CQE is posted
before the call returns). A read that misses starts the readahead inline (``page_cache_sync_ra``:
the bios are submitted by the call), and instead of sleeping on the folio lock it queues a wake
callback on it (``folio_lock_async`` -> -EIOCBQUEUED); when the pages are unlocked (the bio's
completion) ``io_async_buf_func`` queues task work that retries the read: the copy and the CQE. So
several missing reads are in flight at once, up to ``iodepth``, without io-wq workers.

Modelled: the lookup, readahead and bios in the submitting call (with the engine's per-IO issue
work), the inline completion of hits, and for misses the retry's copy and completion charged to the
CPU that completed the last bio the read waited for (estimate: the task work runs in the
submitter's context at its next kernel entry).

**Writes** (``io_write``): with FMODE_BUF_WASYNC (``PageCacheConfig.buffered_write_nowait`` on a
kernel from 6.0) the submitter tries each write with IOCB_NOWAIT: ``balance_dirty_pages_ratelimited
_flags(BDP_ASYNC)`` first (a task past its ratelimit with dirty data above the freerun ceiling would
sleep: -EAGAIN), then ``generic_perform_write`` with FGP_NOWAIT (a page the write covers in part
and not uptodate in the cache would be read: -EAGAIN; so would pages whose allocation takes free
memory below the min watermark). A write that need not block dirties its pages and completes in
the call (its CQE is there on return). One that would block is punted to io-wq
(:mod:`.iowq`): its worker threads write it blocking (reading partial pages, sleeping in
``balance_dirty_pages``), serialized per file (hashed by inode) or, on a block device, in parallel.
Without FMODE_BUF_WASYNC every buffered write is punted.

**fsync** (fio's engines/io_uring.c: a DDIR_SYNC io_u is an IORING_OP_FSYNC SQE, with
IORING_FSYNC_DATASYNC for fdatasync): fio makes one after every N-th write it queued (io_u.c
``get_rw_ddir``: ``io_issues[DDIR_WRITE] % fsync_blocks == 0`` right after a write), among the
ring's other SQEs and without waiting for the writes in flight. The submitting call only punts it
(``uring_punt_cycles``: an fsync is always async); an io-wq worker runs it (:mod:`.iowq`). Its CQE is
reaped as the IOs' are, and its time from submit to reap is one sync of fio's ``sync``
statistics, not an IO. ``end_fsync`` / ``fsync_on_close``: when the job's IO is done and reaped, one
fsync per file, each submitted and waited for (fio's ``fio_io_sync``), then the thread exits.
Not modelled: SQPOLL and IOPOLL rings with buffered files (refused; IOPOLL needs O_DIRECT), O_SYNC /
O_DSYNC files (``sync=``; refused).
"""

from __future__ import annotations

from array import array

from models.ioengines.async_io import AsyncThread
from models.ioengines.buffered_io import CachedFiles
from models.ioengines.host import EngineHost
from models.ioengines.job import FioJob
from models.os.block.request import Request
from models.os.io_uring.iowq import IoWq
from models.os.kernel_version import has
from models.os.mm.pagecache_config import PAGE_SHIFT

#: a write punted to io-wq (its plan is the worker's)
PUNTED = None
#: an fsync (IORING_OP_FSYNC): always an io-wq worker's
FSYNC = "fsync"


class BufferedUringThread(CachedFiles, AsyncThread):
    """One fio io_uring thread reading and writing buffered files."""

    def __init__(self, host: EngineHost, job: FioJob, job_idx: int, clone: int, cpu: int, end_ns: float, stream):
        super().__init__(host, job, job_idx, clone, cpu, end_ns, stream)
        self._setup_cache(host)
        self._io_files: list = []  # (mapping, readahead state) of each IO prepared, in order
        #: FMODE_BUF_WASYNC: writes tried with IOCB_NOWAIT in the submitter (else all punted)
        self._nowait_writes = self._pc.cfg.buffered_write_nowait and has(self.k.release, "uring_buffered_write_nowait")
        self._hashed: dict[int, bool] = {}  # by mapping id: a regular file (its io-wq writes hashed by inode)
        #: io-wq's bounded workers: min(sq_entries, 4 x online CPUs) (io_init_wq_offload)
        self.iowq = IoWq(self, min(job.iodepth, 4 * len(host.runners)))
        self.nr_dirtied = 0  # the task's nr_dirtied (balance_dirty_pages_ratelimited)
        self.nr_dirtied_pause = 32
        self.inline_writes = 0
        self._fsync_every = job.fsync  # fio's fsync=N / fdatasync=N
        self._writes = 0  # writes queued (fio's io_issues[DDIR_WRITE])
        self._sync_due = False
        self._syncs = 0  # fsyncs queued, not reaped
        self._end_files: list | None = None  # end_fsync: the files still to sync (None: not started)
        self.fsyncs = 0
        #: fio's syncs: (submit, reap) ns pairs, the run's ``sync`` statistics
        self.sync_log = array("d")

    def use_files(self, regions, service, clone: int) -> None:
        super().use_files(regions, service, clone)
        self._hashed = {m.id: r.is_file for (m, _ra), r in zip(self._maps, regions)}

    def _next_io(self, op: str | None = None) -> tuple[str, int, int]:
        if self._sync_due:  # fio's get_rw_ddir: the io_u after the N-th write is a DDIR_SYNC
            self._sync_due = False
            if op is not None:
                self._pending_op = op  # (a rate's drawn direction waits for the next io_u)
            f = self._cur()
            self._io_files.append(f)
            return "sync", 0, f[0].start
        io = super()._next_io(op)
        self._io_files.append(self._cur())  # (the file fio's file service chose)
        if io[0] == "write" and self._fsync_every:
            self._writes += 1
            self._sync_due = self._writes % self._fsync_every == 0
        return io

    def _commit(self, ios: list) -> None:
        """One io_uring_enter: each read's page-cache work, each write tried without blocking (or
        punted), the bios of all of them, the hits and inline writes completed inline."""
        runner = self.runner
        plans = []
        files, self._io_files = self._io_files[: len(ios)], self._io_files[len(ios) :]
        for req, (m, ra) in zip(ios, files):
            off = req.offset - m.start
            if req.op == "read":
                plans.append(self._fm.read_plan(m, ra, off, req.nbytes))
            elif req.op == "sync":
                plans.append(FSYNC)
                self._syncs += 1
                self.issued_ios -= 1  # (not an IO of fio's number_ios)
            else:
                plans.append(self._try_write(m, off, req.nbytes, runner))
        self.syscalls += 1
        runner.run(self._buffered_enter_cost(ios, plans), lambda: self._entered(ios, plans, files))

    def _try_write(self, m, off: int, nbytes: int, runner):
        """io_write with IOCB_NOWAIT: the write's plan if it completes without blocking, else
        :data:`PUNTED` (-EAGAIN: the request goes to io-wq)."""
        if not self._nowait_writes or self._fm.write_would_block(m, off, nbytes):
            return PUNTED
        wb = self._wb
        bdp = wb.ratelimit_nowait(self)
        if bdp < 0:
            return PUNTED  # balance_dirty_pages would sleep
        plan = self._fm.write_plan(m, off, nbytes, runner.clock())
        plan.balanced = bdp > 0
        wb.account(self, plan.dirtied, runner)
        self.inline_writes += 1
        return plan

    def write_plan_parts(self, plan, pagecache_cycles: float) -> dict:
        """Cycles by layer of a buffered write's page-cache work run by an io-wq worker (its pages,
        the reads of partial pages and their requests), on top of ``pagecache_cycles``."""
        c = self._pc.cfg
        blk = self.host.blk
        nreq = sum(blk.requests_for(n << PAGE_SHIFT) for _m, _f, n, _b in plan.bios)
        parts = dict(
            pagecache=pagecache_cycles
            + c.write_page_cycles * plan.written
            + c.add_page_cycles * plan.added
            + c.reclaim_page_cycles * plan.reclaimed,
            fs=c.readahead_bio_cycles * len(plan.bios),
        )
        if nreq:
            for layer, cyc in self.per_request_parts(1, self.plug_min).items():
                parts[layer] = parts.get(layer, 0.0) + cyc * nreq
        return parts

    def _io_pagecache_cycles(self, req, plan) -> float:
        """The page cache's work of one request in the submitting call."""
        c = self._pc.cfg
        if plan is FSYNC:  # REQ_F_FORCE_ASYNC: straight to io-wq
            return c.uring_punt_cycles
        if plan is PUNTED:  # the IOCB_NOWAIT attempt's set-up, then the punt
            return c.read_call_cycles + c.uring_punt_cycles
        work = c.read_call_cycles + c.lookup_page_cycles * plan.lookups + c.add_page_cycles * plan.added
        work += c.reclaim_page_cycles * plan.reclaimed + c.write_page_cycles * plan.written
        if plan.balanced:
            work += c.balance_dirty_cycles
        if not plan.waits:
            work += req.nbytes / self._copy_bpc  # a hit or a write: copied inside the call
        return work

    def _buffered_enter_cost(self, ios: list, plans: list):
        k = self.k
        c = self._pc.cfg
        blk = self.host.blk
        parts: dict[str, float] = dict(syscall=k.syscall_entry_cycles + k.syscall_exit_cycles)
        nreq = 0
        for req, plan in zip(ios, plans):
            for layer, cyc in self._per_io_parts(req.op, req.nbytes).items():
                if layer != "fs":  # (the page cache's work replaces the direct-IO set-up)
                    parts[layer] = parts.get(layer, 0.0) + cyc
            parts["pagecache"] = parts.get("pagecache", 0.0) + self._io_pagecache_cycles(req, plan)
            if plan is PUNTED or plan is FSYNC:
                continue
            parts["fs"] = parts.get("fs", 0.0) + c.readahead_bio_cycles * len(plan.bios)
            nreq += sum(blk.requests_for(n << PAGE_SHIFT) for _m, _f, n, _b in plan.bios)
        if nreq:
            for layer, cyc in self.per_request_parts(len(ios), self.plug_min).items():
                parts[layer] = parts.get(layer, 0.0) + cyc * nreq
        return self.host.costs.get("io_uring_buffered_enter", **parts)

    def _entered(self, ios: list, plans: list, files: list) -> None:
        runner = self.runner
        t = runner.clock()
        self._wb.allocated(runner)  # wakeup_kswapd below the low watermark
        for req, plan, (m, _ra) in zip(ios, plans, files):
            req.t_issued = t
            if plan is PUNTED or plan is FSYNC:  # (an fsync is never hashed: no hash_reg_file)
                self.iowq.enqueue(req, m, plan is PUNTED and self._hashed.get(m.id, False), runner)
                continue
            if plan.bios:
                self._fm.submit_reads(plan, self.task, self.job_idx, runner)
            waits = [b for b in plan.waits if not b.done]
            if not waits:
                self._on_done(runner, req)  # completed inside the call: its CQE is there on return
                continue
            left = [len(waits)]
            for b in waits:
                b.waiters.append(lambda r, req=req, left=left: self._page_ready(r, req, left))
        if self.defer_tw:
            self._run_local_work()
        runner.preemption_point(self._after_submit)

    def _page_ready(self, runner, req, left: list) -> None:
        """A bio the read waited for completed; at the last, the retry: the copy and the CQE."""
        left[0] -= 1
        if left[0]:
            return
        cost = self.host.costs.get("io_uring_buffered_retry", pagecache=req.nbytes / self._copy_bpc)
        runner.add_carry(cost)
        self._on_done(runner, req)

    # -- fio's syncs -----------------------------------------------------------------------------
    def _take(self, syscall: bool, entered: bool = False) -> None:
        """fio's reap: the fsyncs' CQEs among those posted are syncs of fio's statistics (their
        submit-to-reap time), not IOs; the rest are reaped as IOs."""
        if self._syncs:
            t = self.runner.clock()
            keep = []
            for req in self.ring[: self.visible]:
                if req.op == "sync":
                    self._syncs -= 1
                    self.fsyncs += 1
                    self.sync_log.append(req.t_submit)
                    self.sync_log.append(max(t, req.t_reaped))
                else:
                    keep.append(req)
            gone = self.visible - len(keep)
            if gone:
                self.ring[: self.visible] = keep
                self.visible = len(keep)
        super()._take(syscall, entered)

    def _exit_if_drained(self) -> bool:
        """fio's end_fsync / fsync_on_close: once the job's IO is done and reaped, an fsync of each
        file, submitted and waited for one at a time (fio_io_sync), then the thread's end."""
        if self.job.end_fsync and self.stopping and self.inflight == 0 and not self.ring:
            if self._end_files is None:
                self._end_files = list(self.mappings())
            if self._end_files:
                self._end_sync(self._end_files.pop())
                return True
        return super()._exit_if_drained()

    def _end_sync(self, m) -> None:
        runner = self.runner
        req = Request(self._ledger.new_id(), self.task, self.job_idx, "sync", 0, m.start, runner.id, False)
        req.qp = self._driver.queue_for(self.dev, runner.id, False)
        req.done_cb = self._on_done_cb
        req.t_submit = runner.clock() + self.k.user_io_cycles / runner.freq
        self._io_files.append((m, None))
        self.inflight += 1
        self._commit([req])
