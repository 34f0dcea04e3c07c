"""The ``cheops23`` validation suite: the CHEOPS'23 measurements shipped with stacksim
(:data:`scenarios.data.measurements.CHEOPS23_DIR`, MIT licence) as measured points on the
``cheops23-optane`` platform.

Each point is one of the study's fio job files, run unchanged (its ``${FIO_RUN_TIME}`` and
``${FIO_RAMP_TIME}`` set to the measured 120 s and 20 s; the simulation itself runs
:data:`RUNTIME_MS` after :data:`RAMP_MS`), against that run's fio JSON: IOPS, mean latency
(fio's ``lat``: submission to reap), the thread's CPU share ((usr + sys) / 100 against the
simulated thread's time on a CPU per elapsed time), its context switches per IO, and at the depth-1
and saturation points ``perf stat -a``'s instructions per IO and IPC (``perf_stat.csv``; the run
summary counts them the same way: every CPU's unhalted cycles, the POLL idle loop included). A job with
``hipri`` runs on polled queues (``queue.io_poll=1``), as it did on the measured host (its near-zero
context switches and interrupts say the completions were polled). Every point runs as the study
pinned its counter runs, ``numactl -N 1 -m 1``: on node 1's CPUs (``numa_cpu_nodes=1``) with its
memory there (``numa_mem_policy=bind:1``), the devices' node (:data:`NUMACTL`; the artifact states
the pinning for its counter runs only: that its fio-result runs were pinned alike is an estimate).

The scheduler points (:data:`SCHED_POINT`) are io_uring's depth-128 job over seven devices with each
device's IO scheduler (:data:`SCHEDULERS`) set as the study's ``--ioscheduler`` did: IOPS, mean
latency, the thread's CPU share; their context switches (a few hundred in 140 s: the dispatch ran
in the thread, not in kblockd) are below :data:`MIN_CTX_PER_IO` and are checked in absolute terms.
"""

from __future__ import annotations

import csv

from scenarios.data.measurements import CHEOPS23_DIR
from scenarios.inputs.fio.parser import parse_fio_file
from scenarios.inputs.measurements import read_fio_json
from scenarios.studies.points import Point

__all__ = [
    "perf_counters",
    "PERF_WINDOW_S",
    "PLATFORM",
    "POINTS",
    "ENGINES",
    "RUNTIME_MS",
    "RAMP_MS",
    "MIN_CTX_PER_IO",
    "FIO_ENV",
    "NUMACTL",
    "SCHED_POINT",
    "SCHEDULERS",
    "cheops23_points",
]

PLATFORM = "cheops23-optane"
#: the study's operating points (its directories): one thread at depth 1 on one device, at the depth
#: that saturates the thread's CPU over seven devices, and at depth 128 over seven devices
POINTS = ("qd1", "saturation", "depth128_1thread")
#: the engines of the study, by the names of its job files
ENGINES = ("psync", "aio", "iou", "iou_c", "iou_s", "spdk_fio")
#: the study's scheduler experiment at one thread (its directory) and the schedulers it set
SCHED_POINT = "sched_t1"
SCHEDULERS = ("none", "mq-deadline", "kyber", "bfq")
#: the environment the study's scripts ran fio with (seconds)
FIO_ENV = {"FIO_RUN_TIME": "120", "FIO_RAMP_TIME": "20"}
RUNTIME_MS = 60.0
#: ``numactl -N 1 -m 1`` as fio options: the job's CPUs and memory on node 1
NUMACTL = {"numa_cpu_nodes": "1", "numa_mem_policy": "bind:1"}
#: the study's perf stat windows (s): its counters are per window
PERF_WINDOW_S = 5.0
#: context switches per IO are compared where the thread blocks for its IOs (about one per IO); a
#: thread that never blocks measures ~1e-5 per IO (the ramp, the tick's preemptions), whose
#: relative error means nothing (tests check those points in absolute terms)
MIN_CTX_PER_IO = 0.05
RAMP_MS = 20.0


def perf_counters() -> dict[tuple[str, str], dict[str, float]]:
    """``perf stat -a`` per IO at the depth-1 and saturation points, by (point, engine):
    ``instructions_per_io`` and ``ipc`` (instructions / cycles), as the run summary names them."""
    out = {}
    with open(CHEOPS23_DIR / "perf_stat.csv", newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            ios = PERF_WINDOW_S * float(row["fio_iops"])
            out[(row["point"], row["engine"])] = {
                "instructions_per_io": float(row["instructions_per_5s"]) / ios,
                "ipc": float(row["instructions_per_5s"]) / float(row["cycles_per_5s"]),
            }
    return out


def cheops23_points(
    engines: tuple[str, ...] = ENGINES, points: tuple[str, ...] = POINTS, schedulers: tuple[str, ...] = SCHEDULERS
) -> list[Point]:
    """The measured points of the suite, in (point, engine) order, then the scheduler points in
    :data:`SCHEDULERS` order; a (point, engine) the study did not measure (psync only at depth 1) is
    skipped."""
    out = []
    perf = perf_counters()
    for where in points:
        for engine in engines:
            job = CHEOPS23_DIR / where / f"{engine}.fio"
            result = CHEOPS23_DIR / where / f"{engine}.json"
            if not job.is_file():
                continue
            metrics = {**_fio_metrics(result), **perf.get((where, engine), {})}
            (fio_job,) = parse_fio_file(job, env=FIO_ENV).jobs
            config = {**NUMACTL, **({"queue.io_poll": 1} if fio_job.hipri else {})}
            out.append(_point(f"cheops23 {where} {engine}", config, metrics, job))
    job = CHEOPS23_DIR / SCHED_POINT / "iou.fio"
    for sched in schedulers:  # the one-thread scheduler runs (SCHED_POINT)
        metrics = _fio_metrics(CHEOPS23_DIR / SCHED_POINT / f"iou_{sched}_threads_1.json")
        out.append(_point(f"cheops23 {SCHED_POINT} {sched}", {**NUMACTL, "queue.scheduler": sched}, metrics, job))
    return out


def _fio_metrics(result) -> dict[str, float]:
    """One study run's fio JSON as the suite compares it: IOPS, mean latency (fio's ``lat``), the
    thread's CPU share and, where the thread blocks for its IOs, its context switches per IO."""
    (res,) = read_fio_json(str(result))
    d = res.read
    lat = d.lat or d.clat
    assert lat is not None and d.total_ios
    metrics = {
        "iops": d.iops,
        "latency_us.mean": lat.mean_ns / 1e3,
        "per_job.0.cpu_share": (res.usr_cpu + res.sys_cpu) / 100.0,
    }
    if res.ctx / d.total_ios >= MIN_CTX_PER_IO:  # a relative error of ~0 is noise
        metrics["context_switches_per_io"] = res.ctx / d.total_ios
    return metrics


def _point(label: str, config: dict, metrics: dict[str, float], job) -> Point:
    """A point of the suite: the study's job file ``job`` run as the study ran it, on PLATFORM."""
    return Point(
        label=label,
        config=config,
        metrics=metrics,
        job_file=str(job),
        platform=PLATFORM,
        runtime_ms=RUNTIME_MS,
        ramp_ms=RAMP_MS,
        env=dict(FIO_ENV),
    )
