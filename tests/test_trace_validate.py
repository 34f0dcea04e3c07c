"""``stacksim validate --trace`` and ``stacksim calibrate --trace``: timed trace readers, the IO-by-IO
comparison, the per-class breakdown, the device calibration against a known model, the HTML report
in a browser, and the refusals (scenarios/studies/trace_compare.py, trace_calibrate.py, trace_report.py,
scenarios/inputs/traces/timed.py)."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import numpy as np
import pytest

from scenarios.data.traces import make_timed_sample as mts
from scenarios.inputs.traces.timed import ORPHAN_NS, TimedIO, open_timed
from scenarios.studies.trace_calibrate import MIN_IOS, _check_identifiable, _scan, calibrate_trace
from scenarios.studies.trace_compare import TraceComparison, size_class, validate_trace
from stacksim import cli
from tests.browser import assert_plots_render

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "scenarios/data/traces/blkparse_qdc_sample.txt"
TRUE = {**mts.DEVICE_SETS, **mts.REPLAY_SETS}  # the model that made the sample
POLLED = ["--set", "replay.hipri=1", "--set", "queue.io_poll=1"]


@pytest.fixture(scope="module")
def exact():
    """validate --trace of the sample on the model that generated it."""
    return validate_trace(str(SAMPLE), sets=TRUE)


@pytest.fixture(scope="module")
def stock():
    """... on the stock platform (its device is faster than the sample's)."""
    return validate_trace(str(SAMPLE), sets=mts.REPLAY_SETS)


def _stats(v):
    for c in v["classes"] + [v["all"]]:
        for stage in ("latency", "q2d", "d2c"):
            yield c["class"], stage, c[stage]


# -- the sample and the readers -------------------------------------------------------------------------------
def test_sample_is_regenerated_byte_for_byte(tmp_path):
    out = tmp_path / "s.txt"
    assert mts.main([str(out)]) == 0
    assert out.read_bytes() == SAMPLE.read_bytes()


def test_blkparse_pairing_reorders_merges_and_orphans(tmp_path):
    lines = [
        "  8,0  0  1  0.000001000  10  Q   R 100 + 8 [fio]",
        "  8,0  0  2  0.000002000  10  Q   W 200 + 8 [fio]",
        "  8,0  0  3  0.000002500  10  Q   W 208 + 8 [fio]",
        "  8,0  0  4  0.000002600  10  M   W 208 + 8 [fio]",  # merged into 200: completes with it
        "  8,0  0  5  0.000003000  10  D   W 200 + 16 [fio]",
        "  8,0  0  6  0.000004000  10  D   R 100 + 8 [fio]",
        "  8,0  0  7  0.000010000   0  C   W 200 + 16 [0]",  # completes first, arrived second
        "  8,0  0  8  0.000030000   0  C   R 100 + 8 [0]",
        "  8,0  0  9  0.000031000  10  Q   R 900 + 8 [fio]",  # never completes: an orphan
        "  8,0  0 10  0.000040000   0  C   R 555 + 8 [0]",  # C of nothing
        "  8,0  0 11  0.000040000  10  P   N [fio]",  # other action
        f"  8,0  0 12  {(ORPHAN_NS + 50_000) / 1e9:.9f}  10  Q   R 300 + 8 [fio]",
        f"  8,0  0 13  {(ORPHAN_NS + 60_000) / 1e9:.9f}   0  C   R 300 + 8 [0]",
    ]
    path = tmp_path / "t.blk"
    path.write_text("\n".join(lines) + "\n")
    reader = open_timed(path)
    got = list(reader)
    assert reader.format == "blkparse"
    assert [(t.io.t_ns, t.io.op, t.io.offset, t.io.nbytes) for t in got] == [
        (0, "read", 100 * 512, 4096),
        (1000, "write", 200 * 512, 8192),
        (ORPHAN_NS + 49_000, "read", 300 * 512, 4096),
    ]
    assert [(t.lat_ns, t.q2d_ns, t.d2c_ns) for t in got[:2]] == [
        (29_000.0, 3_000.0, 26_000.0),
        (8_000.0, 1_000.0, 7_000.0),
    ]
    assert got[2].q2d_ns is None and got[2].lat_ns == 10_000.0  # Q/C only
    assert reader.skipped == {"merged bio": 1, "no completion": 1, "C without Q or D": 1, "action P": 1}


@pytest.mark.parametrize("issue_time", [True, False])
def test_fio_latency_log_reader(tmp_path, issue_time):
    rows = [
        {"io": mts.TraceIO(t, op, off, n, "fio", i), "lat": lat}
        for i, (t, op, off, n, lat) in enumerate(
            [
                (5_000_000, "read", 4096, 4096, 20_000),
                (5_010_000, "write", 0, 16384, 2_500_000),
                (9_000_000, "read", 8192, 4096, 30_000),
            ]
        )
    ]
    path = tmp_path / "job_lat.1.log"
    path.write_text("\n".join(mts.fio_lat_log_lines(rows, issue_time=issue_time)) + "\n2, 10, 2, 4096, 0, 0\n")
    reader = open_timed(path)
    got = list(reader)
    assert reader.format == "fiolog" and reader.skipped == {"trim": 1}
    truth = {20e3: ("read", 4096, 0), 2.5e6: ("write", 16384, 10_000), 30e3: ("read", 4096, 4_000_000)}
    assert sorted(t.lat_ns for t in got) == sorted(truth)
    assert all((t.io.op, t.io.nbytes) == truth[t.lat_ns][:2] for t in got)
    times = [t.io.t_ns for t in got]
    if issue_time:
        assert times == [0, 10_000, 4_000_000] and not reader.approx_arrivals
    else:  # completion ms - latency: arrivals to fio's 1 ms (relative to the first), in arrival order
        assert times == sorted(times) and reader.approx_arrivals
        first = min(truth[t.lat_ns][2] for t in got if t.io.t_ns == 0)
        assert all(abs(t.io.t_ns - (truth[t.lat_ns][2] - first)) < 1_000_000 for t in got)


def test_bad_lines_are_errors_or_counted(tmp_path, capsys):
    text = SAMPLE.read_text().splitlines()
    text.insert(3, "  259,0  1  x  garbage")
    path = tmp_path / "bad.txt"
    path.write_text("\n".join(text) + "\n")
    assert cli.main(["validate", "--trace", str(path), "--format", "blkparse", *POLLED]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"stacksim: error: {path}:4: blkparse: not a blkparse event line")
    reader = open_timed(path, "blkparse", skip_bad_lines=True)
    assert sum(1 for _ in reader) == 1000 and reader.bad_lines == 1


def test_traces_without_usable_timing_are_refused(tmp_path, capsys):
    nooff = tmp_path / "nooff_lat.1.log"
    nooff.write_text("1, 20000, 0, 4096\n2, 20000, 0, 4096\n")
    for extra in ([], ["--skip-bad-lines"], ["--format", "fiolog", "--skip-bad-lines"]):
        assert cli.main(["validate", "--trace", str(nooff), *extra]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and f"{nooff}:1: fiolog:" in err[0] and "without log_offset=1" in err[0], err
    alibaba = ROOT / "scenarios/data/traces/alibaba_sample.csv"
    assert cli.main(["validate", "--trace", str(alibaba)]) == 2
    assert "a trace without per-IO timing cannot be validated IO by IO" in capsys.readouterr().err


def test_reader_memory_is_bounded_by_the_ios_in_flight(tmp_path):
    """30k IOs of blkparse text stream through the reader within a small, fixed amount of memory."""
    path = tmp_path / "big.blk"
    with open(path, "w") as f:
        for i in range(30_000):
            t = i * 10_000
            for dt, a in ((0, "Q"), (1_000, "D"), (8_000, "C")):
                f.write(f"  8,0  0 {3 * i} {(t + dt) // 10**9}.{(t + dt) % 10**9:09d} 1  {a}   R {8 * i} + 8 [x]\n")
    reader = open_timed(path, "blkparse")
    tracemalloc.start()
    n = sum(1 for _ in reader)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert n == 30_000 and reader.out_of_order == 0
    assert peak < 1_000_000, peak  # the whole trace as TimedIOs would take > 9 MB


def test_validate_memory_does_not_grow_with_the_trace(tmp_path, monkeypatch):
    """Replayed requests are not kept, and the per-IO lists the models keep are emptied: with a
    small sample cap, 4x more IOs take no more memory (keeping each request would take ~1 KB/IO)."""
    import scenarios.studies.trace_compare as tc

    monkeypatch.setattr(tc, "SAMPLE_CAP", 200)
    monkeypatch.setattr(tc, "_TRIM", 500)
    peaks = []
    for n in (300, 1500, 6000):  # the first run imports and warms caches
        path = tmp_path / f"t{n}.blk"
        path.write_text("\n".join(mts.blkparse_lines(mts.simulate_ios(mts.synth_ios(n, 20_000.0, 9)))) + "\n")
        tracemalloc.start()
        v = validate_trace(str(path), sets=mts.REPLAY_SETS, keep_samples=10)
        peaks.append(tracemalloc.get_traced_memory()[1])
        tracemalloc.stop()
        assert v["all"]["ios"] == n and v["all"]["sampled_ios"] == 200
    assert peaks[2] - peaks[1] < 100 * 4500, peaks


def test_comparison_keeps_a_bounded_sample(tmp_path):
    comp = TraceComparison(False, cap=50)

    class Req:
        t_submit, t_complete = 0.0, 10_000.0

    for i in range(5000):
        comp.consume(TimedIO(mts.TraceIO(i * 1000, "read", 0, 4096, "v", i), 10_000.0), Req())
    r = comp.result()
    assert r["all"]["ios"] == 5000 and r["all"]["sampled_ios"] == 50
    assert len(comp.classes[("read", 4096)].sample.rows) == 50
    assert r["all"]["latency"]["error_pct"]["mean"] == 0.0


# -- validate --trace -----------------------------------------------------------------------------------------
def test_trace_made_by_stacksim_validates_with_zero_error(exact):
    stats = list(_stats(exact))
    assert len(stats) == 18
    for label, stage, b in stats:
        assert all(e == 0.0 for e in b["error_pct"].values() if e is not None), (label, stage, b["error_pct"])
        assert b["ks"]["statistic"] == 0.0 and b["io_error_pct"]["mean_abs"] == 0.0, (label, stage)
    assert exact["replay"]["trace_ios"] == exact["all"]["ios"] == 1000
    assert all(b["error_pct"] == 0.0 for b in exact["over_time"]["bins"])


def test_fio_log_made_by_stacksim_validates_with_zero_error(tmp_path):
    rows = mts.simulate_ios(mts.synth_ios(300, 2000.0, 4))
    path = tmp_path / "job_lat.1.log"
    path.write_text("\n".join(mts.fio_lat_log_lines(rows)) + "\n")
    # made by the open-loop replayer (its IOs happen not to overlap, so auto would replay it closed)
    v = validate_trace(str(path), sets=TRUE, mode="open")
    assert v["replay"]["format"] == "fiolog" and v["stages"] == [] and v["all"]["ios"] == 300
    for c in v["classes"] + [v["all"]]:
        assert all(e == 0.0 for e in c["latency"]["error_pct"].values() if e is not None), c["class"]
        assert c["latency"]["ks"]["statistic"] == 0.0


def test_blkparse_without_q_events_compares_d_to_c(tmp_path):
    path = tmp_path / "dc.txt"
    path.write_text("".join(ln for ln in SAMPLE.read_text().splitlines(True) if "  Q " not in ln))
    v = validate_trace(str(path), sets=TRUE)
    assert v["stages"] == ["d2c"]
    for c in v["classes"] + [v["all"]]:
        lat, d2c = c["latency"], c["d2c"]
        assert lat["measured"] == d2c["measured"] and lat["simulated"] == d2c["simulated"]
        # replayed at the D times, ~1.4 us after the Q times the sample was made from: nearly exact
        assert abs(lat["error_pct"]["mean"]) < 2.0, c["class"]


def test_msr_response_times_are_the_measured_latency():
    path = ROOT / "scenarios/data/traces/msr_sample.csv"
    v = validate_trace(str(path))
    lines = path.read_text().splitlines()
    rt_us = np.array([int(ln.split(",")[6]) for ln in lines]) / 10.0  # 100 ns ticks
    assert v["all"]["ios"] == len(lines) == 300
    assert v["all"]["latency"]["measured"]["mean"] == pytest.approx(rt_us.mean(), rel=1e-12)
    sim = v["all"]["latency"]["simulated"]["mean"]
    assert v["all"]["latency"]["error_pct"]["mean"] == pytest.approx((sim / rt_us.mean() - 1) * 100, rel=1e-12)
    # simulated latencies are rounded to the trace's 100 ns ticks
    assert all(abs(x * 10 - round(x * 10)) < 1e-6 for s in v["samples"].values() for x in s["lat_s"])


def test_per_class_breakdown(exact, stock):
    ios = mts.synth_ios()
    want = {}
    for io in ios:
        key = f"{io.op} {size_class(io.nbytes) // 1024}k"
        want[key] = want.get(key, 0) + 1
    assert {c["class"]: c["ios"] for c in exact["classes"]} == want
    assert set(want) == {"read 4k", "read 16k", "read 64k", "write 4k", "write 16k"}
    # the class statistics are those of the trace's own records
    recs = list(open_timed(SAMPLE))
    for c in exact["classes"]:
        lat = np.array([t.lat_ns for t in recs if f"{t.io.op} {size_class(t.io.nbytes) // 1024}k" == c["class"]]) / 1e3
        assert c["latency"]["measured"]["mean"] == pytest.approx(lat.mean(), rel=1e-12)
        assert c["latency"]["measured"]["p90"] == pytest.approx(np.percentile(lat, 90), rel=1e-12)
        assert c["latency"]["measured"]["p99.9"] is None  # fewer than 1000 IOs
    # the stock device serves a 4 KiB read in 4.6 us of media time, the sample's in 12 us: D->C is
    # short by ~7.4 us (the host path is the same model), while the block layer (Q->D) stays on
    # the measurement
    from models.platforms import PLATFORMS

    ssd = PLATFORMS["optane900p-e3-1230v5"]().ssd
    for c, e in zip(stock["classes"], exact["classes"]):
        d2c = c["d2c"]["measured"]["mean"] - c["d2c"]["simulated"]["mean"]
        op = c["op"]
        base = TRUE[f"ssd.{op}.base_ns"] - getattr(ssd, op).base_ns
        per_kib = TRUE[f"ssd.{op}.per_kib_ns"] * (c["size_class_bytes"] / 1024 - 4)
        assert d2c * 1e3 == pytest.approx(base + per_kib, rel=0.12), c["class"]
        assert abs(c["q2d"]["error_pct"]["mean"]) < 2.0, c["class"]
        assert c["latency"]["ks"]["statistic"] > 0.5 and e["latency"]["ks"]["statistic"] == 0.0


def _doc_block_lines(first: str) -> list[str]:
    """The lines of the code block of docs/validate-your-hardware.md whose command line contains ``first``."""
    text = (ROOT / "docs" / "validate-your-hardware.md").read_text()
    for block in text.split("```")[1::2]:
        lines = block.strip("\n").splitlines()
        i = next((k for k, ln in enumerate(lines) if ln.startswith("$ ") and first in ln), None)
        if i is not None:
            return lines[i:]
    raise AssertionError(f"no block with {first!r}")


def test_docs_quote_the_stock_validation(stock):
    from scenarios.studies.trace_compare import format_trace_validation

    out = format_trace_validation(stock, 5).replace(str(SAMPLE), "blkparse_qdc_sample.txt").splitlines()
    quoted = [
        ln
        for ln in _doc_block_lines(
            "$ stacksim validate --trace blkparse_qdc_sample.txt --set replay.hipri=1 "
            "--set queue.io_poll=1 --max-error 5"
        )
        if not ln.startswith(("$", "...")) and ln.strip() != "1"
    ]
    assert len(quoted) >= 12
    for line in quoted:
        if line.startswith("FAIL"):
            assert any(o.startswith(line.rstrip(" .")) for o in out), line
        else:
            assert line in out, line


def test_cli_json_and_max_error_exit(tmp_path, capsys):
    out = tmp_path / "v.json"
    sets = [a for k, v in TRUE.items() for a in ("--set", f"{k}={v}")]
    assert cli.main(["validate", "--trace", str(SAMPLE), *sets, "--max-error", "0.001", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "PASS: every statistic within 0.001%" in text and "D->C (driver + device)" in text
    data = json.loads(out.read_text())
    assert data["stages"] == ["q2d", "d2c"] and "samples" not in data
    assert cli.main(["validate", "--trace", str(SAMPLE), *POLLED, "--max-error", "5"]) == 1
    assert "FAIL:" in capsys.readouterr().out


def test_trace_options_are_refused_outside_their_mode(capsys):
    assert cli.main(["validate", "--trace", str(SAMPLE), "--runtime-ms", "5"]) == 2
    assert "--runtime-ms" in capsys.readouterr().err
    assert cli.main(["validate", "--suite", "all", "--html", "x.html"]) == 2
    assert "--html applies to --trace FILE only" in capsys.readouterr().err
    assert cli.main(["calibrate", "--trace", str(SAMPLE), "--fit", "ssd.read.base_ns=1:2", "-o", "x.yaml"]) == 2
    assert "--fit" in capsys.readouterr().err


# -- calibrate --trace ----------------------------------------------------------------------------------------
def _assert_recovered(cal):
    for key, true in mts.DEVICE_SETS.items():
        lo, hi = cal.ci95[key]
        assert lo <= true <= hi, (key, true, cal.values[key], (lo, hi))
    for op in ("read", "write"):  # informative intervals, not just wide ones
        lo, hi = cal.ci95[f"ssd.{op}.base_ns"]
        assert hi - lo < 0.1 * mts.DEVICE_SETS[f"ssd.{op}.base_ns"]
    assert not cal.not_identified


def test_calibrate_recovers_the_device_that_made_the_trace(tmp_path, capsys):
    out = tmp_path / "dev.yaml"
    assert cli.main(["calibrate", "--trace", str(SAMPLE), *POLLED, "-o", str(out), "--name", "my-ssd", "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "D->C" in text and f"wrote {out}: platform my-ssd" in text
    cal = calibrate_trace(str(SAMPLE), sets=mts.REPLAY_SETS)
    assert cal.stage == "D->C" and cal.passes >= 2 and cal.converged
    _assert_recovered(cal)
    # every interval within the device's bounds (issue 46): the loosely pinned write per-KiB part's
    # covariance interval reaches below 0, its profile stops at the bound
    assert all(lo >= 0.0 for lo, _ in cal.ci95.values()) and cal.ci95["ssd.write.per_kib_ns"][0] == 0.0
    # the written platform runs, and carries the fitted device
    from scenarios.config.platform_file import load_platform

    doc_lines = _doc_block_lines("$ stacksim calibrate --trace")
    assert len(doc_lines) >= 14
    got = text.replace(str(SAMPLE), "blkparse_qdc_sample.txt").splitlines()
    for line in doc_lines[1:-1]:  # docs/validate-your-hardware.md quotes this run (but its file names)
        assert line in got, line
    assert cli.main(["validate", "--trace", str(SAMPLE), *POLLED, "--platform", str(out), "--max-error", "5"]) == 0
    after = capsys.readouterr().out.splitlines()
    for line in _doc_block_lines("--platform my-ssd.yaml --max-error 5"):
        if line.startswith(("  all", "error over time", "PASS")):
            assert line in after, line
    plat = load_platform(str(out))
    assert plat.ssd.read.base_ns == pytest.approx(cal.values["ssd.read.base_ns"], rel=1e-5)
    assert plat.queue.io_poll is False or plat.queue.io_poll == 0  # queue.* describe the measurement, not kept
    assert cli.main(["run", "--platform", str(out), "--set", "runtime=5ms", "--set", "ramp_time=0"]) == 0
    capsys.readouterr()


def test_calibrate_from_a_depth1_fio_log_without_issue_times(tmp_path):
    rows = mts.simulate_ios(mts.synth_ios(600, 2000.0, 5))
    path = tmp_path / "job_lat.1.log"
    path.write_text("\n".join(mts.fio_lat_log_lines(rows, issue_time=False)) + "\n")
    cal = calibrate_trace(str(path), sets=mts.REPLAY_SETS)
    assert cal.stage == "latency" and cal.format == "fiolog"
    for key, true in mts.DEVICE_SETS.items():
        lo, hi = cal.ci95[key]
        assert lo <= true <= hi, (key, true, cal.values[key], (lo, hi))


def test_refusals_of_unidentifiable_traces(tmp_path, capsys):
    def refused(path, needle):
        assert cli.main(["calibrate", "--trace", str(path), *POLLED, "-o", str(tmp_path / "o.yaml")]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and needle in err[0], err
        assert not (tmp_path / "o.yaml").exists()

    few = tmp_path / "few.txt"
    few.write_text("\n".join(SAMPLE.read_text().splitlines()[: 3 * (MIN_IOS - 5)]) + "\n")
    refused(few, f"too few IOs per class to calibrate: every direction x size class needs at least {MIN_IOS} IOs")
    # depth > 1 without dispatch events: the sample's arrivals 100x faster, D lines removed
    rows = mts.simulate_ios(mts.synth_ios(300, 200_000.0, 3))
    qc = tmp_path / "qc.txt"
    qc.write_text("\n".join(ln for ln in mts.blkparse_lines(rows) if "  D " not in ln) + "\n")
    refused(qc, "the trace is not depth 1")
    refused(ROOT / "scenarios/data/traces/msr_sample.csv", "arrived while another was in flight")
    # the same trace with its D events is identifiable (D->C excludes the block layer's queueing)
    qdc = tmp_path / "qdc.txt"
    qdc.write_text("\n".join(mts.blkparse_lines(rows)) + "\n")
    # (identifiable: its D->C times are the device's; whether the fit then settles is the fit's)
    reader = open_timed(str(qdc))
    counts, inflight, overlap, d2c = _scan(reader)
    _check_identifiable(reader, counts, inflight, overlap, d2c)  # no refusal
    assert d2c


# -- the HTML report in a browser -----------------------------------------------------------------------------
def test_html_report_renders_in_headless_chromium(stock, tmp_path):
    from scenarios.studies.trace_report import write_trace_report

    out = tmp_path / "report.html"
    n = write_trace_report(stock, out)
    assert n == 4  # CDFs per class, scatter, error over time, blkparse stages
    page = out.read_text(encoding="utf-8")
    assert page.count('class="plotly-graph-div"') == n and "<script src=" not in page
    assert_plots_render(out, n)


def test_printed_errors_never_carry_the_sign_of_a_zero():
    """A quoted output must not depend on the last bit of a float: an error that rounds to zero is
    +0.00 whatever its sign (docs/validate-your-hardware.md quotes such lines)."""
    from simcore.numfmt import signed

    assert signed(-0.0004) == signed(0.0004) == signed(-0.0) == "+0.00"
    assert signed(-0.005001) == "-0.01" and signed(12.345, 1) == "+12.3"
    assert signed(-1e-9, 2, 7) == "  +0.00" and signed(-3.14159, 2, 7) == "  -3.14"


def test_calibrate_trace_takes_max_iterations_and_says_it_did_not_converge(tmp_path, capsys):
    """--max-iterations bounds the replays of calibrate --trace as it bounds the other calibrations'
    iterations (issue 46): one replay cannot show the values settled, so the result says so, with
    the same advice as the others, and is written (a quick result, not a refusal)."""
    from scenarios.studies.fitting import not_converged

    out = tmp_path / "quick.yaml"
    argv = ["calibrate", "--trace", str(SAMPLE), *POLLED, "-o", str(out), "--quiet", "--max-iterations", "1"]
    assert cli.main(argv) == 0
    text = capsys.readouterr().out
    assert f"NOTE: {not_converged(1, 'trace')}" in text.splitlines() and "1 replays" in text
    assert out.exists()
