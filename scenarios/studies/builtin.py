"""The built-in calibrations: ``stacksim calibrate --study NAME``.

Each study re-fits one built-in platform's physical parameters on the simulator's own outputs
(fixed seeds) against the published figures shipped in :mod:`scenarios.data.reference`, and reports
the fitted values (the dict to paste into the platform module) and the residual of every
observation. The fitting code stays in its module (``scenarios/studies/calibrate_*.py``,
``scenarios/studies/calibrate_server_power.py``); each exposes ``run_study(runtime_ms, max_iterations,
progress)`` returning a :class:`StudyResult`.
"""

from __future__ import annotations

import importlib
import json
import math
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from scenarios.config.platform_file import platform_yaml
from scenarios.studies.fitting import FitProgress, calibrated_name, check_max_iterations, not_converged
from simcore.errors import ConfigError
from simcore.numfmt import signed
from simcore.outfile import write_text

__all__ = [
    "StudySpec",
    "StudyRow",
    "StudyResult",
    "STUDIES",
    "get_study",
    "run_study",
    "format_study",
    "study_json",
    "write_study",
    "fit_progress",
]


@dataclass(frozen=True)
class StudySpec:
    name: str
    module: str
    description: str
    runtime_ms: float
    """default simulated time per run (ms)"""
    iterative: bool = True
    """a nonlinear least-squares search (``max_iterations`` applies)"""


STUDIES: dict[str, StudySpec] = {
    s.name: s
    for s in (
        StudySpec(
            "poll-energy",
            "scenarios.studies.calibrate_poll_energy",
            "optane900p-e3-1230v5: device read time, user cycles per IO, context switch cycles vs "
            "poll-vs-interrupt Table 1 (1 thread, 4 KiB)",
            200.0,
        ),
        StudySpec(
            "memops",
            "scenarios.studies.calibrate_memops",
            "optane900p-e3-1230v5: memory operations per cycle by kernel directory vs poll-vs-interrupt "
            "Table 2 (32 threads, 4 KiB)",
            60.0,
            iterative=False,
        ),
        StudySpec(
            "io-schedulers",
            "scenarios.studies.calibrate_io_schedulers",
            "optane-p4801x-e3-1230: P4801X read/write time, mq-deadline/kyber/bfq cycles per request vs "
            "IO-schedulers Table 1 (io_uring QD1 medians)",
            100.0,
        ),
        StudySpec(
            "cinterrupts",
            "scenarios.studies.calibrate_cinterrupts",
            "optane-p4800x-e5-2660v4 and p3700-e5-2660v4: read time mean/sd, context switch cycles vs "
            "calibrated-interrupts sync 4 KiB read latency",
            200.0,
        ),
        StudySpec(
            "cheops23",
            "scenarios.studies.calibrate_cheops23",
            "cheops23-optane: P4800X read time, doorbell write, block-device direct-IO cycles and CPI,"
            " io_submit and io_uring_enter work, C1 exit vs CHEOPS'23 SPDK depth 1 and 16, SQPOLL depth 64,"
            " libaio depth 8 (IOPS, perf instructions per IO) and 1 (latency), io_uring depth 8",
            60.0,
        ),
        StudySpec(
            "server-power",
            "scenarios.studies.calibrate_server_power",
            "epyc9454p-16xpm1743: core/uncore/SSD/others power vs SANDMAN Tables 1-2",
            3.0,
        ),
    )
}


def get_study(name: str) -> StudySpec:
    if name not in STUDIES:
        raise ConfigError(
            f"unknown study {name!r} (built-in: {', '.join(STUDIES)}; see stacksim calibrate --list-studies)"
        )
    return STUDIES[name]


@dataclass(frozen=True)
class StudyRow:
    """One published figure against the model: ``measured`` is None for a model prediction with
    no published value (e.g. the hybrid-polling column of the memory-operation table)."""

    label: str
    measured: float | None
    model: float
    unit: str = ""
    fitted: bool = True
    """an observation of the fit (else a check or a prediction of the fitted model)"""

    @property
    def residual(self) -> float | None:
        return None if not self.measured else self.model / self.measured - 1.0


@dataclass
class StudyResult:
    study: str
    constant: str
    """where the fitted values go, e.g. ``models/platforms.py POLL_ENERGY_FIT``"""
    fitted: dict[str, Any]
    """the dict to paste there"""
    parameters: dict[str, dict[str, Any]]
    """fitted parameter -> {"value": ..., "ci95": [lo, hi] or None}"""
    rows: list[StudyRow]
    sources: list[str]
    """citations of the published figures used"""
    runtime_ms: float
    evaluations: int
    converged: bool = True
    platforms: list = field(default_factory=list)
    """the calibrated host platforms (PlatformConfig), for a platform YAML output"""
    wall_s: float = 0.0
    #: the --max-iterations the search was given (None: scipy's default)
    max_iterations: int | None = None

    @property
    def rms_pct(self) -> float:
        res = [r.residual for r in self.rows if r.fitted and r.residual is not None]
        return 100.0 * math.sqrt(sum(r * r for r in res) / len(res)) if res else float("nan")


@contextmanager
def fit_progress(enabled: bool, sims_per_evaluation: int):
    """The evaluation progress of ``stacksim calibrate`` (calibrate_cli's) for a study's fit, as a
    context manager that closes the progress line however the fit ends."""
    prog = FitProgress(sims_per_evaluation, enabled)
    try:
        yield prog
    finally:
        prog.close()


def run_study(
    name: str, *, runtime_ms: float | None = None, max_iterations: int | None = None, progress: bool = False
) -> StudyResult:
    """Run study ``name``; ``progress`` shows evaluations on stderr."""
    spec = get_study(name)
    if runtime_ms is not None and not (math.isfinite(runtime_ms) and runtime_ms >= 1):
        raise ConfigError(f"--runtime-ms must be at least 1 (ms simulated per run), got {runtime_ms:g}")
    if max_iterations is not None:
        if not spec.iterative:
            raise ConfigError(
                f"study {name} solves a linear least-squares problem directly; --max-iterations does not apply"
            )
        check_max_iterations(max_iterations)
    mod = importlib.import_module(spec.module)
    t0 = time.perf_counter()
    res = mod.run_study(
        runtime_ms=spec.runtime_ms if runtime_ms is None else runtime_ms,
        max_iterations=max_iterations,
        progress=progress,
    )
    res.wall_s = time.perf_counter() - t0
    res.max_iterations = max_iterations
    return res


def format_study(res: StudyResult) -> str:
    out = [
        f"study {res.study}: {res.evaluations} evaluations, {res.wall_s:.1f} s, {res.runtime_ms:g} ms simulated per run"
    ]
    if not res.converged:
        out.append(f"NOTE: {not_converged(res.max_iterations or res.evaluations, 'study')}")
    if res.parameters:
        w = max(len(n) for n in res.parameters)
        out.append(f"fitted parameters:\n  {'parameter':{w}s}  {'value':>12s}  95% confidence interval")
        for n, p in res.parameters.items():
            ci = p.get("ci95")
            ci_s = f"[{ci[0]:.6g}, {ci[1]:.6g}]" if ci and all(math.isfinite(c) for c in ci) else "-"
            ci_s += {"clipped": "  (the Jacobian's, cut at the bounds)", "profile": "  (profile)"}.get(
                p.get("ci_method", "linear"), ""
            )
            out.append(f"  {n:{w}s}  {p['value']:12.6g}  {ci_s}")
    out.append(f"{res.constant} = " + json.dumps(res.fitted, indent=4))
    lw = max(len(r.label) for r in res.rows)
    uw = max(4, *(len(r.unit) for r in res.rows))
    out.append(
        f"residuals:\n  {'observation':{lw}s}  {'measured':>10s}  {'model':>10s}  {'unit':{uw}s}  {'residual':>8s}"
    )
    for r in res.rows:
        meas = f"{r.measured:10.6g}" if r.measured is not None else f"{'-':>10s}"
        resid = signed(100 * r.residual, 2, 7) + "%" if r.residual is not None else f"{'-':>8s}"
        tag = "" if r.fitted else "  (not fitted)"
        out.append(f"  {r.label:{lw}s}  {meas}  {r.model:10.6g}  {r.unit:{uw}s}  {resid}{tag}")
    out.append(f"rms relative error of the fitted observations {res.rms_pct:.2f}%")
    out.append("published figures: " + "; ".join(res.sources))
    return "\n".join(out)


def study_json(res: StudyResult) -> dict:
    return {
        "study": res.study,
        "description": STUDIES[res.study].description,
        "constant": res.constant,
        "fitted": res.fitted,
        "parameters": res.parameters,
        "residuals": [
            {
                "label": r.label,
                "measured": r.measured,
                "model": r.model,
                "unit": r.unit,
                "fitted": r.fitted,
                "residual_pct": None if r.residual is None else 100.0 * r.residual,
            }
            for r in res.rows
        ],
        "rms_residual_pct": res.rms_pct,
        "sources": res.sources,
        "runtime_ms": res.runtime_ms,
        "evaluations": res.evaluations,
        "converged": res.converged,
        "wall_s": res.wall_s,
    }


def check_study_output(path: str, study: str) -> None:
    """Refuse an output the study cannot write, before running it."""
    low = path.lower()
    if low.endswith(".json"):
        return
    if low.endswith((".yaml", ".yml")):
        if study == "cinterrupts":
            raise ConfigError(f"-o {path}: study {study} calibrates two platforms; write the result as .json")
        return
    raise ConfigError(f"-o {path}: write the study's result as .json, or the calibrated platform as .yaml")


def write_study(path: str, res: StudyResult) -> str:
    """Write the result as JSON, or the calibrated platform as YAML; returns what was written."""
    check_study_output(path, res.study)
    if path.lower().endswith(".json"):
        write_text(path, json.dumps(study_json(res), indent=2) + "\n", what="-o")
        return "the study's result"
    (plat,) = res.platforms
    note = (
        f"stacksim calibrate --study {res.study}: fitted {', '.join(res.parameters) or 'mem_ops_per_cycle'} to "
        f"{'; '.join(res.sources)}; rms residual {res.rms_pct:.2f}% ({res.runtime_ms:g} ms simulated per run)"
    )
    plat = plat.model_copy(update={"name": calibrated_name(plat.name), "calibration": note})
    write_text(
        path,
        platform_yaml(
            plat,
            header=f"stacksim platform {plat.name} (written by stacksim calibrate "
            f"--study {res.study})\nuse it with --platform {path}",
        ),
    )
    return f"platform {plat.name} (use --platform {path})"


def fit_rows(
    labels: list[str], measured: list[float], residuals, units: list[str] | str = "", weights: list[float] | None = None
) -> list[StudyRow]:
    """Rows of a fit whose residuals are ``weight x (model / measured - 1)``."""
    n = len(labels)
    units = [units] * n if isinstance(units, str) else units
    weights = weights or [1.0] * n
    return [
        StudyRow(lab, float(m), float(m) * (1.0 + float(r) / w), u)
        for lab, m, r, u, w in zip(labels, measured, residuals, units, weights)
    ]


def fit_parameters(fit) -> dict[str, dict[str, Any]]:
    """``{name: {"value", "ci95", "ci_method"}}`` of a :class:`scenarios.studies.fitting.FitResult`."""
    method = fit.ci_method or {}
    return {
        n: {"value": fit.values[n], "ci95": list(fit.ci95[n]), "ci_method": method.get(n, "linear")} for n in fit.names
    }
