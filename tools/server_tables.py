"""Re-make docs/server.md's tables of the stable sweep (system power, p99 latency, active logical
cores, per client rate and policy) from its results.

    stacksim sweep server_stable -o stable.csv -j 2
    python tools/server_tables.py stable.csv [--commit HASH]

Each table sits between ``<!-- sweep: NAME -->`` and ``<!-- end sweep -->`` (``stable-power``,
``stable-p99``, ``stable-cores``); the text around them is written by hand and must be re-read when
the figures move (tests/test_docs_tables.py re-runs the 10K row and checks it).
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sweep_blocks import rewrite_page  # noqa: E402  (tools/ is not a package)

PAGE = Path(__file__).resolve().parents[1] / "docs" / "server.md"
POLICIES = ("spdk-static", "linux", "governor", "dynamic", "hybrid", "sandman")
#: table -> (column, format, the client rates it shows: None for all)
TABLES = {
    "stable-power": ("power_w.system", ".0f", None),
    "stable-p99": ("latency_us.p99", ".0f", None),
    "stable-cores": ("active_cores_mean", ".1f", (10_000, 640_000, 2_560_000, 10_240_000)),
}


def tables_from(rows: list[dict]) -> dict[str, str]:
    """Each table's body; a rate whose six policies were not all run is left out."""
    by = {(int(float(r["workload.rate_iops"])), r["server.policy"]): r for r in rows}
    rates = sorted({rate for rate, _ in by})
    out = {}
    for name, (column, fmt, shown) in TABLES.items():
        lines = [
            "| client rate | " + " | ".join(f"`{p}`" for p in POLICIES) + " |",
            "|---:|" + "---:|" * len(POLICIES),
        ]
        for rate in rates:
            if (shown and rate not in shown) or any((rate, p) not in by for p in POLICIES):
                continue
            cells = " | ".join(f"{float(by[rate, p][column]):{fmt}}" for p in POLICIES)
            lines.append(f"| {rate // 1000:,}K | {cells} |")
        out[name] = "\n".join(lines)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("csv")
    ap.add_argument("--commit", help="the commit the results come from (written into the made-at line)")
    args = ap.parse_args(argv)
    with open(args.csv, newline="") as f:
        made = tables_from(list(csv.DictReader(f)))
    seen = rewrite_page(PAGE, made, args.commit)
    missing = set(made) - seen
    print(f"rewrote {len(seen)} tables of {PAGE.name}" + (f"; no markers for {sorted(missing)}" if missing else ""))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
