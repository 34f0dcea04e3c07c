"""``none``: FIFO, no reordering (merging, if any, happens in blk-mq outside the scheduler)."""

from collections import deque

from models.host import Host
from models.os.block.elevator import IoScheduler
from policies.io_scheduler.base import CTX, HCTX, IO_SCHEDULERS, LockUse


@IO_SCHEDULERS.register("none")
class NoneScheduler(IoScheduler):
    #: blk-mq issues directly to the driver when nothing is queued (blk_mq_try_issue_directly)
    direct_issue = True
    # Locks (6.6 block/blk-mq.c) when a request cannot be issued directly: blk_mq_insert_request puts
    # it on its software context's list under ctx->lock, and the dispatch takes it off under
    # ctx->lock (blk_mq_flush_busy_ctxs) or hctx->lock (hctx->dispatch); list operations of a few
    # cycles (held ~0: blk_submit_cycles prices them), one line each.
    insert_locks = (LockUse("ctx->lock", CTX, 0.0),)
    dispatch_locks = (LockUse("hctx->lock", HCTX, 0.0),)

    def __init__(self, host: Host, tunables: dict):
        super().__init__(host, tunables)
        self._fifo = deque()
        # has_work() is the FIFO's length (truthy when requests are queued), insert() its append and
        # dispatch_ready() its popleft: blk-mq calls them for every IO, so they are the deque's own
        # C methods rather than Python ones (blk-mq asks dispatch_ready() only when has_work():
        # BlkMq._run)
        self.has_work = self._fifo.__len__
        self.insert = self._fifo.append
        self.dispatch_ready = self._fifo.popleft

    def insert(self, req) -> None:
        self._fifo.append(req)

    def dispatch(self):
        return self._fifo.popleft() if self._fifo else None
