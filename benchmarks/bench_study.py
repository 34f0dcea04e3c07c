"""Wall time of the full poll-vs-interrupt study grid (issue: under 30 minutes on 2 cores).

    python benchmarks/bench_study.py            # runs the whole grid (840 runs) into a temp file
    python benchmarks/bench_study.py --estimate # one replicate of every 4th point, extrapolated

Prints wall seconds, CPU seconds and runs per minute. The estimate runs a stratified sample of the
grid (every size, depth and mode appears) and scales by the number of runs.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--estimate", action="store_true", help="sample the grid and extrapolate")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count())
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "study.csv"
        cmd = [
            sys.executable,
            "-m",
            "stacksim",
            "sweep",
            "poll_energy_study",
            "-o",
            str(out),
            "-j",
            str(args.jobs),
            "--no-progress",
        ]
        scale = 1.0
        if args.estimate:
            # 8 sizes x 7 depths x 3 modes x 5 replicates = 840 runs; sample: 1 replicate, sizes 1k/8k/64k
            sweep = Path(tmp) / "sample.yaml"
            text = (ROOT / "scenarios" / "data" / "sweeps" / "poll_energy_study.yaml").read_text()
            text = text.replace("bs: [1k, 2k, 4k, 8k, 16k, 32k, 64k, 128k]", "bs: [1k, 8k, 64k]").replace(
                "replicates: 5", "replicates: 1"
            )
            sweep.write_text(text)
            cmd[4] = str(sweep)
            scale = (8 * 5) / (3 * 1)  # the sampled sizes (1k, 8k, 64k) span cheap and costly points
        t0 = time.perf_counter()
        c0 = os.times()
        subprocess.run(cmd, check=True, cwd=ROOT)
        wall = time.perf_counter() - t0
        c1 = os.times()
        cpu = (c1.children_user - c0.children_user) + (c1.children_system - c0.children_system)
    label = "estimated full grid" if args.estimate else "full grid"
    print(
        f"{label}: wall {wall * scale / 60:.1f} min, CPU {cpu * scale / 60:.1f} min on {args.jobs} workers "
        f"({840 / (wall * scale) * 60:.0f} runs per minute)"
    )


if __name__ == "__main__":
    main()
