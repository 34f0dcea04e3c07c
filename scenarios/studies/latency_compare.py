"""``stacksim validate --latencies FILE --job JOB.fio`` and ``calibrate --latencies``: per-IO
latencies without timestamps (what many published artifacts keep: fio latency logs, percentile
tables) against the distribution stacksim predicts for the workload the job file describes.

Measured input, sniffed from the file:

* an fio latency log (``write_lat_log``: ``time (ms), latency (ns), direction, block size[,
  offset[, priority[, issue time]]]``): one sample per IO. fio names its logs ``*_lat.N.log``
  (submission to completion) and ``*_clat.N.log`` (issue to completion); the name sets the kind
  unless ``kind`` is given. A windowed log (``log_avg_msec``: block size 0) holds averages, not
  IOs, and a ``*_slat`` log submission times: both are refused;
* a CSV with a header: ``percentile,latency_us`` (or ``_ns``, ``_ms``): a percentile table; or a
  single ``latency_us`` (``_ns``, ``_ms``) column: one sample per row;
* an fio JSON result (``--output-format=json``): its ``lat_ns`` percentiles when fio reported them
  (``lat_percentiles=1``), else its ``clat_ns`` ones (fio's default), of the first job that did IO
  in the direction.

The simulated side is the job run on the platform (one run, ``records``): fio's ``lat`` is
``t_complete - t_submit``, its ``clat`` ``t_complete - t_issued`` (a synchronous engine's clat is
its lat). Compared: the mean and the percentiles (the measured table's, or fio's default list up to
what the sample size resolves), as simulated / measured - 1; the tail percentiles p50, p90, p99
and p99.9 (:data:`TAIL_PERCENTILES`) are always reported: against samples too few to resolve one
the row is flagged ``resolved: False`` (the order statistic is the sample's maximum region, not a
percentile), and against a table that lacks one the measured value is interpolated linearly
between the table's neighbouring points (``interpolated: True``; n/a outside the table); flagged
rows do not fail ``--max-error``. Distances: the Kolmogorov-Smirnov distance, two-sample (with its
p-value) against samples, the largest CDF gap at the table's points against a table (no p-value: a
table is not a sample); and the Wasserstein-1 distance (``scipy.stats.wasserstein_distance``, the
mean absolute gap between the two quantile functions, us, and as a share of the measured mean):
against a table, the table's percentiles carry the probability between them (the first point the
mass below it, the last the mass above it), so it is an estimate at the table's resolution.

``calibrate_latencies`` fits the SSD's media service of the measured direction (``base_ns`` and
``sd_ns``) as ``calibrate --trace`` does for a depth-1 trace: the host path (the simulated latency
minus its drawn media time) is simulated, and the measured distribution less the host path's gives
the device's (:mod:`scenarios.studies.latency_fit`: the mean and variance of samples; a table's
percentiles, with its mean when known). Only a depth-1, one-thread job identifies it (no queueing
behind other IOs).
"""

from __future__ import annotations

import csv
import math
import re
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from scenarios.config.host import resolve
from scenarios.inputs.measurements import read_fio_json
from scenarios.inputs.measurements.common import read_text
from scenarios.run.simulate import simulate
from scenarios.studies.fitting import check_max_iterations, not_converged
from scenarios.studies.latency_fit import fit_service
from simcore.errors import ConfigError

__all__ = [
    "MeasuredLatencies",
    "read_latencies",
    "simulated_latencies",
    "compare_latencies",
    "format_latency_comparison",
    "calibrate_latencies",
    "FIO_PERCENTILES",
    "TAIL_PERCENTILES",
]

#: fio's default percentile list (``percentile_list``)
FIO_PERCENTILES = (1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99)
#: the percentiles every comparison reports (issue 44: the tails, not only the mean)
TAIL_PERCENTILES = (50.0, 90.0, 99.0, 99.9)
_UNITS = {"ns": 1.0, "us": 1e3, "ms": 1e6}
_LOG_KIND = re.compile(r"_(lat|clat|slat)\.\d+\.log$")
KINDS = ("lat", "clat")


@dataclass(frozen=True)
class MeasuredLatencies:
    """Measured latencies of one direction, ns: samples, or a percentile table ((percentile, ns),
    ascending), with the mean when known."""

    path: str
    kind: str
    op: str
    samples_ns: np.ndarray | None
    table: tuple[tuple[float, float], ...]
    mean_ns: float | None
    note: str = ""
    #: the standard deviation the file states (fio JSON's ``stddev``), ns; None: not given
    stddev_ns: float | None = None

    @property
    def n(self) -> int:
        return 0 if self.samples_ns is None else len(self.samples_ns)


def read_latencies(path: str, kind: str | None = None, op: str | None = None) -> MeasuredLatencies:
    """Read ``path`` (see the module docstring); ``kind`` ('lat' or 'clat') and ``op`` ('read' or
    'write') override what the file says. Bad input: ConfigError naming the file and line."""
    if kind is not None and kind not in KINDS:
        raise ConfigError(f"--latency-kind: expected one of {', '.join(KINDS)}, got {kind!r}")
    if op is not None and op not in ("read", "write"):
        raise ConfigError(f"--latency-op: expected read or write, got {op!r}")
    text = read_text(path, "--latencies")
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    if not first:
        raise ConfigError(f"{path}: no latencies (the file is empty)")
    if first.startswith("{") or "{" in text[:4096] and '"jobs"' in text:
        return _from_fio_json(path, kind, op)
    if re.search(r"[A-Za-z]", first.split(",")[0]):
        return _from_csv(path, text, kind, op)
    return _from_fio_log(path, text, kind, op)


def _from_fio_json(path: str, kind: str | None, op: str | None) -> MeasuredLatencies:
    for res in read_fio_json(path):
        for direction in (op,) if op else ("read", "write"):
            d = getattr(res, direction)
            if not d.total_ios:
                continue
            if kind is None:
                kind = "lat" if d.lat is not None and d.lat.percentiles else "clat"
            st = d.lat if kind == "lat" else d.clat
            if st is None or not st.percentiles:
                raise ConfigError(f"{path}: job {res.jobname!r} reports no {kind}_ns percentiles for {direction}")
            table = tuple(sorted(st.percentiles.items()))
            _check_table(table, st.mean_ns, f"{path}: job {res.jobname!r} {direction} {kind}_ns")
            return MeasuredLatencies(
                path,
                kind,
                direction,
                None,
                table,
                st.mean_ns,
                note=f"fio JSON job {res.jobname!r}",
                stddev_ns=st.stddev_ns or None,
            )
    raise ConfigError(f"{path}: no job did {op or 'any'} IO")


def _check_table(table: tuple, mean_ns: float | None, where: str) -> None:
    """A percentile table (and its mean): positive finite latencies that do not decrease."""
    for p, ns in table:
        if not (ns > 0 and math.isfinite(ns)):
            raise ConfigError(f"{where}: the p{p:g} latency must be a positive number, got {ns!r}")
    if any(b[1] < a[1] for a, b in zip(table, table[1:])):
        raise ConfigError(f"{where}: the latencies must not decrease as the percentile grows")
    if mean_ns is not None and not (mean_ns > 0 and math.isfinite(mean_ns)):
        raise ConfigError(f"{where}: the mean latency must be a positive number, got {mean_ns!r}")


def _from_csv(path: str, text: str, kind: str | None, op: str | None) -> MeasuredLatencies:
    rows = list(csv.reader(text.splitlines()))
    head = [h.strip().lower() for h in rows[0]]
    lat_cols = [h for h in head if re.fullmatch(r"latency_(ns|us|ms)", h)]
    if len(lat_cols) != 1:
        raise ConfigError(
            f"{path}:1: expected one column latency_us (or latency_ns, latency_ms) and optionally percentile,"
            f" got {head}"
        )
    li = head.index(lat_cols[0])
    scale = _UNITS[lat_cols[0][-2:]]
    pi = head.index("percentile") if "percentile" in head else None
    values, pcts = [], []
    for n, row in enumerate(rows[1:], start=2):
        if not any(c.strip() for c in row):
            continue
        if len(row) != len(head):
            raise ConfigError(f"{path}:{n}: expected {len(head)} columns, got {len(row)}")
        values.append(_positive(row[li], path, n, lat_cols[0]) * scale)
        if pi is not None:
            p = _positive(row[pi], path, n, "percentile")
            if p > 100:
                raise ConfigError(f"{path}:{n}: percentile {p} is above 100")
            pcts.append(p)
    if not values:
        raise ConfigError(f"{path}: no latencies after the header")
    kind = kind or "lat"
    if pi is None:
        s = np.asarray(values)
        return MeasuredLatencies(path, kind, op or "read", s, (), float(s.mean()))
    table = tuple(sorted(zip(pcts, values)))
    _check_table(table, None, path)
    return MeasuredLatencies(path, kind, op or "read", None, table, None)


def _positive(text: str, path: str, line: int, what: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise ConfigError(f"{path}:{line}: {what} {text.strip()!r} is not a number") from None
    if not (v > 0 and math.isfinite(v)):
        raise ConfigError(f"{path}:{line}: {what} must be a positive number, got {text.strip()!r}")
    return v


def _from_fio_log(path: str, text: str, kind: str | None, op: str | None) -> MeasuredLatencies:
    m = _LOG_KIND.search(Path(path).name)
    named = m.group(1) if m else None
    if named == "slat" and kind is None:
        raise ConfigError(f"{path}: a submission-latency (slat) log: give its lat or clat log")
    note = "" if (kind or named) else "kind lat assumed: fio names its logs *_lat.N.log / *_clat.N.log"
    kind = kind or named or "lat"
    by_op: dict[str, list[float]] = {"read": [], "write": []}
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        f = [x.strip() for x in line.split(",")]
        if len(f) < 4:
            raise ConfigError(f"{path}:{n}: expected fio's log columns (time, latency ns, direction, block size, ...)")
        try:
            lat, ddir, bs = int(f[1]), int(f[2]), int(f[3])
        except ValueError:
            raise ConfigError(f"{path}:{n}: latency, direction and block size must be integers") from None
        if bs == 0:
            raise ConfigError(f"{path}:{n}: a windowed log (log_avg_msec) holds averages, not per-IO latencies")
        if ddir in (0, 1) and lat > 0:
            by_op["read" if ddir == 0 else "write"].append(float(lat))
    op = op or max(by_op, key=lambda k: len(by_op[k]))
    if not by_op[op]:
        raise ConfigError(f"{path}: no {op} latencies")
    s = np.asarray(by_op[op])
    return MeasuredLatencies(path, kind, op, s, (), float(s.mean()), note=note)


def simulated_latencies(
    job_file: str,
    platform: str | None,
    kind: str,
    op: str,
    sets: dict | None = None,
    seed: int = 1,
    progress: bool | None = False,
) -> tuple[np.ndarray, np.ndarray, Any]:
    """Run ``job_file`` (its own runtime unless ``sets`` gives one) and return the simulated
    ``kind`` latencies of direction ``op`` and their drawn media times (ns), and the config
    (``progress``: a progress line, None: when standard error is a terminal)."""
    cfg = resolve(job_file=job_file, platform=platform, sets=dict(sets or {}), seed=seed)
    rec = simulate(cfg, records=True, progress=progress).records
    sel = rec["op"] == op
    if not sel.any():
        raise ConfigError(f"{job_file}: the simulated job did no {op} IO to compare with")
    start = rec["t_issued_ns"] if kind == "clat" else rec["t_submit_ns"]
    return (rec["t_complete_ns"] - start)[sel], rec["device_service_ns"][sel], cfg


def _quantile(x: np.ndarray, pct: float) -> float:
    """The order statistic at ``pct`` (fio's rank rule: the first value whose cumulative share
    reaches it), ns."""
    return float(np.quantile(x, pct / 100.0, method="inverted_cdf"))


def compare_latencies(m: MeasuredLatencies, sim_ns: np.ndarray) -> dict:
    """The comparison (see the module docstring): rows of mean and percentiles (us) with their
    errors, the KS distance and the Wasserstein-1 distance."""
    from scipy.stats import ks_2samp, wasserstein_distance

    flags: dict[float, dict] = {}
    if m.samples_ns is not None:
        pcts = sorted({p for p in FIO_PERCENTILES if m.n * (1.0 - p / 100.0) >= 1.0} | set(TAIL_PERCENTILES))
        points = [(p, _quantile(m.samples_ns, p)) for p in pcts]
        flags = {p: {"resolved": False} for p in pcts if m.n * (1.0 - p / 100.0) < 1.0}
        with warnings.catch_warnings():  # exact p-value infeasible: scipy falls back to the asymptotic one
            warnings.simplefilter("ignore", RuntimeWarning)
            ks = ks_2samp(m.samples_ns, sim_ns)
        ks_out = {"statistic": float(ks.statistic), "pvalue": float(ks.pvalue), "against": "samples"}
        w1_ns = float(wasserstein_distance(m.samples_ns, sim_ns))
        measured_mean = float(np.mean(m.samples_ns))
    else:
        table = dict(m.table)
        for p in TAIL_PERCENTILES:
            if p not in table:
                table[p] = _interpolated(m.table, p)
                flags[p] = {"interpolated": True}
        points = sorted(table.items())
        s = np.sort(sim_ns)
        gaps = [abs(p / 100.0 - np.searchsorted(s, ns, side="right") / len(s)) for p, ns in m.table]
        ks_out = {"statistic": float(max(gaps)), "pvalue": None, "against": "table"}
        w1_ns = _table_wasserstein(m.table, sim_ns)
        measured_mean = m.mean_ns
    rows = []
    # the mean row always (a table without a mean: the simulated mean beside n/a)
    rows.append(_row("mean", m.mean_ns, float(np.mean(sim_ns))))
    rows += [{**_row(f"p{p:g}", ns, _quantile(sim_ns, p)), **flags.get(p, {})} for p, ns in points]
    w1 = {
        "us": w1_ns / 1e3,
        "relative_pct": None if not measured_mean else w1_ns / measured_mean * 100.0,
        "against": ks_out["against"],
    }
    return {
        "latencies": m.path,
        "kind": m.kind,
        "op": m.op,
        "note": m.note,
        "measured_ios": m.n if m.samples_ns is not None else None,
        "simulated_ios": int(len(sim_ns)),
        "rows": rows,
        "ks": ks_out,
        "wasserstein": w1,
    }


def _interpolated(table: tuple[tuple[float, float], ...], pct: float) -> float | None:
    """The latency at ``pct`` read linearly between the table's neighbouring points, ns (None
    outside the table's range)."""
    for (p0, x0), (p1, x1) in zip(table, table[1:]):
        if p0 <= pct <= p1:
            return x0 + (x1 - x0) * (pct - p0) / (p1 - p0)
    return None


def _table_wasserstein(table: tuple[tuple[float, float], ...], sim_ns: np.ndarray) -> float:
    """Wasserstein-1 between a percentile table and samples, ns: each table point carries the
    probability from the previous point up to it (the first, everything below it; the last, also
    everything above it: the tail beyond the table is unknown, so this is a lower estimate there)."""
    from scipy.stats import wasserstein_distance

    values = [x for _p, x in table]
    cuts = [p / 100.0 for p, _x in table]
    weights = [cuts[0]] + [b - a for a, b in zip(cuts, cuts[1:])]
    weights[-1] += 1.0 - cuts[-1]
    return float(wasserstein_distance(values, sim_ns, u_weights=weights))


def _row(stat: str, measured_ns: float | None, simulated_ns: float) -> dict:
    return {
        "stat": stat,
        "measured_us": None if measured_ns is None else measured_ns / 1e3,
        "simulated_us": simulated_ns / 1e3,
        "error_pct": None if measured_ns is None else (simulated_ns / measured_ns - 1.0) * 100.0,
    }


def exceeding_rows(v: dict, max_error_pct: float) -> list[str]:
    """The statistics whose error exceeds ``max_error_pct`` (rows the measurement does not resolve
    or that are interpolated from a table do not count)."""
    return [
        r["stat"]
        for r in v["rows"]
        if r["error_pct"] is not None
        and abs(r["error_pct"]) > max_error_pct
        and r.get("resolved", True)
        and not r.get("interpolated", False)
    ]


def format_latency_comparison(v: dict) -> str:
    """The terminal table of :func:`compare_latencies`."""
    from simcore.numfmt import signed

    n = f"{v['measured_ios']:,} IOs" if v["measured_ios"] is not None else "a percentile table"
    lines = [
        f"latencies {v['latencies']}: {n} ({v['op']}, fio's {v['kind']}) against {v['simulated_ios']:,} simulated IOs",
    ]
    if v["note"]:
        lines.append(f"  ({v['note']})")
    if v.get("simulated"):
        lines.append(f"  ({v['simulated']})")
    lines.append(f"  {'stat':<8} {'measured us':>12} {'simulated us':>13} {'error':>8}")
    for r in v["rows"]:
        if r["measured_us"] is None:  # a table without its mean
            lines.append(f"  {r['stat']:<8} {'n/a':>12} {r['simulated_us']:>13.5g}")
            continue
        err = f"{signed(r['error_pct'])}%{_mark(r)}"
        lines.append(f"  {r['stat']:<8} {r['measured_us']:>12.5g} {r['simulated_us']:>13.5g} {err}".rstrip())
    if any(not r.get("resolved", True) for r in v["rows"]):
        lines.append("  (*) too few measured IOs to resolve this percentile: not checked")
    if any(r.get("interpolated") for r in v["rows"]):
        lines.append("  (~) between the table's points, interpolated: not checked")
    ks = v["ks"]
    p = f", p = {ks['pvalue']:.3g}" if ks["pvalue"] is not None else " (largest CDF gap at the table's points)"
    lines.append(f"  Kolmogorov-Smirnov distance {ks['statistic']:.3f}{p}")
    w1 = v["wasserstein"]
    rel = f" ({w1['relative_pct']:.1f}% of the measured mean)" if w1["relative_pct"] is not None else ""
    at = " (at the table's resolution)" if w1["against"] == "table" else ""
    lines.append(f"  Wasserstein-1 distance {w1['us']:.4g} us{rel}{at}")
    return "\n".join(lines)


def _mark(row: dict) -> str:
    """The footnote mark of a flagged row."""
    if not row.get("resolved", True):
        return " (*)"
    return " (~)" if row.get("interpolated") else ""


def _depth1_job(cfg, job_file: str) -> None:
    jobs = cfg.jobs
    j = jobs[0]
    mixed = j.bssplit_read or j.bssplit_write or j.bsrange_read or j.bsrange_write
    if len(jobs) != 1 or j.numjobs != 1 or j.iodepth != 1 or mixed:
        raise ConfigError(
            f"{job_file}: calibrate --latencies needs one job of one thread at iodepth=1 with one block size"
            " (latencies without timestamps identify the device only when no IO waits behind another)"
        )
    if not j.direct or j.ioengine == "mmap":
        raise ConfigError(
            f"{job_file}: calibrate --latencies needs direct=1: a buffered job's latencies are page-cache hits and"
            " misses, not the device's service"
        )


def calibrate_latencies(
    m: MeasuredLatencies, job_file: str, platform: str | None, sets: dict | None = None, seed: int = 1, passes: int = 4
) -> dict:
    """Fit ``ssd.<op>.base_ns`` and ``sd_ns`` so that the simulated host path plus the device's
    service has the measured distribution (:mod:`scenarios.studies.latency_fit`: the mean and
    variance of samples, or a table's percentiles), re-running the job with the fitted values until
    they settle. Returns {'values': {key: value}, 'passes': n, 'host_path_us': mean, 'platform':
    name, 'converged': bool, 'notes': [what the caller should say]}."""
    check_max_iterations(passes)
    sets = dict(sets or {})
    values: dict[str, float] = {}
    host_mean = 0.0
    for i in range(passes):
        sim, svc, cfg = simulated_latencies(job_file, platform, m.kind, m.op, {**sets, **values}, seed)
        if i == 0:
            _depth1_job(cfg, job_file)
        host = sim - svc
        host_mean = float(host.mean())
        job = cfg.jobs[0]
        kib = max(0.0, (job.bs_read_bytes if m.op == "read" else job.bs_write_bytes) / 1024.0 - 4.0)
        base, sd, notes = fit_service(m, host, getattr(cfg.platform.ssd, m.op).per_kib_ns * kib)
        new = {f"ssd.{m.op}.base_ns": base}
        if sd is not None:
            new[f"ssd.{m.op}.sd_ns"] = sd
        done = values and all(abs(new[k] - values[k]) <= 1e-3 * max(1.0, abs(values[k])) for k in new)
        values = new
        if done:
            break
    else:
        notes.append(not_converged(passes, "latencies"))
    out = {"values": values, "passes": i + 1, "host_path_us": host_mean / 1e3, "platform": cfg.platform.name}
    return {**out, "converged": bool(done), "notes": notes}
