"""Conservation and causality over random combinations of IO engine, depth, batching, IO
scheduler, interrupt generation and polling (hypothesis): every IO completes exactly once."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from models.platforms import optane_p4800x_e5_2660v4
from scenarios.config.host import RunConfig
from scenarios.inputs.fio.parser import job_from_options
from scenarios.run.assembly import build_run


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    engine=st.sampled_from(["libaio", "io_uring", "pvsync2"]),
    depth=st.sampled_from([1, 3, 16]),
    batch=st.sampled_from([1, 4]),
    jobs=st.integers(1, 3),
    sched=st.sampled_from(["none", "mq-deadline", "kyber", "bfq"]),
    irq=st.sampled_from(["none", "nvme", "adaptive", "cinterrupts"]),
    poll=st.booleans(),
    rw=st.sampled_from(["randread", "read", "randrw"]),
    seed=st.integers(0, 1000),
)
def test_every_io_completes_once(engine, depth, batch, jobs, sched, irq, poll, rw, seed):
    _check_every_io_completes_once(engine, depth, batch, jobs, sched, irq, poll, rw, seed)


# was a strict xfail (found 2026-11-23): with io_uring IOPOLL, bfq and 3 jobs on 2 CPUs a few IOs
# never completed. Cause: a preempted IOPOLL reaper slept in io_schedule like a synchronous direct IO,
# and nobody else polled its queue; io_iopoll_check instead stops on need_resched and fio enters again.
def test_bfq_polled_io_uring_with_more_jobs_than_cpus():
    for seed in (10, 18):  # seeds that stall under the current model (timing decides which do)
        _check_every_io_completes_once("io_uring", 16, 1, 3, "bfq", "none", True, "randread", seed)


def _check_every_io_completes_once(engine, depth, batch, jobs, sched, irq, poll, rw, seed):
    plat = optane_p4800x_e5_2660v4()
    plat = plat.model_copy(
        update={
            "nvme": plat.nvme.model_copy(update={"irq": irq, "irq_thr": 4, "irq_max_rate": 50_000}),
            "kernel": plat.kernel.model_copy(update={"version": "6.6"}),  # the preset's 5.0 has no io_uring
        }
    )
    queue = plat.queue.model_copy(update={"scheduler": sched, "io_poll": poll})
    opts = {
        "rw": rw,
        "bs": "4k",
        "ioengine": engine,
        "direct": "1",
        "numjobs": str(jobs),
        "runtime": "2ms",
        "time_based": "1",
        "cpus_allowed": "0-1",
    }
    if engine != "pvsync2":
        opts.update(iodepth=str(depth), iodepth_batch_submit=str(min(batch, depth)))
    if poll and engine != "libaio":
        opts["hipri"] = "1"
    cfg = RunConfig(name="inv", platform=plat, queue=queue, jobs=(job_from_options(opts, name="j"),), seed=seed)
    host, _fio, ramp, end = build_run(cfg, keep_requests=True)
    host.engine.run(end + 50e6)
    ids = [r.id for r in host.records]
    assert len(ids) == len(set(ids)) == host.next_io_id
    for r in host.records:
        assert r.t_submit <= r.t_dispatch <= r.t_dev_start < r.t_dev_end <= r.t_cqe <= r.t_reaped <= r.t_complete
    # IO and SQ threads end; kblockd workers (kernel threads) sleep with nothing left to run
    workers = {w.task for w in host.blk.kblockd.values()}
    assert all(t.state == "dead" for t in host.all_tasks if t not in workers)
    assert all(t.state == "sleeping" for t in workers) and not any(w.pending for w in host.blk.kblockd.values())


def test_a_polled_request_merged_into_another_cpus_request_completes():
    """Two sequential readers on CPUs 0 and 1 read the same offsets; with mq-deadline their requests
    wait for the kblockd worker and merge, so one completes with the other CPU's request. The
    poller of the merged one (IOPOLL, or a synchronous classic poller) must notice: it once polled
    its own, empty queue forever (found by hypothesis: io_uring, depth 1, 2 jobs, seed 0)."""
    _check_every_io_completes_once("io_uring", 1, 1, 2, "mq-deadline", "none", True, "read", 0)
    _check_every_io_completes_once("pvsync2", 1, 1, 2, "mq-deadline", "none", True, "read", 0)


def test_an_async_thread_that_moved_reaps_after_the_event_was_posted():
    """Regression (found by the property above): a libaio thread moved to another CPU reaped an
    event its old CPU's handler had posted at a time ahead of the new CPU's clock (the handler's
    work is carried): t_complete came before t_reaped."""
    _check_every_io_completes_once("libaio", 3, 1, 3, "none", "adaptive", False, "randread", 0)
