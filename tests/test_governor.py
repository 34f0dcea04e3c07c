"""The SPDK governor scheduler's mechanisms (policies/core_scheduling/governor.py): the DPDK
frequency table, one table entry per decision, the chain-of-events scheduling pass, SMT siblings'
shared clock, and a P-state transition that lands on the latest request."""

from __future__ import annotations

import pytest

from models.cpu.presets import epyc_9454p
from models.platforms_server import epyc9454p_16xpm1743
from models.server.config import ServerConfig
from models.server.core_scheduling import dpdk_freq_table
from scenarios.config.server import ServerRunConfig
from scenarios.config.server_workloads import StableWorkload
from scenarios.run.assembly import build_server

PLAT = epyc9454p_16xpm1743()


def test_dpdk_table_is_turbo_then_base_down_in_100_mhz_steps():
    """DPDK's CPPC table: scaling_max_freq, then 2.75 GHz down by 100 MHz while >= 0.4 GHz (the
    truncating kHz division stops at 0.45); without turbo the first entry is the base."""
    t = dpdk_freq_table(PLAT.cpu)
    assert len(t) == 25 and t[0] == PLAT.cpu.top_freq_ghz and t[1] == 2.75 and t[-1] == pytest.approx(0.45)
    assert all(a - b == pytest.approx(0.1) for a, b in zip(t[1:], t[2:]))
    no_turbo = dpdk_freq_table(epyc_9454p(turbo=False))
    assert no_turbo == t[1:]


def _server(rate: float = 200_000.0, ms: float = 3.0, **server):
    w = StableWorkload(rate_iops=rate, duration_s=ms / 1e3, warmup_s=1e-3)
    cfg = ServerRunConfig(name="t", platform=PLAT, server=ServerConfig(policy="governor", **server), workload=w, seed=3)
    return build_server(cfg)


def test_decision_moves_one_table_entry_except_at_the_extremes():
    """gscheduler's balance: idle > busy one entry down, busy >= idle one entry up, a saturated
    window (idle < busy/1000) to the top, a near-idle one (busy < idle/1000) to the bottom."""
    pol = _server().policy
    n = len(pol.level)
    pol.level = [10] * n
    cases = {0: (30.0, 100.0), 1: (70.0, 100.0), 2: (99.99, 100.0), 3: (0.01, 100.0), 4: (50.0, 100.0)}
    pol.busy = [cases.get(i, (50.0, 100.0))[0] for i in range(n)]
    pol.window = [cases.get(i, (50.0, 100.0))[1] for i in range(n)]
    changed = pol._decide()
    assert pol.level[:5] == [11, 9, 0, pol.lowest, 9]  # busy == idle counts as busy: up
    assert set(range(5)) <= set(changed)


def test_the_pass_is_a_chain_that_visits_every_reactor_once():
    """One pass gathers every reactor in order (each at its own loop's event ring) and balances
    on the main reactor: the next pass starts no sooner than one period after this one."""
    srv = _server(ms=2.0)
    pol = srv.policy
    seen = []
    gather = pol._gather

    def spy(i):
        seen.append((srv.engine.now, i))
        gather(i)

    pol._gather = spy
    srv.engine.run(1e6)
    order = [i for _, i in seen]
    n = len(srv.reactors)
    assert order[: 3 * n] == list(range(n)) * 3
    times = [t for t, _ in seen]
    assert times == sorted(times)
    starts = [t for t, i in seen if i == 0]
    # a pass is due one period after the previous pass was due; a P-state stall of the main
    # reactor's core (cpu.pstate_stall_ns) can delay one pass's first gather, by at most the stall
    stall = srv.pkg.cfg.pstate_stall_ns
    assert all(b - a >= pol.period - stall for a, b in zip(starts, starts[1:]))
    assert sorted(b - a for a, b in zip(starts, starts[1:]))[1] >= pol.period  # all but such a one
    assert pol.decisions >= len(starts) - 1 and pol.pass_ns / pol.decisions > pol.period


def test_smt_siblings_share_the_faster_entry():
    """The power library's rule: a physical core runs at the higher of its two threads' requests;
    the slower sibling stepping down does not lower it."""
    srv = _server(ms=2.0)
    pol = srv.policy
    core = next(c for c, rs in pol.by_core.items() if len(rs) == 2)
    a, b = pol.by_core[core]
    pol.level[a.idx], pol.level[b.idx] = 3, 20
    assert pol._request_cores([b.idx]) == 1
    assert srv.pkg.cores[core].target_ghz == pol.freqs[3]
    pol.level[b.idx] = 21
    assert pol._request_cores([b.idx]) == 0 and srv.pkg.cores[core].target_ghz == pol.freqs[3]


def test_a_transition_lands_on_the_latest_request_without_restarting():
    """A second request while a transition runs does not restart it: the core switches once, at
    the first request's transition time, to the second request's frequency (restarting, a governor
    that re-asks faster than the transition would freeze the core)."""
    srv = _server(ms=2.0)
    core = next(c for c in srv.pkg.cores if c.index not in srv.policy.by_core)  # no reactor: ungoverned
    eng = srv.engine
    tr = PLAT.cpu.pstate_transition_ns
    eng.run(1e5)
    t0 = eng.now
    before = core.transitions
    core.request_freq(t0, 1.0)
    eng.run(t0 + 0.5 * tr)
    core.request_freq(eng.now, 2.0)
    eng.run(t0 + tr - 1.0)
    assert core.freq_ghz not in (1.0, 2.0)
    eng.run(t0 + tr + 1.0)
    assert core.freq_ghz == 2.0 and core.transitions == before + 1


# -- DPDK's empty-poll governor ---------------------------------------------------------------------
def _empty_poll(rate: float, ms: float = 12.0, **params):
    w = StableWorkload(rate_iops=rate, duration_s=ms / 1e3, warmup_s=1e-3)
    cfg = ServerRunConfig(
        name="t",
        platform=PLAT,
        server=ServerConfig(policy="dpdk-empty-poll", cores=2, threads=2),
        policy=params,
        workload=w,
        seed=3,
    )
    return build_server(cfg)


def test_empty_poll_needs_more_than_n_consecutive_busy_windows():
    """update_stats_normal: a window over 70% busy counts one, a window at or under it resets the
    count, and the state changes on the window after ``windows`` counted ones."""
    pol = _empty_poll(1e5).policy
    n = pol.p.windows
    assert n == 100 and pol.period == 10e6  # INTERVALS_PER_SECOND
    for _ in range(n - 1):
        assert not pol._advance(0, 90.0)
    assert not pol._advance(0, 50.0) and pol.ctr[0] == 0  # one quiet window: start again
    for _ in range(n):
        assert not pol._advance(0, 90.0)
    assert pol._advance(0, 90.0) and pol.state[0] == 2 and pol.bins[0] == [0.0] * 4
    for _ in range(n):
        assert not pol._advance(0, 10.0)
    assert pol._advance(0, 10.0) and pol.state[0] == 1


def test_empty_poll_steps_up_only_after_sustained_load():
    """Two reactors at MED (1.95 GHz), loaded ~85%: with 1 ms windows and windows=5 the cores stay
    at MED for six windows, then go to HGH (2.75 GHz) one transition later; under 70% they stay."""
    srv = _empty_poll(1.1e6, ms=12.0, interval_ms=1.0, windows=5)
    core = srv.pkg.cores[srv.reactors[0].pcore.index]
    assert core.freq_ghz == pytest.approx(1.95)
    srv.engine.run(5.9e6)
    assert core.target_ghz == pytest.approx(1.95)
    srv.engine.run(6.1e6)
    assert core.target_ghz == pytest.approx(2.75) and core.freq_ghz == pytest.approx(1.95)
    srv.engine.run(6.1e6 + PLAT.cpu.pstate_transition_ns)
    assert core.freq_ghz == pytest.approx(2.75)
    light = _empty_poll(4e5, ms=12.0, interval_ms=1.0, windows=5)
    light.engine.run(11e6)
    assert light.policy.state_changes == 0
