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
    assert handoffs[2] <= handoffs[4] <= handoffs[8] and handoffs[8] > 0.99
    one = results[1][0]
    assert one == pytest.approx(GHZ / (HOLD + think), rel=0.01)  # alone: hold + think
    ceiling = GHZ / (HOLD + _pkg().cfg.line_transfer_cycles)
    assert results[8][0] == pytest.approx(ceiling, rel=0.01)
    assert results[4][0] == pytest.approx(ceiling, rel=0.01)
    # more lines per hand-off: a lower ceiling, by exactly their transfer time
    rate3, _ = _closed_loop(8, think, 2e6, lines=3.0)
    assert rate3 == pytest.approx(GHZ / (HOLD + 3 * _pkg().cfg.line_transfer_cycles), rel=0.01)


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
