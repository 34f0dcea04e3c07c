"""Core scheduling policies of the storage server (SPDK reactors, kernel target, SANDMAN).

Select with ``--set server.policy=NAME``; parameters with ``--set policy.PARAM=VALUE``. A user
policy is one module registered on :data:`CORE_SCHEDULING` (see :mod:`.base`).
"""

from policies.core_scheduling import dynamic, empty_poll, governor, hybrid, idle, linux, sandman, static  # noqa: F401,E402  (registration)
from policies.core_scheduling.base import (
    CORE_SCHEDULING,
    CoreSchedulingPolicy,
    NoParams,
    round_robin,
    scheduler_overhead,
)

__all__ = ["CORE_SCHEDULING", "CoreSchedulingPolicy", "NoParams", "round_robin", "scheduler_overhead"]
