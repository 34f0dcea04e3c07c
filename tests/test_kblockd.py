"""The kblockd worker's coalescing (models/os/block/kblockd.py): a kick while the work is pending adds to
it, and one run dispatches everything queued."""

from __future__ import annotations

from tests.test_async_io import cfg, run_to_completion


def test_kicks_while_the_work_is_pending_coalesce_into_one_run():
    """Two requests per io_uring_enter (unplugged on Linux 6.x: io_uring plugs from 3) with mq-deadline: both
    are inserted, the first kick wakes the worker, the second finds its work pending; the worker's
    one run dispatches both, so fio is preempted once per two IOs and the worker sleeps once."""
    opts = {"ioengine": "io_uring", "iodepth": "2", "iodepth_batch_submit": "2", "iodepth_batch_complete_min": "2"}
    host = run_to_completion(cfg(opts, scheduler="mq-deadline", kernel={"version": "6.6"}))
    ios = len(host.records)
    ((_, worker),) = host.blk.kblockd.items()
    assert worker.dispatched == ios > 100
    assert worker.runs * 2 == ios  # one run per two kicks
    fio = next(t for t in host.all_tasks if t.job == 0)
    assert fio.nivcsw == worker.runs and worker.task.nvcsw == worker.runs
    switches_per_io = (fio.nivcsw + fio.nvcsw + worker.task.nvcsw + worker.task.nivcsw) / ios
    assert switches_per_io < 1.6  # against 2 per IO (+1 for fio's own sleep) with one IO per call


def test_a_freed_tag_restarts_a_stalled_queue_through_kblockd_not_for_free():
    """Every submission plugged (8 at a time: blk-mq dispatches them itself), 4 driver tags per
    hardware queue: requests stall in mq-deadline, and each completion that frees a tag restarts
    its hardware queue asynchronously (blk_mq_sched_restart): the queue's kblockd worker runs and
    dispatches them, paying its wake-up and switches; with no stall (32 tags) it never runs."""
    opts = {
        "ioengine": "libaio",
        "iodepth": "32",
        "iodepth_batch_submit": "8",
        "iodepth_batch_complete_min": "8",
    }

    def tags(n: int):
        c = cfg(opts, scheduler="mq-deadline")
        plat = c.platform.model_copy(update={"queue": c.queue.model_copy(update={"nr_requests": n})})
        return c.model_copy(update={"platform": plat, "queue": plat.queue})

    stalled = run_to_completion(tags(4))
    workers = stalled.blk.kblockd.values()
    assert workers and sum(w.dispatched for w in workers) > 0.3 * len(stalled.records)
    # each worker was woken (it sleeps between bursts of runs) and its runs cost it CPU time
    assert all(0 < w.task.nvcsw <= w.runs and w.task.sys_ns > 0 for w in workers)
    free = run_to_completion(tags(32))
    assert not any(w.runs for w in free.blk.kblockd.values())
