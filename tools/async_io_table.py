"""Re-make docs/async-io.md's table of fio's defaults at depth against CHEOPS'23: the study's job
files unchanged, one thread, 4 KiB random reads over seven devices, on ``optane-p4800x-e5-2660v4``
with the page's settings; system calls, interrupts, CQEs per interrupt and the fio task's switches
per IO, and IOPS.

    python tools/async_io_table.py [--commit HASH]

The table sits between ``<!-- sweep: fio-defaults -->`` and ``<!-- end sweep -->``; its measured
column is the page's (kept as it is); the text around it is written by hand and must be re-read
when the figures move (tests/test_docs_tables.py re-runs two rows and checks them).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

from scenarios.config.host import resolve
from scenarios.data.measurements import CHEOPS23_DIR
from scenarios.run.simulate import simulate

PAGE = Path(__file__).resolve().parents[1] / "docs" / "async-io.md"
BLOCK = re.compile(r"(<!-- sweep: fio-defaults -->\n)(?P<body>.*?)(<!-- end sweep -->)", re.S)
MADE = re.compile(r"<!-- made at commit \w+ by python tools/async_io_table\.py -->")
PLATFORM = "optane-p4800x-e5-2660v4"
#: the page's settings: the R730 preset at the study's clock, its eight device names, 6.6, fio-3.32
SETS = {"ssd_count": 8, "cpu.base_freq_ghz": 2.41, "kernel.version": "6.6", "stacksim_fio_version": "3.32"}
ENV = {"FIO_RUN_TIME": "60ms", "FIO_RAMP_TIME": "10ms"}  # simulated 60 ms after a 10 ms ramp
#: (engine label, depth, the study's job file, extra settings)
ROWS = (
    ("psync", 1, "qd1/psync", {}),
    ("libaio", 1, "qd1/aio", {}),
    ("libaio", 8, "saturation/aio", {}),
    ("libaio", 128, "depth128_1thread/aio", {}),
    ("io_uring", 1, "qd1/iou", {}),
    ("io_uring", 8, "saturation/iou", {}),
    ("io_uring", 128, "depth128_1thread/iou", {}),
    ("io_uring hipri", 1, "qd1/iou_c", {"queue.io_poll": 1}),
    ("io_uring hipri", 8, "saturation/iou_c", {"queue.io_poll": 1}),
    ("io_uring hipri", 128, "depth128_1thread/iou_c", {"queue.io_poll": 1}),
)


def _per_io(x: float | None) -> str:
    if x is None:
        return ""
    return "0" if abs(x) < 0.005 else f"{x:.2f}"


def row(engine: str, depth: int, job: str, extra: dict, measured: str) -> str:
    """One table row from one run (the page's ``measured`` cell kept)."""
    cfg = resolve(job_file=str(CHEOPS23_DIR / f"{job}.fio"), platform=PLATFORM, sets={**SETS, **extra}, env=ENV)
    result = simulate(cfg, keep_model=True)
    s = result.summary
    (thread,) = result.run.threads
    calls = thread.syscalls / thread.issued_ios if hasattr(thread, "syscalls") else 1.0  # psync: one pread per IO
    interrupts = s["interrupts_per_io"]
    cqes = s["completions_per_interrupt"] if interrupts >= 0.005 else None
    cells = (
        engine,
        str(depth),
        f"{calls:.2f}",
        _per_io(interrupts),
        _per_io(cqes),
        _per_io(s["context_switches_per_io"]),
    )
    return ("| " + " | ".join(cells) + f" | {s['iops'] / 1e3:.1f}K | {measured} |").replace("|  |", "| |")


def measured_cells(text: str) -> dict[tuple[str, int], str]:
    """(engine, depth) -> the page's measured cell."""
    body = BLOCK.search(text)["body"].splitlines()[2:]
    cells = [[c.strip() for c in line.strip().strip("|").split("|")] for line in body]
    return {(c[0], int(c[1])): c[-1] for c in cells}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--commit", help="the commit the results come from (written into the made-at line)")
    args = ap.parse_args(argv)
    text = PAGE.read_text()
    measured = measured_cells(text)
    lines = text[BLOCK.search(text).start("body") :].splitlines()[:2]
    for engine, depth, job, extra in ROWS:
        lines.append(row(engine, depth, job, extra, measured[engine, depth]))
        print(lines[-1])
    text = BLOCK.sub(lambda m: m.group(1) + "\n".join(lines) + "\n" + m.group(3), text)
    if args.commit:
        text = MADE.sub(f"<!-- made at commit {args.commit} by python tools/async_io_table.py -->", text)
    PAGE.write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
