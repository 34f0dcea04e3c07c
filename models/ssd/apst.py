"""Autonomous power state transitions (APST): an idle NVMe controller steps down into
non-operational power states by itself and pays the state's exit latency when a command arrives.

The host programs the transitions (Linux 5.15 ``nvme_configure_apst``, module parameters in
:class:`~models.ssd.config.ApstConfig`): of the non-operational states whose ENLAT + EXLAT is at most
``ps_max_latency_us``, the deepest one within ``primary_latency_tol_us`` (15 ms) is the *primary*
target, entered after ``primary_timeout_ms`` (100 ms) of idleness, and the deepest one within
``secondary_latency_tol_us`` (100 ms) but beyond the primary tolerance is the *secondary* target,
entered after a further ``secondary_timeout_ms`` (2 s) in the primary state (directly after
``secondary_timeout_ms`` if there is no primary).

The controller is idle when no command is in it and its media units are done (a flash write
cache may still be programming after the last completion). An idle period is computed
analytically when it ends: the next command's fetch waits for the current transition to finish and
for the exit (ENLAT remainder + EXLAT inside an entry, EXLAT in a state). Power in a state is its
``power_w``; during entry and exit transitions the idle power (``idle_w``) is charged.
"""

from __future__ import annotations

from models.ssd.config import DeviceConfig


def apst_steps(cfg: DeviceConfig) -> list[tuple[float, object]]:
    """The programmed transitions as (idle ns spent in the previous state before it, state),
    shallowest first: at most a primary and a secondary target."""
    a = cfg.apst
    if not a.enabled or not cfg.power_states:
        return []
    usable = [ps for ps in cfg.power_states if (ps.entry_latency_ns + ps.exit_latency_ns) / 1e3 <= a.ps_max_latency_us]
    primary = secondary = None
    for ps in reversed(usable):  # deepest first, as the kernel walks them
        total_us = (ps.entry_latency_ns + ps.exit_latency_ns) / 1e3
        if total_us <= a.primary_latency_tol_us:
            primary = primary or ps
        elif a.secondary_timeout_ms and total_us <= a.secondary_latency_tol_us and primary is None:
            secondary = secondary or ps
    steps = []
    if primary is not None:
        steps.append((a.primary_timeout_ms * 1e6, primary))
    if secondary is not None:
        steps.append((a.secondary_timeout_ms * 1e6, secondary))
    return steps


class ApstState:
    """One device's APST bookkeeping: commands in the device, the current idle period, the energy
    credit (J below idle power) and residency of closed idle periods."""

    def __init__(self, cfg: DeviceConfig, steps: list[tuple[float, object]]):
        self.idle_w = cfg.idle_w
        # per step: (enters at [ns after the idle start], entered at, its state)
        self.phases = []
        t = 0.0
        for wait_ns, ps in steps:
            t += wait_ns
            self.phases.append((t, t + ps.entry_latency_ns, ps))
            t += ps.entry_latency_ns
        self.in_device = 0
        self.idle_since: float | None = 0.0  # the device starts idle at t = 0
        self.awake_at = 0.0  # the end of the last wake-up (commands wait for it)
        self.credit_j = 0.0
        self.residency_ns = {ps.name: 0.0 for _w, ps in steps}
        self.wakeups = {ps.name: 0 for _w, ps in steps}

    def _residency(self, idle_ns: float) -> list[tuple[object, float]]:
        """(state, ns spent fully in it) over the first ``idle_ns`` of an idle period."""
        out = []
        for k, (_start, entered, ps) in enumerate(self.phases):
            if idle_ns <= entered:
                break
            leave = self.phases[k + 1][0] if k + 1 < len(self.phases) else float("inf")
            out.append((ps, min(idle_ns, leave) - entered))
        return out

    def _credit(self, idle_ns: float) -> float:
        return sum((self.idle_w - ps.power_w) * ns * 1e-9 for ps, ns in self._residency(idle_ns))

    def on_submit(self, now: float) -> float:
        """A command reaches the controller at ``now``; returns when it can be fetched (>= now)."""
        since = self.idle_since
        self.in_device += 1
        if since is not None:
            self.idle_since = None
            idle = now - since
            if idle > 0:
                for ps, ns in self._residency(idle):
                    self.residency_ns[ps.name] += ns
                self.credit_j += self._credit(idle)
                wake = 0.0
                for start, entered, ps in reversed(self.phases):
                    if idle >= start:  # in this state, or entering it: finish the entry, then exit
                        wake = max(0.0, since + entered - now) + ps.exit_latency_ns
                        self.wakeups[ps.name] += 1
                        break
                if now + wake > self.awake_at:
                    self.awake_at = now + wake
        return self.awake_at if self.awake_at > now else now

    def on_complete(self, now: float, media_free_at: float) -> None:
        """A command left the controller; with none left it is idle once its media units are."""
        self.in_device -= 1
        if self.in_device == 0:
            self.idle_since = media_free_at if media_free_at > now else now

    def credit_j_at(self, now: float) -> float:
        """Energy below idle power so far (closed idle periods plus the current one), J."""
        since = self.idle_since
        if since is None or now <= since:
            return self.credit_j
        return self.credit_j + self._credit(now - since)

    def residency_ns_at(self, now: float) -> dict[str, float]:
        out = dict(self.residency_ns)
        since = self.idle_since
        if since is not None and now > since:
            for ps, ns in self._residency(now - since):
                out[ps.name] += ns
        return out
