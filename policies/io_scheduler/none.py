"""``none``: FIFO, no reordering (merging, if any, happens in blk-mq outside the scheduler)."""

from collections import deque

from policies.io_scheduler.base import IO_SCHEDULERS, IoScheduler


@IO_SCHEDULERS.register("none")
class NoneScheduler(IoScheduler):
    #: blk-mq issues directly to the driver when nothing is queued (blk_mq_try_issue_directly)
    direct_issue = True

    def __init__(self, host, tunables: dict):
        super().__init__(host, tunables)
        self._fifo = deque()

    def insert(self, req) -> None:
        self._fifo.append(req)

    def dispatch(self):
        return self._fifo.popleft() if self._fifo else None

    def has_work(self) -> bool:
        return bool(self._fifo)
