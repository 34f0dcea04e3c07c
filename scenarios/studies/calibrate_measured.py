"""``stacksim calibrate``: fit platform parameters to measured points, write a new platform.

Each evaluation simulates every measured point (:class:`~scenarios.studies.validation.PointRunner`, fixed
seed, so the objective is deterministic) with the candidate parameter values as ``--set`` keys;
the residuals are ``predicted / measured - 1`` for every (point, metric); the fit is
:func:`scenarios.studies.fitting.fit` (scipy least squares within the bounds, 95% confidence intervals
from the Jacobian at the solution).

Before fitting, an ill-posed problem is refused with a message naming the cause:

* fewer distinct observations (distinct point configurations x metrics) than parameters;
* a parameter the outputs do not depend on (moving it by a tenth of its range changes no
  residual);
* parameters whose effects on the outputs are proportional (the finite-difference Jacobian at
  the start is rank-deficient): these measurements cannot tell them apart.

The written platform is the base platform with the run-wide platform ``--set`` keys (not
``queue.*`` keys or fio options, which describe how the measurements were made) and the fitted
values, named ``NAME-calibrated`` unless ``--name`` says otherwise, with a ``calibration`` note
saying what was fitted to what; ``--platform FILE.yaml`` reads it back.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from scenarios.config.host import resolve
from scenarios.config.platform_file import platform_yaml
from scenarios.config.sets import PLATFORM_PREFIXES
from scenarios.studies import fitting
from scenarios.studies.fitting import FitProgress
from scenarios.studies.validation import Point, PointRunner, ValidationRow, check_measured_values, select_metrics
from simcore.errors import ConfigError
from simcore.numfmt import signed
from simcore.outfile import write_text

__all__ = ["FitParam", "parse_fit", "Calibration", "calibrate", "calibrated_platform", "format_calibration"]

PERTURB = 0.10  # step of the identifiability checks, as a fraction of each parameter's range
NO_EFFECT = 1e-9  # a residual change below this is "no effect"
COLLINEAR = 0.05  # smallest/largest singular value of the column-normalised Jacobian below this
#: (two effect directions within ~6 degrees): the parameters cannot be separated. Well-posed fits
#: (the built-in calibrations) score 0.3-0.5; media vs fetch time, which only ever add up, 0.02.


@dataclass(frozen=True)
class FitParam:
    """A platform parameter to fit: dotted path, bounds, optional start."""

    name: str
    lo: float
    hi: float
    start: float | None = None


def parse_fit(text: str) -> FitParam:
    """``PARAM=LO:HI`` or ``PARAM=LO:HI:START`` (e.g. ``ssd.read.base_ns=4000:9000``)."""
    if "=" not in text:
        raise ConfigError(f"--fit {text!r}: expected PARAM=LO:HI[:START], e.g. ssd.read.base_ns=4000:9000")
    name, rng = (s.strip() for s in text.split("=", 1))
    head = name.split(".", 1)[0]
    if head not in PLATFORM_PREFIXES or head == "ssd_count" or "." not in name:
        raise ConfigError(
            f"--fit {name}: fit a dotted platform parameter under "
            f"{', '.join(p + '.' for p in PLATFORM_PREFIXES if p != 'ssd_count')} (e.g. kernel.ctx_switch_cycles)"
        )
    parts = rng.split(":")
    if len(parts) not in (2, 3):
        raise ConfigError(f"--fit {text!r}: expected PARAM=LO:HI[:START]")
    vals = []
    for part, what in zip(parts, ("lower bound", "upper bound", "start")):
        try:
            v = float(part)
        except ValueError:
            raise ConfigError(f"--fit {name}: {what} {part!r} is not a number") from None
        if not math.isfinite(v):
            raise ConfigError(f"--fit {name}: {what} must be finite")
        vals.append(v)
    lo, hi = vals[0], vals[1]
    if not lo < hi:
        raise ConfigError(f"--fit {name}: lower bound {lo:g} must be below upper bound {hi:g}")
    start = vals[2] if len(vals) == 3 else None
    if start is not None and not lo <= start <= hi:
        raise ConfigError(f"--fit {name}: start {start:g} is outside [{lo:g}, {hi:g}]")
    return FitParam(name, lo, hi, start)


def _current_value(platform_dump: dict, name: str) -> float | None:
    """The platform's value of ``name``; None for a key the platform leaves unset (a free-form
    table such as ``kernel.iosched_cycles.<scheduler>``; the platform model checks it)."""
    node: Any = platform_dump
    parts = name.split(".")
    for i, part in enumerate(parts):
        if isinstance(node, list):  # e.g. cpu.cstates.3.exit_latency_ns
            if not part.isdigit() or int(part) >= len(node):
                raise ConfigError(
                    f"--fit {name}: '{'.'.join(parts[: i + 1])}' is not an entry of the platform ({len(node)} entries)"
                )
            node = node[int(part)]
            continue
        if not isinstance(node, dict):
            raise ConfigError(f"--fit {name}: '{'.'.join(parts[:i])}' is not a section of the platform")
        if part not in node:
            if i == len(parts) - 1:
                return None
            raise ConfigError(f"--fit {name}: the platform has no parameter '{'.'.join(parts[: i + 1])}'")
        node = node[part]
    if isinstance(node, bool) or not isinstance(node, (int, float)):
        raise ConfigError(f"--fit {name}: not a numeric parameter (value {node!r})")
    return float(node)


def _start(p: FitParam, current: float | None) -> float:
    x = p.start if p.start is not None else current if current is not None else (p.lo + p.hi) / 2
    inset = 1e-3 * (p.hi - p.lo)  # least squares needs a start inside the bounds
    return min(max(x, p.lo + inset), p.hi - inset)


@dataclass
class Calibration:
    params: list[FitParam]
    start: dict[str, float]
    values: dict[str, float]
    ci95: dict[str, tuple[float, float]]
    rows: list[ValidationRow]
    evaluations: int
    simulations: int
    wall_s: float
    #: how each interval was found: ``linear`` (the Jacobian) or ``profile`` (the sum of squares'
    #: profile, where the linearisation reaches past a bound: scenarios.studies.fitting)
    ci_method: dict[str, str] | None = None
    #: False when the search stopped at ``max_iterations`` before its tolerances were met
    converged: bool = True
    max_iterations: int | None = None

    @property
    def rms_pct(self) -> float:
        return 100.0 * math.sqrt(sum(r.error**2 for r in self.rows) / len(self.rows))


def _check_identifiable(params, x0, evaluate) -> None:
    """Refuse parameters with no effect, and parameters with proportional effects."""
    r0 = evaluate(x0)
    cols = []
    for i, p in enumerate(params):
        x = list(x0)
        step = PERTURB * (p.hi - p.lo)  # a tenth of the range: well above the simulation's discreteness
        x[i] = x[i] + step if x[i] + step <= p.hi else x[i] - step
        d = evaluate(x) - r0
        if np.max(np.abs(d)) < NO_EFFECT:
            raise ConfigError(
                f"ill-posed fit: the measured outputs do not depend on parameter '{p.name}' "
                f"(moving it by a tenth of its range changes no prediction); drop it from --fit or "
                f"measure points where it matters"
            )
        cols.append(d / (x[i] - x0[i]) * (p.hi - p.lo))  # effect over the whole range
    if len(params) > 1:
        J = np.column_stack(cols)
        Jn = J / np.linalg.norm(J, axis=0)
        sv = np.linalg.svd(Jn, compute_uv=False)
        if sv[-1] / sv[0] < COLLINEAR:
            corr = Jn.T @ Jn
            np.fill_diagonal(corr, 0.0)
            i, j = np.unravel_index(np.argmax(np.abs(corr)), corr.shape)
            raise ConfigError(
                f"ill-posed fit: '{params[i].name}' and '{params[j].name}' change the measured outputs "
                f"in the same proportions, so these measurements cannot separate them; fix one, or add "
                f"points or metrics that depend on them differently"
            )


def _fitted_metrics(
    points: list[Point], params: list[FitParam], runner: PointRunner, metrics: list[str] | None
) -> list[str]:
    """The metrics to fit (:func:`select_metrics`), once the problem is checked to be well posed: at
    least one parameter, each named once and neither set by ``--set`` nor by a measurement, measured
    values usable, and at least as many independent observations as parameters."""
    if not params:
        raise ConfigError("give at least one --fit PARAM=LO:HI")
    names = [p.name for p in params]
    if len(set(names)) != len(names):
        raise ConfigError(
            f"--fit names a parameter twice: {', '.join(sorted({n for n in names if names.count(n) > 1}))}"
        )
    clash = [n for n in names if n in runner.sets or any(n in p.config for p in points)]
    if clash:
        raise ConfigError(
            f"--fit {clash[0]}: also set by --set or by the measurements; it cannot be both fixed and fitted"
        )
    wanted = select_metrics(points, metrics)
    check_measured_values(points, wanted)
    obs = [(p, m) for p in points for m in wanted if m in p.metrics]
    distinct = {(repr(sorted(p.config.items())), p.job_file, p.platform, m) for p, m in obs}
    if len(distinct) < len(params):
        raise ConfigError(
            f"ill-posed fit: {len(params)} parameters ({', '.join(names)}) but only {len(distinct)} "
            f"independent observations (distinct point configurations x metrics); measure more points "
            f"or fit fewer parameters"
        )
    return wanted


def _check_bounds(params: list[FitParam], runner: PointRunner, point: Point) -> None:
    """The platform must accept every candidate: check each parameter's bounds once through the
    config models (of ``point``'s run)."""
    for p in params:
        for v in (p.lo, p.hi):
            try:
                runner.config(point, {p.name: v})
            except ConfigError as e:
                raise ConfigError(
                    f"--fit {p.name}={p.lo:g}:{p.hi:g}: the platform does not accept {v:g}: {e}"
                ) from None


def calibrate(
    points: list[Point],
    params: list[FitParam],
    runner: PointRunner,
    *,
    metrics: list[str] | None = None,
    progress: bool | None = None,
    max_iterations: int | None = None,
) -> Calibration:
    """Fit ``params`` so that the simulated ``metrics`` of ``points`` match the measurements
    (``max_iterations``: at most that many least-squares iterations, :func:`fitting.fit`)."""
    wanted = _fitted_metrics(points, params, runner, metrics)
    names = [p.name for p in params]
    dump = runner.config(points[0]).platform.model_dump(mode="json")
    x0 = [_start(p, _current_value(dump, p.name)) for p in params]
    _check_bounds(params, runner, points[0])
    needed = [(p, [m for m in wanted if m in p.metrics]) for p in points]
    needed = [(p, ms) for p, ms in needed if ms]
    meas = np.array([p.metrics[m] for p, ms in needed for m in ms])
    cache: dict[tuple, np.ndarray] = {}
    prog = FitProgress(len(needed), progress)

    def evaluate(x) -> np.ndarray:
        key = tuple(float(v) for v in x)
        res = cache.get(key)
        if res is None:
            values = dict(zip(names, key))
            pred = [v for p, ms in needed for v in runner.predict(p, ms, values).values()]
            res = cache[key] = np.asarray(pred) / meas - 1.0
            prog(len(cache), res, values)
        return res

    t0 = time.perf_counter()
    try:
        _check_identifiable(params, x0, evaluate)
        fit = fitting.fit(
            names,
            x0,
            [(p.lo, p.hi) for p in params],
            lambda v: evaluate([v[n] for n in names]),
            check_identifiable=False,
            max_iterations=fitting.check_max_iterations(max_iterations),
        )
    finally:
        prog.close()
    final = evaluate([fit.values[n] for n in names])
    rows = []
    k = 0
    for p, ms in needed:
        for m in ms:
            rows.append(ValidationRow(p.label, m, p.metrics[m], p.metrics[m] * (1.0 + float(final[k]))))
            k += 1
    return Calibration(
        params,
        dict(zip(names, x0)),
        fit.values,
        fit.ci95,
        rows,
        len(cache),
        runner.simulations,
        time.perf_counter() - t0,
        fit.ci_method,
        fit.converged,
        max_iterations,
    )


def calibrated_platform(
    base_name: str,
    cal: Calibration,
    *,
    sets: dict[str, Any] | None = None,
    name: str | None = None,
    sources: list[str] | None = None,
    seed: int | None = None,
    runtime_ms: float | None = None,
):
    """The base platform with the run-wide platform ``sets`` and the fitted values, renamed and
    with a ``calibration`` note."""
    platform_sets = {k: v for k, v in (sets or {}).items() if k.split(".", 1)[0] in PLATFORM_PREFIXES}
    fitted = {n: float(f"{v:.6g}") for n, v in cal.values.items()}
    plat = resolve(platform=base_name, sets={**platform_sets, **fitted}).platform
    fits = ", ".join(f"{n}={fitted[n]:g} (95% CI {cal.ci95[n][0]:.4g}..{cal.ci95[n][1]:.4g})" for n in fitted)
    how = f"seed {seed}" + (f", {runtime_ms:g} ms simulated per point" if runtime_ms else "")
    note = f"stacksim calibrate: from {plat.name}"
    if platform_sets:
        note += " with " + ", ".join(f"{k}={v}" for k, v in platform_sets.items())
    note += f"; fitted {fits} to {len(cal.rows)} measured values"
    if sources:
        note += " of " + ", ".join(sources)
    note += f" ({how}); rms residual {cal.rms_pct:.2f}%, max {max(abs(r.error) for r in cal.rows) * 100:.2f}%."
    if plat.calibration:
        note += f" Base platform's calibration: {plat.calibration}"
    return plat.model_copy(
        update={
            "name": name or fitting.calibrated_name(plat.name),
            "calibration": note,
            "description": f"{plat.description} -- calibrated by stacksim calibrate".strip(" -"),
        }
    )


def write_platform(path: str, plat) -> None:
    if Path(path).suffix.lower() not in (".yaml", ".yml"):
        raise ConfigError(f"-o {path}: write the platform to a .yaml file")
    write_text(
        path,
        platform_yaml(
            plat, header=f"stacksim platform {plat.name} (written by stacksim calibrate)\nuse it with --platform {path}"
        ),
        what="-o",
    )


def format_calibration(cal: Calibration) -> str:
    w = max(len(n) for n in cal.values)
    out = [
        f"fitted in {cal.evaluations} evaluations ({cal.simulations} simulations, {cal.wall_s:.1f} s):",
        f"  {'parameter':{w}s}  {'start':>12s}  {'fitted':>12s}  95% confidence interval",
    ]
    if not cal.converged:
        out.insert(1, f"NOTE: {fitting.not_converged(cal.max_iterations or cal.evaluations, 'measured')}")
    for p in cal.params:
        lo, hi = cal.ci95[p.name]
        at = (
            "  (at a bound)"
            if min(abs(cal.values[p.name] - p.lo), abs(cal.values[p.name] - p.hi)) < 1e-6 * (p.hi - p.lo)
            else ""
        )
        if (cal.ci_method or {}).get(p.name) == "profile":
            at += "  (profile)"
        out.append(f"  {p.name:{w}s}  {cal.start[p.name]:12.6g}  {cal.values[p.name]:12.6g}  [{lo:.6g}, {hi:.6g}]{at}")
    pw = max(8, *(len(r.point) for r in cal.rows))
    mw = max(6, *(len(r.metric) for r in cal.rows))
    out.append("residuals per point:")
    out.append(f"  {'point':{pw}s}  {'metric':{mw}s}  {'measured':>12s}  {'fitted':>12s}  {'residual':>8s}")
    for r in cal.rows:
        out.append(
            f"  {r.point:{pw}s}  {r.metric:{mw}s}  {r.measured:12.5g}  {r.predicted:12.5g}"
            f"  {signed(100 * r.error, 2, 7)}%"
        )
    out.append(f"rms residual {cal.rms_pct:.2f}%")
    return "\n".join(out)
