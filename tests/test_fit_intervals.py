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
