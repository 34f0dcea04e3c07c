"""Re-make the prediction table of docs/pagecache.md: buffered (direct=0) against direct IO for
sequential and random 4 KiB reads and writes, an fsync-heavy write job (one psync thread each), and
io_uring random reads at queue depth 16.

    STACKSIM_PURE=1 python tools/pagecache_table.py [--platform NAME] [--runtime-ms N]

The table sits between ``<!-- pagecache-table -->`` and ``<!-- end pagecache-table -->``; the text
around it is written by hand and must be re-read when the figures move.
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from scenarios.config.host import resolve
from scenarios.inputs.fio.parser import parse_fio_text
from scenarios.run.simulate import simulate

PAGE = Path(__file__).resolve().parents[1] / "docs" / "pagecache.md"
BLOCK = re.compile(r"(<!-- pagecache-table -->\n)(?P<body>.*?)(<!-- end pagecache-table -->)", re.S)
CASES = (
    ("sequential read", "read", ""),
    ("random read", "randread", ""),
    ("sequential write", "write", ""),
    ("random write", "randwrite", ""),
    ("write, fsync=8", "write", "fsync=8"),
    ("random read, io_uring QD16", "randread", "ioengine=io_uring\niodepth=16"),
)
PLATFORM = "optane900p-e3-1230v5"
RUNTIME_MS = 100
"""the table's platform and run length (the page states both; tests/test_docs_tables.py re-runs two rows)"""
KERNEL = ("syscall", "fs", "block", "iosched", "driver", "irq", "scheduler")


def _summary(platform: str, rw: str, extra: str, direct: int, runtime_ms: int) -> dict:
    text = (
        f"[j]\nioengine=psync\nrw={rw}\nbs=4k\nsize=1g\nruntime={runtime_ms}ms\ntime_based=1\n"
        f"direct={direct}\n{extra}\n"
    )
    if direct and "fsync" in extra:
        return {}
    cfg = resolve(jobs=list(parse_fio_text(text).jobs), platform=platform)
    return simulate(cfg).summary


def _row(name: str, mode: str, s: dict) -> str:
    if not s:
        return f"| {name} | {mode} | (refused: no flush command modelled) | | | | | |"
    lay = s["layers"]
    kernel = sum(lay.get(k, 0.0) for k in KERNEL)
    return (
        f"| {name} | {mode} | {s['iops']:,.0f} | {s['latency_us']['mean']:.2f} | {lay.get('pagecache', 0.0):.0f} |"
        f" {lay.get('writeback', 0.0):.0f} | {kernel:.0f} | {s['power_w']['system']:.1f} |"
    )


def table(platform: str, runtime_ms: int) -> str:
    lines = [
        "| job (4 KiB, psync unless named, 1 GiB file) | IO | IOPS | mean latency, us | pagecache ns/IO |"
        " writeback ns/IO | other kernel ns/IO | system W |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, rw, extra in CASES:
        for direct, mode in ((0, "buffered"), (1, "direct")):
            lines.append(_row(name, mode, _summary(platform, rw, extra, direct, runtime_ms)))
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--platform", default=PLATFORM)
    ap.add_argument("--runtime-ms", type=int, default=RUNTIME_MS)
    args = ap.parse_args()
    body = table(args.platform, args.runtime_ms)
    text = PAGE.read_text()
    new, n = BLOCK.subn(lambda m: m.group(1) + body + m.group(3), text)
    if not n:
        raise SystemExit(f"{PAGE}: no <!-- pagecache-table --> block")
    PAGE.write_text(new)
    print(body)


if __name__ == "__main__":
    main()
