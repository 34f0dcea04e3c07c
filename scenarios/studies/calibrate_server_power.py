"""Re-runnable power calibration of the ``epyc9454p-16xpm1743`` platform.

Fits the physical power parameters (per-state core power, uncore, core leakage and dynamic power,
the "others" terms, SSD idle and active power) by least squares (scipy) on the **simulator's own
outputs** against Zhou et al. (SANDMAN, SOSP 2025; package data
``scenarios/data/reference/sandman_polling_server.yaml``):

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

    stacksim calibrate --study server-power [--runtime-ms 3] [-o fit.json]

prints the fitted dict to paste into ``models/platforms_server.py`` (SERVER_POWER_FIT) and the
residuals.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import least_squares

from models.platform import PlatformConfig
from models.platforms_server import SERVER_POWER_FIT, epyc9454p_16xpm1743
from models.server.config import ServerConfig
from scenarios.config.server import ServerRunConfig
from scenarios.config.server_workloads import StableWorkload
from scenarios.data import reference
from scenarios.run.assembly import build_server
from scenarios.run.simulate import simulate
from scenarios.studies.builtin import StudyResult, StudyRow, fit_progress, fit_rows

#: the published figures (scenarios/data/reference/sandman_polling_server.yaml)
REFERENCE = "sandman_polling_server"
#: simulated time per measured row (ms), after 1 ms of warm-up; QUICK_ROW_MS: shorter, slightly noisier peak row
ROW_MS = 3.0
QUICK_ROW_MS = 2.0

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
    "power.c0_core_w": (0.0, 10.0),
    "power.c0_core_ghz_w": (0.0, 10.0),
    "ssd.idle_w": (1.0, 10.0),
    "ssd.active_read_w": (5.0, 200.0),
}
#: weak priors (value, relative weight) for directions the totals leave free
PRIORS = {"cpu.core_leakage_w": (1.5, 0.01), "cpu.C2.power_w": (0.12, 0.01)}


def os_idles_deep(plat: PlatformConfig) -> PlatformConfig:
    """``plat`` with every idle state enabled for the OS idle loop (the "deep" rows: the kernel
    sleeps in the deep state)."""
    return plat.model_copy(update={"cpu": plat.cpu.model_copy(update={"cpuidle_disable": ()})})


def row_configs(fit: dict, row_ms: float = ROW_MS) -> dict[str, ServerRunConfig]:
    """The server configuration of each measured row (see the module doc), ``row_ms`` simulated."""
    plat = epyc9454p_16xpm1743(fit)
    dur = row_ms / 1e3
    warm = 0.001

    def cfg(policy: str, rate: float, params: dict | None = None, platform=plat) -> ServerRunConfig:
        return ServerRunConfig(
            name=f"calib-{policy}",
            platform=platform,
            server=ServerConfig(policy=policy),
            policy=params or {},
            workload=StableWorkload(rate_iops=rate, duration_s=dur, warmup_s=warm),
            seed=11,
        )

    deep = os_idles_deep(plat)
    return {
        "idle": cfg("idle", 1.0, {"cstate": "C1"}),
        "deep": cfg("idle", 1.0, {"cstate": "C2"}, deep),
        "P0": cfg("spdk-static", 1.0),
        "PN": cfg("spdk-static", 1.0, {"freq_ghz": 0.4}),
        "light": cfg("spdk-static", 320_000.0),
        "peak": cfg("spdk-static", 10_240_000.0),
    }


def targets() -> dict:
    """Measured rows: {row: {quantity: W}} with quantities cpu, ssd, others, system (Tables 1-2)."""
    t1 = reference.values(REFERENCE, "power_breakdown")
    t2 = reference.values(REFERENCE, "cpu_states")
    out = {row: {k: t1[row][k] for k in ("cpu", "ssd", "others", "system")} for row in ("idle", "light", "peak")}
    out.update({row: {"cpu": t2[row]["cpu_w"], "system": t2[row]["system_w"]} for row in ("P0", "PN", "C1", "deep")})
    return out


def exit_targets() -> dict:
    """Measured time back to full performance (us) from PN, C1 and the deep state (Table 2)."""
    t2 = reference.values(REFERENCE, "cpu_states")
    return {row: t2[row]["exit_latency_us"] for row in ("PN", "C1", "deep")}


def model_rows(fit: dict, row_ms: float = ROW_MS) -> dict:
    """Power breakdown of every row, from the model: {row: {cpu, ssd, others, system}}."""
    out = {}
    for row, cfg in row_configs(fit, row_ms).items():
        pw = simulate(cfg)["summary"]["power_w"]
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


def _residuals(x, names, tgt, row_ms, progress=None, count=None):
    fit = dict(SERVER_POWER_FIT)
    fit.update(dict(zip(names, x)))
    _, res = residuals_of(model_rows(fit, row_ms), tgt)
    prior = [w * (fit[k] / v - 1.0) for k, (v, w) in PRIORS.items()]
    out = np.concatenate([res, prior])
    if count is not None:
        count[0] += 1
        if progress is not None:
            progress(count[0], out, dict(zip(names, map(float, x))))
    return out


def calibrate(
    row_ms: float = ROW_MS, *, max_iterations: int | None = None, progress=None
) -> tuple[dict, list[str], np.ndarray, int, bool]:
    """Fit :data:`FIT_BOUNDS`; returns the fit dict, the residual labels and values at the rounded
    fit, the number of evaluations and whether the search converged."""
    tgt = targets()
    names = list(FIT_BOUNDS)
    x0 = [min(max(SERVER_POWER_FIT[n], FIT_BOUNDS[n][0]), FIT_BOUNDS[n][1]) for n in names]
    lo = [FIT_BOUNDS[n][0] for n in names]
    hi = [FIT_BOUNDS[n][1] for n in names]
    count = [0]
    sol = least_squares(
        _residuals,
        x0,
        bounds=(lo, hi),
        diff_step=1e-3,
        args=(names, tgt, row_ms, progress, count),
        xtol=1e-8,
        ftol=1e-8,
        max_nfev=max_iterations,
    )
    fit = dict(SERVER_POWER_FIT)
    fit.update({n: float(round(v, 4)) for n, v in zip(names, sol.x)})
    labels, res = residuals_of(model_rows(fit, row_ms), tgt)
    return fit, labels, res, count[0] + 1, bool(sol.status > 0)


def exit_latency_us(state: str, fit: dict | None = None) -> float:
    """Time back to full performance (us) from ``state`` ("C1", "deep", "PN"), measured through the
    model: a thread posted to a core sleeping in C1 (SANDMAN's monitor/wait) or in the deep state
    (kernel sleep) until it is installed and polling; for PN, a core at 400 MHz asked for P0
    (``PhysicalCore.request_freq``) until it runs at 3.65 GHz."""
    plat = epyc9454p_16xpm1743(fit)
    wl = StableWorkload(rate_iops=1.0, duration_s=0.01, warmup_s=0.0)
    if state == "PN":
        cfg = ServerRunConfig(
            platform=plat, server=ServerConfig(policy="spdk-static"), policy={"freq_ghz": 0.4}, workload=wl
        )
        srv = build_server(cfg)
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
        params, plat2 = {"wakeup": "interrupt"}, os_idles_deep(plat)
    else:
        raise ValueError(f"unknown state {state}")
    cfg = ServerRunConfig(platform=plat2, server=ServerConfig(policy="sandman"), policy=params, workload=wl)
    srv = build_server(cfg)
    srv.engine.run(1_000.0)
    th = srv.threads[0]
    dest = srv.reactors[1]
    srv.move(th, dest)
    srv.engine.run(srv.engine.now + 5e6)
    t_post, t_inst, _ = srv.wake_log[-1]
    return (t_inst - t_post) / 1e3


def run_study(runtime_ms: float = ROW_MS, max_iterations: int | None = None, progress: bool = False):
    """``stacksim calibrate --study server-power`` (``runtime_ms``: simulated time per measured row)."""
    with fit_progress(progress, len(row_configs(SERVER_POWER_FIT, runtime_ms))) as prog:
        fit, labels, res, n_eval, converged = calibrate(runtime_ms, max_iterations=max_iterations, progress=prog)
    tgt = targets()
    rows = fit_rows(labels, [v for meas in tgt.values() for v in meas.values()], res, "W")
    for state, meas in exit_targets().items():
        rows.append(StudyRow(f"exit latency {state}", float(meas), exit_latency_us(state, fit), "us", fitted=False))
    params = {n: {"value": fit[n], "ci95": None} for n in FIT_BOUNDS}
    sources = [reference.cite(REFERENCE, "power_breakdown"), reference.cite(REFERENCE, "cpu_states")]
    return StudyResult(
        "server-power",
        "models/platforms_server.py SERVER_POWER_FIT",
        fit,
        params,
        rows,
        sources,
        runtime_ms,
        n_eval,
        converged,
        [epyc9454p_16xpm1743(fit)],
    )
