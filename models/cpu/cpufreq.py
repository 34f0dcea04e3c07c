"""The cpufreq-governor interface: how a CPU power policy picks each core's frequency.

A governor is one class, registered by name in ``policies/cpu_power/`` (:data:`CPUFREQ_GOVERNORS`),
where the implementations live. The host builds it before the CPU package (``initial_freq_ghz()`` is
the frequency every core starts at), calls ``start()`` at t = 0, and, if the class defines them,
calls ``on_enqueue(runner, now, iowait)`` whenever a task becomes runnable on a CPU and
``on_tick(runner, now)`` at each scheduler tick of a CPU (the scheduler's ``cpufreq_update_util``
hooks; ``iowait``: the task was woken from an IO wait). It changes frequency only through
:meth:`CpufreqGovernor.set_freq`, which rounds to a P-state and goes through
``PhysicalCore.request_freq`` (so the P-state transition latency applies). Both SMT siblings share a
physical core's frequency: governors work per physical core and take the more demanding sibling, as
the hardware does with two requests.

Tunables are the governor's sysfs attributes (``/sys/devices/system/cpu/cpufreq/<governor>/*``) in
the kernel's units, given as ``cpu.cpufreq.<name>`` and validated by the class's ``Params`` model.
A governor costs no CPU time in the model (its sampling work is a few hundred cycles per period).
"""

from __future__ import annotations

from typing import Protocol

from models.cpu.config import CpuConfig
from simcore.config import Model
from simcore.engine import Engine
from simcore.plugins import Parametrised

#: Largest value of a governor's sysfs tunable (the kernel stores them as ``unsigned int``)
UINT_MAX = 2**32 - 1


class _Platform(Protocol):
    @property
    def cpu(self) -> CpuConfig:
        """the CPU's configuration (P-states, top frequency)"""


class CpufreqHost(Protocol):
    """What a governor's base class reads of the host (``models/host.py``'s ``Host``, which the CPU
    model cannot import): the CPU's configuration and the clock. A governor that reads more of the
    host (its runners, the scheduler's tick) types it as ``models.host.Host`` in ``policies/``."""

    @property
    def platform(self) -> _Platform:
        """the platform's configuration"""

    @property
    def engine(self) -> Engine:
        """the discrete-event engine (times in ns)"""


class CpufreqGovernor(Parametrised):
    """Base class: a static frequency (the top one) unless a subclass decides otherwise."""

    def __init__(self, host: CpufreqHost, params: Model):
        self.host = host
        self.params = params
        self.cfg = host.platform.cpu

    @classmethod
    def from_config(cls, host: CpufreqHost, tunables: dict) -> "CpufreqGovernor":
        return cls(host, cls.params_from(tunables, where=f"cpufreq governor {cls.name} (cpu.cpufreq)"))

    def initial_freq_ghz(self) -> float:
        """The frequency every core starts at, GHz."""
        return self.cfg.top_freq_ghz

    def start(self) -> None:
        """Called once at t = 0, after the CPUs exist (arm sampling timers here)."""

    # on_enqueue(self, runner, now: float, iowait: bool) -> None  and
    # on_tick(self, runner, now: float) -> None: define them to receive the scheduler's hooks

    # -- helpers -----------------------------------------------------------------------------------
    def resolve_freq(self, ghz: float, round_up: bool) -> float:
        """The P-state for a target frequency: clamped to [min, top], on the ``pstate_step_ghz``
        grid from the minimum; the lowest step at or above the target (``round_up``, cpufreq's
        RELATION_L) or the closest (RELATION_C)."""
        cfg = self.cfg
        lo, hi, step = cfg.min_freq_ghz, cfg.top_freq_ghz, cfg.pstate_step_ghz
        if ghz <= lo:
            return lo
        if ghz >= hi:
            return hi
        k = (ghz - lo) / step
        k = int(k) + (1 if k - int(k) > 1e-9 else 0) if round_up else int(k + 0.5)
        return min(round(lo + k * step, 9), hi)  # round: 0.8 + 16 x 0.1 is 2.4, not 2.4000000000000004

    def set_freq(self, core, ghz: float) -> None:
        """Request ``ghz`` (already resolved) for physical ``core`` now."""
        core.request_freq(self.host.engine.now, ghz)

    def transition_delay_ns(self) -> float:
        """cpufreq_policy_transition_delay_us: the driver's transition latency x 1000
        (LATENCY_MULTIPLIER), at most 10 ms; the default sampling and rate-limit period."""
        lat = self.cfg.pstate_transition_ns
        return min(lat * 1000.0, 10e6) if lat > 0 else 1e6
