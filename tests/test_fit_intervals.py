"""A fit's 95% intervals stay within the parameters' bounds (issue 46 blocker 3): the Jacobian's
where it holds, the profile of the sum of squares where it reaches past a bound, and, when there is
no profile (a search cut short, a study that does not pay for one), the Jacobian's cut at the bounds."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from scenarios.studies import fitting

NOISE = np.array([0.01, -0.01, 0.02, -0.02])  # sums to 0: the least-squares solution is exact


def weak(x: dict[str, float]) -> np.ndarray:
    """Four observations that hardly depend on p (true 2000): a wide interval."""
    return 1e-5 * (x["p"] - 2000.0) + NOISE


def test_a_weakly_identified_parameter_gets_its_profile_cut_at_the_bound():
    res = fitting.fit(["p"], [2500.0], [(1000.0, 10000.0)], weak, check_identifiable=False)
    assert res.values["p"] == pytest.approx(2000.0, abs=1.0)
    assert res.ci_method == {"p": "profile"}
    lo, hi = res.ci95["p"]
    # the Jacobian's interval, 2000 -/+ 2906, reaches below the bound; the profile stops at it
    assert lo == 1000.0
    # on a linear model the profile's other end is the Jacobian's: (p - 2000)^2 x 4e-10 = SSR x F / 3
    ssr = float(NOISE @ NOISE)
    half = math.sqrt(ssr * stats.f.ppf(0.95, 1, 3) / 3 / 4e-10)
    assert hi == pytest.approx(2000.0 + half, abs=fitting.PROFILE_XTOL * 9000 + 1)


def test_a_profile_follows_the_curvature_a_linearisation_misses():
    """y = a exp(-b t), b >= 0: a decay barely seen, whose Jacobian interval goes below zero."""
    t = np.array([0.0, 1.0, 2.0, 3.0, 4.0, 5.0])
    y = 2.0 * np.exp(-0.02 * t) + np.array([0.08, -0.1, 0.05, 0.1, -0.09, -0.04])

    def res_fn(x):
        return x["a"] * np.exp(-x["b"] * t) / y - 1.0

    res = fitting.fit(["a", "b"], [1.5, 0.5], [(0.1, 10.0), (0.0, 2.0)], res_fn, check_identifiable=False)
    for name, (lo_b, hi_b) in {"a": (0.1, 10.0), "b": (0.0, 2.0)}.items():
        lo, hi = res.ci95[name]
        assert lo_b <= lo <= res.values[name] <= hi <= hi_b
    assert res.ci_method["b"] == "profile" and res.ci95["b"][0] == 0.0
    assert res.ci95["b"][1] < 0.2  # the profile closes well inside the range (upper bound 2)


def test_a_well_identified_fit_keeps_the_jacobians_interval():
    res = fitting.fit(["p"], [2500.0], [(1000.0, 10000.0)], lambda x: 1e-3 * (x["p"] - 2000.0) + NOISE)
    assert res.ci_method == {"p": "linear"}
    lo, hi = res.ci95["p"]
    assert 1000.0 < lo < 2000.0 < hi < 3000.0


def test_without_a_profile_the_interval_is_cut_at_the_bounds():
    for kw in ({"profile": False}, {"max_iterations": 1}):
        res = fitting.fit(["p"], [2500.0], [(1000.0, 10000.0)], weak, check_identifiable=False, **kw)
        assert res.ci_method == {"p": "clipped"}
        lo, hi = res.ci95["p"]
        assert lo == 1000.0 and hi <= 10000.0


def test_a_linear_profile_is_the_covariances_interval_until_a_bound_cuts_it():
    """Weighted y = b0 + b1 x, both at least 0: far from the bounds the profile interval is the
    covariance's b +- half exactly; with b1's near 0 and a wide error its lower end is the bound 0
    and b0's interval stays above 0 too."""
    X = np.column_stack([np.ones(4), np.array([0.0, 4.0, 12.0, 28.0])])
    w = np.array([1.0, 1.0, 1.0, 1.0])
    y = 5000.0 + 300.0 * X[:, 1] + np.array([10.0, -20.0, 15.0, -5.0])
    beta = np.linalg.lstsq(X, y, rcond=None)[0]
    for i in (0, 1):
        lo, hi = fitting.linear_profile_interval(X, y, w, i, [0.0, 0.0], 50.0)
        assert (lo, hi) == pytest.approx((beta[i] - 50.0, beta[i] + 50.0), abs=0.2)
    flat = 5000.0 + 2.0 * X[:, 1] + np.array([400.0, -600.0, 500.0, -300.0])
    b1 = np.linalg.lstsq(X, flat, rcond=None)[0][1]
    lo, hi = fitting.linear_profile_interval(X, flat, w, 1, [0.0, 0.0], 80.0)
    assert b1 - 80.0 < 0.0 and lo == 0.0 and hi > max(b1, 0.0)
    low = fitting.linear_profile_interval(X, flat, w, 0, [0.0, 0.0], 1e5)
    assert low[0] == 0.0 < low[1]


class _Stat:
    def __init__(self, n, var_of_var=0.0):
        self.n, self.var_of_var = n, var_of_var


class _Class:
    """What trace_calibrate's per-class fit reads of a class (measured minus host path)."""

    def __init__(self, kib, mean_ns, se_ns, sd_ns, n=40):
        self.extra_kib, self.service_mean_ns, self.mean_se2 = max(kib - 4, 0), mean_ns, se_ns**2
        self.service_var, self.label = sd_ns**2, f"{kib}k"
        self.measured, self.host = _Stat(n, (sd_ns**2) ** 2 * 40), _Stat(n)


def test_trace_calibrations_intervals_respect_the_devices_bounds():
    """Issue 46: calibrate --trace's intervals crossed the parameters' bounds (base_ns > 0,
    per_kib_ns and sd_ns >= 0). A per-KiB part barely seen and a noisy short base: every interval
    within the bounds; a well-measured direction keeps the covariance's symmetric interval."""
    from scenarios.studies.trace_calibrate import _fit_direction

    current = {"ssd.read.per_kib_ns": 100.0}
    noisy = [_Class(4, 900.0, 700.0, 3000.0), _Class(64, 950.0, 900.0, 3000.0), _Class(128, 880.0, 900.0, 3000.0)]
    values, ci, _, _ = _fit_direction("read", noisy, current, 2.0)
    for key, (lo, hi) in ci.items():
        assert 0.0 <= lo <= max(values[key], 0.0) <= hi, (key, lo, hi, values[key])
    assert ci["ssd.read.per_kib_ns"][0] == 0.0 and ci["ssd.read.base_ns"][0] == 0.0
    one = [_Class(4, 900.0, 700.0, 3000.0)]
    values, ci, _, _ = _fit_direction("read", one, current, 2.0)
    assert ci["ssd.read.base_ns"][0] == 0.0 < values["ssd.read.base_ns"] < ci["ssd.read.base_ns"][1]
    sharp = [_Class(4, 6000.0, 20.0, 500.0), _Class(64, 24000.0, 30.0, 500.0), _Class(128, 43000.0, 40.0, 500.0)]
    values, ci, _, _ = _fit_direction("read", sharp, current, 2.0)
    lo, hi = ci["ssd.read.base_ns"]
    assert lo > 0.0 and (lo + hi) / 2 == pytest.approx(values["ssd.read.base_ns"])
