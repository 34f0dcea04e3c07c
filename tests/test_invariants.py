"""Invariants over random configurations (hypothesis): conservation, causality, energy bounds."""

from hypothesis import HealthCheck, given, settings, strategies as st

from stacksim.run import build, simulate
from tests.conftest import make_cfg


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    mode=st.sampled_from(["interrupt", "classic", "hybrid"]),
    threads=st.integers(1, 12),
    bs=st.sampled_from(["1k", "4k", "16k", "128k"]),
    rw=st.sampled_from(["randread", "randwrite", "randrw", "read"]),
    seed=st.integers(0, 2**16),
)
def test_every_io_completes_once_and_in_causal_order(mode, threads, bs, rw, seed):
    cfg = make_cfg(mode, threads=threads, bs=bs, rw=rw, runtime_ms=4, ramp_ms=0, seed=seed)
    host, ramp, end = build(cfg)
    host.engine.run(end + 5e6)  # let in-flight IOs finish (threads stop issuing at end)
    ids = [r.id for r in host.records]
    assert len(ids) == len(set(ids)), "an IO completed twice"
    assert len(ids) == host.next_io_id, "an IO was lost"
    for r in host.records:
        assert r.t_submit <= r.t_dispatch <= r.t_dev_start < r.t_dev_end <= r.t_cqe <= r.t_reaped <= r.t_complete
        # latency is at least the device's own service time
        assert r.t_complete - r.t_submit >= r.device_service_ns
    for t in host.all_tasks:
        assert t.state == "dead"


@settings(max_examples=6, deadline=None)
@given(mode=st.sampled_from(["interrupt", "classic", "hybrid"]), threads=st.integers(1, 8))
def test_energy_is_at_least_idle_power_times_time(mode, threads):
    cfg = make_cfg(mode, threads=threads, runtime_ms=10, ramp_ms=2)
    res = simulate(cfg)
    p = cfg.platform
    idle_cpu_w = p.cpu.physical_cores * min(s.power_w for s in p.cpu.cstates if not s.polling) + p.cpu.uncore_idle_w
    idle_w = idle_cpu_w + p.ssd.idle_w * p.ssd_count + p.power.dram_w + p.power.platform_base_w
    dur = res["sim"]["measured_s"]
    assert res["summary"]["energy_j"] >= idle_w * dur
    assert res["summary"]["power_w"]["cpu"] >= idle_cpu_w
