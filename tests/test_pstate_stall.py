"""The P-state stall (models.cpu.core.PhysicalCore): when a frequency change takes effect the core's
clock stops for ``cpu.pstate_stall_ns`` (the PLL relocks); neither sibling executes meanwhile. A
request for the frequency the core already has costs nothing, requests during a transition
coalesce into one stall, and the OS runners and the storage server's reactors both wait it out."""

from __future__ import annotations

import pytest

from models.platforms_server import epyc9454p_16xpm1743
from models.server.config import ServerConfig
from scenarios.config.host import resolve
from scenarios.config.server import ServerRunConfig
from scenarios.config.server_workloads import StableWorkload
from scenarios.run.assembly import build_host, build_server


def _host(**sets: str):
    cfg = resolve(sets=sets)
    host = build_host(cfg.platform, cfg.queue, 1)
    host.engine.run(1_000.0)  # past boot (every CPU idle)
    deepest = len(cfg.platform.cpu.cstates) - 1
    for cpu in host.pkg.cpus:  # asleep, not spinning in POLL: no SMT contention in these tests
        cpu.set_idle(host.engine.now, deepest)
    return cfg.platform.cpu, host


def _land_at(core, t_land: float, ghz: float, transition_ns: float) -> None:
    """Ask ``core`` for ``ghz`` so that the change takes effect at ``t_land``."""
    core.pkg.engine.call_at(t_land - transition_ns, lambda: core.request_freq(core.pkg.engine.now, ghz))


def test_only_a_change_that_takes_effect_stalls_and_requests_coalesce():
    cpu, host = _host()
    core = host.runners[0].cpu.core
    eng = host.engine
    tr, stall = cpu.pstate_transition_ns, cpu.pstate_stall_ns
    assert stall == 10_000.0 and core.stall_ns == 0.0
    core.request_freq(eng.now, core.freq_ghz)  # the frequency it has: nothing happens
    eng.run(eng.now + 2 * tr)
    assert core.transitions == 0 and core.stall_ns == 0.0
    f0 = core.freq_ghz
    core.request_freq(eng.now, 1.0)
    eng.run(eng.now + 0.5 * tr)
    core.request_freq(eng.now, f0)  # back where it was before the transition lands: no change, no stall
    eng.run(eng.now + 2 * tr)
    assert core.transitions == 0 and core.stall_ns == 0.0
    t0 = eng.now
    for k, ghz in enumerate((1.0, 1.5, 2.0)):  # three requests within one transition: one change, one stall
        eng.call_at(t0 + k * 0.2 * tr, lambda g=ghz: core.request_freq(eng.now, g))
    eng.run(t0 + 3 * tr)
    assert core.freq_ghz == 2.0 and core.transitions == 1 and core.stall_ns == stall
    assert core.stall_until == pytest.approx(t0 + tr + stall)


def _work_across_a_change(**sets):
    """5 us of work started at t0 on CPU 0, a change to 1 GHz landing 1 us in: (the CPU's config,
    CPU 0's runner, t0, when the work ended)."""
    cpu, host = _host(**sets)
    r0 = host.runners[0]
    eng = host.engine
    t0 = eng.now + 1e5
    eng.run(t0 - cpu.pstate_transition_ns - 1.0)
    done = []
    _land_at(r0.cpu.core, t0 + 1_000.0, 1.0, cpu.pstate_transition_ns)
    eng.call_at(t0, lambda: r0.run(host.costs.get("test_work", user=5_000.0 * r0.freq), lambda: done.append(eng.now)))
    eng.run(t0 + 50_000.0)
    return cpu, r0, t0, done


def test_a_segment_under_way_ends_one_stall_later():
    """5 us of work; the change lands 1 us in: the work keeps the speed it started with and ends
    ``pstate_stall_ns`` later than it would have."""
    cpu, r0, t0, done = _work_across_a_change()
    assert r0.freq == 1.0
    assert done == [pytest.approx(t0 + 5_000.0 + cpu.pstate_stall_ns)]


def test_the_sibling_cannot_start_work_during_the_stall():
    """The change lands at t1; the SMT sibling is handed 3 us of work 2 us later: it starts when
    the core's clock runs again, at t1 + pstate_stall_ns."""
    cpu, host = _host()
    r0 = host.runners[0]
    sib = host.runners[host.pkg.sibling_of(r0.cpu).id]
    eng = host.engine
    t1 = eng.now + 1e5
    eng.run(t1 - cpu.pstate_transition_ns - 1.0)
    _land_at(r0.cpu.core, t1, 2.0, cpu.pstate_transition_ns)
    done = []
    eng.call_at(
        t1 + 2_000.0, lambda: sib.run(host.costs.get("test_work2", user=3_000.0 * 2.0), lambda: done.append(eng.now))
    )
    eng.run(t1 + 50_000.0)
    assert done == [pytest.approx(t1 + cpu.pstate_stall_ns + 3_000.0)]


def test_no_stall_configured_changes_nothing():
    _cpu, r0, t0, done = _work_across_a_change(**{"cpu.pstate_stall_ns": "0"})
    assert r0.cpu.core.transitions == 1 and done == [pytest.approx(t0 + 5_000.0)]


def test_a_reactor_waits_out_its_cores_stall():
    """Storage server: an idle polling reactor's next event-ring visit and work start no sooner than
    the stall's end; a busy one's committed work ends one stall later (counted busy, as SPDK's TSC)."""
    plat = epyc9454p_16xpm1743()
    plat = plat.model_copy(update={"cpu": plat.cpu.model_copy(update={"pstate_transition_ns": 0.0})})
    w = StableWorkload(rate_iops=1_000.0, duration_s=3e-3, warmup_s=1e-3)  # (no request meanwhile)
    cfg = ServerRunConfig(name="t", platform=plat, server=ServerConfig(policy="spdk-static"), workload=w, seed=3)
    srv = build_server(cfg)
    eng = srv.engine
    eng.run(1e6)
    r, busy = srv.reactors[0], srv.reactors[1]
    if r.pcore is busy.pcore:
        busy = srv.reactors[2]
    now = eng.now
    busy.free_at = now + 3_000.0  # work committed up to 3 us from now
    busy_ns = busy.busy
    stall = plat.cpu.pstate_stall_ns
    for c in (r.pcore, busy.pcore):
        c.request_freq(now, 1.0)
    eng.run(now + 1.0)
    assert r.pcore.freq_ghz == 1.0 and r.stall_until == pytest.approx(now + stall)
    assert srv.event_ring_time(r, now + 1.0) >= now + stall
    assert busy.free_at == pytest.approx(now + 3_000.0 + stall) and busy.busy == pytest.approx(busy_ns + stall)
