"""Calibration of memory-operation intensities (``kernel.mem_ops_per_cycle``) of
``optane900p-e3-1230v5`` against table 2 of poll_vs_interrupt_energy.json (loads + stores per
second by kernel directory and function group, 4 KiB random reads, 32 threads), interrupt and
classic-polling columns only.

Unknowns: operations per cycle of each (source of CPU work, cell) pair allowed by
:data:`models.os.memops.SOURCE_CELLS`. The two columns give 24 equations (relative error); a weak
prior (weight ``PRIOR``) pulls every unknown towards the average intensity of the measured kernel
work spread evenly over its source's cells, which decides the sources the two columns do not
exercise (the hrtimer code only hybrid polling runs). Solved with bounded linear least squares
(scipy ``lsq_linear``, intensities >= 0). The hybrid-polling column is then a prediction of the
model: its timer, sleep and shorter polling are what it executes.

    python -m scenarios.calibrate_memops [--runtime-ms 60]
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from scipy.optimize import lsq_linear

from models.os.memops import CELLS, KEYS, SOURCE_CELLS
from scenarios.calibrate_poll_energy import REFERENCE, run_mode
from models.platforms import POLL_ENERGY_FIT

PRIOR = 0.05
MODES = {"interrupt": "interrupt", "classic_polling": "classic_polling"}


def table2() -> dict:
    return json.loads(REFERENCE.read_text())["measured"]["table2_loads_stores_million_per_s_4k_32_threads"]


def source_cycles(runtime_ms: int = 60) -> dict:
    """Cycles per second of each source at 4 KiB, 32 threads, per mode (the model's own run)."""
    return {mode: run_mode(POLL_ENERGY_FIT, mode, runtime_ms=runtime_ms, threads=32)["cycles_per_s"]
            for mode in ("interrupt", "classic_polling", "hybrid_polling")}


def fit(cycles: dict) -> dict:
    cols = [(src, cell) for src, cells in SOURCE_CELLS.items() for cell in cells]
    meas = table2()
    rows, rhs = [], []
    for mode in ("interrupt", "classic_polling"):
        for key in KEYS:
            target = meas[mode][key] * 1e6
            scale = 1.0 / max(target, 1e6)  # relative error (absolute below 1 M/s)
            rows.append([cycles[mode].get(src, 0.0) * scale if key in CELLS[cell] else 0.0 for src, cell in cols])
            rhs.append(target * scale)
    a = np.array(rows)
    b = np.array(rhs)
    # average intensity of the measured kernel work: kernel memory ops / kernel cycles
    kernel_keys = ("block/", "drivers/nvme/host/", "kernel/sched/", "kernel/time/")
    kernel_srcs = ("block", "iosched", "driver", "scheduler", "timer", "polling")
    ops = sum(meas[m][k] * 1e6 for m in ("interrupt", "classic_polling") for k in kernel_keys)
    cyc = sum(cycles[m].get(sname, 0.0) for m in ("interrupt", "classic_polling") for sname in kernel_srcs)
    mean_intensity = ops / cyc
    prior = np.array([mean_intensity / len(SOURCE_CELLS[src]) for src, _ in cols])
    scale_p = np.array([1.0 / max(p, 1e-12) for p in prior]) * PRIOR
    a_full = np.vstack([a, np.diag(scale_p)])
    b_full = np.concatenate([b, prior * scale_p])
    sol = lsq_linear(a_full, b_full, bounds=(0.0, np.inf))
    out: dict[str, dict[str, float]] = {}
    for (src, cell), x in zip(cols, sol.x):
        out.setdefault(src, {})[cell] = float(round(x, 5))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--runtime-ms", type=int, default=60)
    args = ap.parse_args()
    cyc = source_cycles(args.runtime_ms)
    intensity = fit(cyc)
    print("MEM_OPS_PER_CYCLE =", json.dumps(intensity, indent=4))
    from models.os.memops import rates_per_s

    meas = table2()
    for mode in ("interrupt", "classic_polling", "hybrid_polling"):
        pred = rates_per_s(intensity, cyc[mode])
        print(mode, "(prediction)" if mode == "hybrid_polling" else "")
        for k in KEYS + ("total",):
            m = meas.get(mode, {}).get(k)
            print(f"  {k:22s} model {pred[k] / 1e6:8.1f} M/s" + (f"   measured {m:8.1f}" if m is not None else ""))


if __name__ == "__main__":
    main()
