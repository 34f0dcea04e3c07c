"""Calibration of memory-operation intensities (``kernel.mem_ops_per_cycle``) of
``optane900p-e3-1230v5`` against Table 2 of Harris & Altiparmak (HotStorage 2022; package data
``scenarios/reference/poll_vs_interrupt_energy.yaml``; loads + stores per
second by kernel directory and function group, 4 KiB random reads, 32 threads), interrupt and
classic-polling columns only.

Unknowns: operations per cycle of each (source of CPU work, cell) pair allowed by
:data:`models.os.memops.SOURCE_CELLS`. The two columns give 24 equations (relative error); a weak
prior (weight ``PRIOR``) pulls every unknown towards the average intensity of the measured kernel
work spread evenly over its source's cells, which decides the sources the two columns do not
exercise (the hrtimer code only hybrid polling runs). Solved with bounded linear least squares
(scipy ``lsq_linear``, intensities >= 0). The hybrid-polling column is then a prediction of the
model: its timer, sleep and shorter polling are what it executes.

    stacksim calibrate --study memops [--runtime-ms 60] [-o fit.json]
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import lsq_linear

from models.os.memops import CELLS, KEYS, SOURCE_CELLS, rates_per_s
from models.platforms import POLL_ENERGY_FIT, optane900p_e3_1230v5
from scenarios import reference
from scenarios.calibrate_poll_energy import run_mode
from scenarios.studies import StudyResult, StudyRow
from scenarios.sweeps.progress import Progress

PRIOR = 0.05
MODES = {"interrupt": "interrupt", "classic_polling": "classic_polling"}


#: the published figures (scenarios/reference/poll_vs_interrupt_energy.yaml)
REFERENCE = ("poll_vs_interrupt_energy", "memory_ops_4k_32_threads")


def table2() -> dict:
    """{mode: {key: million loads+stores per s}}, interrupt and classic polling (Table 2)."""
    return reference.values(*REFERENCE)


def source_cycles(runtime_ms: int = 60, progress=None) -> dict:
    """Cycles per second of each source at 4 KiB, 32 threads, per mode (the model's own run);
    ``progress.update()`` after each run."""
    out = {}
    for mode in ("interrupt", "classic_polling", "hybrid_polling"):
        out[mode] = run_mode(POLL_ENERGY_FIT, mode, runtime_ms=runtime_ms, threads=32)["cycles_per_s"]
        if progress is not None:
            progress.update()
    return out


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


def run_study(runtime_ms: float = 60.0, max_iterations: int | None = None, progress: bool = False):
    """``stacksim calibrate --study memops`` (``max_iterations`` does not apply: a linear problem)."""
    prog = Progress(3, enabled=progress, desc="memops")
    try:
        cyc = source_cycles(runtime_ms, prog)
    finally:
        prog.close()
    intensity = fit(cyc)
    meas = table2()
    rows = []
    for mode in ("interrupt", "classic_polling", "hybrid_polling"):
        pred = rates_per_s(intensity, cyc[mode])
        for k in KEYS + ("total",):
            m = meas.get(mode, {}).get(k)
            rows.append(StudyRow(f"{mode} {k}", None if m is None else float(m), pred[k] / 1e6, "M/s",
                                 fitted=m is not None and k != "total"))
    plat = optane900p_e3_1230v5()
    plat = plat.model_copy(update={"kernel": plat.kernel.model_copy(update={"mem_ops_per_cycle": intensity})})
    return StudyResult("memops", "models/platforms.py MEM_OPS_PER_CYCLE", intensity, {}, rows,
                       [reference.cite(*REFERENCE)], runtime_ms, 1, True, [plat])
