"""The efficiency map: per (size, depth) tile, which completion policy gives the most bytes per
joule, by how much, and whether the lead is significant.

For each tile the replicate values of the metric are grouped by policy; the policy with the
highest mean wins, its margin is ``(best - second) / second`` in percent, and the tile is a
``tie`` when Welch's two-sample t-test between the two best does not reject equal means
(p > alpha, 0.05 by default). With fewer than two replicates on either side no test is possible:
the winner is kept and ``p_value`` is None.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Sequence

import numpy as np
from scipy import stats

from scenarios.studies.sweeps.groups import number, ordered_values, parse_policy_axes, policy_of, require_columns
from simcore.errors import ConfigError

Row = dict[str, Any]
DEFAULT_METRIC = "bytes_per_joule"
#: replicates whose spread is below this fraction of their mean are the same value (float noise)
SAME_REL = 1e-9


def welch_p(a: Sequence[float], b: Sequence[float]) -> float | None:
    """Two-sided p-value of Welch's t-test; None with fewer than 2 samples on a side. Two sets of
    identical values (each spread within :data:`SAME_REL` of the larger mean: the last bits of a
    float, where scipy's moments lose their precision and warn) give 1.0 when their means agree to
    that precision and 0.0 otherwise."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.size < 2 or b.size < 2:
        return None
    scale = max(abs(a.mean()), abs(b.mean()))
    if a.std(ddof=1) <= SAME_REL * scale and b.std(ddof=1) <= SAME_REL * scale:
        return 1.0 if abs(a.mean() - b.mean()) <= SAME_REL * scale else 0.0
    with warnings.catch_warnings():  # any precision warning left is scipy's to handle, not the terminal's
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(stats.ttest_ind(a, b, equal_var=False).pvalue)


def efficiency_map(
    rows: Sequence[Row],
    *,
    x: str = "bs",
    y: str = "numjobs",
    policy: Sequence[str] | str | None = None,
    metric: str = DEFAULT_METRIC,
    alpha: float = 0.05,
    lower_is_better: bool = False,
) -> list[dict[str, Any]]:
    """One dict per (x, y) tile, x outermost, in natural axis order::

    {"x": "4k", "y": 8, "winner": "classic" | "tie", "best": "classic", "second": "hybrid",
     "best_mean": ..., "second_mean": ..., "margin_pct": 3.1, "p_value": 0.002,
     "means": {policy: mean}, "n": {policy: replicates}}
    """
    paxes = parse_policy_axes(policy, rows)
    require_columns(rows, [x, y, metric], what="column")
    cells: dict[tuple, dict[str, list[float]]] = {}
    for r in rows:
        v = number(r.get(metric))
        if v is None or r.get(x) is None or r.get(y) is None:
            continue
        cells.setdefault((r[x], r[y]), {}).setdefault(policy_of(r, paxes), []).append(v)
    if not cells:
        raise ConfigError(f"metric '{metric}': no run has a finite value with a {x} and a {y}: nothing to compare")
    xs = ordered_values(k[0] for k in cells)
    ys = ordered_values(k[1] for k in cells)
    out = []
    for xv in xs:
        for yv in ys:
            groups = cells.get((xv, yv))
            if groups:
                out.append(_tile(xv, yv, groups, alpha, lower_is_better))
    return out


def _tile(
    xv: Any, yv: Any, groups: dict[str, list[float]], alpha: float, lower_is_better: bool = False
) -> dict[str, Any]:
    means = {p: float(np.mean(v)) for p, v in groups.items()}
    ranked = sorted(means, key=lambda p: means[p] if lower_is_better else -means[p])
    best = ranked[0]
    tile = {
        "x": xv,
        "y": yv,
        "winner": best,
        "best": best,
        "second": None,
        "best_mean": means[best],
        "second_mean": None,
        "margin_pct": None,
        "p_value": None,
        "means": means,
        "n": {p: len(v) for p, v in groups.items()},
    }
    if len(ranked) > 1:
        second = ranked[1]
        p = welch_p(groups[best], groups[second])
        tile.update(
            second=second,
            second_mean=means[second],
            p_value=p,
            margin_pct=abs(means[best] - means[second]) / means[second] * 100.0 if means[second] else math.inf,
        )
        if p is not None and p > alpha:
            tile["winner"] = "tie"
    return tile


def cell_text(tile: dict[str, Any]) -> str:
    """Short text of a tile: ``classic +4.2%``, ``tie`` or the only policy."""
    if tile["winner"] == "tie":
        return "tie"
    if tile["margin_pct"] is None:
        return tile["best"]
    return f"{tile['best']} +{tile['margin_pct']:.1f}%" + ("" if tile["p_value"] is not None else "?")


def format_table(
    tiles: Sequence[dict[str, Any]],
    *,
    x: str = "bs",
    y: str = "numjobs",
    metric: str = DEFAULT_METRIC,
    alpha: float = 0.05,
    lower_is_better: bool = False,
) -> str:
    """The map as a text grid: one line per ``y`` value, one column per ``x`` value."""
    xs = ordered_values(t["x"] for t in tiles)
    ys = ordered_values(t["y"] for t in tiles)
    by = {(t["x"], t["y"]): cell_text(t) for t in tiles}
    head = f"{y} \\ {x}"
    w0 = max(len(head), *(len(str(v)) for v in ys))
    w = max(8, *(len(s) for s in by.values()), *(len(str(v)) for v in xs))
    lines = [f"{head:<{w0}}  " + "  ".join(f"{str(v):>{w}}" for v in xs)]
    for yv in ys:
        lines.append(f"{str(yv):<{w0}}  " + "  ".join(f"{by.get((xv, yv), '-'):>{w}}" for xv in xs))
    lines.append(
        f"cell: the policy with the {'lowest' if lower_is_better else 'highest'} mean {metric}"
        " and its margin over the second; "
        f"'tie' when Welch's t-test gives p > {alpha:g}; '?' = too few replicates to test"
    )
    return "\n".join(lines)


def format_long(
    tiles: Sequence[dict[str, Any]], *, x: str = "bs", y: str = "numjobs", lower_is_better: bool = False
) -> str:
    """One line per tile with every policy's mean and the p-value."""
    lines = []
    for t in tiles:
        means = "  ".join(
            f"{p}={m:.4g}(n={t['n'][p]})"
            for p, m in sorted(t["means"].items(), key=lambda i: i[1] if lower_is_better else -i[1])
        )
        p = "-" if t["p_value"] is None else f"{t['p_value']:.3g}"
        lines.append(f"{x}={t['x']} {y}={t['y']}: {cell_text(t):<18} p={p:<8} {means}")
    return "\n".join(lines)
