"""IO schedulers on hand-built request streams: exact dispatch orders and timelines."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models.os.block.request import Request
from policies.io_scheduler import IO_SCHEDULERS
from policies.io_scheduler.base import REQ_ASYNC
from simcore.engine import Engine
from simcore.errors import ConfigError
from tests.conftest import docs_plugin

MS = 1_000_000
KIB = 1024
_ids = itertools.count()


def make(name: str, **tunables):
    """A scheduler on a fake host whose engine is real (timers work)."""
    return IO_SCHEDULERS.get(name)(SimpleNamespace(engine=Engine()), tunables)


def rq(op: str = "read", off_kib: int = 0, kib: int = 4, task="A", flags: int = 0) -> Request:
    r = Request(next(_ids), task, 0, op, kib * KIB, off_kib * KIB, 0, False)
    r.flags = flags
    return r


def run_to(s, t_ns: float) -> None:
    if t_ns > s.now:
        s.host.engine.run(t_ns)


def drain(s) -> list:
    out = []
    while (r := s.dispatch()) is not None:
        out.append(r)
    return out


def runs(reqs) -> list[tuple[str, int]]:
    """Run-length encoding of the directions: [("read", 16), ("write", 8), ...]."""
    return [(op, len(list(g))) for op, g in itertools.groupby(r.op for r in reqs)]


# --------------------------------------------------------------------------- none
def test_none_is_fifo():
    s = make("none")
    reqs = [rq(off_kib=o) for o in (40, 0, 20, 8)]
    for r in reqs:
        s.insert(r)
    assert s.has_work()
    assert drain(s) == reqs
    assert not s.has_work()


# --------------------------------------------------------------------------- mq-deadline
def test_deadline_dispatches_in_sector_order():
    s = make("mq-deadline")
    for o in (20, 4, 12, 8, 16):
        s.insert(rq(off_kib=o))
    assert [r.offset // KIB for r in drain(s)] == [4, 8, 12, 16, 20]


def test_deadline_serves_expired_fifo_head_before_sector_order():
    s = make("mq-deadline", read_expire=100)  # ms
    far = rq(off_kib=1024)
    s.insert(far)
    run_to(s, 150 * MS)  # far's deadline (100 ms) has passed
    near = rq(off_kib=0)
    s.insert(near)
    assert drain(s) == [far, near]
    # the same stream before the deadline goes in sector order
    s = make("mq-deadline", read_expire=100)
    far, near = rq(off_kib=1024), rq(off_kib=0)
    s.insert(far)
    run_to(s, 50 * MS)
    s.insert(near)
    assert drain(s) == [near, far]


def test_deadline_breaks_read_batches_after_writes_starved():
    s = make("mq-deadline")  # fifo_batch 16, writes_starved 2
    for i in range(64):
        s.insert(rq("read", off_kib=4 * i))
    first = s.dispatch()  # a read batch is under way before writes arrive
    for i in range(64):
        s.insert(rq("write", off_kib=4096 + 4 * i))
    order = [first] + drain(s)
    assert runs(order) == [("read", 48), ("write", 16), ("read", 16), ("write", 48)]
    # 3 read batches: the one under way, then 2 that starve the writes; then writes go
    assert [r.offset // KIB for r in order[:48]] == [4 * i for i in range(48)]


def test_deadline_fifo_batch_and_writes_starved_tunables():
    s = make("mq-deadline", fifo_batch=4, writes_starved=1)
    for i in range(12):
        s.insert(rq("read", off_kib=4 * i))
    first = s.dispatch()
    for i in range(8):
        s.insert(rq("write", off_kib=4096 + 4 * i))
    order = [first] + drain(s)
    # two read batches of 4 (the second starves the writes once), 4 writes, the last 4 reads, writes
    assert runs(order) == [("read", 8), ("write", 4), ("read", 4), ("write", 4)]


def test_deadline_initial_state_is_a_write_batch():
    """dd_init_sched sets last_dir = DD_WRITE: queued writes continue that 'batch' first."""
    s = make("mq-deadline", fifo_batch=2)
    s.insert(rq("read", off_kib=0))
    s.insert(rq("write", off_kib=100))
    s.insert(rq("write", off_kib=104))
    s.insert(rq("write", off_kib=108))
    assert [r.op for r in drain(s)] == ["write", "write", "read", "write"]


def test_deadline_batch_ends_when_nothing_lies_ahead():
    s = make("mq-deadline")
    a, b = rq(off_kib=100), rq(off_kib=200)
    s.insert(a)
    s.insert(b)
    assert s.dispatch() is a
    c = rq(off_kib=0)  # behind the head: the batch goes on to b, then restarts at the FIFO head
    s.insert(c)
    assert drain(s) == [b, c]


def test_deadline_front_and_back_merges():
    s = make("mq-deadline")
    q = rq(off_kib=8, kib=4)
    s.insert(q)
    front = rq(off_kib=4, kib=4)
    assert s.try_merge(front) is q
    assert (q.offset, q.nbytes) == (4 * KIB, 8 * KIB)
    back = rq(off_kib=12, kib=4)
    assert s.try_merge(back) is q
    assert (q.offset, q.nbytes) == (4 * KIB, 12 * KIB)
    assert s.try_merge(rq("write", off_kib=16)) is None  # other direction
    assert s.try_merge(rq(off_kib=40)) is None  # not adjacent
    assert s.try_merge(rq(off_kib=0), max_bytes=12 * KIB) is None  # would exceed max_sectors_kb
    # the grown request keeps its place in sector order (re-sorted after the front merge)
    other = rq(off_kib=2, kib=2)
    s.insert(other)
    assert drain(s) == [other, q]


def test_deadline_front_merges_off_keeps_back_merges():
    s = make("mq-deadline", front_merges=0)
    q = rq(off_kib=8)
    s.insert(q)
    assert s.try_merge(rq(off_kib=4)) is None
    assert s.try_merge(rq(off_kib=12)) is q


# --------------------------------------------------------------------------- kyber
def _kyber_feed(s, op: str, n: int, total_ns: float, io_ns: float) -> None:
    """n requests of ``op`` go through insert -> dispatch -> completed with these latencies."""
    for _ in range(n):
        r = rq(op)
        s.insert(r)
        assert s.dispatch() is r
        r.t_submit = s.now - total_ns
        r.t_dispatch = s.now - io_ns
        s.completed(r)


def test_kyber_tokens_cap_dispatch():
    s = make("kyber")
    reqs = [rq("flush") for _ in range(20)]  # domain "other": 16 tokens
    for r in reqs:
        s.insert(r)
    got = drain(s)
    assert got == reqs[:16] and s.has_work()
    s.completed(got[0])  # one token back
    assert drain(s) == [reqs[16]]


def test_kyber_round_robin_batches():
    s = make("kyber")
    for i in range(40):
        s.insert(rq("read"))
        s.insert(rq("write"))
    assert runs(drain(s)) == [("read", 16), ("write", 8), ("read", 16), ("write", 8), ("read", 8), ("write", 24)]


def test_kyber_congestion_throttles_domains_meeting_their_target():
    s = make("kyber")
    run_to(s, 1000 * MS)
    _kyber_feed(s, "write", 500, total_ns=20 * MS, io_ns=20 * MS)  # p90 >= 10 ms: congested
    _kyber_feed(s, "read", 500, total_ns=0.3 * MS, io_ns=0.2 * MS)  # p99 in bucket 0 (<= 0.5 ms)
    assert s.depth[:2] == [256, 128]
    run_to(s, 1101 * MS)  # the timer fires 100 ms after the first completion
    assert s.depth[0] == 256 * 1 // 4  # read: x (0 + 1) / 4
    assert s.depth[1] == 128  # write: x (7 + 1) / 4, clamped to the cap
    # the throttled read domain now holds 64 tokens
    for _ in range(70):
        s.insert(rq("read"))
    assert len(drain(s)) == 64


def test_kyber_depth_grows_back_when_a_domain_misses_its_target():
    s = make("kyber")
    s.depth[0] = 64
    run_to(s, 1000 * MS)
    _kyber_feed(s, "read", 500, total_ns=3 * MS, io_ns=0.2 * MS)  # total p99 bucket 5, no congestion
    run_to(s, 1101 * MS)
    assert s.depth[0] == 64 * 6 // 4
    _kyber_feed(s, "read", 500, total_ns=0.3 * MS, io_ns=0.2 * MS)  # good and uncongested
    run_to(s, 1202 * MS)
    assert s.depth[0] == 96  # unchanged


def test_kyber_needs_500_samples_or_one_second():
    s = make("kyber", read_lat_nsec=1_000_000, write_lat_nsec=5_000_000)
    assert s.targets_ns[:2] == [1_000_000, 5_000_000]
    _kyber_feed(s, "write", 100, total_ns=50 * MS, io_ns=50 * MS)
    _kyber_feed(s, "read", 499, total_ns=0.1 * MS, io_ns=0.1 * MS)
    run_to(s, 101 * MS)  # timer at 100 ms: too few samples, windows open until 1.1 s
    assert s.depth[:2] == [256, 128] and s.latency_timeout[0] == 1100 * MS
    run_to(s, 1150 * MS)
    _kyber_feed(s, "read", 1, total_ns=0.1 * MS, io_ns=0.1 * MS)  # re-arms the timer
    _kyber_feed(s, "write", 1, total_ns=50 * MS, io_ns=50 * MS)
    run_to(s, 1300 * MS)
    assert s.depth[0] == 64  # window closed by time: writes congested, reads throttled


def test_kyber_latency_buckets():
    s = make("kyber")  # read target 2 ms: buckets 0.5 ms wide
    for lat, bucket in ((0, 0), (1, 0), (500_000, 0), (500_001, 1), (2_000_000, 3), (2_000_001, 4), (10**9, 7)):
        s.buckets[0][0] = [0] * 8
        s._sample(0, 0, lat)
        assert s.buckets[0][0][bucket] == 1, lat


# --------------------------------------------------------------------------- bfq
def _bfq_with_log(**tunables):
    s = make("bfq", **tunables)
    log = []
    s.on_ready = lambda: log.extend((r.task, s.now) for r in drain(s))
    return s, log


def test_bfq_idles_for_the_in_service_sync_queue():
    s, log = _bfq_with_log(low_latency=0)
    s.set_weight("A", 200)
    s.set_weight("B", 100)
    a1 = rq(task="A")
    s.insert(a1)
    for i in range(3):
        s.insert(rq(task="B", off_kib=4 * i))
    assert s.dispatch() is a1
    assert s.dispatch() is None  # A's request is in flight: B waits (plugged)
    run_to(s, 1 * MS)
    s.completed(a1)  # A empty: idle up to slice_idle (8 ms)
    assert s.wait_request and s.dispatch() is None
    run_to(s, 8.9 * MS)
    assert log == [] and s.dispatch() is None
    run_to(s, 9.5 * MS)  # the idle timer fired at 9 ms and kicked blk-mq
    assert log == [("B", 9 * MS)] * 3


def test_bfq_idling_ends_when_the_queue_gets_a_request():
    s, log = _bfq_with_log(low_latency=0, slice_idle=8)
    s.set_weight("A", 200)
    a1, b1 = rq(task="A"), rq(task="B")
    s.insert(a1)
    s.insert(b1)
    assert s.dispatch() is a1
    s.completed(a1)
    run_to(s, 5 * MS)
    a2 = rq(task="A", off_kib=4)
    s.insert(a2)
    assert not s.wait_request
    assert s.dispatch() is a2  # A keeps the device, B still waits
    run_to(s, 20 * MS)
    assert log == []  # the cancelled timer did not fire


def test_bfq_no_idling_between_equal_weights():
    """NVMe: idling only for service guarantees; symmetric queues switch at once."""
    s = make("bfq", low_latency=0)
    a1, b1 = rq(task="A"), rq(task="B")
    s.insert(a1)
    s.insert(b1)
    assert drain(s) == [a1, b1]


def test_bfq_service_follows_weights():
    s = make("bfq", low_latency=0, max_budget=256)
    s.set_weight("A", 200)
    s.set_weight("B", 100)
    for i in range(2000):
        s.insert(rq(task="A", off_kib=4 * i))
        s.insert(rq(task="B", off_kib=100_000 + 4 * i))
    served = {"A": 0, "B": 0}
    for _ in range(1500):
        r = s.dispatch()
        served[r.task] += r.nbytes // 512  # sectors
        s.completed(r)
    assert served["A"] + served["B"] == 1500 * 8
    assert served["A"] / served["B"] == pytest.approx(2.0, rel=0.05)


def test_bfq_charges_sectors_and_async_triple():
    s = make("bfq", low_latency=0)
    for i in range(3):
        s.insert(rq(task="A", off_kib=8 * i, kib=8))
    s.dispatch()
    s.dispatch()
    qa = s.queues["A"]
    assert qa.service == 32  # two 8 KiB requests = 32 sectors
    s = make("bfq", low_latency=0)
    s.insert(rq("write", task="A", flags=REQ_ASYNC))
    s.insert(rq("write", task="B", flags=REQ_ASYNC, off_kib=4))
    s.dispatch()
    assert list(s.queues) == [("async",)]  # one shared async queue
    assert s.queues[("async",)].service == 8 * 3


def test_bfq_budget_timeout_switches_queues():
    s = make("bfq", low_latency=0, max_budget=100_000)  # budget never runs out: time does
    for i in range(30):
        s.insert(rq(task="A", off_kib=4 * i))
        s.insert(rq(task="B", off_kib=10_000 + 4 * i))
    order = []
    r = s.dispatch()
    while len(order) < 30:
        order.append((r.task, s.now / MS))
        run_to(s, s.now + 10 * MS)
        s.completed(r)
        r = s.dispatch()
    # A's slot starts at 0 and times out at 125 ms: the completion at 130 ms expires it
    assert order[:13] == [("A", 10.0 * i) for i in range(13)]
    assert order[13:26] == [("B", 130.0 + 10.0 * i) for i in range(13)]
    assert order[26][0] == "A"
    # timed out with most of the budget unused: charged the time (a full max_budget), not 104 sectors
    assert s.queues["A"].start == pytest.approx(100_000 / 100)
    assert s.queues["A"].max_budget == 100_000  # x2 after a timeout, capped


def test_bfq_budget_exhaustion_and_feedback():
    s = make("bfq", low_latency=0, max_budget=96)
    for i in range(40):
        s.insert(rq(task="A", off_kib=4 * i))
    qa = s.queues["A"]
    assert qa.budget == 64  # 2/3 of max_budget for a new queue
    got = [s.dispatch() for _ in range(9)]
    assert all(r.task == "A" for r in got)
    assert qa.max_budget == 96 and qa.service == 8  # exhausted at 64 sectors: x4, capped at 96


def test_bfq_max_budget_auto_tunes_from_the_peak_rate():
    s = make("bfq", low_latency=0)
    assert s.dev_max_budget == 16384 and s.queues == {}
    for i in range(80):
        s.insert(rq(task="A", off_kib=4 * i))
    assert s.queues["A"].budget == 2 * 16384 // 3
    for _ in range(60):  # one 8-sector request per 5 ms: the window closes at 300 ms
        r = s.dispatch()
        run_to(s, s.now + 5 * MS)
        s.completed(r)
    rate = 60 * 8 / (300 * MS)  # sectors per ns
    assert s.dev_max_budget == round(rate * 125 * MS) == 200  # peak rate x timeout_sync
    assert make("bfq", max_budget=4096).dev_max_budget == 4096


def test_bfq_weight_raising_of_new_and_long_idle_queues():
    s = make("bfq")  # low_latency=1
    a1 = rq(task="A")
    s.insert(a1)
    qa = s.queues["A"]
    assert qa.wr_coeff == 30 and qa.wr_until == 3000 * MS  # a new queue is interactive
    assert s.dispatch() is a1
    assert qa.budget_timeout == 30 * 125 * MS  # raised queues get a 30x timeout
    run_to(s, 1 * MS)
    s.completed(a1)
    # idleness counts from the last budget timeout (as in Linux): 3.75 s + 2 s
    run_to(s, 4000 * MS)
    a2 = rq(task="A", off_kib=4)
    s.insert(a2)
    assert qa.wr_coeff == 1  # raising over after 3 s, not idle long enough
    assert s.dispatch() is a2 and qa.budget_timeout == 4125 * MS
    run_to(s, 4001 * MS)
    s.completed(a2)
    run_to(s, 6200 * MS)  # > 4.125 s + 2 s
    s.insert(rq(task="A", off_kib=8))
    assert qa.wr_coeff == 30 and qa.wr_until == 9200 * MS
    s = make("bfq", low_latency=0)
    s.insert(rq(task="A"))
    assert s.queues["A"].wr_coeff == 1


def test_bfq_a_large_burst_of_new_queues_is_not_weight_raised():
    """6.1 bfq_handle_burst: 8 queues created within 180 ms of each other (from an idle device)
    make a large burst; its members lose raising at their next dispatch, later ones never get it;
    a queue created after a quiet 180 ms starts a new burst and is raised."""
    s = make("bfq")
    for i in range(7):
        s.insert(rq(task=f"P{i}", off_kib=4 * i))
        run_to(s, s.now + 10 * MS)
    assert all(s.queues[f"P{i}"].wr_coeff == 30 for i in range(7))  # not large yet: raised
    s.insert(rq(task="P7"))  # the 8th: the burst is large
    assert all(s.queues[f"P{i}"].in_large_burst for i in range(8))
    assert s.queues["P7"].wr_coeff == 1
    s.insert(rq(task="P8"))  # shortly after: joins the large burst
    assert s.queues["P8"].in_large_burst and s.queues["P8"].wr_coeff == 1
    got = drain(s)
    assert len(got) == 9
    assert all(q.wr_coeff == 1 for q in s.queues.values())  # raising ended at dispatch
    for r in got:
        s.completed(r)
    run_to(s, s.now + 200 * MS)  # a quiet gap: the burst is over
    s.insert(rq(task="late"))
    late = s.queues["late"]
    assert not late.in_large_burst and late.wr_coeff == 30


def test_bfq_burst_detection_counts_only_sync_queues():
    """6.1 bfq_init_bfqq marks only sync queues just created: the shared async queue neither starts
    nor joins a burst, and a busy async queue keeps a burst from starting (burst_size 0)."""
    s = make("bfq")
    s.insert(rq(op="write", task="W", flags=REQ_ASYNC))
    assert not s.queues[("async",)].in_large_burst
    for i in range(7):
        s.insert(rq(task=f"P{i}", off_kib=4 * i))
        run_to(s, s.now + 10 * MS)
    assert s.burst_size == 0
    assert not any(q.in_large_burst for q in s.queues.values())
    assert all(s.queues[f"P{i}"].wr_coeff == 30 for i in range(7))


def test_bfq_a_raised_queue_of_a_burst_that_became_large_stops_raising_on_arrival():
    """6.1 bfq_update_bfqq_wr_on_rq_arrival: a queue raised before its burst became large is not
    raised when it next becomes busy, and so does not preempt the in-service queue."""
    s = make("bfq")
    first = [rq(task=f"P{i}", off_kib=4 * i) for i in range(7)]
    for r in first:
        s.insert(r)
    for r in drain(s):
        s.completed(r)
    assert all(s.queues[f"P{i}"].wr_coeff == 30 for i in range(7))
    s.insert(rq(task="P7", off_kib=100))  # the 8th: the burst is large; P0-P6 are idle
    assert s.queues["P0"].in_large_burst
    s.dispatch()
    s.insert(rq(task="P0", off_kib=200))
    assert s.queues["P0"].wr_coeff == 1


def test_bfq_queues_created_apart_are_raised():
    s = make("bfq")
    for i in range(10):
        s.insert(rq(task=f"P{i}", off_kib=4 * i))
        for r in drain(s):
            s.completed(r)
        run_to(s, s.now + 200 * MS)  # more than bfq_burst_interval between creations
    assert not any(q.in_large_burst for q in s.queues.values())


def test_bfq_sector_order_within_a_queue():
    s = make("bfq", low_latency=0)
    for o in (40, 8, 24, 16):
        s.insert(rq(task="A", off_kib=o))
    assert [r.offset // KIB for r in drain(s)] == [8, 16, 24, 40]


# --------------------------------------------------------------------------- invariants
_action = st.one_of(
    st.tuples(
        st.just("insert"),
        st.sampled_from(["read", "write", "async", "flush"]),
        st.integers(0, 64),
        st.sampled_from("ABC"),
        st.sampled_from([4, 8, 128]),
    ),
    st.tuples(st.just("dispatch")),
    st.tuples(st.just("complete"), st.integers(0, 1000)),
    st.tuples(st.just("advance"), st.sampled_from([0.01, 1, 7, 50, 200])),
)


@pytest.mark.parametrize("name", ["none", "mq-deadline", "kyber", "bfq"])
@settings(max_examples=60, deadline=None)
@given(actions=st.lists(_action, max_size=120), weight=st.sampled_from([100, 300]))
def test_every_request_is_dispatched_exactly_once(name, actions, weight):
    s = make(name)
    if name == "bfq":
        s.set_weight("A", weight)
    out, in_flight, inserted = [], [], []
    s.on_ready = lambda: in_flight.extend(drain(s))
    for act in actions:
        if act[0] == "insert":
            _, op, off, task, kib = act
            r = rq(
                "write" if op == "async" else op,
                off_kib=off * 4,
                kib=kib,
                task=task,
                flags=REQ_ASYNC if op == "async" else 0,
            )
            r.t_submit = s.now
            inserted.append(r)
            s.insert(r)
        elif act[0] == "dispatch":
            in_flight.extend(drain(s))
        elif act[0] == "complete" and in_flight:
            r = in_flight.pop(act[1] % len(in_flight))
            r.t_dispatch = r.t_submit  # latency samples only need t_dispatch <= now
            out.append(r)
            s.completed(r)
        elif act[0] == "advance":
            run_to(s, s.now + act[1] * MS)
    for _ in range(1000):  # drain: complete everything, let timers fire, dispatch again
        in_flight.extend(drain(s))
        if not in_flight and not s.has_work():
            break
        while in_flight:
            r = in_flight.pop()
            out.append(r)
            s.completed(r)
        run_to(s, s.now + 300 * MS)
    assert sorted(r.id for r in out) == sorted(r.id for r in inserted)


# --------------------------------------------------------------------------- tunables
@pytest.mark.parametrize(
    "name, bad",
    [("none", "read_expire"), ("mq-deadline", "reed_expire"), ("kyber", "read_expire"), ("bfq", "slice_idel")],
)
def test_unknown_tunable_is_a_config_error(name, bad):
    with pytest.raises(ConfigError) as err:
        make(name, **{bad: 1})
    msg = str(err.value)
    assert bad in msg and name in msg
    for valid in IO_SCHEDULERS.get(name).TUNABLES:
        assert valid in msg


@pytest.mark.parametrize(
    "name, key, value",
    [
        ("mq-deadline", "front_merges", 2),
        ("mq-deadline", "read_expire", -1),
        ("kyber", "read_lat_nsec", "2ms"),
        ("bfq", "slice_idle", 1.5),
    ],
)
def test_bad_tunable_value_is_a_config_error(name, key, value):
    with pytest.raises(ConfigError, match=key):
        make(name, **{key: value})


def test_tunables_in_sysfs_units():
    assert make("mq-deadline", read_expire="250").fifo_expire_ns == (250 * MS, 5000 * MS)
    assert make("bfq", slice_idle=0).slice_idle_ns == 0
    assert make("bfq", slice_idle_us=500).slice_idle_ns == 500_000
    assert make("bfq", timeout_sync=50).timeout_ns == 50 * MS


def test_costs_are_ordered():
    total = {
        n: sum((c.insert_cycles, c.dispatch_cycles, c.complete_cycles))
        for n, c in ((n, IO_SCHEDULERS.get(n)) for n in ("none", "mq-deadline", "kyber", "bfq"))
    }
    assert total["none"] == 0
    assert total["mq-deadline"] == pytest.approx(0.7e-6 * 2.4e9)
    assert total["bfq"] == pytest.approx(1.9e-6 * 2.4e9)
    assert total["mq-deadline"] < total["kyber"] < total["bfq"]


# --------------------------------------------------------------------------- docs example
def test_docs_example_scheduler_loads_and_runs(tmp_path):
    with docs_plugin("io-schedulers.md", "my_sched", IO_SCHEDULERS, "sstf", tmp_path):
        s = make("sstf")
        for o in (100, 10, 60, 90):
            s.insert(rq(off_kib=o))
        assert [r.offset // KIB for r in drain(s)] == [10, 60, 90, 100]
        s.insert(rq(off_kib=0))
        s.insert(rq(off_kib=120))
        assert s.dispatch().offset == 120 * KIB  # head at 104 KiB: 120 is nearer than 0
        with pytest.raises(ConfigError, match="fifo_expire"):
            make("sstf", fifo_expir=1)
