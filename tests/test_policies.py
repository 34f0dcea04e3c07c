"""Each completion policy's defining property, emerging from the modelled mechanisms."""

import numpy as np
import pytest

from policies.completion.hybrid_poll import stats_bucket
from stacksim.run import build, simulate
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


def test_interrupt_and_hybrid_switch_about_once_per_io(runs):
    for m in ("interrupt", "hybrid"):
        s = runs[m]["summary"]
        assert s["context_switches_per_io"] == pytest.approx(1.0, abs=0.02), m
        assert s["interrupts_per_io"] == pytest.approx(1.0, abs=0.02), m
    assert runs["hybrid"]["summary"]["interrupts"].get("timer", 0) > 0
    assert runs["interrupt"]["summary"]["interrupts"].get("nvme", 0) > 0


def test_cpu_utilization_order_classic_hybrid_interrupt(runs):
    u = {m: runs[m]["summary"]["cpu_utilization"] for m in runs}
    assert u["classic"] > u["hybrid"] > u["interrupt"]


def test_hybrid_sleeps_about_half_the_mean_completion_time():
    cfg = make_cfg("hybrid", runtime_ms=250, ramp_ms=0)
    host, ramp, end = build(cfg)
    host.engine.run(end)
    pol = host.policies["hybrid-poll"]
    # the first request has no statistics, so it does not sleep
    assert not host.records[0].slept
    mean = pol.mean_ns[stats_bucket("read", 4096)]
    done = [r.t_reaped - r.t_dispatch for r in host.records]
    assert mean == pytest.approx(np.mean(done), rel=0.05)
    # no sleeps before the first 100 ms window closes; every request after it sleeps once
    early = [r for r in host.records if r.t_dispatch < 100e6]
    late = [r for r in host.records if r.t_dispatch > 100.1e6]
    assert not any(r.slept for r in early)
    assert all(r.slept for r in late)
    avg_sleep = pol.slept_ns / pol.sleeps
    # the sleep is (mean + 1) / 2, lengthened only by the wake-up path (timer IRQ + switch in)
    assert 0.5 * mean <= avg_sleep <= 0.5 * mean + 3_000


def test_fixed_hybrid_delay_sleeps_n_us():
    cfg = make_cfg("hybrid", runtime_ms=20)
    cfg = cfg.with_queue(io_poll_delay=3)
    host, ramp, end = build(cfg)
    host.engine.run(end)
    pol = host.policies["hybrid-poll"]
    assert pol.sleep_ns(host.records[0]) == 3000.0


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
