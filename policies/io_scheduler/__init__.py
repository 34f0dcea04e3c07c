"""blk-mq IO schedulers (elevators). The foundation ships ``none``."""

from policies.io_scheduler.base import IO_SCHEDULERS, IoScheduler
from policies.io_scheduler import none  # noqa: F401  (registration)

__all__ = ["IO_SCHEDULERS", "IoScheduler"]
