"""Quick parallel stable sweeps of the server scenarios, in memory (one process per point; every
point is a pure function of its configuration and seed, so the executor never changes a result).

    python -m scenarios.studies.server_sweep --policies spdk-static,sandman --rates 10000,160000 --jobs 2

:func:`stable_sweep` returns one row per (policy, rate). For stored, resumable, Dask-capable sweeps
use the generic runner, whose sweep files take a server scenario as base:
``stacksim sweep server_stable`` and ``stacksim sweep server_burst_ablation``
(``scenarios/data/sweeps/*.yaml``; docs/server.md, "Sweeps").
"""

from __future__ import annotations

import argparse
import json
import sys
from concurrent.futures import ProcessPoolExecutor

from scenarios.config.server import resolve_server
from scenarios.config.server_workloads import STABLE_RATES
from scenarios.run.simulate import simulate
from simcore.errors import ConfigError, error_line
from simcore.outfile import check_output, write_text


def run_point(point: tuple[str, dict, int]) -> dict:
    """(scenario, --set dict, seed) -> one flat row (summary scalars + the point's keys)."""
    scenario, sets, seed = point
    r = simulate(resolve_server(scenario, sets, seed))
    s = r["summary"]
    row = {
        "scenario": scenario,
        "seed": seed,
        **sets,
        "iops": s["iops"],
        "power_system_w": s["power_w"]["system"],
        "power_cpu_w": s["power_w"]["cpu"],
        "energy_j": s["energy_j"],
        "thread_migrations": s["thread_migrations"],
        "active_cores_mean": s["active_cores_mean"],
        "wall_s": r["sim"]["wall_s"],
    }
    row.update({f"latency_{k}_us": v for k, v in s["latency_us"].items()})
    return row


def stable_sweep(
    policies, rates=STABLE_RATES, *, seed: int = 1, jobs: int = 1, extra: dict | None = None
) -> list[dict]:
    """SANDMAN's stable sweep for each policy (rows in (policy, rate) order)."""
    points = [
        ("server-stable", {"server.policy": p, "workload.rate_iops": str(r), **(extra or {})}, seed)
        for p in policies
        for r in rates
    ]
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as ex:
            return list(ex.map(run_point, points))
    return [run_point(p) for p in points]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--policies", default="spdk-static,sandman")
    ap.add_argument("--rates", default=",".join(str(r) for r in STABLE_RATES))
    ap.add_argument("--duration-s", default=None, help="workload.duration_s of every point")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--out", help="write the rows as JSON")
    args = ap.parse_args()
    if args.out:
        check_output(args.out, "--out")
    extra = {"workload.duration_s": args.duration_s} if args.duration_s else {}
    rows = stable_sweep(args.policies.split(","), [int(x) for x in args.rates.split(",")], jobs=args.jobs, extra=extra)
    for r in rows:
        print(
            f"{r['server.policy']:12s} {int(float(r['workload.rate_iops'])):>9,d} IOPS"
            f"  p99 {r['latency_p99_us']:8.1f} us  system {r['power_system_w']:6.1f} W"
            f"  cores {r['active_cores_mean']:5.1f}  migrations {r['thread_migrations']}"
        )
    if args.out:
        write_text(args.out, json.dumps(rows, indent=1) + "\n", what="--out")


if __name__ == "__main__":
    try:
        main()
    except ConfigError as err:
        print(error_line(err), file=sys.stderr)
        sys.exit(2)
