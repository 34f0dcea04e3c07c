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

Where the dispatch runs (5.x, ``queue.sched_dispatch = kblockd``): with ``none``, in the
submitting context; with a scheduler, a plugged batch (:data:`PLUG_MIN_REQUESTS` or more requests
submitted together: io_uring and libaio plug only then) is inserted under one scheduler lock and
the queue is run synchronously at ``blk_finish_plug``, while an unplugged request is inserted by
the submitter and dispatched by the CPU's kblockd worker (models.os.block.kblockd). ``lock_rounds``
counts the scheduler-lock acquisitions of inserts: one per unplugged request, one per plugged
batch and hardware context.

Locks (models.os.locking.spinlock): every place the kernel serialises a request takes its lock where the
model runs that code, on the CPU that runs it: the elevator's locks as the scheduler declares them
(``IoScheduler.merge_locks`` ... ``complete_locks``: bfq's ``bfqd->lock``, mq-deadline's
``dd->lock``, kyber's per-context and per-hardware-context locks and its token sbitmap), the
hardware context's tag sbitmap (``blk_mq_get_tag`` at submission, ``blk_mq_put_tag`` at
completion) and the NVMe queue's ``sq_lock`` (``nvme_queue_rq``: the SQ entry copy and the
doorbell). Spinning and cache-line fetches are charged to the CPU that waits
(``CpuRunner.lock_wait``) and a dispatch that waited reaches the device that much later.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Callable, Final, cast

from models.os.block import elevator
from models.os.block.elevator import IoScheduler
from models.os.block.hook_locks import SQ_LOCK_LINES, TAG_LINES, Locks, LockTake, hook_locks
from models.os.block.host import BlockHost
from models.os.block.kblockd import KblockdWorker
from models.os.block.request import Request
from models.os.costs.bundle import LAYER_INDEX, Cost
from models.os.interfaces import BlockDriver
from models.os.kernel_version import has
from models.os.locking.spinlock import SpinLock
from models.os.sched.execution import Execution
from models.os.sched.runner import CpuRunner
from simcore.engine import Engine

SECTOR: Final = 512
#: requests submitted together from which io_uring (IO_PLUG_THRESHOLD = 2: io_submit_state_start
#: plugs when more than 2 SQEs are submitted) and libaio (AIO_PLUG_THRESHOLD = 2) plug
PLUG_MIN_REQUESTS: Final = 3
#: how the plug a request sits in is flushed, as the direct-IO path above blk-mq holds it
#: (models.os.fs.direct_io): no plug of the path's own (a scheduler's insert is run by kblockd);
#: flushed at blk_finish_plug by the submitter (the queue run synchronously); flushed by schedule()
#: while the submitter sleeps in it (blk_flush_plug(plug, true): kblockd runs the queue, with or
#: without a scheduler)
PLUG_NONE: Final = 0
PLUG_FINISH: Final = 1
PLUG_SCHEDULE: Final = 2
#: include/linux/bio.h ``BIO_MAX_VECS`` (256) pages of 4 KiB: the largest single-bio direct IO, bytes
BIO_MAX_BYTES: Final = 256 * 4096
#: block/blk-mq.c: asynchronous runs of a hardware queue mapped to several CPUs go to one of them
#: this many times before the next (blk_mq_hctx_next_cpu)
BLK_MQ_CPU_WORK_BATCH: Final = 8
#: the scopes of the queue runs a completion asks for (models.os.block.elevator), as native constants:
#: the elevator module is interpreted, so a name imported from it is looked up at every use
RUN_NONE: Final[int] = elevator.RUN_NONE
RUN_HCTX: Final[int] = elevator.RUN_HCTX
RUN_DEVICE: Final[int] = elevator.RUN_DEVICE
#: a call that shares nothing among its requests (see BlkMq.plug_savings)
NO_SAVINGS: Final = (0, 0, 0)
#: requests never split at max_sectors_kb: discards (max_discard_sectors, NVMe 2^32-1 sectors) and
#: zone management (no data)
UNSPLIT_OPS = frozenset({"trim", "zone_reset", "zone_finish"})


class BlkMqOps(BlockDriver):
    """What blk-mq needs of the driver below it (``struct blk_mq_ops``, include/linux/blk-mq.h): a
    submitter (``queue_rq``); and, as every block driver, the poll loop's ``reap``
    (models.os.interfaces). The NVMe driver (models.os.drivers.nvme) is one."""

    __slots__ = ()

    def submit(self, req: Request) -> None:
        """``queue_rq``: write ``req``'s command into its queue's SQ and ring the doorbell."""
        raise NotImplementedError


class HwContext:
    """A hardware context (``struct blk_mq_hw_ctx``) of one NVMe queue: its elevator, free driver
    tags, requests held for it, and its locks (each hook's as ((lock, cycles held), ...)). The
    elevator's has_work and insert, called for every IO, are held as fields: a compiled call of a
    field, not a method look-up on the (interpreted) elevator each time. Its tag sbitmap (``tag``:
    blk_mq_get_tag / blk_mq_put_tag) and its NVMe queue's ``sq_lock`` are one lock each, taken
    with :meth:`BlkMq._take_one`."""

    __slots__ = (
        "qp",
        "cpu",
        "elv",
        "has_work",
        "insert",
        "dispatch_ready",
        "tags_free",
        "pending",
        "tag",
        "sq_lock",
        "merge",
        "ins",
        "disp",
        "done",
        "work_cpus",
        "next_cpu",
        "next_cpu_batch",
        "restart",
    )

    def __init__(self, qp, elv, tags: int, tag: LockTake, sq_lock: LockTake):
        self.qp = qp
        self.cpu: int = qp.cpu  # the queue's CPU (where its interrupt and restarts run)
        self.elv = elv
        self.has_work: Callable[[], Any] = elv.has_work
        self.insert: Callable[[Any], None] = elv.insert
        self.dispatch_ready: Callable[[], Any] = elv.dispatch_ready
        self.tags_free = tags
        self.pending: deque = deque()
        self.tag = tag
        self.sq_lock = sq_lock
        self.merge: Locks = ()
        self.ins: Locks = ()
        self.disp: Locks = ()
        self.done: Locks = ()
        #: BLK_MQ_S_SCHED_RESTART: a dispatch stopped for want of driver tags (its next
        #: completion runs the context again)
        self.restart = False
        #: the CPUs mapped to it (hctx->cpumask), where its asynchronous runs go in turn
        #: (blk_mq_hctx_next_cpu): the first mapped CPU, then the next every BLK_MQ_CPU_WORK_BATCH runs
        self.work_cpus: tuple[int, ...] = tuple(sorted(qp.cpus))
        self.next_cpu: int = self.work_cpus[0]
        self.next_cpu_batch: int = BLK_MQ_CPU_WORK_BATCH


class BlkMq:
    def __init__(self, host: BlockHost, queue_cfg, scheduler: type[IoScheduler]):
        """``scheduler``: the elevator class of ``queue_cfg.scheduler`` (resolved by the assembly)."""
        self.host = host
        self._engine: Engine = host.engine
        #: the driver below, as blk-mq calls it (the block layer's view of the host knows it as a
        #: block driver; blk-mq's ops are declared here)
        self.driver: BlkMqOps = cast(BlkMqOps, host.driver)
        self._sched_cls = scheduler
        self._tunables = dict(queue_cfg.iosched)
        self._sched_cls.parse_tunables(self._tunables)  # reject bad tunables before the run
        self._nr = queue_cfg.nr_requests
        # (typed: the config is Any here, and these are read for every IO)
        self.max_bytes: int = queue_cfg.max_sectors_kb * 1024
        self.nomerges: int = queue_cfg.nomerges
        self._elv: dict[int, object] = {}
        self._hctx: dict[object, HwContext] = {}
        self._runners: list[CpuRunner] = host.runners  # every CPU's runner, by CPU
        self._dev_hctxs: dict[int, list[HwContext]] = {}
        self.merges = 0
        self.splits = 0  # IOs split into several requests
        self._piece_ids = 0
        #: schedulers without an elevator queue ('none') take the direct-issue path when idle
        self._bypass = bool(getattr(self._sched_cls, "direct_issue", False))
        #: an IO scheduler is attached (its requests use sched tags: RQF_SCHED_TAGS)
        self.elevator_attached = not self._bypass
        kver = host.kcosts.release
        self._plug_cache = has(kver, "plug_rq_cache")
        self._queue_rqs = has(kver, "queue_rqs") and not self.elevator_attached
        # per-request CPU cost: the platform's calibrated total, split as the scheduler splits it
        cls = self._sched_cls
        default_total = cls.insert_cycles + cls.dispatch_cycles + cls.complete_cycles
        total = host.kcosts.iosched_cycles.get(queue_cfg.scheduler, default_total * host.kcosts.iosched_cycles_scale)
        scale = total / default_total if default_total else 0.0
        self.insert_cycles = cls.insert_cycles * scale  # per request, in the submitting context
        self.dispatch_cycles = cls.dispatch_cycles * scale  # per request, where the dispatch runs
        #: cycles charged in the submitting system call when it also dispatches (insert + dispatch)
        self.submit_cycles = self.insert_cycles + self.dispatch_cycles
        #: unplugged requests are dispatched by the CPU's kblockd worker (a scheduler, 5.x path)
        self._kblockd = not self._bypass and bool(queue_cfg.sched_dispatch == "kblockd")
        self.kblockd: dict[int, KblockdWorker] = {}
        self.lock_rounds = 0  # scheduler-lock acquisitions by inserts
        self._passthru: set = set()  # passthrough requests in flight (the elevator never saw them)
        self.iosched_complete_cost: Cost | None = None
        #: ``fn(bios)``, called with the bios each plug receives, before splitting and merging (the
        #: trace comparison pairs replayed IOs with their requests here); None: no observer
        self.plug_observer: Any = None
        if cls.complete_cycles * scale:
            self.iosched_complete_cost = host.costs.get("iosched_complete", iosched=cls.complete_cycles * scale)
        self.complete_cycles = cls.complete_cycles * scale
        k = host.kcosts
        #: nvme_queue_rq's work before it takes sq_lock (the command's build, DMA mapping), cycles:
        #: the code between two dispatch sections of one run of a hardware queue
        self._prep_cycles = max(0.0, k.nvme_submit_cycles - k.nvme_sq_lock_hold_cycles - k.nvme_sq_doorbell_cycles)
        self._dev_locks: dict[tuple, SpinLock] = {}  # device-scope locks by (device, name)

    def deferred(self, nreq: int, plug_min: int = PLUG_MIN_REQUESTS, own_plug: int = PLUG_NONE) -> bool:
        """Whether ``nreq`` requests submitted together are dispatched by kblockd (not plugged;
        the call plugs from ``plug_min`` requests; ``own_plug``: the direct-IO path's own plug, a
        ``PLUG_*``)."""
        if own_plug == PLUG_SCHEDULE:
            return True
        return self._kblockd and own_plug == PLUG_NONE and nreq < plug_min

    def submitter_parts(
        self,
        nsubmit: int,
        blk_cycles: float,
        nvme_cycles: float,
        plug_min: int = PLUG_MIN_REQUESTS,
        own_plug: int = PLUG_NONE,
    ) -> dict:
        """Per-request cycles of the submitting context when ``nsubmit`` IOs are submitted
        together: blk-mq's own, the scheduler's insert, and (unless kblockd dispatches) the
        scheduler's dispatch and the NVMe command."""
        if self.deferred(nsubmit, plug_min, own_plug):
            parts = dict(block=blk_cycles)
            if self.insert_cycles:
                parts["iosched"] = self.insert_cycles
            return parts
        parts = dict(block=blk_cycles, driver=nvme_cycles)
        if self.submit_cycles:
            parts["iosched"] = self.submit_cycles
        return parts

    def plug_savings(self, reqs, nsubmit: int, plug_min: int) -> tuple[int, int, int]:
        """What one call's plug shares among its requests ``reqs`` (``nsubmit`` IOs submitted, the
        call plugs from ``plug_min``): (SQ doorbells, sq_lock rounds, tag allocations) saved over
        issuing the requests one by one. One doorbell per hardware queue (bd->last); with queue_rqs
        (5.17, no scheduler, one device in the plug) one sq_lock per queue; with the plug's request
        cache (5.16) a request after one to the same device takes a cached request."""
        if nsubmit < plug_min or len(reqs) < 2:
            return NO_SAVINGS
        queues = {r.qp for r in reqs}
        doorbells = len(reqs) - len(queues)
        locks = doorbells if self._queue_rqs and len({q.device for q in queues}) == 1 else 0
        tags = 0
        if self._plug_cache:
            prev = reqs[0].qp.device
            for r in reqs[1:]:
                dev = r.qp.device
                if dev is prev:
                    tags += 1
                prev = dev
        return (doorbells, locks, tags)

    def worker(self, cpu: int) -> KblockdWorker:
        w = self.kblockd.get(cpu)
        if w is None:
            w = self.kblockd[cpu] = KblockdWorker(self.host, self, cpu)
        return w

    def elevator(self, dev_index: int):
        elv = self._elv.get(dev_index)
        if elv is None:
            elv = self._elv[dev_index] = self._sched_cls(self.host, self._tunables)
            zoned = self.host.devices[dev_index].cfg.zoned  # nvme_revalidate_zones: chunk_sectors = zone size
            if zoned is not None:
                elv.zone_bytes = zoned.zone_size_bytes
            elv.on_ready = lambda d=dev_index: self._run_device(d)
        return elv

    def hctx(self, qp) -> HwContext:
        h = self._hctx.get(qp)
        if h is None:
            dev = qp.device.index
            k = self.host.kcosts
            pkg = self.host.pkg
            tag = LockTake(SpinLock("tags", LAYER_INDEX["block"], TAG_LINES, pkg), k.blk_tag_hold_cycles)
            sq = LockTake(
                SpinLock("nvmeq->sq_lock", LAYER_INDEX["driver"], SQ_LOCK_LINES, pkg), k.nvme_sq_lock_hold_cycles
            )
            h = self._hctx[qp] = HwContext(qp, self.elevator(dev), min(self._nr, qp.depth), tag, sq)
            self._dev_hctxs.setdefault(dev, []).append(h)
            self._add_locks(h, dev)
        return h

    def _add_locks(self, h: HwContext, dev: int) -> None:
        """The locks of a new hardware context's elevator hooks (by scope): models.os.block.hook_locks."""
        hook_locks(self, h, dev)

    def locks(self) -> list[SpinLock]:
        """Every lock so far (each once): the devices' elevator locks, then each hardware context's."""
        out: list[SpinLock] = list(self._dev_locks.values())
        for h in self._hctx.values():
            for uses in ((h.tag,), (h.sq_lock,), h.merge, h.ins, h.disp, h.done):
                for u in uses:
                    if u.lock not in out:
                        out.append(u.lock)
        return out

    def _take(self, uses: Locks, runner: Execution, offset: float = 0.0, held: bool = True) -> float:
        """The CPU of ``runner`` takes each lock of ``uses`` in turn, ``offset`` ns from now (locks
        are queued in the order the CPUs reach them, by the event clock), holding each for its
        cycles (none when not ``held``: a look that found nothing to do); the waits are charged to
        the CPU. Returns ``offset`` plus the waits and holds."""
        if not uses:
            return offset
        f = runner.freq
        cpu = runner.id
        now = self._engine.now
        if runner.lock_at > now + offset:  # behind this CPU's own sections (their waits included)
            offset = runner.lock_at - now
        for u in uses:
            lock = u.lock
            cycles = u.hold_cycles if held else 0.0
            hold_ns = cycles / f
            if u.atomic:  # an atomic on the lock's data, outside the lock
                w = lock.touch(runner, u.items)
            elif lock.cpu == cpu and not lock.shared:
                # only this CPU has taken it: SpinLock.acquire's first branch, without its checks
                lock.acquisitions += 1
                lock.hold_own(now + offset, hold_ns)
                offset += hold_ns
                continue
            else:
                w = lock.acquire(runner, now + offset, cycles, u.items, now, cpu, f)
            if w:
                runner.lock_wait(w, u.layer)
                offset += w
            offset += hold_ns
        runner.lock_at = now + offset
        return offset

    def _take_one(self, u: LockTake, runner: Execution, offset: float = 0.0) -> float:
        """:meth:`_take` of the one lock ``u`` (a section, held): the tag sbitmap, the SQ lock."""
        now = self._engine.now
        if runner.lock_at > now + offset:  # behind this CPU's own sections (their waits included)
            offset = runner.lock_at - now
        f = runner.freq
        cpu = runner.id
        lock = u.lock
        hold_ns = u.hold_cycles / f
        if lock.cpu == cpu and not lock.shared:
            # only this CPU has taken it: SpinLock.acquire's first branch, without its checks
            lock.acquisitions += 1
            lock.hold_own(now + offset, hold_ns)
        else:
            w = lock.acquire(runner, now + offset, u.hold_cycles, u.items, now, cpu, f)
            if w:
                runner.lock_wait(w, u.layer)
                offset += w
        offset += hold_ns
        runner.lock_at = now + offset
        return offset

    # ------------------------------------------------------------------ splitting
    def requests_for(self, nbytes: int) -> int:
        """How many requests an IO of ``nbytes`` becomes (split at ``max_sectors_kb``)."""
        return -(-nbytes // self.max_bytes) if nbytes > self.max_bytes else 1

    def split(self, req) -> list:
        """blk_queue_split: an IO larger than ``max_sectors_kb`` becomes pieces of at most that size,
        each a request with its own tag and device command; the IO completes with its last piece
        (:meth:`models.os.drivers.nvme.NvmeDriver._finish`). Pieces inherit the IO's queue, flags and task."""
        if req.nbytes <= self.max_bytes or req.op in UNSPLIT_OPS:  # discards: max_discard_sectors (NVMe: 2^32-1)
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
            p.placement = req.placement
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
    def issue(self, req: Request, runner: Execution | None = None, own_plug: int = PLUG_NONE) -> None:
        """One IO reached blk-mq (blk_mq_submit_bio) from code running on ``runner``: split if
        needed, then each request issued; ``own_plug``: the plug the direct-IO path holds it in
        (a ``PLUG_*``; none: unplugged)."""
        if req.nbytes > self.max_bytes and req.op not in UNSPLIT_OPS:
            pieces = self.split(req)
            if own_plug == PLUG_NONE:
                self.issue_batch(pieces, runner=runner, unplugged=True)
            else:  # the pieces share the path's plug
                self.issue_batch(pieces, plugged=True, runner=runner, plug_min=1, own_plug=own_plug)
            return
        h = self._hctx.get(req.qp) or self.hctx(req.qp)
        if runner is None:
            runner = self._runners[h.cpu]
        elv = h.elv
        if own_plug == PLUG_SCHEDULE:  # flushed from schedule(): kblockd runs the queue
            self.issue_batch([req], plugged=True, runner=runner, own_plug=own_plug)
            return
        if self._bypass and h.tags_free > 0 and not h.pending and not h.has_work():
            # 'none' with a free tag: blk_mq_try_issue_directly
            h.tags_free -= 1
            base = runner.lock_waited
            self._submit_after(runner, h, req, self._take_one(h.tag, runner), base)
            return
        t = self._take_one(h.tag, runner)
        if not self.nomerges:
            t = self._take(h.merge, runner, t)
            if h.has_work():
                target = elv.try_merge(req, self.max_bytes)
                if target is not None:
                    self._merged(target, req)
                    return
        self._take(h.ins, runner, t)
        h.insert(req)
        self.lock_rounds += 1
        if self._kblockd and own_plug == PLUG_NONE:
            self._kick(h, runner)
        else:
            self._run(h, runner)

    def plug(self, bios: list[Request]) -> list[Request]:
        """The submitting system call's plug (blk_start_plug .. blk_finish_plug): each bio is split
        at ``max_sectors_kb`` and then merged into an adjacent request already in the plug
        (blk_attempt_plug_merge) or becomes a request of its own. Returns the requests; a merged
        bio allocates no request and reaches no driver (it completes with its request), so the
        caller charges request and driver work per returned request."""
        if self.plug_observer is not None:
            self.plug_observer(bios)
        reqs = bios
        if any(r.nbytes > self.max_bytes for r in reqs):
            reqs = [p for r in reqs for p in self.split(r)]
        if self.nomerges < 2 and len(reqs) > 1:
            reqs = self._plug_merge(reqs)
        return reqs

    def issue_batch(
        self,
        reqs: list[Request],
        plugged: bool = False,
        runner: Execution | None = None,
        unplugged: bool = False,
        nsubmit: int | None = None,
        passthru: bool = False,
        plug_min: int = PLUG_MIN_REQUESTS,
        own_plug: int = PLUG_NONE,
    ) -> None:
        """Requests submitted together from code running on ``runner``: (if not ``plugged`` yet,
        :meth:`plug` them), offer each to the elevator's merge and insert the rest. A plugged batch
        (:data:`PLUG_MIN_REQUESTS` or more, not ``unplugged``) takes the scheduler lock once per
        hardware context and runs the queues once, here; otherwise each insert takes the lock and
        (with a scheduler, 5.x) kblockd runs the queues. ``nsubmit``: the IOs the call submitted
        (before plug merges; default: the requests); ``plug_min``: the number from which the call plugs;
        ``own_plug``: the plug the direct-IO path holds each request in (a ``PLUG_*``: flushed at its
        end, the queues are run here even when the call itself does not plug; flushed from
        schedule(), kblockd runs them, with or without a scheduler)."""
        if passthru:
            self._issue_passthru(reqs)
            return
        n = len(reqs) if nsubmit is None else nsubmit
        if not plugged:
            reqs = self.plug(reqs)
        deferred = own_plug == PLUG_SCHEDULE or (
            self._kblockd and own_plug == PLUG_NONE and (unplugged or n < plug_min)
        )
        touched = []
        t = 0.0  # ns from now: where the call's lock sections are
        gap = self._bio_gap_ns(runner, len(reqs)) if runner is not None else 0.0
        for i, req in enumerate(reqs):
            h = self._hctx.get(req.qp) or self.hctx(req.qp)
            if runner is None:
                runner = self._runners[h.cpu]
            elv = h.elv
            if i:
                t += gap
            t = self._take_one(h.tag, runner, t)
            target = None
            if not self.nomerges:
                t = self._take(h.merge, runner, t)
                if h.has_work():
                    target = elv.try_merge(req, self.max_bytes)
            if target is not None:
                self._merged(target, req)
                continue
            if deferred or h not in touched:  # a plugged batch: one lock round per hardware context
                t = self._take(h.ins, runner, t)
            h.insert(req)
            if deferred:
                self.lock_rounds += 1
                self._kick(h, runner)
            elif h not in touched:
                touched.append(h)
                self.lock_rounds += 1
        for h in touched:
            self._run(h, runner)

    def _bio_gap_ns(self, runner: Execution, n: int) -> float:
        """The time between two requests' sections of one submitting call, ns: the call's code ran
        for its segment's work time, per request the bio's way to blk-mq (the engine's issue, the
        bio, blk_mq_submit_bio) and, at the plug's flush, its dispatch (the elevator's dispatch and
        nvme_queue_rq); the sections before the flush are a request's share of the first part
        apart. Nothing when the call's segment is not the one that has just ended."""
        if n < 2:
            return 0.0
        span = runner.segment_work_ns()
        per_dispatch = (self.dispatch_cycles + self.host.kcosts.nvme_submit_cycles) / runner.freq
        rest = span - n * per_dispatch
        return rest / n if rest > 0.0 else 0.0

    def _issue_passthru(self, reqs) -> None:
        """NVMe passthrough requests (io_uring_cmd): blk_execute_rq_nowait inserts them past the IO
        scheduler (5.x blk_mq_sched_bypass_insert: passthrough requests bypass it) and runs the
        queue at once, from the submitting context."""
        for req in reqs:
            h = self._hctx.get(req.qp) or self.hctx(req.qp)
            self._passthru.add(req)
            if h.tags_free > 0 and not h.pending:
                h.tags_free -= 1
                runner = self._runners[h.cpu]
                base = runner.lock_waited
                self._submit_after(runner, h, req, self._take_one(h.tag, runner), base)
            else:
                h.pending.append(req)

    def _kick(self, h: HwContext, runner: Execution) -> None:
        """Queue a run of ``h`` on a kblockd worker (:meth:`work_cpu`), woken by ``runner`` (the CPU
        whose code inserted or completed)."""
        self.worker(self.work_cpu(h, runner)).kick(h, 1, runner)

    def work_cpu(self, h: HwContext, runner: Execution) -> int:
        """The CPU whose kblockd worker runs ``h`` asynchronously (6.1 blk_mq_hctx_next_cpu): its
        CPU when it is mapped to one; mapped to several, the first mapped one, then the next mapped
        one every :data:`BLK_MQ_CPU_WORK_BATCH` runs; the device's only queue (nr_hw_queues == 1, a
        queue mapped to every CPU): WORK_CPU_UNBOUND, the worker of the CPU that queues the work
        (``runner``)."""
        cpus = h.work_cpus
        if len(cpus) == 1:
            return cpus[0]
        if len(cpus) == len(self._runners):  # one queue for every CPU: the device's only one
            return runner.id
        h.next_cpu_batch -= 1
        if h.next_cpu_batch <= 0:
            later = [c for c in cpus if c > h.next_cpu]
            h.next_cpu = later[0] if later else cpus[0]
            h.next_cpu_batch = BLK_MQ_CPU_WORK_BATCH
        return h.next_cpu

    def run_hctx(self, h: HwContext, runner) -> None:
        """blk_mq_run_hw_queue from kblockd on ``runner``'s CPU: dispatch what the context may take."""
        self._run(h, runner)

    def _plug_merge(self, reqs: list[Request]) -> list[Request]:
        out: list[Request] = []
        for req in reqs:
            # blk_attempt_plug_merge looks at recent plug entries: the last four, newest first
            k = len(out) - 1
            last = k - 4 if k >= 4 else -1
            while k > last:
                tgt = out[k]
                k -= 1
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

    def _merged(self, target: Request, req: Request) -> None:
        self.merges += 1
        if target.merged is None:
            target.merged = []
        target.merged.append(req)
        target.flags |= req.flags  # cinterrupts: union of annotations, Urgent wins

    # ------------------------------------------------------------------ dispatch
    def _run(self, h: HwContext, runner: Execution | None = None) -> None:
        """Dispatch from ``h`` while it has free tags, on ``runner``'s CPU (default the queue's):
        each request from the elevator under its dispatch locks, then under the NVMe queue's
        sq_lock; a request whose locks made the CPU wait reaches the device that much later."""
        if runner is None:
            runner = self._runners[h.cpu]
        elv = h.elv
        t = 0.0  # ns from now: where this run's lock sections are
        base = runner.lock_waited
        r: Request | None = None
        while h.tags_free > 0:
            if h.pending:
                r = h.pending.popleft()
            else:
                # without an elevator ('none': a FIFO), nothing to dispatch when it has no work
                if self._bypass:
                    r = h.dispatch_ready() if h.has_work() else None
                    t = self._take(h.disp, runner, t, r is not None)
                elif h.has_work():  # blk_mq_do_dispatch_sched: a lockless has_work check first
                    r = elv.dispatch()
                    t = self._take(h.disp, runner, t, r is not None)
                else:
                    r = None
                if r is None:
                    return
                owner = h if r.qp is h.qp else self._hctx[r.qp]
                if owner is not h:
                    if owner.tags_free > 0 and not owner.pending:
                        owner.tags_free -= 1
                        t = self._submit_after(runner, owner, r, t, base)
                    else:
                        owner.pending.append(r)
                        owner.restart = True
                    continue
            h.tags_free -= 1
            t = self._submit_after(runner, h, r, t, base)
        if h.pending or h.has_work():
            h.restart = True

    def _submit_after(self, runner: Execution, h: HwContext, req: Request, t: float, base: float) -> float:
        """nvme_queue_rq on ``runner``'s CPU ``t`` ns from now (the sections before it): prepare the
        command, take ``h``'s NVMe queue's sq_lock and ring the doorbell, later than now by what
        this CPU has waited on locks since its count stood at ``base`` (now when nothing waited).
        Returns ``t`` past the sq_lock's section."""
        t = self._take_one(h.sq_lock, runner, t + self._prep_cycles / runner.freq)
        delay = runner.lock_waited - base
        if delay > 0.0:
            self.host.engine.call_in(delay, self.driver.submit, req)
        else:
            self.driver.submit(req)
        return t

    def _run_device(self, dev_index: int, runner: Execution | None = None) -> None:
        for h in self._dev_hctxs.get(dev_index, ()):
            self._run(h, runner)

    def complete(self, req: Request, runner: Execution | None = None) -> bool:
        """A request completed on ``runner``'s CPU (default its queue's): its tag is freed and the
        elevator fed, each under its locks; True when the elevator saw it (a passthrough request
        bypassed it)."""
        h = self._hctx[req.qp]
        if runner is None:
            runner = self._runners[h.cpu]
        h.tags_free += 1
        elv = h.elv
        seen = True
        t = 0.0
        if self._passthru and req in self._passthru:
            self._passthru.discard(req)
            seen = False
        elif not self._bypass:
            t = self._take(h.done, runner)
            elv.completed(req)
        self._take_one(h.tag, runner, t)
        if self._bypass:  # 'none': requests are held only when tags ran out
            run = RUN_DEVICE if h.pending or h.has_work() else RUN_NONE
        else:
            run = elv.restart_scope(req) if seen else RUN_NONE
            if h.restart:  # blk_mq_sched_restart
                h.restart = False
                run = run or RUN_HCTX
        if run:
            qp = req.qp
            assert qp is not None
            hctxs = (h,) if run == RUN_HCTX else self._dev_hctxs.get(qp.device.index, ())
            if self._kblockd:
                # the runs a completion asks for are asynchronous (blk_mq_run_hw_queue(hctx, true)):
                # each context's kblockd worker, woken from here; one run dispatches what every kick
                # since the last one queued
                for x in hctxs:
                    self._kick(x, runner)
            else:
                for x in hctxs:
                    self._run(x)
        return seen
