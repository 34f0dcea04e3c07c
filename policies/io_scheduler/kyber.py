"""``kyber``: per-domain token pools whose depths follow latency targets.

Algorithm of Linux ``block/kyber-iosched.c`` (5.0+):

* domains read / write / discard / other (5.0+ puts every write in the write domain; 4.12-4.20
  had "sync write"); each has a token pool, initially its cap 256 / 128 / 64 / 16. A request is
  dispatched only with a free token of its domain, held until completion (a depth below the
  number of tokens in flight revokes nothing: new requests wait until enough complete);
* dispatch round-robins over domains in batches of 16 / 8 / 1 / 1 requests; a domain without
  requests or tokens passes its turn;
* on completion, the total latency (``now - t_submit``) and the I/O latency
  (``now - t_dispatch``, the kernel's ``io_start_time_ns``) of read, write and discard requests go
  into per-domain histograms of 8 buckets, each target/4 wide (the last is open-ended);
* a timer fires at most every 100 ms after completions. A domain's percentile is computed once it
  has 500 samples or 1 s has passed since its window started (then its histogram is cleared):
  if any domain's I/O-latency p90 is in a bucket >= 4 (>= target), the device is congested;
  each domain whose total-latency p99 is known (or remembered from an earlier window when
  congested) gets ``depth = depth x (p99 bucket + 1) / 4`` clamped to [1, cap] if the device is
  congested or its own p99 >= target. So under congestion domains meeting their target are
  throttled (p99 in bucket 0..2 -> 1/4..3/4 of the depth), and a domain missing its target
  (bucket 4..7) grows 5/4..2x, recovering the depth it lost; with no congestion and good
  latencies nothing changes.

Not modelled: per-hctx software-queue lists and their merging (one FIFO per domain), the async
depth limit on scheduler tags (75%), bit-level sbitmap behaviour (a token counter instead).
"""

from __future__ import annotations

from collections import deque

from models.host import Host
from models.os.block.elevator import RUN_HCTX, RUN_NONE, IoScheduler, Tunable
from policies.io_scheduler.base import CTX, DEVICE, HCTX, IO_SCHEDULERS, LockUse
from simcore.units import NS_PER_MS, NS_PER_S

DOMAINS = ("read", "write", "discard", "other")
READ, WRITE, DISCARD, OTHER = range(4)
DEPTH_CAP = (256, 128, 64, 16)
"""Maximum device-wide depth per domain (``kyber_depth``)."""
BATCH = (16, 8, 1, 1)
"""Requests dispatched in a row per domain (``kyber_batch_size``)."""
DISCARD_TARGET_NS = 5_000_000_000
"""Discard latency target (not a sysfs tunable)."""
LATENCY_SHIFT = 2
GOOD_BUCKETS = 1 << LATENCY_SHIFT  # buckets 0..3: <= target
BUCKETS = 2 << LATENCY_SHIFT  # 8 buckets
TOTAL, IO = 0, 1
TIMER_NS = 100 * NS_PER_MS  # timer_reduce(jiffies + HZ / 10)
WINDOW_NS = 1 * NS_PER_S  # latency_timeout = jiffies + HZ
MIN_SAMPLES = 500


def domain_of(req) -> int:
    """``kyber_sched_domain`` from the request's operation."""
    return {"read": READ, "write": WRITE, "trim": DISCARD}.get(req.op, OTHER)


@IO_SCHEDULERS.register("kyber")
class Kyber(IoScheduler):
    # CPU cost per request: no published figure; placed between mq-deadline (0.7 us) and bfq
    # (1.9 us) at 1.0 us on a 2.4 GHz core = 2400 cycles, split 40/40/20. UNCALIBRATED: kyber
    # avoids a device-wide lock and may well be cheaper than mq-deadline on many-core hosts.
    insert_cycles = 960.0
    dispatch_cycles = 960.0
    complete_cycles = 480.0
    # Locks (block/kyber-iosched.c): no device-wide lock. kyber_bio_merge and kyber_insert_requests
    # take the software context's kcq->lock; kyber_dispatch_request the hardware context's khd->lock
    # and a token of the request's domain from kqd->domain_tokens (an sbitmap_queue per device,
    # shared by every CPU: __sbitmap_queue_get, an atomic on a shared word); kyber_finish_request
    # clears the token (sbitmap_queue_clear). Shares of each hook's cycles (estimate): the list work
    # under kcq->lock and khd->lock; an atomic (~1/20 of the dispatch, ~1/10 of the completion)
    # on the token word, one line.
    merge_locks = (LockUse("kcq->lock", CTX, 0.2, 2.0),)
    insert_locks = (LockUse("kcq->lock", CTX, 0.8, 2.0),)
    dispatch_locks = (LockUse("khd->lock", HCTX, 0.8, 2.0), LockUse("domain_tokens", DEVICE, 0.05))
    complete_locks = (LockUse("domain_tokens", DEVICE, 0.1),)

    TUNABLES = {
        "read_lat_nsec": Tunable(2_000_000, "ns", "read latency target", lo=1),
        "write_lat_nsec": Tunable(10_000_000, "ns", "write latency target", lo=1),
    }

    def __init__(self, host: Host, tunables: dict):
        super().__init__(host, tunables)
        self.targets_ns = [self.params["read_lat_nsec"], self.params["write_lat_nsec"], DISCARD_TARGET_NS]
        self.depth = list(DEPTH_CAP)
        self.in_flight = [0, 0, 0, 0]
        self.rqs = [deque() for _ in DOMAINS]
        self.cur_domain = 0
        self.batching = 0
        #: buckets[domain][TOTAL|IO][bucket] for read, write, discard
        self.buckets = [[[0] * BUCKETS for _ in range(2)] for _ in range(3)]
        self.latency_timeout = [0.0, 0.0, 0.0]  # 0: no window open
        self.domain_p99 = [-1, -1, -1]
        self._timer = None
        self._queued = 0

    # ------------------------------------------------------------- queueing
    def insert(self, req) -> None:
        self.rqs[domain_of(req)].append(req)
        self._queued += 1

    def has_work(self) -> bool:
        return self._queued > 0

    def dispatch(self):
        if self.batching < BATCH[self.cur_domain]:
            rq = self._dispatch_cur()
            if rq is not None:
                return rq
        self.batching = 0
        for _ in DOMAINS:  # wraps back to the original domain last
            self.cur_domain = (self.cur_domain + 1) % len(DOMAINS)
            rq = self._dispatch_cur()
            if rq is not None:
                return rq
        return None

    def _dispatch_cur(self):
        d = self.cur_domain
        if not self.rqs[d] or self.in_flight[d] >= self.depth[d]:
            return None
        self.in_flight[d] += 1
        self.batching += 1
        self._queued -= 1
        return self.rqs[d].popleft()

    # ------------------------------------------------------------- completion
    def completed(self, req) -> None:
        d = domain_of(req)
        self.in_flight[d] -= 1  # kyber_finish_request: release the token
        if d != OTHER:
            now = self.now
            self._sample(d, TOTAL, now - req.t_submit)
            self._sample(d, IO, now - req.t_dispatch)
            if self._timer is None:
                self._timer = self.host.engine.call_in(TIMER_NS, self._timer_fn)

    def restart_scope(self, req) -> int:
        """6.1 ``kyber_finish_request`` frees the request's domain token; a context that found no
        token waits on the domain's sbitmap and ``kyber_domain_wake`` runs it (asynchronously) once
        one is free: a run when the domain has requests waiting and now a token for one."""
        d = domain_of(req)
        return RUN_HCTX if self.rqs[d] and self.in_flight[d] < self.depth[d] else RUN_NONE

    def _sample(self, d: int, kind: int, latency: float) -> None:
        """``add_latency_sample``: bucket = (latency - 1) / (target / 4), capped at 7."""
        if latency > 0:
            width = max(self.targets_ns[d] >> LATENCY_SHIFT, 1)
            bucket = min(int((latency - 1) // width), BUCKETS - 1)
        else:
            bucket = 0
        self.buckets[d][kind][bucket] += 1

    def _percentile(self, d: int, kind: int, pct: int) -> int:
        """``calculate_percentile``: the bucket holding the pct-th percentile, or -1 if the domain
        has no samples, or fewer than 500 and its 1 s window is still open."""
        buckets = self.buckets[d][kind]
        samples = sum(buckets)
        if not samples:
            return -1
        now = self.now
        if not self.latency_timeout[d]:
            self.latency_timeout[d] = now + WINDOW_NS
        if samples < MIN_SAMPLES and now < self.latency_timeout[d]:
            return -1
        self.latency_timeout[d] = 0.0
        need = -(-samples * pct // 100)  # DIV_ROUND_UP
        bucket = 0
        while bucket < BUCKETS - 1 and buckets[bucket] < need:
            need -= buckets[bucket]
            bucket += 1
        buckets[:] = [0] * BUCKETS
        return bucket

    def _timer_fn(self) -> None:
        """``kyber_timer_fn``: detect congestion, then rescale the domains' depths."""
        self._timer = None
        bad = False
        for d in range(3):
            if self._percentile(d, IO, 90) >= GOOD_BUCKETS:
                bad = True
        grew = False
        for d in range(3):
            p99 = self._percentile(d, TOTAL, 99)
            if bad:
                if p99 < 0:
                    p99 = self.domain_p99[d]
                self.domain_p99[d] = -1
            elif p99 >= 0:
                self.domain_p99[d] = p99
            if p99 < 0:
                continue
            if bad or p99 >= GOOD_BUCKETS:
                new = min(max((self.depth[d] * (p99 + 1)) >> LATENCY_SHIFT, 1), DEPTH_CAP[d])
                grew |= new > self.depth[d] and bool(self.rqs[d])
                self.depth[d] = new
        if grew:
            self.kick()  # requests waiting for tokens may go now
