"""Invariants over random configurations (hypothesis): conservation, causality, energy bounds."""

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from models.platforms import optane900p_e3_1230v5
from scenarios.run.assembly import build_run
from scenarios.run.simulate import simulate
from tests.conftest import make_cfg


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    mode=st.sampled_from(["interrupt", "classic", "hybrid"]),
    threads=st.integers(1, 12),
    bs=st.sampled_from(["1k", "4k", "16k", "128k", "512k", "bssplit=4k/50:256k/50"]),
    rw=st.sampled_from(["randread", "randwrite", "randrw", "read"]),
    governor=st.sampled_from(["performance", "schedutil", "ondemand"]),
    seed=st.integers(0, 2**16),
)
def test_every_io_completes_once_and_in_causal_order(mode, threads, bs, rw, governor, seed):
    extra = {"bssplit": bs.split("=", 1)[1]} if bs.startswith("bssplit=") else {}
    plat = optane900p_e3_1230v5()
    plat = plat.model_copy(update={"cpu": plat.cpu.model_copy(update={"cpufreq_governor": governor})})
    cfg = make_cfg(
        mode,
        threads=threads,
        bs="4k" if extra else bs,
        rw=rw,
        runtime_ms=4,
        ramp_ms=0,
        seed=seed,
        platform=plat,
        extra=extra,
    )
    host, _fio, ramp, end = build_run(cfg, keep_requests=True)
    host.engine.run(end + 5e6)  # let in-flight IOs finish (threads stop issuing at end)
    ids = [r.id for r in host.records]
    assert len(ids) == len(set(ids)), "an IO completed twice"
    assert len(ids) == host.next_io_id, "an IO was lost"
    for r in host.records:
        assert r.t_submit <= r.t_dispatch <= r.t_dev_start < r.t_dev_end <= r.t_cqe <= r.t_reaped <= r.t_complete
        # latency is at least the device's own service time (the longest piece of a split IO)
        longest = max(p.device_service_ns for p in r.splits) if r.splits else r.device_service_ns
        assert r.t_complete - r.t_submit >= longest
        if r.splits:
            assert all(p.done for p in r.splits) and sum(p.nbytes for p in r.splits) == r.nbytes
    workers = {w.task for w in host.blk.kblockd.values()}  # kernel threads: they sleep, idle
    for t in host.all_tasks:
        assert t.state == ("sleeping" if t in workers else "dead")


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
