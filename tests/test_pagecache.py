"""The page cache (models/os/mm/pagecache.py, readahead.py, filemap.py, writeback.py) and buffered fio
jobs: the kernel's readahead window sequence and dirty thresholds (mm/readahead.c,
mm/page-writeback.c), the LRU, hit/miss conservation, fsync-free writes, bad input."""

from __future__ import annotations

import subprocess
import sys

import pytest

from models.os.mm.filemap import Filemap
from models.os.mm.pagecache import PageCache
from models.os.mm.pagecache_config import PageCacheConfig
from models.os.mm.readahead import RaState, get_init_ra_size, get_next_ra_size
from models.os.mm.writeback import dirty_limits, dirty_poll_interval, pos_ratio
from scenarios.config.host import resolve
from scenarios.inputs.fio.parser import parse_fio_text
from scenarios.run.simulate import simulate

PLAT = "optane900p-e3-1230v5"


def _windows(ra: RaState, req_pages: int, reads: int, cache_pages: int = 1 << 20) -> list[tuple[int, int, int]]:
    """The readahead decisions of ``reads`` sequential reads of ``req_pages`` from page 0, each
    read's pages cached by the windows before it (a page-cache stand-in: windows read instantly)."""
    pc = PageCache(PageCacheConfig(memory_bytes=cache_pages * 4096))
    fm = Filemap(None, pc)
    m = pc.mapping(0, 0, 1 << 40)
    out = []
    for r in range(reads):
        plan = fm.read_plan(m, ra, r * req_pages * 4096, req_pages * 4096)
        for _m, first, n, batch in plan.bios:
            out.append((first, n))
            m.reading.remove(batch)  # read at once
    return out


def test_initial_and_next_window_sizes_are_the_kernels():
    # get_init_ra_size: x4 up to max/32, x2 up to max/4, else max; get_next_ra_size: x4 below
    # max/16, x2 up to max/2, else max (mm/readahead.c)
    assert [get_init_ra_size(s, 32) for s in (1, 2, 3, 8, 9, 32)] == [4, 4, 8, 16, 32, 32]
    assert [get_next_ra_size(s, 32) for s in (1, 4, 8, 16, 17, 32)] == [4, 8, 16, 32, 32, 32]


def test_readahead_window_sequence_for_4k_sequential_reads():
    """4 KiB sequential reads, read_ahead_kb 128 (32 pages): size 4 with async 3 (marker at page 1),
    then windows of 8, 16, 32, 32 pages, each issued when the reader reaches the previous marker."""
    ra = RaState(32, 32)
    wins = _windows(ra, 1, 100)
    assert wins[:6] == [(0, 4), (4, 8), (12, 16), (28, 32), (60, 32), (92, 32)]


def test_readahead_of_128k_reads_at_max_window_is_pushed_at_the_midpoint():
    """128 KiB reads with a 32-page window: size 32, async 16 at offset 0 (readit's doubling
    caps at max with async max/2), then 32-page windows whose marker is their first page."""
    ra = RaState(32, 32)
    pc = PageCache(PageCacheConfig(memory_bytes=1 << 30))
    fm = Filemap(None, pc)
    m = pc.mapping(0, 0, 1 << 40)
    plan = fm.read_plan(m, ra, 0, 32 * 4096)
    assert (ra.start, ra.size, ra.async_size) in ((0, 32, 16), (32, 32, 32))
    assert plan.bios[0][1:3] == (0, 32)
    assert 16 not in m.markers  # the first window's marker was reached by this read itself


def test_fadvise_random_reads_exactly_the_requested_pages():
    ra = RaState(32, 32, random=True)
    pc = PageCache(PageCacheConfig(memory_bytes=1 << 30))
    fm = Filemap(None, pc)
    m = pc.mapping(0, 0, 1 << 40)
    plan = fm.read_plan(m, ra, 1000 * 4096, 8192)
    assert [(f, n) for _m, f, n, _b in plan.bios] == [(1000, 2)] and not m.markers


def test_lru_promotes_on_second_access_and_reclaims_inactive_first():
    """No watermarks (min_free_kbytes 0): 16 pages past the memory are direct-reclaimed in one
    SWAP_CLUSTER_MAX attempt (32 pages), the oldest inactive ones."""
    pc = PageCache(PageCacheConfig(memory_bytes=64 * 4096, min_free_kbytes=0))
    m = pc.mapping(0, 0, 1 << 40)
    pc.add(m, 0, 64)
    for i in range(8):  # pages 0..7 accessed twice: active
        pc.mark_accessed(m, i)
        pc.mark_accessed(m, i)
    assert len(pc.active) == 8 and len(pc.inactive) == 56
    pc.add(m, 64, 16)
    assert pc.reclaim() == 32
    assert all(pc.cached(m, i) for i in range(8))  # the active pages stay
    assert not any(pc.cached(m, i) for i in range(8, 40)) and pc.cached(m, 40) and pc.cached(m, 79)


def test_dirty_thresholds_are_the_kernels():
    """domain_dirty_limits with the defaults (10 %, 20 %) of dirtyable memory; freerun halfway;
    pos_ratio 2 at freerun, 1 at the setpoint, 0 at the limit; bg >= thresh -> thresh / 2."""
    cfg = PageCacheConfig()
    assert (cfg.dirty_background_ratio, cfg.dirty_ratio) == (10, 20)
    assert (cfg.dirty_expire_centisecs, cfg.dirty_writeback_centisecs) == (3000, 500)
    bg, thresh = dirty_limits(1_000_000, 10, 20)
    assert (bg, thresh) == (100_000, 200_000)
    freerun = (bg + thresh) // 2
    assert freerun == 150_000
    assert pos_ratio(freerun, freerun, thresh) == 2.0
    assert pos_ratio(175_000, freerun, thresh) == 1.0
    assert pos_ratio(thresh, freerun, thresh) == 0.0
    assert dirty_limits(1000, 30, 20) == (100, 200)
    assert dirty_poll_interval(0, 1 << 20) == 1 << 10 and dirty_poll_interval(5, 5) == 1


def _run(text: str, **sets):
    cfg = resolve(jobs=list(parse_fio_text(text).jobs), platform=PLAT, sets=sets)
    res = simulate(cfg, keep_model=True)
    return res, res.model


def _job(rw: str, size: str = "64m", bs: str = "4k", runtime: str = "20ms", extra: str = "") -> str:
    return f"[j]\nioengine=psync\nrw={rw}\nbs={bs}\nsize={size}\nruntime={runtime}\ntime_based=1\n{extra}\n"


def test_every_byte_read_comes_from_cache_or_device_once():
    res, host = _run(_job("read"))
    pc = host.filemap.cache
    read = pc.hit_bytes + pc.miss_bytes
    done = res.summary["ios"] * 4096
    assert read >= done > 0  # (a read in flight at the end was looked up, not yet counted)
    assert read - done <= 4096
    assert pc.read_pages * 4096 >= pc.miss_bytes  # every waited-for page came from the device
    assert pc.read_pages * 4096 <= read + 64 * 4096 * 4  # at most the readahead ahead of the reader
    assert pc.reclaimed_pages == 0


def test_a_random_read_of_a_file_larger_than_memory_mostly_misses():
    res, host = _run(_job("randread", size="256m"), **{"pagecache.memory_bytes": 16 << 20})
    pc = host.filemap.cache
    assert pc.miss_bytes > 10 * pc.hit_bytes
    assert pc.nr_pages <= pc.capacity


def test_sequential_buffered_read_is_faster_than_its_device_reads():
    res, host = _run(_job("read"))
    direct, _h = _run(_job("read", extra="direct=1"))
    assert res.summary["iops"] > direct.summary["iops"]
    assert "pagecache" in res.summary["layers"] and "pagecache" not in direct.summary["layers"]


def test_buffered_writes_dirty_pages_and_the_flusher_writes_them_back():
    res, host = _run(_job("write", runtime="60ms"), **{"pagecache.memory_bytes": 32 << 20})
    pc = host.filemap.cache
    wb = host.writeback
    assert pc.written_pages > 0  # more than the background threshold was dirtied
    assert pc.nr_dirty + pc.nr_writeback <= wb.thresh + 64
    assert wb.pauses > 0  # the writer was throttled
    assert "writeback" in res.summary["layers"]


@pytest.mark.parametrize("value", ["-1", "0"])
def test_bad_page_cache_memory_exits_2(tmp_path, value):
    job = tmp_path / "j.fio"
    job.write_text(_job("read"))
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "stacksim",
            "run",
            str(job),
            "--platform",
            PLAT,
            "--set",
            f"pagecache.memory_bytes={value}",
        ],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 2 and "memory_bytes" in p.stderr and "Traceback" not in p.stderr


def test_fsync_makes_the_files_dirty_pages_clean():
    """fsync=4: every 4th write writes the file's dirty pages back and waits; at the end at most
    the pages of the writes since the last fsync are dirty, and every dirtied page was written."""
    res, host = _run(_job("write", runtime="20ms", extra="fsync=4"))
    pc = host.filemap.cache
    (th,) = [t for t in res.run.threads]
    assert th.fsyncs > 0 and th.fsyncs >= th._writes // 4 - 1
    assert pc.nr_dirty <= 4 and pc.nr_writeback <= 4
    assert pc.written_pages >= 4 * (th._writes // 4) - 4
    nosync, _h = _run(_job("write", runtime="20ms"))
    assert res.summary["iops"] < nosync.summary["iops"]


def test_fsync_with_direct_io_is_refused():
    with pytest.raises(Exception, match="fsync"):
        parse_fio_text(_job("write", extra="direct=1\nfsync=1"))


def test_dsync_writes_wait_for_their_own_pages():
    """sync=dsync (O_DSYNC): every write writes its own pages back and waits: nothing stays dirty,
    and each write costs a device write (the IOPS fall to the device's)."""
    res, host = _run(_job("randwrite", runtime="10ms", extra="sync=dsync"))
    pc = host.filemap.cache
    (th,) = res.run.threads
    assert th.fsyncs == th._writes and pc.nr_dirty <= 1
    assert pc.written_pages >= th._writes - 1
    direct, _h = _run(_job("randwrite", runtime="10ms", extra="direct=1"))
    assert res.summary["iops"] < direct.summary["iops"]


def test_end_fsync_leaves_no_dirty_page_and_counts_no_io():
    """end_fsync=1 on a size-bounded write job: the files are synced after the last write (every
    dirtied page written back), and the sync is not an IO of fio's statistics."""
    text = "[j]\nioengine=psync\nrw=write\nbs=4k\nsize=2m\nend_fsync=1\n"
    res, host = _run(text)
    pc = host.filemap.cache
    assert res.summary["ios"] == 512
    assert pc.nr_dirty == 0 and pc.nr_writeback == 0 and pc.written_pages == 512
    plain, h2 = _run(text.replace("end_fsync=1", "end_fsync=0"))
    assert h2.filemap.cache.nr_dirty == 512 and plain.summary["ios"] == 512


@pytest.mark.parametrize("random_ra", [False, True])
def test_each_read_is_split_exactly_into_hits_and_misses_under_eviction(random_ra):
    """Mixed-size reads over a file four times the cache: every read's bytes are hit or miss
    bytes, once; a miss waits for a read in flight that covers the page; the device reads are
    exactly the pages the bios carry; the cache never holds more than its memory."""
    import random

    gen = random.Random(7)
    pc = PageCache(PageCacheConfig(memory_bytes=256 * 4096))
    fm = Filemap(None, pc)
    m = pc.mapping(0, 0, 1024 * 4096)
    ra = RaState(32, 32, random=random_ra)
    bio_pages = 0
    for _ in range(2000):
        nbytes = gen.choice((512, 4096, 8192, 65536))
        off = gen.randrange(0, 1024 * 4096 - nbytes, 512) if gen.random() < 0.5 else ra.prev_pos % (1000 * 4096)
        h0, m0 = pc.hit_bytes, pc.miss_bytes
        plan = fm.read_plan(m, ra, off, nbytes)
        assert (pc.hit_bytes - h0) + (pc.miss_bytes - m0) == nbytes == plan.hit_bytes + plan.miss_bytes
        for b in plan.waits:
            assert any(b.start <= i < b.end for i in range(off >> 12, (off + nbytes + 4095) >> 12))
        bio_pages += sum(n for _m, _f, n, _b in plan.bios)
        for _m, _f, _n, b in plan.bios:  # the device reads them at once
            m.reading.remove(b)
        assert pc.nr_pages <= pc.capacity
    assert bio_pages == pc.read_pages


def test_io_uring_buffered_random_reads_overlap_their_misses():
    """io_uring's async buffered reads (IOCB_WAITQ): at iodepth 16 the misses are in flight
    together, so the job beats a psync thread's one-at-a-time misses; each miss is one device read."""
    uring, host = _run(_job("randread", size="1g", extra="ioengine=io_uring\niodepth=16"))
    sync, _h = _run(_job("randread", size="1g"))
    assert uring.summary["iops"] > 2 * sync.summary["iops"]
    pc = host.filemap.cache
    assert pc.miss_bytes > 50 * pc.hit_bytes
    assert 0.95 < uring.summary["device_commands_per_io"] < 1.05


def test_io_uring_buffered_writes_with_o_dsync_are_refused():
    with pytest.raises(Exception, match="O_DSYNC"):
        parse_fio_text(_job("randwrite", extra="ioengine=io_uring\nsync=dsync"))


URING = "ioengine=io_uring\niodepth=16"


def test_io_uring_buffered_writes_complete_in_the_submitter_when_they_need_not_block():
    """Linux 6.x (FMODE_BUF_WASYNC): a full-page write below the dirty limits never blocks, so each
    completes inside io_uring_enter (IOCB_NOWAIT); no io-wq worker is created, nothing is read."""
    res, host = _run(_job("randwrite", runtime="10ms", extra=URING), **{"kernel.version": "6.6"})
    (th,) = res.run.threads
    assert th.inline_writes >= res.summary["ios"] > 1000 and th.iowq.punted == 0 and not th.iowq.workers
    assert host.filemap.cache.read_pages == 0


def test_io_uring_buffered_writes_go_to_iowq_workers_before_6_0_hashed_per_file():
    """Linux 5.15 (no FMODE_BUF_WASYNC): every buffered write is punted to io-wq; the workers are
    tasks with CPU time of their own. To a regular file the writes are hashed by inode: one worker
    runs them; to a block device they are not: several workers run at once."""
    sets = {"kernel.version": "5.15"}
    res, _h = _run(_job("randwrite", runtime="10ms", extra=URING + "\nfilename=/tmp/f"), **sets)
    (th,) = res.run.threads
    assert th.inline_writes == 0 and th.iowq.punted >= res.summary["ios"] > 1000
    assert len(th.iowq.workers) == 1 and th.iowq.workers[0].task.exec_ns > 0
    dev, _h2 = _run(_job("randwrite", runtime="10ms", extra=URING), **sets)
    (th2,) = dev.run.threads
    assert len(th2.iowq.workers) > 1 and sum(w.task.exec_ns > 0 for w in th2.iowq.workers) > 1


def test_io_uring_partial_page_writes_that_would_read_are_punted():
    """2 KiB writes on Linux 6.6: a page written in part and not in the cache would be read
    (write_begin with FGP_NOWAIT: -EAGAIN), so that write is punted and its worker reads the page;
    a write into a page already cached completes inline."""
    res, host = _run(_job("randwrite", bs="2k", runtime="10ms", extra=URING), **{"kernel.version": "6.6"})
    (th,) = res.run.threads
    pc = host.filemap.cache
    assert th.iowq.punted > 0 and th.inline_writes > 0
    assert 0 < pc.read_pages <= th.iowq.punted


def test_io_uring_writes_past_the_freerun_ceiling_are_punted_and_the_worker_is_throttled():
    """A 32 MiB cache fills with dirty pages past the freerun ceiling: balance_dirty_pages would
    sleep, so io_uring's BDP_ASYNC check punts the writes; the io-wq worker sleeps in it instead
    of the fio thread."""
    sets = {"kernel.version": "6.6", "pagecache.memory_bytes": 32 << 20}
    res, host = _run(_job("write", size="256m", runtime="20ms", extra=URING), **sets)
    (th,) = res.run.threads
    wb = host.writeback
    assert th.inline_writes > wb.freerun // 2 and th.iowq.punted > 0
    assert wb.pauses > 0 and th.iowq.workers


def test_each_file_of_a_job_has_its_own_pages_and_readahead():
    """Two files read in turn (file_service_type=roundrobin): each file's mapping gets its own
    pages, from its own start on the SSD, and its own sequential readahead."""
    res, host = _run(_job("read", size="8m", extra="filename=/tmp/a:/tmp/b"))
    maps = [m for m in host.filemap.cache.mappings.values() if m.pages]
    assert len(maps) == 2 and maps[0].start != maps[1].start
    assert all(m.pages >= 64 for m in maps)
    (th,) = res.run.threads
    assert [ra.ra_pages for _m, ra in th._maps] == [64, 64]  # POSIX_FADV_SEQUENTIAL: 2 x 32 pages


def test_mmap_reads_fault_once_per_fault_around_window():
    """fio's mmap engine, sequential 4 KiB copies of a cached file (pre_read): one minor fault maps
    the 16 pages of its 64 KiB window (filemap_map_pages), so 1 fault per 16 IOs, no device read."""
    res, host = _run(_job("read", size="8m", extra="ioengine=mmap\npre_read=1"))
    pc = host.filemap.cache
    assert pc.read_pages == 0 and res.summary["ios"] > 1000
    (m,) = [m for m in pc.mappings.values() if m.pages]
    assert len(m.mapped) == 2048 and pc.faults == 2048 // 16  # the 8 MiB once, then no fault
    assert res.summary["layers"]["syscall"] < 0.15 * res.summary["layers"]["user"]  # faults only


def test_mmap_random_reads_read_only_the_faulting_page_and_writes_fault_again_after_writeback():
    res, host = _run(_job("randread", size="1g", extra="ioengine=mmap"))
    assert 0.9 < res.summary["device_commands_per_io"] <= 1.0  # MADV_RANDOM: no fault readahead
    w, host_w = _run(_job("randwrite", size="4m", runtime="10ms", extra="ioengine=mmap\nfsync=16\npre_read=1"))
    (m,) = [m for m in host_w.filemap.cache.mappings.values() if m.pages]
    assert len(m.writable) <= 16 and len(m.dirty) <= 16  # msync write-protected what it cleaned


def test_mmap_with_direct_is_refused():
    with pytest.raises(Exception, match="mmap"):
        parse_fio_text(_job("read", extra="ioengine=mmap\ndirect=1"))


def test_kupdate_writes_back_expired_dirty_data_below_the_background_threshold():
    """dirty_writeback_centisecs=1, dirty_expire_centisecs=2: the periodic pass wakes the flusher for
    a file dirty longer than 20 ms, far below the background threshold of a 16 GiB cache."""
    sets = {"pagecache.dirty_writeback_centisecs": 1, "pagecache.dirty_expire_centisecs": 2}
    res, host = _run(_job("write", runtime="60ms"), **sets)
    pc, wb = host.filemap.cache, host.writeback
    assert pc.nr_dirty < wb.bg_thresh and wb.pauses == 0
    assert pc.written_pages > 0 and sum(f.chunks for f in wb.flushers) > 0
    idle, h2 = _run(_job("write", runtime="60ms"))
    assert h2.filemap.cache.written_pages == 0  # (the defaults: 5 s, 30 s)


def test_a_buffered_runs_summary_reports_its_page_cache_and_a_direct_runs_does_not():
    res, _h = _run(_job("randread", size="256m"), **{"pagecache.memory_bytes": 16 << 20})
    pcs = res.summary["pagecache"]
    assert 0.0 <= pcs["hit_ratio"] < 0.2 and pcs["read_pages"] > 0 and pcs["cached_pages"] <= 4096
    direct, _h2 = _run(_job("randread", extra="direct=1"))
    assert "pagecache" not in direct.summary


def test_fsync_every_n_writes_is_a_sync_of_its_own_in_fios_statistics():
    """fsync=8: fio's 8th write returns (its latency is the write's alone, at memory speed), then fio
    issues a DDIR_SYNC: its latency, the file's writeback and wait, is in the JSON's ``sync``
    (total_ios, lat_ns) and the summary's, one per 8 writes, each longer than a device write."""
    res, host = _run(_job("write", runtime="20ms", extra="fsync=8"))
    (th,) = res.run.threads
    sync = res["jobs"][0]["sync"]
    writes = res["jobs"][0]["write"]
    assert abs(sync["total_ios"] - writes["total_ios"] // 8) <= 1 and sync["total_ios"] > 100
    assert sync["lat_ns"]["N"] == sync["total_ios"] == res.summary["sync"]["total_ios"]
    assert sync["lat_ns"]["min"] > 5_000  # one device write (8 pages) at least
    assert writes["lat_ns"]["max"] < sync["lat_ns"]["min"]  # the sync is not in any write's latency
    assert res.summary["latency_us"]["p99"] < 5  # every write completes at memory speed
    nosync, _h = _run(_job("write", runtime="20ms"))
    assert nosync["jobs"][0]["sync"]["total_ios"] == 0 and "sync" not in nosync.summary


def test_end_fsync_is_one_sync_per_file():
    text = "[j]\nioengine=psync\nrw=write\nbs=4k\nsize=2m\nend_fsync=1\n"
    res, _host = _run(text)
    sync = res["jobs"][0]["sync"]
    assert sync["total_ios"] == 1 and sync["lat_ns"]["min"] > 20_000  # 2 MiB written back and waited for


def test_watermarks_are_the_kernels():
    """init_per_zone_wmark_min: int_sqrt(KiB x 16) clamped to [128, 262144]; __setup_per_zone_wmarks:
    low = min + step, high = min + 2 step, step = max(min / 4, pages x watermark_scale_factor / 1e4)."""
    from models.os.mm.pagecache_config import default_min_free_kbytes, watermarks

    assert default_min_free_kbytes(16 << 30) == 16384 and default_min_free_kbytes(1 << 30) == 4096
    assert default_min_free_kbytes(1 << 20) == 128 and default_min_free_kbytes(16 << 40) == 262144
    assert watermarks(16 << 30, 16384, 10) == (4096, 4096 + 4194, 4096 + 2 * 4194)
    assert watermarks(1 << 30, 4096, 10) == (1024, 1024 + 262, 1024 + 2 * 262)  # min/4 wins below ~2.5 GiB
    assert PageCache(PageCacheConfig(memory_bytes=32 << 20)).wmark_min == 724 // 4


def test_dirty_pages_are_not_reclaimed_until_written_back():
    pc = PageCache(PageCacheConfig(memory_bytes=64 * 4096, min_free_kbytes=0))
    m = pc.mapping(0, 0, 1 << 40)
    pc.add(m, 0, 72)  # 8 pages past the memory, all dirty
    for i in range(72):
        pc.mark_dirty(m, i, 0.0)
    assert pc.reclaim() == 0 and pc.dirty_seen and pc.nr_pages == 72  # nothing clean to free
    pc.take_dirty(m, 16)  # pages 0..15 written back (no batch in flight: their IO is done)
    assert pc.reclaim() == 16 and not any(pc.cached(m, i) for i in range(16))


def test_kswapd_reclaims_in_the_background_below_the_low_watermark():
    """A sequential read of a file 8 times a 32 MiB cache: kswapd (a kernel thread with CPU time of
    its own) frees most pages and leaves free memory between its watermarks; with the default 0.1 %
    between watermarks a 64-page readahead window can drop free memory below min at once, so the
    reader reclaims too (direct reclaim); with 10 % (watermark_scale_factor=1000) kswapd keeps ahead
    and the reader never reclaims."""
    sets = {"pagecache.memory_bytes": 32 << 20}
    res, host = _run(_job("read", size="256m", runtime="30ms"), **sets)
    pc, k = host.filemap.cache, host.writeback.kswapd
    assert k.wakeups > 0 and k.task.exec_ns > 0 and pc.kswapd_reclaimed_pages > pc.capacity // 2
    assert pc.read_pages > pc.capacity and pc.free_pages >= pc.wmark_min - 64
    assert pc.reclaimed_pages > 0
    roomy, host2 = _run(_job("read", size="256m", runtime="30ms"), **sets, **{"pagecache.watermark_scale_factor": 1000})
    pc2 = host2.filemap.cache
    assert pc2.reclaimed_pages == 0 and pc2.direct_reclaims == 0 and pc2.kswapd_reclaimed_pages > pc.capacity // 2


def test_io_uring_write_counts_reach_the_summary():
    res, _h = _run(_job("randwrite", bs="2k", runtime="5ms", extra=URING), **{"kernel.version": "6.6"})
    w = res.summary["pagecache"]["io_uring_writes"]
    (th,) = res.run.threads
    assert w == {"inline": th.inline_writes, "punted_to_iowq": th.iowq.punted, "iowq_workers": len(th.iowq.workers)}
    assert w["inline"] and w["punted_to_iowq"] and w["inline"] + w["punted_to_iowq"] >= res.summary["ios"]


def test_iowq_runs_one_worker_per_file_of_hashed_writes():
    """Two regular files written in turn on Linux 5.15: their writes hash to two inodes, so io-wq
    needs (and creates) two workers, each running one file's writes at a time."""
    text = _job("randwrite", runtime="5ms", extra=URING + "\nfilename=/tmp/a:/tmp/b")
    res, _h = _run(text, **{"kernel.version": "5.15"})
    (th,) = res.run.threads
    assert th.iowq.punted > 100 and len(th.iowq.workers) == 2
    assert all(w.task.exec_ns > 0 for w in th.iowq.workers)


def test_io_uring_fsync_runs_on_an_iowq_worker_and_waits_for_the_files_writeback(monkeypatch):
    """fsync=8 on io_uring (IORING_OP_FSYNC, force-async): on Linux 6.6 the writes complete inside
    io_uring_enter, and each fsync is punted to an io-wq worker, which writes the file's dirty pages
    back (WB_SYNC_ALL) itself, not the fio thread nor the flusher, and waits for them before the CQE:
    each sync of fio's statistics lasts at least a device write, one per 8 writes, none an IO."""
    from models.os.mm.writeback import Flusher

    writers: list[str] = []
    orig = Flusher.write_pages

    def spy(self, m, runs, runner, then, task):
        writers.append(task.name)
        orig(self, m, runs, runner, then, task)

    monkeypatch.setattr(Flusher, "write_pages", spy)
    res, host = _run(
        _job("randwrite", runtime="5ms", extra=URING + "\nfilename=/tmp/f\nfsync=8"), **{"kernel.version": "6.6"}
    )
    (th,) = res.run.threads
    assert th.iowq.punted == 0 and th.inline_writes >= res.summary["ios"] > 500  # the writes: inline
    assert th.iowq.workers and writers and all(n.startswith("iou-wrk") for n in writers)
    assert len(writers) >= th.fsyncs  # (each fsync's writeback, none the flusher's in 5 ms)
    sync = res["jobs"][0]["sync"]
    # reaped, in flight, or (the run ended right after an 8th write) the sync fio draws next
    assert th.fsyncs + th._syncs + th._sync_due == th._writes // 8
    assert sync["total_ios"] > 100 and res.summary["ios"] == res["jobs"][0]["write"]["total_ios"]
    assert sync["lat_ns"]["min"] > 5_000  # one device write at least: the worker waited for it
    assert host.filemap.cache.written_pages >= 8 * (th.fsyncs - 1)


def test_io_uring_end_fsync_syncs_each_file_then_exits():
    """end_fsync=1 on io_uring: once the last write is reaped, one IORING_OP_FSYNC per file, waited
    for, then the thread's end: nothing stays dirty, one sync, no extra IO."""
    text = "[j]\nioengine=io_uring\niodepth=8\nrw=write\nbs=4k\nsize=2m\nend_fsync=1\n"
    res, host = _run(text, **{"kernel.version": "6.6"})
    pc = host.filemap.cache
    assert res.summary["ios"] == 512 and res["jobs"][0]["sync"]["total_ios"] == 1
    assert pc.nr_dirty == 0 and pc.nr_writeback == 0 and pc.written_pages == 512
