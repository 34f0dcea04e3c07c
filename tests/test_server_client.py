"""The closed-loop NVMe-oF client (models/server/client.py): fio over NVMe-oF, each connection
keeping iodepth commands outstanding, so the target's speed sets the throughput (issue 15)."""

from __future__ import annotations

import numpy as np
import pytest

from models.platforms_server import epyc9454p_16xpm1743
from models.server.config import ServerConfig
from scenarios.config.server import ServerRunConfig
from scenarios.config.server_workloads import BurstWorkload, StableWorkload
from scenarios.run.simulate import simulate

PLAT = epyc9454p_16xpm1743()


def closed(policy: str = "spdk-static", ms: float = 6.0, cap: float = 1e9, wl: dict | None = None, **server):
    w = StableWorkload(client="closed", rate_iops=cap, duration_s=ms / 1e3, warmup_s=2e-3, **(wl or {}))
    return ServerRunConfig(name="t", platform=PLAT, server=ServerConfig(policy=policy, **server), workload=w, seed=3)


def test_a_slower_target_lowers_a_closed_clients_throughput_not_its_offered_queue():
    """Two reactors, CPU-bound: 4x the per-request cycles give about 1/4 of the IOPS (the client
    waits for responses); the commands in flight stay connections x iodepth, so by Little's law
    the mean latency is outstanding / IOPS."""
    fast = simulate(closed(cores=2, threads=2))["summary"]
    slow = simulate(closed(cores=2, threads=2, rx_cycles=4 * 1800.0, cq_cycles=4 * 1260.0))["summary"]
    assert slow["iops"] < 0.35 * fast["iops"]
    outstanding = 96 * 4
    for s in (fast, slow):
        assert outstanding / s["iops"] * 1e6 == pytest.approx(s["latency_us"]["mean"], rel=0.1)


def test_the_rate_cap_binds_and_every_connection_keeps_its_depth():
    """A cap below what the target can do is met (fio rate_iops), evenly spaced per connection."""
    s = simulate(closed(cap=400_000.0))["summary"]
    assert s["iops"] == pytest.approx(400_000.0, rel=0.03)
    free = simulate(closed(cap=1e9), keep_model=True)
    c = free.model.client
    assert c.outstanding == 96 * 4 or c.sent >= 96 * 4
    assert free["summary"]["iops"] > 1.5e6  # 384 commands over ~80-100 us of round trip


def test_an_open_client_keeps_sending_when_the_target_slows():
    """Contrast: the open-loop client's arrivals do not wait for responses: it offers twice what
    the slowed target serves, where the closed client offers what is served."""
    slow = dict(cores=2, threads=2, rx_cycles=4 * 1800.0, cq_cycles=4 * 1260.0)
    w = StableWorkload(rate_iops=1_200_000.0, duration_s=6e-3, warmup_s=2e-3)
    s = simulate(
        ServerRunConfig(name="t", platform=PLAT, server=ServerConfig(policy="spdk-static", **slow), workload=w, seed=3)
    )["summary"]
    assert s["offered_iops"] > 2.5 * s["iops"]  # arrivals in the window vs completions of them
    c = simulate(closed(**slow))["summary"]
    assert c["offered_iops"] == pytest.approx(c["iops"], rel=0.05)


def test_closed_burst_cycles_between_the_caps():
    """Burst pattern with the closed client: the quiet phase is capped at low_fraction x the SSD's
    maximum (fio rate_iops), the burst at the maximum, where the client's depth limits it."""
    w = BurstWorkload(client="closed", time_scale=2e-3, cycles=1, iodepth=8)
    cfg = ServerRunConfig(name="t", platform=PLAT, server=ServerConfig(policy="spdk-static"), workload=w, seed=5)
    srv = simulate(cfg, keep_model=True).model
    arr = np.asarray(srv.rec_arr)
    quiet_ns, burst_ns = w.low_s * w.time_scale * 1e9, w.high_s * w.time_scale * 1e9
    quiet = np.count_nonzero(arr < quiet_ns) / (quiet_ns * 1e-9)
    burst = np.count_nonzero(arr >= quiet_ns) / (burst_ns * 1e-9)
    assert quiet == pytest.approx(w.low_fraction * w.ssd_max_iops, rel=0.05)
    assert burst > 5 * quiet
    assert burst < w.connections * w.iodepth / 60e-6  # at most the outstanding commands per round trip


def _burst_run(policy: str):
    from scenarios.config.server import resolve_server

    sets = {
        "server.policy": policy,
        "workload.client": "closed",
        "workload.cycles": "1",
        "workload.time_scale": "0.01",
        "workload.iodepth": "8",
    }
    return simulate(resolve_server("server-burst", sets, seed=1), records=True, keep_model=True)


def test_the_burst_builds_a_queue_on_under_clocked_cores():
    """governor: the quiet phase leaves the reactors at the minimum clock; the burst's commands
    (released at its start by the client's cap) wait at the target before their NVMe submit far
    longer than under spdk-static (full clock), until the clock has come up."""
    waits = {}
    for policy in ("governor", "spdk-static"):
        r = _burst_run(policy)
        srv = r.model
        arr = np.array([q.t_arr for q in srv.records])
        wait = np.array([q.t_submit - q.t_arr for q in srv.records])
        b0 = srv.cfg.workload.windows()[0][0]
        early = (arr >= b0) & (arr < b0 + 0.2e6)
        late = arr >= b0 + 5e6
        waits[policy] = (np.percentile(wait[early], 99), np.percentile(wait[late], 99))
        if policy == "governor":
            assert r["summary"]["policy_stats"]["freq_requests"] > 0
    gov, static = waits["governor"], waits["spdk-static"]
    assert gov[0] > 4 * static[0]  # the queue on the slow cores at the burst's start
    assert gov[0] > 3 * gov[1]  # and it drains once the clock is up


def test_governor_actuation_costs_the_main_core():
    """Every pass the reactors fill their statistics and the main core runs the decision loop;
    each frequency request adds the user-space write path, each changed reactor the register
    write's IPI; all as a slow-down over the pass."""
    from policies.core_scheduling.governor import Governor

    srv = _burst_run("governor").model
    pol = srv.policy
    assert isinstance(pol, Governor)
    sc = srv.cfg.server
    n = len(srv.reactors)
    span = 50_000.0
    for requests in (0, 2, 40):
        main = pol._actuation(requests, span, [2])
        assert main == sc.stats_fill_ns + pol.p.decision_ns_per_reactor * n + requests * pol.p.freq_request_ns
        eff = max(span, main / 0.9)
        assert srv.reactors[0].infl == pytest.approx(eff / (eff - main))
        assert srv.reactors[1].infl == pytest.approx(eff / (eff - sc.stats_fill_ns))
        ipi = sc.stats_fill_ns + pol.p.target_ipi_cycles / srv.reactors[2].pcore.freq_ghz
        assert srv.reactors[2].infl == pytest.approx(eff / (eff - ipi))
    assert srv.reactors[0].infl > srv.reactors[2].infl > srv.reactors[1].infl > 1.0


def test_burst_study_aggregates_bins_in_and_out_of_bursts(tmp_path):
    from scenarios.studies import server_burst as burst_study

    row = burst_study.run_policy("spdk-static", time_scale=0.002, cycles=1)
    assert row["burst"]["iops"] > 5 * row["quiet"]["iops"]
    assert row["quiet"]["iops"] == pytest.approx(0.05 * 2.5e6, rel=0.1)
    assert "| `spdk-static` |" in burst_study.table([row])
    out = tmp_path / "b.html"
    page_rows = [row]
    from scenarios.run.outputs import figures_page

    out.write_text(figures_page("t", [], [("bins", burst_study.figure(page_rows))]))
    assert out.stat().st_size > 1000
