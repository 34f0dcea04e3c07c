"""A self-contained interactive HTML report of sweep results (plotly; its JavaScript is inlined
once, so the file opens without a network).

Figures, against depth (the ``y`` axis, e.g. ``numjobs``) with one line per policy and one panel
per size (the ``x`` axis, e.g. ``bs``); points are replicate means with 95% confidence intervals:
bandwidth, CPU utilization, system power, power against CPU utilization, context switches per
second and per IO, CPU time per IO by stack layer (stacked), memory operations per second by
source directory (stacked; when the results have ``mem_ops_per_s.*`` columns), the efficiency
map (see :mod:`scenarios.studies.sweeps.efficiency`) and completion-latency CDFs. The stacked and CDF
figures show one size at a time, chosen with a menu.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Callable, Sequence

import plotly.graph_objects as go
from plotly.colors import qualitative
from plotly.subplots import make_subplots

from scenarios.run.outputs import figures_page
from scenarios.studies.sweeps.efficiency import DEFAULT_METRIC, cell_text, efficiency_map
from scenarios.studies.sweeps.groups import (
    mean_ci,
    number,
    ordered_values,
    parse_policy_axes,
    policy_of,
    require_columns,
)
from simcore.outfile import write_text

Row = dict[str, Any]
KNOWN_COLORS = {"interrupt": "#1f77b4", "classic": "#d62728", "hybrid": "#2ca02c", "tie": "#bbbbbb"}
FACET_COLS = 4


class _Data:
    """Rows grouped by (size, depth, policy), with the axis values in natural order."""

    def __init__(self, rows: Sequence[Row], x: str, y: str, policy: tuple[str, ...]):
        self.x, self.y, self.policy = x, y, policy
        self.groups: dict[tuple, list[Row]] = {}
        for r in rows:
            if r.get(x) is None or r.get(y) is None:
                continue
            self.groups.setdefault((r[x], r[y], policy_of(r, policy)), []).append(r)
        self.xs = ordered_values(k[0] for k in self.groups)
        self.ys = ordered_values(k[1] for k in self.groups)
        self.policies = ordered_values(k[2] for k in self.groups)
        cols: dict[str, None] = {}
        for r in rows:
            cols.update(dict.fromkeys(r))
        self.columns = list(cols)
        palette = [c for c in qualitative.D3 if c not in KNOWN_COLORS.values()]
        self.colors = {}
        for i, p in enumerate(self.policies):
            self.colors[p] = KNOWN_COLORS.get(p, palette[i % len(palette)])

    def values(self, xv, yv, pol, metric: str | Callable[[Row], float | None]) -> list[float]:
        get = metric if callable(metric) else (lambda r: r.get(metric))
        out = []
        for r in self.groups.get((xv, yv, pol), ()):
            v = number(get(r))
            if v is not None:
                out.append(v)
        return out

    def facets(self, n: int) -> tuple[int, int]:
        cols = min(FACET_COLS, max(n, 1))
        return math.ceil(max(n, 1) / cols), cols


# -- figures --------------------------------------------------------------------------------------
def _faceted(d: _Data):
    """One subplot per value of the size axis: (figure, rows, cols)."""
    nr, nc = d.facets(len(d.xs))
    fig = make_subplots(
        rows=nr, cols=nc, subplot_titles=[f"{d.x}={v}" for v in d.xs], horizontal_spacing=0.06, vertical_spacing=0.14
    )
    return fig, nr, nc


def _lines_vs_depth(d: _Data, metric: str, title: str, ytitle: str, scale: float = 1.0) -> go.Figure:
    fig, nr, nc = _faceted(d)
    for i, xv in enumerate(d.xs):
        r, c = divmod(i, nc)
        for pol in d.policies:
            xs, ms, hs = [], [], []
            for yv in d.ys:
                vals = d.values(xv, yv, pol, metric)
                if vals:
                    m, h = mean_ci(vals)
                    xs.append(str(yv)), ms.append(m * scale), hs.append(h * scale)
            if xs:
                fig.add_trace(
                    go.Scatter(
                        x=xs,
                        y=ms,
                        error_y=dict(type="data", array=hs, visible=True),
                        mode="lines+markers",
                        name=pol,
                        legendgroup=pol,
                        showlegend=i == 0,
                        line=dict(color=d.colors[pol]),
                    ),
                    row=r + 1,
                    col=c + 1,
                )
    fig.update_xaxes(type="category", title_text=d.y)
    fig.update_yaxes(title_text=ytitle, col=1)
    fig.update_layout(title=title, height=330 * nr + 120, template="plotly_white", legend_title_text="policy")
    return fig


def _power_vs_cpu(d: _Data) -> go.Figure:
    fig, nr, nc = _faceted(d)
    for i, xv in enumerate(d.xs):
        r, c = divmod(i, nc)
        for pol in d.policies:
            cpu, pw, depth = [], [], []
            for yv in d.ys:
                u = d.values(xv, yv, pol, "cpu_utilization")
                p = d.values(xv, yv, pol, "power_w.system")
                if u and p:
                    cpu.append(mean_ci(u)[0] * 100), pw.append(mean_ci(p)[0]), depth.append(str(yv))
            if cpu:
                fig.add_trace(
                    go.Scatter(
                        x=cpu,
                        y=pw,
                        text=depth,
                        mode="lines+markers",
                        name=pol,
                        legendgroup=pol,
                        showlegend=i == 0,
                        line=dict(color=d.colors[pol]),
                        hovertemplate=f"{d.y}=%{{text}}<br>CPU %{{x:.1f}}%<br>%{{y:.2f}} W",
                    ),
                    row=r + 1,
                    col=c + 1,
                )
    fig.update_xaxes(title_text="CPU utilization (%)")
    fig.update_yaxes(title_text="system power (W)", col=1)
    fig.update_layout(
        title=f"System power against CPU utilization (points: {d.y})",
        height=330 * nr + 120,
        template="plotly_white",
        legend_title_text="policy",
    )
    return fig


def _stacked_by_size(d: _Data, columns: Sequence[str], title: str, ytitle: str, scale: float, strip: str) -> go.Figure:
    """Stacked bars (one per depth) of ``columns``, a panel per policy, one size at a time."""
    nc = max(len(d.policies), 1)
    fig = make_subplots(
        rows=1, cols=nc, subplot_titles=list(map(str, d.policies)), shared_yaxes=True, horizontal_spacing=0.03
    )
    colors = qualitative.Plotly + qualitative.Pastel
    owners: list[int] = []
    for si, xv in enumerate(d.xs):
        for pi, pol in enumerate(d.policies):
            depths = [yv for yv in d.ys if d.values(xv, yv, pol, columns[0])]
            for li, col in enumerate(columns):
                ys = [mean_ci(d.values(xv, yv, pol, col) or [0.0])[0] * scale for yv in depths]
                fig.add_trace(
                    go.Bar(
                        x=[str(v) for v in depths],
                        y=ys,
                        name=col[len(strip) :],
                        legendgroup=col,
                        showlegend=pi == 0,
                        marker_color=colors[li % len(colors)],
                        visible=si == 0,
                    ),
                    row=1,
                    col=pi + 1,
                )
                owners.append(si)
    _size_menu(fig, d, owners)
    fig.update_xaxes(type="category", title_text=d.y)
    fig.update_yaxes(title_text=ytitle, col=1)
    fig.update_layout(title=title, barmode="stack", height=480, template="plotly_white")
    return fig


def _efficiency_heatmap(d: _Data, tiles: list[dict], metric: str, alpha: float) -> go.Figure:
    cats = list(d.policies) + ["tie"]
    n = len(cats)
    colors = [d.colors.get(c, KNOWN_COLORS["tie"]) for c in cats]
    scale = []
    for k, col in enumerate(colors):
        scale += [[k / n, col], [(k + 1) / n, col]]
    xs = [str(v) for v in d.xs]
    ys = [str(v) for v in d.ys]
    z = [[None] * len(xs) for _ in ys]
    text = [[""] * len(xs) for _ in ys]
    hover = [[""] * len(xs) for _ in ys]
    for t in tiles:
        xi, yi = xs.index(str(t["x"])), ys.index(str(t["y"]))
        z[yi][xi] = cats.index(t["winner"]) if t["winner"] in cats else None
        text[yi][xi] = cell_text(t)
        p = "n/a" if t["p_value"] is None else f"{t['p_value']:.3g}"
        means = "<br>".join(f"{pol}: {m:.4g}" for pol, m in sorted(t["means"].items(), key=lambda i: -i[1]))
        hover[yi][xi] = f"{d.x}={t['x']} {d.y}={t['y']}<br>{means}<br>Welch p = {p}"
    fig = go.Figure(
        go.Heatmap(
            x=xs,
            y=ys,
            z=z,
            text=text,
            texttemplate="%{text}",
            customdata=hover,
            hovertemplate="%{customdata}<extra></extra>",
            colorscale=scale,
            zmin=-0.5,
            zmax=n - 0.5,
            showscale=False,
            xgap=2,
            ygap=2,
        )
    )
    for c, col in zip(cats, colors):  # legend entries for the categories
        fig.add_trace(
            go.Scatter(x=[None], y=[None], mode="markers", name=c, marker=dict(size=12, color=col, symbol="square"))
        )
    fig.update_xaxes(type="category", title_text=d.x)
    fig.update_yaxes(type="category", title_text=d.y)
    fig.update_layout(
        title=f"Most {metric} per tile (tie: Welch p > {alpha:g})",
        height=max(320, 140 + 60 * len(ys)),
        template="plotly_white",
        legend_title_text="winner",
    )
    return fig


def _latency_cdfs(d: _Data) -> go.Figure:
    nr, nc = d.facets(len(d.ys))
    fig = make_subplots(
        rows=nr, cols=nc, subplot_titles=[f"{d.y}={v}" for v in d.ys], horizontal_spacing=0.06, vertical_spacing=0.14
    )
    owners: list[int] = []
    for si, xv in enumerate(d.xs):
        for i, yv in enumerate(d.ys):
            r, c = divmod(i, nc)
            for pol in d.policies:
                curve = _mean_cdf(d.groups.get((xv, yv, pol), ()))
                if curve is None:
                    continue
                fig.add_trace(
                    go.Scatter(
                        x=curve[1],
                        y=curve[0],
                        mode="lines",
                        name=pol,
                        legendgroup=pol,
                        showlegend=i == 0,
                        line=dict(color=d.colors[pol]),
                        visible=si == 0,
                        hovertemplate="%{x:.2f} us at p%{y}",
                    ),
                    row=r + 1,
                    col=c + 1,
                )
                owners.append(si)
    _size_menu(fig, d, owners)
    fig.update_xaxes(type="log", title_text="completion latency (us)")
    fig.update_yaxes(title_text="percentile", col=1)
    fig.update_layout(
        title="Completion latency CDF (replicate mean of each percentile)",
        height=330 * nr + 140,
        template="plotly_white",
        legend_title_text="policy",
    )
    return fig


def _mean_cdf(rows: Sequence[Row]) -> tuple[list[float], list[float]] | None:
    curves = []
    for r in rows:
        try:
            cdf = json.loads(r.get("cdf") or "{}")
        except (ValueError, RecursionError):
            continue
        if not isinstance(cdf, dict):
            continue
        lat = cdf.get("read_us") or cdf.get("write_us")
        if lat and cdf.get("pct"):
            curves.append((cdf["pct"], lat))
    if not curves:
        return None
    pct = curves[0][0]
    same = [c[1] for c in curves if len(c[1]) == len(pct)]
    return pct, [sum(v) / len(same) for v in zip(*same)]


def _size_menu(fig: go.Figure, d: _Data, owners: list[int]) -> None:
    """A menu that shows the traces of one size (``owners[i]`` = size index of trace i)."""
    if len(d.xs) < 2:
        return
    buttons = [
        dict(label=f"{d.x}={xv}", method="update", args=[{"visible": [o == si for o in owners]}])
        for si, xv in enumerate(d.xs)
    ]
    fig.update_layout(
        updatemenus=[
            dict(buttons=buttons, direction="down", x=1.0, xanchor="right", y=1.12, yanchor="bottom", showactive=True)
        ]
    )


def _breakdown_figures(d: _Data) -> list[tuple[str, go.Figure]]:
    """The stacked breakdowns by block size present in the results: CPU time per IO by stack layer
    (ns, idle excluded) and memory operations per second by kernel source directory (millions; the
    top-level directories when the results have them)."""
    figs: list[tuple[str, go.Figure]] = []
    layers = [c for c in d.columns if c.startswith("layers.") and c != "layers.idle"]
    if layers:
        figs.append(
            (
                "CPU time per IO by layer",
                _stacked_by_size(
                    d, layers, "CPU time per IO by stack layer (idle time excluded)", "ns per IO", 1.0, "layers."
                ),
            )
        )
    mem = [c for c in d.columns if c.startswith("mem_ops_per_s.")]
    top = [c for c in mem if c.endswith("/") or c == "mem_ops_per_s.other"]
    mem = top or [c for c in mem if c != "mem_ops_per_s.total"]
    if mem:
        figs.append(
            (
                "Memory operations by source directory",
                _stacked_by_size(
                    d,
                    mem,
                    "Memory operations (loads + stores) per second by kernel source directory",
                    "million per s",
                    1e-6,
                    "mem_ops_per_s.",
                ),
            )
        )
    return figs


# -- the page -------------------------------------------------------------------------------------
def build_figures(
    rows: Sequence[Row],
    *,
    x: str = "bs",
    y: str = "numjobs",
    policy: Sequence[str] | str | None = None,
    metric: str = DEFAULT_METRIC,
    alpha: float = 0.05,
    lower_is_better: bool = False,
) -> list[tuple[str, go.Figure]]:
    """The report's figures as (section title, figure), in page order; a figure whose columns
    are absent from the results is left out."""
    paxes = parse_policy_axes(policy, rows)
    require_columns(rows, [x, y], what="axis")
    d = _Data(rows, x, y, paxes)
    has = set(d.columns).__contains__
    figs: list[tuple[str, go.Figure]] = []
    for col, title, ytitle, scale in (
        ("bandwidth_mb_s", "Bandwidth", "MB/s", 1.0),
        ("cpu_utilization", "CPU utilization", "CPU utilization (%)", 100.0),
        ("power_w.system", "System power", "W", 1.0),
    ):
        if has(col):
            figs.append((title, _lines_vs_depth(d, col, title, ytitle, scale)))
    if has("cpu_utilization") and has("power_w.system"):
        figs.append(("Power against CPU utilization", _power_vs_cpu(d)))
    for col, title, ytitle in (
        ("context_switches_per_s", "Context switches per second", "context switches / s"),
        ("context_switches_per_io", "Context switches per IO", "context switches / IO"),
    ):
        if has(col):
            figs.append((title, _lines_vs_depth(d, col, title, ytitle)))
    figs += _breakdown_figures(d)
    if has(metric):
        tiles = efficiency_map(
            rows, x=x, y=y, policy=paxes, metric=metric, alpha=alpha, lower_is_better=lower_is_better
        )
        figs.append(("Efficiency map", _efficiency_heatmap(d, tiles, metric, alpha)))
    if has("cdf"):
        figs.append(("Latency CDFs", _latency_cdfs(d)))
    return figs


def write_report(rows: Sequence[Row], out: str | Path, *, title: str | None = None, **kw) -> int:
    """Write the HTML report of ``rows`` to ``out``; returns the number of figures."""
    figs = build_figures(rows, **kw)
    sweeps = ordered_values(str(r.get("sweep", "")) for r in rows)
    title = title or f"stacksim sweep report: {', '.join(s for s in sweeps if s) or 'results'}"
    points = len({r.get("point") for r in rows})
    intro = [
        (
            f"<p>{len(rows)} runs, {points} points. Points are means over replicates; error bars are 95% "
            "confidence intervals (Student t).</p>"
        )
    ]
    write_text(out, figures_page(title, intro, figs), what="-o")
    return len(figs)
