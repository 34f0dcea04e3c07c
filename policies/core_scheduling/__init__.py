"""Core scheduling policies of the storage server (SPDK reactors, kernel target, SANDMAN).

Select with ``--set server.policy=NAME``; parameters with ``--set policy.PARAM=VALUE``. A user
policy is one module registered on :data:`CORE_SCHEDULING` (see :mod:`.base`).
"""

from policies.core_scheduling.base import CORE_SCHEDULING, CoreSchedulingPolicy, NoParams, round_robin, scheduler_overhead
from policies.core_scheduling import static, linux, governor, dynamic, hybrid, sandman, idle  # noqa: F401,E402  (registration)

__all__ = ["CORE_SCHEDULING", "CoreSchedulingPolicy", "NoParams", "round_robin", "scheduler_overhead"]
