"""Dirty pages: the throttling of writers (mm/page-writeback.c ``balance_dirty_pages``) and the
flusher threads that write dirty pages back (fs/fs-writeback.c ``wb_workfn``).

**Limits** (``domain_dirty_limits``): ``thresh = dirty_ratio % x dirtyable``, ``bg_thresh =
dirty_background_ratio % x dirtyable`` (``bg_thresh = thresh / 2`` if it is not below ``thresh``),
where dirtyable memory is free plus file pages (``global_dirtyable_memory``: here the page cache's
``memory_bytes``). ``freerun = (thresh + bg_thresh) / 2`` (``dirty_freerun_ceiling``),
``limit = thresh``, ``setpoint = (freerun + limit) / 2``.

**Throttling.** A writer counts the pages it dirtied (``nr_dirtied``) and enters
``balance_dirty_pages`` after ``nr_dirtied_pause`` of them (32 at first). With dirty (NR_FILE_DIRTY
+ NR_WRITEBACK) at most ``freerun`` it goes on, its next check ``dirty_poll_interval`` pages on
(``1 << (ilog2(thresh - dirty) >> 1)``). Above, it sleeps ``pause = nr_dirtied / task_ratelimit``
with ``task_ratelimit = dirty_ratelimit x pos_ratio``, ``pos_ratio = 1 + ((setpoint - dirty) /
(limit - setpoint))^3`` clamped to [0, 2] (``pos_ratio_polynom``: 2 at freerun, 1 at the setpoint,
0 at the limit), at most ``MAX_PAUSE`` (200 ms); at the limit it sleeps MAX_PAUSE and checks
again. ``dirty_ratelimit`` is taken as the device's measured write bandwidth (the kernel adapts
it toward ``avg_write_bandwidth``, so steady buffered writing converges to the writeback
bandwidth; estimate: the per-wb line and the rate's own feedback loop are not modelled). The write
bandwidth starts at ``INIT_BW`` (100 MB/s, mm/backing-dev.c) and is re-estimated every 200 ms
(``BANDWIDTH_INTERVAL``) from the pages written back, smoothed over a 3 s period
(``wb_update_write_bandwidth``). The next check comes after the pages of ~10 ms at that rate
(estimate: the kernel's min_pause targets).

**Flushers.** One per SSD (``bdi_writeback``), a kernel thread of the unbound ``writeback``
workqueue (nice 0, any CPU: it competes for CPUs like any task). It is woken when dirty data
passes ``bg_thresh`` (``wb_start_background_writeback``), by the periodic kupdate timer
(``dirty_writeback_centisecs``) when some file's dirty data is older than
``dirty_expire_centisecs``, by fsync's and sync's flushes, and by reclaim that meets dirty pages
(``wakeup_flusher_threads(WB_REASON_VMSCAN)``: the start_all work, every page dirty at the wake-up
written back whatever the background threshold; :mod:`models.os.mm.pagecache_reclaim`). Each pass
(``wb_writeback``) takes the oldest dirty file of its SSD and writes up to a chunk of its dirty
pages in index order (``writeback_chunk_size``: ``min(avg_write_bandwidth / 2, dirty_limit / 8)`` rounded to
``MIN_WRITEBACK_PAGES``, 4 MiB), in bios of at most ``BIO_MAX_VECS`` (256) contiguous pages that
blk-mq splits at ``max_sectors_kb``. The flusher then sleeps until the chunk is written (estimate:
the kernel goes on until the request tags run out), and loops while background or expired work
remains.
"""

from __future__ import annotations

from typing import Any, Callable

from models.os.block.request import Request
from models.os.mm.host import MmHost
from models.os.mm.pagecache import IoBatch, Mapping, PageCache
from models.os.mm.pagecache_config import PAGE_SHIFT, PAGE_SIZE
from models.os.mm.pagecache_reclaim import Kswapd
from models.os.sched.task import SLEEPING, kernel_thread

__all__ = ["Flusher", "Writeback", "dirty_limits", "dirty_poll_interval", "pos_ratio"]

MAX_PAUSE_NS = 200e6  # max(HZ/5, 1): "Sleep at most 200ms at a time in balance_dirty_pages()"
BANDWIDTH_INTERVAL_NS = 200e6  # max(HZ/5, 1)
BW_PERIOD_NS = 3e9  # wb_update_write_bandwidth's averaging period (roundup_pow_of_two(3 * HZ))
INIT_BW_PAGES_PER_S = (100 << 20) >> PAGE_SHIFT  # INIT_BW: 100 MB/s
MIN_WRITEBACK_PAGES = 4096 >> (PAGE_SHIFT - 10)  # "4MB minimal write chunk size"
BIO_MAX_VECS = 256
MIN_PAUSE_NS = 10e6  # estimate: the pause the kernel's nr_dirtied_pause aims at


def dirty_limits(dirtyable_pages: int, bg_ratio: int, ratio: int) -> tuple[int, int]:
    """``domain_dirty_limits``: (background threshold, dirty threshold), pages."""
    thresh = ratio * dirtyable_pages // 100
    bg_thresh = bg_ratio * dirtyable_pages // 100
    if bg_thresh >= thresh:
        bg_thresh = thresh // 2
    return bg_thresh, thresh


def pos_ratio(dirty: float, freerun: float, limit: float) -> float:
    """``pos_ratio_polynom`` around ``setpoint = (freerun + limit) / 2``: 2 at freerun, 1 at the
    setpoint, 0 at the limit."""
    setpoint = (freerun + limit) / 2
    x = (setpoint - dirty) / max(limit - setpoint, 1.0)
    return min(2.0, max(0.0, 1.0 + x * x * x))


def dirty_poll_interval(dirty: int, thresh: int) -> int:
    """``dirty_poll_interval``: pages a task may dirty before it checks again (below freerun)."""
    if thresh > dirty:
        return 1 << ((thresh - dirty).bit_length() - 1 >> 1)
    return 1


class Writeback:
    """The host's dirty-page state over its page cache: limits, writers' throttling, one
    :class:`Flusher` per SSD."""

    def __init__(self, host: MmHost, cache: PageCache):
        self.host = host
        self.cache = cache
        cfg = cache.cfg
        self.bg_thresh, self.thresh = dirty_limits(cache.capacity, cfg.dirty_background_ratio, cfg.dirty_ratio)
        self.freerun = (self.thresh + self.bg_thresh) // 2
        self.flushers = [Flusher(self, host, d) for d in range(len(host.devices))]
        self.kswapd = Kswapd(host, cache, self)
        self.vmscan_wakeups = 0  # wakeup_flusher_threads(WB_REASON_VMSCAN) calls
        self.pauses = 0  # balance_dirty_pages sleeps
        self.paused_ns = 0.0
        self._kupdate_armed = False

    def dirtied(self, thread: Any, pages: int, runner: Any, then: Callable[[], None]) -> None:
        """``balance_dirty_pages_ratelimited`` after a write that dirtied ``pages`` pages."""
        self.account(thread, pages, runner)
        if thread.nr_dirtied < thread.nr_dirtied_pause:
            then()
            return
        self._balance(thread, runner, then)

    def account(self, thread: Any, pages: int, runner: Any) -> None:
        """A write dirtied ``pages`` pages (``folio_account_dirtied``): the kupdate timer armed, the
        flushers kicked above the background threshold, the task's ``nr_dirtied``."""
        pc = self.cache
        if pages and not self._kupdate_armed and pc.cfg.dirty_writeback_centisecs:
            self._kupdate_armed = True  # wb_wakeup_delayed: the inode's first dirtying arms the timer
            self.host.engine.call_in(pc.cfg.dirty_writeback_centisecs * 1e7, self._kupdate)
        if pc.nr_dirty > self.bg_thresh:
            self.kick_all(runner)
        thread.nr_dirtied += pages

    def ratelimit_nowait(self, thread: Any) -> int:
        """``balance_dirty_pages_ratelimited_flags(BDP_ASYNC)`` before a write with IOCB_NOWAIT:
        0 under the task's ratelimit (nothing to do), 1 a balance pass that lets it go (dirty data
        at most at freerun: the task's counters reset), -1 it would have to sleep (-EAGAIN)."""
        if thread.nr_dirtied < thread.nr_dirtied_pause:
            return 0
        pc = self.cache
        dirty = pc.nr_dirty + pc.nr_writeback
        if dirty > self.freerun:
            return -1
        thread.nr_dirtied = 0
        thread.nr_dirtied_pause = dirty_poll_interval(dirty, self.thresh)
        return 1

    def _balance(self, thread: Any, runner: Any, then: Callable[[], None]) -> None:
        pc = self.cache
        dirty = pc.nr_dirty + pc.nr_writeback
        cost = self.host.costs.get("balance_dirty_pages", pagecache=pc.cfg.balance_dirty_cycles)
        if dirty <= self.freerun:
            thread.nr_dirtied = 0
            thread.nr_dirtied_pause = dirty_poll_interval(dirty, self.thresh)
            runner.run(cost, then)
            return
        if pc.nr_dirty > self.bg_thresh:
            self.kick_all(runner)
        dev = thread.dev
        rate = self.flushers[dev].write_bw * pos_ratio(dirty, self.freerun, self.thresh)
        if rate <= 0:
            pause = MAX_PAUSE_NS
        else:
            pause = min(thread.nr_dirtied / rate * 1e9, MAX_PAUSE_NS)
            thread.nr_dirtied = 0
            thread.nr_dirtied_pause = max(1, int(rate * MIN_PAUSE_NS * 1e-9))
        self.pauses += 1
        self.paused_ns += pause
        task = thread.task

        def fire(r):
            r.wake(task)

        def again():
            if rate <= 0:
                self._balance(thread, thread.runner, then)
            else:
                then()

        def sleep():
            thread.runner.start_timer(pause, fire)
            thread.runner.sleep(again, True)  # io_schedule_timeout

        runner.run(cost, sleep)

    def allocated(self, runner: Any) -> None:
        """After an allocation (a plan's pages added, on ``runner``): ``wakeup_kswapd`` if free
        memory fell below the low watermark; the flushers if direct reclaim met dirty pages."""
        pc = self.cache
        if pc.kswapd_pending:
            pc.kswapd_pending = False
            self.kswapd.wake(runner)
        if pc.dirty_seen:  # direct reclaim met dirty pages (shrink_inactive_list)
            pc.dirty_seen = False
            self.vmscan_wakeup(runner)

    def vmscan_wakeup(self, waker: Any) -> None:
        """``wakeup_flusher_threads(WB_REASON_VMSCAN)``: reclaim met dirty pages; every flusher with
        dirty data writes back what is dirty now (``wb_start_writeback``: the start_all work)."""
        for f in self.flushers:
            if f.start_all_pages <= 0:
                f.start_all_pages = self.cache.nr_dirty
                f.kick(waker)

    def kick_all(self, waker: Any) -> None:
        for f in self.flushers:
            f.kick(waker)

    def _kupdate(self) -> None:
        """The periodic writeback timer (wb_workfn's kupdate pass): wake flushers with expired data."""
        pc = self.cache
        now = self.host.engine.now
        expire = pc.cfg.dirty_expire_centisecs * 1e7
        for f in self.flushers:
            if f.oldest(expire, now) is not None:
                f.kick(self.host.runners[f.task.cpu])
        if pc.nr_dirty:
            self.host.engine.call_in(pc.cfg.dirty_writeback_centisecs * 1e7, self._kupdate)
        else:
            self._kupdate_armed = False


class Flusher:
    """The writeback worker of SSD ``dev`` (``kworker/u:N+flush-259:dev``)."""

    def __init__(self, wb: Writeback, host: MmHost, dev: int):
        self.wb = wb
        self.host = host
        self.dev = dev
        ncpu = len(host.runners)
        cpu = (ncpu - 1 - dev) % ncpu
        self.task = kernel_thread(host.all_tasks, f"kworker/u{2 * ncpu}:flush-259:{dev}", cpu, nice=0)
        self.task.affinity = frozenset(range(ncpu))  # an unbound workqueue's worker
        self.task.owner = self
        self.runner = host.runners[cpu]
        self.inflight = 0
        self.write_bw = float(INIT_BW_PAGES_PER_S)  # wb->avg_write_bandwidth, pages/s
        self._bw_stamp = 0.0
        self._bw_written = 0
        self.chunks = 0
        self.bios = 0
        self.start_all_pages = 0  # pages left of a start_all work item (WB_REASON_VMSCAN)

    def can_migrate(self) -> bool:
        return True

    def migrated(self, runner: Any) -> None:
        self.runner = runner

    def kick(self, waker: Any) -> None:
        """wb_wakeup: queue the work; wake the worker if it sleeps idle (not waiting on its IO)."""
        if self.task.state == SLEEPING and self.inflight == 0:
            self.task.resume = self._work
            waker.wake(self.task)

    def oldest(self, expire_ns: float, now: float) -> Mapping | None:
        """The dirty file of this SSD dirtied longest ago, if older than ``expire_ns`` (-1: any)."""
        best = None
        for m in self.wb.cache.mappings.values():
            if m.dev == self.dev and m.dirty and (expire_ns < 0 or now - m.dirtied_when >= expire_ns):
                if best is None or m.dirtied_when < best.dirtied_when:
                    best = m
        return best

    def _work(self) -> None:
        """One pass of wb_writeback: background work while over bg_thresh, else expired files."""
        self.runner = self.host.runners[self.task.cpu]
        wb = self.wb
        pc = wb.cache
        now = self.runner.clock()
        start_all = self.start_all_pages > 0
        m = self.oldest(-1.0, now) if pc.nr_dirty > wb.bg_thresh or start_all else None
        if m is None:
            self.start_all_pages = 0
            m = self.oldest(pc.cfg.dirty_expire_centisecs * 1e7, now)
        if m is None:
            self.runner.sleep(self._work, iowait=False)
            return
        chunk = int(min(self.write_bw / 2, wb.thresh / 8))
        chunk = (chunk + MIN_WRITEBACK_PAGES) // MIN_WRITEBACK_PAGES * MIN_WRITEBACK_PAGES
        if start_all:
            self.start_all_pages -= chunk
        self.write_pages(m, pc.take_dirty(m, chunk), self.runner, self._work, self.task)

    def write_pages(self, m: Mapping, runs: list, runner: Any, then: Callable[[], None], task: Any) -> None:
        """``do_writepages`` of ``runs`` (first page, pages) of ``m`` from ``task`` on ``runner``:
        the CPU work, the bios, then a sleep until they are written; ``then`` after."""
        cfg = self.wb.cache.cfg
        bios = [(f + k, min(BIO_MAX_VECS, n - k)) for f, n in runs for k in range(0, n, BIO_MAX_VECS)]
        pages = sum(n for _f, n in runs)
        blk = self.host.blk
        nreq = sum(blk.requests_for(n * PAGE_SIZE) for _f, n in bios)
        parts = dict(
            writeback=cfg.flusher_run_cycles + cfg.writeback_page_cycles * pages + cfg.writeback_bio_cycles * len(bios)
        )
        k = self.host.kcosts
        for layer, cyc in blk.submitter_parts(nreq, k.blk_submit_cycles, k.nvme_submit_cycles).items():
            parts[layer] = parts.get(layer, 0.0) + cyc * nreq
        self.chunks += 1
        runner.run(self.host.costs.get("writeback_pages", **parts), lambda: self._submit(m, bios, runner, then, task))

    def _submit(self, m: Mapping, bios: list, runner: Any, then: Callable[[], None], task: Any) -> None:
        if not bios:
            then()
            return
        driver = self.host.driver
        state = [len(bios)]

        flusher = task is self.task

        def one_done(r: Any) -> None:
            state[0] -= 1
            if state[0] == 0:
                if flusher:
                    self.inflight = 0
                r.wake(task)

        for first, n in bios:
            batch = IoBatch(first, first + n)
            batch.waiters.append(one_done)
            m.writing.append(batch)
            req = Request(
                -(1 << 41) - self.bios, task, -1, "write", n * PAGE_SIZE, m.start + first * PAGE_SIZE, runner.id, False
            )
            self.bios += 1
            req.qp = driver.queue_for(m.dev, runner.id, False)
            req.done_cb = lambda r, _req, b=batch, nn=n: self._written(r, m, b, nn)
            self.host.blk.issue(req, runner)
        if flusher:
            self.inflight = 1
        runner.sleep(then, iowait=not flusher)  # the flusher's wait is no iowait of a job

    def _written(self, runner: Any, m: Mapping, batch: IoBatch, pages: int) -> None:
        """A writeback bio completed: ``end_page_writeback`` of its pages; the bandwidth estimate."""
        pc = self.wb.cache
        pc.nr_writeback -= pages
        pc.written_pages += pages
        m.writing.remove(batch)
        self.wb.kswapd.written_back(pages, runner)
        runner.add_carry(self.host.costs.get("writeback_end", writeback=pc.cfg.end_writeback_page_cycles * pages))
        now = runner.clock()
        self._bw_written += pages
        elapsed = now - self._bw_stamp
        if elapsed >= BANDWIDTH_INTERVAL_NS:  # wb_update_write_bandwidth
            bw = self._bw_written / (elapsed * 1e-9)
            w = min(elapsed, BW_PERIOD_NS)
            self.write_bw = (self.write_bw * (BW_PERIOD_NS - w) + bw * w) / BW_PERIOD_NS
            self._bw_stamp = now
            self._bw_written = 0
        batch.finish(runner)
