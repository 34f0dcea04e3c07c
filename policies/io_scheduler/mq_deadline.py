"""``mq-deadline``: sector-sorted dispatch in batches, with per-direction deadlines.

Algorithm of Linux ``block/mq-deadline.c`` (6.x, one priority level):

* each direction (read; write = everything else) has a list sorted by sector and a FIFO whose
  requests carry a deadline ``insert time + read_expire / write_expire``;
* a *batch* dispatches up to ``fifo_batch`` requests of one direction in ascending sector order,
  continuing from the end of the previous request (``latest_pos``); it ends early when no request
  lies at or beyond that position;
* a new batch prefers reads; each read batch started while writes wait counts as one starvation,
  and once writes have been starved ``writes_starved`` times the next batch is a write batch;
* a new batch starts at the head of the FIFO if that head's deadline has passed (or nothing lies
  ahead in sector order), else at the next request in sector order;
* the scheduler starts as if a write batch had just been dispatched (``last_dir = DD_WRITE``).

Merging (``try_merge``): the elevator's back merge (a queued request that ends where the new one
starts, ``elv_rqhash_find``) and mq-deadline's front merge (a queued request that starts where the
new one ends, ``dd_request_merge``, when ``front_merges`` is 1).

Not modelled: I/O priority classes and ``prio_aging_expire``, ``async_depth`` (a limit on request
allocation, outside the scheduler), zoned-write locking, request-to-request merges on insert.
"""

from __future__ import annotations

from models.os.iosched import IoScheduler, Tunable
from policies.io_scheduler.base import IO_SCHEDULERS, SortedQueue
from simcore.units import NS_PER_MS

READ, WRITE = 0, 1


def _dir(req) -> int:
    """``rq_data_dir``: reads are READ, every other operation WRITE."""
    return READ if req.op == "read" else WRITE


@IO_SCHEDULERS.register("mq-deadline")
class MqDeadline(IoScheduler):
    # CPU cost per request. Source: Documentation/block/bfq-iosched.rst measures 0.7 us of CPU per
    # request (insert + dispatch + completion) for mq-deadline on a 2.4 GHz laptop core
    # = 1680 cycles; split 40/40/20 (assumption: list work on insert and dispatch, little on
    # completion). Calibration parameters of the platform, not tunables.
    insert_cycles = 672.0
    dispatch_cycles = 672.0
    complete_cycles = 336.0

    TUNABLES = {
        "read_expire": Tunable(500, "ms", "deadline of a read, from insertion"),
        "write_expire": Tunable(5000, "ms", "deadline of a write, from insertion"),
        "writes_starved": Tunable(2, "read batches", "read batches allowed while writes wait"),
        "fifo_batch": Tunable(16, "requests", "requests per batch (0: each dispatch starts a batch)"),
        "front_merges": Tunable(1, "0/1", "look for front merges", hi=1),
        "async_depth": Tunable(0, "requests", "accepted, not modelled (async allocation limit)"),
        "prio_aging_expire": Tunable(10000, "ms", "accepted, not modelled (one priority level)"),
    }

    def __init__(self, host, tunables: dict):
        super().__init__(host, tunables)
        p = self.params
        self.fifo_expire_ns = (p["read_expire"] * NS_PER_MS, p["write_expire"] * NS_PER_MS)
        self.fifo_batch = p["fifo_batch"]
        self.writes_starved = p["writes_starved"]
        self.front_merges = bool(p["front_merges"])
        self.sort = (SortedQueue(), SortedQueue())
        #: per direction: request -> deadline (ns), in insertion order (dicts keep it)
        self.fifo: tuple[dict, dict] = ({}, {})
        #: elevator merge hash: (direction, end byte) -> request
        self._ends: dict[tuple[int, int], object] = {}
        self.latest_pos = [0, 0]
        self.last_dir = WRITE
        self.batching = 0
        self.starved = 0

    # ------------------------------------------------------------- insert / merge
    def insert(self, req) -> None:
        d = _dir(req)
        self.sort[d].add(req)
        self.fifo[d][req] = self.now + self.fifo_expire_ns[d]
        self._ends[(d, req.offset + req.nbytes)] = req

    def try_merge(self, req, max_bytes: int | None = None):
        """Back merge, else front merge (if ``front_merges``); returns the grown request or None.

        ``max_bytes`` is the queue's ``max_sectors_kb`` limit in bytes (None: no limit).
        """
        d = _dir(req)
        end = req.offset + req.nbytes
        target = self._ends.get((d, req.offset))
        if target is not None and target.op == req.op and _fits(target, req, max_bytes):
            del self._ends[(d, req.offset)]
            target.nbytes += req.nbytes
            self._ends[(d, end)] = target
            return target
        if not self.front_merges:
            return None
        target = self.sort[d].ceiling(end)
        if target is None or target.offset != end or target.op != req.op or not _fits(target, req, max_bytes):
            return None
        self.sort[d].remove(target)  # its sort key changes (dd_request_merged)
        target.offset = req.offset
        target.nbytes += req.nbytes
        self.sort[d].add(target)
        return target

    # ------------------------------------------------------------- dispatch
    def dispatch(self):
        rq = self.sort[self.last_dir].ceiling(self.latest_pos[self.last_dir])
        if rq is not None and self.batching < self.fifo_batch:
            return self._move(rq)  # still entitled to batch
        reads, writes = bool(self.fifo[READ]), bool(self.fifo[WRITE])
        if reads and not (writes and self._starve_writes()):
            d = READ
        elif writes:
            self.starved = 0
            d = WRITE
        else:
            return None
        nxt = self.sort[d].ceiling(self.latest_pos[d])
        if nxt is None or self._fifo_expired(d):
            nxt = next(iter(self.fifo[d]))  # restart from the oldest request
        self.last_dir = d
        self.batching = 0
        return self._move(nxt)

    def _starve_writes(self) -> bool:
        """``dd->starved++ >= dd->writes_starved``: True when writes must go now."""
        starved = self.starved
        self.starved += 1
        return starved >= self.writes_starved

    def _fifo_expired(self, d: int) -> bool:
        fifo = self.fifo[d]
        return bool(fifo) and self.now >= fifo[next(iter(fifo))]

    def _move(self, rq):
        d = _dir(rq)
        self.sort[d].remove(rq)
        del self.fifo[d][rq]
        end = rq.offset + rq.nbytes
        if self._ends.get((d, end)) is rq:
            del self._ends[(d, end)]
        self.latest_pos[d] = end
        self.batching += 1
        return rq

    def has_work(self) -> bool:
        return bool(self.fifo[READ]) or bool(self.fifo[WRITE])


def _fits(target, req, max_bytes: int | None) -> bool:
    return max_bytes is None or target.nbytes + req.nbytes <= max_bytes
