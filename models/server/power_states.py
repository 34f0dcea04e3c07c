"""The storage server's power states: every logical CPU's state change at the simulated time it
happens (:meth:`LogicalCpu.set_busy` / :meth:`set_idle`, an engine event when it lies in the
future), its span on the timeline, the energy and C0 accounts, a hybrid sleep stretch's energy
correction, and the counters a run's statistics are differences of (:meth:`PowerStates.snapshot`).

A part of :class:`models.server.target.Server` (a base class of it: the methods read the fields
its ``__init__`` sets).
"""

from __future__ import annotations

from models.cpu.power_limit import limit_reading
from models.server.reactor import Reactor
from models.ssd.energy import ssd_reading
from simcore.tracing import CPU_PID

#: timeline track of logical CPU i's power state: thread STATE_TID + i of the "CPUs" process
STATE_TID = 10_000


class PowerStates:
    """Power states, energy accounts and snapshots of a :class:`~models.server.target.Server`."""

    def _apply(self, cpu_id: int, value: float) -> None:
        """Logical CPU ``cpu_id`` changes state now: ``value >= 0`` busy at that activity, else idle
        in C-state ``-1 - value``."""
        now = self.engine.now
        cpu = self.cpus[cpu_id]
        if value >= 0:
            cpu.set_busy(now, value)
        else:
            cpu.set_idle(now, -1 - int(value))
        if self.tracer is not None:
            self._trace_state(cpu_id, now, value)

    def _state_label(self, value: float) -> str:
        if value < 0:
            return self.ccfg.cstates[-1 - int(value)].name
        if value == self.act_poll:
            return "C0 polling"
        return "C0 kernel" if value == self.act_kernel else "C0 processing"

    def _trace_state(self, cpu_id: int, now: float, value) -> None:
        """Close ``cpu_id``'s current power-state span at ``now``; open the next (``value`` None: none)."""
        label = None if value is None else self._state_label(value)
        prev = self._tr_state[cpu_id]
        if prev is not None:
            if prev[1] == label:
                return  # the same state goes on
            if now > prev[0] and self.tracer.wants(prev[0], now):
                self.tracer.name_track(CPU_PID, STATE_TID + cpu_id, f"cpu{cpu_id} power state")
                self.tracer.span(CPU_PID, STATE_TID + cpu_id, prev[1], prev[0], now - prev[0], "power state")
        self._tr_state[cpu_id] = None if label is None else (now, label)

    def trace_finish(self, now: float) -> None:
        """Close the open power-state spans of the timeline at ``now`` (the end of the run)."""
        if self.tracer is not None:
            for i in range(len(self.cpus)):
                self._trace_state(i, now, None)

    def set_state(self, cpu_id: int, t: float, value: float) -> None:
        """:meth:`_apply` at time ``t`` (>= now): directly, or as an engine event."""
        if t <= self.engine.now:
            self._apply(cpu_id, value)
        else:
            self.engine.call_at(t, self._apply, cpu_id, value)

    def settle(self, now: float) -> None:
        """Integrate every energy and C0 account up to ``now``."""
        self.pkg.settle(now)
        self.pkg.settle_c0(now)

    def cpu_energy_j(self) -> float:
        return self.pkg.energy_j() + self.corr_j

    def _hyb_correction(self, r: Reactor, c0_ns: float) -> None:
        """Energy of ``c0_ns`` of wake/poll windows inside a hybrid sleep stretch (the Package holds
        the sleep state for the whole stretch)."""
        if c0_ns <= 0:
            return
        core = r.pcore
        cfg = self.ccfg
        f = core.freq_ghz
        a = self.act_poll
        pkg = self.pkg
        if core.c0n:  # the sibling is running: only the second thread's share
            dw = cfg.busy_power_w(f, a * (1.0 + cfg.smt_second_thread_activity)) - cfg.busy_power_w(f, a)
        else:
            dw = cfg.busy_power_w(f, a) - cfg.cstates[r.cpu.cstate].power_w
            pkg.c0_core_ns += c0_ns
            pkg.c0_core_ghz_ns += c0_ns * f
        pkg.c0_cpu_ns += c0_ns
        pkg.c0_cpu_ghz_ns += c0_ns * f
        self.corr_j += dw * c0_ns * 1e-9

    def snapshot(self) -> dict:
        """Cumulative counters at the current time (statistics are differences of snapshots)."""
        now = self.engine.now
        self.settle(now)
        busy = sum(c.busy_ns for c in self.cpus)
        ncs = len(self.ccfg.cstates)
        cst = [sum(c.cstate_ns[j] for c in self.cpus) for j in range(ncs)]
        return {
            "t": now,
            "cpu_j": self.cpu_energy_j(),
            "ssd_busy": [ssd_reading(d, now) for d in self.devices],
            "acc": self.pkg.c0_acc,
            "migrations": self.migrations,
            "decisions": len(getattr(self.policy, "burst_decisions", ())),
            "reactor_busy": sum(r.executed_busy(now) for r in self.reactors),
            "c0_busy_ns": busy,
            "cstate_ns": cst,
            "freq_transitions": sum(c.transitions for c in self.pkg.cores),
            "power_limit": limit_reading(self.pkg, now),
            "wakes": sum(r.wakes for r in self.reactors),
            "offered": self.n_offered,
        }
