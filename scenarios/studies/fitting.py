"""Least-squares fitting of physical parameters on the simulator's own outputs (scipy).

Shared by the built-in calibration scripts and ``stacksim calibrate``: the objective is a vector
of relative residuals (predicted / measured - 1) computed by running the simulator with a fixed
seed, so it is deterministic; parameters are fitted within physical bounds. Confidence intervals
come from the Jacobian at the solution (cov = s^2 (J^T J)^-1, s^2 = SSR / (m - n)).
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy import stats
from scipy.optimize import least_squares

from simcore.errors import ConfigError


@dataclass
class FitResult:
    names: list[str]
    values: dict[str, float]
    residuals: np.ndarray
    ci95: dict[str, tuple[float, float]]
    evaluations: int
    converged: bool = True
    """False when the search stopped at ``max_iterations`` before scipy's tolerances were met."""

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
) -> FitResult:
    """Fit ``names`` (start ``x0``, ``bounds``) so that ``residual_fn(values)`` is small.

    ``progress(n, residuals, values)`` is called after every evaluation; ``max_iterations`` bounds
    the least-squares iterations (each evaluates once, plus once per parameter for the
    finite-difference Jacobian)."""
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
    m, n = len(sol.fun), len(names)
    ci = {}
    try:
        dof = max(m - n, 1)
        s2 = float(sol.fun @ sol.fun) / dof
        cov = np.linalg.pinv(sol.jac.T @ sol.jac) * s2
        t = stats.t.ppf(0.975, dof)
        for i, name in enumerate(names):
            half = t * float(np.sqrt(max(cov[i, i], 0.0)))
            ci[name] = (float(sol.x[i] - half), float(sol.x[i] + half))
    except np.linalg.LinAlgError:
        ci = {name: (float("nan"), float("nan")) for name in names}
    return FitResult(names, {k: float(v) for k, v in zip(names, sol.x)}, sol.fun, ci, n_eval[0], bool(sol.status > 0))


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
