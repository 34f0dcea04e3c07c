"""Who dispatches a request (issue 44 item 2): the direct-IO paths' own plugs
(models/os/fs/direct_io.py) by kernel release, and what they make of blk-mq's dispatch with and
without an IO scheduler: synchronously in the submitter, or by the CPU's kblockd worker."""

from __future__ import annotations

import pytest

from models.os.block.blk_mq import PLUG_FINISH, PLUG_NONE, PLUG_SCHEDULE
from models.os.fs.direct_io import BIO_MAX_BYTES, own_plug
from tests.test_async_io import cfg, run_to_completion

V5_10, V5_15, V6_1, V6_12 = (5, 10), (5, 15), (6, 1), (6, 12)


def plug(kver, op="read", file=False, sync=False, sleeps=True, hipri=False, nbytes=4096):
    return own_plug(kver, op=op, file=file, sync=sync, sleeps=sleeps, hipri=hipri, nbytes=nbytes)


@pytest.mark.parametrize(
    "case, kver, expected",
    [
        # fs/block_dev.c __blkdev_direct_IO (5.10): every asynchronous kiocb, plugged unless HIPRI
        (dict(), V5_10, PLUG_FINISH),
        (dict(), V5_15, PLUG_FINISH),
        (dict(hipri=True), V5_15, PLUG_NONE),
        # block/fops.c __blkdev_direct_IO_async (6.1, 6.12): one bio, no plug
        (dict(), V6_1, PLUG_NONE),
        (dict(), V6_12, PLUG_NONE),
        # __blkdev_direct_IO_simple: a synchronous read has no plug in any release
        (dict(sync=True), V5_10, PLUG_NONE),
        (dict(sync=True), V6_12, PLUG_NONE),
        # a synchronous read over BIO_MAX_VECS pages: __blkdev_direct_IO's plug, waited on after it
        (dict(sync=True, nbytes=2 * BIO_MAX_BYTES), V6_1, PLUG_FINISH),
        # blkdev_write_iter's plug (5.10, 6.1): a synchronous write sleeps inside it
        (dict(op="write", sync=True), V5_10, PLUG_SCHEDULE),
        (dict(op="write", sync=True), V6_1, PLUG_SCHEDULE),
        (dict(op="write", sync=True, sleeps=False, hipri=True), V6_1, PLUG_NONE),
        (dict(op="write"), V6_1, PLUG_FINISH),
        # 6.12: no plug in blkdev_write_iter
        (dict(op="write", sync=True), V6_12, PLUG_NONE),
        (dict(op="write"), V6_12, PLUG_NONE),
        # iomap_dio_rw (a file's direct IO): plugged, flushed before a synchronous wait, every release
        (dict(file=True, sync=True), V5_10, PLUG_FINISH),
        (dict(file=True, op="write", sync=True), V6_12, PLUG_FINISH),
        (dict(file=True), V6_12, PLUG_FINISH),
        # blkdev_issue_discard: submit_bio_wait inside a plug, every release
        (dict(op="trim", sync=True), V5_10, PLUG_SCHEDULE),
        (dict(op="trim", sync=True), V6_12, PLUG_SCHEDULE),
    ],
)
def test_each_path_plugs_as_its_release_does(case, kver, expected):
    assert plug(kver, **case) == expected


def _teo(c):
    """``c`` with the teo cpuidle governor."""
    cpu = c.platform.cpu.model_copy(update={"cpuidle_governor": "teo"})
    return c.model_copy(update={"platform": c.platform.model_copy(update={"cpu": cpu})})


def _kblockd_runs(host) -> int:
    return sum(w.runs for w in host.blk.kblockd.values())


def _fio_switches_per_io(host) -> float:
    fio = next(t for t in host.all_tasks if t.job == 0)
    return (fio.nvcsw + fio.nivcsw) / len(host.records)


def test_5x_block_device_plug_makes_the_submitter_dispatch_for_a_scheduler():
    """One io_uring SQE per enter (fio's default batch) at depth 32 with mq-deadline: on 5.15 each
    IO's own __blkdev_direct_IO plug is flushed as the call returns, so the submitter dispatches and
    kblockd never runs (CHEOPS'23's one-thread scheduler runs: a few hundred context switches of
    fio in 140 s); on 6.1 the single-bio path has no plug, every insert is run by kblockd and its
    nice -20 worker preempts fio about once per IO."""
    opts = {"ioengine": "io_uring", "iodepth": "32"}
    old = run_to_completion(cfg(opts, scheduler="mq-deadline", kernel={"version": "5.15"}))
    assert len(old.records) > 500
    assert _kblockd_runs(old) == 0
    assert _fio_switches_per_io(old) < 0.01
    new = run_to_completion(cfg(opts, scheduler="mq-deadline", kernel={"version": "6.1"}))
    assert _kblockd_runs(new) > 0.5 * len(new.records)
    assert _fio_switches_per_io(new) > 0.5


def test_a_file_jobs_iomap_plug_dispatches_in_the_submitter_on_every_release():
    """A file's direct IO goes through iomap_dio_rw's plug: no kblockd run with a scheduler, even
    for a synchronous read on 6.12, where a block device's read would be run by kblockd."""
    file_job = {"ioengine": "psync", "directory": "/mnt", "nrfiles": "2", "size": "64m"}
    on_file = run_to_completion(cfg(file_job, scheduler="mq-deadline", kernel={"version": "6.12"}))
    assert len(on_file.records) > 200 and _kblockd_runs(on_file) == 0
    on_bdev = run_to_completion(cfg({"ioengine": "psync"}, scheduler="mq-deadline", kernel={"version": "6.12"}))
    assert _kblockd_runs(on_bdev) >= len(on_bdev.records)


def test_a_sync_write_sleeping_in_blkdev_write_iters_plug_is_run_by_kblockd_even_without_a_scheduler():
    """psync writes to the block device with 'none': on 6.1 the write sleeps inside
    blkdev_write_iter's plug, schedule() flushes it and kblockd issues the command (one worker run
    per write, which costs the write its wake-up and switch); on 6.12 it is issued directly. (teo on
    both: its rules are one release's, where menu's 6.12 rules wait in C1 instead of POLL.)"""
    opts = {"ioengine": "psync", "rw": "randwrite"}
    old = run_to_completion(_teo(cfg(opts, kernel={"version": "6.1"})))
    new = run_to_completion(_teo(cfg(opts, kernel={"version": "6.12"})))
    assert _kblockd_runs(old) >= len(old.records) > 200
    assert _kblockd_runs(new) == 0
    lat = [sum(r.t_complete - r.t_submit for r in h.records) / len(h.records) for h in (old, new)]
    assert lat[0] > lat[1]  # the worker's wake-up and switch come before the doorbell


def test_polled_sync_writes_are_issued_at_once():
    """A polled (RWF_HIPRI) synchronous write inside 5.x/6.1's write plug is not modelled as a plug
    (its poll would find no command until the plug is flushed): issued directly, no kblockd."""
    opts = {"ioengine": "pvsync2", "rw": "randwrite", "hipri": "1"}
    host = run_to_completion(cfg(opts, io_poll=True, kernel={"version": "5.15"}))
    assert len(host.records) > 200 and _kblockd_runs(host) == 0


def test_a_shared_hardware_queues_async_runs_rotate_over_its_cpus():
    """A device with fewer queues than CPUs (2 queues for 8 CPUs: each serves 4): psync reads with
    mq-deadline are run by kblockd (no plug), on the first mapped CPU of the queue, then the next one
    every BLK_MQ_CPU_WORK_BATCH (8) runs (6.1 blk_mq_hctx_next_cpu): the workers of the queue's CPUs
    share its runs about evenly, not all on the queue's own CPU."""
    c = cfg({"ioengine": "psync"}, scheduler="mq-deadline", kernel={"version": "6.1"})
    ssd = c.platform.ssd.model_copy(update={"max_queue_pairs": 2})
    plat = c.platform.model_copy(update={"ssd": ssd})
    host = run_to_completion(c.model_copy(update={"platform": plat}))
    (h,) = host.blk._hctx.values()
    assert len(h.work_cpus) == 4
    runs = {cpu: w.runs for cpu, w in host.blk.kblockd.items()}
    assert set(runs) == set(h.work_cpus)
    total = sum(runs.values())
    assert total >= len(host.records) > 200
    assert max(runs.values()) - min(runs.values()) <= 8
