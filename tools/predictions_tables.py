"""Re-make the tables of docs/predictions.md from the two sweeps' results.

    stacksim sweep threads_scaling -o threads.csv -j 2
    stacksim sweep queue_depth -o qd.csv
    python tools/predictions_tables.py threads.csv qd.csv [--commit HASH]

Each table sits between ``<!-- sweep: NAME -->`` and ``<!-- end sweep -->``; the text around
them (what the model says, and why) is written by hand and must be re-read when the figures move.
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
from pathlib import Path

from models.os.costs.memops import KEYS
from scenarios.data.reference import values

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sweep_blocks import BLOCK, replace_blocks  # noqa: E402  (tools/ is not a package)

PAGE = Path(__file__).resolve().parents[1] / "docs" / "predictions.md"
MODES = ("interrupt", "classic", "hybrid")
MEM_KEYS = ("block/", "drivers/nvme/host/", "kernel/sched/", "kernel/time/", "other", "total")
ACTIONS = (
    "switch",
    "wakeup",
    "pelt_update",
    "idle_scan",
    "migrate",
    "load_balance",
    "idle_entry",
    "idle_exit",
    "hrtimer_program",
)


def _rows(path: str) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _threads(rows: list[dict]) -> dict:
    return {(int(float(r["numjobs"])), r["mode"]): {k: _num(v) for k, v in r.items()} for r in rows}


def _num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return v


def _by_mode(t: dict, fmt) -> str:
    out = ["| threads | interrupt | classic | hybrid |", "|---:|---:|---:|---:|"]
    for n in sorted({n for n, _ in t}):
        if any((n, m) not in t for m in MODES):
            continue
        out.append(f"| {n} | " + " | ".join(fmt(t[n, m]) for m in MODES) + " |")
    return "\n".join(out)


def _memops_32(t: dict) -> str:
    """Every published key at 32 threads: the study's interrupt and classic columns (the memops
    calibration's targets) beside the model's three modes (hybrid: a prediction)."""
    pub = values("poll_vs_interrupt_energy", "memory_ops_4k_32_threads")
    out = [
        "| source | interrupt, published | interrupt, model | classic, published | classic, model | hybrid, model |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for k in (*KEYS, "total"):
        m = {mode: t[32, mode][f"mem_ops_per_s.{k}"] / 1e6 for mode in MODES}
        out.append(
            f"| `{k}` | {pub['interrupt'][k]:,} | {m['interrupt']:,.0f} | {pub['classic_polling'][k]:,} "
            f"| {m['classic']:,.0f} | {m['hybrid']:,.0f} |"
        )
    return "\n".join(out)


def tables(threads_csv: str, qd_csv: str) -> dict[str, str]:
    return tables_from(_threads(_rows(threads_csv)), _rows(qd_csv))


def tables_from(t: dict, qd_rows: list[dict]) -> dict[str, str]:
    """Every table's body from the runs given: ``t`` by (threads, mode), ``qd_rows`` the queue-depth
    sweep's rows. A table's rows for points that were not run are left out (tests/test_docs_tables.py
    re-runs a few points and checks that their rows are the page's), and a table with none is."""
    out = {}
    if t:
        out = {
            "threads-latency": _by_mode(t, lambda r: f"{r['latency_us.mean']:.2f}"),
            "threads-iops": _by_mode(t, lambda r: f"{r['iops'] / 1e3:.0f}K"),
            "threads-switches": _by_mode(
                t, lambda r: f"{r['context_switches_per_io']:.2f} / {r['cpu_migrations_per_io']:.3f}"
            ),
            "threads-energy": _by_mode(t, lambda r: f"{r['power_w.cpu']:.1f} / {r['energy_j_per_million_ios']:.0f}"),
        }
        mem = [
            "| threads | mode | " + " | ".join(f"`{k}`" for k in MEM_KEYS) + " |",
            "|---:|---|" + "---:|" * len(MEM_KEYS),
        ]
        for n in (1, 8, 32):
            for m in MODES:
                if (n, m) in t:
                    r = t[n, m]
                    cells = " | ".join(f"{r['mem_ops_per_s.' + k] / 1e6:,.0f}" for k in MEM_KEYS)
                    mem.append(f"| {n} | {m} | {cells} |")
        out["threads-memops"] = "\n".join(mem)
        if all((32, m) in t for m in MODES):
            out["memops-32"] = _memops_32(t)
        act = [
            "| threads | mode | " + " | ".join(f"`{a}`" for a in ACTIONS) + " |",
            "|---:|---|" + "---:|" * len(ACTIONS),
        ]
        for m in ("interrupt", "hybrid"):
            for n in (1, 16, 32, 64):
                if (n, m) in t:
                    r = t[n, m]
                    cells = " | ".join(f"{r['kernel_actions_per_io.' + a]:.2f}" for a in ACTIONS)
                    act.append(f"| {n} | {m} | {cells} |")
        out["threads-actions"] = "\n".join(act)
    if qd_rows:
        qd = [
            "| commands in flight (4 threads x depth) | IOPS | mean latency (us) | p99 (us) |",
            "|---:|---:|---:|---:|",
        ]
        for r in sorted(qd_rows, key=lambda r: int(float(r["iodepth"]))):
            qd.append(
                f"| {4 * int(float(r['iodepth']))} | {float(r['iops']) / 1e3:.0f}K | {float(r['latency_us.mean']):.1f} "
                f"| {float(r['latency_us.p99']):.1f} |"
            )
        out["queue-depth"] = "\n".join(qd)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("threads_csv")
    ap.add_argument("qd_csv")
    ap.add_argument("--commit", help="the commit the results come from (written into the page)")
    args = ap.parse_args(argv)
    made = tables(args.threads_csv, args.qd_csv)
    text = PAGE.read_text()
    unmade = sorted({m["name"] for m in BLOCK.finditer(text)} - set(made))
    if unmade:
        raise SystemExit(f"{PAGE.name}: no table made for the blocks {unmade}")
    text, seen = replace_blocks(text, made)
    if args.commit:
        text = re.sub(r"Made with stacksim at commit `\w+`", f"Made with stacksim at commit `{args.commit}`", text)
    PAGE.write_text(text)
    missing = set(made) - seen
    print(f"rewrote {len(seen)} tables of {PAGE.name}" + (f"; no markers for {sorted(missing)}" if missing else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
