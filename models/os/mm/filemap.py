"""Buffered file IO in the kernel's terms (mm/filemap.c): what a ``read(2)`` or ``write(2)`` on a
file opened without O_DIRECT does to the page cache (:mod:`models.os.mm.pagecache`), the read bios it
sends down the block layer, and the completions that make pages uptodate.

**A read** (``filemap_read`` -> ``filemap_get_pages``), page by page over the request: a page not
cached starts the synchronous readahead (``page_cache_sync_ra``, :mod:`models.os.mm.readahead`), whose
new pages are added to the cache and read in one bio per contiguous run (``read_pages`` under a
plug; blk-mq splits it at ``max_sectors_kb``); a page carrying PG_readahead clears it and starts
the asynchronous readahead (``page_cache_async_ra``); a page still being read makes the reader wait
for its bio (``filemap_update_page`` sleeps on the folio lock); every page read is marked accessed
(``folio_mark_accessed``; not the first page when the read starts in the page where the previous
one ended) and copied to user space (``copy_folio_to_iter``), priced per byte by the CPU's copy
bandwidth (``cpu.copy_bytes_per_cycle``). ``ra->prev_pos`` is set to the end of the read.

:meth:`Filemap.read_plan` decides all of it at the moment of the lookup (a :class:`ReadPlan`: the
pages found uptodate, the pages added, the bios, the reads to wait for); the calling thread charges
its CPU work, submits the bios (:meth:`Filemap.submit_reads`) and sleeps until the reads it needs
are done.
"""

from __future__ import annotations

from typing import Any

from models.os.block.request import Request
from models.os.mm.host import MmHost
from models.os.mm.pagecache import IoBatch, Mapping, PageCache
from models.os.mm.pagecache_config import PAGE_SHIFT, PAGE_SIZE
from models.os.mm.readahead import RaState

__all__ = ["Filemap", "ReadPlan"]


class ReadPlan:
    """What one buffered read does: ``lookups`` pages looked up, ``added`` pages added to the cache,
    ``bios`` to submit ((mapping, first page, pages, batch)), ``waits`` (the reads in flight it
    needs), and its bytes from pages that were uptodate (``hit_bytes``) or not (``miss_bytes``)."""

    __slots__ = (
        "lookups",
        "added",
        "bios",
        "waits",
        "hit_bytes",
        "miss_bytes",
        "reclaimed",
        "written",
        "dirtied",
        "faults",
        "mapped",
        "balanced",
    )

    def __init__(self) -> None:
        self.balanced = False  # a balance_dirty_pages pass ran before the write (io_uring's NOWAIT try)
        self.faults = 0  # page faults taken (mmap)
        self.mapped = 0  # pages mapped by them (PTEs set, fault-around included)
        self.written = 0  # pages written (write_begin .. write_end)
        self.dirtied = 0  # pages that were clean and are now dirty
        self.lookups = 0
        self.added = 0
        self.bios: list[tuple[Mapping, int, int, IoBatch]] = []
        self.waits: list[IoBatch] = []
        self.hit_bytes = 0
        self.miss_bytes = 0
        self.reclaimed = 0


class Filemap:
    """The kernel's buffered IO paths over one :class:`PageCache`, for the host ``host`` (its
    driver and blk-mq carry the bios)."""

    def __init__(self, host: MmHost, cache: PageCache):
        self.host = host
        self.cache = cache
        self._ids = 0
        self.read_bios = 0

    # -- reads ---------------------------------------------------------------------------------
    def read_plan(self, m: Mapping, ra: RaState, off: int, nbytes: int) -> ReadPlan:
        """``filemap_read`` of ``nbytes`` at byte ``off`` of the file ``m`` with readahead state
        ``ra``: the page-cache work, decided now (see the module's docstring)."""
        pc = self.cache
        plan = ReadPlan()
        index = off >> PAGE_SHIFT
        last = (off + nbytes + PAGE_SIZE - 1) >> PAGE_SHIFT
        prev_page = (ra.prev_pos - 1) >> PAGE_SHIFT if ra.prev_pos > 0 else -1
        end = off + nbytes
        i = index
        while i < last:
            if not pc.cached(m, i):
                start, n, marker = ra.sync_ra(i, last - i)
                self._readahead(plan, m, start, max(n, 1), marker)
                if not pc.cached(m, i):  # the window went past it: filemap_create_folio reads the page
                    self._readahead(plan, m, i, 1, -1)
            b = m.read_batch(i)
            page_bytes = min(end, (i + 1) << PAGE_SHIFT) - max(off, i << PAGE_SHIFT)
            if b is None:
                plan.hit_bytes += page_bytes
                pc.hit_pages += 1
            else:
                plan.miss_bytes += page_bytes
                if b not in plan.waits:
                    plan.waits.append(b)
            if i in m.markers:  # PG_readahead: page_cache_async_ra
                m.markers.discard(i)
                if not any(w.start <= i < w.end and not w.done for w in m.writing):
                    nxt = pc.next_miss(m, i + 1, ra.ra_pages)
                    start, n, marker = ra.async_ra(i, last - i, nxt)
                    if n:
                        self._readahead(plan, m, start, n, marker)
            if i != index or index != prev_page:  # not the page the previous read ended in
                pc.mark_accessed(m, i)
            plan.lookups += 1
            i += 1
        ra.prev_pos = end
        pc.hit_bytes += plan.hit_bytes
        pc.miss_bytes += plan.miss_bytes
        plan.reclaimed = pc.reclaim()
        return plan

    def _readahead(self, plan: ReadPlan, m: Mapping, start: int, n: int, marker: int) -> None:
        """Add the pages ``[start, start + n)`` not cached (within the file) and read each run of them
        in one bio; the marker page gets PG_readahead."""
        pc = self.cache
        last_page = (m.size + PAGE_SIZE - 1) >> PAGE_SHIFT if m.size else start + n
        n = max(0, min(n, last_page - start))
        run = -1
        for i in range(start, start + n + 1):
            missing = i < start + n and not pc.cached(m, i)
            if missing and run < 0:
                run = i
            elif not missing and run >= 0:
                pages = i - run
                pc.add(m, run, pages)
                batch = IoBatch(run, i)
                m.reading.append(batch)
                plan.bios.append((m, run, pages, batch))
                plan.added += pages
                pc.read_pages += pages
                run = -1
        if 0 <= marker < start + n:
            m.markers.add(marker)

    # -- writes --------------------------------------------------------------------------------
    def write_plan(self, m: Mapping, off: int, nbytes: int, now: float) -> ReadPlan:
        """``generic_perform_write`` of ``nbytes`` at byte ``off`` of ``m``, page by page:
        ``write_begin`` finds the page or adds it (a page the write covers only in part, not
        cached, is read first and the write waits for it: read-modify-write), the copy, then
        ``write_end`` marks it dirty (``folio_mark_dirty``)."""
        pc = self.cache
        plan = ReadPlan()
        index = off >> PAGE_SHIFT
        end = off + nbytes
        last = (end + PAGE_SIZE - 1) >> PAGE_SHIFT
        for i in range(index, last):
            full = off <= i << PAGE_SHIFT and end >= (i + 1) << PAGE_SHIFT
            if not pc.cached(m, i):
                if full:
                    plan.added += pc.add(m, i, 1)
                else:
                    self._readahead(plan, m, i, 1, -1)
            b = m.read_batch(i)
            if b is not None and not full and b not in plan.waits:
                plan.waits.append(b)
            plan.written += 1
            if pc.mark_dirty(m, i, now):
                plan.dirtied += 1
            pc.mark_accessed(m, i)
        plan.reclaimed = pc.reclaim()
        return plan

    def write_would_block(self, m: Mapping, off: int, nbytes: int) -> bool:
        """Whether a buffered write with IOCB_NOWAIT (io_uring's first attempt) would return -EAGAIN
        in ``write_begin`` (FGP_NOWAIT): a page it covers only in part is not uptodate in the cache
        (it would have to be read), or the pages it must add would take free memory below the min
        watermark (a GFP_NOWAIT allocation does not reclaim)."""
        pc = self.cache
        end = off + nbytes
        first, last = off >> PAGE_SHIFT, (end + PAGE_SIZE - 1) >> PAGE_SHIFT
        new = 0
        for i in range(first, last):
            cached = pc.cached(m, i)
            new += not cached
            if (i << PAGE_SHIFT < off or end < (i + 1) << PAGE_SHIFT) and (not cached or m.read_batch(i) is not None):
                return True
        return new > 0 and pc.free_pages - new < pc.wmark_min

    # -- faults on a shared file mapping (mmap) -------------------------------------------------
    def fault_plan(self, m: Mapping, ra: RaState, off: int, nbytes: int, write: bool, now: float) -> ReadPlan:
        """A user-space copy of ``nbytes`` at byte ``off`` of ``m`` through a MAP_SHARED mapping:
        the page faults it takes. A page not mapped faults (``filemap_fault``): cached, it is a
        minor fault; a read fault also maps the cached, uptodate pages of its 64 KiB window
        (``filemap_map_pages``, fault_around_bytes); not cached, the mapping's readahead runs
        (``do_sync_mmap_readahead``: none with MADV_RANDOM, ``ra_pages`` from the page with
        MADV_SEQUENTIAL, else read-around: ``ra_pages`` centred on it, marker ``ra_pages / 4``
        before its end) and the fault waits for the page. A write to a page not mapped writable
        faults too (``do_shared_fault`` / ``wp_page_shared``: ``page_mkwrite``, the page dirtied)."""
        pc = self.cache
        plan = ReadPlan()
        index = off >> PAGE_SHIFT
        end = off + nbytes
        for i in range(index, (end + PAGE_SIZE - 1) >> PAGE_SHIFT):
            page_bytes = min(end, (i + 1) << PAGE_SHIFT) - max(off, i << PAGE_SHIFT)
            if i in m.mapped and (not write or i in m.writable):
                plan.hit_bytes += page_bytes  # no fault: the copy reads or writes the page
                pc.hit_pages += 1
                continue
            plan.faults += 1
            if i not in m.mapped:
                self._fault_in(plan, m, ra, i, write)
            b = m.read_batch(i)
            if b is None:
                plan.hit_bytes += page_bytes
                pc.hit_pages += 1
            else:
                plan.miss_bytes += page_bytes
                if b not in plan.waits:
                    plan.waits.append(b)
            if write:
                plan.written += 1  # page_mkwrite, the PTE made writable
                m.writable.add(i)
                if pc.mark_dirty(m, i, now):
                    plan.dirtied += 1
        pc.hit_bytes += plan.hit_bytes
        pc.miss_bytes += plan.miss_bytes
        pc.faults += plan.faults
        plan.reclaimed = pc.reclaim()
        return plan

    def _fault_in(self, plan: ReadPlan, m: Mapping, ra: RaState, i: int, write: bool) -> None:
        """``filemap_fault`` of page ``i`` (and, for a read, ``filemap_map_pages``' fault-around)."""
        pc = self.cache
        if not pc.cached(m, i):
            if ra.random or ra.ra_pages == 0:  # VM_RAND_READ: just the page
                self._readahead(plan, m, i, 1, -1)
            elif ra.mmap_seq:  # VM_SEQ_READ: page_cache_sync_ra(ractl, ra->ra_pages)
                start, n, marker = ra.sync_ra(i, ra.ra_pages)
                self._readahead(plan, m, start, n, marker)
            else:  # read-around
                ra.start = max(0, i - ra.ra_pages // 2)
                ra.size = ra.ra_pages
                ra.async_size = ra.ra_pages // 4
                self._readahead(plan, m, ra.start, ra.size, ra.start + ra.size - ra.async_size)
            if not pc.cached(m, i):
                self._readahead(plan, m, i, 1, -1)
        elif i in m.markers and not ra.random:  # do_async_mmap_readahead
            m.markers.discard(i)
            start, n, marker = ra.async_ra(i, ra.ra_pages, pc.next_miss(m, i + 1, ra.ra_pages))
            if n:
                self._readahead(plan, m, start, n, marker)
        plan.lookups += 1
        pc.mark_accessed(m, i)
        m.mapped.add(i)
        plan.mapped += 1
        if write:
            return
        first = i & ~15  # fault_around_bytes 64 KiB: 16 pages
        for j in range(first, first + 16):
            if j != i and j not in m.mapped and pc.cached(m, j) and m.read_batch(j) is None:
                m.mapped.add(j)
                plan.mapped += 1

    def submit_reads(self, plan: ReadPlan, task: Any, job: int, runner: Any) -> None:
        """``read_pages``: one request per bio, interrupt-driven, on ``runner``'s hardware queue."""
        for m, first, pages, batch in plan.bios:
            self._ids += 1
            req = Request(
                -(1 << 40) - self._ids,
                task,
                job,
                "read",
                pages * PAGE_SIZE,
                m.start + first * PAGE_SIZE,
                runner.id,
                False,
            )
            req.qp = self.host.driver.queue_for(m.dev, runner.id, False)
            req.done_cb = lambda r, _req, b=batch, mm=m: self._read_done(r, mm, b)
            self.read_bios += 1
            self.host.blk.issue(req, runner)

    def _read_done(self, runner: Any, m: Mapping, batch: IoBatch) -> None:
        """The read bio completed (``mpage_end_io``): its pages are uptodate and unlocked; waiters wake."""
        m.reading.remove(batch)
        cfg = self.cache.cfg
        runner.add_carry(
            self.host.costs.get("pagecache_read_end", pagecache=cfg.end_read_page_cycles * (batch.end - batch.start))
        )
        batch.finish(runner)
