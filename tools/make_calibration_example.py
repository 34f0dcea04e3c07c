"""Make ``examples/measured.csv``, the measured points of docs/traces-and-calibration.md's
``validate`` and ``calibrate`` walk-through: four points (interrupts and classic polling, 4 and
16 KiB, one pvsync2 thread at depth 1: the default job) simulated on ``optane900p-e3-1230v5`` with
two parameters moved to known values (:data:`TRUE`), as ``stacksim validate --runtime-ms 50``
simulates them (seed 7, 10 ms ramp). Each figure is written to five significant digits, as a
measurement would be. The page's calibration recovers :data:`TRUE` from it; tests/test_docs_quotes.py
runs the page's commands on it and tests/test_calibrate_cli.py checks that this script still makes
the file byte for byte. Run after the model changes, then ``python tools/doc_quotes.py``:

    python tools/make_calibration_example.py
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "examples" / "measured.csv"
PLATFORM = "optane900p-e3-1230v5"
#: the parameters the "machine" has: the platform's read time and context switch moved by 18% and -44%
TRUE = {"ssd.read.base_ns": 6000.0, "kernel.ctx_switch_cycles": 3000.0}
#: interrupt points pay two context switches per IO and polled points none: that separates the two
POINTS = {
    "irq-4k": {"hipri": "0", "queue.io_poll": "0", "bs": "4k"},
    "irq-16k": {"hipri": "0", "queue.io_poll": "0", "bs": "16k"},
    "poll-4k": {"hipri": "1", "queue.io_poll": "1", "bs": "4k"},
    "poll-16k": {"hipri": "1", "queue.io_poll": "1", "bs": "16k"},
}
RUNTIME_MS = 50.0
SEED = 7


def text() -> str:
    """The CSV as this model makes it."""
    sys.path.insert(0, str(ROOT))
    from scenarios.studies.validation import Point, PointRunner

    runner = PointRunner(platform=PLATFORM, runtime_ms=RUNTIME_MS, seed=SEED)
    lines = [
        "# made by tools/make_calibration_example.py: the default job on optane900p-e3-1230v5 with",
        "# " + ", ".join(f"{k}={v:g}" for k, v in TRUE.items()) + f" ({RUNTIME_MS:g} ms, seed {SEED})",
        "label,hipri,queue.io_poll,bs,metric.latency_us.mean,metric.iops",
    ]
    for label, cfg in POINTS.items():
        s = runner.summary(Point(label, cfg, {}), dict(TRUE))
        lat, iops = s["latency_us"]["mean"], s["iops"]
        lines.append(f"{label},{cfg['hipri']},{cfg['queue.io_poll']},{cfg['bs']},{lat:.5g},{float(f'{iops:.5g}'):.0f}")
    return "\n".join(lines) + "\n"


def main() -> int:
    OUT.write_text(text())
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
