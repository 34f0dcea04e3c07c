"""Least-squares fitting of physical parameters on the simulator's own outputs (scipy).

Shared by the built-in calibration scripts and ``stacksim calibrate``: the objective is a vector
of relative residuals (predicted / measured - 1) computed by running the simulator with a fixed
seed, so it is deterministic; parameters are fitted within physical bounds. Confidence intervals
come from the Jacobian at the solution (cov = s^2 (J^T J)^-1, s^2 = SSR / (m - n)) where that
linearisation holds; where it does not (the interval reaches past a bound, or J^T J is singular),
from the profile of the sum of squares (:func:`profile_interval`), which stays within the bounds.
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from simcore.errors import ConfigError

#: what one iteration is, by calibration mode (``--max-iterations`` bounds them)
ITERATIONS = {
    "study": "least-squares iteration",
    "measured": "least-squares iteration",
    "latencies": "simulated run",
    "trace": "replay",
}


def check_max_iterations(n: int | None) -> int | None:
    """The one check of ``--max-iterations`` for every calibration (``--study``, ``--measured``,
    ``--latencies``, ``--trace``): None (each one's default) or at least 1."""
    if n is not None and n < 1:
        raise ConfigError(
            f"--max-iterations {n}: expected at least 1 (least-squares iterations for --study and --measured,"
            " simulated runs for --latencies, replays for --trace)"
        )
    return n


def not_converged(n: int, mode: str) -> str:
    """The one advice when a calibration stopped before its values settled (``mode``: a key of
    :data:`ITERATIONS`), the same for every calibration."""
    return (
        f"not converged after {n} {ITERATIONS[mode]}{'s' if n != 1 else ''}: the values are the last ones, not"
        " final. Give it more (--max-iterations N), longer runs (--runtime-ms) or more measurements, and check that the"
        " measurements were made as simulated (the same job: depth, bs, engine; the platform's --set keys)"
    )


def calibrated_name(base: str) -> str:
    """The name of a platform calibrated from ``base``: ``BASE-calibrated``, and the same name when
    ``base`` was itself calibrated (a re-calibration is not ``...-calibrated-calibrated``)."""
    return base if base.endswith("-calibrated") else f"{base}-calibrated"


@dataclass
class FitResult:
    names: list[str]
    values: dict[str, float]
    residuals: np.ndarray
    ci95: dict[str, tuple[float, float]]
    evaluations: int
    converged: bool = True
    """False when the search stopped at ``max_iterations`` before scipy's tolerances were met."""
    ci_method: dict[str, str] | None = None
    """How each interval was found: ``linear`` (the Jacobian), ``profile`` (:func:`profile_interval`)
    or ``clipped`` (the Jacobian's, cut at the bounds)."""

    def table(self) -> str:
        rows = [
            f"  {n:40s} {self.values[n]:14.2f}   95% CI [{self.ci95[n][0]:.2f}, {self.ci95[n][1]:.2f}]"
            for n in self.names
        ]
        return "\n".join(rows)


def fit(
    names: list[str],
    x0: list[float],
    bounds: list[tuple[float, float]],
    residual_fn: Callable[[dict[str, float]], np.ndarray],
    *,
    diff_step: float = 1e-2,
    progress: Callable[[int, np.ndarray, dict[str, float]], None] | None = None,
    check_identifiable: bool = True,
    max_iterations: int | None = None,
    profile: bool = True,
) -> FitResult:
    """Fit ``names`` (start ``x0``, ``bounds``) so that ``residual_fn(values)`` is small.

    ``progress(n, residuals, values)`` is called after every evaluation; ``max_iterations`` bounds
    the least-squares iterations (each evaluates once, plus once per parameter for the
    finite-difference Jacobian). ``profile``: where the Jacobian's interval reaches past a bound
    (or is undefined), find it from the profile (:func:`profile_interval`: some 20-60 more
    evaluations per parameter); otherwise, and after a search that did not converge, that interval
    is cut at the bounds (``ci_method`` says ``clipped``)."""
    from scipy.optimize import least_squares  # (scipy on use: `stacksim list` imports this module)

    n_eval = [0]

    def fun(x):
        n_eval[0] += 1
        values = dict(zip(names, map(float, x)))
        res = np.asarray(residual_fn(values), dtype=float)
        if progress:
            progress(n_eval[0], res, values)
        return res

    r0 = fun(np.asarray(x0, dtype=float))
    if len(r0) < len(names):
        raise ConfigError(
            f"ill-posed fit: {len(names)} parameters ({', '.join(names)}) but only {len(r0)} independent observations"
        )
    if check_identifiable:
        for i, name in enumerate(names):
            x = np.asarray(x0, dtype=float).copy()
            lo, hi = bounds[i]
            x[i] = x[i] * 1.1 if x[i] * 1.1 <= hi else x[i] * 0.9
            if np.allclose(fun(x), r0, rtol=0, atol=1e-9):
                raise ConfigError(
                    f"ill-posed fit: the outputs do not depend on parameter '{name}' (drop it from the fit)"
                )
    sol = least_squares(
        fun,
        x0,
        bounds=([b[0] for b in bounds], [b[1] for b in bounds]),
        diff_step=diff_step,
        xtol=1e-4,
        ftol=1e-5,
        max_nfev=max_iterations,
    )
    ci, method = _intervals(fun, sol, names, bounds, profile, diff_step)
    values = {k: float(v) for k, v in zip(names, sol.x)}
    return FitResult(names, values, sol.fun, ci, n_eval[0], bool(sol.status > 0), method)


def _intervals(fun, sol, names: list[str], bounds, profile: bool, diff_step: float):
    """``(ci95, ci_method)`` of a solution: see :func:`fit`."""
    lo_b, hi_b = [b[0] for b in bounds], [b[1] for b in bounds]
    ci = _linear_intervals(sol, names)
    method = {}
    dof = max(len(sol.fun) - len(names), 1)
    for i, name in enumerate(names):
        lo, hi = ci[name]
        method[name] = "linear"
        if math.isfinite(lo) and math.isfinite(hi) and lo >= lo_b[i] and hi <= hi_b[i]:
            continue
        if profile and sol.status > 0:
            ci[name] = profile_interval(fun, sol.x, i, (lo_b, hi_b), float(sol.fun @ sol.fun), dof, diff_step)
            method[name] = "profile"
        else:
            lo = max(lo, lo_b[i]) if math.isfinite(lo) else lo_b[i]
            ci[name] = (lo, min(hi, hi_b[i]) if math.isfinite(hi) else hi_b[i])
            method[name] = "clipped"
    return ci, method


def _linear_intervals(sol, names: list[str]) -> dict[str, tuple[float, float]]:
    """95% intervals from the Jacobian at the solution (NaN where it is singular)."""
    from scipy import stats

    m, n = len(sol.fun), len(names)
    try:
        dof = max(m - n, 1)
        s2 = float(sol.fun @ sol.fun) / dof
        cov = np.linalg.pinv(sol.jac.T @ sol.jac) * s2
        t = stats.t.ppf(0.975, dof)
        out = {}
        for i, name in enumerate(names):
            half = t * float(np.sqrt(max(cov[i, i], 0.0)))
            out[name] = (float(sol.x[i] - half), float(sol.x[i] + half))
        return out
    except np.linalg.LinAlgError:
        return {name: (float("nan"), float("nan")) for name in names}


#: a profile interval's end is found to this fraction of the parameter's range
PROFILE_XTOL = 1e-3


def profile_interval(
    fun: Callable[[np.ndarray], np.ndarray],
    x_hat: np.ndarray,
    i: int,
    bounds: tuple[list[float], list[float]],
    ssr_min: float,
    dof: int,
    diff_step: float = 1e-2,
) -> tuple[float, float]:
    """The 95% profile interval of parameter ``i``: the values ``v`` within its bounds whose
    profile sum of squares (the others re-fitted with ``i`` held at ``v``) stays below
    ``ssr_min x (1 + F(0.95; 1, dof) / dof)`` (Bates & Watts, *Nonlinear Regression Analysis and
    Its Applications*, 1988, sec. 6.1: the likelihood-ratio region of a least-squares fit). An end
    where the profile stays below the threshold up to the bound is the bound: the data do not
    exclude any value up to it."""
    from scipy import stats
    from scipy.optimize import brentq, least_squares

    lo_b, hi_b = bounds
    others = [k for k in range(len(x_hat)) if k != i]
    limit = ssr_min * (1.0 + float(stats.f.ppf(0.95, 1, dof)) / dof)
    start = {"x": np.asarray(x_hat, dtype=float)[others]}

    def excess(v: float) -> float:
        x = np.asarray(x_hat, dtype=float).copy()
        x[i] = v
        if others:

            def rest(y):
                x[others] = y
                return fun(x)

            sol = least_squares(
                rest,
                np.clip(start["x"], [lo_b[k] for k in others], [hi_b[k] for k in others]),
                bounds=([lo_b[k] for k in others], [hi_b[k] for k in others]),
                diff_step=diff_step,
                xtol=1e-3,
                ftol=1e-4,
                max_nfev=20,
            )
            start["x"] = sol.x
            r = sol.fun
        else:
            r = fun(x)
        return float(r @ r) - limit

    v_hat = float(x_hat[i])
    ends = []
    for bound in (lo_b[i], hi_b[i]):
        if bound == v_hat or excess(bound) <= 0.0:
            ends.append(float(bound))
        else:
            start["x"] = np.asarray(x_hat, dtype=float)[others]
            ends.append(float(brentq(excess, v_hat, bound, xtol=PROFILE_XTOL * (hi_b[i] - lo_b[i]))))
    return ends[0], ends[1]


def linear_profile_interval(
    X: np.ndarray, y: np.ndarray, w: np.ndarray, i: int, lower: list[float], half_width: float
) -> tuple[float, float]:
    """The profile interval of coefficient ``i`` of the weighted linear least squares ``y ~ X b``
    (weights ``w``) with every coefficient at or above ``lower`` (no upper bound): the values ``v``
    at or above ``lower[i]`` whose profile sum of squares (the others re-fitted within their bounds
    with ``b[i] = v``, scipy's ``lsq_linear``) exceeds the bounded minimum by at most
    ``half_width^2 / V_ii``, ``V = (X^T W X)^-1``. Without a bound in the way this is
    ``b[i] +- half_width`` exactly (the sum of squares of a linear model is
    quadratic); where a bound cuts it the other coefficients take up the slack, and an end the
    data do not exclude down to the bound is the bound."""
    from scipy.optimize import brentq, lsq_linear

    sw = np.sqrt(w)
    A, b = X * sw[:, None], y * sw
    lo = np.asarray(lower, dtype=float)
    best = lsq_linear(A, b, bounds=(lo, np.inf))
    ssr_min = float(best.fun @ best.fun)
    se2 = float(np.linalg.inv(A.T @ A)[i, i])
    limit = ssr_min + half_width**2 / se2
    others = [k for k in range(X.shape[1]) if k != i]

    def excess(v: float) -> float:
        r = b - v * A[:, i]
        if others:
            r = r - A[:, others] @ lsq_linear(A[:, others], r, bounds=(lo[others], np.inf)).x
        return float(r @ r) - limit

    v_hat, step = float(best.x[i]), max(half_width, 1e-9)
    if excess(lo[i]) <= 0.0:
        low = float(lo[i])
    else:
        low = float(brentq(excess, lo[i], v_hat, xtol=PROFILE_XTOL * step))
    top = v_hat + step
    while excess(top) <= 0.0:
        top += step
    return low, float(brentq(excess, v_hat, top, xtol=PROFILE_XTOL * step))


class FitProgress:
    """Progress of a fit on stderr, one report per evaluation (``nsim`` simulations each): one
    rewritten line on a terminal, else one line per evaluation."""

    def __init__(self, nsim: int, enabled: bool | None = None) -> None:
        self.tty = sys.stderr.isatty()
        self.enabled = True if enabled is None else enabled
        self.nsim = nsim
        self.t0 = time.monotonic()

    def __call__(self, n_eval: int, res: np.ndarray, values: dict[str, float]) -> None:
        if not self.enabled:
            return
        rms = 100.0 * math.sqrt(float(np.mean(res**2)))
        vals = "  ".join(f"{k}={v:.6g}" for k, v in values.items())
        line = (
            f"evaluation {n_eval} ({n_eval * self.nsim} simulations, {time.monotonic() - self.t0:.0f} s): "
            f"rms residual {rms:.3f}%  {vals}"
        )
        if self.tty:
            sys.stderr.write("\r" + line[:160].ljust(160))
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled and self.tty:
            sys.stderr.write("\n")
            sys.stderr.flush()
