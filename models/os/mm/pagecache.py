"""The page cache: the cached pages of every file (``struct address_space``), the kernel's two LRU
lists, and the read IO that fills it.

**Pages.** A file's pages are identified by their index (byte offset / 4 KiB); a page of the
whole cache by a key ``(mapping id << 40) | index``. The kernel's LRU lists are two ordered dicts
of keys (oldest first), not an object per page: ``inactive`` (new pages go there,
``folio_add_lru``) and ``active``. ``folio_mark_accessed`` on an inactive page sets its
PG_referenced bit (the ``referenced`` set) the first time and moves it to the active list the
second time (promotion on second access). Reclaim (:meth:`PageCache.shrink`) takes pages from
the head (oldest) of the inactive list (``shrink_inactive_list``; clean, unlocked pages only: dirty
pages and pages under IO rotate back), after refilling the inactive list from the active one while
``active > inactive x inactive_ratio``, ``inactive_ratio = int_sqrt(10 x memory in GiB)`` or 1
below 1 GiB (mm/vmscan.c ``inactive_is_low``). It runs when free memory (the cache's memory less
its pages) falls below the zone's watermarks (:mod:`models.os.mm.pagecache_reclaim`): below ``min``
in the allocating task (direct reclaim, :meth:`PageCache.reclaim`), below ``low`` in kswapd.

**Per mapping.** The PG_readahead markers (``markers``), the dirty pages (``dirty``; their
inode's ``dirtied_when``), the pages under writeback (a count, and the in-flight writeback
batches for fsync to wait on), and the read batches in flight (a few intervals: a page inside one
is cached but not uptodate; a reader waits on its batch, as ``filemap_update_page`` sleeps on the
folio lock).
"""

from __future__ import annotations

from itertools import islice
from math import isqrt
from typing import Any, Callable

from models.os.mm.pagecache_config import PAGE_SIZE, PageCacheConfig

#: pages per direct-reclaim attempt (try_to_free_pages' nr_to_reclaim: SWAP_CLUSTER_MAX)
_RECLAIM_BATCH = 32
#: pages one reclaim pass skips (dirty or under IO, rotated to the tail) before it gives up: eight
#: SWAP_CLUSTER_MAX batches (estimate: the kernel raises its scan priority pass after pass,
#: do_try_to_free_pages; a later pass goes on past the rotated pages)
_SCAN_SKIPS = 8 * _RECLAIM_BATCH

__all__ = ["IoBatch", "Mapping", "PageCache"]

_KEY_SHIFT = 40


class IoBatch:
    """Pages ``[start, end)`` of a mapping under one read or writeback IO; ``waiters``: callbacks
    run when it completes."""

    __slots__ = ("start", "end", "done", "waiters")

    def __init__(self, start: int, end: int):
        self.start = start
        self.end = end
        self.done = False
        self.waiters: list[Callable[[Any], None]] = []

    def finish(self, runner: Any) -> None:
        """The IO completed, seen by code on ``runner`` (the completing CPU)."""
        self.done = True
        waiters, self.waiters = self.waiters, []
        for w in waiters:
            w(runner)


class Mapping:
    """One file's pages (``struct address_space``) on device ``dev``, starting at byte ``start``
    of it, ``size`` bytes long (None: a device of unknown capacity, read without an end)."""

    __slots__ = (
        "id",
        "dev",
        "start",
        "size",
        "markers",
        "dirty",
        "dirtied_when",
        "reading",
        "writing",
        "pages",
        "mapped",
        "writable",
    )

    def __init__(self, mid: int, dev: int, start: int, size: int | None):
        self.id = mid
        self.dev = dev
        self.start = start
        self.size = size
        self.markers: set[int] = set()  # pages carrying PG_readahead
        self.dirty: set[int] = set()
        self.dirtied_when = -1.0  # the inode's dirtied_when (ns; -1: clean)
        self.reading: list[IoBatch] = []  # read IOs in flight
        self.writing: list[IoBatch] = []  # writeback IOs in flight
        self.pages = 0  # pages cached
        self.mapped: set[int] = set()  # pages mapped into a process (mmap: a present PTE)
        self.writable: set[int] = set()  # of those, mapped writable (dirtied through the mapping)

    def read_batch(self, index: int) -> IoBatch | None:
        """The read in flight that covers page ``index`` (None: none, the page is uptodate if cached)."""
        for b in self.reading:
            if b.start <= index < b.end:
                return b
        return None

    def key(self, index: int) -> int:
        return (self.id << _KEY_SHIFT) | index


class PageCache:
    """The host's page cache: its mappings, the LRU lists and the global counters (NR_FILE_PAGES,
    NR_FILE_DIRTY, NR_WRITEBACK) that writeback and dirty throttling read."""

    def __init__(self, cfg: PageCacheConfig):
        self.cfg = cfg
        self.capacity = cfg.pages
        #: the zone's watermarks (pages of free memory; PageCacheConfig.watermarks)
        self.wmark_min, self.wmark_low, self.wmark_high = cfg.watermarks()
        self.kswapd_pending = False  # an allocation left free memory below the low watermark
        self.dirty_seen = False  # the last reclaim batch met dirty pages (the flushers are wanted)
        self.direct_reclaims = 0  # allocstall: allocations that reclaimed in the allocating task
        gib = cfg.memory_bytes >> 30
        self.inactive_ratio = isqrt(10 * gib) if gib else 1
        self.inactive: dict[int, None] = {}
        self.active: dict[int, None] = {}
        self.referenced: set[int] = set()
        self.mappings: dict[tuple[int, int], Mapping] = {}
        self._by_id: list[Mapping] = []
        self.nr_dirty = 0  # NR_FILE_DIRTY
        self.nr_writeback = 0  # NR_WRITEBACK
        # statistics: pages found, pages read from the device, pages written back, pages reclaimed
        self.hit_pages = 0
        self.read_pages = 0
        self.written_pages = 0
        self.reclaimed_pages = 0  # by direct reclaim (pgsteal_direct)
        self.kswapd_reclaimed_pages = 0  # by kswapd (pgsteal_kswapd)
        self.faults = 0  # page faults on file mappings (mmap)
        self.hit_bytes = 0  # bytes copied to user space from pages that were uptodate when looked up
        self.miss_bytes = 0  # bytes copied from pages the read had to wait for (read from the device)

    def mapping(self, dev: int, start: int, size: int | None) -> Mapping:
        """The mapping of the file at byte ``start`` of device ``dev`` (made on first use)."""
        m = self.mappings.get((dev, start))
        if m is None:
            m = self.mappings[(dev, start)] = Mapping(len(self._by_id), dev, start, size)
            self._by_id.append(m)
        return m

    @property
    def free_pages(self) -> int:
        """Free memory, pages: the cache's memory less its pages (NR_FREE_PAGES)."""
        return self.capacity - len(self.inactive) - len(self.active)

    @property
    def nr_pages(self) -> int:
        """NR_FILE_PAGES: the pages cached."""
        return len(self.inactive) + len(self.active)

    def cached(self, m: Mapping, index: int) -> bool:
        k = (m.id << _KEY_SHIFT) | index
        return k in self.inactive or k in self.active

    def next_miss(self, m: Mapping, index: int, limit: int) -> int:
        """``page_cache_next_miss``: the first page from ``index`` not cached, at most ``limit`` on."""
        base = m.id << _KEY_SHIFT
        ina, act = self.inactive, self.active
        i = index
        while i < index + limit and ((base | i) in ina or (base | i) in act):
            i += 1
        return i

    def mark_accessed(self, m: Mapping, index: int) -> None:
        """``folio_mark_accessed``: referenced on the first access, active on the second."""
        k = (m.id << _KEY_SHIFT) | index
        ref = self.referenced
        if k in self.inactive:
            if k in ref:
                del self.inactive[k]
                self.active[k] = None
                ref.discard(k)
            else:
                ref.add(k)
        elif k in self.active:
            ref.add(k)

    def add(self, m: Mapping, first: int, n: int) -> int:
        """Add pages ``[first, first + n)`` not cached yet to the inactive list; returns how many
        were added (pages already cached are skipped, as ``page_cache_ra_unbounded`` skips them)."""
        base = m.id << _KEY_SHIFT
        ina, act = self.inactive, self.active
        added = 0
        for i in range(first, first + n):
            k = base | i
            if k not in ina and k not in act:
                ina[k] = None
                added += 1
        m.pages += added
        return added

    def reclaim(self) -> int:
        """After an allocation: below the min watermark (or past the cache's memory), direct reclaim
        in the allocating task, ``SWAP_CLUSTER_MAX`` pages per attempt until free memory is back at
        min; below the low watermark, kswapd is wanted (``kswapd_pending``). Returns the pages the
        task reclaimed."""
        free = self.free_pages
        freed = 0
        if free < self.wmark_min or free < 0:
            want = max(self.wmark_min, 0) - free
            want = -(-want // _RECLAIM_BATCH) * _RECLAIM_BATCH
            self.direct_reclaims += 1
            freed = self.shrink(want)
            free += freed
        if free < self.wmark_low:
            self.kswapd_pending = True
        return freed

    def shrink(self, nr_to_reclaim: int, kswapd: bool = False) -> int:
        """``shrink_lruvec``: free up to ``nr_to_reclaim`` clean, idle pages, oldest inactive first
        (refilling the inactive list from the active one as ``inactive_is_low`` asks); dirty pages
        and pages under IO rotate back (``dirty_seen`` is set when dirty ones were met). Returns the
        pages freed."""
        ina, act = self.inactive, self.active
        freed = 0
        skipped = 0
        self.dirty_seen = False
        while freed < nr_to_reclaim and (ina or act):
            if len(act) > len(ina) * self.inactive_ratio or not ina:
                # shrink_active_list: deactivate a batch of the oldest active pages
                for k in list(islice(act, _RECLAIM_BATCH)):
                    del act[k]
                    ina[k] = None
                    self.referenced.discard(k)
                continue
            # isolate_lru_folios: a batch from the head; clean, idle pages freed, the rest rotated
            for k in list(islice(ina, min(_RECLAIM_BATCH, nr_to_reclaim - freed))):
                del ina[k]
                m = self._by_id[k >> _KEY_SHIFT]
                idx = k & ((1 << _KEY_SHIFT) - 1)
                dirty = idx in m.dirty
                if dirty or m.read_batch(idx) is not None or self._under_writeback(m, idx):
                    ina[k] = None  # not reclaimable now: rotated to the tail
                    self.dirty_seen = self.dirty_seen or dirty
                    skipped += 1
                    continue
                self.referenced.discard(k)
                m.markers.discard(idx)
                m.mapped.discard(idx)  # try_to_unmap
                m.pages -= 1
                freed += 1
            if skipped > len(ina) or skipped > _SCAN_SKIPS:
                break  # every page left is dirty or under IO, or this pass has scanned enough
        if kswapd:
            self.kswapd_reclaimed_pages += freed
        else:
            self.reclaimed_pages += freed
        return freed

    @staticmethod
    def _under_writeback(m: Mapping, idx: int) -> bool:
        return any(b.start <= idx < b.end and not b.done for b in m.writing)

    def invalidate(self, m: Mapping, first: int = 0, n: int = -1) -> int:
        """``invalidate_mapping_pages`` (POSIX_FADV_DONTNEED): drop the clean, idle pages of the
        range (all of the mapping when ``n`` < 0); dirty pages and pages under IO stay. Returns the
        pages dropped."""
        base = m.id << _KEY_SHIFT
        end = first + n if n >= 0 else 1 << _KEY_SHIFT
        dropped = 0
        for lru in (self.inactive, self.active):
            for k in [k for k in lru if k >> _KEY_SHIFT == m.id and first <= (k ^ base) < end]:
                idx = k ^ base
                if idx in m.dirty or m.read_batch(idx) is not None or self._under_writeback(m, idx):
                    continue
                del lru[k]
                self.referenced.discard(k)
                m.markers.discard(idx)
                m.mapped.discard(idx)
                dropped += 1
        m.pages -= dropped
        return dropped

    def mark_dirty(self, m: Mapping, index: int, now: float) -> bool:
        """``folio_mark_dirty``: True if the page was clean (NR_FILE_DIRTY grows)."""
        if index in m.dirty:
            return False
        m.dirty.add(index)
        self.nr_dirty += 1
        if m.dirtied_when < 0:
            m.dirtied_when = now  # __mark_inode_dirty: the inode joins the dirty list
        return True

    def take_dirty(self, m: Mapping, limit: int, first: int = 0, end: int = -1) -> list[tuple[int, int]]:
        """``write_cache_pages``: up to ``limit`` dirty pages of ``m`` in index order (those in
        ``[first, end)`` when ``end`` >= 0), cleared and put under writeback; returned as runs of
        contiguous pages (first page, pages)."""
        if end >= 0:
            pages = [i for i in range(first, end) if i in m.dirty][:limit]
        else:
            pages = sorted(m.dirty)[:limit]
        runs: list[tuple[int, int]] = []
        for i in pages:
            if runs and runs[-1][0] + runs[-1][1] == i:
                runs[-1] = (runs[-1][0], runs[-1][1] + 1)
            else:
                runs.append((i, 1))
        m.dirty.difference_update(pages)
        m.writable.difference_update(pages)  # clear_page_dirty_for_io -> page_mkclean: write-protected again
        self.nr_dirty -= len(pages)
        self.nr_writeback += len(pages)
        if not m.dirty:
            m.dirtied_when = -1.0
        return runs

    def device_offset(self, m: Mapping, index: int) -> int:
        return m.start + index * PAGE_SIZE

    def stats(self) -> dict[str, Any]:
        return {
            "hit_pages": self.hit_pages,
            "read_pages": self.read_pages,
            "written_back_pages": self.written_pages,
            "reclaimed_pages": self.reclaimed_pages,
            "kswapd_reclaimed_pages": self.kswapd_reclaimed_pages,
            "direct_reclaims": self.direct_reclaims,
            "hit_bytes": self.hit_bytes,
            "miss_bytes": self.miss_bytes,
            "cached_pages": self.nr_pages,
            "dirty_pages": self.nr_dirty,
        }
