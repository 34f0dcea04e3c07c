"""The HTML report of ``stacksim validate --trace ... --html OUT`` (plotly; its JavaScript is
inlined once, so the file opens without a network).

Figures: latency CDFs, measured against simulated, one panel per direction x size class; the
measured-vs-simulated scatter, one point per IO (an evenly spaced subset of each class, on the
line y = x when the model is exact); the error over time (mean simulated / mean measured latency
per time bin, and the IOs per bin); and, for blkparse traces with Q and D events, the CDFs of the
Q->D and D->C stages over all IOs. A table gives each class's errors.
"""

from __future__ import annotations

import html
import math
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
from plotly.colors import qualitative
from plotly.subplots import make_subplots

from scenarios.run.outputs import figures_page
from simcore.numfmt import signed
from simcore.outfile import write_text

__all__ = ["write_trace_report", "trace_figures", "cdf_points"]

COLS = 3
MEASURED, SIMULATED = "#1f77b4", "#d62728"
_CDF_POINTS = 400


def cdf_points(values) -> tuple[list[float], list[float]]:
    v = np.sort(np.asarray([x for x in values if x == x], dtype=float))
    if not len(v):
        return [], []
    p = np.linspace(0.0, 1.0, min(_CDF_POINTS, len(v)))
    return np.quantile(v, p).tolist(), p.tolist()


def _cdf_figure(v: dict) -> go.Figure:
    labels = list(v["samples"])
    rows = max(1, math.ceil(len(labels) / COLS))
    fig = make_subplots(rows=rows, cols=min(COLS, max(len(labels), 1)), subplot_titles=labels)
    for i, label in enumerate(labels):
        s = v["samples"][label]
        r, c = i // COLS + 1, i % COLS + 1
        for col, name, color in (("lat_m", "measured", MEASURED), ("lat_s", "simulated", SIMULATED)):
            x, y = cdf_points(s[col])
            fig.add_trace(
                go.Scatter(
                    x=x, y=y, mode="lines", name=name, line={"color": color}, legendgroup=name, showlegend=i == 0
                ),
                row=r,
                col=c,
            )
        fig.update_xaxes(title_text="latency (us)", type="log", row=r, col=c)
        fig.update_yaxes(title_text="fraction of IOs", range=[0, 1], row=r, col=c)
    fig.update_layout(height=300 * rows + 120, template="plotly_white", title="Latency CDF per class")
    return fig


def _scatter_figure(v: dict) -> go.Figure:
    fig = go.Figure()
    lo, hi = math.inf, 0.0
    for i, (label, s) in enumerate(v["samples"].items()):
        if not s["lat_m"]:
            continue
        fig.add_trace(
            go.Scatter(
                x=s["lat_m"],
                y=s["lat_s"],
                mode="markers",
                name=label,
                marker={"size": 4, "opacity": 0.6, "color": qualitative.D3[i % len(qualitative.D3)]},
            )
        )
        lo = min(lo, min(s["lat_m"]), min(s["lat_s"]))
        hi = max(hi, max(s["lat_m"]), max(s["lat_s"]))
    if hi > 0:
        fig.add_trace(
            go.Scatter(x=[lo, hi], y=[lo, hi], mode="lines", name="y = x", line={"color": "#777", "dash": "dash"})
        )
    fig.update_layout(
        height=560,
        template="plotly_white",
        title="Simulated against measured latency, per IO",
        xaxis={"title": "measured latency (us)", "type": "log"},
        yaxis={"title": "simulated latency (us)", "type": "log"},
    )
    return fig


def _time_figure(v: dict) -> go.Figure:
    tl = v["over_time"]
    t = [b["t_s"] for b in tl["bins"]]
    fig = make_subplots(
        rows=2,
        cols=1,
        shared_xaxes=True,
        row_heights=[0.65, 0.35],
        subplot_titles=(f"mean-latency error per {tl['bin_s']:g} s", "IOs per bin"),
    )
    fig.add_trace(
        go.Scatter(
            x=t,
            y=[b["error_pct"] for b in tl["bins"]],
            mode="lines+markers",
            name="simulated / measured - 1 (%)",
            line={"color": SIMULATED},
        ),
        row=1,
        col=1,
    )
    fig.add_trace(go.Bar(x=t, y=[b["ios"] for b in tl["bins"]], name="IOs", marker={"color": "#999"}), row=2, col=1)
    fig.update_yaxes(title_text="error (%)", row=1, col=1)
    fig.update_yaxes(title_text="IOs", row=2, col=1)
    fig.update_xaxes(title_text="arrival (s of trace time)", row=2, col=1)
    fig.update_layout(height=520, template="plotly_white", title="Error over time")
    return fig


def _stage_figure(v: dict) -> go.Figure:
    names = {"q2d": "Q->D (block layer + IO scheduler)", "d2c": "D->C (driver + device)"}
    stages = v["stages"]
    fig = make_subplots(rows=1, cols=len(stages), subplot_titles=[names[s] for s in stages])
    for j, stage in enumerate(stages):
        for suffix, name, color in (("_m", "measured", MEASURED), ("_s", "simulated", SIMULATED)):
            values = [x for s in v["samples"].values() for x in s[stage + suffix]]
            x, y = cdf_points(values)
            fig.add_trace(
                go.Scatter(
                    x=x, y=y, mode="lines", name=name, line={"color": color}, legendgroup=name, showlegend=j == 0
                ),
                row=1,
                col=j + 1,
            )
        fig.update_xaxes(title_text="us", type="log", row=1, col=j + 1)
    fig.update_yaxes(title_text="fraction of IOs", range=[0, 1])
    fig.update_layout(height=420, template="plotly_white", title="blkparse stages, all IOs")
    return fig


def trace_figures(v: dict) -> list[tuple[str, go.Figure]]:
    """The report's (title, figure) pairs for a :func:`scenarios.studies.trace_compare.validate_trace` result."""
    figs = [
        ("Latency CDF per class", _cdf_figure(v)),
        ("Measured vs simulated", _scatter_figure(v)),
        ("Error over time", _time_figure(v)),
    ]
    if v["stages"]:
        figs.append(("blkparse stages", _stage_figure(v)))
    return figs


def _fmt(x) -> str:
    return "-" if x is None else signed(x) + "%"


def _table(v: dict) -> str:
    stats = ("mean", "p50", "p90", "p99", "p99.9")
    head = "".join(f"<th>{s}</th>" for s in stats)
    rows = []
    for c in v["classes"] + [v["all"]]:
        b = c["latency"]
        ks = b["ks"]["statistic"]
        cells = "".join(f"<td>{_fmt(b['error_pct'][s])}</td>" for s in stats)
        rows.append(
            f"<tr><td>{html.escape(c['class'])}</td><td>{c['ios']}</td>{cells}"
            f"<td>{'-' if ks is None else f'{ks:.3f}'}</td></tr>"
        )
    return "<table><tr><th>class</th><th>IOs</th>" + head + "<th>KS distance</th></tr>" + "".join(rows) + "</table>"


def write_trace_report(v: dict, out: str | Path, title: str | None = None) -> int:
    """Write the report of ``v`` to ``out``; returns the number of figures."""
    r = v["replay"]
    title = title or f"stacksim validate --trace {Path(r['trace']).name}"
    figs = trace_figures(v)
    intro = [
        (
            f"<p>{html.escape(r['trace'])} ({r['format']}): {r['trace_ios']} IOs replayed at their recorded arrival "
            f"times on {html.escape(r['platform'])} (seed {r['seed']}, {r['completion']}). Errors are simulated / "
            f"measured - 1.</p>"
        ),
        _table(v),
    ]
    write_text(out, figures_page(title, intro, figs, css="td,th{padding:2px 10px;text-align:right}"), what="--html")
    return len(figs)
