"""The progress line of long runs: shown on request or on a terminal, never changes results."""

import io
import json
from pathlib import Path

import simcore.engine
from scenarios.config.host import resolve
from scenarios.run.simulate import simulate
from simcore.engine import PROGRESS_EVERY_EVENTS, Engine
from simcore.progress import RunProgress, progress_enabled
from stacksim.cli import main

ROOT = Path(__file__).resolve().parents[1]
SHORT = {"runtime": "20ms", "ramp_time": "2ms"}


def _comparable(result):
    result = dict(result)
    result["sim"] = {k: v for k, v in result["sim"].items() if k in ("simulated_s", "events", "measured_s")}
    return json.dumps(result, sort_keys=True)


def test_progress_does_not_change_results(capsys, monkeypatch):
    monkeypatch.setattr(simcore.engine, "PROGRESS_EVERY_EVENTS", 64)  # many hook calls in a short run
    for sets in (SHORT, {**SHORT, "ioengine": "io_uring", "iodepth": "4"}):
        cfg = resolve(sets=sets)
        plain = simulate(cfg)
        shown = simulate(cfg, progress=True)
        err = capsys.readouterr().err
        assert "simulating:" in err and "sim s/s" in err
        assert _comparable(plain) == _comparable(shown)


def test_engine_calls_the_hook_every_n_events_and_counts_no_extra_events():
    def run(hook):
        eng = Engine()
        for i in range(3 * PROGRESS_EVERY_EVENTS + 5):
            eng.call_at(float(i + 1), lambda: None)
        eng.progress_hook = hook
        eng.run(1e9)
        return eng.events_processed

    seen = []
    assert run(seen.append) == run(None) == 3 * PROGRESS_EVERY_EVENTS + 5
    assert seen == [float(k * PROGRESS_EVERY_EVENTS) for k in (1, 2, 3)]  # the simulated time at each call


def test_progress_text_elapsed_simulated_eta_speed():
    p = RunProgress(end_ns=2e9, ios=lambda: 50_000, enabled=True, stream=io.StringIO())
    text = p.text(now_ns=0.5e9, wall_s=10.0)
    assert "0:10 elapsed" in text and "simulated 0.500 s of 2.000 s (25%)" in text
    assert "ETA 0:30" in text and "0.05 sim s/s" in text and "5,000 IOs/s" in text
    unknown_end = RunProgress(enabled=True, stream=io.StringIO()).text(now_ns=1e9, wall_s=2.0)
    assert "ETA" not in unknown_end and "simulated 1.000 s" in unknown_end


def test_line_is_throttled_and_erased():
    out = io.StringIO()
    p = RunProgress(end_ns=1e9, enabled=True, stream=out, min_interval_s=3600)
    for t in (1e8, 2e8, 3e8):
        p(t)
    assert p.lines == 1  # at most one redraw per min_interval_s of wall time
    p.close()
    assert out.getvalue().endswith("\r")
    silent = io.StringIO()
    q = RunProgress(enabled=False, stream=silent)
    q(1e8)
    q.close()
    assert silent.getvalue() == ""


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_enabled_rule():
    assert progress_enabled(None, stream=_Tty()) is True
    assert progress_enabled(None, quiet=True, stream=_Tty()) is False
    assert progress_enabled(None, stream=io.StringIO()) is False  # not a terminal
    assert progress_enabled(True, quiet=True, stream=io.StringIO()) is True  # --progress forces it
    assert progress_enabled(False, stream=_Tty()) is False


def test_cli_flags(capsys, monkeypatch):
    monkeypatch.setattr(simcore.engine, "PROGRESS_EVERY_EVENTS", 64)
    args = ["run", "--set", "runtime=20ms", "--set", "ramp_time=2ms"]
    assert main([*args, "--quiet"]) == 0
    assert "simulating" not in capsys.readouterr().err  # stderr is not a terminal here
    assert main([*args, "--quiet", "--progress"]) == 0
    assert "simulating:" in capsys.readouterr().err
    assert main([*args, "--no-progress"]) == 0
    assert "simulating" not in capsys.readouterr().err


def test_replay_progress(capsys, monkeypatch):
    monkeypatch.setattr(simcore.engine, "PROGRESS_EVERY_EVENTS", 64)
    trace = str(ROOT / "scenarios/data/traces/msr_sample.csv")
    assert main(["replay", trace, "--platform", "optane900p-e3-1230v5", "--progress", "--quiet"]) == 0
    assert "replaying:" in capsys.readouterr().err
