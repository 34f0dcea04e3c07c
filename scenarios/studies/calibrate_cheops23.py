"""Re-runnable calibration of ``cheops23-optane`` (:data:`models.platforms.CHEOPS23_FIT`) on six of
the CHEOPS'23 measurements shipped with stacksim (scenarios/data/measurements/cheops23, MIT licence),
each the point that isolates what it fits:

* SPDK at depth 1 (its latency): the P4800X's read time on this host (``ssd.read.base_ns``):
  SPDK's host path is the shortest, a few hundred cycles of user-space polling;
* SPDK at its CPU-bound depth 16 (IOPS): the core time of one doorbell MMIO write
  (``kernel.mmio_write_cycles``), the largest part of SPDK's submission;
* io_uring with SQPOLL at its CPU-bound depth 64 (IOPS): the kernel's block-device direct-IO step
  (``kernel.fs_submit_cycles``, the least certain of the IO path's estimates). The SQ thread's CPU
  sets the IOPS, and it runs the kernel's IO path alone, submission and completion: no system
  call, no user space, no sleep;
* libaio at its CPU-bound depth 8 over seven SSDs (IOPS and ``perf stat``'s instructions per IO):
  io_submit's per-iocb work (``kernel.aio_issue_cycles``: what the thread spends beyond that path,
  fio's user-space work and the system calls) and the block-device step's cycles per instruction
  (``kernel.cpi_by_layer.fs``);
* io_uring at its CPU-bound depth 8 (IOPS): io_uring_enter's own work per call
  (``kernel.io_uring_enter_cycles``), the same way;
* libaio at depth 1 (its latency): the context switch (``kernel.ctx_switch_cycles``): each IO's
  completion wakes the thread from the idle loop and switches it in on the IO's path (after C1's
  exit: libaio's thread waits outside IO wait, so the menu governor picks C1; its real exit is an
  estimate, ``models.platforms.CHEOPS23_C1_WAKE_NS``).

The rest of the platform's costs come from other hosts (the R230's kernel costs: Skylake core,
Linux 5.15). Seven observations, seven parameters: an exact fit; every other point of ``validate
--suite cheops23`` (psync, io_uring at depth 1 and 128, hipri at every depth, SQPOLL at depth 1 and
128, libaio at depth 128, SPDK at depth 128, and every CPU share, context switch, instruction and IPC
figure but libaio's saturated instructions) is a prediction.

    stacksim calibrate --study cheops23 [--runtime-ms 60] [-o fit.json]
"""

from __future__ import annotations

import numpy as np

from models.platforms import CHEOPS23_FIT, cheops23_optane
from scenarios.studies import fitting
from scenarios.studies.builtin import StudyResult, fit_parameters, fit_progress, fit_rows
from scenarios.studies.suite_cheops23 import cheops23_points
from scenarios.studies.validation import PointRunner, metric_value

#: (point label, metric) of each observation, in the order of the residuals
OBSERVATIONS = (
    ("cheops23 qd1 spdk_fio", "latency_us.mean"),
    ("cheops23 saturation spdk_fio", "iops"),
    ("cheops23 saturation aio", "iops"),
    ("cheops23 saturation aio", "instructions_per_io"),
    ("cheops23 saturation iou_s", "iops"),
    ("cheops23 saturation iou", "iops"),
    ("cheops23 qd1 aio", "latency_us.mean"),
)
FIT_BOUNDS = {
    "ssd.read.base_ns": (2_000.0, 8_000.0),
    "kernel.mmio_write_cycles": (50.0, 1_500.0),
    "kernel.fs_submit_cycles": (200.0, 4_000.0),
    "kernel.cpi_by_layer.fs": (0.25, 1.5),
    "kernel.aio_issue_cycles": (100.0, 4_000.0),
    "kernel.io_uring_enter_cycles": (0.0, 4_000.0),
    "kernel.ctx_switch_cycles": (500.0, 8_000.0),
}
UNITS = {"latency_us.mean": "us", "iops": "IO/s", "instructions_per_io": "instructions"}


def _points() -> dict:
    wanted = {label for label, _ in OBSERVATIONS}
    return {p.label: p for p in cheops23_points() if p.label in wanted}


def residuals(values: dict, runtime_ms: float) -> np.ndarray:
    """simulated / measured - 1 of each observation, with the fit ``values`` on the platform."""
    points = _points()
    runner = PointRunner(platform=None, runtime_ms=runtime_ms)
    sims: dict = {}
    out = []
    for label, metric in OBSERVATIONS:
        if label not in sims:
            sims[label] = runner.summary(points[label], dict(values))
        out.append(metric_value(sims[label], metric) / points[label].metrics[metric] - 1.0)
    return np.array(out)


def calibrate(runtime_ms: float = 60.0, *, max_iterations: int | None = None, progress=None):
    """Fit :data:`FIT_BOUNDS`' parameters; returns the platform's fit dict and the fit."""
    names = list(FIT_BOUNDS)
    x0 = [CHEOPS23_FIT[n] for n in names]
    res = fitting.fit(
        names,
        x0,
        [FIT_BOUNDS[n] for n in names],
        lambda v: residuals(v, runtime_ms),
        progress=progress,
        max_iterations=max_iterations,
        profile=False,  # a profile would cost several times the fit: the linear intervals, cut at the bounds
    )
    fit = {n: float(f"{v:.4g}") for n, v in res.values.items()}
    return fit, res


def run_study(runtime_ms: float = 60.0, max_iterations: int | None = None, progress: bool = False):
    """``stacksim calibrate --study cheops23``."""
    with fit_progress(progress, len({label for label, _ in OBSERVATIONS})) as prog:
        fit, res = calibrate(runtime_ms, max_iterations=max_iterations, progress=prog)
    points = _points()
    labels = [f"{label.removeprefix('cheops23 ')} {metric}" for label, metric in OBSERVATIONS]
    measured = [points[label].metrics[metric] for label, metric in OBSERVATIONS]
    return StudyResult(
        "cheops23",
        "models/platforms.py CHEOPS23_FIT",
        fit,
        fit_parameters(res),
        fit_rows(labels, measured, res.residuals, [UNITS[m] for _, m in OBSERVATIONS]),
        [
            "Ren and Trivedi, Performance Characterization of Modern Storage Stacks: POSIX I/O, libaio, SPDK,"
            " and io_uring, CHEOPS'23, doi:10.1145/3578353.3589545 (artifact, MIT licence)"
        ],
        runtime_ms,
        res.evaluations,
        res.converged,
        [cheops23_optane(fit)],
    )
