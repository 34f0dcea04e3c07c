"""Read a CSV of measured points: configuration columns plus metric columns.

Rules:

* the first non-blank line that is not a ``#`` comment is the header; fields may be quoted as in
  CSV, but a quoted field must not span lines;
* a column whose name starts with ``metric.`` or ``measured.`` is a metric; its name without the
  prefix is the metric name (``metric.latency_us.mean`` -> ``latency_us.mean``,
  ``measured.iops`` -> ``iops``); put the unit in the name. Metric values must be finite,
  non-negative numbers (latencies positive); an empty cell means "not measured" and is left out;
* every other column is configuration (a fio option such as ``bs`` or ``iodepth``, or a
  ``--set`` key such as ``cpu.governor``), kept as a stripped string; empty cells are left out;
* every row has the header's number of fields and at least one metric value.

Each point is ``{"line": int, "config": {column: str}, "metrics": {name: float}}``.
"""

from __future__ import annotations

import csv
import os

from simcore.errors import ConfigError

from .common import read_text, to_float

__all__ = ["METRIC_PREFIXES", "MeasuredPoints", "read_points_csv"]

METRIC_PREFIXES = ("metric.", "measured.")


class MeasuredPoints(list):
    """``list[dict]`` of points (see the module docstring) with the column split and a summary."""

    path: str
    config_columns: list[str]
    metric_names: list[str]

    def describe(self) -> str:
        return (
            f"measured points {self.path}: {len(self)} points, config "
            f"{', '.join(self.config_columns) or '(none)'}; metrics {', '.join(self.metric_names)}"
        )


def _fields(line: str) -> list[str]:
    return [f.strip() for f in next(csv.reader([line]))]


def _metric(text: str, where: str, column: str, metric: str) -> float:
    """A measured value: finite and not negative (no simulator output is); a latency is positive."""
    value = to_float(text, where, f"metric {column!r}")
    if value < 0:
        raise ConfigError(f"{where}: metric {column!r} is {value:g}: a measured value cannot be negative")
    if value == 0 and metric.startswith(("lat", "clat", "slat")):
        raise ConfigError(f"{where}: metric {column!r} is 0: a measured latency must be positive")
    return value


def read_points_csv(path: str | os.PathLike) -> MeasuredPoints:
    """Read measured points; ConfigError ``"path:line: ..."`` on any malformed header or row."""
    out = MeasuredPoints()
    out.path = str(path)
    header: list[str] | None = None
    metric_of: dict[int, str] = {}  # column index -> metric name
    for lineno, line in enumerate(read_text(path, "measured points CSV").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        where = f"{path}:{lineno}"
        fields = _fields(line)
        if header is None:
            header = fields
            seen: set[str] = set()
            for i, name in enumerate(header):
                if not name:
                    raise ConfigError(f"{where}: header column {i + 1} has no name")
                metric = next((name[len(p) :] for p in METRIC_PREFIXES if name.startswith(p)), None)
                key = name if metric is None else f"metric {metric}"
                if metric == "":
                    raise ConfigError(f"{where}: metric column {name!r} has no metric name")
                if key in seen:
                    raise ConfigError(f"{where}: duplicate column {name!r}")
                seen.add(key)
                if metric is not None:
                    metric_of[i] = metric
            if not metric_of:
                raise ConfigError(
                    f"{where}: no metric columns; name them 'metric.<name>' or "
                    f"'measured.<name>' (e.g. metric.latency_us.mean)"
                )
            out.config_columns = [n for i, n in enumerate(header) if i not in metric_of]
            out.metric_names = list(metric_of.values())
            continue
        if len(fields) != len(header):
            raise ConfigError(f"{where}: {len(fields)} fields, the header has {len(header)}")
        config, metrics = {}, {}
        for i, (name, value) in enumerate(zip(header, fields)):
            if not value:
                continue
            if i in metric_of:
                metrics[metric_of[i]] = _metric(value, where, name, metric_of[i])
            else:
                config[name] = value
        if not metrics:
            raise ConfigError(f"{where}: no metric value in this row")
        out.append({"line": lineno, "config": config, "metrics": metrics})
    if header is None:
        raise ConfigError(f"{path}: empty measured points CSV (no header line)")
    return out
