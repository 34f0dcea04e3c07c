"""The package power limit (Intel RAPL PL1, AMD PPT): firmware lowers the cores' frequency
ceiling while the package's running-average power is above the limit. Each package (socket) has its
own limit and its own control loop (RAPL's MSR_PKG_POWER_LIMIT is per package): a busy socket is
throttled on its own power while the other one keeps its clocks.

Every ``power_limit_control_us`` the limiter takes the package's exact average power over the
period (its energy integral), folds it into an exponentially weighted average with time constant
``power_limit_window_ms`` (RAPL's PL1 time window; AMD enforces PPT within about a millisecond),
and moves the package-wide frequency ceiling one P-state step (``pstate_step_ghz``) down while the
average exceeds ``power_limit_w``, one step up while it is below (1 - hysteresis) x the limit.
Each core runs at min(its governor's request, the ceiling), reached through the normal P-state
transition. Short bursts above the limit (PL2, boost budgets) are not modelled separately: the
averaging window plays their part.

While the ceiling is at the top frequency and the average is below the limit, the limiter skips
the checks that cannot change anything: it looks again only after the number of periods the
average would need to reach the limit if the package jumped to its maximum power now (every core
busy at the top frequency with both SMT siblings, plus the active uncore). The average over a
skipped stretch compounds the per-period weight, so a package that stays far below its limit
costs a check every few simulated seconds instead of every millisecond.
"""

from __future__ import annotations

import math

HYSTERESIS = 0.02  # raise the ceiling again only below 98% of the limit (no step-by-step chatter)


class PowerLimiter:
    """Drives ``Package.set_ceiling`` of one package (``sock``) from that package's running-average
    power (its cores and its uncore)."""

    def __init__(self, pkg, engine, sock):
        cfg = pkg.cfg
        self.pkg = pkg
        self.sock = sock
        self.engine = engine
        self.limit_w = cfg.power_limit_w
        self.period_ns = cfg.power_limit_control_us * 1e3
        self.alpha = min(1.0, self.period_ns / (cfg.power_limit_window_ms * 1e6))
        self.step = cfg.pstate_step_ghz
        top_activity = max(cfg.activity.values()) * (1.0 + (cfg.smt_second_thread_activity if cfg.smt else 0.0))
        #: the package's highest possible power, W (bounds how fast the average can rise)
        self.max_w = cfg.physical_cores * cfg.busy_power_w(cfg.top_freq_ghz, top_activity) + cfg.uncore_active_w
        self.avg_w: float | None = None
        self._e = 0.0
        self._t = 0.0
        # statistics: integral of the ceiling and time below the top frequency (up to _stat_t)
        self.ceiling_ghz_ns = 0.0
        self.throttled_ns = 0.0
        self._stat_t = 0.0
        self.adjustments = 0
        engine.call_in(self.period_ns, self._control)

    def stats_at(self, now: float) -> tuple[float, float]:
        """(integral of the ceiling in GHz x ns, time throttled in ns) up to ``now``."""
        dt = now - self._stat_t
        ceil = self.sock.ceiling_ghz
        return (self.ceiling_ghz_ns + ceil * dt, self.throttled_ns + (dt if ceil < self.pkg.cfg.top_freq_ghz else 0.0))

    def _control(self) -> None:
        pkg = self.pkg
        now = self.engine.now
        pkg.settle(now)
        e = pkg.socket_energy_j(self.sock.index)
        gap = now - self._t
        p = (e - self._e) / (gap * 1e-9)
        self._e, self._t = e, now
        if self.avg_w is None:
            self.avg_w = p
        else:  # the per-period weight, compounded over the periods since the last check
            w = 1.0 - (1.0 - self.alpha) ** (gap / self.period_ns)
            self.avg_w += w * (p - self.avg_w)
        cfg = pkg.cfg
        ceiling = self.sock.ceiling_ghz
        if self.avg_w > self.limit_w and ceiling > cfg.min_freq_ghz:
            ceiling = max(cfg.min_freq_ghz, round(ceiling - self.step, 9))
        elif self.avg_w < self.limit_w * (1.0 - HYSTERESIS) and ceiling < cfg.top_freq_ghz:
            ceiling = min(cfg.top_freq_ghz, round(ceiling + self.step, 9))
        if ceiling != self.sock.ceiling_ghz:
            self.ceiling_ghz_ns, self.throttled_ns = self.stats_at(now)
            self._stat_t = now
            self.adjustments += 1
            pkg.set_ceiling(now, ceiling, self.sock)
        self.engine.call_in(self.period_ns * self._quiet_periods(ceiling), self._control)

    def _quiet_periods(self, ceiling: float) -> int:
        """Periods until the next check: 1 while throttled or near the limit, else the number of
        periods the average needs to reach the limit at the package's maximum power."""
        keep = 1.0 - self.alpha
        if ceiling < self.pkg.cfg.top_freq_ghz or self.avg_w >= self.limit_w * (1.0 - HYSTERESIS) or keep <= 0.0:
            return 1
        if self.max_w <= self.limit_w:
            return 1_000_000  # the limit can never be reached: look once per 1000 s at most
        n = math.log((self.max_w - self.limit_w) / (self.max_w - self.avg_w)) / math.log(keep)
        return max(1, int(n))


def limit_reading(pkg, now: float) -> list[tuple[float, float, int]] | None:
    """Cumulative counters of each package's limiter at ``now`` (None without a power limit)."""
    if pkg.limiter is None:
        return None
    out = []
    for lim in pkg.limiter:
        ceil_ns, throttled_ns = lim.stats_at(now)
        out.append((ceil_ns, throttled_ns, lim.adjustments))
    return out


def limit_summary(pkg, a, b, dur_ns: float) -> dict:
    """What the power limits did between two :func:`limit_reading` snapshots: the limit of one
    package, the time-averaged throttled fraction and ceiling over the packages, the adjustments of
    all, and with several packages each one's (``per_package``)."""
    per = [
        {
            "throttled_fraction": (y[1] - x[1]) / dur_ns,
            "ceiling_ghz_mean": (y[0] - x[0]) / dur_ns,
            "adjustments": y[2] - x[2],
        }
        for x, y in zip(a, b)
    ]
    out = {
        "limit_w": pkg.limiter[0].limit_w,
        "throttled_fraction": sum(p["throttled_fraction"] for p in per) / len(per),
        "ceiling_ghz_mean": sum(p["ceiling_ghz_mean"] for p in per) / len(per),
        "adjustments": sum(p["adjustments"] for p in per),
    }
    if len(per) > 1:
        out["per_package"] = per
    return out


def format_limit(summary: dict) -> str | None:
    """One terminal line when the power limit throttled the cores (None otherwise)."""
    pl = summary.get("cpu_power_limit")
    if not pl or pl["throttled_fraction"] <= 0:
        return None
    return (
        f"  CPU power limit {pl['limit_w']:.0f} W per package: throttled"
        f" {100 * pl['throttled_fraction']:.0f}% of the time,"
        f" frequency ceiling {pl['ceiling_ghz_mean']:.2f} GHz on average"
    )
