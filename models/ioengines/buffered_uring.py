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
submitter's context at its next kernel entry). Not modelled: buffered writes (io_uring punts them to
io-wq workers on ext4; refused), SQPOLL and IOPOLL rings with buffered files (refused; IOPOLL
needs O_DIRECT).
"""

from __future__ import annotations

from models.ioengines.async_io import AsyncThread
from models.ioengines.buffered_io import CachedFiles
from models.os.pagecache_config import PAGE_SHIFT


class BufferedUringThread(CachedFiles, AsyncThread):
    """One fio io_uring thread reading buffered files."""

    def __init__(self, host, job, job_idx: int, clone: int, cpu: int, end_ns: float, stream):
        super().__init__(host, job, job_idx, clone, cpu, end_ns, stream)
        self._setup_cache(host)
        self._io_files: list = []  # (mapping, readahead state) of each IO prepared, in order

    def _next_io(self, op: str | None = None) -> tuple[str, int, int]:
        io = super()._next_io(op)
        self._io_files.append(self._cur())  # (the file fio's file service chose)
        return io

    def _commit(self, ios: list) -> None:
        """One io_uring_enter: each read's page-cache work, the bios of all of them, the hits
        completed inline."""
        runner = self.runner
        plans = []
        files, self._io_files = self._io_files[: len(ios)], self._io_files[len(ios) :]
        for req, (m, ra) in zip(ios, files):
            plans.append(self._fm.read_plan(m, ra, req.offset - m.start, req.nbytes))
        self.syscalls += 1
        runner.run(self._buffered_enter_cost(ios, plans), lambda: self._entered(ios, plans))

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
            work = c.read_call_cycles + c.lookup_page_cycles * plan.lookups + c.add_page_cycles * plan.added
            work += c.reclaim_page_cycles * plan.reclaimed
            if not plan.waits:
                work += req.nbytes / self._copy_bpc  # a hit: copied inside the call
            parts["pagecache"] = parts.get("pagecache", 0.0) + work
            parts["fs"] = parts.get("fs", 0.0) + c.readahead_bio_cycles * len(plan.bios)
            nreq += sum(blk.requests_for(n << PAGE_SHIFT) for _m, _f, n, _b in plan.bios)
        if nreq:
            for layer, cyc in self.per_request_parts(len(ios), self.plug_min).items():
                parts[layer] = parts.get(layer, 0.0) + cyc * nreq
        return self.host.costs.get("io_uring_buffered_enter", **parts)

    def _entered(self, ios: list, plans: list) -> None:
        runner = self.runner
        t = runner.clock()
        self._wb.allocated(runner)  # wakeup_kswapd below the low watermark
        for req, plan in zip(ios, plans):
            req.t_issued = t
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
