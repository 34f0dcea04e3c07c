"""Open-loop trace replay: every IO of the trace completes exactly once, the speed factor and the
window select and scale the right IOs, submission follows the trace and not the completions, the
trace is read lazily, and bad lines are errors with file:line (exit 2) or counted when skipped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from models.ioengines.replay import ReplaySettings, TraceReplayer
from scenarios.data.traces import make_samples
from scenarios.inputs.traces import map_volumes, open_trace, parse_window, select
from scenarios.run.assembly import build_host
from scenarios.run.replay import replay_job, resolve_replay
from scenarios.run.simulate import simulate
from simcore.errors import ConfigError
from stacksim import cli_traces

SAMPLES = Path(make_samples.__file__).parent
MSR = SAMPLES / "msr_sample.csv"
ALIBABA = SAMPLES / "alibaba_sample.csv"
PLAT = "optane900p-e3-1230v5"
N_SAMPLE = make_samples.N_IOS


def simulate_replay(trace, fmt=None, **kw):
    """Resolve and run a replay (what `stacksim replay` does)."""
    return simulate(resolve_replay(trace, fmt, **kw))


def run_cli(args, capsys):
    rc = cli_traces.main(args)
    out = capsys.readouterr()
    return rc, out.out, out.err


def alibaba_lines(times_us, size=4096, op="R", dev=7):
    return "".join(f"{dev},{op},{4096 * i * 3},{size},{1_600_000_000_000_000 + t}\n" for i, t in enumerate(times_us))


@pytest.mark.parametrize("trace, fmt", [(MSR, "msr"), (ALIBABA, "alibaba"), (MSR, None)])
def test_replay_conserves_every_io_of_the_samples(trace, fmt):
    r = simulate_replay(str(trace), fmt, platform=PLAT)
    s = r["summary"]
    assert s["trace_ios"] == N_SAMPLE
    assert s["completed_ios"] == N_SAMPLE
    assert s["ios"] == N_SAMPLE  # every completion inside the measured interval, counted once
    assert s["bad_lines"] == 0 and s["skipped"] == {}
    assert r["jobs"][0]["read"]["total_ios"] + r["jobs"][0]["write"]["total_ios"] == N_SAMPLE
    assert len(r["replay"]["volumes"]) == 3
    # the run lasts the trace (~0.07-0.09 s) plus the drain of the last IOs
    assert r["sim"]["simulated_s"] == pytest.approx(r["replay"]["last_due_s"], abs=0.002)


@pytest.mark.parametrize(
    "sets",
    [
        {"replay.hipri": 1, "queue.io_poll": 1, "ssd_count": 2},
        {"replay.threads": 1, "ssd_count": 3},
        {"replay.assign": "volume", "replay.threads": 2, "queue.scheduler": "mq-deadline"},
        {"replay.hipri": 1, "queue.io_poll": 1, "ssd_count": 2, "replay.threads": 3, "replay.assign": "volume"},
    ],
)
@pytest.mark.parametrize("speed", [1.0, 1000.0])
def test_conservation_across_settings_and_overload(sets, speed):
    # at 1000x the 300 IOs arrive within ~90 us: queues build up, requests merge, polling threads
    # see completions on several devices' queues
    r = simulate_replay(str(MSR), "msr", platform=PLAT, speed=speed, sets=sets)
    s = r["summary"]
    assert s["trace_ios"] == s["completed_ios"] == s["ios"] == N_SAMPLE


def test_records_complete_exactly_once_and_keep_trace_sizes():
    cfg = resolve_replay(str(ALIBABA), "alibaba", platform=PLAT, speed=100.0, sets={"ssd_count": 2})
    host = build_host(cfg.platform, cfg.queue, cfg.seed, keep_requests=True)
    recs = list(select(open_trace(ALIBABA, "alibaba")))
    rp = TraceReplayer(host, replay_job(cfg.replay), map_volumes(iter(recs), 2), cfg.replay)
    rp.start()
    host.start()
    host.engine.run(rp.done_event)
    ids = [r.id for r in host.records]
    assert len(ids) == len(set(ids)) == len(recs)
    by_size = sorted(r.nbytes for r in host.records)
    assert by_size == sorted(-(-t.nbytes // 512) * 512 for t in recs)
    assert all(r.t_submit <= r.t_dispatch <= r.t_cqe <= r.t_reaped <= r.t_complete for r in host.records)


def test_speed_factor_scales_the_arrival_times():
    base = simulate_replay(str(MSR), "msr", platform=PLAT)
    fast = simulate_replay(str(MSR), "msr", platform=PLAT, speed=4.0)
    assert fast["summary"]["trace_ios"] == base["summary"]["trace_ios"]
    assert fast["replay"]["last_due_s"] == pytest.approx(base["replay"]["last_due_s"] / 4, rel=1e-6)
    assert fast["summary"]["iops"] > 3 * base["summary"]["iops"]


def test_window_selects_on_original_times_then_rebases_and_scales():
    start, end = 0.01, 0.03
    expected = [t for t in open_trace(MSR, "msr") if start * 1e9 <= t.t_ns < end * 1e9]
    r = simulate_replay(str(MSR), "msr", platform=PLAT, window=f"{start}:{end}", speed=2.0)
    s = r["summary"]
    assert s["trace_ios"] == s["completed_ios"] == len(expected) > 0
    assert s["skipped"]["before window"] + s["skipped"]["after window"] == N_SAMPLE - len(expected)
    assert r["replay"]["last_due_s"] == pytest.approx((expected[-1].t_ns / 1e9 - start) / 2, abs=1e-9)
    # open-ended windows
    assert simulate_replay(str(MSR), "msr", platform=PLAT, window=(0.05, None))["summary"]["trace_ios"] == sum(
        1 for t in open_trace(MSR, "msr") if t.t_ns >= 0.05e9
    )


def test_volume_selection():
    n = sum(1 for t in open_trace(MSR, "msr") if t.volume == "hm_1")
    r = simulate_replay(str(MSR), "msr", platform=PLAT, volumes="hm_1")
    assert r["summary"]["trace_ios"] == r["summary"]["completed_ios"] == n
    assert r["summary"]["skipped"]["volume"] == N_SAMPLE - n
    assert list(r["replay"]["volumes"]) == ["hm_1"]


def test_open_loop_issues_at_trace_times_whatever_the_completions(tmp_path):
    # 50 reads 1 us apart on a device that takes 200 us each (and serves 64 at once): two closed-loop
    # threads would need 5 ms
    trace = tmp_path / "burst.csv"
    trace.write_text(alibaba_lines(range(50)))
    r = simulate_replay(
        str(trace),
        "alibaba",
        platform=PLAT,
        sets={"ssd.read.base_ns": 200_000, "ssd.parallel_units": 64, "replay.threads": 2},
    )
    s = r["summary"]
    assert s["trace_ios"] == s["completed_ios"] == 50
    assert r["replay"]["issue_lag_us"]["max"] < 20  # submitted on time, not after earlier completions
    assert r["sim"]["simulated_s"] < 0.0005
    assert s["latency_us"]["mean"] > 200


def test_ios_due_together_share_one_submission(tmp_path):
    together = tmp_path / "together.csv"
    together.write_text(alibaba_lines([0] * 8 + [500] * 8))
    apart = tmp_path / "apart.csv"
    apart.write_text(alibaba_lines([i * 60 for i in range(16)]))
    sets = {"replay.threads": 1}
    a = simulate_replay(str(together), "alibaba", platform=PLAT, sets=sets)["summary"]
    b = simulate_replay(str(apart), "alibaba", platform=PLAT, sets=sets)["summary"]
    assert a["completed_ios"] == b["completed_ios"] == 16
    # 2 io_uring_enter calls for 16 IOs instead of 16: much less syscall entry/exit per IO
    assert a["layers"]["syscall"] < 0.5 * b["layers"]["syscall"]


def test_trace_is_read_lazily():
    """At any simulated time, at most `lookahead` batches beyond the due ones have been read."""
    cfg = resolve_replay(str(MSR), "msr", platform=PLAT, sets={"replay.threads": 2})
    host = build_host(cfg.platform, cfg.queue, cfg.seed, keep_requests=True)
    recs = list(select(open_trace(MSR, "msr")))
    pulls = []

    def lazy():
        for i, rec in enumerate(recs):
            pulls.append((host.engine.now, i))
            yield rec, 0

    rp = TraceReplayer(host, replay_job(cfg.replay), lazy(), cfg.replay)
    rp.start()
    host.start()
    host.engine.run(rp.done_event)
    assert rp.completed == len(recs)
    for now, i in pulls:
        # due by the submitting CPU's clock: the engine time plus its carried work, which includes
        # the exit latency of the C-state its timer woke it from (up to ~0.2 ms)
        due = sum(1 for r in recs if r.t_ns <= now + 250_000)
        # record i is pulled to assign one of `lookahead` batches (or peeked to close a batch)
        assert i + 1 <= due + rp.lookahead + 1
    assert pulls[-1][0] > 0.08e9  # the last records are read near the end of the 0.09 s trace


def test_polling_replay_uses_classic_polling_and_is_faster():
    irq = simulate_replay(str(MSR), "msr", platform=PLAT)["summary"]
    poll = simulate_replay(str(MSR), "msr", platform=PLAT, sets={"hipri": 1, "queue.io_poll": 1})["summary"]
    assert "classic-poll" in poll["completion_policies"]
    assert poll["interrupts"].get("nvme", 0) == 0
    assert poll["latency_us"]["mean"] < irq["latency_us"]["mean"]


def test_malformed_line_is_an_error_with_file_and_line(tmp_path, capsys):
    bad = tmp_path / "bad.csv"
    lines = MSR.read_text().splitlines()[:5]
    lines[2] = lines[2].replace("Write", "Wrte").replace("Read", "Raed")
    bad.write_text("\n".join(lines) + "\n")
    out = tmp_path / "r.json"
    rc, _, err = run_cli(["replay", str(bad), "--format", "msr", "--platform", PLAT, "--json", str(out)], capsys)
    assert rc == 2
    assert f"{bad}:3:" in err and "Traceback" not in err
    assert not out.exists()
    rc, stdout, err = run_cli(
        ["replay", str(bad), "--format", "msr", "--platform", PLAT, "--skip-bad-lines", "--json", str(out)], capsys
    )
    assert rc == 0, err
    res = json.loads(out.read_text())
    assert res["summary"]["bad_lines"] == 1
    assert res["summary"]["trace_ios"] == res["summary"]["completed_ios"] == 4
    assert "1 bad lines skipped" in stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["--platform", "nope"], "unknown platform 'nope'"),
        (["--platform", PLAT, "--window", "3:1"], "end must be after start"),
        (["--platform", PLAT, "--window", "abc"], "expected START:END"),
        (["--platform", PLAT, "--speed", "0"], "speed"),
        (["--platform", PLAT, "--set", "replay.hipri=1"], "set queue.io_poll=1"),
        (["--platform", PLAT, "--set", "bs=8k"], "a replay has no fio job"),
        (["--platform", PLAT, "--set", "replay.thread=2"], "unknown replay setting"),
        (["--platform", PLAT, "--window", "100:"], "no read/write IO in the window"),
        (["--platform", PLAT, "--json", "/nonexistent/dir/r.json"], "directory /nonexistent/dir does not exist"),
    ],
)
def test_bad_replay_input_exit_2(args, message, capsys):
    rc, _, err = run_cli(["replay", str(MSR), *args], capsys)
    assert rc == 2
    assert message in err and "Traceback" not in err


def test_cli_replay_json_has_the_run_summary_plus_trace_counts(tmp_path, capsys):
    out = tmp_path / "r.json"
    rc, stdout, err = run_cli(
        ["replay", str(ALIBABA), "--platform", PLAT, "--speed", "2", "--window", ":0.05", "--json", str(out)], capsys
    )
    assert rc == 0, err
    res = json.loads(out.read_text())
    s = res["summary"]
    for key in (
        "iops",
        "latency_us",
        "cpu_utilization",
        "power_w",
        "energy_j",
        "layers",
        "trace_ios",
        "completed_ios",
        "bad_lines",
        "skipped",
    ):
        assert key in s
    assert s["trace_ios"] == s["completed_ios"] > 0
    assert "IOs in the window" in stdout and "IOPS" in stdout


def test_other_formats_replay(tmp_path):
    tencent = tmp_path / "t.csv"
    tencent.write_text("1538323200,2048,8,0,1063\n1538323200,4096,16,1,1063\n1538323201,0,8,1,7\n")
    iolog = tmp_path / "x.iolog"
    iolog.write_text(
        "fio version 3 iolog\n0 /dev/nvme0n1 read 0 4096\n0.5 /dev/nvme0n1 write 4096 8192\n"
        "0.5 /dev/nvme0n1 read 8192 4096\n"
    )
    blk = tmp_path / "b.txt"
    blk.write_text(
        "  8,32   7        1     0.000000000  2923  Q   R 272208 + 2 [fio]\n"
        "  8,32   7        2     0.000002000  2923  D   R 272208 + 2 [fio]\n"
        "  8,32   7        3     0.000010000  2923  Q  WS 1000 + 8 [fio]\n"
    )
    for path, fmt, n in ((tencent, "tencent", 3), (iolog, "iolog", 3), (blk, "blkparse", 2)):
        s = simulate_replay(str(path), fmt, platform=PLAT)["summary"]
        assert s["trace_ios"] == s["completed_ios"] == n, fmt
    s = simulate_replay(str(blk), "blkparse", platform=PLAT, skip_bad_lines=False)["summary"]
    assert s["skipped"] == {"action D": 1}


def test_parse_window():
    assert parse_window("1.5:2") == (1.5, 2.0)
    assert parse_window(":2") == (None, 2.0)
    assert parse_window("1:") == (1.0, None)
    assert parse_window(None) == (None, None)
    with pytest.raises(ConfigError):
        parse_window("-1:2")


def test_replay_settings_are_validated():
    with pytest.raises(ConfigError, match="threads"):
        resolve_replay(str(MSR), "msr", platform=PLAT, sets={"replay.threads": 0})
    with pytest.raises(ConfigError, match="assign"):
        resolve_replay(str(MSR), "msr", platform=PLAT, sets={"replay.assign": "random"})
    assert ReplaySettings().threads is None


def test_replay_summary_names_scheduler_and_plugins_as_run_does(tmp_path, monkeypatch, capsys):
    """The replay's first line says what `stacksim run`'s does: completion policies, the devices'
    IO scheduler and the plug-ins loaded (here one that registers nothing)."""
    import sys

    from stacksim.output import format_summary

    (tmp_path / "replay_names_plug.py").write_text("# a plug-in that registers nothing\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "stacksim_plugin_replay_names_plug", raising=False)
    args = ["replay", str(MSR), "--platform", PLAT, "--set", "queue.scheduler=mq-deadline"]
    rc, out, err = run_cli([*args, "--plugin", "replay_names_plug.py", "--json", "r.json"], capsys)
    sys.modules.pop("stacksim_plugin_replay_names_plug", None)
    assert rc == 0, err
    first = out.splitlines()[0]
    assert first.endswith("(seed 1, policies: interrupt, IO scheduler mq-deadline; plug-ins: replay_names_plug.py)")
    # the same words as a run's summary of the same result
    result = json.loads((tmp_path / "r.json").read_text())
    run_line = format_summary(result, io_scheduler="mq-deadline", plugins=("replay_names_plug.py",)).splitlines()[0]
    assert first == run_line
    rc, out, err = run_cli(args[:4], capsys)
    assert rc == 0 and out.splitlines()[0].endswith("(seed 1, policies: interrupt, IO scheduler none)"), err
