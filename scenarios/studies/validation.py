"""Measured points, simulating them, and ``stacksim validate``.

A **measured point** is one configuration that was measured on a real machine and what was
measured there:

* ``config``: ``--set`` keys applied on top of the base job (a fio option such as ``bs``,
  ``numjobs``, ``hipri``, ``iodepth``, ``ioengine``; or a dotted platform/queue key such as
  ``queue.io_poll``, ``queue.scheduler``, ``kernel.ctx_switch_cycles``);
* ``metrics``: measured values by name; a name is a dotted path into the simulator's
  ``summary`` (``iops``, ``bandwidth_mb_s``, ``latency_us.mean``, ``latency_us.p50``,
  ``latency_us.p99``, ``context_switches_per_io``, ``cpu_utilization``, ``power_w.system``, ...).

Sources (:func:`load_measured`): a measured-points CSV (:func:`~scenarios.inputs.measurements.read_points_csv`;
optional columns: ``label`` names the point, ``job`` a fio job file and ``power_log`` a wall-power
log (powerstat, ipmitool or time,watts CSV; its mean is the point's ``power_w.system`` unless a
metric column gives it), both relative to the CSV) or fio ``--output-format=json`` files
(:func:`~scenarios.inputs.measurements.read_fio_json`; one point per job (ungrouped clones added up), its
options as the whole job -- fio's defaults for the rest, refused when they cannot be modelled or
when there are none and no ``--job`` -- and :data:`FIO_METRICS` as metrics). Built-in suites
(:data:`SUITES`) turn the published figures shipped with the package (:mod:`scenarios.data.reference`)
into points.

Simulating a point (:class:`PointRunner`): the base job (``--job FILE``, else the built-in
``default`` scenario: one thread of 4 KiB random direct reads with pvsync2) with the run-wide
``--set`` keys, then the point's config, then the simulation length: the measured run length is
not simulated; every point runs ``runtime_ms`` after ``ramp_ms`` of warm-up (default 110 ms
when a job uses adaptive hybrid polling, whose statistics window is 100 ms, else 10 ms), with a
fixed seed.
"""

from __future__ import annotations

import json
import math
import os
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from models.ioengines import SYNC_ENGINES
from policies.completion import select_policy_name
from scenarios.config.host import resolve
from scenarios.config.sets import PLATFORM_PREFIXES
from scenarios.inputs.fio.parser import job_from_options, parse_fio_file
from scenarios.inputs.fio.units import ms_time
from scenarios.inputs.measurements import read_fio_json, read_points_csv, read_power_log
from scenarios.inputs.measurements.fio_json import DirStats, LatStats
from scenarios.run.simulate import simulate
from scenarios.studies import calibrate_io_schedulers as cis
from scenarios.studies import calibrate_poll_energy as cpe
from scenarios.studies.near_zero import absolute_tolerance
from scenarios.studies.points import Point
from scenarios.studies.suite_cheops23 import cheops23_points
from scenarios.studies.suite_cluster23zns import cluster23zns_points
from scenarios.studies.suite_icpe24 import icpe24_points
from simcore.errors import ConfigError
from simcore.numfmt import signed
from simcore.outfile import write_text

__all__ = [
    "Point",
    "load_measured",
    "PointRunner",
    "metric_value",
    "ValidationRow",
    "Validation",
    "validate_points",
    "format_validation",
    "SUITES",
    "SUITE_GROUPS",
    "suite_points",
]

DEFAULT_RUNTIME_MS = 100.0
HYBRID_RAMP_MS = 110.0
DEFAULT_RAMP_MS = 10.0
DEFAULT_SEED = 7
#: fio JSON -> metric names (see :func:`_fio_point`)
FIO_METRICS = (
    "iops",
    "bandwidth_mb_s",
    "latency_us.mean",
    "latency_us.p50",
    "latency_us.p90",
    "latency_us.p99",
    "latency_us.p99_9",
    "context_switches_per_io",
)
_FIO_PCT = {"p50": 50.0, "p90": 90.0, "p99": 99.0, "p99_9": 99.9}
#: fio JSON options that only name things or outputs (not simulated, and not fio job options here);
#: ``filename`` and ``directory`` stay: they say which SSDs the job used (``/dev/nvme3n1`` is SSD 3,
#: a regular file is on the simulated file system), so a job measured on one SSD of eight is
#: simulated on that one, not striped over all eight
_FIO_DROP = ("name", "output", "output-format", "write_iolog", "read_iolog")


# ------------------------------------------------------------------------------------------------
def _looks_like_json(path: str) -> bool:
    if path.lower().endswith(".json"):
        return True
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            head = f.read(4096)
    except OSError as e:
        raise ConfigError(f"{path}: cannot read measurements: {e.strerror or e}") from None
    return "{" in head and "jobs" in head


def _pooled(stats: list):
    """One LatStats for the clones' LatStats: IO-weighted mean, pooled standard deviation,
    overall min and max; percentiles cannot be combined and are left out."""
    if any(s is None for s in stats):
        return None
    n = sum(s.n for s in stats)
    if n == 0:
        return LatStats()
    mean = sum(s.mean_ns * s.n for s in stats) / n
    ss = sum((s.n - 1) * s.stddev_ns**2 + s.n * s.mean_ns**2 for s in stats if s.n)
    var = (ss - n * mean**2) / (n - 1) if n > 1 else 0.0
    return LatStats(
        min_ns=min(s.min_ns for s in stats if s.n),
        max_ns=max(s.max_ns for s in stats),
        mean_ns=mean,
        stddev_ns=math.sqrt(max(var, 0.0)),
        n=n,
    )


def _add_dirs(dirs: list) -> DirStats:
    return DirStats(
        iops=sum(d.iops for d in dirs),
        bw_kib_s=sum(d.bw_kib_s for d in dirs),
        io_bytes=sum(d.io_bytes for d in dirs),
        total_ios=sum(d.total_ios for d in dirs),
        runtime_ms=max(d.runtime_ms for d in dirs),
        clat=_pooled([d.clat for d in dirs]),
        lat=_pooled([d.lat for d in dirs]),
        slat=_pooled([d.slat for d in dirs]),
    )


def _group_clones(results: list) -> list:
    """fio reports each clone of a ``numjobs`` job apart unless ``group_reporting`` is set; the
    simulator's figures are the whole job's, so the clones of one job (consecutive entries of one
    JSON document with its name) are added up into one result."""
    out: list = []
    i = 0
    while i < len(results):
        res = results[i]
        try:
            numjobs = int(res.options.get("numjobs", "1"))
        except ValueError:
            numjobs = 1
        if numjobs <= 1 or res.options.get("group_reporting", "0") not in ("0", "false"):
            out.append(res)
            i += 1
            continue
        clones = [r for r in results[i : i + numjobs] if r.line == res.line and r.jobname == res.jobname]
        if len(clones) != numjobs:
            raise ConfigError(
                f"{res.path}:{res.line} job {res.jobname!r}: numjobs={numjobs} without group_reporting, "
                f"but {len(clones)} entries for it; rerun fio with group_reporting=1"
            )
        out.append(
            replace(
                res,
                read=_add_dirs([c.read for c in clones]),
                write=_add_dirs([c.write for c in clones]),
                error=max(c.error for c in clones),
                ctx=sum(c.ctx for c in clones),
                usr_cpu=sum(c.usr_cpu for c in clones) / numjobs,
                sys_cpu=sum(c.sys_cpu for c in clones) / numjobs,
            )
        )
        i += numjobs
    return out


def _fio_point(res, base_job: str | None) -> Point:
    """One fio job result as a point (read and write together: IOPS and bandwidth add up, the
    mean latency is IO-weighted; percentiles only when one direction has all the IOs). Its job is
    the JSON's options (``global options`` overlaid by ``job options``) with fio's defaults for
    the rest; a JSON without options needs the job file (``base_job``)."""
    dirs = [d for d in (res.read, res.write) if d.total_ios or d.iops]
    where = f"{res.path}:{res.line} job {res.jobname!r}"
    if res.error:
        raise ConfigError(f"{where}: fio reported error {res.error}; remove that job or file")
    if not dirs:
        raise ConfigError(f"{where}: no read or write IOs in this job")
    metrics: dict[str, float] = {
        "iops": sum(d.iops for d in dirs),
        "bandwidth_mb_s": sum(d.bw_kib_s for d in dirs) * 1024 / 1e6,
    }
    config = {k: v for k, v in res.options.items() if k not in _FIO_DROP}
    if config:  # what cannot be modelled (buffered IO, another engine, verify, ...) is refused here
        sync = job_from_options(config, name=res.jobname, source=f"{res.path}:{res.line}").ioengine in SYNC_ENGINES
    elif base_job is None:
        raise ConfigError(
            f"{where}: the fio JSON has no job options ('global options' / 'job options'), so what "
            f"was measured is unknown; give the job file that produced it with --job FILE.fio"
        )
    else:
        sync = all(j.ioengine in SYNC_ENGINES for j in parse_fio_file(base_job).jobs)
    # the simulator's latency is fio's lat (submit to reaped: slat + clat); for synchronous engines
    # slat is 0 and fio's clat percentiles (the ones reported by default) are lat's
    lats = [d.lat or (d.clat if sync else None) for d in dirs]
    if all(lat is not None for lat in lats):
        n = sum(max(lat.n, 1) for lat in lats)
        metrics["latency_us.mean"] = sum(lat.mean_ns * max(lat.n, 1) for lat in lats) / n / 1e3
    if len(dirs) == 1:
        d = dirs[0]
        pct = (d.lat.percentiles if d.lat is not None else {}) or (
            d.clat.percentiles if sync and d.clat is not None else {}
        )
        for name, p in _FIO_PCT.items():
            if p in pct:
                metrics[f"latency_us.{name}"] = pct[p] / 1e3
    total = sum(d.total_ios for d in dirs)
    if total and res.ctx:
        metrics["context_switches_per_io"] = res.ctx / total
    return Point(
        label=f"{Path(res.path).name}:{res.line} {res.jobname}", config=config, metrics=metrics, fio_job=bool(config)
    )


def load_measured(paths, *, echo: Callable[[str], None] | None = None, base_job: str | None = None) -> list[Point]:
    """Points from measured-points CSVs and fio JSON files (sniffed); ``echo`` receives one
    line per file saying what was understood. ``base_job`` (``--job``) is the job of fio JSON
    files that carry no options (without it they are refused)."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    points: list[Point] = []
    for p in map(str, paths):
        if not Path(p).is_file():
            raise ConfigError(f"measurements file not found: {p}")
        if _looks_like_json(p):
            results = read_fio_json(p)
            if echo:
                echo(results.describe())
            points += [_fio_point(r, base_job) for r in _group_clones(results)]
            continue
        mp = read_points_csv(p)
        if echo:
            echo(mp.describe())
        base = Path(p).resolve().parent
        for row in mp:
            config = dict(row["config"])
            label = config.pop("label", None) or f"{Path(p).name}:{row['line']}"
            job = config.pop("job", None)
            if job is not None:
                job_path = base / job
                if not job_path.is_file():
                    raise ConfigError(f"{p}:{row['line']}: job file not found: {job}")
                job = str(job_path)
            metrics = dict(row["metrics"])
            power_log = config.pop("power_log", None)
            if power_log is not None:
                log = read_power_log(base / power_log)
                if echo:
                    echo(log.describe())
                metrics.setdefault("power_w.system", log.mean_w)
            points.append(Point(label=label, config=config, metrics=metrics, job_file=job))
    if not points:
        raise ConfigError("no measured points")
    return points


# ------------------------------------------------------------------------------------------------
def metric_value(summary: dict, name: str) -> float:
    """The simulator's value of metric ``name`` (a dotted path into ``summary``)."""
    node: Any = summary
    for part in name.split("."):
        if isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]  # a list's element (per_job.0.cpu_share)
            continue
        if not isinstance(node, dict) or part not in node:
            raise ConfigError(
                f"metric {name!r} is not a simulator output (a dotted path into the run summary, "
                f"e.g. iops, bandwidth_mb_s, latency_us.mean, latency_us.p99, context_switches_per_io)"
            )
        node = node[part]
    if isinstance(node, bool) or not isinstance(node, (int, float)):
        raise ConfigError(f"metric {name!r} is not a number in the run summary")
    return float(node)


@dataclass
class PointRunner:
    """Simulates measured points on one platform (see the module docstring)."""

    platform: str | None
    sets: dict[str, Any] = field(default_factory=dict)
    job_file: str | None = None
    runtime_ms: float | None = None
    ramp_ms: float | None = None
    seed: int = DEFAULT_SEED
    simulations: int = 0

    def config(self, point: Point, extra: dict[str, Any] | None = None):
        """The RunConfig of ``point`` (``extra``: more --set keys, e.g. fitted parameters)."""
        platform = self.platform or point.platform
        if platform is None:
            raise ConfigError("--platform NAME is required (the platform the measurements are compared with)")
        runtime = self.runtime_ms or point.runtime_ms or DEFAULT_RUNTIME_MS
        ramp = self.ramp_ms if self.ramp_ms is not None else point.ramp_ms
        job_file = point.job_file or self.job_file
        sets = {
            **self.sets,
            **point.config,
            **(extra or {}),
            "runtime": ms_time(runtime, option="--runtime-ms"),
            "time_based": "1",
        }
        where = f"point {point.label}"
        jobs = None
        if point.fio_job or point.fio_jobs:  # the run-wide fio options, then the point's; not the base job
            fio = {k: v for k, v in sets.items() if "." not in k and k not in PLATFORM_PREFIXES}
            sets = {k: v for k, v in sets.items() if k not in fio or k in ("runtime", "time_based")}
            # several jobs: the point's fio options are their [global], each job's own on top
            each = [dict(j) for j in point.fio_jobs] or [{"name": point.label.split(" ", 1)[-1]}]
            try:
                jobs = [
                    job_from_options(
                        {k: str(v) for k, v in {**fio, **j}.items() if k != "name"},
                        name=str(j["name"]),
                        source=point.label,
                    )
                    for j in each
                ]
            except ConfigError as e:
                raise ConfigError(f"{where}: {e}") from None
            job_file = None

        def build(ramp_ms: float):
            try:
                return resolve(
                    job_file=job_file,
                    platform=platform,
                    sets={**sets, "ramp_time": ms_time(ramp_ms, option="--ramp-ms")},
                    seed=self.seed,
                    jobs=jobs,
                    env=point.env,
                )
            except ConfigError as e:
                raise ConfigError(f"{where}: {e}") from None

        if ramp is not None:
            return build(ramp)
        cfg = build(DEFAULT_RAMP_MS)
        # adaptive hybrid polling sleeps only after its first 100 ms statistics window
        hybrid = cfg.queue.io_poll_delay == 0 and any(
            select_policy_name(cfg.queue, j.hipri, j.ioengine) == "hybrid-poll" for j in cfg.jobs
        )
        return build(HYBRID_RAMP_MS) if hybrid else cfg

    def summary(self, point: Point, extra: dict[str, Any] | None = None) -> dict:
        cfg = self.config(point, extra)
        self.simulations += 1
        return simulate(cfg)["summary"]

    def predict(self, point: Point, metrics, extra: dict[str, Any] | None = None) -> dict[str, float]:
        s = self.summary(point, extra)
        return {m: metric_value(s, m) for m in metrics}


# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ValidationRow:
    point: str
    metric: str
    measured: float
    predicted: float
    tolerance: float | None = None
    """The point's bound on this value's relative error (a fraction), if it states one."""

    @property
    def error(self) -> float:
        """Relative error, predicted / measured - 1 (infinite for a measured 0 and a non-zero prediction)."""
        if self.measured == 0:
            return 0.0 if self.predicted == 0 else math.copysign(math.inf, self.predicted)
        return self.predicted / self.measured - 1.0

    @property
    def absolute(self) -> float | None:
        """The metric's absolute tolerance when the measured value is near zero, below it
        (scenarios/studies/near_zero.py): then the row is judged by its difference; else None."""
        tol = absolute_tolerance(self.metric)
        return tol if tol is not None and abs(self.measured) < tol else None

    @property
    def difference(self) -> float:
        return self.predicted - self.measured

    @property
    def within(self) -> bool | None:
        """Within the point's own tolerance (None: the point states none); a value near zero
        within its metric's absolute tolerance."""
        if self.absolute is not None:
            return None if self.tolerance is None else self.near_ok
        return None if self.tolerance is None else abs(self.error) <= self.tolerance

    @property
    def near_ok(self) -> bool:
        """A value near zero: the difference within the metric's absolute tolerance."""
        return self.absolute is not None and abs(self.difference) <= self.absolute


@dataclass
class Validation:
    rows: list[ValidationRow]
    max_error_pct: float | None = None

    @property
    def relative(self) -> list[ValidationRow]:
        """The rows compared by relative error (all but those near zero)."""
        return [r for r in self.rows if r.absolute is None]

    @property
    def near_zero(self) -> list[ValidationRow]:
        return [r for r in self.rows if r.absolute is not None]

    @property
    def mape_pct(self) -> float | None:
        rel = self.relative
        return 100.0 * sum(abs(r.error) for r in rel) / len(rel) if rel else None

    @property
    def worst(self) -> ValidationRow | None:
        return max(self.relative, key=lambda r: abs(r.error), default=None)

    @property
    def passed(self) -> bool:
        """Every value within ``max_error_pct`` (if given) and within its point's own tolerance;
        with a bound, every value near zero within its absolute tolerance."""
        if any(r.within is False for r in self.rows):
            return False
        if self.max_error_pct is None:
            return True
        w = self.worst
        return (w is None or 100.0 * abs(w.error) <= self.max_error_pct) and all(r.near_ok for r in self.near_zero)

    def to_dict(self) -> dict:
        w = self.worst
        return {
            "rows": [_row_dict(r) for r in self.rows],
            "mape_pct": self.mape_pct,
            "max_error_pct": None if w is None else 100.0 * abs(w.error),
            "bound_pct": self.max_error_pct,
            "passed": self.passed,
        }


def _row_dict(r: ValidationRow) -> dict:
    out = {"point": r.point, "metric": r.metric, "measured": r.measured, "predicted": r.predicted}
    out["error_pct"] = 100.0 * r.error if math.isfinite(r.error) else None
    if r.absolute is not None:  # near zero: judged by the difference, not in the MAPE
        out.update(difference=r.difference, absolute_tolerance=r.absolute, near_zero_within=r.near_ok)
    if r.tolerance is not None:
        out.update(tolerance_pct=100.0 * r.tolerance, within=r.within)
    return out


def select_metrics(points: list[Point], metrics: list[str] | None) -> list[str]:
    """The metrics to compare: ``metrics`` (each must be measured at some point), else all."""
    measured = list(dict.fromkeys(m for p in points for m in p.metrics))
    if not metrics:
        return measured
    missing = [m for m in metrics if m not in measured]
    if missing:
        raise ConfigError(
            f"--metrics {', '.join(missing)}: not measured at any point (measured: {', '.join(measured)})"
        )
    return list(metrics)


def check_measured_values(points: list[Point], metrics: list[str], *, near_zero_ok: bool = False) -> None:
    """Each measured value finite and non-zero (``near_zero_ok``: a zero is fine for a metric
    compared by an absolute tolerance near zero)."""
    for p in points:
        for m in metrics:
            v = p.metrics.get(m)
            if v == 0 and near_zero_ok and absolute_tolerance(m) is not None:
                continue
            if v is not None and (v == 0 or not math.isfinite(v)):
                raise ConfigError(
                    f"point {p.label}: measured {m} = {v:g}; a relative error needs a finite non-zero value"
                )


def validate_points(
    points: list[Point],
    runner: PointRunner,
    *,
    metrics: list[str] | None = None,
    max_error_pct: float | None = None,
    progress: bool | None = None,
) -> Validation:
    """Simulate every point and compare each measured metric (``metrics``: a subset)."""
    names = select_metrics(points, metrics)
    check_measured_values(points, names, near_zero_ok=True)
    tty = sys.stderr.isatty() if progress is None else progress
    rows = []
    for i, p in enumerate(points, 1):
        if tty:
            sys.stderr.write(f"\rsimulating point {i}/{len(points)}: {p.label[:50]:50s}")
            sys.stderr.flush()
        wanted = [m for m in names if m in p.metrics]
        if not wanted:
            continue
        pred = runner.predict(p, wanted)
        tol = p.tolerance or {}
        rows += [ValidationRow(p.label, m, p.metrics[m], pred[m], tol.get(m)) for m in wanted]
    if tty:
        sys.stderr.write("\r" + " " * 80 + "\r")
    if not rows:
        raise ConfigError("nothing to compare: no point measures the selected metrics")
    return Validation(rows, max_error_pct)


def _off(v: Validation, r: ValidationRow) -> bool:
    """Past ``--max-error``: a relative error over it, a value near zero past its absolute tolerance."""
    if v.max_error_pct is None:
        return False
    return not r.near_ok if r.absolute is not None else 100 * abs(r.error) > v.max_error_pct


def _row_line(v: Validation, r: ValidationRow, pw: int, mw: int, bounds: bool) -> str:
    flag = "  <-- over the bound" if _off(v, r) else ""
    own = ""
    if bounds:
        result = "-" if r.within is None else "pass" if r.within else "FAIL"
        bound = "-" if r.tolerance is None else f"{100 * r.tolerance:.0f}%"
        own = f"  {bound:>6s}  {result}"
    if r.absolute is not None:  # near zero: the difference, marked (see the line below the table)
        error = f"{r.difference:+8.2g}*"
        flag = flag or ("" if r.near_ok else f"  <-- past +-{r.absolute:g}")
    else:
        error = f"{signed(100 * r.error, 2, 7)}%"
    return f"{r.point:{pw}s}  {r.metric:{mw}s}  {r.measured:12.5g}  {r.predicted:12.5g}  {error}{own}{flag}"


def _near_zero_line(v: Validation) -> str | None:
    near = v.near_zero
    if not near:
        return None
    tols = ", ".join(f"{m} +-{t:g}" for m, t in dict.fromkeys((r.metric, r.absolute) for r in near))
    bad = sum(1 for r in near if not r.near_ok)
    return (
        f"* {len(near)} value(s) measured near zero, compared by the difference (predicted - measured) "
        f"against an absolute tolerance ({tols}; scenarios/studies/near_zero.py), not in the MAPE: "
        + (f"{bad} past it" if bad else "all within")
    )


def format_validation(v: Validation) -> str:
    """The table of values (point, metric, measured, predicted, error); with points' own tolerances
    a ``bound`` column and each value's pass/fail, then the summary lines."""
    pw = max(12, *(len(r.point) for r in v.rows))
    mw = max(8, *(len(r.metric) for r in v.rows))
    bounds = any(r.tolerance is not None for r in v.rows)
    head = f"{'point':{pw}s}  {'metric':{mw}s}  {'measured':>12s}  {'predicted':>12s}  {'error':>8s}"
    out = [head + (f"  {'bound':>6s}  result" if bounds else "")]
    out += [_row_line(v, r, pw, mw, bounds) for r in v.rows]
    w, rel = v.worst, v.relative
    if w is not None and v.mape_pct is not None:
        out.append(
            f"MAPE {v.mape_pct:.2f}% over {len(rel)} values; max {100 * abs(w.error):.2f}% ({w.point}, {w.metric})"
        )
    near = _near_zero_line(v)
    if near:
        out.append(near)
    if bounds:
        own_rows = [r for r in v.rows if r.within is not None]
        bad = sum(1 for r in own_rows if not r.within)
        out.append(
            f"points' tolerances: {len(own_rows) - bad} of {len(own_rows)} values pass"
            + (f", {bad} FAIL" if bad else "")
        )
    if v.max_error_pct is not None:
        bad = sum(1 for r in v.rows if _off(v, r))
        out.append(
            f"PASS: every error within {v.max_error_pct:g}%"
            if v.passed
            else f"FAIL: {bad} of {len(v.rows)} values off by more than {v.max_error_pct:g}%"
            if bad
            else "FAIL: values past their points' tolerances"
        )
    return "\n".join(out)


# ------------------------------------------------------------------------------------------------ suites
def _poll_vs_interrupt() -> list[Point]:
    out = []
    for mode, meas in cpe.targets().items():
        m = cpe.MODES[mode]
        out.append(
            Point(
                label=f"poll-vs-interrupt {mode}",
                config={
                    "rw": "randread",
                    "bs": "4k",
                    "ioengine": "pvsync2",
                    "direct": "1",
                    "numjobs": "1",
                    "hipri": m["hipri"],
                    "queue.io_poll": m["io_poll"],
                    "queue.io_poll_delay": m["io_poll_delay"],
                },
                metrics={"latency_us.mean": float(meas["mean_latency_us"]), "iops": float(meas["iops"])},
                platform="optane900p-e3-1230v5",
                runtime_ms=200.0,
                ramp_ms=float(cpe.RAMP_MS),
            )
        )
    return out


def _io_schedulers() -> list[Point]:
    tgt = cis.targets()
    return [
        Point(
            label=f"io-schedulers {sched} {op}",
            config={
                "rw": f"rand{op}",
                "bs": "4k",
                "ioengine": "io_uring",
                "iodepth": "1",
                "direct": "1",
                "numjobs": "1",
                "queue.scheduler": sched,
            },
            metrics={"latency_us.p50": float(tgt[sched][op])},
            platform="optane-p4801x-e3-1230",
            runtime_ms=100.0,
            ramp_ms=10.0,
        )
        for sched in cis.SCHEDULERS
        for op in ("read", "write")
    ]


SUITES: dict[str, Callable[[], list[Point]]] = {
    "poll-vs-interrupt": _poll_vs_interrupt,
    "io-schedulers": _io_schedulers,
    "cheops23": cheops23_points,
    "cluster23-zns": cluster23zns_points,
    "icpe24": icpe24_points,
}
"""Built-in validation suites: name -> points from the published figures shipped with the package
(``scenarios/data/reference/*.yaml``: Table 1 of each study; ``cheops23``: the third-party fio results
and job files of ``scenarios/data/measurements/cheops23``; ``icpe24``: the third-party fio results of
``scenarios/data/measurements/icpe24``, its points with their own tolerances; ``cluster23-zns``: the
ZN540 rows of ``scenarios/data/measurements/cluster23zns``, which its preset was fitted to). The
points reproduce the configurations of ``scenarios/studies/calibrate_poll_energy.py`` (``run_mode``) and
``scenarios/studies/calibrate_io_schedulers.py`` (``run_point``) and their seed 7."""


#: suite groups: the figures the built-in platforms were calibrated against, and every suite
SUITE_GROUPS = {"calibrated": ("poll-vs-interrupt", "io-schedulers"), "all": tuple(SUITES)}


def suite_points(name: str) -> list[Point]:
    """The points of suite ``name`` (or of a group: ``calibrated``, ``all``)."""
    names = list(SUITE_GROUPS.get(name, (name,)))
    for n in names:
        if n not in SUITES:
            raise ConfigError(f"unknown suite {name!r} (built-in: {', '.join([*SUITES, *SUITE_GROUPS])})")
    return [p for n in names for p in SUITES[n]()]


def write_validation_json(path: str, v: Validation) -> None:
    write_text(path, json.dumps(v.to_dict(), indent=2) + "\n", what="--json")
