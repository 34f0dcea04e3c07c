"""Read fio ``--output-format=json`` results.

A file may hold text before the JSON (fio prints notes and warnings first) and several JSON
documents one after another (runs appended to one file); each document starting at the
beginning of a line is read, other text is ignored. Each element of ``jobs`` (or
``client_stats`` for fio client/server output) becomes one :class:`FioResult`.

Units: iops in IO/s, ``bw_kib_s`` in KiB/s (fio's ``bw``), bytes, latencies in ns (fio 3's
``*_ns`` objects; fio 2's ``clat``/``lat``/``slat`` in us are converted), ``usr_cpu``/``sys_cpu``
in percent of one CPU, ``ctx`` context switches.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from simcore.errors import ConfigError

from .common import read_text

__all__ = ["LatStats", "DirStats", "FioResult", "FioResults", "read_fio_json"]

_DOC_START = re.compile(r"^\{", re.M)


@dataclass(frozen=True, slots=True)
class LatStats:
    """One fio latency distribution, ns."""

    min_ns: float = 0.0
    max_ns: float = 0.0
    mean_ns: float = 0.0
    stddev_ns: float = 0.0
    n: int = 0
    percentiles: dict[float, float] = field(default_factory=dict)
    """Percentile (e.g. ``99.0``) -> latency, ns; empty if fio did not report them."""


@dataclass(frozen=True, slots=True)
class DirStats:
    """fio's per-direction (``read``/``write``) statistics of one job."""

    iops: float = 0.0
    bw_kib_s: float = 0.0
    io_bytes: int = 0
    total_ios: int = 0
    runtime_ms: int = 0
    clat: LatStats | None = None
    lat: LatStats | None = None
    slat: LatStats | None = None


@dataclass(frozen=True, slots=True)
class FioResult:
    """One fio job's results, with its options (``global options`` overlaid by ``job options``)."""

    path: str
    line: int  # line where the job's JSON document starts
    jobname: str
    groupid: int
    error: int
    read: DirStats
    write: DirStats
    usr_cpu: float  # percent
    sys_cpu: float  # percent
    ctx: int  # context switches
    majf: int
    minf: int
    options: dict[str, str]
    fio_version: str = ""

    def describe(self) -> str:
        parts = [f"fio job {self.jobname!r} ({self.path}:{self.line})"]
        for name, d in (("read", self.read), ("write", self.write)):
            if d.total_ios or d.iops:
                mean = f", clat mean {d.clat.mean_ns / 1000:.1f} us" if d.clat else ""
                parts.append(f"{name} {d.iops:.0f} IOPS {d.bw_kib_s / 1024:.1f} MiB/s{mean}")
        parts.append(f"cpu usr {self.usr_cpu:.1f}% sys {self.sys_cpu:.1f}% ctx {self.ctx}")
        return ", ".join(parts)


class FioResults(list):
    """``list[FioResult]`` with the files read and a :meth:`describe` summary."""

    files: list[str]

    def describe(self) -> str:
        riops = sum(r.read.iops for r in self)
        wiops = sum(r.write.iops for r in self)
        names = ", ".join(r.jobname for r in self[:4]) + (", ..." if len(self) > 4 else "")
        return (
            f"fio JSON: {len(self.files)} files, {len(self)} jobs ({names}), "
            f"read iops {riops:.0f}, write iops {wiops:.0f}, "
            f"read bw {sum(r.read.bw_kib_s for r in self) / 1024:.1f} MiB/s, "
            f"write bw {sum(r.write.bw_kib_s for r in self) / 1024:.1f} MiB/s"
        )


def _num(obj: dict, key: str, where: str, default=0, *, integer: bool = False, minimum: float | None = None):
    value = obj.get(key, default)
    ok = (int,) if integer else (int, float)
    if isinstance(value, bool) or not isinstance(value, ok):
        kind = "an integer" if integer else "a number"
        raise ConfigError(f"{where}.{key}: expected {kind}, got {value!r}")
    if not math.isfinite(value):
        raise ConfigError(f"{where}.{key}: {value!r} is not a finite number")
    if minimum is not None and value < minimum:
        raise ConfigError(f"{where}.{key}: {value:g} is negative; fio never reports that (a damaged file?)")
    return value


def _obj(obj: dict, key: str, where: str) -> dict:
    value = obj.get(key, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{where}.{key}: expected an object, got {type(value).__name__}")
    return value


def _lat(d: dict, name: str, where: str) -> LatStats | None:
    if f"{name}_ns" in d:
        key, scale = f"{name}_ns", 1
    elif name in d:  # fio 2.x: microseconds
        key, scale = name, 1000
    else:
        return None
    o, w = _obj(d, key, where), f"{where}.{key}"
    pct = {}
    for k, v in _obj(o, "percentile", w).items():
        try:
            p = float(k)
        except ValueError:
            raise ConfigError(f"{w}.percentile: bad percentile key {k!r}") from None
        pct[p] = _num({k: v}, k, f"{w}.percentile", minimum=0) * scale
    stats = LatStats(
        min_ns=_num(o, "min", w, minimum=0) * scale,
        max_ns=_num(o, "max", w, minimum=0) * scale,
        mean_ns=_num(o, "mean", w, minimum=0) * scale,
        stddev_ns=_num(o, "stddev", w, minimum=0) * scale,
        n=_num(o, "N", w, integer=True, minimum=0),
        percentiles=pct,
    )
    if stats.n > 0 and name != "slat" and stats.mean_ns <= 0:
        raise ConfigError(f"{w}.mean: {stats.mean_ns:g} with N={stats.n} IOs: a measured latency must be positive")
    return stats


def _dir(job: dict, name: str, where: str) -> DirStats:
    d, w = _obj(job, name, where), f"{where}.{name}"
    return DirStats(
        iops=_num(d, "iops", w, minimum=0),
        bw_kib_s=_num(d, "bw", w, minimum=0),
        io_bytes=_num(d, "io_bytes", w, integer=True, minimum=0),
        total_ios=_num(d, "total_ios", w, integer=True, minimum=0),
        runtime_ms=_num(d, "runtime", w, integer=True, minimum=0),
        clat=_lat(d, "clat", w),
        lat=_lat(d, "lat", w),
        slat=_lat(d, "slat", w),
    )


def _options(obj: dict, key: str, where: str) -> dict[str, str]:
    return {str(k): str(v) for k, v in _obj(obj, key, where).items()}


def _doc_results(doc, path: str, line: int) -> list[FioResult]:
    where = f"{path}:{line}"
    if not isinstance(doc, dict):
        raise ConfigError(f"{where}: fio JSON must be an object, got {type(doc).__name__}")
    jobs = doc.get("jobs", doc.get("client_stats"))
    if not isinstance(jobs, list) or not jobs:
        raise ConfigError(f"{where}: no 'jobs' array in this JSON (is it fio --output-format=json?)")
    global_opts = _options(doc, "global options", where)
    version = str(doc.get("fio version", ""))
    out = []
    for i, job in enumerate(jobs):
        w = f"{where}: jobs[{i}]"
        if not isinstance(job, dict) or not isinstance(job.get("jobname"), str):
            raise ConfigError(f"{w}: expected a job object with a 'jobname'")
        out.append(
            FioResult(
                path=path,
                line=line,
                jobname=job["jobname"],
                groupid=_num(job, "groupid", w, integer=True),
                error=_num(job, "error", w, integer=True),
                read=_dir(job, "read", w),
                write=_dir(job, "write", w),
                usr_cpu=_num(job, "usr_cpu", w),
                sys_cpu=_num(job, "sys_cpu", w),
                ctx=_num(job, "ctx", w, integer=True),
                majf=_num(job, "majf", w, integer=True),
                minf=_num(job, "minf", w, integer=True),
                options={**global_opts, **_options(job, "job options", w)},
                fio_version=version,
            )
        )
    return out


def _read_one(path: str) -> list[FioResult]:
    text = read_text(path, "fio JSON output")
    decoder = json.JSONDecoder()
    results: list[FioResult] = []
    pos = 0
    while (m := _DOC_START.search(text, pos)) is not None:
        line = text.count("\n", 0, m.start()) + 1
        try:
            doc, pos = decoder.raw_decode(text, m.start())
        except json.JSONDecodeError as e:
            raise ConfigError(f"{path}:{e.lineno}: invalid fio JSON: {e.msg} (column {e.colno})") from None
        except RecursionError:
            raise ConfigError(f"{path}:{line}: invalid fio JSON: nested too deeply") from None
        except ValueError as e:  # an integer of more than 4300 digits
            raise ConfigError(f"{path}:{line}: invalid fio JSON: {e}") from None
        results += _doc_results(doc, path, line)
    if not results:
        raise ConfigError(f"{path}: no JSON object found (run fio with --output-format=json)")
    return results


def read_fio_json(paths: str | os.PathLike | Iterable[str | os.PathLike]) -> FioResults:
    """Read one or many fio JSON output files; one :class:`FioResult` per job, in file order."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    files = [str(Path(p)) for p in paths]
    if not files:
        raise ConfigError("read_fio_json: no files given")
    out = FioResults()
    out.files = files
    for p in files:
        out += _read_one(p)
    return out
