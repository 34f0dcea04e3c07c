"""Re-runnable calibration of the ``optane-p4801x-e3-1230`` platform.

Fits the P4801X read and write service times and the per-request CPU cost of mq-deadline, kyber
and bfq (insert + dispatch + completion cycles) by least squares on the simulator's own outputs,
against the io_uring default-settings QD1 4 KiB median latencies of io_schedulers_ull.json (table
1: four schedulers x read/write = 8 observations, 5 parameters). Host kernel costs are not refitted.

    python -m scenarios.calibrate_io_schedulers [--runtime-ms 100]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from models.platforms import IO_SCHED_FIT, optane_p4801x_e3_1230
from scenarios import fitting
from scenarios.reference import reference_dir
from scenarios.fio.parser import job_from_options
from scenarios.scenario import RunConfig
from stacksim.run import simulate

REFERENCE = reference_dir() / "calibration" / "io_schedulers_ull.json"
SCHEDULERS = ("none", "mq-deadline", "kyber", "bfq")
FIT_BOUNDS = {
    "ssd.read.base_ns": (3_000.0, 9_000.0),
    "ssd.write.base_ns": (3_000.0, 15_000.0),
    "kernel.iosched_cycles.mq-deadline": (0.0, 20_000.0),
    "kernel.iosched_cycles.kyber": (0.0, 20_000.0),
    "kernel.iosched_cycles.bfq": (0.0, 40_000.0),
}


def targets(reference: Path = REFERENCE) -> dict:
    return json.loads(Path(reference).read_text())["measured"]["table1_median_latency_us_4k_qd1_io_uring_defaults"]


def run_point(fit: dict, scheduler: str, op: str, runtime_ms: int = 100, seed: int = 7, extra: dict | None = None) -> dict:
    """io_uring, iodepth 1, 4 KiB random ``op`` with ``scheduler`` on the platform fitted as ``fit``."""
    plat = optane_p4801x_e3_1230(fit)
    queue = plat.queue.model_copy(update={"scheduler": scheduler, **(extra or {}).get("queue", {})})
    opts = {"rw": f"rand{op}", "bs": "4k", "ioengine": "io_uring", "iodepth": "1", "direct": "1",
            "runtime": f"{int(runtime_ms)}ms", "ramp_time": "10ms", "time_based": "1"}
    opts.update((extra or {}).get("fio", {}))
    job = job_from_options(opts, name=f"{scheduler}-{op}")
    return simulate(RunConfig(name=f"calib-{scheduler}-{op}", platform=plat, queue=queue, jobs=(job,), seed=seed))["summary"]


def residuals(values: dict, tgt: dict, runtime_ms: int) -> np.ndarray:
    fit = dict(IO_SCHED_FIT)
    fit.update(values)
    out = []
    for sched in SCHEDULERS:
        for op in ("read", "write"):
            s = run_point(fit, sched, op, runtime_ms)
            out.append(s["latency_us"]["p50"] / tgt[sched][op] - 1.0)
    return np.array(out)


def calibrate(reference: Path = REFERENCE, runtime_ms: int = 100):
    tgt = targets(reference)
    names = list(FIT_BOUNDS)
    x0 = [IO_SCHED_FIT[n] for n in names]
    res = fitting.fit(names, x0, [FIT_BOUNDS[n] for n in names], lambda v: residuals(v, tgt, runtime_ms))
    fit = {n: float(round(v, 1)) for n, v in res.values.items()}
    return fit, res


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reference", type=Path, default=REFERENCE)
    ap.add_argument("--runtime-ms", type=int, default=100)
    args = ap.parse_args()
    fit, res = calibrate(args.reference, args.runtime_ms)
    fitting.print_fit("IO_SCHED_FIT", fit, res, [f"{s} {op}" for s in SCHEDULERS for op in ("read", "write")])


if __name__ == "__main__":
    main()
