"""Re-make the IOPOLL + SQPOLL prediction tables of docs/io-schedulers.md and docs/async-io.md from
the sweep's results.

    stacksim sweep io_schedulers_iopoll_sqpoll -o iopoll.csv -j 2
    python tools/iopoll_tables.py iopoll.csv [--commit HASH]

Each table sits between ``<!-- sweep: NAME -->`` and ``<!-- end sweep -->`` (io-schedulers.md:
``iopoll-sqpoll``, p50 and p99 of reads and writes; async-io.md: ``iopoll-sqpoll-p50``); the text
around them is written by hand and must be re-read when the figures move
(tests/test_docs_tables.py re-runs the ``none`` points and checks their rows).
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sweep_blocks import rewrite_page  # noqa: E402  (tools/ is not a package)

DOCS = Path(__file__).resolve().parents[1] / "docs"
SCHEDULERS = ("none", "mq-deadline", "kyber", "bfq")
SETUPS = ("default", "iopoll+sqpoll")
PAGES = {"iopoll-sqpoll": "io-schedulers.md", "iopoll-sqpoll-p50": "async-io.md"}


def _latencies(rows: list[dict]) -> dict:
    """(setup, rw, scheduler) -> (p50, p99) in us."""
    return {
        (r["setup"], r["rw"], r["queue.scheduler"]): (float(r["latency_us.p50"]), float(r["latency_us.p99"]))
        for r in rows
    }


def tables_from(rows: list[dict]) -> dict[str, str]:
    """Both tables' bodies; a scheduler whose eight points were not all run is left out."""
    lat = _latencies(rows)
    full = ["| scheduler | read p50 | read p99 | write p50 | write p99 |", "|---|---|---|---|---|"]
    short = ["| scheduler | read p50 default -> IOPOLL+SQPOLL | write p50 |", "|---|---|---|"]
    for s in SCHEDULERS:
        if any((u, rw, s) not in lat for u in SETUPS for rw in ("randread", "randwrite")):
            continue

        def pair(rw: str, q: int, fmt: str) -> str:
            return f"{lat['default', rw, s][q]:{fmt}} -> {lat['iopoll+sqpoll', rw, s][q]:{fmt}}"

        full.append(
            f"| {s} | {pair('randread', 0, '.2f')} | {pair('randread', 1, '.2f')} | {pair('randwrite', 0, '.2f')}"
            f" | {pair('randwrite', 1, '.2f')} |"
        )
        short.append(f"| {s} | {pair('randread', 0, '.1f')} | {pair('randwrite', 0, '.1f')} |")
    return {"iopoll-sqpoll": "\n".join(full), "iopoll-sqpoll-p50": "\n".join(short)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("--commit", help="the commit the results come from (written into each page's made-at line)")
    args = ap.parse_args(argv)
    with open(args.csv, newline="") as f:
        made = tables_from(list(csv.DictReader(f)))
    for name, page in PAGES.items():
        path = DOCS / page
        if f"<!-- sweep: {name} -->" not in path.read_text():
            raise SystemExit(f"{page}: no <!-- sweep: {name} --> block")
        rewrite_page(path, {name: made[name]}, args.commit)
        print(f"rewrote {page}'s {name} table")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
