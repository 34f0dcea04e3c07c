"""The static governors: ``performance`` (the top frequency) and ``powersave`` (the minimum)."""

from models.cpu.cpufreq import CpufreqGovernor
from policies.cpu_power.base import CPUFREQ_GOVERNORS


@CPUFREQ_GOVERNORS.register("performance")
class Performance(CpufreqGovernor):
    """Every core at the top frequency (``max_freq_ghz`` with turbo, ``base_freq_ghz`` without)."""


@CPUFREQ_GOVERNORS.register("powersave")
class Powersave(CpufreqGovernor):
    """Every core at ``min_freq_ghz``."""

    def initial_freq_ghz(self) -> float:
        return self.cfg.min_freq_ghz
