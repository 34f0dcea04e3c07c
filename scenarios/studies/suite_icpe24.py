"""The ``icpe24`` validation suite: the ICPE'24 IO-scheduler measurements shipped with stacksim
(:data:`scenarios.data.measurements.ICPE24_DIR`, MIT licence) as measured points on the
``icpe24-980pro`` platform, none of which its parameters were fitted to.

**Fig. 7** (:func:`fig7_points`): N fio processes (``numjobs=N``, ``group_reporting``) of io_uring
4 KiB random reads at depth 128 on one Samsung 980 PRO, per scheduler (:data:`SCHEDULERS`) and with
SPDK's fio plugin. Each point is the run's fio job as its JSON records it (its ``global options``,
the job as it ran), run unchanged but for its length
(:data:`RUNTIME_MS` after :data:`RAMP_MS`), with the scheduler it names in ``ioscheduler`` as the
queue's (``queue.scheduler``; fio's option only writes the sysfs file) and fio's release from the
JSON (``stacksim_fio_version``: 3.35 asks io_uring for DEFER_TASKRUN). The metrics are the group's
IOPS, within :data:`IOPS_TOLERANCE` (the issue's bar), and, reported without a tolerance (a cause,
not an outcome), the share of the host's :data:`CPUS` the processes kept busy: fio's ``usr_cpu`` +
``sys_cpu`` are each process's mean (``group_reporting``), so N x (usr + sys) / 100 CPUs (SPDK's
fifteen polling threads: 15 x 66.6% = 10.0), against the run summary's ``cpu_utilization``. A
subset of the measured process counts (:data:`PROCS`) keeps the suite's time reasonable.

**Tables 2-4** (:func:`kyber_points`): kyber with a random-read job and a random-write job on one
device, read and write target latencies varied. fio's ``group_reporting`` merges the two jobs into
one entry whose ``read`` is the read job's and ``write`` the write job's; the entry's ``job options``
are the last job's (the writer: ``rw=randwrite``, its CPU, in tables 3-4 its depth). The reader's
options are not recorded; they are derived (:data:`KYBER_READER`): table 2's reader at the group's
depth 128 on CPU 1 (the writer is on CPU 2: "pinned to two CPUs"), tables 3-4's at depth 1 (Little's
law on the measurements: read IOPS x mean read latency = 1.00 in every run) on CPU 1. The measured
value is the mean over the five repetitions. What is checked is the **order** of the read share
(read IOPS / all IOPS) across the target settings, where the repetitions separate them
(:func:`kyber_order`), not its size: the point's metrics (``per_job.0.iops``, the reader's,
``per_job.1.iops``, the writer's) are reported without a tolerance (tests/test_icpe24.py checks the
order).

A target of ``0`` in a file name (``r_0``, ``w_0``) is read here as a target of 0 ns written to
kyber's sysfs file, not as the default (see the package README): ``kyber_lat_store`` stores what
is written, and with a target of 0 every completion lands in the last latency bucket
(``max(target >> 2, 1)`` wide), so the domain always misses its target. The model's tunable is
at least 1 ns, whose buckets are the same 1 ns wide: ``0`` runs as 1 ns (:data:`ZERO_TARGET_NS`).
"""

from __future__ import annotations

import re
import statistics
from pathlib import Path

from scenarios.data.measurements import ICPE24_DIR
from scenarios.inputs.measurements import read_fio_json
from scenarios.inputs.measurements.fio_json import FioResult
from scenarios.studies.points import Point

__all__ = [
    "PLATFORM",
    "SCHEDULERS",
    "SPDK",
    "PROCS",
    "RUNTIME_MS",
    "RAMP_MS",
    "IOPS_TOLERANCE",
    "CPUS",
    "FIG7_DIR",
    "TABLE2_DIR",
    "TABLE34_DIR",
    "KYBER_TABLE2",
    "KYBER_TABLE34",
    "KYBER_READER",
    "ZERO_TARGET_NS",
    "KYBER_RUNTIME_MS",
    "KYBER_RAMP_MS",
    "fig7_file",
    "fig7_result",
    "fig7_points",
    "kyber_runs",
    "kyber_points",
    "kyber_order",
    "kyber_label",
    "read_share",
    "icpe24_points",
]

PLATFORM = "icpe24-980pro"
#: fig. 7's kernel schedulers, in the artifact's order
SCHEDULERS = ("none", "bfq", "kyber", "mq-deadline")
#: fig. 7's user-space run: SPDK's fio plugin (models.ioengines.spdk)
SPDK = "spdk"
#: the process counts checked, of the 1-15 measured
PROCS = (1, 2, 4, 8, 12, 15)
#: simulated time per fig. 7 point after :data:`RAMP_MS`, ms (the measured runs: 120 s after 30 s)
RUNTIME_MS = 20.0
RAMP_MS = 5.0
#: the host's logical CPUs (the artifact's 10 cores, SMT off: see the platform)
CPUS = 10
#: the IOPS bar: a relative error within 15%
IOPS_TOLERANCE = 0.15

FIG7_DIR = ICPE24_DIR / "fig-7-tapp-scal-1-ssd" / "results_tapp_inc_proc_1_dev_10_core" / "fio_output"
TABLE2_DIR = ICPE24_DIR / "table-2" / "results_kyber_vary_target_lat"
TABLE34_DIR = ICPE24_DIR / "table-3-4" / "results_kyber_l_t_mix"
#: fio JSON options that name outputs or places, or that stacksim takes elsewhere (``ioscheduler``:
#: the queue's scheduler; ``name``: the label)
_DROP = ("name", "ioscheduler", "write_iops_log", "write_lat_log", "write_bw_log", "log_avg_msec")

#: table 2's settings checked, (read target, write target) as the files name them: reads favoured
#: (the read target always missed, the write target long), the two even, writes favoured, reads
#: starved (the write target always missed, the read target never)
KYBER_TABLE2 = (("0", "1s"), ("2ms", "2ms"), ("10ms", "2ms"), ("1s", "0"))
#: tables 3-4's: a depth-1 reader whose target is below its latency (the writer throttled), and
#: one meeting its target (nothing throttled for it)
KYBER_TABLE34 = (("50us", "10ms"), ("10ms", "10ms"))
#: the reader's options, derived (see the module docstring), by table
KYBER_READER = {
    "table-2": {"name": "1", "rw": "randread", "cpus_allowed": "1"},
    "table-3-4": {"name": "1", "rw": "randread", "cpus_allowed": "1", "iodepth": "1"},
}
#: what a target of 0 runs as (see the module docstring), ns
ZERO_TARGET_NS = 1
#: simulated time per kyber point after :data:`KYBER_RAMP_MS`, ms: kyber's timer adjusts the depths
#: at most every 100 ms, by a factor of 1/4 to 2 each time, so a depth of 128 needs a few hundred ms
#: to settle. After a 200 ms ramp the shares are measured over 100 ms: the same order as after 300 ms
#: and over 300 ms (the starved reader's share still falling: 0.085 here, 0.005 after 300 + 300 ms)
KYBER_RUNTIME_MS = 100.0
KYBER_RAMP_MS = 200.0

_TIME = re.compile(r"^(\d+)(us|ms|s)$")
_NS = {"us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}


def fig7_file(sched: str, procs: int) -> Path:
    """The fio output of fig. 7's run with ``procs`` processes and scheduler ``sched`` (or SPDK)."""
    return FIG7_DIR / f"proc_{procs}_dev_1_sche_{sched}.txt"


def fig7_result(sched: str, procs: int) -> FioResult:
    """That run's one fio result (``group_reporting``: the processes as one)."""
    (res,) = read_fio_json(str(fig7_file(sched, procs)))
    return res


def _job(res: FioResult, drop=_DROP) -> dict[str, str]:
    """The job as fio's JSON records it, for :class:`Point`'s ``fio_job``, and fio's release."""
    job = {k: v for k, v in res.options.items() if k not in drop}
    version = res.fio_version.removeprefix("fio-")
    if version:
        job["stacksim_fio_version"] = version
    return job


def fig7_points(schedulers: tuple[str, ...] = (*SCHEDULERS, SPDK), procs: tuple[int, ...] = PROCS) -> list[Point]:
    """Fig. 7's points, by scheduler then process count."""
    out = []
    for sched in schedulers:
        for n in procs:
            res = fig7_result(sched, n)
            config: dict = _job(res)
            assert config["numjobs"] == str(n) and config["iodepth"] == "128"
            if sched != SPDK:
                assert res.options.get("ioscheduler") == sched
                config["queue.scheduler"] = sched
            out.append(
                Point(
                    label=f"icpe24 fig7 {sched} {n}p",
                    config=config,
                    metrics={"iops": res.read.iops, "cpu_utilization": n * (res.usr_cpu + res.sys_cpu) / 100 / CPUS},
                    platform=PLATFORM,
                    runtime_ms=RUNTIME_MS,
                    ramp_ms=RAMP_MS,
                    fio_job=True,
                    tolerance={"iops": IOPS_TOLERANCE},
                )
            )
    return out


def _target_ns(text: str) -> int:
    if text == "0":
        return ZERO_TARGET_NS
    m = _TIME.match(text)
    if not m:
        raise ValueError(f"kyber target {text!r}: expected 0 or N(us|ms|s)")
    return int(m[1]) * _NS[m[2]]


def kyber_runs(table: str, read: str, write: str) -> list[FioResult]:
    """The repetitions of one kyber setting of ``table`` (``table-2``, ``table-3-4``)."""
    base = TABLE2_DIR if table == "table-2" else TABLE34_DIR
    files = sorted(base.glob(f"rep_*/fio_output/separate_sche_kyber_r_{read}_w_{write}.txt"))
    return [r for f in files for r in read_fio_json(str(f))]


def kyber_points(
    settings: dict[str, tuple[tuple[str, str], ...]] | None = None,
) -> list[Point]:
    """Tables 2-4's points: the reader's and the writer's IOPS (the mean of the repetitions) per
    (read, write) target setting."""
    settings = settings or {"table-2": KYBER_TABLE2, "table-3-4": KYBER_TABLE34}
    out = []
    for table, pairs in settings.items():
        for read, write in pairs:
            runs = kyber_runs(table, read, write)
            assert runs, (table, read, write)
            writer = _job(runs[0], drop=(*_DROP, "group_reporting"))
            common = {k: v for k, v in writer.items() if k not in ("rw", "cpus_allowed")}
            reader = {**common, **KYBER_READER[table]}
            out.append(
                Point(
                    label=kyber_label(table, read, write),
                    config={
                        "queue.scheduler": "kyber",
                        "queue.iosched.read_lat_nsec": _target_ns(read),
                        "queue.iosched.write_lat_nsec": _target_ns(write),
                    },
                    metrics={
                        "per_job.0.iops": statistics.fmean(r.read.iops for r in runs),
                        "per_job.1.iops": statistics.fmean(r.write.iops for r in runs),
                    },
                    platform=PLATFORM,
                    runtime_ms=KYBER_RUNTIME_MS,
                    ramp_ms=KYBER_RAMP_MS,
                    fio_jobs=({**reader, "name": "1"}, {**writer, "name": "2"}),
                )
            )
    return out


def read_share(reads: float, writes: float) -> float:
    """The reader's share of the IOs."""
    return reads / (reads + writes)


def kyber_label(table: str, read: str, write: str) -> str:
    """The label of tables 2-4's point of that setting."""
    return f"icpe24 {table} kyber r={read} w={write}"


def kyber_order(table: str, pairs: tuple[tuple[str, str], ...]) -> list[tuple[str, str]]:
    """The order of the read share that ``table``'s measurements establish among the settings
    ``pairs``: ``(a, b)`` (point labels) when every repetition of ``a`` gave the reader a larger
    share than every repetition of ``b`` (the ranges do not overlap); settings the repetitions do
    not separate are not ordered."""
    shares = {
        kyber_label(table, r, w): [read_share(x.read.iops, x.write.iops) for x in kyber_runs(table, r, w)]
        for r, w in pairs
    }
    return [(a, b) for a in shares for b in shares if a != b and min(shares[a]) > max(shares[b])]


def icpe24_points() -> list[Point]:
    """The suite's points: fig. 7's, then tables 2-4's."""
    return [*fig7_points(), *kyber_points()]
