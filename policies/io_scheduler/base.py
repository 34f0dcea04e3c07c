"""The IO-scheduler interface of blk-mq (struct elevator_mq_ops, reduced).

A scheduler instance serves one hardware queue. blk-mq calls ``insert`` when a request arrives,
then ``dispatch`` repeatedly while driver tags are free until it returns None, and ``completed``
when a request finishes. ``insert_cycles``/``dispatch_cycles``/``complete_cycles`` are the CPU
cost per request, charged to the ``iosched`` layer.
"""

from __future__ import annotations

from simcore.plugins import Registry

IO_SCHEDULERS = Registry("IO scheduler")


class IoScheduler:
    name = "abstract"
    insert_cycles = 0.0
    dispatch_cycles = 0.0
    complete_cycles = 0.0

    def __init__(self, host, tunables: dict):
        self.host = host

    def insert(self, req) -> None:
        raise NotImplementedError

    def dispatch(self):
        raise NotImplementedError

    def completed(self, req) -> None:
        pass

    def has_work(self) -> bool:
        raise NotImplementedError
