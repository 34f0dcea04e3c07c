"""Draw the curves of docs/predictions.md (SVG, in docs/figures/) from the two sweeps' results.

    stacksim sweep threads_scaling -o threads.csv -j 2
    stacksim sweep queue_depth -o qd.csv
    pip install matplotlib           # only this script needs it
    python tools/predictions_figures.py threads.csv qd.csv

Writes ``threads.svg`` (mean latency, IOPS, context switches and migrations per IO against threads,
one line per completion mode), ``threads-energy.svg`` (CPU power and system energy per IO),
``threads-memops.svg`` (memory operations per second by kernel source against
threads, one panel per mode) and ``queue-depth.svg`` (IOPS and mean latency against commands in
flight, the model against the published Optane points shipped in
``scenarios/data/reference/optane_ssd.yaml``). The SVGs are byte-for-byte reproducible (no date, fixed
element ids), so a figure changes in git only when the numbers do.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "figures"
MODES = {"interrupt": "#E45756", "classic": "#4C78A8", "hybrid": "#54A24B"}
SOURCES = {
    "block/": "#4C78A8",
    "drivers/nvme/host/": "#F58518",
    "kernel/sched/": "#E45756",
    "kernel/time/": "#72B7B2",
    "other": "#9D755D",
}


def read_rows(path: str) -> list[dict]:
    """The rows of a sweep's results CSV (a spreadsheet's byte-order mark dropped)."""
    with open(path, newline="", encoding="utf-8-sig") as f:
        return list(csv.DictReader(f))


def _by_mode(rows: list[dict]) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {m: [] for m in MODES}
    for r in rows:
        out[r["mode"]].append(r)
    return {m: sorted(v, key=lambda r: float(r["numjobs"])) for m, v in out.items()}


def _threads_axis(ax, threads: list[float]) -> None:
    ax.set_xscale("log", base=2)
    ax.set_xticks(threads, [f"{t:g}" for t in threads])
    ax.set_xlabel("threads (synchronous, 4 KiB random reads)")
    ax.grid(True, alpha=0.3)


def _mode_panels(plt, rows: list[dict], panels: tuple, shape: tuple[int, int], figsize: tuple[float, float]):
    """One panel per (column, scale, y label) of ``panels``: the column against threads, one line
    per completion mode; returns (figure, axes in reading order)."""
    by_mode = _by_mode(rows)
    threads = sorted({float(r["numjobs"]) for r in rows})
    fig, axes = plt.subplots(*shape, figsize=figsize)
    flat = list(axes.flat)
    for ax, (key, scale, label) in zip(flat, panels):
        for mode, color in MODES.items():
            rs = by_mode[mode]
            ax.plot(
                [float(r["numjobs"]) for r in rs],
                [float(r[key]) * scale for r in rs],
                "o-",
                color=color,
                label=mode,
                markersize=4,
            )
        _threads_axis(ax, threads)
        ax.set_ylabel(label)
    flat[0].legend(title="completion")
    return fig, flat


def threads_figure(plt, rows: list[dict], path: Path) -> None:
    """Latency, IOPS, context switches and migrations per IO against threads, one line per mode."""
    panels = (
        ("latency_us.mean", 1.0, "mean latency (us)"),
        ("iops", 1e-3, "IOPS (thousands)"),
        ("context_switches_per_io", 1.0, "context switches per IO"),
        ("cpu_migrations_per_io", 1.0, "CPU migrations per IO"),
    )
    fig, _ = _mode_panels(plt, rows, panels, (2, 2), (11, 7))
    fig.suptitle("optane900p-e3-1230v5 (4 cores, 8 CPUs): predictions, nothing fitted beyond one thread", fontsize=10)
    save_svg(fig, path)


def energy_figure(plt, rows: list[dict], path: Path) -> None:
    """CPU package power and system energy per IO against threads, one line per mode."""
    panels = (
        ("power_w.cpu", 1.0, "CPU package power (W)"),
        ("energy_j_per_million_ios", 1.0, "system energy per IO (uJ)"),
    )
    fig, _ = _mode_panels(plt, rows, panels, (1, 2), (11, 3.8))
    save_svg(fig, path)


def memops_figure(plt, rows: list[dict], path: Path) -> None:
    """Memory operations per second by kernel source against threads, one panel per mode; the
    published 32-thread interrupt and classic columns (the memops calibration's targets) as
    markers."""
    from scenarios.data.reference import values

    table2 = values("poll_vs_interrupt_energy", "memory_ops_4k_32_threads")
    published = {"interrupt": table2.get("interrupt"), "classic": table2.get("classic_polling")}
    by_mode = _by_mode(rows)
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8), sharey=True)
    for ax, mode in zip(axes, MODES):
        rs = by_mode[mode]
        for source, color in SOURCES.items():
            ax.plot(
                [float(r["numjobs"]) for r in rs],
                [float(r["mem_ops_per_s." + source]) / 1e6 for r in rs],
                "o-",
                color=color,
                label=source,
                markersize=3,
            )
            pub = published.get(mode)
            if pub and source in pub:
                ax.plot([32], [pub[source]], "D", color=color, mfc="none", markersize=8)
        _threads_axis(ax, sorted({float(r["numjobs"]) for r in rows}))
        ax.set_title(
            mode
            + (" (diamonds: Table 2, the calibration's targets)" if published.get(mode) else " (no published column)"),
            fontsize=9,
        )
    axes[0].set_ylabel("loads + stores (millions per second)")
    axes[0].legend(fontsize=8)
    save_svg(fig, path)


def queue_depth_figure(plt, qd_rows: list[dict], thread_rows: list[dict], path: Path) -> None:
    """IOPS and mean latency against commands in flight: the model and the published points."""
    from models.ssd.presets import optane_900p
    from scenarios.data.reference import values

    pts = values("optane_ssd", "random_read_4k_by_depth")
    rated = values("optane_ssd", "rated_random_4k_iops")["read"]
    dp = optane_900p().datapath
    ceiling = dp.read_gb_s * 1e9 / 4096 / dp.count if dp else None
    rs = sorted(qd_rows, key=lambda r: float(r["iodepth"]))
    x = [4 * float(r["iodepth"]) for r in rs]  # 4 threads x depth
    one = next(r for r in thread_rows if r["mode"] == "interrupt" and float(r["numjobs"]) == 1)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, key, scale, label, pkey in (
        (axes[0], "iops", 1e-3, "IOPS (thousands)", "iops"),
        (axes[1], "latency_us.mean", 1.0, "mean latency (us)", "mean_latency_us"),
    ):
        ax.plot(
            x,
            [float(r[key]) * scale for r in rs],
            "o-",
            color="#4C78A8",
            markersize=4,
            label="model: 900P, io_uring, 4 threads x depth, interrupts",
        )
        ax.plot([1], [float(one[key]) * scale], "s", color="#4C78A8", mfc="white", label="model: 1 thread, pvsync2")
        ax.plot(
            [float(d) for d in pts],
            [pts[d][pkey] * scale for d in pts],
            "D",
            color="#E45756",
            markersize=7,
            label="published: P4800X, QD1 and QD16",
        )
        ax.set_xscale("log", base=2)
        ax.set_xticks([1, 4, 16, 64, 256], ["1", "4", "16", "64", "256"])
        ax.set_xlabel("commands in flight (4 KiB random reads)")
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
    axes[0].axhline(rated * 1e-3, color="#E45756", ls=":", lw=1, label="published: rated 550K")
    if ceiling:
        axes[0].axhline(
            ceiling * 1e-3, color="#4C78A8", ls="--", lw=1, label=f"model ceiling: data path {dp.read_gb_s:g} GB/s"
        )
    axes[1].set_yscale("log")
    axes[0].legend(fontsize=7, loc="lower right")
    fig.suptitle(
        "Optane queue depth: the model's 900P against the published P4800X points"
        " (scenarios/data/reference/optane_ssd.yaml)",
        fontsize=9,
    )
    save_svg(fig, path)


def save_svg(fig, path: Path) -> None:
    """Write ``fig`` to ``path`` as a reproducible SVG (no date; ids fixed by :func:`svg_pyplot`)."""
    fig.tight_layout()
    fig.savefig(path, format="svg", metadata={"Date": None})
    print(f"wrote {path.relative_to(ROOT)}")


def svg_pyplot(tool: str):
    """matplotlib's pyplot set up for reproducible SVGs, with the repository importable; None (and a
    message naming ``tool``) without matplotlib."""
    try:
        import matplotlib
    except ImportError:
        print(f"{tool}: needs matplotlib (pip install matplotlib)", file=sys.stderr)
        return None
    matplotlib.use("svg")
    matplotlib.rcParams["svg.hashsalt"] = "stacksim"  # fixed element ids: reproducible SVGs
    matplotlib.rcParams["svg.fonttype"] = "none"  # text stays text (smaller, searchable)
    import matplotlib.pyplot as plt

    sys.path.insert(0, str(ROOT))
    return plt


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("threads_csv")
    ap.add_argument("qd_csv")
    args = ap.parse_args(argv)
    plt = svg_pyplot("predictions_figures")
    if plt is None:
        return 2
    threads, qd = read_rows(args.threads_csv), read_rows(args.qd_csv)
    OUT.mkdir(exist_ok=True)
    threads_figure(plt, threads, OUT / "threads.svg")
    energy_figure(plt, threads, OUT / "threads-energy.svg")
    memops_figure(plt, threads, OUT / "threads-memops.svg")
    queue_depth_figure(plt, qd, threads, OUT / "queue-depth.svg")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
