"""The spinlock model (models/os/locking/spinlock.py), cache-line transfer distances (Package), and the locks
blk-mq and the IO schedulers take (models/os/block/blk_mq.py)."""

from __future__ import annotations

import heapq
from types import SimpleNamespace

import pytest

from models.cpu.core import Package
from models.cpu.presets import xeon_e5_2660_v4
from models.os.costs.bundle import LAYER_INDEX
from models.os.locking.spinlock import SpinLock
from scenarios.run.assembly import build_run
from tests.test_async_io import cfg

GHZ = 2.0
HOLD = 400.0  # cycles


def _pkg() -> Package:
    return Package(xeon_e5_2660_v4())  # 14 cores, SMT: CPUs i and i + 14 are siblings


def _runner(cpu: int) -> SimpleNamespace:
    return SimpleNamespace(id=cpu, freq=GHZ)


def test_line_transfer_cycles_by_distance():
    pkg = _pkg()
    cfg_ = pkg.cfg
    assert pkg.line_transfer_cycles(3, 3) == 0.0
    assert pkg.line_transfer_cycles(3, 17) == cfg_.smt_line_transfer_cycles  # SMT siblings
    assert pkg.line_transfer_cycles(3, 4) == cfg_.line_transfer_cycles > cfg_.smt_line_transfer_cycles


def test_an_uncontended_lock_costs_nothing_extra():
    """One CPU taking a lock again and again (even back to back): no spin, no transfer."""
    lock = SpinLock("l", LAYER_INDEX["iosched"], 2.0, _pkg())
    r = _runner(0)
    t = 0.0
    for _ in range(100):
        assert lock.acquire(r, t, HOLD) == 0.0
        t += HOLD / GHZ * 0.5  # even inside its own previous hold: a CPU never waits for itself
    assert lock.contended == lock.transfers == 0 and lock.spin_ns == lock.transfer_ns == 0.0
    assert lock.acquisitions == 100


def test_a_lock_taken_by_another_cpu_moves_its_lines():
    pkg = _pkg()
    lock = SpinLock("l", LAYER_INDEX["iosched"], 3.0, pkg)
    lock.acquire(_runner(0), 0.0, HOLD)
    late = 10_000.0  # long after the hold: no spin, only the fetch of the 3 lines
    w = lock.acquire(_runner(1), late, HOLD)
    assert w == pytest.approx(3 * pkg.cfg.line_transfer_cycles / GHZ)
    assert lock.contended == 0 and lock.transfers == 1
    assert lock.free_at == pytest.approx(late + w + HOLD / GHZ)


def _closed_loop(ncpu: int, think_cycles: float, horizon_ns: float, lines: float = 1.0):
    """``ncpu`` CPUs on distinct cores each take the lock, hold it, think, and take it again; the
    acquisitions are made in the order the CPUs reach the lock. Returns (acquisitions per ns, the
    lock)."""
    lock = SpinLock("l", LAYER_INDEX["iosched"], lines, _pkg())
    runners = [_runner(i) for i in range(ncpu)]
    due = [(0.0, i) for i in range(ncpu)]
    heapq.heapify(due)
    done = 0
    while True:
        t, i = heapq.heappop(due)
        if t > horizon_ns:
            break
        w = lock.acquire(runners[i], t, HOLD)
        done += 1
        heapq.heappush(due, (t + w + (HOLD + think_cycles) / GHZ, i))
    return done / horizon_ns, lock


def test_contention_grows_with_cpus_and_throughput_saturates_at_hold_plus_transfer():
    """N CPUs hammering one lock: the spin per acquisition and the hand-offs grow with N, and the
    throughput through the lock tends to 1 / (hold + transfer), the analytic ceiling of a FIFO lock
    whose every hand-off moves its line to another core; no cap is written anywhere."""
    think = 200.0
    results = {n: _closed_loop(n, think, 2e6) for n in (1, 2, 4, 8)}
    spin = {n: lock.spin_ns / lock.acquisitions for n, (_, lock) in results.items()}
    handoffs = {n: lock.transfers / lock.acquisitions for n, (_, lock) in results.items()}
    assert spin[1] == 0.0 and handoffs[1] == 0.0
    assert spin[2] < spin[4] < spin[8]
    assert min(handoffs[n] for n in (2, 4, 8)) > 0.99  # saturated: the lock alternates at every section
    one = results[1][0]
    assert one == pytest.approx(GHZ / (HOLD + think), rel=0.01)  # alone: hold + think
    # a queue of waiters: each hand-off moves the lock's line and passes the MCS queue's head (the
    # next waiter's node: one more line)
    line = _pkg().cfg.line_transfer_cycles
    ceiling = GHZ / (HOLD + line + line)
    assert results[8][0] == pytest.approx(ceiling, rel=0.01)
    assert results[4][0] == pytest.approx(ceiling, rel=0.01)
    # more lines per hand-off: a lower ceiling, by exactly their transfer time
    rate3, _ = _closed_loop(8, think, 2e6, lines=3.0)
    assert rate3 == pytest.approx(GHZ / (HOLD + 3 * line + line), rel=0.01)


def test_siblings_hand_off_cheaper_than_cores():
    pkg = _pkg()
    near = SpinLock("l", 0, 1.0, pkg)
    far = SpinLock("l", 0, 1.0, pkg)
    for lock, other in ((near, 14), (far, 1)):
        lock.acquire(_runner(0), 0.0, HOLD)
        lock.acquire(_runner(other), 0.0, HOLD)  # spins for the hold, then fetches the line
    assert near.spin_ns == far.spin_ns == pytest.approx(HOLD / GHZ)
    assert near.transfer_ns < far.transfer_ns


def _host_run(sched: str, threads: int, depth: int = 1):
    c = cfg(
        {"ioengine": "io_uring", "iodepth": str(depth), "numjobs": str(threads), "group_reporting": "1"},
        scheduler=sched,
        runtime_ms=10,
    )
    host, _fio, _ramp, end = build_run(c)
    host.engine.run(end)
    return host


def _elevator_lock(host, name: str) -> SpinLock:
    (lock,) = [lk for lk in host.blk.locks() if lk.name == name]
    return lock


def test_one_thread_takes_the_scheduler_lock_without_contention():
    host = _host_run("bfq", 1, depth=8)
    lock = _elevator_lock(host, "bfqd->lock")
    assert lock.acquisitions > 4 * host.completed_ios  # merge, insert, dispatch, completion
    assert lock.spin_ns == 0.0
    assert sum(r.lock_waited for r in host.runners) < 1e-3 * host.engine.now


def test_bfq_lock_contention_grows_with_threads_and_shows_as_iosched_cpu_time():
    """bfq's one bfqd->lock per device, taken by every CPU: spin per IO and hand-offs per IO grow
    with the threads, and the spinning is CPU time of the iosched layer on the waiting CPUs."""
    per_io = {}
    for n in (2, 4):
        host = _host_run("bfq", n, depth=16)
        lock = _elevator_lock(host, "bfqd->lock")
        ios = host.completed_ios
        per_io[n] = (lock.spin_ns / ios, lock.transfers / ios)
        ios_layer = LAYER_INDEX["iosched"]
        waited = sum(r.lock_ns[ios_layer] for r in host.runners)
        sched_locks = [lk for lk in host.blk.locks() if lk.layer == ios_layer]  # bfqd->lock, q->queue_lock
        assert waited == pytest.approx(sum(lk.spin_ns + lk.transfer_ns for lk in sched_locks), rel=1e-9)
        assert sum(r.layer_ns()[ios_layer] for r in host.runners) > waited > 0.0
    assert per_io[4][0] > per_io[2][0] > 0.0
    assert per_io[4][1] > per_io[2][1] > 0.0


def test_kyber_has_no_device_wide_lock_only_its_token_line_moves():
    """kyber: the per-context and per-hardware-context locks stay on their CPU (one hardware context
    per CPU), the shared token sbitmap moves between CPUs; mq-deadline's dd->lock is contended."""
    host = _host_run("kyber", 4, depth=16)
    tokens = _elevator_lock(host, "domain_tokens")
    assert tokens.transfers > 0
    for lk in host.blk.locks():
        if lk.name in ("kcq->lock", "khd->lock"):
            # (a thread moved between preparing its IOs and submitting them takes its old CPU's
            # context lock from the new CPU: a rare transfer, never a wait)
            assert lk.spin_ns == 0.0 and lk.transfers <= tokens.transfers / 100
    dd = _elevator_lock(_host_run("mq-deadline", 4, depth=16), "dd->lock")
    assert dd.contended > 0 and dd.transfers > 0


class _Holder(SimpleNamespace):
    """A runner that records the waits charged to it (``CpuRunner.lock_wait``)."""

    def lock_wait(self, ns: float, layer: int) -> None:
        self.waited = getattr(self, "waited", 0.0) + ns


def test_an_acquirer_cuts_into_another_cpus_run_after_the_section_in_progress():
    """CPU 0 reserves ten back-to-back sections at t = 0 (one batch); CPU 1 reaches the lock in the
    middle of the first: it waits for that section only (FIFO by arrival), and the rest of CPU 0's
    run moves later by CPU 1's section and the two transfers, charged to CPU 0 as spinning."""
    pkg = _pkg()
    lock = SpinLock("l", LAYER_INDEX["iosched"], 2.0, pkg)
    a, b = _Holder(id=0, freq=GHZ), _Holder(id=1, freq=GHZ)
    sec = HOLD / GHZ
    for _ in range(10):
        assert lock.acquire(a, 0.0, HOLD) == 0.0
    assert not lock.shared and lock.run_n == 10 and lock.free_at == pytest.approx(10 * sec)  # one CPU: no list
    w = lock.acquire(b, 0.5 * sec, HOLD)
    x = 2 * pkg.cfg.line_transfer_cycles / GHZ
    assert w == pytest.approx(0.5 * sec + x)  # the rest of section 1, then the fetch
    assert lock.free_at == pytest.approx(10 * sec + x + sec + x)
    assert a.waited == pytest.approx(x + sec + x)
    assert lock.transfers == 2 and len(lock.secs) == 11 and lock.cpu == 0
    # the identity the layers rely on: what the CPUs were charged is the lock's spin + transfer
    assert w + a.waited == pytest.approx(lock.spin_ns + lock.transfer_ns)


def _batched_loop(ncpu: int, batch: int, horizon_ns: float):
    """``ncpu`` CPUs each take the lock ``batch`` times back to back per event (a batch of
    dispatches), then think; returns sections per ns."""
    lock = SpinLock("l", LAYER_INDEX["iosched"], 1.0, _pkg())
    runners = [_Holder(id=i, freq=GHZ) for i in range(ncpu)]
    due = [(0.0, i) for i in range(ncpu)]
    done = 0
    while True:
        t, i = heapq.heappop(due)
        if t > horizon_ns:
            break
        r = runners[i]
        at = t
        for _ in range(batch):
            at += lock.acquire(r, at, HOLD, now=t) + HOLD / GHZ
            done += 1
        heapq.heappush(due, (at + getattr(r, "waited", 0.0) + 100.0, i))
        r.waited = 0.0
    return done / horizon_ns, lock


def test_batches_do_not_hide_hand_offs_under_saturation():
    """Eight CPUs taking the lock in batches of eight: the lock passes from CPU to CPU at nearly
    every section, as the kernel's FIFO queue hands it on, so the throughput is that of single
    acquisitions (1 / (hold + transfer)), not the batch-amortised 8 / (8 hold + transfer)."""
    rate, lock = _batched_loop(8, 8, 2e6)
    per_section = GHZ / (HOLD + _pkg().cfg.line_transfer_cycles)
    assert rate < 1.1 * per_section
    assert lock.transfers / lock.acquisitions > 0.8
    alone, lone = _batched_loop(1, 8, 2e6)
    assert lone.transfers == 0 and alone > rate


def test_a_hand_off_moves_the_tree_path_the_sections_walk():
    pkg = _pkg()
    depth = [3.0]
    lock = SpinLock("l", LAYER_INDEX["iosched"], 2.0, pkg, walk=0.5, levels=lambda: depth[0])
    assert lock.moved_lines() == 2.0 + 0.5 * 3.0
    lock.acquire(_runner(0), 0.0, HOLD)
    depth[0] = 9.0
    w = lock.acquire(_runner(1), 1e4, HOLD)
    assert w == pytest.approx((2.0 + 4.5) * pkg.cfg.line_transfer_cycles / GHZ)


@pytest.mark.parametrize("sched,lock_name", [("bfq", "bfqd->lock"), ("mq-deadline", "dd->lock")])
def test_the_schedulers_locks_move_the_tree_path_their_data_walks(sched, lock_name):
    """bfq's service tree and mq-deadline's sort lists are data items with lines per tree level:
    the lock they sit under prices the path, though the lock's first use (the merge: bfq's touches
    no tree) does not walk it; a hand-off moves more lines as the tree grows."""
    host = _host_run(sched, 4, depth=16)
    lock = _elevator_lock(host, lock_name)
    (elv,) = {id(h.elv): h.elv for h in host.blk._hctx.values()}.values()
    assert lock.levels == elv.tree_levels
    walking = tuple(i for i, w in enumerate(lock.item_walk) if w > 0.0)
    assert walking, "no data item walks the tree"
    flat = sum(lock.item_lines[i] for i in walking)
    per_level = sum(lock.item_walk[i] for i in walking)
    assert lock.moved_lines(walking) == pytest.approx(flat + per_level * elv.tree_levels())


def test_waits_charged_to_a_cpu_never_exceed_its_time():
    """bfq with eight threads at depth: every CPU's lock waits fit in the run's time (sections a
    CPU places at one instant queue behind its own, so no wait is counted twice)."""
    host = _host_run("bfq", 8, depth=32)
    for r in host.runners:
        assert r.lock_waited <= host.engine.now * 1.001


def test_completions_run_the_queues_only_when_the_kernel_does():
    """6.1: a completion runs a hardware queue for mq-deadline only on a zoned device, for kyber when
    a waiting domain has a token again, for bfq when nothing is left in the drive."""
    from models.os.block.elevator import RUN_DEVICE, RUN_HCTX, RUN_NONE

    host = _host_run("mq-deadline", 2, depth=16)
    elv = host.blk.elevator(0)
    req = SimpleNamespace(op="read")
    assert elv.restart_scope(req) == RUN_NONE
    bfq = _host_run("bfq", 2, depth=16).blk.elevator(0)
    bfq.rq_in_driver, bfq.queued = 3, 5
    assert bfq.restart_scope(req) == RUN_NONE
    bfq.rq_in_driver = 0
    assert bfq.restart_scope(req) == RUN_DEVICE
    bfq.queued = 0
    assert bfq.restart_scope(req) == RUN_NONE
    ky = _host_run("kyber", 2, depth=16).blk.elevator(0)
    from policies.io_scheduler.kyber import domain_of

    d = domain_of(req)
    ky.rqs[d].clear()
    assert ky.restart_scope(req) == RUN_NONE
    ky.rqs[d].append(object())
    ky.in_flight[d] = ky.depth[d]
    assert ky.restart_scope(req) == RUN_NONE  # no token yet
    ky.in_flight[d] = ky.depth[d] - 1
    assert ky.restart_scope(req) == RUN_HCTX


def test_blk_mq_takes_a_lock_only_its_cpu_has_taken_as_acquire_does():
    """blk-mq takes a lock that only one CPU has taken so far without calling SpinLock.acquire
    (BlkMq._take and _take_one inline its first branch): the lock ends in the same state, to the
    bit, as when acquire takes it, in back-to-back and in spaced sections, and a second CPU then
    shares it as acquire would have."""
    from models.os.block.blk_mq import LockTake

    host = _host_run("none", 1)
    blk, now = host.blk, host.engine.now
    r0, r1 = host.runners[0], host.runners[1]

    def lock(name: str) -> SpinLock:
        return SpinLock(name, LAYER_INDEX["block"], 1.0, host.pkg)

    ref, one, many = lock("ref"), lock("one"), lock("many")
    fields = ("free_at", "run_start", "run_n", "acquisitions", "cpu", "shared", "secs", "item_owner")
    for off in (0.0, 10.0, 10.0, 5_000.0, 20_000.5, 0.0):
        r0.lock_at = 0.0  # (not behind r0's own earlier sections)
        got_one = blk._take_one(LockTake(one, HOLD), r0, off)
        r0.lock_at = 0.0
        got_many = blk._take((LockTake(many, HOLD),), r0, off)
        assert ref.acquire(r0, now + off, HOLD, (0,), now, r0.id, r0.freq) == 0.0
        assert got_one == got_many == off + HOLD / r0.freq
        for lk in (one, many):
            assert [getattr(lk, f) for f in fields] == [getattr(ref, f) for f in fields]
    assert ref.run_n == 2 and not ref.shared  # the last spaced section started a run of two
    r1.lock_at = 0.0
    w = ref.acquire(r1, now, HOLD, (0,), now, r1.id, r1.freq)
    assert blk._take_one(LockTake(one, HOLD), r1, 0.0) == w + HOLD / r1.freq
    assert [getattr(one, f) for f in fields] == [getattr(ref, f) for f in fields] and one.shared
