"""The six server policies under the burst pattern with the closed-loop client (issue 15).

Each policy runs the ``server-burst`` scenario with ``workload.client=closed`` (fio over NVMe-oF,
models.server.client): the quiet phase capped at ``low_fraction`` of the SSD's maximum, the burst
uncapped, so a policy that is slow to react lowers the burst's throughput and lengthens its tail
instead of letting a queue grow. Timeline bins are one "scaled second" (``1 s x time_scale``), so
the per-bin plot reads like the study's per-second one. Nothing is fitted here.

    python -m scenarios.studies.server_burst [--time-scale 0.01] [--cycles 2] [-o burst.html] [--json out.json]
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from scenarios.config.server import resolve_server
from scenarios.run.outputs import figures_page
from scenarios.run.simulate import simulate

POLICIES = ("spdk-static", "linux", "governor", "dynamic", "hybrid", "sandman")


def run_policy(policy: str, time_scale: float = 0.01, cycles: int = 2, iodepth: int = 8, seed: int = 1) -> dict:
    """One policy's run: its timeline and the burst / quiet aggregates."""
    sets = {
        "server.policy": policy,
        "workload.client": "closed",
        "workload.iodepth": str(iodepth),
        "workload.cycles": str(cycles),
        "workload.time_scale": str(time_scale),
        "metrics.bin_ms": str(1000.0 * time_scale),
    }
    if policy == "sandman":
        sets["policy.coarse_interval_s"] = str(time_scale)
    res = simulate(resolve_server("server-burst", sets, seed=seed))
    tl = res["timeline"]
    return {"policy": policy, "timeline": tl, "burst": _phase(tl, True), "quiet": _phase(tl, False)}


def _phase(tl: dict, burst: bool) -> dict:
    """Mean IOPS, mean system and CPU power, and the median of the bins' p99 over the bins wholly in
    (or wholly out of) a burst (the median: the first quiet bin after a burst still drains it)."""
    sel = [i for i, f in enumerate(tl["true_burst"]) if (f >= 0.999 if burst else f <= 0.001)]
    if not sel:
        return {}
    p99 = [tl["latency_p99_us"][i] for i in sel if tl["latency_p99_us"][i] is not None]
    return {
        "iops": float(np.mean([tl["iops"][i] for i in sel])),
        "power_system_w": float(np.mean([tl["power_system_w"][i] for i in sel])),
        "power_cpu_w": float(np.mean([tl["power_cpu_w"][i] for i in sel])),
        "p99_us": float(np.median(p99)) if p99 else None,
    }


def table(rows: list[dict]) -> str:
    out = [
        "| policy | burst IOPS | burst p99 (us) | burst power (W) | quiet IOPS | quiet p99 (us) | quiet power (W) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        b, q = r["burst"], r["quiet"]
        out.append(
            f"| `{r['policy']}` | {b['iops'] / 1e3:,.0f}K | {b['p99_us']:,.0f} | {b['power_system_w']:,.0f} "
            f"| {q['iops'] / 1e3:,.0f}K | {q['p99_us']:,.0f} | {q['power_system_w']:,.0f} |"
        )
    return "\n".join(out)


def figure(rows: list[dict]):
    """Per-bin IOPS, p99 and system power of every policy (plotly)."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    fig = make_subplots(
        rows=3, cols=1, shared_xaxes=True, subplot_titles=("IOPS", "p99 latency (us)", "system power (W)")
    )
    for r in rows:
        tl = r["timeline"]
        for k, key in enumerate(("iops", "latency_p99_us", "power_system_w"), start=1):
            fig.add_trace(
                go.Scatter(
                    x=tl["t_s"], y=tl[key], mode="lines", name=r["policy"], legendgroup=r["policy"], showlegend=k == 1
                ),
                row=k,
                col=1,
            )
    fig.update_layout(template="plotly_white", height=900)
    fig.update_xaxes(title_text="time (s)", row=3, col=1)
    return fig


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--time-scale", type=float, default=0.01)
    ap.add_argument("--cycles", type=int, default=2)
    ap.add_argument("--iodepth", type=int, default=8)
    ap.add_argument("-o", "--output", help="write the per-bin plot as a self-contained HTML page")
    ap.add_argument("--json", help="write the aggregates and timelines as JSON")
    args = ap.parse_args(argv)
    rows = [run_policy(p, args.time_scale, args.cycles, args.iodepth) for p in POLICIES]
    print(table(rows))
    if args.output:
        page = figures_page(
            "Server policies under bursts, closed-loop client",
            [f"<p>time_scale {args.time_scale}, {args.cycles} cycles, iodepth {args.iodepth} per connection</p>"],
            [("per bin (1 s x time_scale)", figure(rows))],
        )
        with open(args.output, "w") as f:
            f.write(page)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
