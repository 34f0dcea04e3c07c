"""Tails beside N scans (issue 44 item 5): the latency tenant of the built-in ``tenants`` scenario
(4 KiB psync random reads at depth 1) beside N throughput tenants (4 KiB io_uring random reads at
depth 32 each), all on CPUs 0-1 and one filled 980 PRO of the ICPE'24 host, per IO scheduler.

For each scheduler and N, one run; the reader's mean, p50, p90, p99 and p99.9 as fio reports them
(its ``clat`` percentiles: psync's clat is its lat), its IOPS, its longest wait for a CPU (``stall_ms``:
from its read's completion, which wakes it, to its return from ``pread``, over the measured reads),
its longest read (``max_us``), its longest
stretch of the measured window in which none of its reads completed (``gap_ms``) and the scans'
IOPS. ``docs/scaling.md`` ("Tails beside N scans") and
``tools/tenant_tails_figure.py`` (``docs/figures/scaling-tenant-tails.svg``) show them. A prediction:
no measured points of this mix exist in the package.
"""

from __future__ import annotations

import numpy as np

from scenarios.config.host import resolve
from scenarios.run.simulate import simulate

__all__ = ["SCANS", "SCHEDULERS", "tenant_tails", "tail_row"]

#: the numbers of throughput tenants (``job.tput.numjobs``)
SCANS = (0, 1, 2, 4, 8)
#: the IO schedulers compared
SCHEDULERS = ("none", "mq-deadline")
_PCTS = {"p50": "50.000000", "p90": "90.000000", "p99": "99.000000", "p99.9": "99.900000"}


def tail_row(scheduler: str, scans: int, sets: dict | None = None, seed: int = 44) -> dict:
    """One run of the mix: the reader's latency statistics (us), IOPS and longest stall (ms), and
    the scans' IOPS."""
    run_sets = {"job.tput.numjobs": str(scans), "queue.scheduler": scheduler, **(sets or {})}
    cfg = resolve(scenario="tenants", sets=run_sets, seed=seed)
    start_ns = float(cfg.jobs[0].ramp_time_ns)  # the measured window opens after the ramp
    out = simulate(cfg, records=True)
    jobs = {j["jobname"]: j for j in out["jobs"]}
    lat = jobs["lat"]["read"]
    pct = lat["clat_ns"]["percentile"]
    rec = out.records
    mine = rec[rec["job"] == 0]
    # woken by its read's completion (reaped), running again at t_complete: its wait for a CPU
    stall_ns = float(np.max(mine["t_complete_ns"] - mine["t_reaped_ns"])) if len(mine) else float("nan")
    # and the longest stretch of the window in which none of its reads completed (from the window's
    # start to its first completion, then between completions)
    done = np.sort(mine["t_complete_ns"])
    gaps = np.diff(np.concatenate(([start_ns], done))) if len(mine) else np.array([np.nan])
    row = {
        "scheduler": scheduler,
        "scans": scans,
        "mean_us": lat["lat_ns"]["mean"] / 1e3,
        **{f"{k}_us": float(pct[v]) / 1e3 for k, v in _PCTS.items()},
        "iops": float(lat["iops"]),
        "max_us": lat["lat_ns"]["max"] / 1e3,
        "stall_ms": stall_ns / 1e6,
        "gap_ms": float(np.max(gaps)) / 1e6,
        "scan_iops": float(jobs["tput"]["read"]["iops"]) if "tput" in jobs else 0.0,
    }
    return row


def tenant_tails(
    scans: tuple[int, ...] = SCANS,
    schedulers: tuple[str, ...] = SCHEDULERS,
    sets: dict | None = None,
    seed: int = 44,
) -> list[dict]:
    """The rows of :func:`tail_row` for every scheduler and number of scans."""
    return [tail_row(s, n, sets, seed) for s in schedulers for n in scans]


def markdown(rows: list[dict]) -> str:
    """The table docs/scaling.md quotes."""
    lines = [
        "| scheduler | scans | `lat` mean | p50 | p99 | p99.9 | max | `lat` IOPS | longest gap | scans' IOPS |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['scheduler']} | {r['scans']} | {r['mean_us']:.0f} us | {r['p50_us']:.0f} us | {r['p99_us']:.0f} us |"
            f" {r['p99.9_us']:.0f} us | {r['max_us']:.0f} us | {r['iops']:,.0f} | {r['gap_ms']:.2f} ms |"
            f" {r['scan_iops']:,.0f} |"
        )
    return "\n".join(lines)
