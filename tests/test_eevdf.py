"""The fair class per kernel release (models/os/sched/cfs.py, models/os/sched/eevdf.py): EEVDF from
Linux 6.6 (eligibility against the weighted average, earliest virtual deadline first,
RUN_TO_PARITY, PLACE_LAG), 6.12's DELAY_DEQUEUE and PREEMPT_SHORT, CFS before 6.6, and the tunables
scaled by the host's CPU count."""

from __future__ import annotations

import pytest

from models.os.sched import eevdf
from models.os.sched.config import FairTunables, SchedConfig, tunable_factor
from models.os.sched.task import SLEEPING, Task, nice_vscale
from scenarios.config.host import resolve
from scenarios.run.assembly import build_host

#: a segment of user work, in cycles (a CPU hog runs these back to back)
CHUNK_CYCLES = 20_000.0
#: the fairness runs' chunk (fewer events over a second of simulated time)
BIG_CHUNK_CYCLES = 200_000.0


def _host(version: str, cpus: int | None = None):
    sets = {"runtime": "1ms", "kernel.version": version}
    if cpus is not None:
        sets["cpu.physical_cores"], sets["cpu.smt"] = str(cpus), "false"
    cfg = resolve(scenario="default", sets=sets)
    return build_host(cfg.platform, cfg.queue, cfg.seed, None)


def _hog(host, runner, tid: int, nice: int = 0, chunk_cycles: float = CHUNK_CYCLES) -> Task:
    """A CPU-bound task on ``runner``: user work back to back, a preemption point after each chunk."""
    task = Task(1000 + tid, f"hog{tid}", runner.id)
    task.vscale = nice_vscale(nice)
    cost = host.costs.get("hog", user=chunk_cycles)

    def loop() -> None:
        runner.run(cost, lambda: runner.preemption_point(loop))

    task.resume = loop
    runner.add_task(task)
    return task


def _sleeper(host, runner, tid: int, run_cycles: float, sleep_ns: float, log: list | None = None, on_wake=None):
    """A task that runs ``run_cycles``, sleeps ``sleep_ns`` (woken by an hrtimer on its CPU), again;
    ``log`` gets (wake-up time, time it next ran) pairs; ``on_wake(task)`` runs before each wake-up."""
    task = Task(2000 + tid, f"sleeper{tid}", runner.id)
    cost = host.costs.get("burst", user=run_cycles)
    woke = [0.0]

    def loop() -> None:
        if log is not None and woke[0]:
            log.append((woke[0], host.engine.now))
        runner.run(cost, nap)

    def nap() -> None:
        runner.start_timer(sleep_ns, wake)
        runner.sleep(loop, iowait=False)

    def wake(r) -> None:
        woke[0] = host.engine.now
        if on_wake is not None:
            on_wake(task)
        r.wake(task)

    task.resume = loop
    runner.add_task(task)
    return task


def _entities(*specs: tuple[float, float, int]) -> list[Task]:
    """Queued tasks from (vruntime, deadline, nice) triples."""
    out = []
    for i, (v, d, nice) in enumerate(specs):
        t = Task(i, f"t{i}", 0)
        t.vruntime, t.deadline, t.vscale = v, d, nice_vscale(nice)
        out.append(t)
    return out


def test_the_pick_is_the_eligible_task_with_the_earliest_deadline():
    """V is the weighted average; a task ahead of it is not eligible however early its deadline."""
    a, b, c = _entities((0.0, 9.0, 0), (10.0, 5.0, 0), (20.0, 1.0, 0))  # V = 10
    assert eevdf.pick_eevdf([a, b, c], [], None, 0.0, 0.0, True) is b  # c is past V; b's deadline < a's
    avg, load = eevdf.queue_sums([a, b, c], [], None, 0.0, 0.0)
    assert eevdf.is_eligible(avg, load, 10.0, 0.0) and not eevdf.is_eligible(avg, load, 10.5, 0.0)
    # a heavy task pulls the average to itself: at nice -5 (3121 vs 1024) V = (0*1024 + 20*3121)/4145
    heavy = _entities((0.0, 9.0, 0), (20.0, 1.0, -5))
    assert eevdf.pick_eevdf(heavy, [], None, 0.0, 0.0, True) is heavy[0]  # V ~ 15: 20 is ahead of it
    heavy[1].vruntime = 14.0  # now behind V (~10.5)? V = 14*3121/4145 = 10.5: still not eligible
    assert eevdf.pick_eevdf(heavy, [], None, 0.0, 0.0, True) is heavy[0]
    heavy[0].vruntime = 16.0  # V = (16*1024 + 14*3121)/4145 = 14.5: both eligible, the earlier deadline
    assert eevdf.pick_eevdf(heavy, [], None, 0.0, 0.0, True) is heavy[1]


def test_run_to_parity_keeps_an_eligible_current_task_until_its_request_is_used():
    cur, wakee = _entities((10.0, 100.0, 0), (10.0, 50.0, 0))
    cur.protect = True
    assert eevdf.pick_eevdf([wakee], [], cur, 10.0, 0.0, True) is cur  # protected, eligible (v == V)
    assert eevdf.pick_eevdf([wakee], [], cur, 10.0, 0.0, False) is wakee  # without RUN_TO_PARITY
    # ahead of the average (it ran on): no longer eligible, the protection does not help
    assert eevdf.pick_eevdf([wakee], [], cur, 12.0, 0.0, True) is wakee


def test_place_lag_keeps_a_tasks_lag_through_the_placement():
    """PLACE_LAG inflates the saved lag so that after the task joins the average it is still owed it."""
    q = _entities((100.0, 0.0, 0), (300.0, 0.0, 0))  # V = 200
    t = Task(9, "w", 0)
    t.vlag = 40.0
    eevdf.place(t, q, [], None, 0.0, 0.0, 3e6)
    avg, load = eevdf.queue_sums(q + [t], [], None, 0.0, 0.0)
    assert avg / load - t.vruntime == pytest.approx(40.0)  # V' - v == the lag saved at dequeue
    assert t.deadline == pytest.approx(t.vruntime + 3e6)
    e = Task(10, "empty", 0)
    e.vlag = 40.0
    eevdf.place(e, [], [], None, 0.0, 7.0, 3e6)  # an empty queue: the lag is dropped
    assert e.vruntime == 7.0


def test_a_short_sleep_keeps_the_lag_place_lag():
    """PLACE_LAG in a run: a task that sleeps 50 us between bursts beside a CPU hog saves its lag
    when it sleeps (entity_lag, within +-max(2 slice, tick) / w) and wakes with that same lag
    (V - v after it joined the queue), not at the queue's minimum minus a sleeper credit."""
    host = _host("6.6")
    r = host.runners[2]
    _hog(host, r, 0)
    pairs = []

    def check(task):
        saved = task.vlag
        r.wake(task)  # (its own CPU: enqueued at once)
        cur = r.current
        avg, load = r._sums(cur, r.cur_vruntime(cur, host.engine.now) if cur is not None else 0.0)
        pairs.append((saved, r.min_vruntime + avg / load - task.vruntime))

    s = _sleeper(host, r, 1, run_cycles=200_000.0, sleep_ns=50_000.0, on_wake=check)
    host.engine.run(until=30e6)
    limit = max(2 * r.base_slice_ns, r._tick_ns) * s.vscale
    assert len(pairs) > 20 and any(abs(saved) > 10_000 for saved, _ in pairs)
    for saved, after in pairs:
        assert -limit <= saved <= limit
        assert after == pytest.approx(saved, abs=1.0)  # ns of virtual time


def _waits(version: str, vlag_ns: float | None, slice_ns: float = 0.0) -> list[float]:
    """A task that sleeps 1.3 ms between 20 us bursts beside a CPU hog, woken each time with lag
    ``vlag_ns`` (None: its own): the sorted times from each wake-up to its run."""
    host = _host(version)
    r = host.runners[2]
    _hog(host, r, 0)
    log: list = []

    def set_lag(task):
        if vlag_ns is not None:
            task.vlag = vlag_ns

    s = _sleeper(host, r, 1, run_cycles=60_000.0, sleep_ns=1.3e6, log=log, on_wake=set_lag)
    s.custom_slice_ns = slice_ns
    host.engine.run(until=80e6)
    return sorted(ran - woke for woke, ran in log)


def _median(xs: list[float]) -> float:
    return xs[len(xs) // 2]


def test_a_waking_task_preempts_per_eevdf_and_not_per_the_wakeup_granularity():
    """CFS (6.1) places the wakee at min_vruntime - sched_latency/2 and it preempts the hog, whose
    vruntime leads by more than the wake-up granularity, at its next preemption point. EEVDF (6.6)
    has no granularity: a wakee owed service (positive lag) is placed behind the average, the hog
    is no longer eligible and the wakee is the pick: it preempts. A wakee with no lag is placed at
    the average, the hog stays eligible and keeps the CPU (RUN_TO_PARITY, then the earlier deadline)
    until the tick after its request (3 ms) is used up."""
    cfs = _waits("6.1", None)
    owed = _waits("6.6", 500_000.0)
    even = _waits("6.6", 0.0)
    assert _median(cfs) < 50_000 and _median(owed) < 50_000  # a chunk (~6 us) and the switch
    assert _median(even) > 300_000
    assert max(even) < 3e6 + 4e6 + 100_000  # never longer than a request and a tick


def test_preempt_short_lets_a_task_with_a_shorter_request_in_on_612_only():
    """6.12's PREEMPT_SHORT: an eligible wakee with a shorter request (sched_attr.sched_runtime,
    100 us) whose deadline comes first cancels the hog's protection and preempts it; 6.6 has no
    request of a task's own: the same wakee waits for the hog's request to end."""
    assert _median(_waits("6.12", 0.0, slice_ns=100_000.0)) < 50_000
    assert _median(_waits("6.6", 0.0, slice_ns=100_000.0)) > 300_000


def _delayed_run(version: str) -> tuple[list, object]:
    """A task that runs ~1.2 ms bursts between 200 us sleeps beside a CPU hog (it runs ahead of its
    share): at each wake-up, (still delayed on its queue, its saved lag, its lag once requeued)."""
    host = _host(version)
    r = host.runners[2]
    _hog(host, r, 0)
    seen: list = []

    def observe(task):
        delayed, saved = task.delayed, task.vlag
        r.wake(task)  # (its own CPU: enqueued at once; a second wake-up finds it runnable)
        seen.append((delayed, saved, task.vlag))

    _sleeper(host, r, 1, run_cycles=4e6, sleep_ns=200_000.0, on_wake=observe)
    host.engine.run(until=60e6)
    return seen, r


def test_delay_dequeue_only_on_612():
    """A task that sleeps ahead of the average (negative lag) stays queued on 6.12 (DELAY_DEQUEUE)
    until it is picked or woken, a positive lag then dropped (DELAY_ZERO); 6.6 dequeues it at once
    and keeps the negative lag for its wake-up."""
    on612, r612 = _delayed_run("6.12")
    on66, r66 = _delayed_run("6.6")
    assert len(on612) > 10 and len(on66) > 10
    assert any(d for d, _, _ in on612) and not any(d for d, _, _ in on66)
    assert any(saved < -1_000.0 for _, saved, _ in on66)  # 6.6: it sleeps owing service
    # woken while delayed: requeued where it is, never owed service after the delay
    assert all(after <= 0.0 for d, _, after in on612 if d)
    assert not r66.delayed and all(t.state == SLEEPING for t in r612.delayed)  # a delayed task is asleep


@pytest.mark.parametrize("version", ["6.1", "6.6", "6.12"])
def test_two_equal_hogs_share_a_cpu_equally_and_weights_two_to_one_get_two_to_one(version):
    host = _host(version)
    r, r3 = host.runners[2], host.runners[3]
    a, b = (_hog(host, r, i, chunk_cycles=BIG_CHUNK_CYCLES) for i in (0, 1))
    c, d = (_hog(host, r3, i, chunk_cycles=BIG_CHUNK_CYCLES) for i in (2, 3))
    c.vscale = 0.5  # load weight 2048 against d's 1024
    host.engine.run(until=1e9)
    assert a.exec_ns == pytest.approx(b.exec_ns, rel=0.01)
    # (CFS here: vruntime order with slices of sched_latency / nr_running, not weighted by the task's
    # share as the kernel's sched_slice is: each turn ends at a 4 ms tick, within 3%)
    assert c.exec_ns / d.exec_ns == pytest.approx(2.0, rel=0.01 if version != "6.1" else 0.03)
    assert a.exec_ns + b.exec_ns > 0.95e9  # (the CPU was theirs)
    assert r.eevdf == (version != "6.1")


def test_the_release_selects_the_fair_class_and_its_features():
    rules = {}
    for version in ("6.1", "6.5", "6.6", "6.11", "6.12"):
        r = _host(version).runners[0]
        rules[version] = (r.eevdf, r.delay_dequeue, r.preempt_short, r.base_slice_ns)
    assert rules["6.1"][0] is False and rules["6.5"][0] is False
    assert rules["6.6"] == rules["6.11"] == (True, False, False, 3e6)
    assert rules["6.12"] == (True, True, True, 2.8e6)  # 0.70 ms x 4 (Debian's 6.12.118)


def test_the_tunable_factor_comes_from_the_cpu_count():
    assert [tunable_factor(n) for n in (1, 2, 3, 4, 7, 8, 64)] == [1, 2, 2, 3, 3, 4, 4]
    assert tunable_factor(64, "linear") == 8 and tunable_factor(64, "none") == 1
    t2 = FairTunables(SchedConfig(), 2, (6, 1))
    assert (t2.latency_ns, t2.min_granularity_ns, t2.wakeup_granularity_ns) == (12e6, 1.5e6, 2e6)
    assert FairTunables(SchedConfig(), 4, (6, 6)).base_slice_ns == 2.25e6
    # a value set is taken as written (the sysctl written), whatever the CPU count
    assert FairTunables(SchedConfig(base_slice_ns=1e6), 2, (6, 6)).base_slice_ns == 1e6
    # the host's own CPU count: 2 cores without SMT -> x2 (a CFS host's slices and granularity too)
    small = _host("6.1", cpus=2).runners[0]
    assert small.tunables.factor == 2 and small._wakeup_gran_ns == 2e6 and small._sleeper_credit_ns == 6e6
    assert _host("6.6").runners[0].tunables.factor == 4  # the default host: 8 CPUs
