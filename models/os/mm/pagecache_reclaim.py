"""Memory pressure on the page cache: the zone watermarks (mm/page_alloc.c) and kswapd, the kernel
thread that reclaims clean page-cache pages in the background (mm/vmscan.c ``kswapd`` ->
``balance_pgdat``).

**Watermarks** (``__setup_per_zone_wmarks``, one zone holding the machine's memory): ``min`` is
``min_free_kbytes`` (by default ``init_per_zone_wmark_min``: ``int_sqrt(lowmem_kbytes x 16)``
clamped to [128, 262144] KiB; recalled, v5.x-6.x), ``low = min + step``, ``high = min + 2 x
step`` with ``step = max(min / 4, managed pages x watermark_scale_factor / 10000)``
(``watermark_scale_factor`` 10: 0.1 % of memory between two watermarks). Free memory is the page
cache's memory (MemFree + file pages at the start) less the pages cached.

**An allocation** (a page added to the cache) that leaves free memory below ``low`` wakes kswapd
(``wakeup_kswapd`` in ``__alloc_pages_slowpath``); one that leaves it below ``min`` reclaims in
the allocating task first (direct reclaim, ``__alloc_pages_direct_reclaim`` ->
``try_to_free_pages``: ``SWAP_CLUSTER_MAX`` (32) pages per attempt, here as many attempts as it
takes to get back to ``min``; :meth:`models.os.mm.pagecache.PageCache.reclaim`).

**kswapd** (one per node, ``kswapd0``; nice 0, any CPU of the node: it competes for CPUs like any
task) runs ``balance_pgdat``: it scans the LRU in batches of ``SWAP_CLUSTER_MAX`` pages
(``shrink_inactive_list``: clean inactive pages freed, the active list refilled as
``inactive_is_low`` asks), a ``cond_resched`` between batches, until free memory is back at
``high`` (``pgdat_balanced``); then it sleeps. Dirty pages and pages under writeback cannot be
freed: a batch that meets dirty pages wakes the flusher threads (``wakeup_flusher_threads
(WB_REASON_VMSCAN)``: kswapd does not write file pages itself); a batch that frees nothing throttles
kswapd (``reclaim_throttle(VMSCAN_THROTTLE_WRITEBACK)``) until ``SWAP_CLUSTER_MAX`` pages have
finished writeback (``acct_reclaim_writeback``), at most ``VMSCAN_THROTTLE_TIMEOUT_NS`` (HZ/10),
before it scans again.
"""

from __future__ import annotations

from typing import Any

from models.os.mm.host import MmHost
from models.os.mm.pagecache import PageCache
from models.os.mm.pagecache_config import default_min_free_kbytes, watermarks
from models.os.sched.task import SLEEPING, kernel_thread

__all__ = ["Kswapd", "SWAP_CLUSTER_MAX", "default_min_free_kbytes", "watermarks"]

#: pages per reclaim batch (include/linux/swap.h)
SWAP_CLUSTER_MAX = 32
#: reclaim_throttle's timeout for VMSCAN_THROTTLE_WRITEBACK (HZ/10; mm/vmscan.c, v5.16+)
VMSCAN_THROTTLE_TIMEOUT_NS = 100e6


class Kswapd:
    """kswapd0: the background reclaim of the page cache ``cache`` on ``host``; the flusher threads
    of ``writeback`` are woken when it meets dirty pages."""

    def __init__(self, host: MmHost, cache: PageCache, writeback: Any):
        self.host = host
        self.cache = cache
        self.writeback = writeback
        ncpu = len(host.runners)
        self.task = kernel_thread(host.all_tasks, "kswapd0", 0, nice=0)
        self.task.affinity = frozenset(range(ncpu))  # the node's CPUs (cpumask_of_node)
        self.task.owner = self
        self.runner = host.runners[0]
        self.throttled = False  # asleep in reclaim_throttle: a wake-up is not needed
        self._written = 0  # pages that finished writeback while throttled
        self.wakeups = 0  # pageoutrun: the balance_pgdat runs
        self.batches = 0
        cfg = cache.cfg
        self._batch_cycles = cfg.kswapd_batch_cycles
        self._page_cycles = cfg.reclaim_page_cycles

    def can_migrate(self) -> bool:
        return True

    def migrated(self, runner: Any) -> None:
        self.runner = runner

    def wake(self, waker: Any) -> None:
        """``wakeup_kswapd`` from an allocation below the low watermark (``waker``: its CPU)."""
        if self.task.state == SLEEPING and not self.throttled:
            self.task.resume = self._balance
            self.wakeups += 1
            waker.wake(self.task)

    def written_back(self, pages: int, runner: Any) -> None:
        """``acct_reclaim_writeback``: ``pages`` finished writeback (seen on ``runner``); a throttled
        kswapd is woken once ``SWAP_CLUSTER_MAX`` of them have."""
        if self.throttled:
            self._written += pages
            if self._written >= SWAP_CLUSTER_MAX:
                self.throttled = False
                runner.wake(self.task)

    def _balance(self) -> None:
        """One batch of ``balance_pgdat``; again after a preemption point until free memory is at
        the high watermark; then kswapd sleeps (``kswapd_try_to_sleep``)."""
        self.runner = runner = self.host.runners[self.task.cpu]
        pc = self.cache
        if pc.free_pages >= pc.wmark_high:
            runner.sleep(self._balance, iowait=False)
            return
        freed = pc.shrink(SWAP_CLUSTER_MAX, kswapd=True)
        if pc.dirty_seen:
            pc.dirty_seen = False
            self.writeback.vmscan_wakeup(runner)
        self.batches += 1
        cost = self.host.costs.get("kswapd_batch", pagecache=self._batch_cycles + self._page_cycles * freed)
        runner.run(cost, (lambda: runner.preemption_point(self._balance)) if freed else self._throttle)

    def _throttle(self) -> None:
        """A batch freed nothing (every page left dirty or under IO): ``reclaim_throttle`` until the
        flushers have had time to clean some."""
        runner = self.runner
        self.throttled = True
        self._written = 0
        task = self.task

        def fire(r: Any) -> None:
            if self.throttled:
                self.throttled = False
                r.wake(task)

        runner.start_timer(VMSCAN_THROTTLE_TIMEOUT_NS, fire)
        runner.sleep(self._balance, iowait=False)
