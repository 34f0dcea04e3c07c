"""Draw docs/scaling.md's curves (SVG, in docs/figures/) from the two CHEOPS'23 sweeps' results,
beside the study's measured points (shipped in scenarios/data/measurements/cheops23):

    stacksim sweep cheops23_depth -o depth.csv
    stacksim sweep cheops23_threads -o threads.csv
    pip install matplotlib           # only this script needs it
    python tools/scaling_figures.py depth.csv threads.csv

``--tenants tenants.csv`` (``stacksim sweep tenant_mix``) draws ``scaling-tenants.svg``; ``--icpe24``
simulates the ``icpe24`` suite's fig. 7 points and draws ``scaling-icpe24.svg`` beside the measured ones.
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


def icpe24_rows() -> list[dict]:
    """Fig. 7 of the ICPE'24 study (the ``icpe24`` suite's points, 1-15 processes per scheduler and
    SPDK), simulated and measured: IOPS, CPU time per IO (us) and context switches per IO. The
    measured CPU time is fio's usr + sys per process x processes / IOPS, its switches fio's ``ctx``
    (all processes, ``group_reporting``) over the IOs of the run."""
    from scenarios.studies.suite_icpe24 import CPUS, fig7_points, fig7_result
    from scenarios.studies.validation import PointRunner, metric_value

    runner = PointRunner(platform=None)
    rows = []
    for p in fig7_points():
        _, sched, procs = p.label.rsplit(" ", 2)
        n = int(procs.removesuffix("p"))
        s = runner.summary(p)
        iops = metric_value(s, "iops")
        res = fig7_result(sched, n)
        ios = res.read.total_ios
        rows.append(
            {
                "sched": sched,
                "procs": n,
                "iops": iops,
                "cpu_us": s["cpu_utilization"] * CPUS * 1e6 / iops,
                "ctx": s.get("context_switches_per_io", 0.0),
                "m_iops": p.metrics["iops"],
                "m_cpu_us": p.metrics["cpu_utilization"] * CPUS * 1e6 / p.metrics["iops"],
                "m_ctx": res.ctx / ios if ios else None,
            }
        )
    return rows


def icpe24_figure(plt, rows: list[dict], path: Path) -> None:
    colors = {**SCHEDULERS, "spdk": "#72B7B2"}
    panels = (
        ("iops", 1e-3, "IOPS (thousands)"),
        ("cpu_us", 1.0, "CPU time per IO (us)"),
        ("ctx", 1.0, "context switches per IO"),
    )
    fig, axes = plt.subplots(1, 3, figsize=(14, 3.8))
    for ax, (key, scale, label) in zip(axes, panels):
        for sched, color in colors.items():
            rs = sorted((r for r in rows if r["sched"] == sched), key=lambda r: r["procs"])
            if not rs:
                continue
            ax.plot(
                [r["procs"] for r in rs],
                [r[key] * scale for r in rs],
                "o-",
                color=color,
                label=f"{sched} (model)",
                markersize=3,
            )
            pts = [(r["procs"], r["m_" + key] * scale) for r in rs if r.get("m_" + key) is not None]
            ax.plot(*zip(*pts), "D", color=color, markersize=7, markerfacecolor="none", label=f"{sched} (measured)")
        ax.set_xlabel("fio processes, io_uring depth 128, one 980 PRO")
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize=7, ncol=2)
    fig.suptitle("icpe24-980pro (Xeon Silver 4210R, 10 CPUs): lines the model, diamonds ICPE'24 fig. 7", fontsize=10)
    save_svg(fig, path)


def tenants_figure(plt, rows: list[dict], path: Path) -> None:
    """The ``tenant_mix`` sweep: the latency tenant's mean and p99 and the throughput tenants' IOPS
    against the number of throughput tenants, per IO scheduler."""
    panels = (
        ("job.lat.latency_us.mean", 1.0, "latency tenant: mean latency (us)"),
        ("job.lat.latency_us.p99", 1.0, "latency tenant: p99 latency (us)"),
        ("job.tput.iops", 1e-3, "throughput tenants: IOPS (thousands)"),
    )
    fig, axes = plt.subplots(1, 3, figsize=(14, 3.8))
    for ax, (key, scale, label) in zip(axes, panels):
        for sched, color in SCHEDULERS.items():
            rs = sorted((r for r in rows if r["queue.scheduler"] == sched), key=lambda r: float(r["job.tput.numjobs"]))
            xs = [float(r["job.tput.numjobs"]) for r in rs if r.get(key) not in (None, "")]
            ys = [float(r[key]) * scale for r in rs if r.get(key) not in (None, "")]
            ax.plot(xs, ys, "o-", color=color, label=sched, markersize=4)
        ax.set_xlabel("throughput tenants (4 KiB, depth 32 each)")
        ax.set_ylabel(label)
        ax.grid(True, alpha=0.3)
    axes[0].legend(title="IO scheduler", fontsize=8)
    fig.suptitle(
        "tenants: one 4 KiB depth-1 reader beside N scans, 2 shared CPUs, one 980 PRO (a prediction)", fontsize=10
    )
    save_svg(fig, path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("depth_csv", nargs="?")
    ap.add_argument("threads_csv", nargs="?")
    ap.add_argument("--tenants", metavar="CSV", help="the tenant_mix sweep's results: scaling-tenants.svg")
    ap.add_argument("--icpe24", action="store_true", help="simulate ICPE'24 fig. 7's points: scaling-icpe24.svg")
    args = ap.parse_args(argv)
    plt = svg_pyplot("scaling_figures")
    if plt is None:
        return 2
    OUT.mkdir(exist_ok=True)
    if args.depth_csv:
        depth_figure(plt, read_rows(args.depth_csv), OUT / "scaling-depth.svg")
    if args.threads_csv:
        threads_figure(plt, read_rows(args.threads_csv), OUT / "scaling-threads.svg")
    if args.tenants:
        tenants_figure(plt, read_rows(args.tenants), OUT / "scaling-tenants.svg")
    if args.icpe24:
        icpe24_figure(plt, icpe24_rows(), OUT / "scaling-icpe24.svg")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
