"""Grouping result rows for analysis and plots: axis value order, policy labels, means with CIs."""

from __future__ import annotations

import math
from typing import Any, Iterable, Sequence

import numpy as np
from scipy import stats

from simcore.errors import ConfigError

Row = dict[str, Any]


def parse_policy_axes(spec: Sequence[str] | str | None, rows: Sequence[Row]) -> tuple[str, ...]:
    """Policy axes from ``--policy-axis`` values (repeatable, or separated by ``,`` or ``+``);
    default ``completion`` (derived from hipri / queue.io_poll / queue.io_poll_delay)."""
    if spec is None or len(spec) == 0:
        names: list[str] = ["completion"]
    else:
        items = [spec] if isinstance(spec, str) else list(spec)
        names = [n.strip() for it in items for n in it.replace("+", ",").split(",") if n.strip()]
    require_columns(rows, names, what="policy axis")
    return tuple(names)


def require_columns(rows: Sequence[Row], names: Iterable[str], *, what: str) -> None:
    """ConfigError naming a column missing from every row (and listing the axis-like columns)."""
    if not rows:
        raise ConfigError("the results file has no rows")
    present: dict[str, None] = {}
    for r in rows:
        present.update(dict.fromkeys(r))
    cols = list(present)
    head = cols[: cols.index("config_sha")] if "config_sha" in cols else cols[:20]
    for n in names:
        if n not in present:
            raise ConfigError(f"{what} '{n}': no such column in the results (axis columns: {', '.join(head)})")


def policy_of(row: Row, axes: Sequence[str]) -> str:
    """The policy label of a row: the value of a single policy axis, else ``a=1,b=0``."""
    if len(axes) == 1:
        return _fmt(row.get(axes[0]))
    return ",".join(f"{a}={_fmt(row.get(a))}" for a in axes)


def ordered_values(values: Iterable[Any]) -> list[Any]:
    """Distinct values in a natural order: numbers numerically, fio sizes (``4k``) by size,
    anything else in order of first appearance."""
    seen = list(dict.fromkeys(values))
    if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in seen):
        return sorted(seen)
    sizes = [_size(v) for v in seen]
    if all(s is not None for s in sizes):
        return [v for _, v in sorted(zip(sizes, seen), key=lambda p: p[0])]
    return seen


def mean_ci(values: Sequence[float], level: float = 0.95) -> tuple[float, float]:
    """Mean and half-width of its ``level`` confidence interval (Student t; 0 for n < 2)."""
    a = np.asarray(values, dtype=float)
    if a.size == 0:
        return math.nan, math.nan
    if a.size < 2:
        return float(a[0]), 0.0
    half = stats.t.ppf(0.5 + level / 2, a.size - 1) * a.std(ddof=1) / math.sqrt(a.size)
    return float(a.mean()), float(half)


def _fmt(v: Any) -> str:
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _size(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if not isinstance(v, str):
        return None
    from scenarios.fio.units import parse_size

    try:
        return parse_size(v, option="bs")
    except ConfigError:
        return None
