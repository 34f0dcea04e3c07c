"""Each completion policy's defining property, emerging from the modelled mechanisms."""

import numpy as np
import pytest

from policies.completion.base import COMPLETION_POLICIES
from policies.completion.hybrid_poll import HybridPollCompletion, stats_bucket
from scenarios.run.assembly import build_run
from scenarios.run.simulate import simulate
from tests.conftest import make_cfg


@pytest.fixture(scope="module")
def runs():
    # ramp past hybrid polling's first 100 ms statistics window (no sleeps before it closes)
    return {m: simulate(make_cfg(m, runtime_ms=50, ramp_ms=110)) for m in ("interrupt", "classic", "hybrid")}


def test_classic_polling_never_context_switches_or_takes_interrupts(runs):
    s = runs["classic"]["summary"]
    assert s["context_switches_per_io"] == 0
    assert s["interrupts"].get("nvme", 0) == 0  # polled queues have no vector
    assert set(s["interrupts"]) <= {"tick"} and s["interrupts_per_io"] < 0.01  # only the 250 Hz scheduler tick
    assert s["layers"]["polling"] > 0 and s["layers"]["irq"] < 1.0


def test_interrupt_and_hybrid_switch_once_per_io(runs):
    # one synchronous thread: each IO blocks it once (one voluntary switch) and is ended by one
    # interrupt (interrupt mode: the NVMe vector; hybrid: the hrtimer ending its sleep). Counts in
    # the measured window differ from the IO count only by the IO in flight at each edge (one
    # thread: at most one per edge); the only other interrupt is the scheduler tick of the one busy
    # CPU (idle CPUs are tickless) over the 50 ms window.
    tick_bound = make_cfg("interrupt").platform.sched.tick_hz * 0.050 + 1
    for m, kind in (("interrupt", "nvme"), ("hybrid", "timer")):
        s = runs[m]["summary"]
        n = s["ios"]
        assert abs(round(s["voluntary_context_switches_per_io"] * n) - n) <= 2, m
        assert s["involuntary_context_switches_per_io"] == 0, m  # nothing else runs on its CPU
        assert abs(s["interrupts"][kind] - n) <= 2, m
        assert set(s["interrupts"]) == {kind, "tick"} and s["interrupts"]["tick"] <= tick_bound, m


def test_cpu_utilization_order_classic_hybrid_interrupt(runs):
    u = {m: runs[m]["summary"]["cpu_utilization"] for m in runs}
    assert u["classic"] > u["hybrid"] > u["interrupt"]


class _RecordedHybrid(HybridPollCompletion):
    """Hybrid polling that records every sleep it asks for: (time asked, ns)."""

    def __init__(self, host, queue):
        super().__init__(host, queue)
        self.asked = []

    def sleep_ns(self, req):
        ns = super().sleep_ns(req)
        self.asked.append((self.host.engine.now, ns))
        return ns


def _hybrid_run(cfg):
    """Run ``cfg`` recording every sleep hybrid polling asks for: (time asked, ns). (A subclass
    run as the queue's completion policy: the built-in one may be compiled, its methods cannot be
    replaced on the instance.)"""
    COMPLETION_POLICIES.register("hybrid-poll-recorded")(_RecordedHybrid)
    try:
        host, _fio, ramp, end = build_run(cfg.with_queue(completion="hybrid-poll-recorded"), keep_requests=True)
    finally:
        COMPLETION_POLICIES._items.pop("hybrid-poll-recorded", None)
    pol = host.policy("hybrid-poll-recorded")
    host.engine.run(end)
    return host, pol, pol.asked


def _wake_path_ns(host):
    """Timer IRQ (entry + hrtimer_interrupt), try_to_wake_up with the enqueue's load and pressure
    accounting, switch in from idle (+ idle exit work), from the kernel cost table at the
    platform's 3.8 GHz: what lengthens a hybrid sleep."""
    k = host.kcosts
    return (
        k.irq_entry_cycles
        + k.hrtimer_expire_cycles
        + k.wakeup_cycles
        + k.accounting_cycles()
        + k.ctx_switch_cycles
        + k.idle_exit_cycles
    ) / host.pkg.freq_ghz


def test_hybrid_sleeps_half_the_mean_completion_time_of_the_last_window():
    cfg = make_cfg("hybrid", runtime_ms=250, ramp_ms=0)
    host, pol, asked = _hybrid_run(cfg)
    b = stats_bucket("read", 4096)
    mean = pol.mean_ns[b]
    recs = host.records
    # the first request has no statistics, so it does not sleep
    assert not recs[0].slept and asked[0][1] == 0.0
    # windows (queue.hybrid_stats: rearm): the first opens at the first request, each later one
    # at the first request after the previous closed; mean_ns is the last closed window's (the
    # second: the third is still open at 250 ms)
    w1 = asked[0][0]
    w2 = next(t for t, _ in asked if t >= w1 + 100e6)
    assert host.engine.now < w2 + 200e6
    # the kernel samples a completion at its completion hook: after the CQE is seen, before the
    # reap's driver + block work, which t_reaped includes. One request per window edge can be
    # classified on the wrong side, moving the window's mean by at most its longest time / n.
    win = [r.t_reaped - r.t_dispatch for r in recs if w2 <= r.t_reaped < w2 + 100e6]
    k = host.kcosts
    reap_ns = (k.nvme_complete_cycles + k.blk_complete_cycles) / host.pkg.freq_ghz
    edge = 2 * max(win) / len(win)
    assert -edge <= np.mean(win) - mean <= reap_ns + edge
    # no sleeps before the first window closes; every request after it sleeps once, for
    # (mean + 1) / 2 of the window before (blk_mq_poll_nsecs)
    assert not any(r.slept for r in recs if r.t_dispatch < w1 + 100e6 - 1)
    assert all(r.slept for r in recs if r.t_dispatch > w2 + 1)
    assert [ns for t, ns in asked if t >= w2 + 100e6 + 20_000] == pytest.approx(
        [(mean + 1.0) / 2.0] * len([t for t, _ in asked if t >= w2 + 100e6 + 20_000]), abs=1e-9
    )
    # each sleep lasts what it asked plus the wake-up path (the iowait sleeper keeps its CPU in
    # POLL: no C-state exit latency); a sleep still running at the end is not counted in slept_ns
    wanted = sum(ns for _, ns in asked if ns > 0) + pol.sleeps * _wake_path_ns(host)
    # (plus the scheduler ticks, and the work they carry, that land in a wake-up path)
    r = host.runners[0]
    ticks_ns = r.irq_kinds["tick"] * (host.tick_cost.cycles + r.cost_tick_restart.cycles) / host.pkg.freq_ghz
    assert -ticks_ns <= wanted - pol.slept_ns <= max(ns for _, ns in asked) + _wake_path_ns(host) + 1e-6


def test_fixed_hybrid_delay_sleeps_n_us():
    # io_poll_delay=3: every request (the first too: no statistics needed) sleeps 3 us, plus the
    # wake-up path; the sleep still running when the run ends is not in slept_ns
    host, pol, asked = _hybrid_run(make_cfg("hybrid", runtime_ms=20).with_queue(io_poll_delay=3))
    assert asked and {ns for _, ns in asked} == {3000.0}
    assert pol.sleeps == len(asked) == len(host.records) + 1  # the last request's sleep is in progress
    per_sleep = 3000.0 + _wake_path_ns(host)
    # exact, but for the scheduler ticks (and the work they carry) that land in a wake-up path
    r = host.runners[0]
    tick_ns = host.tick_cost.cycles / host.pkg.freq_ghz + r.cost_tick_restart.cycles / host.pkg.freq_ghz
    excess = pol.slept_ns - per_sleep * (pol.sleeps - 1)
    assert -1e-6 <= excess <= r.irq_kinds["tick"] * tick_ns


def test_stats_bucket_matches_kernel():
    assert stats_bucket("read", 512) == 0
    assert stats_bucket("write", 512) == 1
    assert stats_bucket("read", 4096) == 6
    assert stats_bucket("read", 64 * 1024) == 14
    assert stats_bucket("read", 128 * 1024) == 14  # larger sizes share the last bucket
    assert stats_bucket("write", 1 << 20) == 15


def test_hipri_without_io_poll_uses_interrupts():
    cfg = make_cfg("classic", runtime_ms=10)
    cfg = cfg.with_queue(io_poll=False)
    s = simulate(cfg)["summary"]
    assert s["completion_policies"] == ["interrupt"]
    assert s["interrupts_per_io"] == pytest.approx(1.0, abs=0.02)


def test_more_polling_threads_than_cpus_switch_but_complete():
    s = simulate(make_cfg("classic", threads=16, runtime_ms=40))["summary"]
    assert s["ios"] > 0
    assert s["cpu_utilization"] > 0.95


def test_completion_rule_in_kernel_terms_and_fio_engines_in_them():
    """The kernel's rule sees a request's HIPRI flag and whether its submitter reaps completions
    itself; fio's engines state theirs through models.ioengines.select_policy_name (libaio drops
    hipri: aio clears IOCB_HIPRI; io_uring's hipri is an IOPOLL ring)."""
    from models.ioengines import (
        CPU_ENGINES,
        FS_META_ENGINES,
        MODELLED_ENGINES,
        SYNC_ENGINES,
        USERSPACE_ENGINES,
        select_policy_name,
    )
    from models.os.block.completion import completion_policy_name
    from models.os.block.queue import QueueConfig

    classic = QueueConfig(io_poll=True, io_poll_delay=-1)
    hybrid = QueueConfig(io_poll=True, io_poll_delay=0)
    no_poll = QueueConfig(io_poll=False)
    # a task waiting in its system call: the queue decides what HIPRI does
    assert completion_policy_name(classic, hipri=True) == "classic-poll"
    assert completion_policy_name(hybrid, hipri=True) == "hybrid-poll"
    assert completion_policy_name(no_poll, hipri=True) == "interrupt"
    assert completion_policy_name(hybrid, hipri=False) == "interrupt"
    # a submitter reaping its own completions: HIPRI (IOPOLL) spins whatever io_poll_delay says
    assert completion_policy_name(hybrid, hipri=True, reaps_itself=True) == "classic-poll"
    assert completion_policy_name(hybrid, hipri=False, reaps_itself=True) == "interrupt"
    expected = {"libaio": "interrupt", "io_uring": "classic-poll", "io_uring_cmd": "classic-poll", "null": "interrupt"}
    no_completion = (*USERSPACE_ENGINES, *FS_META_ENGINES, *CPU_ENGINES)  # (no kernel completion, or no IO)
    for engine in (e for e in MODELLED_ENGINES if e not in no_completion):
        want = "hybrid-poll" if engine in SYNC_ENGINES else expected[engine]
        assert select_policy_name(hybrid, True, engine) == want, engine
        assert select_policy_name(hybrid, False, engine) == "interrupt", engine
