"""The page cache's configuration (a platform's ``pagecache``): its memory, the vm sysctls of dirty
data and writeback, and the CPU work of each page-cache action, in cycles.

The sysctl defaults are the kernel's (mm/page-writeback.c: ``dirty_background_ratio = 10``,
``vm_dirty_ratio = 20``, ``dirty_writeback_interval = 5 * 100``, ``dirty_expire_interval =
30 * 100`` centiseconds; unchanged through v6.6). The cycle costs are estimates: no published
measurement prices a page-cache hit by its parts; they are set so that a 4 KiB hit (syscall,
lookup, copy) costs ~0.5-1 us on a ~3 GHz server core, the range that syscall entry/exit with
mitigations (~0.1-0.3 us), an xarray lookup with its reference count (~50-100 ns) and a 4 KiB copy
at ~10-20 GB/s (0.2-0.4 us) add up to.
"""

from __future__ import annotations

from math import isqrt

from pydantic import Field, model_validator

from simcore.config import Model

#: The kernel's page: 4 KiB on x86-64 (PAGE_SHIFT 12).
PAGE_SIZE = 4096
PAGE_SHIFT = 12
#: the page cache's memory when nothing says more (a platform with its DRAM stated takes half of it,
#: at most this: models.platform.PlatformConfig)
PAGECACHE_DEFAULT_BYTES = 16 << 30


def default_min_free_kbytes(memory_bytes: int) -> int:
    """``init_per_zone_wmark_min``: ``int_sqrt(lowmem_kbytes * 16)`` clamped to [128, 262144]
    (mm/page_alloc.c; the upper clamp was 65536 before v5.x: recalled)."""
    return min(262144, max(128, isqrt((memory_bytes >> 10) * 16)))


def watermarks(memory_bytes: int, min_free_kbytes: int, scale_factor: int) -> tuple[int, int, int]:
    """``__setup_per_zone_wmarks`` for one zone of ``memory_bytes``: (min, low, high), pages."""
    wmin = (min_free_kbytes << 10) // PAGE_SIZE
    managed = memory_bytes // PAGE_SIZE
    step = max(wmin >> 2, managed * scale_factor // 10000)
    return wmin, wmin + step, wmin + 2 * step


class PageCacheConfig(Model):
    """The page cache of a host: its memory and the vm sysctls of dirty data."""

    memory_bytes: int = Field(
        PAGECACHE_DEFAULT_BYTES,
        gt=0,
        description="memory the page cache may hold: free pages plus file pages at the start of the"
        " run (global_dirtyable_memory: NR_FREE_PAGES + NR_ACTIVE_FILE + NR_INACTIVE_FILE), bytes; the"
        " dirty ratios apply to it. Estimate: half the platform's installed memory_bytes when it states"
        " it, at most 16 GiB (a lightly used server); set it from /proc/meminfo's MemFree +"
        " Active(file) + Inactive(file)",
    )
    dirty_background_ratio: int = Field(
        10,
        ge=0,
        le=100,
        description="vm.dirty_background_ratio, % of the page cache's memory: above it the flusher"
        " writes back in the background (mm/page-writeback.c default 10)",
    )
    dirty_ratio: int = Field(
        20,
        ge=1,
        le=100,
        description="vm.dirty_ratio, % of the page cache's memory: the hard limit of dirty plus"
        " writeback pages (mm/page-writeback.c default 20); writers are throttled between the"
        " freerun ceiling (halfway from the background threshold) and it",
    )
    dirty_expire_centisecs: int = Field(
        3000,
        ge=0,
        description="vm.dirty_expire_centisecs: dirty data older than this is written back by the"
        " periodic (kupdate) writeback (mm/page-writeback.c dirty_expire_interval, 30 s)",
    )
    dirty_writeback_centisecs: int = Field(
        500,
        ge=0,
        description="vm.dirty_writeback_centisecs: period of the flusher's kupdate pass"
        " (mm/page-writeback.c dirty_writeback_interval, 5 s); 0: no periodic writeback",
    )
    read_call_cycles: float = Field(
        400,
        ge=0,
        description="filemap_read's work per call apart from its pages: the iocb and iov_iter set-up,"
        " the folio batch, file_accessed (atime) (estimate, ~0.1 us)",
    )
    lookup_page_cycles: float = Field(
        250,
        ge=0,
        description="one page found in the cache: the xarray walk under RCU, folio_try_get, the"
        " uptodate and readahead-flag checks, folio_mark_accessed, folio_put (estimate: ~50-100 ns)",
    )
    add_page_cycles: float = Field(
        900,
        ge=0,
        description="one page added to the cache: the page allocation, __filemap_add_folio's xarray"
        " insert and memcg charge, folio_add_lru (estimate, ~0.25 us)",
    )
    readahead_bio_cycles: float = Field(
        1500,
        ge=0,
        description="a readahead's file-system work per window: read_pages' plug, ext4/iomap"
        " readahead mapping the extent and building the bio (estimate; per page: add_page_cycles)",
    )
    end_read_page_cycles: float = Field(
        120,
        ge=0,
        description="one page at the read bio's completion (mpage_end_io / iomap_read_end_io):"
        " folio_mark_uptodate, folio_unlock and its waiter wake-up check (estimate)",
    )
    write_page_cycles: float = Field(
        700,
        ge=0,
        description="one page of a buffered write apart from the copy: write_begin's lookup (or the"
        " allocation: add_page_cycles), write_end, folio_mark_dirty's accounting (NR_FILE_DIRTY, the"
        " xarray dirty tag, the inode on the bdi's dirty list) (estimate)",
    )
    fault_cycles: float = Field(
        1200,
        ge=0,
        description="one page fault on a file mapping apart from its pages: the exception entry and"
        " exit (with KPTI, like a system call's), handle_mm_fault's page-table walk, the VMA lookup"
        " under the mmap lock (estimate, ~0.35 us)",
    )
    map_page_cycles: float = Field(
        150,
        ge=0,
        description="one page mapped by a fault (filemap_map_pages / finish_fault: the folio reference,"
        " rmap and the PTE) (estimate)",
    )
    balance_dirty_cycles: float = Field(
        1500,
        ge=0,
        description="one balance_dirty_pages pass: the global and per-wb dirty state, the limits,"
        " pos_ratio and the pause (estimate)",
    )
    writeback_page_cycles: float = Field(
        300,
        ge=0,
        description="one dirty page written back: write_cache_pages' tagged lookup, clearing the dirty"
        " tag, folio_start_writeback, adding it to the bio (estimate)",
    )
    writeback_bio_cycles: float = Field(
        2000,
        ge=0,
        description="one writeback bio: the file system's block mapping (ext4 mpage / iomap"
        " writepages) and bio allocation and submission (estimate)",
    )
    end_writeback_page_cycles: float = Field(
        150,
        ge=0,
        description="one page at the write bio's completion: folio_end_writeback, NR_WRITEBACK, the"
        " writeout fraction (estimate)",
    )
    reclaim_page_cycles: float = Field(
        400,
        ge=0,
        description="one clean page reclaimed from the inactive list (shrink_folio_list,"
        " __remove_mapping, freeing it), charged to the task that reclaims it: the allocating task"
        " (direct reclaim) or kswapd (estimate)",
    )
    min_free_kbytes: int | None = Field(
        None,
        ge=0,
        description="vm.min_free_kbytes, KiB: the min watermark of free memory (below it an allocation"
        " reclaims in the allocating task). None: the kernel's default, init_per_zone_wmark_min:"
        " int_sqrt(memory in KiB x 16) clamped to [128, 262144] (mm/page_alloc.c), here over the page"
        " cache's memory_bytes (estimate: the kernel's is over all of the zone's memory; set the"
        " machine's /proc/sys/vm/min_free_kbytes for its value)",
    )
    watermark_scale_factor: int = Field(
        10,
        ge=1,
        le=3000,
        description="vm.watermark_scale_factor, 1/10000 of memory: the distance between the min, low and"
        " high watermarks (at least min/4; __setup_per_zone_wmarks, default 10 = 0.1 %, range 1-3000),"
        " of the page cache's memory_bytes (estimate: the kernel's zone is all of its memory). kswapd is"
        " woken below low and reclaims until high",
    )
    kswapd_batch_cycles: float = Field(
        2500,
        ge=0,
        description="one kswapd reclaim batch of SWAP_CLUSTER_MAX pages apart from its pages:"
        " balance_pgdat's zone checks, shrink_node's lruvec walk, isolating the batch under the LRU lock"
        " (estimate, ~0.8 us; per page freed: reclaim_page_cycles)",
    )
    buffered_write_nowait: bool = Field(
        True,
        description="the file system takes io_uring's buffered writes with IOCB_NOWAIT"
        " (FMODE_BUF_WASYNC: XFS and block devices from Linux 6.0, btrfs from 6.1; recalled): a write"
        " that need not block completes in the submitting call; false (ext4, or a kernel before 6.0,"
        " which is taken as false whatever this says): every buffered write from io_uring is punted"
        " to io-wq",
    )
    uring_punt_cycles: float = Field(
        2500,
        ge=0,
        description="io_uring's punt of a request that would block (-EAGAIN from the IOCB_NOWAIT"
        " attempt): io_queue_iowq, the iovec copied to the request's async data, io_wq_enqueue and the"
        " worker's wake-up check (estimate, ~0.8 us)",
    )
    iowq_work_cycles: float = Field(
        2000,
        ge=0,
        description="an io-wq worker's work per request apart from the write itself:"
        " io_worker_handle_work's dequeue, io_wq_submit_work, io_write's retry set-up (estimate)",
    )
    iowq_create_cycles: float = Field(
        60000,
        ge=0,
        description="creating an io-wq worker (create_io_thread: copy_process of a thread of the"
        " submitting process), charged to the new worker's first run (estimate, ~20 us)",
    )
    flusher_run_cycles: float = Field(
        3000,
        ge=0,
        description="one pass of the flusher's work item (wb_workfn -> wb_writeback:"
        " queue_io, the inode's __writeback_single_inode set-up, the plug) (estimate)",
    )

    @model_validator(mode="after")
    def _thresholds(self) -> "PageCacheConfig":
        if self.memory_bytes < 64 * PAGE_SIZE:
            raise ValueError(f"pagecache.memory_bytes={self.memory_bytes}: at least 64 pages (256 KiB) are needed")
        return self

    def watermarks(self) -> tuple[int, int, int]:
        """The (min, low, high) watermarks of free memory, pages: the zone is the page cache's memory
        (its free and file pages), an estimate (the kernel's zone holds all of the node's memory)."""
        kb = self.min_free_kbytes
        if kb is None:
            kb = default_min_free_kbytes(self.memory_bytes)
        return watermarks(self.memory_bytes, kb, self.watermark_scale_factor)

    @property
    def pages(self) -> int:
        """The page cache's memory in pages."""
        return self.memory_bytes // PAGE_SIZE
