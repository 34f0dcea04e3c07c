"""Oddities are said on the terminal, never only in the JSON or not at all (#31, class 5): a run
that measures no IO, a trace whose time runs backwards, a blkparse completion before its IO,
scipy's precision warnings, a plug-in that exits while loading."""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import pytest

from scenarios.data import TRACES_DIR
from scenarios.studies.sweeps.efficiency import welch_p
from stacksim import cli


def run(args, capsys):
    rc = cli.main(args)
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_a_run_without_measured_io_reports_nulls_and_says_so(tmp_path, capsys):
    out_json = tmp_path / "r.json"
    sets = ["--set", "runtime=3ms", "--set", "ramp_time=5ms", "--set", "rate_iops=1"]
    rc, out, err = run(["run", *sets, "--json", str(out_json)], capsys)
    assert rc == 0
    assert "no IO completed in the measured window" in err and "latency us: mean n/a" in out
    s = json.loads(out_json.read_text())["summary"]
    assert s["ios"] == 0 and set(s["latency_us"].values()) == {None}
    assert s["energy_j_per_million_ios"] is None and s["context_switches_per_io"] is None
    assert s["layers_ns_per_io"] is None and s["per_job"][0]["latency_us"]["mean"] is None
    assert s["energy_j"] > 0  # the machine still drew power


def test_a_measured_run_has_no_such_warning(capsys):
    rc, _, err = run(["run", "--set", "runtime=2ms", "--set", "ramp_time=0"], capsys)
    assert rc == 0 and "warning" not in err


def test_a_trace_running_backwards_is_said(tmp_path, capsys):
    lines = (TRACES_DIR / "msr_sample.csv").read_text().splitlines()[:40]
    t0 = int(lines[0].split(",")[0])
    lines.insert(5, f"{t0 + 10},hm,0,Read,8192,4096,500")  # earlier than the record before it
    trace = tmp_path / "back.csv"
    trace.write_text("\n".join(lines) + "\n")
    rc, _, err = run(["replay", str(trace), "--quiet"], capsys)
    assert rc == 0 and "1 of the trace's 41 records are earlier than the record before them" in err


BLK = """   259,0  1        1     0.001000000  4242  Q   R 46460568 + 8 [fio]
   259,0  1        2     0.001002689  4242  D   R 46460568 + 8 [fio]
   259,0  1        3     0.000914176     0  C   R 46460568 + 8 [0]
"""


def test_a_completion_before_its_io_is_a_bad_line_not_a_negative_latency(tmp_path, capsys):
    good = (TRACES_DIR / "blkparse_qdc_sample.txt").read_text().splitlines(keepends=True)[3:60]
    trace = tmp_path / "cq.txt"
    trace.write_text(BLK + "".join(good))
    rc, _, err = run(["validate", "--trace", str(trace), "--platform", "optane900p-e3-1230v5"], capsys)
    assert rc == 2 and "cq.txt:3: blkparse: C event at 914176 ns is before its D (line 1)" in err
    rc, out, err = run(
        ["validate", "--trace", str(trace), "--platform", "optane900p-e3-1230v5", "--skip-bad-lines"], capsys
    )
    assert rc == 0 and "1 bad lines skipped" in out + err


def test_nearly_identical_replicates_raise_no_scipy_warning():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert welch_p([1e9, 1e9 + 1e-7, 1e9], [1e9, 1e9, 1e9 + 2e-7]) == 1.0
        assert welch_p([5.0, 5.0 + 1e-12], [6.0, 6.0]) == 0.0
        assert 0 < welch_p([1.0, 2.0, 3.0], [4.0, 5.0, 6.0]) < 0.05


@pytest.mark.parametrize("code", [0, 3, None])
def test_a_plugin_that_exits_while_loading_is_bad_input(tmp_path, monkeypatch, capsys, code):
    monkeypatch.chdir(tmp_path)
    Path("quits.py").write_text(f"import sys\nsys.exit({code!r})\n")
    rc, out, err = run(["run", "--plugin", "quits.py", "--set", "runtime=1ms"], capsys)
    assert rc == 2 and f"plug-in quits.py called sys.exit({code!r}) while loading" in err and out == ""
    assert not any("quits" in m for m in sys.modules)


def test_explain_says_which_policy_it_simulates(capsys):
    rc, out, err = run(["explain", "--runtime-ms", "2", "--progress", "--policies", "interrupt,classic"], capsys)
    assert rc == 0 and "explain: simulating interrupt (1 of 2)" in err and "(2 of 2)" in err
    rc, out, err = run(["explain", "--runtime-ms", "2", "--policies", "interrupt"], capsys)
    assert rc == 0 and "simulating" not in err  # not a terminal, not asked


def test_a_replay_slowed_beyond_the_clock_is_refused_before_it_runs(capsys):
    rc, _, err = run(["replay", str(TRACES_DIR / "msr_sample.csv"), "--speed", "1e-12", "--quiet"], capsys)
    assert rc == 2 and "beyond 2**53 ns" in err and "raise the speed" in err
