"""CPU power policies: cpufreq governors ``performance``, ``powersave``, ``ondemand``, ``schedutil``.

Importing this package registers them in :data:`CPUFREQ_GOVERNORS`; a user module registers more
with ``@CPUFREQ_GOVERNORS.register("name")`` (see docs/cpu.md). Select one with
``cpu.cpufreq_governor`` and set its tunables with ``cpu.cpufreq.<sysfs name>``.
"""

from policies.cpu_power import (
    ondemand,  # noqa: F401
    schedutil,  # noqa: F401
    static,  # noqa: F401  (registration)
)
from policies.cpu_power.base import CPUFREQ_GOVERNORS, CpufreqGovernor

__all__ = ["CPUFREQ_GOVERNORS", "CpufreqGovernor"]
