"""``mq-deadline``: sector-sorted dispatch in batches, with per-direction deadlines and I/O
priority levels.

Algorithm of Linux ``block/mq-deadline.c`` (6.x):

* three priority levels (``dd_per_prio``): RT, BE (class none counts as BE) and IDLE, from the
  request's I/O priority class (its own, else its task's); each level has, per direction (read;
  write = everything else), a list sorted by sector and a FIFO whose requests carry a deadline
  ``insert time + read_expire / write_expire``;
* levels are served in order: a lower level gets nothing while a higher one has requests queued
  or in the drive (``dd_queued`` = inserted - completed), except that when two or more levels are
  queued, a BE or IDLE request waiting longer than ``prio_aging_expire`` goes first
  (dd_dispatch_prio_aged_requests);
* within a level, a *batch* dispatches up to ``fifo_batch`` requests of one direction in
  ascending sector order, continuing from the end of the previous request (``latest_pos``); it
  ends early when no request lies at or beyond that position;
* a new batch prefers reads; each read batch started while writes wait counts as one starvation,
  and once writes have been starved ``writes_starved`` times the next batch is a write batch
  (batch count, starvation and the last direction are shared by the levels, as in the kernel);
* a new batch starts at the head of the FIFO if that head's deadline has passed (or nothing lies
  ahead in sector order), else at the next request in sector order;
* the scheduler starts as if a write batch had just been dispatched (``last_dir = DD_WRITE``).

Merging (``try_merge``): the elevator's back merge (a queued request that ends where the new one
starts, ``elv_rqhash_find``) and mq-deadline's front merge (a queued request that starts where the
new one ends, ``dd_request_merge``, when ``front_merges`` is 1), both within one priority level
(blk_rq_merge_ok refuses requests of different priorities).

Zone write locking (a zoned device, v5.15-v6.9: ``blk_req_can_dispatch_to_zone`` in
``deadline_fifo_request`` / ``deadline_next_request``, ``blk_req_zone_write_lock`` at dispatch,
``blk_req_zone_write_unlock`` in ``dd_finish_request``): a dispatched write locks its zone until it
completes, so one write per zone is at the device at a time; a write to a locked zone is skipped
(the next one in sector order, the oldest unlocked one in the FIFO), and when only writes to locked
zones are queued nothing is dispatched. Reads, zone appends and zone management are not locked.

Not modelled: ``async_depth`` (a limit on request allocation, outside the scheduler),
request-to-request merges on insert.
"""

from __future__ import annotations

from math import log2

from models.host import Host
from models.os.block.elevator import (
    IOPRIO_CLASS_IDLE,
    IOPRIO_CLASS_RT,
    RUN_HCTX,
    RUN_NONE,
    IoScheduler,
    Tunable,
    ioprio_class,
)
from policies.io_scheduler.base import DEVICE, IO_SCHEDULERS, LAST_MERGE, MERGE_HASH, LockUse, SortedQueue
from simcore.units import NS_PER_MS

READ, WRITE = 0, 1
RT_PRIO, BE_PRIO, IDLE_PRIO = 0, 1, 2


def _prio(req) -> int:
    """``ioprio_class_to_prio``: RT -> 0, none and BE -> 1, IDLE -> 2."""
    cls = ioprio_class(req)
    return RT_PRIO if cls == IOPRIO_CLASS_RT else IDLE_PRIO if cls == IOPRIO_CLASS_IDLE else BE_PRIO


class _PerPrio:
    """``struct dd_per_prio``: per direction, the sector-sorted list, the FIFO and the position."""

    __slots__ = ("sort", "fifo", "latest_pos")

    def __init__(self):
        self.sort = (SortedQueue(), SortedQueue())
        #: per direction: request -> deadline (ns), in insertion order (dicts keep it)
        self.fifo: tuple[dict, dict] = ({}, {})
        self.latest_pos = [0, 0]


def _dir(req) -> int:
    """``rq_data_dir``: reads are READ, every other operation WRITE."""
    return READ if req.op == "read" else WRITE


# The data dd->lock protects, as Linux 6.1 block/mq-deadline.c's sections touch it, each item a
# piece of data with its cache lines (name, lines, lines per level of the sort tree), moved to the
# CPU whose section touches it when another CPU touched it last (struct layouts by field sizes,
# x86-64, 64-byte lines; counts, not measurements):
#: the lock word, on the line of the tunables the sections read (fifo_expire, fifo_batch, ...)
_LOCK = ("dd->lock", 1.0, 0.0)
#: per_prio[BE]'s fifo_list and sort_list heads (dd_per_prio: 16-byte list_heads, rb_roots); the
#: merge lookup (elv_rb_find) and the insert (elv_rb_add) descend the sort tree, one request (written
#: by the CPU that inserted it) per level
_HEADS_WALK = ("per_prio lists", 1.0, 1.0)
#: the same heads as the dispatch touches them (rb_next from the dispatched request: a node)
_HEADS = _HEADS_WALK
#: per_prio's next_rq, latest_pos and its io_stats_per_prio (inserted, merged, dispatched under the
#: lock; completed, an atomic_inc by dd_finish_request outside it, on the same line)
_STATS = ("per_prio next_rq and stats", 1.0, 0.0)
#: last_dir, batching, starved: written by every dispatch (after the per_prio array)
_BATCH = ("dd batching state", 1.0, 0.0)
# (and the block layer's LAST_MERGE and MERGE_HASH, models.os.block.elevator)


@IO_SCHEDULERS.register("mq-deadline")
class MqDeadline(IoScheduler):
    # CPU cost per request. Source: Documentation/block/bfq-iosched.rst measures 0.7 us of CPU per
    # request (insert + dispatch + completion) for mq-deadline on a 2.4 GHz laptop core
    # = 1680 cycles; split 40/40/20 (assumption: list work on insert and dispatch, little on
    # completion). Calibration parameters of the platform, not tunables.
    insert_cycles = 672.0
    dispatch_cycles = 672.0
    complete_cycles = 336.0
    # Locks (6.6 block/mq-deadline.c): one dd->lock per device, shared by every hardware context
    # and CPU, taken by dd_bio_merge for each bio, dd_insert_requests once per list and
    # dd_dispatch_request per request; dd_finish_request takes no lock but increments the shared
    # per-priority completion counter (atomic_inc, one line written by every completing CPU; 5.15
    # used per-CPU counters). The insert and dispatch hooks' list work runs under the lock; the
    # merge lookup is taken out of the insert hook (estimate: 1/5), the atomic is ~1/10 of the
    # completion hook (estimate). Lines a hand-off moves: the lock with the per-priority FIFO and
    # sort-list heads and the batching state (estimate: 3), and the path through a sort list's
    # rb-tree (tree_levels): dd_bio_merge's front-merge lookup (elv_rb_find) and the insert's
    # elv_rb_add descend it, one request (another CPU wrote it) per level, the dispatch's
    # rb_next/rb_erase touch a node or two: half a path per section on average (estimate).
    merge_locks = (LockUse("dd->lock", DEVICE, 0.2, data=(_LOCK, _HEADS_WALK, LAST_MERGE, MERGE_HASH)),)
    insert_locks = (LockUse("dd->lock", DEVICE, 0.8, data=(_LOCK, _HEADS_WALK, _STATS, LAST_MERGE, MERGE_HASH)),)
    dispatch_locks = (LockUse("dd->lock", DEVICE, 1.0, data=(_LOCK, _HEADS, _STATS, _BATCH, LAST_MERGE, MERGE_HASH)),)
    complete_locks = (LockUse("dd->lock", DEVICE, 0.1, data=(_STATS,), atomic=True),)

    TUNABLES = {
        "read_expire": Tunable(500, "ms", "deadline of a read, from insertion"),
        "write_expire": Tunable(5000, "ms", "deadline of a write, from insertion"),
        "writes_starved": Tunable(2, "read batches", "read batches allowed while writes wait"),
        "fifo_batch": Tunable(16, "requests", "requests per batch (0: each dispatch starts a batch)"),
        "front_merges": Tunable(1, "0/1", "look for front merges", hi=1),
        "async_depth": Tunable(0, "requests", "accepted, not modelled (async allocation limit)"),
        "prio_aging_expire": Tunable(10000, "ms", "a lower-priority request waiting this long goes first"),
    }

    def __init__(self, host: Host, tunables: dict):
        super().__init__(host, tunables)
        p = self.params
        self.fifo_expire_ns = (p["read_expire"] * NS_PER_MS, p["write_expire"] * NS_PER_MS)
        self.fifo_batch = p["fifo_batch"]
        self.writes_starved = p["writes_starved"]
        self.front_merges = bool(p["front_merges"])
        self.aging_ns = p["prio_aging_expire"] * NS_PER_MS
        self.per_prio = (_PerPrio(), _PerPrio(), _PerPrio())
        self.queued = [0, 0, 0]  # dd_queued: inserted - completed, per level
        self.prio_of: dict = {}  # inserted request -> its level (until it completes)
        #: elevator merge hash: (level, direction, end byte) -> request
        self._ends: dict[tuple[int, int, int], object] = {}
        self.last_dir = WRITE
        self.batching = 0
        self.starved = 0
        #: zone write locking (a zoned device: zone_bytes > 0): locked zone -> the write holding it
        self.zone_locks: dict[int, object] = {}

    # ------------------------------------------------------------- insert / merge
    def insert(self, req) -> None:
        d = _dir(req)
        pr = _prio(req)
        pp = self.per_prio[pr]
        pp.sort[d].add(req)
        pp.fifo[d][req] = self.now + self.fifo_expire_ns[d]
        self._ends[(pr, d, req.offset + req.nbytes)] = req
        self.queued[pr] += 1
        self.prio_of[req] = pr

    def completed(self, req) -> None:
        pr = self.prio_of.pop(req, None)
        if pr is not None:
            self.queued[pr] -= 1
        if self.zone_locks:
            z = req.offset // self.zone_bytes
            if self.zone_locks.get(z) is req:
                del self.zone_locks[z]  # blk_req_zone_write_unlock

    def try_merge(self, req, max_bytes: int | None = None):
        """Back merge, else front merge (if ``front_merges``); returns the grown request or None.

        ``max_bytes`` is the queue's ``max_sectors_kb`` limit in bytes (None: no limit).
        """
        d = _dir(req)
        pr = _prio(req)
        end = req.offset + req.nbytes
        target = self._ends.get((pr, d, req.offset))
        if target is not None and target.op == req.op and _fits(target, req, max_bytes):
            del self._ends[(pr, d, req.offset)]
            target.nbytes += req.nbytes
            self._ends[(pr, d, end)] = target
            return target
        if not self.front_merges:
            return None
        sort = self.per_prio[pr].sort[d]
        target = sort.ceiling(end)
        if target is None or target.offset != end or target.op != req.op or not _fits(target, req, max_bytes):
            return None
        sort.remove(target)  # its sort key changes (dd_request_merged)
        target.offset = req.offset
        target.nbytes += req.nbytes
        sort.add(target)
        return target

    # ------------------------------------------------------------- dispatch
    def dispatch(self):
        """``dd_dispatch_request``: aged lower-priority requests first, then the levels in order
        (a level with requests queued or in the drive holds back the ones below it)."""
        now = self.now
        q = self.queued
        if (q[0] > 0) + (q[1] > 0) + (q[2] > 0) >= 2:
            for pr in (BE_PRIO, IDLE_PRIO):
                rq = self._dispatch_prio(pr, now - self.aging_ns)
                if rq is not None:
                    return rq
        for pr in (RT_PRIO, BE_PRIO, IDLE_PRIO):
            rq = self._dispatch_prio(pr, now)
            if rq is not None or q[pr]:
                return rq
        return None

    def _dispatch_prio(self, pr: int, latest_start: float):
        """``__dd_dispatch_request`` for one level; only requests inserted by ``latest_start``."""
        pp = self.per_prio[pr]
        zoned = self.zone_bytes > 0
        pos = pp.latest_pos[self.last_dir]
        rq = self._next_unlocked(pp.sort[self.last_dir], pos) if zoned else pp.sort[self.last_dir].ceiling(pos)
        if rq is None or self.batching >= self.fifo_batch:  # not entitled to go on batching
            reads, writes = bool(pp.fifo[READ]), bool(pp.fifo[WRITE])
            if reads and not (writes and self._starve_writes()):
                d = READ
            elif writes:
                self.starved = 0
                d = WRITE
            else:
                return None
            rq = self._next_unlocked(pp.sort[d], pp.latest_pos[d]) if zoned else pp.sort[d].ceiling(pp.latest_pos[d])
            if rq is None or self._fifo_expired(pp, d):
                # restart from the oldest request (zoned: the oldest one whose zone is unlocked)
                rq = next((r for r in pp.fifo[d] if self._can_dispatch(r)), None) if zoned else next(iter(pp.fifo[d]))
                if rq is None:
                    return None  # only writes to locked zones are queued
            self.last_dir = d
            self.batching = 0
        d = _dir(rq)
        if pp.fifo[d][rq] > latest_start + self.fifo_expire_ns[d]:  # started_after (deadline - expire)
            return None
        return self._move(pp, pr, rq)

    def _can_dispatch(self, rq) -> bool:
        """``blk_req_can_dispatch_to_zone``: not a write, or a write to an unlocked zone."""
        return rq.op != "write" or rq.offset // self.zone_bytes not in self.zone_locks

    def _next_unlocked(self, sort: SortedQueue, pos: int):
        """``deadline_next_request`` on a zoned device: the first request at or after ``pos`` in
        sector order that may be dispatched, or None."""
        for rq in sort.from_pos(pos):
            if self._can_dispatch(rq):
                return rq
        return None

    def _starve_writes(self) -> bool:
        """``dd->starved++ >= dd->writes_starved``: True when writes must go now."""
        starved = self.starved
        self.starved += 1
        return starved >= self.writes_starved

    def _fifo_expired(self, pp: _PerPrio, d: int) -> bool:
        fifo = pp.fifo[d]
        return bool(fifo) and self.now >= fifo[next(iter(fifo))]

    def _move(self, pp: _PerPrio, pr: int, rq):
        d = _dir(rq)
        pp.sort[d].remove(rq)
        del pp.fifo[d][rq]
        end = rq.offset + rq.nbytes
        if self._ends.get((pr, d, end)) is rq:
            del self._ends[(pr, d, end)]
        pp.latest_pos[d] = end
        self.batching += 1
        if self.zone_bytes and rq.op == "write":
            self.zone_locks[rq.offset // self.zone_bytes] = rq  # blk_req_zone_write_lock
        return rq

    def has_work(self) -> bool:
        return any(pp.fifo[READ] or pp.fifo[WRITE] for pp in self.per_prio)

    def tree_levels(self) -> float:
        """log2 of the requests in the sort lists (the rb-trees ``elv_rb_add`` descends)."""
        return log2(1 + sum(len(pp.sort[READ]) + len(pp.sort[WRITE]) for pp in self.per_prio))

    def restart_scope(self, req) -> int:
        """6.1 ``dd_finish_request``: only on a zoned device, when writes are queued, does a
        completion (which unlocked its zone) mark its context for a restart; dispatch never holds
        a request back otherwise."""
        if self.zone_bytes and any(pp.fifo[WRITE] for pp in self.per_prio):
            return RUN_HCTX
        return RUN_NONE


def _fits(target, req, max_bytes: int | None) -> bool:
    return max_bytes is None or target.nbytes + req.nbytes <= max_bytes
