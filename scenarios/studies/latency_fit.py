"""The device's service time of one direction from latencies without timestamps, given the
simulated host path (a depth-1 job's latency minus its drawn media time; :mod:`latency_compare`).

The SSD draws a service ``S x X`` (``models/ssd/device.py``): ``S = base_ns + per_kib_ns x (KiB
beyond 4)``, ``X`` lognormal with mean 1 and coefficient of variation ``sd_ns / base_ns``. At depth 1
a latency is the host path plus that draw, independent of it, so:

* the mean gives ``S`` (measured mean minus the host path's);
* from samples, the variance gives the spread (both variances without their 0.1% tails, so a first
  IO that woke a deep C-state does not decide it);
* from a percentile table (fio's JSON, a paper's), the spread is the one whose predicted
  percentiles (the simulated host path plus lognormal draws: a Monte Carlo convolution on common
  random numbers, so the fit is a smooth function of its parameters) best match the measured ones
  from p1 to p99 in log space (the tails beyond are the device's garbage collection and the host's
  rare events, which a lognormal does not describe); without the table's mean, ``S`` is fitted
  with it. A table of fewer than two such points gives the spread from fio's ``stddev`` (variance
  subtraction) when the file has one.
"""

from __future__ import annotations

import math

import numpy as np

from simcore.errors import ConfigError

__all__ = ["fit_service", "CENTRAL_PERCENTILES", "MAX_CV"]

#: the percentiles a table's spread is fitted to (both ends included)
CENTRAL_PERCENTILES = (1.0, 99.0)
#: the largest coefficient of variation fitted (sd_ns / base_ns; the catalogue's largest is 0.37)
MAX_CV = 3.0
#: Monte Carlo draws of the convolution (a 0.1% quantile error at p1-p99 for a smooth distribution)
DRAWS = 40_000


def fit_service(m, host_ns: np.ndarray, extra_ns: float) -> tuple[float, float | None, list[str]]:
    """``(base_ns, sd_ns, notes)`` of the device for measured latencies ``m``
    (:class:`~scenarios.studies.latency_compare.MeasuredLatencies`) over the simulated host path
    ``host_ns`` (ns per IO); ``extra_ns``: the size term ``per_kib_ns x KiB beyond 4``. ``sd_ns``
    None: nothing in ``m`` gives the spread (the platform's stays)."""
    host_mean = float(host_ns.mean())
    notes: list[str] = []
    if m.samples_ns is not None:
        s = m.mean_ns - host_mean
        var = trimmed_var(m.samples_ns) - trimmed_var(host_ns)
        if var <= 0:
            notes.append("the measured spread is within the simulated host path's: sd_ns fitted as 0")
        return _base(m, s, extra_ns, host_mean), _sd(math.sqrt(max(var, 0.0)) / s, s, extra_ns), notes
    points = [(p, ns) for p, ns in m.table if CENTRAL_PERCENTILES[0] <= p <= CENTRAL_PERCENTILES[1]]
    if len(points) >= 2:
        s, cv = _fit_table(points, host_ns, m.mean_ns)
        if cv >= MAX_CV * 0.999:
            notes.append(f"the measured spread needs a coefficient of variation above {MAX_CV:g}: sd_ns at the bound")
        return _base(m, s, extra_ns, host_mean), _sd(cv, s, extra_ns), notes
    if m.mean_ns is None:
        raise ConfigError(
            f"{m.path}: a percentile table without its mean needs at least two percentiles from"
            f" p{CENTRAL_PERCENTILES[0]:g} to p{CENTRAL_PERCENTILES[1]:g} to calibrate (give samples or fio JSON)"
        )
    s = m.mean_ns - host_mean
    stddev = getattr(m, "stddev_ns", None)
    if not stddev:
        notes.append("no percentiles from p1 to p99 and no stddev: sd_ns is the platform's")
        return _base(m, s, extra_ns, host_mean), None, notes
    var = stddev**2 - float(np.var(host_ns))
    return _base(m, s, extra_ns, host_mean), _sd(math.sqrt(max(var, 0.0)) / s, s, extra_ns), notes


def _base(m, s: float, extra_ns: float, host_mean: float) -> float:
    base = s - extra_ns
    if base <= 0:
        mean = host_mean + s
        raise ConfigError(
            f"{m.path}: the measured mean ({mean / 1e3:.3g} us) is below the simulated host path"
            f" ({host_mean / 1e3:.3g} us) alone on this platform: the host costs are too high for these latencies"
        )
    return base


def _sd(cv: float, s: float, extra_ns: float) -> float:
    """``sd_ns`` of a service of mean ``s`` with coefficient of variation ``cv``: the device scales
    its jitter by ``sd_ns / base_ns`` (``base_ns = s - extra_ns``)."""
    return cv * (s - extra_ns)


def _fit_table(points: list[tuple[float, float]], host_ns: np.ndarray, mean_ns: float | None) -> tuple[float, float]:
    """``(S, cv)`` whose convolution with the host path has the measured percentiles (and mean)."""
    from scipy.optimize import least_squares, minimize_scalar

    rng = np.random.default_rng(20260)  # common random numbers: the same draws for every candidate
    hs = rng.choice(host_ns, DRAWS)
    z = rng.standard_normal(DRAWS)
    pct = np.array([p for p, _ in points]) / 100.0
    target = np.log([ns for _, ns in points])

    def residuals(s: float, cv: float) -> np.ndarray:
        sig2 = math.log1p(cv * cv)
        total = hs + s * np.exp(math.sqrt(sig2) * z - sig2 / 2.0)
        return np.log(np.quantile(total, pct)) - target

    if mean_ns is not None:
        s = mean_ns - float(host_ns.mean())
        if s <= 0:
            return s, 0.0  # refused by the caller, naming the means
        best = minimize_scalar(lambda cv: float(np.sum(residuals(s, cv) ** 2)), bounds=(0.0, MAX_CV), method="bounded")
        return s, float(best.x)
    s0 = max(float(np.exp(np.interp(0.5, pct, target))) - float(np.median(host_ns)), 1.0)
    fit = least_squares(lambda x: residuals(x[0], x[1]), x0=[s0, 0.2], bounds=([1.0, 0.0], [np.inf, MAX_CV]))
    return float(fit.x[0]), float(fit.x[1])


def trimmed_var(x: np.ndarray) -> float:
    """The sample variance of ``x`` without its 0.1% tails on each side (one outlier, a first IO that
    found the CPU in a deep idle state, must not decide the device's spread)."""
    lo, hi = np.quantile(x, (0.001, 0.999))
    kept = x[(x >= lo) & (x <= hi)]
    return float(np.var(kept, ddof=1)) if len(kept) > 1 else 0.0
