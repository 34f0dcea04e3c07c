"""Re-runnable power calibration of the ``epyc9454p-16xpm1743`` platform.

Fits the physical power parameters (per-state core power, uncore, core leakage and dynamic power,
the "others" terms, SSD idle and active power) by least squares (scipy) on the **simulator's own
outputs** against ``sandman_polling_server.json``:

- table 1: CPU / SSD / others / system power of the idle system, light load (< 5% of the maximum
  IOPS) and peak load;
- table 2: CPU and system power with the 48 reserved cores polling at P0 (3.65 GHz), polling at
  PN (400 MHz), and every core in C1 or in the deep state.

Each measured configuration is a short run of the server model (:func:`row_configs`):

========== =============================================================================
idle, C1   policy ``idle`` (every logical core in C1), no load
deep       policy ``idle`` in the deep state (C2), no load
P0         ``spdk-static``, no load (48 reactors polling at 3.65 GHz; the rest idle in C1)
PN         ``spdk-static`` pinned at 0.4 GHz, no load
light      ``spdk-static`` at 320K IOPS (the sweep step under 5% of 10240K)
peak       ``spdk-static`` at 10240K IOPS (the sweep's top step)
========== =============================================================================

The split between per-core C1 power and uncore power, and between uncore and deep-state core
power, is not determined by these totals; weak priors (1% weight) hold core leakage and deep-state
core power at the EPYC preset's estimates. Exit latencies are inputs (table 2 measures them
directly); :func:`exit_latency_us` re-measures them through the model's wake-up paths.

    python -m scenarios.server.calibrate_power [--reference PATH] [--quick]

prints the fitted dict to paste into ``models/platforms_server.py`` (SERVER_POWER_FIT) and the
residuals.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
from scipy.optimize import least_squares

from models.platforms_server import SERVER_POWER_FIT, epyc9454p_16xpm1743_server
from scenarios.server.config import ServerConfig, ServerRunConfig
from scenarios.server.run import simulate_server
from scenarios.server.workloads import StableWorkload

REFERENCE = Path(__file__).resolve().parents[3] / "shared" / "reference" / "calibration" / "sandman_polling_server.json"

#: parameter -> (lower, upper) bounds (physical ranges)
FIT_BOUNDS = {
    "cpu.C1.power_w": (0.01, 3.0),
    "cpu.C2.power_w": (0.0, 1.0),
    "cpu.uncore_active_w": (10.0, 200.0),
    "cpu.uncore_idle_w": (5.0, 100.0),
    "cpu.core_leakage_w": (0.2, 8.0),
    "cpu.core_dynamic_w": (0.2, 12.0),
    "power.platform_base_w": (0.0, 300.0),
    "power.platform_cpu_coupling": (0.0, 3.0),
    "others.c0_core_w": (0.0, 10.0),
    "others.c0_core_ghz_w": (0.0, 10.0),
    "ssd.idle_w": (1.0, 10.0),
    "ssd.active_read_w": (5.0, 200.0),
}
#: weak priors (value, relative weight) for directions the totals leave free
PRIORS = {"cpu.core_leakage_w": (1.5, 0.01), "cpu.C2.power_w": (0.12, 0.01)}


def row_configs(fit: dict, quick: bool = False) -> dict[str, ServerRunConfig]:
    """The server configuration of each measured row (see the module doc)."""
    plat = epyc9454p_16xpm1743_server(fit)
    dur = 0.002 if quick else 0.003
    warm = 0.001

    def cfg(policy: str, rate: float, params: dict | None = None, platform=plat) -> ServerRunConfig:
        return ServerRunConfig(
            name=f"calib-{policy}", platform=platform, server=ServerConfig(policy=policy), policy=params or {},
            workload=StableWorkload(rate_iops=rate, duration_s=dur, warmup_s=warm), seed=11,
        )

    deep = plat.model_copy(update={"os_idle_cstate": "C2"})
    return {
        "idle": cfg("idle", 1.0, {"cstate": "C1"}),
        "deep": cfg("idle", 1.0, {"cstate": "C2"}, deep),
        "P0": cfg("spdk-static", 1.0),
        "PN": cfg("spdk-static", 1.0, {"freq_ghz": 0.4}),
        "light": cfg("spdk-static", 320_000.0),
        "peak": cfg("spdk-static", 10_240_000.0),
    }


def targets(reference: Path = REFERENCE) -> dict:
    """Measured rows: {row: {quantity: W}} with quantities cpu, ssd, others, system."""
    m = json.loads(Path(reference).read_text())["measured"]
    t1, t2 = m["table1_power_w"], m["table2_cpu_states_48_polling_cores"]
    return {
        "idle": {k: t1["system_idle"][k] for k in ("cpu", "ssd", "others", "system")},
        "light": {k: t1["light_load_lt5pct_max_iops"][k] for k in ("cpu", "ssd", "others", "system")},
        "peak": {k: t1["peak_load"][k] for k in ("cpu", "ssd", "others", "system")},
        "P0": {"cpu": t2["P0_3.65GHz"]["cpu_w"], "system": t2["P0_3.65GHz"]["system_w"]},
        "PN": {"cpu": t2["PN_400MHz"]["cpu_w"], "system": t2["PN_400MHz"]["system_w"]},
        "C1": {"cpu": t2["C1_shallow"]["cpu_w"], "system": t2["C1_shallow"]["system_w"]},
        "deep": {"cpu": t2["CN_deep"]["cpu_w"], "system": t2["CN_deep"]["system_w"]},
    }


def exit_targets(reference: Path = REFERENCE) -> dict:
    t2 = json.loads(Path(reference).read_text())["measured"]["table2_cpu_states_48_polling_cores"]
    return {"PN": t2["PN_400MHz"]["exit_latency_us"], "C1": t2["C1_shallow"]["exit_latency_us"],
            "deep": t2["CN_deep"]["exit_latency_us"]}


def model_rows(fit: dict, quick: bool = False) -> dict:
    """Power breakdown of every row, from the model: {row: {cpu, ssd, others, system}}."""
    out = {}
    for row, cfg in row_configs(fit, quick).items():
        pw = simulate_server(cfg)["summary"]["power_w"]
        out[row] = {"cpu": pw["cpu"], "ssd": pw["ssd"], "others": pw["others"], "system": pw["system"]}
    out["C1"] = out["idle"]  # table 2's C1 row is the idle system (every core in C1)
    return out


def residuals_of(rows: dict, tgt: dict) -> tuple[list[str], np.ndarray]:
    labels, res = [], []
    for row, meas in tgt.items():
        for q, v in meas.items():
            labels.append(f"{row} {q}")
            res.append(rows[row][q] / v - 1.0)
    return labels, np.array(res)


def _residuals(x, names, tgt, quick):
    fit = dict(SERVER_POWER_FIT)
    fit.update(dict(zip(names, x)))
    _, res = residuals_of(model_rows(fit, quick), tgt)
    prior = [w * (fit[k] / v - 1.0) for k, (v, w) in PRIORS.items()]
    return np.concatenate([res, prior])


def calibrate(reference: Path = REFERENCE, quick: bool = False) -> tuple[dict, list[str], np.ndarray]:
    tgt = targets(reference)
    names = list(FIT_BOUNDS)
    x0 = [min(max(SERVER_POWER_FIT[n], FIT_BOUNDS[n][0]), FIT_BOUNDS[n][1]) for n in names]
    lo = [FIT_BOUNDS[n][0] for n in names]
    hi = [FIT_BOUNDS[n][1] for n in names]
    sol = least_squares(_residuals, x0, bounds=(lo, hi), diff_step=1e-3, args=(names, tgt, quick), xtol=1e-8, ftol=1e-8)
    fit = dict(SERVER_POWER_FIT)
    fit.update({n: float(round(v, 4)) for n, v in zip(names, sol.x)})
    labels, res = residuals_of(model_rows(fit, quick), tgt)
    return fit, labels, res


def exit_latency_us(state: str, fit: dict | None = None) -> float:
    """Time back to full performance (us) from ``state`` ("C1", "deep", "PN"), measured through the
    model: a thread posted to a core sleeping in C1 (SANDMAN's monitor/wait) or in the deep state
    (kernel sleep) until it is installed and polling; for PN, a core at 400 MHz asked for P0
    (``PhysicalCore.request_freq``) until it runs at 3.65 GHz."""
    from scenarios.server.model import Server

    plat = epyc9454p_16xpm1743_server(fit)
    wl = StableWorkload(rate_iops=1.0, duration_s=0.01, warmup_s=0.0)
    if state == "PN":
        cfg = ServerRunConfig(platform=plat, server=ServerConfig(policy="spdk-static"), policy={"freq_ghz": 0.4}, workload=wl)
        srv = Server(cfg)
        srv.engine.run(1_000.0)
        core = srv.reactors[0].pcore
        landed = []
        core.listeners.append(lambda ghz: landed.append((srv.engine.now, ghz)))
        t0 = srv.engine.now
        srv.request_freq(core.index, srv.ccfg.top_freq_ghz)
        srv.engine.run(t0 + 5e6)
        t_full = next(t for t, ghz in landed if ghz == srv.ccfg.top_freq_ghz)
        return (t_full - t0) / 1e3
    if state == "C1":
        params, plat2 = {"wakeup": "mwait"}, plat
    elif state == "deep":
        params, plat2 = {"wakeup": "interrupt"}, plat.model_copy(update={"os_idle_cstate": "C2"})
    else:
        raise ValueError(f"unknown state {state}")
    cfg = ServerRunConfig(platform=plat2, server=ServerConfig(policy="sandman"), policy=params, workload=wl)
    srv = Server(cfg)
    srv.engine.run(1_000.0)
    th = srv.threads[0]
    dest = srv.reactors[1]
    srv.move(th, dest)
    srv.engine.run(srv.engine.now + 5e6)
    t_post, t_inst, _ = srv.wake_log[-1]
    return (t_inst - t_post) / 1e3


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--reference", type=Path, default=REFERENCE)
    ap.add_argument("--quick", action="store_true", help="shorter runs per row (faster, slightly noisier peak row)")
    args = ap.parse_args()
    fit, labels, res = calibrate(args.reference, args.quick)
    print("SERVER_POWER_FIT =", json.dumps(fit, indent=4))
    for lab, r in zip(labels, res):
        print(f"  {lab:18s} {100 * r:+6.2f} %")
    for st, meas in exit_targets(args.reference).items():
        print(f"  exit latency {st:5s} model {exit_latency_us(st, fit):7.1f} us   measured {meas} us")


if __name__ == "__main__":
    main()
