"""How much of a job ``validate --latencies`` simulates: what the compared distribution needs, not
the measured run's length. fio's JSON of a 150 s run at 11K IOPS is 1.7M IOs; its p99.99 is
resolved by 100,000 (:data:`TAIL_IOS` beyond it), and the model warms up in milliseconds.

The run is sized from the measurement: IOs needed = ``TAIL_IOS / (1 - p/100)`` for the highest
percentile compared (at least :data:`MIN_IOS`); a closed-loop job completes about
``threads x iodepth`` IOs per measured mean latency (the median for a table without a mean), so the
runtime is that many IOs' worth, times :data:`RUNTIME_MARGIN` for a model faster or slower than the
measurement. The job's ramp is cut to :data:`RAMP_MS` (adaptive hybrid polling's 100 ms statistics
window and then some: ``scenarios/studies/validation.py``'s rule). A shorter job, or a runtime or
ramp given with ``--runtime-ms``/``--ramp-ms``/``--set``, runs as given.
"""

from __future__ import annotations

import math

from scenarios.config.host import resolve
from scenarios.inputs.fio.units import ms_time
from scenarios.studies.latency_compare import FIO_PERCENTILES, MeasuredLatencies

__all__ = ["TAIL_IOS", "MIN_IOS", "RUNTIME_MARGIN", "RAMP_MS", "ios_needed", "sized_sets"]

#: simulated IOs beyond the highest percentile compared
TAIL_IOS = 10
#: the fewest simulated IOs (the KS distance and the low percentiles)
MIN_IOS = 10_000
#: the simulated runtime's margin over the IOs' worth at the measured latency
RUNTIME_MARGIN = 1.5
#: the ramp kept of a longer one (ms)
RAMP_MS = 110.0


def _percentiles(m: MeasuredLatencies) -> list[float]:
    if m.samples_ns is None:
        return [p for p, _ in m.table]
    return [p for p in FIO_PERCENTILES if m.n * (1.0 - p / 100.0) >= 1.0]


def ios_needed(m: MeasuredLatencies) -> int:
    """Simulated IOs that resolve every percentile compared (``TAIL_IOS`` beyond the highest)."""
    top = min(max(_percentiles(m), default=50.0), 99.99)
    # rounded first: 10 / (1 - 0.9995) is 20,000.0000000022 in floating point, not 20,001 IOs
    return max(MIN_IOS, math.ceil(round(TAIL_IOS / (1.0 - top / 100.0), 6)))


def _typical_ns(m: MeasuredLatencies) -> float:
    if m.mean_ns:
        return m.mean_ns
    if m.samples_ns is not None:
        return float(sum(m.samples_ns) / len(m.samples_ns))
    return min(m.table, key=lambda pn: abs(pn[0] - 50.0))[1]


def sized_sets(m: MeasuredLatencies, job_file: str, platform: str | None, sets: dict, seed: int) -> tuple[dict, str]:
    """``sets`` with the runtime and ramp the comparison needs, and a line saying what is simulated."""
    cfg = resolve(job_file=job_file, platform=platform, sets=dict(sets), seed=seed)
    runtimes = [j.runtime_ns for j in cfg.jobs if j.runtime_ns]
    ramp_ns = max((j.ramp_time_ns for j in cfg.jobs), default=0)
    out, said = dict(sets), []
    need = ios_needed(m)
    slots = sum(j.numjobs * j.iodepth for j in cfg.jobs)
    run_ns = need * _typical_ns(m) / max(slots, 1) * RUNTIME_MARGIN
    if "runtime" not in sets and runtimes and run_ns < max(runtimes):
        run_ms = math.ceil(run_ns / 1e6)
        out["runtime"] = ms_time(run_ms, option="runtime")
        said.append(f"{run_ms:,} ms of the job's {max(runtimes) / 1e9:g} s")
    if "ramp_time" not in sets and ramp_ns > RAMP_MS * 1e6:
        out["ramp_time"] = ms_time(RAMP_MS, option="ramp_time")
        said.append(f"a ramp of {RAMP_MS:g} ms of its {ramp_ns / 1e9:g} s")
    if not said:
        return out, ""
    # what the run simulates is counted after it (the first line of the comparison): the runtime
    # is the needed IOs' worth at the measured latency with the margin, the model's own latency decides
    return out, (
        f"simulated {' after '.join(said)}: {need:,} IOs needed ({TAIL_IOS} beyond the highest percentile"
        f" compared), run for {RUNTIME_MARGIN:g}x their time at the measured latency"
        " (--runtime-ms and --ramp-ms choose)"
    )
