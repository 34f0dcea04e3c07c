"""Closed-loop replay (models/ioengines/replay_closed.py) and the traces a run writes
(scenarios/run/trace_out.py): a trace written from `stacksim run`'s records validates within 5% on the
same platform when replayed as the application ran; the think time recorded between a completion and
the stream's next issue is kept (computed in user space when short, slept when long); auto picks
closed for synchronous streams and open for overlapping ones; the written traces read back as what
was recorded."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from scenarios.config.resolve import resolve_run
from scenarios.inputs.traces.timed import open_timed, stream_overlaps
from scenarios.run.outputs import records_format, write_records
from scenarios.run.replay import resolve_replay
from scenarios.run.simulate import simulate
from scenarios.run.trace_out import blkparse_lines, fio_log_lines, msr_lines
from scenarios.studies.trace_compare import replay_timed, validate_trace
from simcore.errors import ConfigError
from stacksim import cli

POLL = {"queue.io_poll": 1}
COMPLETIONS = {
    "interrupt": ({}, {}),
    "classic": ({"hipri": 1, **POLL}, {"replay.hipri": 1, **POLL}),
    "hybrid": ({"hipri": 1, **POLL, "queue.io_poll_delay": 0}, {"replay.hipri": 1, **POLL, "queue.io_poll_delay": 0}),
}


def _run_records(numjobs: int, run_sets: dict, runtime: str = "8ms") -> np.ndarray:
    sets = {"runtime": runtime, "ramp_time": "0", "numjobs": numjobs, **run_sets}
    return simulate(resolve_run(sets=sets), records=True).records


def _write(rec: np.ndarray, fmt: str, tmp_path) -> list[str]:
    path = tmp_path / {"blkparse": "t.blkparse", "fiolog": "lat.log", "msr": "t.csv"}[fmt]
    write_records(str(path), rec, fmt)
    return sorted(str(p) for p in tmp_path.iterdir())


def _within(v: dict, pct: float) -> list[str]:
    """Latency and D->C statistics off by more than ``pct``, and the Q->D mean (its tail is a few IOs
    that a CPU's transient, a tick or a frequency step, slowed in the run: where it falls is chance)."""
    bad = []
    for c in v["classes"] + [v["all"]]:
        for what in ("latency", "d2c", "q2d"):
            if what not in c:
                continue
            for stat, err in c[what]["error_pct"].items():
                if err is not None and abs(err) > pct and (what != "q2d" or stat == "mean"):
                    bad.append(f"{c['class']} {what} {stat} {err:+.2f}%")
    return bad


@pytest.mark.parametrize(
    "fmt,numjobs,completion",
    [
        ("blkparse", 1, "interrupt"),
        ("blkparse", 1, "classic"),
        ("blkparse", 1, "hybrid"),
        pytest.param(
            "blkparse",
            4,
            "interrupt",
            marks=pytest.mark.xfail(
                strict=True,
                reason="the run's first IO of each of the 4 threads takes 210-220 us (its CPU's menu, untouched,"
                " trusts the far timer: the deepest state, and the IO's wake-up pays its exit) and the closed"
                " replay's first IOs do not: p99.9 -92%, mean -9% over 8 ms without a ramp",
            ),
        ),
        ("blkparse", 4, "classic"),
        ("blkparse", 4, "hybrid"),
        ("msr", 1, "interrupt"),
        ("msr", 4, "hybrid"),
        ("fiolog", 1, "classic"),
        pytest.param(
            "fiolog",
            4,
            "interrupt",
            marks=pytest.mark.xfail(strict=True, reason="as blkparse-4-interrupt: the run's first IOs, 210-220 us"),
        ),
    ],
)
def test_run_traces_validate_within_5pct_closed(tmp_path, fmt, numjobs, completion):
    run_sets, replay_sets = COMPLETIONS[completion]
    files = _write(_run_records(numjobs, run_sets), fmt, tmp_path)
    assert len(files) == (numjobs if fmt == "fiolog" else 1)  # fio: a log per job
    v = validate_trace(files, fmt, sets=replay_sets, mode="auto")
    r = v["replay"]
    assert r["mode"] == "closed" and r["threads"] == numjobs, r["mode_reason"]
    assert r["completion"] == {"interrupt": "interrupt", "classic": "classic-poll", "hybrid": "hybrid-poll"}[completion]
    assert _within(v, 5.0) == []


def test_plain_run_blkparse_regression(tmp_path, capsys):
    """issue 32: a blkparse trace of a plain `stacksim run` (one pvsync2 thread, depth 1, interrupts)
    replayed open loop gave D->C about twice the recorded time and Q->C ~90% off: the completion met an
    idle CPU and a timer-driven replayer, not a thread asleep in its syscall. Replayed as the
    application ran (validate's default picks closed for it), both are within 5%."""
    out = tmp_path / "ios.blkparse"
    assert cli.main(["run", "--set", "runtime=10ms", "--records", str(out), "--quiet"]) == 0
    assert cli.main(["validate", "--trace", str(out), "--max-error", "50"]) in (0, 1)
    err = capsys.readouterr().err
    assert "--replay auto chose closed" in err
    closed = validate_trace(str(out))
    assert closed["replay"]["mode"] == "closed" and _within(closed, 5.0) == []
    opened = validate_trace(str(out), mode="open")
    # the open-loop defect itself: an IRQ into an idle CPU and a timer-driven reaper double D->C
    assert opened["all"]["d2c"]["error_pct"]["mean"] > 50.0


def _blk(events: list[tuple[int, str, int]]) -> str:
    lines = []
    for i, (t, action, sector) in enumerate(events):
        pid = 0 if action == "C" else 77
        lines.append(f"  259,0  0 {i + 1:8d} {t // 10**9:5d}.{t % 10**9:09d} {pid:5d}  {action}   R {sector} + 8 [x]")
    return "\n".join(lines) + "\n"


def test_think_time_is_kept_computed_when_short_slept_when_long(tmp_path):
    """Three IOs of one pid: C -> next Q gaps of 20 us (less than think_sleep_min_ns: user-space work)
    and 400 us (a sleep). The replayed submissions follow the simulated completions by those gaps."""
    gaps = [20_000, 400_000]
    events, t = [], 0
    for i in range(3):
        events += [(t, "Q", 8 * i), (t + 1000, "D", 8 * i), (t + 10_000, "C", 8 * i)]
        t += 10_000 + (gaps[i] if i < 2 else 0)
    path = tmp_path / "think.blkparse"
    path.write_text(_blk(events))
    reader = open_timed(path)
    reqs = []
    info = replay_timed(reader, resolve_replay(str(path)), lambda t, req: reqs.append(req), mode="closed")
    assert info["trace_ios"] == info["completed_ios"] == 3
    assert info["think"] == {"computed": 1, "slept": 1}
    th = [reqs[0].task]
    assert all(r.task is th[0] for r in reqs)
    for prev, nxt, gap in zip(reqs, reqs[1:], gaps):
        late = nxt.t_submit - (prev.t_reaped + gap)
        assert late >= -1.0  # never before the recorded think time has passed
        assert late < (1_000 if gap < 50_000 else 30_000), late  # a spin ends on time; a sleep wakes a little late


def test_auto_opens_a_trace_whose_streams_overlap(tmp_path):
    rec = simulate(
        resolve_run(sets={"runtime": "3ms", "ramp_time": "0", "ioengine": "io_uring", "iodepth": 4}), records=True
    ).records
    path = tmp_path / "qd4.blkparse"
    write_records(str(path), rec, "blkparse")
    count, over = stream_overlaps(open_timed(path))
    assert len(count) == 1 and over  # one thread, four IOs in flight
    v = validate_trace(str(path))
    assert v["replay"]["mode"] == "open" and "auto chose open" in v["replay"]["mode_reason"]
    with pytest.raises(ConfigError, match="--replay"):
        validate_trace(str(path), mode="sometimes")


@pytest.mark.parametrize("fmt", ["blkparse", "fiolog", "msr"])
def test_written_traces_read_back_as_recorded(tmp_path, fmt):
    rec = _run_records(2, {}, runtime="1ms")
    files = _write(rec, fmt, tmp_path)
    got = list(open_timed(files, fmt))
    assert len(got) == len(rec)
    t0 = rec["t_submit_ns"].min()
    by_key = {(int(r["offset"]), int(r["thread"])): r for r in rec}
    streams = {t.stream for t in got}
    assert len(streams) == 2
    for t in got:
        match = [r for (off, _th), r in by_key.items() if off == t.io.offset]
        assert len(match) == 1
        r = match[0]
        assert t.io.op == r["op"] and t.io.nbytes == r["bytes"]
        want_lat = r["t_reaped_ns"] - r["t_submit_ns"] if fmt == "blkparse" else r["t_complete_ns"] - r["t_submit_ns"]
        tick = 100 if fmt == "msr" else 1
        assert abs(t.lat_ns - want_lat) <= tick
        assert abs(t.io.t_ns - (r["t_submit_ns"] - t0)) <= tick
        if fmt == "blkparse":
            assert abs(t.q2d_ns - (r["t_dispatch_ns"] - r["t_submit_ns"])) <= 1


def test_records_format_by_extension_or_option(tmp_path, capsys):
    assert records_format("a.csv") == "csv" and records_format("a.blkparse") == "blkparse"
    assert records_format("lat.log") == "fiolog" and records_format("x.txt", "msr") == "msr"
    with pytest.raises(ConfigError, match="--records-format"):
        records_format("x.txt")
    assert cli.main(["run", "--set", "runtime=1ms", "--records-format", "msr", "--quiet"]) == 2
    assert "--records FILE only" in capsys.readouterr().err
    lines = blkparse_lines(_run_records(1, {}, runtime="1ms"))
    assert [ln.split()[5] for ln in lines[:3]] == ["Q", "D", "C"]
    assert fio_log_lines(_run_records(1, {}, runtime="1ms"))[0].count(",") == 6
    assert msr_lines(_run_records(1, {}, runtime="1ms"))[0].startswith(tuple("0123456789"))


def test_auto_replays_each_stream_its_own_way(tmp_path):
    """A synchronous thread's stream (no overlap) closed, a depth-4 io_uring thread's open, in one
    replay: every IO of both completes once."""
    sync = _run_records(1, {}, runtime="2ms")
    deep = simulate(
        resolve_run(sets={"runtime": "2ms", "ramp_time": "0", "ioengine": "io_uring", "iodepth": 4}), records=True
    ).records
    deep["thread"] = 7
    deep["offset"] += 2**40  # (another region: blkparse pairs events by sector)
    path = tmp_path / "two.blkparse"
    write_records(str(path), np.concatenate([sync, deep]), "blkparse")
    v = validate_trace(str(path))
    r = v["replay"]
    assert r["mode"] == "mixed" and "closed for 1 stream ('1000')" in r["mode_reason"]
    assert r["trace_ios"] == r["completed_ios"] == len(sync) + len(deep)
    assert r["think"] is not None and r["threads"] == 1 + 8  # the closed thread, one open submitter per CPU
    res = simulate(resolve_replay(str(path), "blkparse", mode="auto"))
    assert res["replay"]["mode"] == "mixed" and res["summary"]["completed_ios"] == len(sync) + len(deep)


def test_idle_gaps_of_a_bursty_trace_cost_a_few_events(tmp_path):
    """The benchmark's MSR-style trace (benchmarks/bench_hot_path.py): bursts with 2 s or 200 s of idle
    between them replay with about the same number of events (an idle CPU stops its tick: a gap costs
    a bounded number of events, not work per tick)."""
    spec = importlib.util.spec_from_file_location(
        "bench_hot_path", Path(__file__).resolve().parents[1] / "benchmarks/bench_hot_path.py"
    )
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    events = {}
    for gap in (2.0, 200.0):
        path = tmp_path / f"gap{gap}.csv"
        n = bench.idle_gaps_trace(str(path), 3, per_burst=100, gap_s=gap)
        res = simulate(resolve_replay(str(path), "msr"))
        assert res["summary"]["completed_ios"] == n == 300
        events[gap] = res["sim"]["events"]
    # 100x the idle time: less than 10% more events (2 gaps x 8 CPUs; per tick it would be ~400,000 more)
    assert events[200.0] < 1.1 * events[2.0], events
