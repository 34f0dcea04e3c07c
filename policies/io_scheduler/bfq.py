"""``bfq``: Budget Fair Queueing, proportional share of sectors between processes.

Algorithm of Linux ``block/bfq-iosched.c`` / ``bfq-wf2q.c``, without cgroups or queue merging:

* **I/O priorities**: a process queue takes its class and level from the process's I/O priority
  (the io_context's, set by ioprio_set / fio's ``prio``/``prioclass``: bfq_check_ioprio_change
  reads ``icq.ioc->ioprio``; per-command priorities are not bfq's). Classes are served strictly in
  order, RT, then BE (and none), then IDLE (bfq_lookup_next_entity), except that IDLE gets a turn
  when it has not been served for ``BFQ_CL_IDLE_TIMEOUT`` = 200 ms; a queue of a higher class
  preempts the in-service one (bfq_bfqq_higher_class_or_weight), and busy queues of several
  classes make the scenario asymmetric (idling for the in-service queue). The level sets the
  weight as bfq_ioprio_to_weight does, ``(8 - level) x 10``, scaled here so that the default level
  4 keeps the default weight 100. Simplification: one virtual time for all classes (the kernel
  keeps one per class's service tree); fairness only matters within a class, as classes are
  served strictly in order.

* **Queues**: one per process (key ``req.task``, else the job) for synchronous requests, one
  shared queue for asynchronous writes. Inside a queue, requests are served in sector order
  (a forward elevator allowing back seeks up to ``back_seek_max`` at ``back_seek_penalty`` x
  their distance), except that once per service slot an expired FIFO head (``fifo_expire_*``)
  goes first.
* **Fair queueing (B-WF2Q+)**: each backlogged queue has a virtual start S and finish
  F = S + budget / weight; the system virtual time V grows by sectors served / sum of weights.
  The next queue is the one with the smallest F among those with S <= V (V jumps to the smallest
  S if none is eligible). A queue that returns after idling restarts at max(V, its old F).
* **Budgets** (sectors): the in-service queue dispatches until the next request does not fit in
  what is left of its budget, it has no requests (and no reason to idle), or ``timeout_sync``
  has passed since it started. It is charged the sectors it dispatched (asynchronous requests 3x
  in symmetric scenarios); on a budget timeout with >= 1/3 of the budget unused it is charged
  time instead (``max_budget x elapsed / timeout_sync``). The next budget follows the kernel's
  feedback: x4 when exhausted, x2 on timeout, the service actually used when it ran dry, -4 x
  minimum (or x2 with requests in flight) when idling timed out; capped at the device's
  ``max_budget`` (user value, or auto-tuned: peak rate x ``timeout_sync``; 16384 until the first
  peak-rate estimate over >= 300 ms and 32 requests).
* **Idling** (device plugging): when the in-service synchronous queue has no requests and idling
  is "better" for it, BFQ dispatches nothing else: while its requests are in flight, and then for
  up to ``slice_idle`` (>= 20 ms for weight-raised queues) after the last one completes, waiting
  for the process's next request. On NVMe (non-rotational, tagged) the kernel idles only when it
  is needed for service guarantees: the queue is weight-raised while other busy queues are not
  (or four or more other requests are in the drive), or the scenario is asymmetric (the busy,
  non-raised queues' weights differ and this queue's is not the smallest); ``strict_guarantees``
  always idles. The timer's expiry expires the queue and kicks blk-mq.
* **low_latency** (interactive weight raising): a synchronous queue that becomes backlogged while
  new, or after no activity for 2 s past its last budget timeout, gets its weight x30 for 3 s
  (the kernel scales this duration with the device peak rate and clamps it to 3..13 s; NVMe sits
  at the 3 s floor) and a 30x budget timeout; a newly raised queue, or one with a larger weight,
  preempts the in-service queue if it would be the next one served.
* **Large bursts** (6.1 ``bfq_handle_burst``): queues created within ``bfq_burst_interval``
  (180 ms) of the previous one, starting when no queue is busy, form a burst; once it holds
  ``bfq_large_burst_thresh`` (8) queues, they and every queue created shortly after are "in a large
  burst" (the processes of one job started together: fio's numjobs, a make -j) and are not weight-
  raised; one raised before the burst became large stops at its next dispatch
  (``bfq_update_wr_data``). A queue idle for 10 s past its budget timeout leaves the burst.

Not modelled: soft real-time detection, seeky/slow detection, I/O injection while idling, queue
merging (cooperating processes), the throughput-driven idling of rotational devices.
"""

from __future__ import annotations

from math import log2

from models.host import Host
from models.os.block.elevator import (
    IOPRIO_CLASS_BE,
    IOPRIO_CLASS_IDLE,
    IOPRIO_CLASS_SHIFT,
    IOPRIO_NORM,
    RUN_DEVICE,
    RUN_NONE,
    SECTOR,
    IoScheduler,
    Tunable,
    ioprio_level,
    is_sync,
)
from policies.io_scheduler.base import DEVICE, IO_SCHEDULERS, LAST_MERGE, MERGE_HASH, LockUse, SortedQueue
from simcore.errors import ConfigError
from simcore.units import NS_PER_MS, NS_PER_US

DEFAULT_WEIGHT = 100
"""Weight of a queue without an explicit one (the cgroup default, ``BFQ_DEFAULT_GRP_WEIGHT``)."""
DEFAULT_MAX_BUDGET = 16 * 1024
"""sectors (``bfq_default_max_budget``), until the peak rate is known."""
ASYNC_CHARGE_FACTOR = 3
WR_COEFF = 30
WR_DURATION_NS = 3000 * NS_PER_MS
WR_MIN_IDLE_NS = 2000 * NS_PER_MS
WR_MIN_IDLE_SLICE_NS = 20 * NS_PER_MS
RATE_MIN_INTERVAL_NS = 300 * NS_PER_MS
RATE_MIN_SAMPLES = 32
CL_IDLE_TIMEOUT_NS = 200 * NS_PER_MS
"""``BFQ_CL_IDLE_TIMEOUT`` (HZ / 5): the longest the IDLE class waits while others are served."""
BURST_INTERVAL_NS = 180 * NS_PER_MS
"""6.1 ``bfqd->bfq_burst_interval`` (msecs_to_jiffies(180)): the longest gap between two queue
creations of one burst."""
LARGE_BURST_THRESH = 8
"""6.1 ``bfqd->bfq_large_burst_thresh``: queues in a burst that make it large."""
BURST_FORGET_NS = 10_000 * NS_PER_MS
"""6.1 ``bfq_bfqq_handle_idle_busy_switch``: a queue idle this long past its budget timeout
(msecs_to_jiffies(10000)) leaves its burst."""

# The data bfqd->lock protects, as Linux 6.1 block/bfq-iosched.c's hooks touch it, each item a piece
# of data with its cache lines (name, lines, lines per level of bfq's trees: tree_levels), moved to
# the CPU whose section touches it when another CPU touched it last (counts from the code, not
# measurements; the requesting process's own bfq_queue and its sort tree are its CPU's, and not
# counted):
#: the lock word's line
_BFQ_LOCK = ("bfqd->lock", 1.0, 0.0)
#: bfq_data's hot counters: bio_bfqq/bio_bic (bfq_bio_merge), queued (bfq_add_request),
#: rq_in_driver (bfq_dispatch_remove, bfq_completed_request), in_service_queue
_BFQ_COUNTS = ("bfqd counters", 1.0, 0.0)
#: the peak-rate estimator and last_completion (bfq_update_peak_rate at dispatch, the completion)
_BFQ_RATE = ("bfqd peak rate", 1.0, 0.0)
#: the service tree of the busy queues' entities: an activation (insert), a selection and the
#: service charged (dispatch), an expiry (completion) walk it
_BFQ_TREE = ("bfq service tree", 0.0, 1.0)
#: the in-service queue's bfq_queue (its sort list, FIFO, budget, dispatched count): written by
#: whichever CPU dispatches from it or completes one of its requests
_BFQ_IN_SERVICE = ("in-service bfq_queue", 2.0, 0.0)

TOO_IDLE, BUDGET_TIMEOUT, BUDGET_EXHAUSTED, NO_MORE_REQUESTS, PREEMPTED = (
    "too_idle",
    "budget_timeout",
    "budget_exhausted",
    "no_more_requests",
    "preempted",
)


class BfqQueue:
    """Per-process queue: requests, fair-queueing timestamps, budget and weight raising."""

    __slots__ = (
        "key",
        "sync",
        "seq",
        "weight",
        "wr_coeff",
        "wr_until",
        "sort",
        "fifo",
        "active",
        "start",
        "finish",
        "budget",
        "max_budget",
        "service",
        "w_in_sum",
        "dispatched",
        "last_pos",
        "fifo_checked",
        "slot_start",
        "budget_timeout",
        "ioclass",
        "just_created",
        "in_large_burst",
    )

    def __init__(self, key, sync: bool, seq: int, weight: int, max_budget: int, ioclass: int = IOPRIO_CLASS_BE):
        self.key = key
        self.ioclass = ioclass  # RT 1, BE 2, IDLE 3 (served in that order)
        self.sync = sync
        self.seq = seq  # activation tie-break: older queue first
        self.weight = weight
        self.wr_coeff = 1
        self.wr_until = 0.0
        self.sort = SortedQueue()
        self.fifo: dict = {}  # request -> deadline (ns), insertion order
        self.active = False  # backlogged or in service (counted in the weight sum)
        self.start = self.finish = 0.0  # virtual times (sectors per unit weight)
        self.budget = 0  # sectors for the current slot
        self.max_budget = max_budget  # sectors, adapted by the budget feedback
        self.service = 0  # sectors charged in the current slot
        self.w_in_sum = 0
        self.dispatched = 0  # requests in the drive
        self.last_pos = 0  # bytes: end of the last dispatched request
        self.fifo_checked = False
        self.slot_start = 0.0
        self.budget_timeout = float("-inf")
        self.just_created = True  # until its first activation (bfq_bfqq_just_created)
        self.in_large_burst = False

    @property
    def w_eff(self) -> int:
        return self.weight * self.wr_coeff


@IO_SCHEDULERS.register("bfq")
class Bfq(IoScheduler):
    # CPU cost per request. Source: Documentation/block/bfq-iosched.rst, 1.9 us of CPU per request
    # (insert + dispatch + completion) on a 2.4 GHz laptop core = 4560 cycles; split 40/40/20.
    insert_cycles = 1824.0
    dispatch_cycles = 1824.0
    complete_cycles = 912.0
    # Locks (6.6 block/bfq-iosched.c): one bfqd->lock per device, shared by every CPU, taken by
    # bfq_bio_merge for each bio, bfq_insert_requests per request, bfq_dispatch_request per request
    # and bfq_finish_requeue_request at completion; bfq_bic_lookup takes q->queue_lock in the merge.
    # The documented 1.9 us is BFQ's single-lock-protected time per request (insert + dispatch +
    # completion hooks), so each hook runs all its cycles under the lock; the merge lookup is taken
    # out of the insert hook's cycles (estimate: 1/5 of them). The data each section touches: the
    # items below (_BFQ_*), as Linux 6.1 block/bfq-iosched.c's hooks write them.
    merge_locks = (
        LockUse("q->queue_lock", DEVICE, 0.0),
        LockUse("bfqd->lock", DEVICE, 0.2, data=(_BFQ_LOCK, _BFQ_COUNTS, LAST_MERGE, MERGE_HASH)),
    )
    insert_locks = (
        LockUse("bfqd->lock", DEVICE, 0.8, data=(_BFQ_LOCK, _BFQ_COUNTS, _BFQ_TREE, LAST_MERGE, MERGE_HASH)),
    )
    dispatch_locks = (
        LockUse(
            "bfqd->lock",
            DEVICE,
            1.0,
            data=(_BFQ_LOCK, _BFQ_COUNTS, _BFQ_RATE, _BFQ_TREE, _BFQ_IN_SERVICE, LAST_MERGE, MERGE_HASH),
        ),
    )
    complete_locks = (
        LockUse("bfqd->lock", DEVICE, 1.0, data=(_BFQ_LOCK, _BFQ_COUNTS, _BFQ_RATE, _BFQ_TREE, _BFQ_IN_SERVICE)),
    )

    TUNABLES = {
        "slice_idle": Tunable(8, "ms", "idling for the in-service sync queue's next request"),
        "slice_idle_us": Tunable(8000, "us", "slice_idle in us (wins when given)"),
        "timeout_sync": Tunable(125, "ms", "budget timeout of a service slot", lo=1),
        "max_budget": Tunable(0, "sectors", "cap of budgets; 0 = auto-tune from the peak rate"),
        "low_latency": Tunable(1, "0/1", "interactive weight raising", hi=1),
        "fifo_expire_sync": Tunable(125, "ms", "deadline of a sync request"),
        "fifo_expire_async": Tunable(250, "ms", "deadline of an async request"),
        "back_seek_max": Tunable(16384, "KiB", "longest backward seek chosen within a queue"),
        "back_seek_penalty": Tunable(2, "factor", "cost of a backward seek vs a forward one", lo=1),
        "strict_guarantees": Tunable(0, "0/1", "always idle for sync queues", hi=1),
    }

    def __init__(self, host: Host, tunables: dict):
        super().__init__(host, tunables)
        p = self.params
        self.slice_idle_ns = (
            p["slice_idle_us"] * NS_PER_US if "slice_idle_us" in tunables else p["slice_idle"] * NS_PER_MS
        )
        self.timeout_ns = p["timeout_sync"] * NS_PER_MS
        self.user_max_budget = p["max_budget"]
        self.low_latency = bool(p["low_latency"])
        self.fifo_expire_ns = (p["fifo_expire_async"] * NS_PER_MS, p["fifo_expire_sync"] * NS_PER_MS)
        self.back_max = p["back_seek_max"] * 1024
        self.back_penalty = p["back_seek_penalty"]
        self.strict = bool(p["strict_guarantees"])
        self.weights: dict = {}
        self.queues: dict = {}
        self.owner: dict = {}  # dispatched request -> its queue
        self.in_service: BfqQueue | None = None
        self.vtime = 0.0
        self.wsum = 0
        self.queued = 0
        self.rq_in_driver = 0
        self.wait_request = False
        self._idle_timer = None
        self.peak_rate = 0.0  # sectors per ns
        self._win = None  # [t0, sectors, samples] of the peak-rate window
        self.idle_class_served = 0.0  # bfq_class_idle_last_service (ns)
        self.burst: set = set()  # bfqd->burst_list
        self.burst_size = 0
        self.large_burst = False
        self.last_ins_in_burst = float("-inf")  # ns
        #: hook sections run (insert, dispatch, completion), and those that walked the service
        #: tree (an activation, a selection, an expiry): the share of sections that walk it
        self.tree_sections = 0
        self.tree_walks = 0

    # ------------------------------------------------------------- configuration
    def set_weight(self, key, weight: int) -> None:
        """Weight of the queue of process ``key`` (cgroup ``io.bfq.weight`` range 1..1000);
        takes effect when the queue is next (re)activated."""
        if not 1 <= weight <= 1000:
            raise ConfigError(f"bfq weight {weight} for {key!r} out of range [1, 1000]")
        self.weights[key] = weight
        q = self.queues.get(key)
        if q is not None:
            q.weight = weight

    @property
    def dev_max_budget(self) -> int:
        """The device-wide budget cap (sectors): user value, else auto-tuned."""
        if self.user_max_budget:
            return self.user_max_budget
        if self.peak_rate:
            return max(round(self.peak_rate * self.timeout_ns), 32)
        return DEFAULT_MAX_BUDGET

    # ------------------------------------------------------------- insert
    def insert(self, req) -> None:
        self.tree_sections += 1
        q = self._queue_for(req)
        q.sort.add(req)
        q.fifo[req] = self.now + self.fifo_expire_ns[q.sync]
        self.queued += 1
        if q is self.in_service:
            if self.wait_request:  # the request we idled for: stop idling
                self._stop_idling()
                if self.now >= q.budget_timeout:
                    self._expire(q, BUDGET_TIMEOUT)
        elif not q.active:
            self._activate(q)

    def _queue_for(self, req) -> BfqQueue:
        sync = is_sync(req)
        key = (req.task if req.task is not None else ("job", req.job)) if sync else ("async",)
        q = self.queues.get(key)
        if q is None:
            prio = getattr(req.task, "ioprio", 0) if sync else 0
            ioclass = (prio >> IOPRIO_CLASS_SHIFT) or IOPRIO_CLASS_BE
            weight = DEFAULT_WEIGHT * (8 - ioprio_level(prio)) // (8 - IOPRIO_NORM)  # bfq_ioprio_to_weight
            q = BfqQueue(
                key, sync, len(self.queues), self.weights.get(key, weight), (2 * self.dev_max_budget) // 3, ioclass
            )
            self.queues[key] = q
            q.just_created = sync  # 6.1 bfq_init_bfqq: only a sync queue is marked just created
            busy = sum(1 for x in self.queues.values() if x.active)
            if sync and (self.burst_size > 0 or busy == 0):  # 6.1 bfq_init_rq
                self._handle_burst(q, busy)
        return q

    def _handle_burst(self, q: BfqQueue, busy: int) -> None:
        """6.1 ``bfq_handle_burst`` for a new queue ``q`` (``busy``: queues busy now)."""
        now = self.now
        if now > self.last_ins_in_burst + BURST_INTERVAL_NS:  # the burst is over
            self.large_burst = False
            self.burst.clear()  # bfq_reset_burst_list
            if busy == 0:
                self.burst.add(q)
                self.burst_size = 1
            else:
                self.burst_size = 0
        elif self.large_burst:
            q.in_large_burst = True
        else:  # bfq_add_to_burst
            self.burst_size += 1
            if self.burst_size == LARGE_BURST_THRESH:
                self.large_burst = True
                for x in self.burst:
                    x.in_large_burst = True
                q.in_large_burst = True
                self.burst.clear()
            else:
                self.burst.add(q)
        self.last_ins_in_burst = now

    def _activate(self, q: BfqQueue) -> None:
        """A queue becomes backlogged (``bfq_add_bfqq_busy``): weight raising, timestamps, preemption."""
        now = self.now
        self.tree_walks += 1
        self._end_wr_if_due(q)
        in_burst = q.in_large_burst
        idle_long = q.dispatched == 0 and now >= q.budget_timeout + WR_MIN_IDLE_NS
        interactive = idle_long and not in_burst
        if not q.just_created and idle_long and now > q.budget_timeout + BURST_FORGET_NS:
            self.burst.discard(q)  # its burst's IO is over
            q.in_large_burst = False
        q.just_created = False
        if self.low_latency:  # 6.1 bfq_update_bfqq_wr_on_rq_arrival
            if q.sync and interactive:
                q.wr_coeff, q.wr_until = WR_COEFF, now + WR_DURATION_NS  # interactive: (re)start raising
            elif q.wr_coeff > 1 and in_burst:
                q.wr_coeff = 1  # raised before its burst became large: over on its next arrival
        q.active = True
        q.w_in_sum = q.w_eff
        self.wsum += q.w_in_sum
        q.budget = max(q.max_budget, self._charge(q, self._next_rq(q)))
        q.start = max(self.vtime, q.finish)
        q.finish = q.start + q.budget / q.w_eff
        s = self.in_service
        if s is not None and (
            q.ioclass < s.ioclass
            or (
                q.ioclass == s.ioclass
                and (q.wr_coeff > s.wr_coeff or q.w_eff > s.w_eff)
                and q.start <= self.vtime
                and q.finish < s.finish
            )
        ):
            self._expire(s, PREEMPTED)

    def _end_wr_if_due(self, q: BfqQueue) -> None:
        if q.wr_coeff > 1 and self.now >= q.wr_until:
            q.wr_coeff = 1

    # ------------------------------------------------------------- dispatch
    def has_work(self) -> bool:
        return self.queued > 0

    def dispatch(self):
        self.tree_sections += 1
        for _ in range(2 * len(self.queues) + 2):  # each pass expires a queue or returns
            q = self.in_service or self._select()
            if q is None:
                return None
            if self._budget_timed_out(q) and not self._must_idle(q):
                self._expire(q, BUDGET_TIMEOUT)
                continue
            if q.sort:
                rq = self._next_rq(q, check_fifo=True)
                charge = self._charge(q, rq)
                if charge > q.budget - q.service:
                    if q.service:
                        self._expire(q, BUDGET_EXHAUSTED)
                        continue
                    q.budget = charge  # a fresh slot always serves one request
                return self._dispatch_from(q, rq)
            if self.wait_request or (q.dispatched and self._better_to_idle(q)):
                return None  # plugged for the in-service queue
            self._expire(q, NO_MORE_REQUESTS)
        raise AssertionError("bfq: dispatch did not converge")  # pragma: no cover

    def _select(self) -> BfqQueue | None:
        """B-WF2Q+: smallest virtual finish among queues whose virtual start is <= V."""
        active = [q for q in self.queues.values() if q.active]
        if not active:
            return None
        best = min(q.ioclass for q in active)
        if self.now >= self.idle_class_served + CL_IDLE_TIMEOUT_NS:
            if any(q.ioclass == IOPRIO_CLASS_IDLE for q in active):
                best = IOPRIO_CLASS_IDLE  # the idle class's minimum share
            self.idle_class_served = self.now
        if best == IOPRIO_CLASS_IDLE:
            self.idle_class_served = self.now
        active = [q for q in active if q.ioclass == best]
        eligible = [q for q in active if q.start <= self.vtime]
        if not eligible:
            self.vtime = min(q.start for q in active)
            eligible = [q for q in active if q.start <= self.vtime]
        q = min(eligible, key=lambda x: (x.finish, x.seq))
        self.tree_walks += 1
        self.in_service = q
        q.fifo_checked = False
        q.slot_start = self.now
        q.budget_timeout = self.now + self.timeout_ns * q.wr_coeff
        return q

    def _dispatch_from(self, q: BfqQueue, rq):
        if q.wr_coeff > 1 and q.in_large_burst:  # 6.1 bfq_update_wr_data: bfq_bfqq_end_wr
            q.wr_coeff = 1
        q.sort.remove(rq)
        del q.fifo[rq]
        self.queued -= 1
        self._served(q, self._charge(q, rq))
        q.dispatched += 1
        q.last_pos = rq.offset + rq.nbytes
        self.owner[rq] = q
        if self._win is None:
            self._win = [self.now, 0, 0]
        self.rq_in_driver += 1
        return rq

    def _served(self, q: BfqQueue, sectors: float) -> None:
        q.service += sectors
        self.vtime += sectors / self.wsum

    def _charge(self, q: BfqQueue, rq) -> int:
        """``bfq_serv_to_charge``: sectors, x3 for async queues in symmetric scenarios."""
        sectors = -(-rq.nbytes // SECTOR)
        if q.sync or q.wr_coeff > 1 or self._asymmetric(q):
            return sectors
        return sectors * ASYNC_CHARGE_FACTOR

    def _next_rq(self, q: BfqQueue, check_fifo: bool = False):
        """An expired FIFO head (checked once per slot), else the nearest request in sector order."""
        if check_fifo and not q.fifo_checked:
            q.fifo_checked = True
            head = next(iter(q.fifo))
            if self.now >= q.fifo[head]:
                return head
        pos = q.last_pos
        return self._choose(q.sort.ceiling(pos) or q.sort.first(), q.sort.lower(pos), pos)

    def _choose(self, r1, r2, last: int):
        """``bfq_choose_req``: forward seeks cost their distance, short back seeks x penalty."""
        if r1 is None or r1 is r2:
            return r2
        if r2 is None:
            return r1
        s1, s2 = r1.offset, r2.offset
        d1 = self._seek(s1, last)
        d2 = self._seek(s2, last)
        if d1 is None and d2 is None:
            return r1 if s1 <= s2 else r2  # both wrapped: one back seek, to the lower one
        if d2 is None or (d1 is not None and (d1 < d2 or (d1 == d2 and s1 >= s2))):
            return r1
        return r2

    def _seek(self, s: int, last: int):
        if s >= last:
            return s - last
        if s + self.back_max >= last:
            return (last - s) * self.back_penalty
        return None  # would wrap

    # ------------------------------------------------------------- idling
    def _asymmetric(self, q: BfqQueue) -> bool:
        """``bfq_asymmetric_scenario``: busy queues of several priority classes, or non-raised busy
        queues have different weights and ``q``'s is not the smallest of them."""
        busy = [x for x in self.queues.values() if x.sort or x.dispatched or x is self.in_service]
        if len({x.ioclass for x in busy}) > 1:
            return True  # multiple_classes_busy
        weights = {x.weight for x in busy if x.wr_coeff == 1}
        if len(weights) < 2:
            return False
        return q.wr_coeff > 1 or q.weight > min(weights)

    def _better_to_idle(self, q: BfqQueue) -> bool:
        """Idle for ``q`` only if it is needed for service guarantees (NVMe: tagged, non-rotational)."""
        if self.slice_idle_ns <= 0 or not q.sync:
            return False
        if self.strict:
            return True
        if q.wr_coeff > 1:
            busy = [x for x in self.queues.values() if x.active]
            if any(x.wr_coeff == 1 for x in busy) or self.rq_in_driver >= q.dispatched + 4:
                return True
        return self._asymmetric(q)

    def _must_idle(self, q: BfqQueue) -> bool:
        return not q.sort and self._better_to_idle(q)

    def _arm_idle_timer(self, q: BfqQueue) -> None:
        sl = self.slice_idle_ns
        if q.wr_coeff > 1:
            sl = max(sl, WR_MIN_IDLE_SLICE_NS)
        self.wait_request = True
        self._idle_timer = self.host.engine.call_in(sl, self._idle_timer_fn, q)

    def _stop_idling(self) -> None:
        self.wait_request = False
        if self._idle_timer is not None:
            self._idle_timer.cancel()
            self._idle_timer = None

    def _idle_timer_fn(self, q: BfqQueue) -> None:
        self._idle_timer = None
        if q is not self.in_service:
            return
        self.wait_request = False
        if self.now >= q.budget_timeout:
            self._expire(q, BUDGET_TIMEOUT)
        elif not q.sort:
            self._expire(q, TOO_IDLE)
        self.kick()

    # ------------------------------------------------------------- completion
    def completed(self, req) -> None:
        self.tree_sections += 1
        q = self.owner.pop(req)
        q.dispatched -= 1
        self.rq_in_driver -= 1
        self._update_peak_rate(req)
        if q is not self.in_service:
            if q.dispatched == 0 and not q.active:
                q.budget_timeout = self.now  # idleness for weight raising counts from here
            return
        if self._must_idle(q):
            if q.dispatched == 0 and not self.wait_request:
                self._arm_idle_timer(q)
        elif self._budget_timed_out(q):
            self._expire(q, BUDGET_TIMEOUT)
        elif not q.sort and (q.dispatched == 0 or not self._better_to_idle(q)):
            self._expire(q, NO_MORE_REQUESTS)

    def tree_levels(self) -> float:
        """log2 of the in-service queue's sorted requests (the sort tree a merge, an insert and a
        dispatch descend) plus log2 of the busy queues (the service tree: walked by an activation,
        a selection or an expiry, not by a section that only adds to or takes from the in-service
        queue, so its path counts by the share of sections so far that walked it)."""
        q = self.in_service
        busy = sum(1 for x in self.queues.values() if x.active)
        walked = min(1.0, self.tree_walks / self.tree_sections) if self.tree_sections else 1.0
        return log2(1 + (len(q.sort) if q is not None else 0)) + log2(1 + busy) * walked

    def restart_scope(self, req) -> int:
        """6.1 ``bfq_completed_request`` ends with ``bfq_schedule_dispatch`` when nothing is left in
        the drive (``rq_in_driver`` 0) and requests are queued: every hardware context of the
        device is run (``blk_mq_run_hw_queues(q, true)``); otherwise the next submission or
        completion dispatches (a queue expired here waits for them, as in the kernel)."""
        return RUN_DEVICE if not self.rq_in_driver and self.queued else RUN_NONE

    def _budget_timed_out(self, q: BfqQueue) -> bool:
        """``bfq_may_expire_for_budg_timeout``."""
        return self.now >= q.budget_timeout and (not self.wait_request or q.budget - q.service >= q.budget / 3)

    def _update_peak_rate(self, req) -> None:
        """Peak-rate estimate for auto-tuning ``max_budget``: completed sectors over windows of
        >= 300 ms and >= 32 requests; only higher rates are folded in (low-pass, 1/10)."""
        win = self._win
        if win is None:
            return
        win[1] += req.nbytes / SECTOR
        win[2] += 1
        elapsed = self.now - win[0]
        if elapsed < RATE_MIN_INTERVAL_NS:
            return
        if win[2] >= RATE_MIN_SAMPLES:
            rate = win[1] / elapsed
            if rate > self.peak_rate:
                self.peak_rate = rate if not self.peak_rate else self.peak_rate * 0.9 + rate * 0.1
        self._win = None

    # ------------------------------------------------------------- expiration
    def _expire(self, q: BfqQueue, reason: str) -> None:
        """``bfq_bfqq_expire``: charge, recompute the budget, requeue or deactivate."""
        self.tree_walks += 1
        if q.wr_coeff == 1 and reason == BUDGET_TIMEOUT and q.budget - q.service >= q.budget / 3:
            used = min(self.now - q.slot_start, self.timeout_ns)
            charge = max(self.dev_max_budget * used / self.timeout_ns, q.service)
            q.budget = max(q.budget, charge)
            self._served(q, charge - q.service)
        self._recalc_budget(q, reason)
        if self.wait_request or self._idle_timer is not None:
            self._stop_idling()
        self.in_service = None
        q.finish = q.start + q.service / q.w_in_sum
        q.service = 0
        self.wsum -= q.w_in_sum
        if q.sort:  # requeue with its new budget, start where it stopped
            self._end_wr_if_due(q)
            q.w_in_sum = q.w_eff
            self.wsum += q.w_in_sum
            q.start = q.finish
            q.finish = q.start + q.budget / q.w_eff
        else:
            q.active = False
            q.w_in_sum = 0

    def _recalc_budget(self, q: BfqQueue, reason: str) -> None:
        """``__bfq_bfqq_recalc_budget``: the feedback that sizes the next slot."""
        cap = self.dev_max_budget
        min_budget = cap // 32
        budget = q.max_budget
        if q.sync and q.wr_coeff == 1:
            if reason == TOO_IDLE:
                if q.dispatched > 0:
                    budget = min(budget * 2, cap)
                else:
                    budget = budget - 4 * min_budget if budget > 5 * min_budget else min_budget
            elif reason == BUDGET_TIMEOUT:
                budget = min(budget * 2, cap)
            elif reason == BUDGET_EXHAUSTED:
                budget = min(budget * 4, cap)
            elif reason == NO_MORE_REQUESTS:
                budget = max(int(q.service), min_budget)
            else:
                return  # preempted: keep the budget
        elif not q.sync:
            budget = cap
        q.max_budget = min(budget, cap)
        if q.sort:
            q.budget = max(q.max_budget, self._charge(q, self._next_rq(q)))
