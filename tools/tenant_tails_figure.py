"""Draw docs/figures/scaling-tenant-tails.svg: the latency tenant's mean, p99 and p99.9 against the
number of scans beside it, per IO scheduler (:mod:`scenarios.studies.tenant_tails`), and print the
table docs/scaling.md's "Tails beside N scans" quotes:

    pip install matplotlib           # only this script needs it
    python tools/tenant_tails_figure.py [--json rows.json]

Runs the study (10 runs of 40 ms after 10 ms; about a minute with the compiled package). ``--json``
also writes the rows. Reproducible SVG (no date, fixed ids).
"""

from __future__ import annotations

import argparse
import json

from predictions_figures import OUT, save_svg, svg_pyplot  # (tools/, the script's directory)

COLORS = {"none": "#4C78A8", "mq-deadline": "#F58518", "kyber": "#54A24B", "bfq": "#E45756"}


def figure(plt, rows: list[dict], path) -> None:
    panels = (
        ("mean_us", "latency tenant: mean (us)"),
        ("p99_us", "latency tenant: p99 (us)"),
        ("p99.9_us", "latency tenant: p99.9 (us)"),
        ("gap_ms", "latency tenant: longest gap between reads (ms)"),
    )
    fig, axes = plt.subplots(1, 4, figsize=(16, 3.8))
    for ax, (key, label) in zip(axes, panels):
        for sched in sorted({r["scheduler"] for r in rows}, key=list(COLORS).index):
            rs = sorted((r for r in rows if r["scheduler"] == sched), key=lambda r: r["scans"])
            ax.plot([r["scans"] for r in rs], [r[key] for r in rs], "o-", color=COLORS[sched], label=sched, ms=4)
        ax.set_xlabel("scans beside it (4 KiB, depth 32 each)")
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
    axes[0].legend(title="IO scheduler", fontsize=8)
    fig.suptitle(
        "Tails beside N scans: one 4 KiB depth-1 reader, 2 shared CPUs, one 980 PRO, kernel 6.3 (a prediction)",
        fontsize=10,
    )
    save_svg(fig, path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", metavar="FILE", help="also write the study's rows")
    args = ap.parse_args(argv)
    plt = svg_pyplot("tenant_tails_figure")
    if plt is None:
        return 2
    from scenarios.studies.tenant_tails import markdown, tenant_tails

    rows = tenant_tails()
    OUT.mkdir(exist_ok=True)
    figure(plt, rows, OUT / "scaling-tenant-tails.svg")
    print(markdown(rows))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
