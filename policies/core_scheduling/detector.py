"""Confidence-interval burst detector (SANDMAN's fine-grained detection).

For each key (a lightweight thread) a count arrives every fine interval (requests that reached its
RX queues, or its busy time). The count is a *burst* when it exceeds the moving average by more
than ``z`` standard errors:

    x_k > m + z * sqrt(v * (1 + 1/n))

where ``m`` and ``v`` are the exponentially weighted mean and variance of the key's past counts
(effective window ``n`` intervals, weight ``2 / (n + 1)``) and ``sqrt(v (1 + 1/n))`` is the standard
error of a new count around an ``n``-sample mean. Intervals with no input are zeros; they are
folded in lazily in closed form when the key is next seen, so an idle key costs nothing:
after ``g`` zeros, ``m <- m b^g`` and ``v <- b^g (v + m^2 (1 - b^g))`` with ``b = 1 - weight``.
"""

from __future__ import annotations

from math import sqrt


class CIDetector:
    """Per-key moving-average +- z standard-error detector over interval counts."""

    __slots__ = ("z", "alpha", "beta", "se2", "m", "v", "k")

    def __init__(self, z: float = 1.96, window: int = 100):
        if window < 1:
            raise ValueError(f"window must be >= 1 interval, got {window}")
        self.z = z
        self.alpha = 2.0 / (window + 1.0)
        self.beta = 1.0 - self.alpha
        self.se2 = 1.0 + self.alpha / (2.0 - self.alpha)  # 1 + 1/n_eff
        self.m: dict = {}
        self.v: dict = {}
        self.k: dict = {}

    def upper(self, key, k: int) -> float:
        """The current upper bound for ``key`` at interval ``k`` (without observing)."""
        m, v = self._aged(key, k)
        return m + self.z * sqrt(v * self.se2)

    def _aged(self, key, k: int) -> tuple[float, float]:
        m = self.m.get(key, 0.0)
        v = self.v.get(key, 0.0)
        last = self.k.get(key, -1)
        g = k - last - 1
        if g > 0 and (m or v):
            bg = self.beta**g
            v = bg * (v + m * m * (1.0 - bg))
            m *= bg
        return m, v

    def update(self, key, k: int, x: float) -> bool:
        """Observe ``x`` for ``key`` in interval ``k`` (increasing); True if it is a burst."""
        m, v = self._aged(key, k)
        flag = x > m + self.z * sqrt(v * self.se2)
        d = x - m
        a = self.alpha
        self.m[key] = m + a * d
        self.v[key] = self.beta * (v + a * d * d)
        self.k[key] = k
        return flag
