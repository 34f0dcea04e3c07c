"""--trace: Chrome trace-event output (Perfetto): schema, bounds, per-track ordering, flows."""

import json
from collections import defaultdict

import pytest

from stacksim.cli import main


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    out = tmp_path_factory.mktemp("tr") / "t.json"
    assert (
        main(
            [
                "run",
                "--scenario",
                "hybrid8",
                "--set",
                "runtime=20ms",
                "--set",
                "ramp_time=110ms",
                "--quiet",
                "--trace",
                str(out),
                "--trace-window",
                "110:111",
                "--trace-ios",
                "50",
            ]
        )
        == 0
    )
    return json.loads(out.read_text())


def test_trace_events_have_required_fields(trace):
    assert trace["displayTimeUnit"] == "ns"
    for ev in trace["traceEvents"]:
        assert {"ph", "pid", "name"} <= set(ev)
        if ev["ph"] != "M":
            assert "ts" in ev and "tid" in ev
        if ev["ph"] == "X":
            assert ev["dur"] >= 0


def test_timestamps_monotonic_per_track_and_bounded(trace):
    last = defaultdict(lambda: -1.0)
    for ev in trace["traceEvents"]:
        if ev["ph"] in ("X", "C"):
            key = (ev["pid"], ev["tid"])
            assert ev["ts"] >= last[key]
            last[key] = ev["ts"]
            if ev["ph"] == "X" and ev["pid"] == 1:
                assert ev["ts"] + ev["dur"] >= 110_000 - 1e-6 and ev["ts"] <= 111_000 + 1e-6


def test_tracks_and_flows(trace):
    evs = trace["traceEvents"]
    names = {e["name"] for e in evs if e["ph"] == "X" and e["pid"] == 1}
    assert {"poll", "hard IRQ (timer)"} & names or any(n.startswith("hard IRQ") for n in names)
    assert any(n.startswith("randread") for n in names)  # the running task
    assert {"syscall", "fs", "block", "driver", "scheduler"} <= names
    assert any(e["ph"] == "X" and e["pid"] == 2 for e in evs)  # device queue tracks
    assert any(e["ph"] == "C" for e in evs)  # power counter
    flows = defaultdict(set)
    for e in evs:
        if e["ph"] in "stf":
            flows[e["id"]].add(e["ph"])
    assert flows and all(v == {"s", "t", "f"} for v in flows.values())
    assert len(flows) <= 50


def test_bad_trace_window_is_an_error(capsys, tmp_path):
    rc = main(["run", "--set", "runtime=5ms", "--trace", str(tmp_path / "x.json"), "--trace-window", "5:1"])
    assert rc == 2 and "END must be after START" in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists()


# -- the storage-server model -------------------------------------------------------------------
@pytest.fixture(scope="module")
def server_trace(tmp_path_factory):
    out = tmp_path_factory.mktemp("srv") / "s.json"
    assert (
        main(
            [
                "run",
                "--scenario",
                "server-burst",
                "--set",
                "server.policy=sandman",
                "--set",
                "workload.time_scale=0.01",
                "--quiet",
                "--trace",
                str(out),
                "--trace-window",
                "99.5:101",
                "--trace-ios",
                "300",
            ]
        )
        == 0
    )
    return json.loads(out.read_text())


def test_server_trace_shows_work_power_states_devices_and_flows(server_trace):
    evs = server_trace["traceEvents"]
    work = [e for e in evs if e["ph"] == "X" and e.get("cat") == "work"]
    assert work and {e["name"].split(": ")[1] for e in work} == {"receive", "complete"}
    states = {e["name"] for e in evs if e["ph"] == "X" and e.get("cat") == "power state"}
    assert "C0 polling" in states and states & {"C1", "C6", "C2"}  # polling reactors and sleeping cores
    assert any(e["ph"] == "X" and e["pid"] == 2 for e in evs)  # device queue tracks
    assert any(e["ph"] == "C" for e in evs)  # package power counter
    assert any(e["ph"] == "i" and "->" in e["name"] for e in evs)  # SANDMAN moves threads at the burst (100 ms)
    flows = defaultdict(set)
    for e in evs:
        if e["ph"] in "stf":
            flows[e["id"]].add(e["ph"])
    assert flows and len(flows) <= 300 and all(v == {"s", "t", "f"} for v in flows.values())


def test_server_trace_spans_do_not_overlap_on_a_track(server_trace):
    """Work committed to a reactor is FIFO and power states follow one another: no track has
    partially overlapping spans (which Perfetto cannot draw)."""
    spans = defaultdict(list)
    for e in server_trace["traceEvents"]:
        if e["ph"] == "X" and e["pid"] == 1:
            spans[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"]))
    assert spans
    for track in spans.values():
        track.sort()
        for (a0, a1), (b0, b1) in zip(track, track[1:]):
            assert b0 >= a1 - 1e-6


def test_tracing_does_not_change_server_results():
    from scenarios.config.server import resolve_server
    from scenarios.run.simulate import simulate
    from simcore.tracing import ChromeTracer

    cfg = resolve_server("server-burst", {"server.policy": "sandman", "workload.time_scale": "0.01"})
    plain = simulate(cfg)
    traced = simulate(cfg, tracer=ChromeTracer(99.5e6, 101e6, max_ios=300))
    assert traced.trace.events
    assert {k: v for k, v in plain.items() if k != "sim"} == {k: v for k, v in traced.items() if k != "sim"}
