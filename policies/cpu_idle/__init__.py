"""cpuidle governors: ``menu`` (the default) and ``teo`` (timer events oriented).

Importing this package registers them in :data:`CPUIDLE_GOVERNORS`; a user module registers more
with ``@CPUIDLE_GOVERNORS.register("name")`` on a :class:`CpuidleGovernor` subclass (see
docs/cpu.md). Select one with ``cpu.cpuidle_governor``.
"""

from policies.cpu_idle import (
    menu,  # noqa: F401  (registration)
    teo,  # noqa: F401
)
from policies.cpu_idle.base import CPUIDLE_GOVERNORS, NO_TIMER_NS, CpuidleGovernor

__all__ = ["CPUIDLE_GOVERNORS", "CpuidleGovernor", "NO_TIMER_NS"]
