"""The registry of cpufreq governors. The interface (:class:`CpufreqGovernor`) lives next to the
P-state mechanism in :mod:`models.cpu.cpufreq` and is re-exported here for plug-ins."""

from __future__ import annotations

from models.cpu.cpufreq import CpufreqGovernor
from simcore.plugins import Registry

CPUFREQ_GOVERNORS = Registry("cpufreq governor")

__all__ = ["CPUFREQ_GOVERNORS", "CpufreqGovernor"]
