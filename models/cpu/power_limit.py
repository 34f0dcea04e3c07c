"""The package's power and current limits (Intel RAPL PL1 and PL2, AMD PPT, TDC and EDC): the
firmware (Intel's PCU, AMD's SMU) sets the cores' frequency ceiling so that each limit's running
average stays under it. Each package (socket) has its own limits and its own control loop (RAPL's
MSR_PKG_POWER_LIMIT is per package): a busy socket is held on its own power while the other one
keeps its clocks.

**The averages.** Every ``power_limit_control_us`` the limiter reads the package's exact energy
over the period (its cores and its uncore, without settling any account) and, for the current
limits, the cores' charge (each core's energy over its voltage at its operating point: the
VDDCR_CPU rail's current, I = P / V). Each limit keeps an exponentially weighted average with its
own time constant: PL1 (``power_limit_w``) over Tau (``power_limit_window_ms``), PL2 (``pl2_w``)
over ``pl2_window_ms``, TDC (``tdc_a``) over ``tdc_window_ms``; EDC (``edc_a``) is a peak limit, over
one control period (weight 1). RAPL's running average is such an exponentially weighted average
over its time window (Intel SDM vol. 3B, "Platform Specific Power Management Support", the
package RAPL domain). The averages start from the package's power before the run
(``power_limit_initial_avg_w``, by default an idle package), not from the first period's power
and not from the limit: a package that starts busy has the whole window's budget to spend.

**The budget.** While an average is below its limit the package may draw more than the limit for
a while: the most it may draw over the next period is the power that brings the average exactly
to the limit at the period's end, ``avg + (limit - avg) / w`` (w: one period's weight). With a
long window that is far above the package's maximum power until the average nears the limit
(turbo above PL1, capped by PL2's own, shorter average); with EDC's weight of 1 it is the limit
itself. Once an average has come within ``HYSTERESIS`` of its limit the limit is *held*: the
allowance is the limit itself (no dithering between two P-states to sit exactly on it), until
the package's demand at its full turbo fits under the limit again.

**The frequency.** The ceiling is not stepped blindly: the limiter predicts each core's power and
current at a candidate ceiling from what it drew over the last period (its leakage at its
frequency scaled by V^2, the rest by V^2 x f: :meth:`CpuConfig.busy_power_w`; a core below its
leakage, mostly idle, keeps its power), and takes the highest frequency of the P-state grid at
which every limit's allowance holds. A package whose demand fits is not throttled at all: its
ceiling is the top frequency (its active-core turbo limit applies on its own). A steady load
settles at one frequency, the highest that fits, without overshoot or limit-cycle chatter; a load
that falls lets the ceiling rise at the next period.

**Skipping ahead.** While no limit binds, the limiter skips the periods that cannot change
anything: it looks again only after the number of periods the first average needs to come near
its limit if the package jumped to its maximum power (current) now (every core busy at the top
frequency with both SMT siblings, plus the active uncore). The averages over a skipped stretch
compound the per-period weight, so a package far below its limits costs a check every few
simulated seconds (every few tens of ms with PL2's short window) instead of every millisecond.
"""

from __future__ import annotations

import math

HYSTERESIS = 0.02  # an average within 2% of its limit holds the package at the limit itself
QUIET_MAX = 1_000_000  # a limit that can never be reached: look once per 10^6 periods (1000 s at 1 ms)


class _Average:
    """One limit's exponentially weighted running average: ``kind`` "power" (W) or "current" (A)."""

    __slots__ = ("name", "kind", "limit", "alpha", "avg", "held")

    def __init__(self, name: str, kind: str, limit: float, window_ns: float, period_ns: float, start: float):
        self.name = name
        self.kind = kind
        self.limit = limit
        self.alpha = min(1.0, period_ns / window_ns)  # one period's weight
        self.avg = start
        self.held = False

    def fold(self, value: float, periods: float) -> None:
        """Fold the mean ``value`` over ``periods`` control periods into the average."""
        w = 1.0 if self.alpha >= 1.0 else 1.0 - (1.0 - self.alpha) ** periods
        self.avg += w * (value - self.avg)
        if self.avg >= self.limit * (1.0 - HYSTERESIS):
            self.held = True

    def allowance(self) -> float:
        """The most the package may draw over the next period."""
        if self.held or self.alpha >= 1.0:
            return self.limit
        return self.avg + (self.limit - self.avg) / self.alpha

    def quiet_periods(self, peak: float) -> float:
        """Periods before this average could come near its limit at ``peak`` (W or A)."""
        if peak <= self.limit * (1.0 - HYSTERESIS):
            return QUIET_MAX
        if self.alpha >= 1.0 or self.held:
            return 1
        # the allowance falls to the peak once avg >= (limit - alpha x peak) / (1 - alpha); the hold
        # starts at (1 - HYSTERESIS) x limit: whichever comes first
        near = min((self.limit - self.alpha * peak) / (1.0 - self.alpha), self.limit * (1.0 - HYSTERESIS))
        if self.avg >= near:
            return 1
        return max(1.0, math.log((peak - near) / (peak - self.avg)) / math.log(1.0 - self.alpha))


class PowerLimiter:
    """Drives the power ceiling (``Package.set_ceiling``) of one package (``sock``) from that
    package's running averages of power (its cores and its uncore) and of the cores' current."""

    def __init__(self, pkg, engine, sock):
        cfg = pkg.cfg
        self.pkg = pkg
        self.sock = sock
        self.engine = engine
        self.limit_w = cfg.power_limit_w
        self.period_ns = cfg.power_limit_control_us * 1e3
        period = self.period_ns
        start_w = cfg.idle_package_w if cfg.power_limit_initial_avg_w is None else cfg.power_limit_initial_avg_w
        start_a = max(0.0, start_w - cfg.uncore_idle_w) / cfg.voltage_at_min_v  # idle cores' current (estimate)
        self.averages: list[_Average] = [
            _Average("pl1", "power", cfg.power_limit_w, cfg.power_limit_window_ms * 1e6, period, start_w)
        ]
        if cfg.pl2_w is not None:
            self.averages.append(_Average("pl2", "power", cfg.pl2_w, cfg.pl2_window_ms * 1e6, period, start_w))
        if cfg.tdc_a is not None:
            self.averages.append(_Average("tdc", "current", cfg.tdc_a, cfg.tdc_window_ms * 1e6, period, start_a))
        if cfg.edc_a is not None:
            self.averages.append(_Average("edc", "current", cfg.edc_a, period, period, start_a))
        self.step = cfg.pstate_step_ghz
        top = cfg.top_freq_ghz
        #: the P-state grid the ceiling takes, lowest first: pstate_step_ghz steps from the lowest, the
        #: base clock and the top
        n = max(0, int(math.floor((top - cfg.min_freq_ghz) / self.step + 1e-9)))
        grid = [round(cfg.min_freq_ghz + i * self.step, 9) for i in range(n + 1)]
        # the base clock is a P-state of its own even off the grid (AMD's P0 at 2.45 GHz on a 7763)
        grid = sorted(set(grid) | {top} | ({cfg.base_freq_ghz} if cfg.base_freq_ghz < top else set()))
        self.grid = grid
        top_activity = max(cfg.activity.values()) * (1.0 + (cfg.smt_second_thread_activity if cfg.smt else 0.0))
        core_max_w = cfg.busy_power_w(top, top_activity)
        #: the package's highest possible power, W, and its cores' highest current, A (bound how fast
        #: the averages can rise)
        self.max_w = cfg.physical_cores * core_max_w + cfg.uncore_active_w
        self.max_a = cfg.physical_cores * core_max_w / cfg.voltage_v(top)
        self.cores = list(sock.cores)
        self._curves: dict[float, tuple[float, float, float]] = {}
        self._e = [0.0] * len(self.cores)
        self._g = [c.curve_ns_at(0.0) for c in self.cores]
        self._eu = 0.0
        self._t = 0.0
        self._held_by = ""  # the limit that set the ceiling last
        # statistics: integral of the ceiling and time below the top frequency (up to _stat_t), and
        # the throttled time by the limit that bound
        self.ceiling_ghz_ns = 0.0
        self.throttled_ns = 0.0
        self.bound_ns: dict[str, float] = {}
        self._stat_t = 0.0
        self.adjustments = 0
        engine.call_in(self.period_ns, self._control)

    def stats_at(self, now: float) -> tuple[float, float]:
        """(integral of the ceiling in GHz x ns, time throttled in ns) up to ``now``."""
        dt = now - self._stat_t
        ceil = self.sock.power_ceiling_ghz
        return (self.ceiling_ghz_ns + ceil * dt, self.throttled_ns + (dt if ceil < self.pkg.cfg.top_freq_ghz else 0.0))

    def bound_at(self, now: float) -> dict[str, float]:
        """Time throttled by each limit (pl1, pl2, tdc, edc), ns, up to ``now``."""
        out = dict(self.bound_ns)
        if self.sock.power_ceiling_ghz < self.pkg.cfg.top_freq_ghz:
            out[self._held_by] = out.get(self._held_by, 0.0) + now - self._stat_t
        return out

    # ---------------------------------------------------------------------------------- the loop
    def _read(self, now: float) -> tuple[list[tuple[float, float, float]], float, float]:
        """Each core's (mean power, mean leakage coefficient, mean dynamic coefficient) over the
        time since the last reading (W: the coefficients of its busy power at the frequencies it
        ran at, :meth:`PhysicalCore.curve_ns_at`), the uncore's mean power (W), and the length of
        that time (ns)."""
        gap = now - self._t
        scale = 1.0 / (gap * 1e-9)
        cores = []
        for i, c in enumerate(self.cores):
            e = c.energy_at(now)
            lk, dy = c.curve_ns_at(now)
            lk0, dy0 = self._g[i]
            cores.append(((e - self._e[i]) * scale, (lk - lk0) / gap, (dy - dy0) / gap))
            self._e[i] = e
            self._g[i] = (lk, dy)
        eu = self.sock.uncore_energy_at(now)
        uncore = (eu - self._eu) * scale
        self._eu = eu
        self._t = now
        return cores, uncore, gap

    def _control(self) -> None:
        now = self.engine.now
        powers, uncore, gap = self._read(now)
        freqs = [c.freq_ghz for c in self.cores]
        p_now = uncore + sum(p for p, _l, _d in powers)
        a_now = sum(p / self._curve(f)[2] for (p, _l, _d), f in zip(powers, freqs))
        periods = gap / self.period_ns
        for av in self.averages:
            av.fold(p_now if av.kind == "power" else a_now, periods)
        ceiling, bound = self._fit(powers, freqs, uncore)
        self._release(powers, freqs, uncore)
        if ceiling != self.sock.power_ceiling_ghz:
            self.ceiling_ghz_ns, self.throttled_ns = self.stats_at(now)
            self.bound_ns = self.bound_at(now)
            self._stat_t = now
            self._held_by = bound
            self.adjustments += 1
            self.pkg.set_ceiling(now, ceiling, self.sock)
        elif bound and bound != self._held_by:
            self.bound_ns = self.bound_at(now)
            self.ceiling_ghz_ns, self.throttled_ns = self.stats_at(now)
            self._stat_t = now
            self._held_by = bound
        self.engine.call_in(self.period_ns * self._quiet_periods(), self._control)

    def _curve(self, ghz: float) -> tuple[float, float, float]:
        """(leakage W, dynamic W at activity 1, voltage V) of one busy core at ``ghz`` (cached)."""
        got = self._curves.get(ghz)
        if got is None:
            cfg = self.pkg.cfg
            leak = cfg.busy_power_w(ghz, 0.0)
            got = (leak, cfg.busy_power_w(ghz, 1.0) - leak, cfg.voltage_v(ghz))
            self._curves[ghz] = got
        return got

    def _predict(self, powers, freqs: list[float], uncore: float, ceiling: float) -> tuple[float, float]:
        """The package's power (W) and its cores' current (A) if the ceiling were ``ceiling``: each
        core at min(its request, the turbo limit, ``ceiling``). A core's power over the last period
        is its leakage coefficient plus its mean activity times its dynamic coefficient, both
        averaged over the frequencies it ran at (so a transition within the period is no error):
        at the new frequency it is that activity times the new coefficients. A core below its
        leakage (mostly idle) keeps its power."""
        turbo = self.sock.turbo_ghz
        watts = uncore
        amps = 0.0
        for c, (p, leak, dyn), f in zip(self.cores, powers, freqs):
            g = min(c.requested_ghz, turbo, ceiling)
            leak_g, dyn_g, volt_g = self._curve(g)
            if p > leak and dyn > 0:
                p = leak_g + (p - leak) * dyn_g / dyn
            watts += p
            amps += p / volt_g
        return watts, amps

    def _fits(self, powers, freqs, uncore, ceiling: float) -> str:
        """The first limit whose allowance ``ceiling`` would break ("" if none)."""
        watts, amps = self._predict(powers, freqs, uncore, ceiling)
        for av in self.averages:
            if (watts if av.kind == "power" else amps) > av.allowance() + 1e-9:
                return av.name
        return ""

    def _fit(self, powers, freqs, uncore) -> tuple[float, str]:
        """The highest ceiling of the grid at which every allowance holds (the top frequency when the
        package's demand fits), and the limit that stops the next step up ("" if none binds). The
        search starts at the ceiling in force (a steady load finds it again in two predictions)."""
        grid = self.grid
        last = len(grid) - 1
        broken = self._fits(powers, freqs, uncore, grid[last])
        if not broken:
            return grid[last], ""
        cur = self.sock.power_ceiling_ghz
        i = min(last - 1, max(0, sum(1 for g in grid if g <= cur + 1e-9) - 1))
        why = self._fits(powers, freqs, uncore, grid[i])
        if not why:  # fits here: go up while the next one fits
            while i + 1 < last:
                up = self._fits(powers, freqs, uncore, grid[i + 1])
                if up:
                    return grid[i], up
                i += 1
            return grid[i], broken
        while i > 0:  # too much here: go down until one fits
            i -= 1
            below = self._fits(powers, freqs, uncore, grid[i])
            if not below:
                return grid[i], why
            why = below
        return grid[0], why

    def _release(self, powers, freqs, uncore) -> None:
        """A held limit lets go once the package's demand at the top frequency fits under it."""
        if not any(av.held for av in self.averages):
            return
        watts, amps = self._predict(powers, freqs, uncore, self.grid[-1])
        for av in self.averages:
            if av.held and (watts if av.kind == "power" else amps) <= av.limit * (1.0 - HYSTERESIS):
                av.held = False

    def _quiet_periods(self) -> int:
        """Periods until the next check: 1 while a limit binds or is held, else the fewest periods
        any average needs to come near its limit at the package's maximum power (current)."""
        if self.sock.power_ceiling_ghz < self.pkg.cfg.top_freq_ghz:
            return 1
        n = min(av.quiet_periods(self.max_w if av.kind == "power" else self.max_a) for av in self.averages)
        return max(1, int(min(n, QUIET_MAX)))


def limit_reading(pkg, now: float) -> list[tuple[float, float, int, dict]] | None:
    """Cumulative counters of each package's limiter at ``now`` (None without a power limit)."""
    if pkg.limiter is None:
        return None
    out = []
    for lim in pkg.limiter:
        ceil_ns, throttled_ns = lim.stats_at(now)
        out.append((ceil_ns, throttled_ns, lim.adjustments, lim.bound_at(now)))
    return out


def limit_summary(pkg, a, b, dur_ns: float) -> dict:
    """What the power limits did between two :func:`limit_reading` snapshots: the limit of one
    package, the time-averaged throttled fraction and ceiling over the packages, the adjustments of
    all, and with several packages each one's (``per_package``). When a package was throttled,
    ``limited_by`` splits the throttled fraction by the limit that bound (pl1, pl2, tdc, edc)."""
    per = []
    for x, y in zip(a, b):
        one = {
            "throttled_fraction": (y[1] - x[1]) / dur_ns,
            "ceiling_ghz_mean": (y[0] - x[0]) / dur_ns,
            "adjustments": y[2] - x[2],
        }
        by = {k: (y[3].get(k, 0.0) - x[3].get(k, 0.0)) / dur_ns for k in sorted(set(x[3]) | set(y[3]))}
        by = {k: v for k, v in by.items() if v > 0}
        if by:
            one["limited_by"] = by
        per.append(one)
    out = {
        "limit_w": pkg.limiter[0].limit_w,
        "throttled_fraction": sum(p["throttled_fraction"] for p in per) / len(per),
        "ceiling_ghz_mean": sum(p["ceiling_ghz_mean"] for p in per) / len(per),
        "adjustments": sum(p["adjustments"] for p in per),
    }
    names = sorted({k for p in per for k in p.get("limited_by", {})})
    if names:
        out["limited_by"] = {k: sum(p.get("limited_by", {}).get(k, 0.0) for p in per) / len(per) for k in names}
    if len(per) > 1:
        out["per_package"] = per
    return out


def format_limit(summary: dict) -> str | None:
    """One terminal line when the power limit throttled the cores (None otherwise)."""
    pl = summary.get("cpu_power_limit")
    if not pl or pl["throttled_fraction"] <= 0:
        return None
    by = pl.get("limited_by") or {}
    why = ", ".join(f"{k.upper()} {100 * v:.0f}%" for k, v in by.items())
    return (
        f"  CPU power limit {pl['limit_w']:.0f} W per package: throttled"
        f" {100 * pl['throttled_fraction']:.0f}% of the time{f' ({why})' if why else ''},"
        f" frequency ceiling {pl['ceiling_ghz_mean']:.2f} GHz on average"
    )
