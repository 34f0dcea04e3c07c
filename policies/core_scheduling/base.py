"""The registry of core-scheduling policies. The interface (:class:`CoreSchedulingPolicy`) and its
helpers live next to the server runtime they plug into, in :mod:`models.server.core_scheduling`,
and are re-exported here for plug-ins."""

from __future__ import annotations

from models.server.core_scheduling import CoreSchedulingPolicy, round_robin, scheduler_overhead
from simcore.config import NoParams
from simcore.plugins import Registry

CORE_SCHEDULING = Registry("core scheduling policy")

__all__ = ["CORE_SCHEDULING", "CoreSchedulingPolicy", "NoParams", "round_robin", "scheduler_overhead"]
