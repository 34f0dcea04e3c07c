"""Draw docs/scaling.md's curves (SVG, in docs/figures/) from the two CHEOPS'23 sweeps' results,
beside the study's measured points (shipped in scenarios/data/measurements/cheops23):

    stacksim sweep cheops23_depth -o depth.csv
    stacksim sweep cheops23_threads -o threads.csv
    pip install matplotlib           # only this script needs it
    python tools/scaling_figures.py depth.csv threads.csv

Writes ``scaling-depth.svg`` (IOPS, CPU time per IO, instructions per IO and IPC against depth, one
line per engine; the measured depth-1, saturation and depth-128 points as markers: fio's IOPS and
``perf stat -a``'s cycles and instructions per IO) and ``scaling-threads.svg`` (IOPS and CPU time per
IO against threads, one line per IO scheduler: a prediction). Reproducible SVGs (no date, fixed ids).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from predictions_figures import OUT, read_rows, save_svg, svg_pyplot  # (tools/, the script's directory)

ENGINES = {"aio": "#E45756", "iou": "#4C78A8", "iou_c": "#54A24B", "iou_s": "#B279A2"}
LABELS = {"aio": "libaio", "iou": "io_uring", "iou_c": "io_uring hipri", "iou_s": "io_uring SQPOLL"}
SCHEDULERS = {"none": "#4C78A8", "mq-deadline": "#F58518", "kyber": "#54A24B", "bfq": "#E45756"}
GHZ = 2.41  # the measured host's clock (cycles per ns)


def measured() -> dict[str, list[tuple[float, dict]]]:
    """engine -> [(depth, {iops, cycles_per_io, instructions_per_io, ipc})] from the shipped data
    (``perf stat``'s counters per IO as the cheops23 validation suite reads them)."""
    from scenarios.data.measurements import CHEOPS23_DIR
    from scenarios.studies.suite_cheops23 import POINTS, perf_counters

    perf = perf_counters()
    out: dict[str, list[tuple[float, dict]]] = {}
    for point in POINTS:
        for engine in ENGINES:
            path = CHEOPS23_DIR / point / f"{engine}.json"
            if not path.is_file():
                continue
            result = json.loads(path.read_text())
            depth = float(result["global options"].get("iodepth", 1))
            values = {"iops": float(result["jobs"][0]["read"]["iops"])}
            counters = perf.get((point, engine))
            if counters is not None:
                values.update(counters, cycles_per_io=counters["instructions_per_io"] / counters["ipc"])
            out.setdefault(engine, []).append((depth, values))
    return out


def depth_figure(plt, rows: list[dict], path: Path) -> None:
    meas = measured()
    panels = (
        ("iops", 1e-3, "IOPS (thousands)"),
        ("cycles_per_io", 1 / (GHZ * 1e3), "CPU time per IO (us, perf stat -a cycles)"),
        ("instructions_per_io", 1e-3, "instructions per IO (thousands)"),
        ("ipc", 1.0, "IPC"),
    )
    fig, axes = plt.subplots(2, 2, figsize=(11, 7))
    for ax, (key, scale, label) in zip(axes.flat, panels):
        for engine, color in ENGINES.items():
            rs = sorted((r for r in rows if r["engine"] == engine and r.get(key)), key=lambda r: float(r["iodepth"]))
            ax.plot(
                [float(r["iodepth"]) for r in rs],
                [float(r[key]) * scale for r in rs],
                "o-",
                color=color,
                label=f"{LABELS[engine]} (model)",
                markersize=3,
            )
            pts = [(d, v[key] * scale) for d, v in meas.get(engine, []) if key in v]
            if pts:
                ax.plot(
                    *zip(*pts),
                    "D",
                    color=color,
                    markersize=8,
                    markerfacecolor="none",
                    label=f"{LABELS[engine]} (measured)",
                )
        ax.set_xscale("log", base=2)
        ax.set_xlabel("iodepth (one thread, 7 devices)")
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
    axes.flat[0].legend(fontsize=7)
    fig.suptitle("cheops23-optane: one thread, 4 KiB random reads; lines the model, diamonds CHEOPS'23", fontsize=10)
    save_svg(fig, path)


def threads_figure(plt, rows: list[dict], path: Path) -> None:
    panels = (("iops", 1e-3, "IOPS (thousands)"), ("cpu_time_us_per_io", 1.0, "CPU time per IO (us)"))
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    for r in rows:
        r["cpu_time_us_per_io"] = float(r["cpu_utilization"]) * 20 * 1e6 / float(r["iops"])
    for ax, (key, scale, label) in zip(axes, panels):
        for sched, color in SCHEDULERS.items():
            for sockets, style in (("both", "o-"), ("node1", "s--")):
                rs = sorted(
                    (r for r in rows if r["queue.scheduler"] == sched and r.get("sockets", "both") == sockets),
                    key=lambda r: float(r["numjobs"]),
                )
                xs = [float(r["numjobs"]) for r in rs]
                ys = [float(r[key]) * scale for r in rs]
                ax.plot(xs, ys, style, color=color, label=f"{sched}, {sockets}", markersize=4)
        ax.set_xlabel("io_uring threads at depth 128 (7 devices on node 1; CPUs of both sockets or node 1)")
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
    axes[0].legend(title="IO scheduler", fontsize=8)
    save_svg(fig, path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("depth_csv")
    ap.add_argument("threads_csv")
    args = ap.parse_args(argv)
    plt = svg_pyplot("scaling_figures")
    if plt is None:
        return 2
    OUT.mkdir(exist_ok=True)
    depth_figure(plt, read_rows(args.depth_csv), OUT / "scaling-depth.svg")
    threads_figure(plt, read_rows(args.threads_csv), OUT / "scaling-threads.svg")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
