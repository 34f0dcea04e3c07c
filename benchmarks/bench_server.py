"""Storage-server speed benchmark (issue 6): run by hand, not in the test suite.

    python benchmarks/bench_server.py [--policies sandman,spdk-static] [--burst-scale 1.0]
                                      [--stable-s 0.2] [--only burst|stable] [--jobs N] [--profile]

Cases (the issue's targets, one core each):

- **burst cycle**: ``server-burst`` at ``time_scale=1`` (10 s at 5% of one PM1743's maximum, then
  1 s at its maximum: 11 simulated s, ~3.75 million IOs); target < 3 min wall;
- **top stable step**: ``server-stable`` at 10240K IOPS for 0.2 simulated s (~2 million IOs);
  target < 2 min wall.

Reports wall time (build + run + summary), simulated IOs, engine events per IO and IOs per wall
second. ``--jobs N`` runs the cases in N processes (each case still uses one core).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time
from concurrent.futures import ProcessPoolExecutor

from scenarios.config.server import resolve_server
from scenarios.run.simulate import simulate

TARGET_S = {"burst": 180.0, "stable": 120.0}


def run_case(args: tuple[str, str, dict]) -> dict:
    kind, policy, sets = args
    scen = "server-burst" if kind == "burst" else "server-stable"
    cfg = resolve_server(scen, {"server.policy": policy, **sets})
    t0 = time.perf_counter()
    r = simulate(cfg)
    wall = time.perf_counter() - t0
    s = r["summary"]
    return {
        "case": kind,
        "policy": policy,
        "wall_s": wall,
        "ios": s["requests"]["offered"],
        "events_per_io": r["sim"]["events_per_io"],
        "simulated_s": r["sim"]["simulated_s"],
        "iops": s["iops"],
        "p99_us": s["latency_us"]["p99"],
        "system_w": s["power_w"]["system"],
        "active_cores": s["active_cores_mean"],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--policies", default="sandman", help="comma-separated policies (default: sandman)")
    ap.add_argument("--burst-scale", type=float, default=1.0, help="workload.time_scale of the burst case")
    ap.add_argument("--stable-s", type=float, default=0.2, help="simulated seconds of the 10240K step")
    ap.add_argument("--only", choices=["burst", "stable"], help="run one case")
    ap.add_argument("--jobs", type=int, default=1, help="processes")
    ap.add_argument("--profile", action="store_true", help="profile the first case instead")
    args = ap.parse_args()
    cases = []
    for pol in args.policies.split(","):
        if args.only in (None, "burst"):
            cases.append(("burst", pol, {"workload.time_scale": str(args.burst_scale)}))
        if args.only in (None, "stable"):
            cases.append(
                (
                    "stable",
                    pol,
                    {
                        "workload.rate_iops": "10240000",
                        "workload.duration_s": str(args.stable_s),
                        "workload.warmup_s": str(min(0.02, args.stable_s / 10)),
                    },
                )
            )
    if args.profile:
        cProfile.runctx("run_case(cases[0])", globals(), locals(), "/tmp/stacksim_server.prof")
        pstats.Stats("/tmp/stacksim_server.prof").sort_stats("tottime").print_stats(30)
        return
    if args.jobs > 1:
        with ProcessPoolExecutor(args.jobs) as ex:
            rows = list(ex.map(run_case, cases))
    else:
        rows = [run_case(c) for c in cases]
    print(
        f"{'case':7s} {'policy':12s} {'sim s':>6s} {'IOs':>10s} {'wall s':>8s} {'IOs/wall s':>11s} {'ev/IO':>6s}"
        f" {'target':>7s} {'p99 us':>8s} {'sys W':>6s} {'cores':>6s}"
    )
    for r in rows:
        tgt = TARGET_S[r["case"]]
        ok = "ok" if r["wall_s"] < tgt or (r["case"] == "burst" and args.burst_scale != 1.0) else "SLOW"
        print(
            f"{r['case']:7s} {r['policy']:12s} {r['simulated_s']:6.2f} {r['ios']:10,d} {r['wall_s']:8.1f}"
            f" {r['ios'] / r['wall_s']:11,.0f} {r['events_per_io']:6.2f} {ok + ' <' + str(int(tgt)):>7s}"
            f" {r['p99_us']:8.1f} {r['system_w']:6.0f} {r['active_cores']:6.1f}"
        )


if __name__ == "__main__":
    main()
