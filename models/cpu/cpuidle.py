"""The cpuidle governor interface: which idle state a CPU enters when it has nothing to run.

The mechanism (the OS idle loop, :meth:`models.os.sched.idle.IdleLoop._enter_idle`; the server's
interrupt-driven reactors) owns one governor per logical CPU and calls:

* ``select(next_timer_ns, iowaiters, tick_ns=None, delta_tick_ns=0.0) -> int`` when the CPU goes
  idle: the index into ``cfg.cstates`` of the state to enter. ``next_timer_ns`` is the sleep length
  as ``tick_nohz_get_sleep_length`` gives it: the time to the CPU's earliest armed timer *as if the
  tick were stopped* (:data:`NO_TIMER_NS` if none), ``iowaiters`` the tasks of this CPU sleeping in
  IO wait. ``tick_ns`` is the scheduler tick's period when the periodic tick is running (the next
  one ``delta_tick_ns`` away); None when no tick runs on the CPU (stopped, or not modelled). With a
  tick, the governor also sets ``stop_tick``: whether the tick may stop for this idle period
  (cpuidle's ``*stop_tick``).
* ``reflect(measured_ns, tick_wakeup=False)`` when the idle period ends: it lasted ``measured_ns``
  from entry to the wake-up event (before the state's exit latency); ``tick_wakeup`` says the
  wake-up was the scheduler tick's interrupt (``tick_nohz_idle_got_tick()``). A tick wake-up with a
  sleep length beyond the tick tells the governor its short prediction kept a tick that was not
  needed: menu and teo then count the period as long, so the tick stops next time (NOHZ idle).
* ``prime(idle_ns)`` before the first ``select`` of a CPU that comes from a long quiet stretch
  (e.g. boot) of idle periods of ``idle_ns`` each that ended at their timer.

Linux's governors (``drivers/cpuidle/governors/``) implement it in ``policies/cpu_idle/``; the
platform picks one with ``cpu.cpuidle_governor``. A governor honours ``cfg.cpuidle_disable`` (the
sysfs ``stateN/disable``) and never returns a disabled state unless every state is disabled.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Final

from mypy_extensions import mypyc_attr

from models.cpu.config import CpuConfig

NO_TIMER_NS: Final = 50_000_000.0
"""The sleep length a governor is given when no timer is armed, ns: menu.c's MAX_INTERESTING
(50 ms), the governor's horizon (an idle that long counts as a perfect prediction). Linux's
``tick_nohz_get_sleep_length`` is the time to the next timer event as if the tick were stopped; with
no timer-wheel or hrtimer event at all it would be KTIME_MAX, which real systems never see (some
timer is always armed, and menu.c's ``next_timer_ns x correction`` would overflow u64). The model's
CPUs arm no background timers, so "no timer" is modelled as the longest sleep the governor
distinguishes: far beyond a tick (the tick then stops, NOHZ idle), while menu's correction factor
(floored near 8/8192 by its integer decay) still predicts about 50 us, not a deep state, when the
repeating-interval detector finds no pattern. (Before: one 4 ms tick period, which kept the tick of
every idle CPU running for ever.)"""

DEFAULT_RELEASE: Final = (6, 6)
"""The kernel release a governor follows until told the host's (``kernel.version``'s default)."""

DEFAULT_TICK_NS: Final = 4_000_000.0
"""TICK_NSEC at CONFIG_HZ=250, ns: the default tick period of a governor."""


@mypyc_attr(allow_interpreted_subclasses=True)  # plug-in governors subclass it (compiled: simcore.compiled)
class CpuidleGovernor(ABC):
    """Per-CPU governor state. Subclasses are registered by name in ``policies.cpu_idle``."""

    __slots__ = ("cfg", "tick_period_ns", "stop_tick", "kernel_release", "latency_req_ns")

    name = "abstract"

    def __init__(self, cfg: CpuConfig, tick_period_ns: float = DEFAULT_TICK_NS):
        #: the CPU's idle states (``cfg.cstates``, shallowest first) and disabled states
        self.cfg = cfg
        #: the scheduler tick's period (TICK_NSEC), ns: what a stopped tick would have been
        self.tick_period_ns = tick_period_ns
        #: after ``select`` with a running tick: whether the tick may stop for this idle period
        self.stop_tick = True
        #: the kernel release whose governor this is, (major, minor) (:meth:`for_kernel`)
        self.kernel_release = DEFAULT_RELEASE
        #: cpuidle_governor_latency_req: the PM QoS CPU latency limit, ns (``cfg.cpu_latency_qos_us``;
        #: inf without a request): no state whose exit latency exceeds it may be chosen
        qos = cfg.cpu_latency_qos_us
        self.latency_req_ns = float("inf") if qos is None else qos * 1000.0

    def for_kernel(self, release: tuple[int, int]) -> None:
        """The host's kernel is ``release``: a governor whose rules changed between releases takes
        that release's (called once, before the first ``select``)."""
        self.kernel_release = release

    @abstractmethod
    def select(
        self, next_timer_ns: float, iowaiters: int, tick_ns: float | None = None, delta_tick_ns: float = 0.0
    ) -> int:
        """Index of the idle state to enter (see the module docstring)."""

    @abstractmethod
    def reflect(self, measured_ns: float, tick_wakeup: bool = False) -> None:
        """Learn from an idle period that lasted ``measured_ns`` (entry to wake-up event), ended by
        the scheduler tick if ``tick_wakeup``."""

    def prime(self, idle_ns: float) -> None:
        """The CPU comes from a long run of idle periods of ``idle_ns`` each, ended by their timer."""
        for _ in range(64):
            self.select(idle_ns, 0)
            self.reflect(idle_ns)

    def enabled_states(self) -> tuple[int, ...]:
        """Indices of the states not disabled by ``cpuidle_disable`` (state 0 if all are)."""
        off = set(self.cfg.cpuidle_disable)
        return tuple(i for i, st in enumerate(self.cfg.cstates) if st.name not in off) or (0,)
