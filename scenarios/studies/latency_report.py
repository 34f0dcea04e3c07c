"""The HTML report of ``stacksim validate --latencies FILE --job JOB.fio --html OUT`` (plotly, its
JavaScript inlined once): the measured and simulated latency CDFs (a table's percentiles as
points), and the table of errors."""

from __future__ import annotations

import html

import numpy as np
import plotly.graph_objects as go

from scenarios.run.outputs import figures_page
from scenarios.studies.latency_compare import MeasuredLatencies
from scenarios.studies.trace_report import MEASURED, SIMULATED, cdf_points
from simcore.numfmt import signed
from simcore.outfile import write_text

__all__ = ["write_latency_report"]


def _figure(m: MeasuredLatencies, sim_ns: np.ndarray) -> go.Figure:
    fig = go.Figure()
    if m.samples_ns is not None:
        x, y = cdf_points(m.samples_ns / 1e3)
        fig.add_trace(go.Scatter(x=x, y=y, mode="lines", name="measured", line={"color": MEASURED}))
    else:
        fig.add_trace(
            go.Scatter(
                x=[ns / 1e3 for _, ns in m.table],
                y=[p / 100.0 for p, _ in m.table],
                mode="markers",
                name="measured (percentiles)",
                marker={"color": MEASURED},
            )
        )
    x, y = cdf_points(sim_ns / 1e3)
    fig.add_trace(go.Scatter(x=x, y=y, mode="lines", name="simulated", line={"color": SIMULATED}))
    fig.update_xaxes(title_text=f"{m.op} {m.kind} (us)", type="log")
    fig.update_yaxes(title_text="fraction of IOs", range=[0, 1])
    fig.update_layout(height=480, template="plotly_white", title="Latency CDF")
    return fig


def _g(value) -> str:
    return "n/a" if value is None else f"{value:.5g}"


def _table(v: dict) -> str:
    rows = "".join(
        f"<tr><td>{html.escape(r['stat'])}</td><td>{_g(r['measured_us'])}</td><td>{r['simulated_us']:.5g}</td>"
        f"<td>{'n/a' if r['error_pct'] is None else signed(r['error_pct']) + '%'}</td></tr>"
        for r in v["rows"]
    )
    return "<table><tr><th>stat</th><th>measured us</th><th>simulated us</th><th>error</th></tr>" + rows + "</table>"


def write_latency_report(v: dict, m: MeasuredLatencies, sim_ns: np.ndarray, out: str) -> None:
    """Write the report of comparison ``v`` (:func:`~scenarios.studies.latency_compare.compare_latencies`)."""
    ks = v["ks"]
    p = f", p = {ks['pvalue']:.3g}" if ks["pvalue"] is not None else " (at the table's points)"
    intro = [
        f"<p>{html.escape(v['latencies'])}: fio's {v['kind']} of {v['op']}s against {v['simulated_ios']} IOs of "
        f"{html.escape(v['job'])} simulated on {html.escape(v['platform'])} (seed {v['seed']}). Errors are "
        f"simulated / measured - 1; Kolmogorov-Smirnov distance {ks['statistic']:.3f}{p}; Wasserstein-1 distance "
        f"{v['wasserstein']['us']:.4g} us.</p>",
        _table(v),
    ]
    title = f"stacksim validate --latencies {v['latencies']}"
    page = figures_page(title, intro, [("latency CDF", _figure(m, sim_ns))], css="td,th{padding:2px 10px}")
    write_text(out, page, what="--html")
