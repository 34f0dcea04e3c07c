"""The kblockd worker's coalescing (models/os/kblockd.py): a kick while the work is pending adds to
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
