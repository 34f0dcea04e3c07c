"""Asynchronous engines (libaio, io_uring incl. IOPOLL and SQPOLL), merging, rate limiting,
multi-tenant placement, and the IO-scheduler platform's calibration (io_schedulers_ull.yaml)."""

import pytest

from models.platforms import IO_SCHED_FIT, optane_p4801x_e3_1230
from scenarios.config.host import RunConfig
from scenarios.inputs.fio.parser import job_from_options, parse_fio_text
from scenarios.run.assembly import build_run
from scenarios.run.simulate import simulate
from scenarios.studies.calibrate_io_schedulers import SCHEDULERS, run_point, targets


def cfg(opts: dict, *, io_poll=False, scheduler="none", runtime_ms=30, seed=5, jobs=None, kernel=None):
    plat = optane_p4801x_e3_1230()
    if kernel:
        plat = plat.model_copy(update={"kernel": plat.kernel.model_copy(update=kernel)})
    queue = plat.queue.model_copy(update={"io_poll": io_poll, "scheduler": scheduler})
    base = {
        "rw": "randread",
        "bs": "4k",
        "direct": "1",
        "runtime": f"{runtime_ms}ms",
        "ramp_time": "5ms",
        "time_based": "1",
    }
    if jobs is None:
        jobs = (job_from_options({**base, **opts}, name="j"),)
    return RunConfig(name="t", platform=plat, queue=queue, jobs=jobs, seed=seed)


def run_to_completion(c):
    host, _fio, ramp, end = build_run(c, keep_requests=True)
    host.engine.run(end + 20e6)
    return host


@pytest.mark.parametrize(
    "opts, io_poll",
    [
        ({"ioengine": "libaio", "iodepth": "32"}, False),
        (
            {
                "ioengine": "libaio",
                "iodepth": "16",
                "iodepth_batch_submit": "8",
                "iodepth_batch_complete_min": "4",
                "iodepth_batch_complete_max": "16",
            },
            False,
        ),
        ({"ioengine": "io_uring", "iodepth": "8", "hipri": "1"}, True),
        ({"ioengine": "io_uring", "iodepth": "8", "sqthread_poll": "1"}, False),
        ({"ioengine": "io_uring", "iodepth": "8", "sqthread_poll": "1", "hipri": "1"}, True),
        ({"ioengine": "io_uring", "iodepth": "4", "rw": "randrw", "numjobs": "3"}, False),
        ({"ioengine": "libaio", "iodepth": "8", "thinktime": "100us"}, False),
        ({"ioengine": "io_uring", "iodepth": "8", "sqthread_poll": "1", "thinktime": "100us"}, False),
    ],
)
def test_async_engines_conserve_every_io(opts, io_poll):
    host = run_to_completion(cfg(opts, io_poll=io_poll, runtime_ms=5))
    ids = [r.id for r in host.records]
    assert len(ids) == len(set(ids)) == host.next_io_id
    for r in host.records:
        assert r.t_submit <= r.t_dispatch <= r.t_dev_start < r.t_dev_end <= r.t_cqe <= r.t_reaped <= r.t_complete
    assert all(t.state == "dead" for t in host.all_tasks)


def test_depth_raises_throughput_until_the_cpu_or_device_saturates():
    qd1 = simulate(cfg({"ioengine": "libaio", "iodepth": "1"}))["summary"]
    qd32 = simulate(cfg({"ioengine": "libaio", "iodepth": "32"}))["summary"]
    assert qd32["iops"] > 3 * qd1["iops"]
    assert qd32["context_switches_per_io"] < 0.1  # the reaper rarely has to sleep at depth 32


def test_batched_submission_amortises_system_calls():
    one = simulate(cfg({"ioengine": "libaio", "iodepth": "16"}))["summary"]["layers"]
    batched = simulate(
        cfg(
            {
                "ioengine": "libaio",
                "iodepth": "16",
                "iodepth_batch_submit": "16",
                "iodepth_batch_complete_min": "16",
                "iodepth_batch_complete_max": "16",
            }
        )
    )["summary"]["layers"]
    # the syscall layer per IO: the engine's per-iocb issue and reap work, plus one entry and exit
    # per system call. Batched: one io_submit and one io_getevents per 16 IOs (1% for the partial
    # batches at the ends of the run); one at a time: an io_submit per IO plus at least one
    # io_getevents per 16 (min_nr 1 at depth 16 reaps what is there)
    c = cfg({"ioengine": "libaio"})
    k, ghz = c.platform.kernel, c.platform.cpu.top_freq_ghz
    per_io, call = k.aio_issue_cycles + k.aio_reap_cycles, k.syscall_entry_cycles + k.syscall_exit_cycles
    assert batched["syscall"] == pytest.approx((per_io + 2 * call / 16) / ghz, rel=0.01)
    assert one["syscall"] >= (per_io + call * (1 + 1 / 16)) / ghz


def test_iopoll_has_no_interrupts_and_sqpoll_no_application_syscalls():
    iopoll = simulate(cfg({"ioengine": "io_uring", "iodepth": "1", "hipri": "1"}, io_poll=True))["summary"]
    # no device interrupts (only the scheduler tick of the busy polling CPU)
    assert set(iopoll["interrupts"]) <= {"tick"} and iopoll["context_switches_per_io"] == 0
    plain = simulate(cfg({"ioengine": "io_uring", "iodepth": "1"}))
    sq = simulate(cfg({"ioengine": "io_uring", "iodepth": "1", "sqthread_poll": "1", "hipri": "1"}, io_poll=True))
    # no device interrupts either; two CPUs busy (the application's and the SQ thread's) make the
    # ticks kick an idle CPU to balance (nohz_balancer_kick): IPIs
    assert set(sq["summary"]["interrupts"]) <= {"tick", "ipi"}
    # the application thread enters the kernel for neither submission nor completion
    k = optane_p4801x_e3_1230().kernel
    per_io_syscall_ns = (k.syscall_entry_cycles + k.syscall_exit_cycles) / 3.8
    assert sq["summary"]["layers"]["syscall"] < plain["summary"]["layers"]["syscall"] - 1.5 * per_io_syscall_ns
    # ... at the price of a second CPU spinning (the SQ thread)
    assert sq["summary"]["cpu_utilization"] > plain["summary"]["cpu_utilization"] + 0.1
    assert sq["summary"]["latency_us"]["p50"] < plain["summary"]["latency_us"]["p50"]


def test_sq_thread_sleeps_after_idle_and_is_woken_by_a_syscall():
    c = cfg(
        {"ioengine": "io_uring", "iodepth": "1", "sqthread_poll": "1", "rate_iops": "200"},
        runtime_ms=60,
        kernel={"sq_thread_idle_ns": 1_000_000.0},
    )
    host = run_to_completion(c)
    sq = host.sq_threads[0]
    assert sq.wakeups >= 5
    assert host.next_io_id == len(host.records)


def test_async_thinktime_drains_the_queue_then_sleeps():
    """fio's handle_thinktime with iodepth 8: a burst of at most depth + 1 IOs, every one reaped,
    then thinktime (+ the 50 us timer slack) with nothing in flight."""
    host = run_to_completion(cfg({"ioengine": "io_uring", "iodepth": "8", "thinktime": "200us"}, runtime_ms=20))
    recs = sorted(host.records, key=lambda r: r.t_submit)
    bursts, start = [], 0
    for i in range(1, len(recs)):
        if recs[i].t_submit - recs[i - 1].t_submit > 200e3:
            # the gap follows the drain: the previous burst had completed before the next began
            assert max(r.t_complete for r in recs[start:i]) <= recs[i].t_submit - 200e3
            bursts.append(i - start)
            start = i
    assert len(bursts) > 20 and max(bursts) <= 9 and min(bursts) >= 1


def test_rate_iops_paces_issue():
    s = simulate(cfg({"ioengine": "libaio", "iodepth": "4", "rate_iops": "2000"}, runtime_ms=100))["summary"]
    assert s["iops"] == pytest.approx(2000, rel=0.05)


def test_sequential_batches_merge_in_the_plug():
    host = run_to_completion(
        cfg(
            {
                "ioengine": "libaio",
                "rw": "read",
                "iodepth": "8",
                "iodepth_batch_submit": "8",
                "iodepth_batch_complete_min": "8",
            },
            runtime_ms=5,
        )
    )
    assert host.blk.merges > 0
    assert host.devices[0].commands < len(host.records)
    children = {c.id for r in host.records if r.merged for c in r.merged}
    # the device moved every byte once: merged targets carry their children's bytes
    assert host.devices[0].bytes == sum(r.nbytes for r in host.records if r.id not in children)
    assert host.devices[0].commands == len(host.records) - len(children)


def test_merged_bios_pay_no_request_or_driver_work():
    """A bio merged in the plug allocates no request and reaches no driver: blk-mq and NVMe submit
    work per IO falls with the merge factor (8 sequential 4 KiB bios -> one 32 KiB request)."""
    opts = {"ioengine": "libaio", "iodepth": "32", "iodepth_batch_submit": "8", "iodepth_batch_complete_min": "8"}
    seq_s = simulate(cfg({**opts, "rw": "read"}, runtime_ms=20))["summary"]
    rnd_s = simulate(cfg({**opts, "rw": "randread"}, runtime_ms=20))["summary"]
    assert seq_s["device_commands_per_io"] == pytest.approx(1 / 8, rel=0.05)
    assert rnd_s["device_commands_per_io"] == pytest.approx(1, rel=0.05)
    seq, rnd = seq_s["layers"], rnd_s["layers"]
    # blk-mq and driver work is per request (per device command), so per IO it scales with the
    # commands per IO (1% for the frequency-weighted ns of a 20 ms run)
    ratio = seq_s["device_commands_per_io"] / rnd_s["device_commands_per_io"]
    assert seq["driver"] / rnd["driver"] == pytest.approx(ratio, rel=0.01)
    assert seq["block"] / rnd["block"] == pytest.approx(ratio, rel=0.01)
    assert seq["fs"] == pytest.approx(rnd["fs"], rel=0.1)  # every bio still pays the filesystem


def test_random_io_does_not_merge():
    host = run_to_completion(cfg({"ioengine": "libaio", "iodepth": "8", "iodepth_batch_submit": "8"}, runtime_ms=5))
    assert host.blk.merges == 0


def test_multi_tenant_jobs_run_on_separate_cpus():
    text = """
[global]
ioengine=io_uring
direct=1
runtime=20ms
time_based=1
iodepth=1
[r4k]
rw=randread
bs=4k
numjobs=2
[r8k]
rw=randread
bs=8k
numjobs=2
"""
    jobs = parse_fio_text(text).jobs
    host = run_to_completion(cfg({}, jobs=jobs))
    cpus = {t.cpu for t in host.all_tasks}
    assert len(cpus) == 4
    sizes = {r.job: r.nbytes for r in host.records}
    assert sizes == {0: 4096, 1: 8192}


def test_optane_writes_are_slower_and_flash_writes_are_buffered():
    from models.ssd.presets import p3700

    r = simulate(cfg({"ioengine": "io_uring", "iodepth": "1"}))["summary"]["latency_us"]["p50"]
    w = simulate(cfg({"ioengine": "io_uring", "iodepth": "1", "rw": "randwrite"}))["summary"]["latency_us"]["p50"]
    assert w > r
    c = cfg({"ioengine": "io_uring", "iodepth": "1"})
    flash = c.platform.model_copy(update={"ssd": p3700()})
    fr = simulate(c.model_copy(update={"platform": flash}))["summary"]["latency_us"]["p50"]
    cw = cfg({"ioengine": "io_uring", "iodepth": "1", "rw": "randwrite"})
    fw = simulate(cw.model_copy(update={"platform": flash}))["summary"]["latency_us"]["p50"]
    assert fw < 0.5 * fr  # acknowledged from the DRAM buffer


@pytest.mark.parametrize("sched", SCHEDULERS)
def test_calibration_io_uring_qd1_median_within_5_percent(sched):
    tgt = targets()
    for op in ("read", "write"):
        s = run_point(IO_SCHED_FIT, sched, op, runtime_ms=100)
        assert s["latency_us"]["p50"] == pytest.approx(tgt[sched][op], rel=0.05), (sched, op)


def test_iosched_cost_shows_in_layers():
    none = simulate(cfg({"ioengine": "io_uring", "iodepth": "1"}))["summary"]["layers"]["iosched"]
    bfq = simulate(cfg({"ioengine": "io_uring", "iodepth": "1"}, scheduler="bfq"))["summary"]["layers"]["iosched"]
    assert none == 0 and bfq > 1000


# -- where the dispatch runs: kblockd (5.x) vs the submitting context, plug batches ---------------


def test_with_a_scheduler_an_unplugged_request_is_dispatched_by_the_cpus_kblockd_worker():
    """io_uring QD1 with mq-deadline: every request is inserted by fio and dispatched by the
    kworker of fio's CPU, which preempts fio at its return to user space (one involuntary switch
    per IO); with none, or with sched_dispatch=direct, fio's own context rings the doorbell."""
    host = run_to_completion(cfg({"ioengine": "io_uring", "iodepth": "1"}, scheduler="mq-deadline"))
    ios = len(host.records)
    ((cpu, worker),) = host.blk.kblockd.items()
    fio = next(t for t in host.all_tasks if t.job == 0)
    assert cpu == fio.cpu and worker.task.kthread
    assert worker.dispatched == ios == host.blk.lock_rounds
    # preempted by the worker after each submission, once fio's virtual time is ahead of the new
    # worker's by the granularity (from the second IO on)
    assert ios - 1 <= fio.nivcsw <= ios
    assert worker.task.nvcsw == worker.runs  # it sleeps after each run
    for q in host.records:  # the doorbell waits for the switch to the worker: later than fio's return
        assert q.t_dispatch > q.t_issued
    for setup in (dict(scheduler="none"), dict(scheduler="mq-deadline", direct=True)):
        c = cfg({"ioengine": "io_uring", "iodepth": "1"}, scheduler=setup["scheduler"])
        if setup.get("direct"):
            c = c.with_queue(sched_dispatch="direct")
        h = run_to_completion(c)
        assert h.blk.kblockd == {}
        assert all(q.t_dispatch <= q.t_issued for q in h.records)  # rung inside the submitting call


def test_a_plugged_batch_takes_the_scheduler_lock_once_and_dispatches_in_the_submitter():
    """iodepth_batch 8 with completions reaped 8 at a time: io_uring plugs every submission of 8
    requests, so each batch is inserted under one lock round and its queue run in fio's context;
    batches of 2 are not plugged (io_uring plugs from 3), and each request goes through kblockd."""
    opts = {"ioengine": "io_uring", "iodepth": "8", "iodepth_batch_submit": "8", "iodepth_batch_complete_min": "8"}
    host = run_to_completion(cfg(opts, scheduler="mq-deadline"))
    ios = len(host.records)
    assert ios % 8 == 0 and host.blk.lock_rounds == ios // 8
    assert host.blk.kblockd == {}
    opts2 = {"ioengine": "io_uring", "iodepth": "2", "iodepth_batch_submit": "2", "iodepth_batch_complete_min": "2"}
    host2 = run_to_completion(cfg(opts2, scheduler="mq-deadline"))
    ios2 = len(host2.records)
    assert host2.blk.lock_rounds == ios2 == sum(w.dispatched for w in host2.blk.kblockd.values())


def test_sq_thread_with_a_scheduler_is_preempted_by_kblockd_and_keeps_polling():
    """IOPOLL + SQPOLL with bfq: the SQ thread inserts, the kworker of its CPU preempts it (cond_resched
    in its loop) and dispatches; the SQ thread is runnable again at once, never asleep, and every
    IO completes (it once slept forever in its poll loop: nothing wakes a spinning kernel thread)."""
    c = cfg({"ioengine": "io_uring", "iodepth": "1", "sqthread_poll": "1", "hipri": "1"}, io_poll=True, scheduler="bfq")
    host = run_to_completion(c)
    sq = host.sq_threads[0]
    ios = len(host.records)
    assert ios == host.next_io_id > 100
    assert sq.task.nvcsw == 0 and sq.task.nivcsw == ios
    assert host.blk.kblockd[sq.cpu].dispatched == ios
