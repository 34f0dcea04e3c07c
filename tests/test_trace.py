"""--trace: Chrome trace-event output (Perfetto): schema, bounds, per-track ordering, flows."""

import json
from collections import defaultdict

import pytest

from stacksim.cli import main


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    out = tmp_path_factory.mktemp("tr") / "t.json"
    assert main(["run", "--scenario", "hybrid8", "--set", "runtime=20ms", "--set", "ramp_time=110ms", "--quiet",
                 "--trace", str(out), "--trace-window", "110:111", "--trace-ios", "50"]) == 0
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
    assert {"poll", "hard IRQ (timer)" } & names or any(n.startswith("hard IRQ") for n in names)
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
