"""fio's latency_target depth search (models/ioengines/latency_target.py, issue 18)."""

from __future__ import annotations

from models.ioengines.latency_target import LatencyTarget
from scenarios.config.host import resolve
from scenarios.run.simulate import simulate


def _drive(lt: LatencyTarget, meets_up_to: int, windows: int) -> list[int]:
    """Feed windows whose IOs meet the target exactly while the depth is <= ``meets_up_to``."""
    seen = []
    t = 0.0
    for _ in range(windows):
        ok = lt.qd <= meets_up_to
        for _ in range(100):
            lt.completed(lt.target_ns / 2 if ok else lt.target_ns * 2)
        t += lt.window_ns
        seen.append(lt.check(t))
        if lt.done:
            break
    return seen


def test_the_search_doubles_then_bisects_to_the_deepest_depth_meeting_the_target():
    lt = LatencyTarget(50_000, 1e6, 99.0, False, 64, 0.0)
    seen = _drive(lt, meets_up_to=12, windows=50)
    assert seen[:4] == [2, 4, 8, 16]  # doubles while nothing failed
    assert lt.done and lt.qd <= 12 and lt.qd >= 10  # settles just under the knee, then ends
    assert max(seen) <= 16


def test_with_latency_run_the_search_never_ends_and_follows_the_knee():
    lt = LatencyTarget(50_000, 1e6, 99.0, True, 64, 0.0)
    _drive(lt, meets_up_to=5, windows=30)
    assert not lt.done and lt.qd <= 5


def test_a_target_never_met_stays_at_depth_one_and_ends():
    lt = LatencyTarget(1, 1e6, 100.0, False, 32, 0.0)
    _drive(lt, meets_up_to=0, windows=10)
    assert lt.qd == 1 and lt.done


def test_a_job_finds_the_depth_under_a_latency_target():
    """io_uring randread on the 900P: 3 media units, so latency rises with depth; a 20 us target
    on 99% of the IOs of each 5 ms window settles at a few commands in flight, and fio's JSON
    reports it."""
    cfg = resolve(
        scenario="default",
        sets={
            "ioengine": "io_uring",
            "iodepth": "64",
            "latency_target": "20",
            "latency_window": "5ms",
            "latency_percentile": "99",
            "runtime": "400ms",
            "ramp_time": "0",
        },
    )
    res = simulate(cfg, keep_model=True)
    th = res.run.threads[0]
    assert th.lat.done  # the search settled and the job ended before its runtime
    assert 2 <= th.lat.qd <= 8
    job = res["jobs"][0]  # fio's JSON job entry
    assert job["latency_depth"] == th.lat.qd and job["latency_target"] == 20_000
