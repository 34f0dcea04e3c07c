"""Grouping result rows for analysis and plots: axis value order, policy labels, means with CIs."""

from __future__ import annotations

import math
from typing import Any, Iterable, Sequence

import numpy as np
from scipy import stats

from scenarios.inputs.fio.units import parse_size
from simcore.errors import ConfigError

Row = dict[str, Any]


def parse_policy_axes(spec: Sequence[str] | str | None, rows: Sequence[Row]) -> tuple[str, ...]:
    """Policy axes from ``--policy-axis`` values (repeatable, or separated by ``,`` or ``+``);
    default ``completion`` (derived from hipri / queue.io_poll / queue.io_poll_delay), or for a
    storage-server sweep ``policy`` (its core-scheduling policy, ``server.policy``)."""
    if spec is None or len(spec) == 0:
        names: list[str] = ["policy"] if rows and all("policy" in r for r in rows) else ["completion"]
    else:
        items = [spec] if isinstance(spec, str) else list(spec)
        names = [n.strip() for it in items for n in it.replace("+", ",").split(",") if n.strip()]
    require_columns(rows, names, what="policy axis")
    return tuple(names)


#: the default tile axes (size x depth) of a host sweep
DEFAULT_X, DEFAULT_Y = "bs", "numjobs"


def axis_columns(rows: Sequence[Row]) -> list[str]:
    """The sweep's axis columns: those a sweep writes between ``point`` and ``replicate``."""
    cols = list(dict.fromkeys(k for r in rows for k in r))
    if "point" not in cols or "replicate" not in cols:
        return []
    return cols[cols.index("point") + 1 : cols.index("replicate")]


def choose_axes(
    rows: Sequence[Row], x: str | None = None, y: str | None = None, policy: Sequence[str] | str | None = None
) -> tuple[str, str, tuple[str, ...]]:
    """The tile axes and policy axes of an analysis: the given ones, else chosen from the results.

    Policy: ``completion``, or ``policy`` for a storage-server sweep (its ``server.policy``). Tile axes:
    ``bs`` x ``numjobs`` when the results have both columns (a host sweep over size and depth);
    otherwise the sweep's axis columns that do not just name the policy (an axis whose values
    correspond one-to-one with the policy labels, like ``server.policy`` or a completion ``mode``
    bundle): the first two in sweep order, or, when only one is left, the constant ``sweep``
    column as ``x`` and that axis as ``y`` (one tile per value, e.g. per client rate). When one
    of ``x``, ``y`` is given, the other is the first such axis left, else ``sweep``."""
    paxes = parse_policy_axes(policy, rows)
    if x is not None and y is not None:
        return x, y, paxes
    present = set(k for r in rows for k in r)
    if {DEFAULT_X, DEFAULT_Y} <= present and x in (None, DEFAULT_X) and y in (None, DEFAULT_Y):
        return _host_axes(rows, x, y, paxes)
    free = [a for a in axis_columns(rows) if a not in paxes and a not in (x, y) and not _names_policy(rows, a, paxes)]
    if x is None and y is None:
        if len(free) >= 2:
            return free[0], free[1], paxes
        if len(free) == 1:
            return "sweep", free[0], paxes
    elif "sweep" in present:
        other = free[0] if free else "sweep"
        return (x, other, paxes) if y is None else (other, y, paxes)
    raise ConfigError(
        "cannot choose the tile axes from these results"
        + (f" (sweep axes: {', '.join(axis_columns(rows))})" if axis_columns(rows) else "")
        + "; name them with --panels and --along (--x and --y)"
    )


def _varies(rows: Sequence[Row], axis: str) -> bool:
    return len({_fmt(r.get(axis)) for r in rows}) > 1


def _host_axes(
    rows: Sequence[Row], x: str | None, y: str | None, paxes: tuple[str, ...]
) -> tuple[str, str, tuple[str, ...]]:
    """bs x numjobs, unless only one of them varies (a block-size sweep at one numjobs would be one
    tile, and one report panel, per size with one point each): then the one that varies runs along
    the other axis the sweep varies, else along the constant one (one panel, sizes across it)."""
    fixed = [a for a in (DEFAULT_X, DEFAULT_Y) if not _varies(rows, a)]
    if x is not None or y is not None or len(fixed) != 1:
        return DEFAULT_X, DEFAULT_Y, paxes
    moving = DEFAULT_Y if fixed[0] == DEFAULT_X else DEFAULT_X
    others = [
        a
        for a in axis_columns(rows)
        if a not in paxes and a not in (DEFAULT_X, DEFAULT_Y) and _varies(rows, a) and not _names_policy(rows, a, paxes)
    ]
    return (moving, others[0], paxes) if others else (fixed[0], moving, paxes)


def _names_policy(rows: Sequence[Row], axis: str, paxes: Sequence[str]) -> bool:
    """Whether the values of ``axis`` and the policy labels correspond one-to-one."""
    fwd: dict[str, set[str]] = {}
    back: dict[str, set[str]] = {}
    for r in rows:
        a, p = _fmt(r.get(axis)), policy_of(r, paxes)
        fwd.setdefault(a, set()).add(p)
        back.setdefault(p, set()).add(a)
    return all(len(v) == 1 for v in fwd.values()) and all(len(v) == 1 for v in back.values())


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


def number(value: Any) -> float | None:
    """A metric's value as a finite float, else None (missing, NaN, infinite, text, too large)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        v = float(value)
    except OverflowError:
        return None
    return v if math.isfinite(v) else None


def unusable_note(rows: Sequence[Row], metric: str) -> str | None:
    """``note: ...`` when some rows have a value of ``metric`` that is no finite number (left out of
    the analysis), else None; ConfigError when no row has one."""
    bad = [r for r in rows if r.get(metric) is not None and number(r.get(metric)) is None]
    if not bad:
        return None
    if all(number(r.get(metric)) is None for r in rows):
        raise ConfigError(f"metric '{metric}': no run has a finite value (NaN, infinite or text in every row)")
    shown = ", ".join(sorted({repr(r[metric])[:20] for r in bad})[:3])
    return f"note: {len(bad)} runs have a {metric} that is not a finite number ({shown}): left out"


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
    try:
        return parse_size(v, option="bs")
    except ConfigError:
        return None
