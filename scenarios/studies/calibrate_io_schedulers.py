"""Re-runnable calibration of the ``optane-p4801x-e3-1230`` platform.

Fits the P4801X read and write service times, the cost of a switch between a task and a kernel
thread (``kthread_switch_cycles``: with a scheduler, io_uring's unplugged QD1 submissions are
dispatched by the CPU's kblockd worker, models.os.block.kblockd) and one factor on the schedulers'
documented per-request costs (``iosched_cycles_scale``: Documentation/block/bfq-iosched.rst
measures 0.7 and 1.9 us for mq-deadline and bfq on a 2.4 GHz laptop core; kyber's placeholder
sits between; the factor keeps their ratios) by least squares on the simulator's own outputs,
against the io_uring default-settings QD1 4 KiB median latencies of Whitaker et al. (HotStorage
2023, Table 1: four schedulers x read/write = 8 observations, 4 parameters; package data
``scenarios/data/reference/io_schedulers_ull.yaml``). The other host kernel costs are not refitted.
Only the default configuration is fitted: IOPOLL + SQPOLL is a prediction
(``stacksim sweep io_schedulers_iopoll_sqpoll``).

    stacksim calibrate --study io-schedulers [--runtime-ms 100] [-o fit.json]
"""

from __future__ import annotations

import numpy as np

from models.platforms import IO_SCHED_FIT, optane_p4801x_e3_1230
from scenarios.config.host import RunConfig
from scenarios.data import reference
from scenarios.inputs.fio.parser import job_from_options
from scenarios.run.simulate import simulate
from scenarios.studies import fitting
from scenarios.studies.builtin import StudyResult, fit_parameters, fit_progress, fit_rows

#: the published figures (scenarios/data/reference/io_schedulers_ull.yaml)
REFERENCE = ("io_schedulers_ull", "median_latency_4k_qd1")
SCHEDULERS = ("none", "mq-deadline", "kyber", "bfq")
FIT_BOUNDS = {
    "ssd.read.base_ns": (3_000.0, 9_000.0),
    "ssd.write.base_ns": (3_000.0, 15_000.0),
    "kernel.iosched_cycles_scale": (0.2, 5.0),
}


def targets() -> dict:
    """{scheduler: {read, write}} median latency (us) at QD1, 4 KiB, io_uring (Table 1)."""
    return reference.values(*REFERENCE)


def point_config(
    fit: dict, scheduler: str, op: str, runtime_ms: int = 100, seed: int = 7, extra: dict | None = None
) -> RunConfig:
    """io_uring, iodepth 1, 4 KiB random ``op`` with ``scheduler`` on the platform fitted as ``fit``."""
    plat = optane_p4801x_e3_1230(fit)
    queue = plat.queue.model_copy(update={"scheduler": scheduler, **(extra or {}).get("queue", {})})
    opts = {
        "rw": f"rand{op}",
        "bs": "4k",
        "ioengine": "io_uring",
        "iodepth": "1",
        "direct": "1",
        "runtime": f"{int(runtime_ms)}ms",
        "ramp_time": "10ms",
        "time_based": "1",
    }
    opts.update((extra or {}).get("fio", {}))
    job = job_from_options(opts, name=f"{scheduler}-{op}")
    return RunConfig(name=f"calib-{scheduler}-{op}", platform=plat, queue=queue, jobs=(job,), seed=seed)


def run_point(
    fit: dict, scheduler: str, op: str, runtime_ms: int = 100, seed: int = 7, extra: dict | None = None
) -> dict:
    """The summary of :func:`point_config`'s run."""
    return simulate(point_config(fit, scheduler, op, runtime_ms, seed, extra))["summary"]


def exact_p50_us(fit: dict, scheduler: str, op: str, runtime_ms: int) -> float:
    """The median latency (us) of :func:`run_point`'s measured IOs, exactly (from the per-IO records:
    the summary's percentiles come from fio's histogram, whose 1/128-wide buckets would make the
    fit's finite differences vanish)."""
    rec = simulate(point_config(fit, scheduler, op, runtime_ms), records=True).records
    return float(np.median(rec["t_complete_ns"] - rec["t_submit_ns"])) / 1e3


def residuals(values: dict, tgt: dict, runtime_ms: int) -> np.ndarray:
    fit = dict(IO_SCHED_FIT)
    fit.update(values)
    out = []
    for sched in SCHEDULERS:
        for op in ("read", "write"):
            out.append(exact_p50_us(fit, sched, op, runtime_ms) / tgt[sched][op] - 1.0)
    return np.array(out)


def calibrate(runtime_ms: int = 100, *, max_iterations: int | None = None, progress=None):
    """Fit :data:`FIT_BOUNDS`' parameters; returns the fit dict and the fit."""
    tgt = targets()
    names = list(FIT_BOUNDS)
    x0 = [IO_SCHED_FIT[n] for n in names]
    res = fitting.fit(
        names,
        x0,
        [FIT_BOUNDS[n] for n in names],
        lambda v: residuals(v, tgt, runtime_ms),
        progress=progress,
        max_iterations=max_iterations,
        profile=False,  # a profile would cost several times the fit: the linear intervals, cut at the bounds
    )
    fit = {n: float(round(v, 1 if abs(v) >= 100 else 3)) for n, v in res.values.items()}
    return fit, res


def run_study(runtime_ms: float = 100.0, max_iterations: int | None = None, progress: bool = False):
    """``stacksim calibrate --study io-schedulers``."""
    with fit_progress(progress, 2 * len(SCHEDULERS)) as prog:
        fit, res = calibrate(runtime_ms, max_iterations=max_iterations, progress=prog)
    tgt = targets()
    labels = [f"{s} {op} median latency" for s in SCHEDULERS for op in ("read", "write")]
    measured = [tgt[s][op] for s in SCHEDULERS for op in ("read", "write")]
    return StudyResult(
        "io-schedulers",
        "models/platforms.py IO_SCHED_FIT",
        fit,
        fit_parameters(res),
        fit_rows(labels, measured, res.residuals, "us"),
        [reference.cite(*REFERENCE)],
        runtime_ms,
        res.evaluations,
        res.converged,
        [optane_p4801x_e3_1230(fit)],
    )
