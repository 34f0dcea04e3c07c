"""io_uring SQPOLL threads: one per ring, placed and shared by the scheduler like any task
(models/os/io_uring/sqpoll.py, models/os/sched/placement.py select_fork_cpu, models/os/sched/cfs.py)."""

from __future__ import annotations

from models.platforms import optane_p4800x_e5_2660v4
from scenarios.config.host import RunConfig
from scenarios.inputs.fio.parser import job_from_options
from scenarios.run.assembly import build_run
from scenarios.run.simulate import simulate


def _cfg(
    opts: dict, *, runtime_ms: int = 20, sched: dict | None = None, ssd_count: int = 4, io_poll: bool = False
) -> RunConfig:
    r730 = optane_p4800x_e5_2660v4()  # its study's Linux 5.0 has no io_uring: a kernel that has
    kernel = r730.kernel.model_copy(update={"version": "5.15"})
    plat = r730.model_copy(update={"ssd_count": ssd_count, "kernel": kernel})
    plat = plat.model_copy(update={"queue": plat.queue.model_copy(update={"io_poll": io_poll})})
    if sched:
        plat = plat.model_copy(update={"sched": plat.sched.model_copy(update=sched)})
    base = {
        "rw": "randread",
        "bs": "4k",
        "direct": "1",
        "runtime": f"{runtime_ms}ms",
        "time_based": "1",
        "ioengine": "io_uring",
        "sqthread_poll": "1",
    }
    job = job_from_options({**base, **opts}, name="j")
    return RunConfig(name="t", platform=plat, queue=plat.queue, jobs=(job,), seed=3)


def _run(c: RunConfig):
    host, _fio, _ramp, end = build_run(c, keep_requests=True)
    host.engine.run(end)
    return host


def test_each_ring_has_its_own_sq_thread_on_a_cpu_of_its_own():
    """Four SQPOLL rings on 14 CPUs: four SQ threads (io_sq_offload_create without ATTACH_WQ),
    each started by fork placement on an idle CPU, none on an application thread's CPU, and the
    four threads' IOs go through four CPUs' queues (not one shared thread's)."""
    host = _run(_cfg({"iodepth": "16", "numjobs": "4"}))
    sqs = host.sq_threads
    assert len(sqs) == 4
    app_cpus = {t.cpu for t in host.all_tasks if t.job == 0}
    sq_cpus = {sq.cpu for sq in sqs}
    assert len(sq_cpus) == 4 and not sq_cpus & app_cpus
    assert all(sq.submitted > 100 for sq in sqs)
    assert {r.qp.cpu for r in host.records} == sq_cpus


def test_sq_threads_scale_with_rings():
    """Throughput grows with the rings, each driven by its own SQ thread (one shared thread on
    the last CPU capped every ring at one CPU's submission rate)."""
    one = len(_run(_cfg({"iodepth": "32"}, ssd_count=4)).records)
    four = len(_run(_cfg({"iodepth": "32", "numjobs": "4"}, ssd_count=4)).records)
    assert four > 3 * one


def test_unbound_sq_thread_leaves_the_cpu_of_a_pinned_application():
    """An application confined to the last CPU (cpus_allowed=13): its unbound SQ thread starts on
    another, idle CPU, so nothing shares CPU 13 and IOs flow at the depth-1 rate."""
    host = _run(_cfg({"iodepth": "1", "cpus_allowed": "13"}))
    (sq,) = host.sq_threads
    assert sq.cpu != 13
    assert len(host.records) > 1000  # ~100K IOPS for 20 ms


def test_sq_thread_sharing_its_submitters_cpu_alternates_by_cfs_slices():
    """SQ thread bound to the application's only CPU: both spin (io_sq_thread yields only at
    cond_resched with need_resched set; fio spins on the CQ ring), so CFS time slices alternate
    them. An IO is written in the application's slice, submitted in the SQ thread's, reaped in
    the application's next one: IOs complete, about one per two slices, and shorter slices
    (sched_latency) make them more frequent."""
    opts = {"iodepth": "1", "cpus_allowed": "3", "sqthread_poll_cpu": "3"}
    runtime_ms = 200
    base = _run(_cfg(opts, runtime_ms=runtime_ms))
    n = len(base.records)
    slice_ms = 24 / 2  # sched_latency / 2 runnable tasks (> min_granularity), to the next 4 ms tick
    assert runtime_ms / (2 * (slice_ms + 4)) - 1 <= n <= runtime_ms / (2 * slice_ms) + 1
    lat = [r.t_complete - r.t_submit for r in base.records]
    assert min(lat) > slice_ms * 1e6  # each waited a whole slice of the other task
    short = _run(_cfg(opts, runtime_ms=runtime_ms, sched={"sched_latency_ns": 6e6, "min_granularity_ns": 0.75e6}))
    assert len(short.records) > 2.5 * n


def test_iopoll_sq_thread_polls_the_queue_of_every_device_it_submitted_to():
    """SQPOLL + IOPOLL striping over three devices: the SQ thread reaps by polling each request's
    queue (io_do_iopoll walks the ring's iopoll_list), not one device's, so every device's IOs
    complete at the polled rate."""
    opts = {"iodepth": "32", "hipri": "1", "filename": "/dev/nvme0n1:/dev/nvme1n1:/dev/nvme2n1"}
    host = _run(_cfg(opts, runtime_ms=10, io_poll=True))
    per_dev: dict[int, int] = {}
    for r in host.records:
        per_dev[r.qp.device.index] = per_dev.get(r.qp.device.index, 0) + 1
    assert sorted(per_dev) == [0, 1, 2]
    assert min(per_dev.values()) > 500  # ~400K IOPS in all for 10 ms


def test_the_sq_thread_completes_its_requests_and_fio_reads_the_ring_in_user_space():
    """The SQ thread issued the requests, so their completion task work (io_complete_rw ->
    io_req_task_work_add to req->task) runs on its CPU: the direct-IO completion and the CQE fills.
    fio's thread only reads the CQ ring from user space: no file-system or system-call time on its
    CPU (it had the completion's cycles, as if it reaped through io_uring_enter)."""
    cfg = _cfg({"iodepth": "16", "sqthread_poll_cpu": "3", "cpus_allowed": "1"})
    per_cpu = simulate(cfg).summary["layers_ns_per_io_per_cpu"]
    fio_cpu, sq_cpu = per_cpu["cpu1"], per_cpu["cpu3"]
    assert fio_cpu["fs"] == 0.0 and fio_cpu["syscall"] == 0.0 and fio_cpu["user"] > 0
    k = cfg.platform.kernel
    freq_ghz = cfg.platform.cpu.max_freq_ghz if cfg.platform.cpu.turbo else cfg.platform.cpu.base_freq_ghz
    assert sq_cpu["fs"] * freq_ghz >= 0.99 * (k.fs_submit_cycles + k.fs_complete_cycles)
