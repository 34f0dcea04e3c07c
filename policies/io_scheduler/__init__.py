"""blk-mq IO schedulers (elevators): ``none``, ``mq-deadline``, ``kyber``, ``bfq``.

Importing this package registers them in :data:`IO_SCHEDULERS`; a user module registers more
with ``@IO_SCHEDULERS.register("name")`` (see docs/io-schedulers.md).
"""

from policies.io_scheduler import (
    bfq,  # noqa: F401
    kyber,  # noqa: F401
    mq_deadline,  # noqa: F401
    none,  # noqa: F401  (registration)
)
from policies.io_scheduler.base import IO_SCHEDULERS, IoScheduler, SortedQueue, Tunable, is_sync

__all__ = ["IO_SCHEDULERS", "IoScheduler", "SortedQueue", "Tunable", "is_sync"]
