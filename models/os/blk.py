"""blk-mq: per-CPU software queues mapped to hardware queues, driver tags, the IO-scheduler hook.

Each CPU submits to its own hardware context (hctx), one per NVMe queue pair. A request is
inserted into the hctx's scheduler and dispatched to the driver while tags (``nr_requests``, the
queue depth) are free; a completion frees its tag and re-runs the hardware queue. With ``none``
and free tags this is blk-mq's direct-issue path: insert and dispatch happen at once.
"""

from __future__ import annotations

from policies.io_scheduler import IO_SCHEDULERS


class HwContext:
    __slots__ = ("qp", "sched", "tags_free")

    def __init__(self, qp, sched, tags: int):
        self.qp = qp
        self.sched = sched
        self.tags_free = tags


class BlkMq:
    def __init__(self, host, queue_cfg):
        self.host = host
        self.driver = host.driver
        self._hctx = {}
        self._sched_cls = IO_SCHEDULERS.get(queue_cfg.scheduler)
        self._tunables = dict(queue_cfg.iosched)
        self._nr = queue_cfg.nr_requests

    def hctx(self, qp) -> HwContext:
        h = self._hctx.get(qp)
        if h is None:
            h = self._hctx[qp] = HwContext(qp, self._sched_cls(self.host, self._tunables), min(self._nr, qp.depth))
        return h

    def issue(self, req) -> None:
        """The submit path reached the hctx (end of blk_mq_submit_bio): insert + run queue."""
        h = self.hctx(req.qp)
        h.sched.insert(req)
        self._run(h)

    def _run(self, h: HwContext) -> None:
        submit = self.driver.submit
        while h.tags_free > 0:
            r = h.sched.dispatch()
            if r is None:
                return
            h.tags_free -= 1
            submit(r)

    def complete(self, req) -> None:
        h = self._hctx[req.qp]
        h.tags_free += 1
        h.sched.completed(req)
        if h.sched.has_work():
            self._run(h)
