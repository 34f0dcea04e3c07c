"""fio's synchronous engines on a file opened without O_DIRECT (``direct=0``, fio's default): every
read and write goes through the page cache (:mod:`models.os.mm.filemap`, :mod:`models.os.mm.pagecache`).

One IO is, on the thread's CPU: fio's user work and the syscall entry (the thread's submit
bundle), then the page-cache work of the call, decided at the lookup (:meth:`Filemap.read_plan`,
:meth:`Filemap.write_plan`): lookups, pages added, reclaim, readahead bios and their blk-mq and
NVMe submission; then, for a read, a sleep until the pages it needs are uptodate; then the copy
to or from user space (bytes / ``cpu.copy_bytes_per_cycle``); a write then runs
``balance_dirty_pages_ratelimited`` (which may pause the thread, :mod:`models.os.mm.writeback`); the
syscall exit ends it (fio's completion, as for direct IO).

``libaio`` runs here too: Linux performs a buffered ``io_submit`` synchronously (``aio_read`` ->
``call_read_iter`` -> ``filemap_read``), so the IO has completed when io_submit returns and the
effective queue depth is 1 (fio's HOWTO: "Linux may only support queued behavior with
non-buffered I/O").

fio's ``fadvise_hint`` (default on) tells the kernel the job's pattern at open: POSIX_FADV_RANDOM
for a random job (FMODE_RANDOM: no readahead), POSIX_FADV_SEQUENTIAL for a sequential one
(``ra_pages`` doubled). fio's ``invalidate`` (default on) drops the file's clean pages at open
(POSIX_FADV_DONTNEED); ``pre_read`` reads the file into the cache first (no IO counted).
"""

from __future__ import annotations

from array import array
from typing import Any

from models.ioengines.host import EngineHost
from models.ioengines.job import FioJob
from models.ioengines.sync_io import SyncThread
from models.os.mm.folio_wait import BioWaits
from models.os.mm.pagecache_config import PAGE_SHIFT
from models.os.mm.readahead import RaState


class CachedFiles:
    """A fio thread's files in the page cache (mixed into an engine's thread class): a mapping and a
    readahead state per file, fio's fadvise_hint at open, invalidate or pre_read at its start."""

    def _setup_cache(self, host: EngineHost) -> None:
        host.enable_pagecache()  # (the first buffered thread brings the page cache and its flushers)
        fm = host.filemap
        self._fm = fm
        self._pc = fm.cache
        self._wb = host.writeback
        self._copy_bpc: float = host.platform.cpu.copy_bytes_per_cycle
        self._capacity: int | None = host.platform.ssd.capacity_bytes
        # (mapping, readahead state) of each file, by fio's file index; without files the block
        # device's inode (kept apart from the compiled thread's per-file state: mypyc reads its own
        # class attributes natively, so an interpreted subclass cannot extend its per-file state)
        self._maps: list[tuple[Any, RaState]] = [(self._pc.mapping(self.dev, 0, self._capacity), self._new_ra())]

    def _cur(self) -> tuple[Any, RaState]:
        """The mapping and readahead state of the file of the IO being made (fio's current file)."""
        maps = self._maps
        return maps[self.files.cur] if len(maps) > 1 else maps[0]

    def _new_ra(self) -> RaState:
        """``file_ra_state_init`` at open, then fio's fadvise_hint (mm/fadvise.c)."""
        q = self.host.queue
        ra_pages = q.read_ahead_kb // 4
        hint = self.job.fadvise_hint
        if hint == "1":
            hint = "random" if self.offsets.random else "sequential"
        if hint == "sequential":
            ra_pages *= 2  # POSIX_FADV_SEQUENTIAL
        return RaState(ra_pages, q.max_sectors_kb // 4, random=hint == "random")

    def use_files(self, regions, service, clone: int) -> None:
        super().use_files(regions, service, clone)  # type: ignore[misc]
        pc = self._pc
        self._maps = [
            (pc.mapping(r.dev, r.start_bytes, r.size_bytes or self._capacity), self._new_ra()) for r in regions
        ]

    def start(self) -> None:
        self.open_files()
        super().start()  # type: ignore[misc]

    def open_files(self) -> None:
        """fio at the file's open: ``invalidate`` (POSIX_FADV_DONTNEED of the job's range: its clean
        pages dropped) or, with ``pre_read`` (which clears invalidate), the range read into the
        cache before the job's clock starts (the pages are made cached and uptodate at once)."""
        pc = self._pc
        for m, (start, span) in zip(self.mappings(), self._ranges()):
            first = start >> PAGE_SHIFT
            n = (span + (1 << PAGE_SHIFT) - 1) >> PAGE_SHIFT
            if self.job.pre_read:
                pc.add(m, first, n)
                for i in range(first, first + n):
                    pc.mark_accessed(m, i)
                pc.reclaim()
            elif self.job.invalidate:
                pc.invalidate(m, first, n)

    def _ranges(self) -> list[tuple[int, int]]:
        """(first byte within the file, bytes) of the job's range of each of its files."""
        files, offs = self.files, self.offsets
        states = [(st.base_offset, st.span) for st in files.states] if files else [(offs.base_offset, offs.span)]
        return [(base - m.start, span) for (base, span), (m, _ra) in zip(states, self._maps)]

    def mappings(self) -> list:
        """The mappings (files) this thread reads and writes."""
        return [m for m, _ra in self._maps]


class BufferedThread(BioWaits, CachedFiles, SyncThread):
    """One fio thread issuing blocking buffered reads and writes."""

    def __init__(self, host: EngineHost, job: FioJob, job_idx: int, clone: int, cpu: int, end_ns: float, stream):
        super().__init__(host, job, job_idx, clone, cpu, end_ns, stream)
        self._setup_cache(host)
        self._complete_cycles = self.k.syscall_exit_cycles
        self._plan: Any = None
        self._waits = 0
        self._batch_done_cb = self._batch_done
        self._after_lookup_cb = self._after_lookup
        self._copy_cb = self._copy
        self._writes = 0
        self.fsyncs = 0
        self._end_synced = False
        self._end_files: list = []
        self._sync_due = False  # fio's fsync=N: the write that just returned is followed by a sync
        self._sync_start = 0.0
        self._end_syncing = False
        #: fio's syncs (DDIR_SYNC io_us: fsync=N / fdatasync=N, end_fsync): (submit, return) ns pairs,
        #: the run's ``sync`` statistics (scenarios.inputs.fio.output.sync_latencies)
        self.sync_log = array("d")
        self.nr_dirtied = 0  # the task's nr_dirtied (balance_dirty_pages_ratelimited)
        self.nr_dirtied_pause = 32  # its nr_dirtied_pause (initially 128 KiB of pages: copy_process)

    # -- cost bundles ----------------------------------------------------------------------------
    def _submit_cost(self, op: str, nbytes: int, with_completion: bool):
        if op == "trim":
            return super()._submit_cost(op, nbytes, with_completion)
        k = self.k
        parts = dict(user=k.user_io_cycles, syscall=k.syscall_entry_cycles)
        if with_completion:
            parts["syscall"] += k.syscall_exit_cycles
        cost = self._costs[(op, nbytes, with_completion)] = self.host.costs.get(
            f"buffered_{'complete_' if with_completion else ''}submit", **parts
        )
        return cost

    def _lookup_cost(self, plan):
        """The page-cache work of one call (a :class:`models.os.mm.filemap.ReadPlan`) and the blk-mq
        and NVMe submission of its bios."""
        parts = self._plan_parts(plan, self._pc.cfg.read_call_cycles)
        return self.host.costs.get("pagecache_lookup", **parts)

    def _plan_parts(self, plan, pagecache_cycles: float, **first) -> dict:
        """Cycles by layer of a plan's page-cache work (its lookups, added, reclaimed and written
        pages, on top of ``pagecache_cycles``), its readahead bios and their requests' blk-mq and
        NVMe submission; ``first``: layers the caller puts before them."""
        c = self._pc.cfg
        blk = self.host.blk
        nreq = 0
        for _m, _first, pages, _b in plan.bios:
            nreq += blk.requests_for(pages << PAGE_SHIFT)
        parts = dict(
            first,
            pagecache=pagecache_cycles
            + c.lookup_page_cycles * plan.lookups
            + c.add_page_cycles * plan.added
            + c.reclaim_page_cycles * plan.reclaimed
            + c.write_page_cycles * plan.written,
            fs=c.readahead_bio_cycles * len(plan.bios),
        )
        if nreq:
            for layer, cyc in self.per_request_parts().items():
                parts[layer] = parts.get(layer, 0.0) + cyc * nreq
        return parts

    # -- one IO ----------------------------------------------------------------------------------
    def _doorbell(self) -> None:
        """The syscall has entered the kernel: the page-cache work of the read or write."""
        req = self.req
        assert req is not None
        if req.op == "trim":
            super()._doorbell()
            return
        m, ra = self._cur()
        if req.op == "read":
            plan = self._fm.read_plan(m, ra, req.offset - m.start, req.nbytes)
        else:
            plan = self._fm.write_plan(m, req.offset - m.start, req.nbytes, self.runner.clock())
        self._plan = plan
        self.runner.run(self._lookup_cost(plan), self._after_lookup_cb)

    def _after_lookup(self) -> None:
        """Wake kswapd if the call's allocations left free memory below the low watermark; submit
        the call's bios; sleep until the pages it needs are uptodate."""
        plan = self._plan
        self._wb.allocated(self.runner)
        if plan.bios:
            self._fm.submit_reads(plan, self.task, self.job_idx, self.runner)
        self._wait_bios(plan.waits, self._copy_cb)  # folio_wait_locked: io_schedule

    def _copy(self) -> None:
        """copy_to_user / copy_from_user of the call's bytes; a write then balances dirty pages."""
        req = self.req
        assert req is not None
        cost = self.host.costs.get("pagecache_copy", pagecache=req.nbytes / self._copy_bpc)
        if req.op == "write":
            self.runner.run(cost, self._after_write_copy)
        else:
            self.runner.run(cost, self._io_done)

    def _after_write_copy(self) -> None:
        plan = self._plan
        self._writes += 1
        every = self.job.fsync
        if self.job.sync != "none":
            then = self._fsync_write  # O_SYNC/O_DSYNC: generic_write_sync inside write(2)
        else:
            self._sync_due = bool(every) and self._writes % every == 0
            then = self._io_done
        self._wb.dirtied(self, plan.dirtied, self.runner, then)

    def _start_sync(self) -> bool:
        """fio's fsync=N / fdatasync=N: after every N-th write returns (completed: its latency is the
        write's alone), fio's next io_u is a DDIR_SYNC (io_u.c ``get_rw_ddir``), its own system call:
        fio's work on the io_u, the call's entry, the file's writeback and wait
        (:meth:`_fsync_write`), its exit. Its time from submit to return is a sync latency (fio's
        ``sync`` statistics), not an IO's. False when the job has ended (fio asks for no io_u)."""
        runner = self.runner
        t0 = runner.clock() + self._complete_cycles / runner.freq
        if self._finished(t0):
            return False
        req = self.req
        assert req is not None
        self._io_completed(req, t0)
        k = self.k
        self._sync_start = t0 + k.user_io_cycles / runner.freq
        cost = self.host.costs.get(
            "fsync_call", user=k.user_io_cycles, syscall=self._complete_cycles + k.syscall_entry_cycles
        )
        runner.run(cost, self._fsync_write)
        return True

    def _sync_returned(self) -> None:
        """The fsync system call's exit; the sync is logged; fio's next IO."""
        self.runner.run(self.host.costs.get("fsync_return", syscall=self.k.syscall_exit_cycles), self._after_sync)

    def _after_sync(self) -> None:
        self.sync_log.append(self._sync_start)
        self.sync_log.append(self.runner.clock())
        self._issue(False)

    def _issue(self, with_completion: bool) -> None:
        """fio's sync after every N-th write (:meth:`_start_sync`); fio's ``end_fsync`` /
        ``fsync_on_close``: when the job's IO ends, the last IO completes, then each file is synced
        (one sync each: fio's ``fio_io_sync``, counted in its sync statistics; its time is the job's,
        not an IO's), then the thread exits."""
        if with_completion and self._sync_due:
            self._sync_due = False
            if self._start_sync():
                return
        if self.job.end_fsync and not self._end_synced:
            runner = self.runner
            t0 = runner.clock() + (self._complete_cycles / runner.freq if with_completion else 0.0)
            if self._finished(t0):
                self._end_synced = True
                if with_completion and self.req is not None:
                    self._io_completed(self.req, t0)
                k = self.k
                exit_cycles = k.syscall_exit_cycles if with_completion else 0.0
                self._end_files = list(self.mappings())
                self.runner.run(
                    self.host.costs.get("end_fsync_call", syscall=exit_cycles + k.syscall_entry_cycles),
                    self._end_fsync_next,
                )
                return
        super()._issue(with_completion)

    def _end_fsync_next(self) -> None:
        """Sync the next file of the job's end (each a sync of fio's statistics); then the thread's
        end (fio's exit path)."""
        now = self.runner.clock()
        if self._end_syncing:  # the previous file's sync ended
            self.sync_log.append(self._sync_start)
            self.sync_log.append(now)
        if not self._end_files:
            self.req = None
            self.runner.run(
                self.host.costs.get("end_fsync_return", syscall=self.k.syscall_exit_cycles), self._end_after_fsyncs
            )
            return
        m = self._end_files.pop()
        self._end_syncing = True
        self._sync_start = now
        runs = self._pc.take_dirty(m, len(m.dirty))
        self.fsyncs += 1
        self._wb.flushers[m.dev].write_pages(m, runs, self.runner, self._end_fsync_next, self.task)

    def _end_after_fsyncs(self) -> None:
        super()._issue(False)  # _finished: the thread exits

    def _fsync_write(self) -> None:
        m = self._cur()[0]
        if self.job.sync != "none":  # vfs_fsync_range(pos, pos + len - 1): this write's pages
            req = self.req
            assert req is not None
            off = req.offset - m.start
            first, end = off >> PAGE_SHIFT, (off + req.nbytes + (1 << PAGE_SHIFT) - 1) >> PAGE_SHIFT
            runs = self._pc.take_dirty(m, end - first, first, end)
        else:
            runs = self._pc.take_dirty(m, len(m.dirty))
        self.fsyncs += 1
        self._wb.flushers[m.dev].write_pages(m, runs, self.runner, self._fsync_wait, self.task)

    def _fsync_wait(self) -> None:
        """filemap_fdatawait: the file's pages still under writeback (the flusher's; with O_SYNC /
        O_DSYNC those of the written range)."""
        m = self._cur()[0]
        waits = m.writing
        req = self.req
        if self.job.sync != "none" and req is not None:
            off = req.offset - m.start
            first, end = off >> PAGE_SHIFT, (off + req.nbytes + (1 << PAGE_SHIFT) - 1) >> PAGE_SHIFT
            waits = [b for b in waits if b.start < end and first < b.end]
        self._wait_bios(waits, self._io_done if self.job.sync != "none" else self._sync_returned)

    def _io_done(self) -> None:
        req = self.req
        assert req is not None
        req.done = True
        self._completed()
