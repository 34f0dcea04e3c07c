"""The registry of cpuidle governors (the interface, :class:`models.cpu.cpuidle.CpuidleGovernor`,
lives next to the idle loop it plugs into)."""

from __future__ import annotations

from models.cpu.cpuidle import NO_TIMER_NS, CpuidleGovernor
from simcore.plugins import Registry

CPUIDLE_GOVERNORS = Registry("cpuidle governor")

__all__ = ["CPUIDLE_GOVERNORS", "CpuidleGovernor", "NO_TIMER_NS"]
