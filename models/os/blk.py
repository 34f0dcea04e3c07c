"""blk-mq: plugging and merging, one elevator (IO scheduler) per device shared by the device's
hardware contexts, driver tags per hardware context, dispatch (block/blk-mq.c, blk-merge.c).

Submission of a batch (one io_submit / io_uring_enter, or one synchronous IO) goes through a plug:
adjacent requests in the plug are merged (back or front merge, same direction, same hardware queue,
within ``max_sectors_kb``), then each remaining request is offered to the elevator's ``try_merge``
and otherwise inserted. The hardware contexts are then run: while a context has free tags it takes
the requests held for it (``hctx->dispatch``) and otherwise asks the elevator; a request the
elevator hands out for another context's queue waits there. A completion frees its tag, feeds the
elevator and re-runs the queues. A merged request completes with the request it was merged into.
With ``none`` and free tags this is blk-mq's direct-issue path.
"""

from __future__ import annotations

from collections import deque

from models.os.iosched import IoScheduler
from models.os.request import Request

SECTOR = 512


class HwContext:
    __slots__ = ("qp", "elv", "tags_free", "pending")

    def __init__(self, qp, elv, tags: int):
        self.qp = qp
        self.elv = elv
        self.tags_free = tags
        self.pending = deque()


class BlkMq:
    def __init__(self, host, queue_cfg, scheduler: type[IoScheduler]):
        """``scheduler``: the elevator class of ``queue_cfg.scheduler`` (resolved by the assembly)."""
        self.host = host
        self.driver = host.driver
        self._sched_cls = scheduler
        self._tunables = dict(queue_cfg.iosched)
        self._sched_cls.parse_tunables(self._tunables)  # reject bad tunables before the run
        self._nr = queue_cfg.nr_requests
        self.max_bytes = queue_cfg.max_sectors_kb * 1024
        self.nomerges = queue_cfg.nomerges
        self._elv: dict[int, object] = {}
        self._hctx: dict[object, HwContext] = {}
        self._dev_hctxs: dict[int, list[HwContext]] = {}
        self.merges = 0
        self.splits = 0  # IOs split into several requests
        self._piece_ids = 0
        #: schedulers without an elevator queue ('none') take the direct-issue path when idle
        self._bypass = getattr(self._sched_cls, "direct_issue", False)
        # per-request CPU cost: the platform's calibrated total, split as the scheduler splits it
        cls = self._sched_cls
        default_total = cls.insert_cycles + cls.dispatch_cycles + cls.complete_cycles
        total = host.kcosts.iosched_cycles.get(queue_cfg.scheduler, default_total)
        scale = total / default_total if default_total else 0.0
        #: cycles charged in the submitting system call (insert + dispatch)
        self.submit_cycles = (cls.insert_cycles + cls.dispatch_cycles) * scale
        self.iosched_complete_cost = None
        if cls.complete_cycles * scale:
            self.iosched_complete_cost = host.costs.get("iosched_complete", iosched=cls.complete_cycles * scale)

    def elevator(self, dev_index: int):
        elv = self._elv.get(dev_index)
        if elv is None:
            elv = self._elv[dev_index] = self._sched_cls(self.host, self._tunables)
            elv.on_ready = lambda d=dev_index: self._run_device(d)
        return elv

    def hctx(self, qp) -> HwContext:
        h = self._hctx.get(qp)
        if h is None:
            dev = qp.device.index
            h = self._hctx[qp] = HwContext(qp, self.elevator(dev), min(self._nr, qp.depth))
            self._dev_hctxs.setdefault(dev, []).append(h)
        return h

    # ------------------------------------------------------------------ splitting
    def requests_for(self, nbytes: int) -> int:
        """How many requests an IO of ``nbytes`` becomes (split at ``max_sectors_kb``)."""
        return -(-nbytes // self.max_bytes) if nbytes > self.max_bytes else 1

    def split(self, req) -> list:
        """blk_queue_split: an IO larger than ``max_sectors_kb`` becomes pieces of at most that size,
        each a request with its own tag and device command; the IO completes with its last piece
        (:meth:`models.os.nvme.NvmeDriver._finish`). Pieces inherit the IO's queue, flags and task."""
        if req.nbytes <= self.max_bytes:
            return [req]
        pieces = []
        off, left = req.offset, req.nbytes
        while left > 0:
            n = min(left, self.max_bytes)
            self._piece_ids += 1  # pieces are not fio IOs: negative ids, apart from the IO ids
            p = Request(-self._piece_ids, req.task, req.job, req.op, n, off, req.cpu, req.hipri)
            p.ioprio = req.ioprio
            p.qp = req.qp
            p.flags = req.flags
            p.t_submit = req.t_submit
            p.parent = req
            pieces.append(p)
            off += n
            left -= n
        req.splits = pieces
        req.splits_left = len(pieces)
        self.splits += 1
        return pieces

    # ------------------------------------------------------------------ submission
    def issue(self, req) -> None:
        """One IO reached blk-mq (blk_mq_submit_bio): split if needed, then each request issued."""
        if req.nbytes > self.max_bytes:
            self.issue_batch(self.split(req))
            return
        h = self._hctx.get(req.qp) or self.hctx(req.qp)
        elv = h.elv
        if self._bypass and h.tags_free > 0 and not h.pending and not elv.has_work():
            # 'none' with a free tag: blk_mq_try_issue_directly
            h.tags_free -= 1
            self.driver.submit(req)
            return
        if not self.nomerges and elv.has_work():
            target = elv.try_merge(req, self.max_bytes)
            if target is not None:
                self._merged(target, req)
                return
        elv.insert(req)
        self._run(h)

    def plug(self, bios) -> list:
        """The submitting system call's plug (blk_start_plug .. blk_finish_plug): each bio is split
        at ``max_sectors_kb`` and then merged into an adjacent request already in the plug
        (blk_attempt_plug_merge) or becomes a request of its own. Returns the requests; a merged
        bio allocates no request and reaches no driver (it completes with its request), so the
        caller charges request and driver work per returned request."""
        reqs = bios
        if any(r.nbytes > self.max_bytes for r in reqs):
            reqs = [p for r in reqs for p in self.split(r)]
        if self.nomerges < 2 and len(reqs) > 1:
            reqs = self._plug_merge(reqs)
        return reqs

    def issue_batch(self, reqs, plugged: bool = False) -> None:
        """A plugged batch at blk_finish_plug: (if not ``plugged`` yet, :meth:`plug` it), offer each
        request to the elevator's merge, insert the rest and run the queues once."""
        if not plugged:
            reqs = self.plug(reqs)
        touched = []
        for req in reqs:
            h = self.hctx(req.qp)
            elv = h.elv
            target = elv.try_merge(req, self.max_bytes) if (not self.nomerges and elv.has_work()) else None
            if target is not None:
                self._merged(target, req)
                continue
            elv.insert(req)
            if h not in touched:
                touched.append(h)
        for h in touched:
            self._run(h)

    def _plug_merge(self, reqs):
        out = []
        for req in reqs:
            for tgt in reversed(out[-4:]):  # blk_attempt_plug_merge looks at recent plug entries
                if tgt.qp is not req.qp or tgt.op != req.op or tgt.nbytes + req.nbytes > self.max_bytes:
                    continue
                if tgt.offset + tgt.nbytes == req.offset:
                    tgt.nbytes += req.nbytes
                    self._merged(tgt, req)
                    break
                if req.offset + req.nbytes == tgt.offset:
                    tgt.offset = req.offset
                    tgt.nbytes += req.nbytes
                    self._merged(tgt, req)
                    break
            else:
                out.append(req)
        return out

    def _merged(self, target, req) -> None:
        self.merges += 1
        if target.merged is None:
            target.merged = []
        target.merged.append(req)
        target.flags |= req.flags  # cinterrupts: union of annotations, Urgent wins

    # ------------------------------------------------------------------ dispatch
    def _run(self, h: HwContext) -> None:
        submit = self.driver.submit
        elv = h.elv
        while h.tags_free > 0:
            if h.pending:
                r = h.pending.popleft()
            else:
                r = elv.dispatch()
                if r is None:
                    return
                owner = self._hctx[r.qp]
                if owner is not h:
                    if owner.tags_free > 0 and not owner.pending:
                        owner.tags_free -= 1
                        submit(r)
                    else:
                        owner.pending.append(r)
                    continue
            h.tags_free -= 1
            submit(r)

    def _run_device(self, dev_index: int) -> None:
        for h in self._dev_hctxs.get(dev_index, ()):
            self._run(h)

    def complete(self, req) -> None:
        h = self._hctx[req.qp]
        h.tags_free += 1
        elv = h.elv
        if not self._bypass:
            elv.completed(req)
        if h.pending or elv.has_work():
            self._run_device(req.qp.device.index)
