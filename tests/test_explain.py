"""``stacksim explain``: the waterfall of one typical IO per completion policy, in the terminal and
as a self-contained plotly HTML page."""

from __future__ import annotations

import html.parser
from pathlib import Path

import pytest

from scenarios.studies.explain import explain, format_explanation
from stacksim import cli_traces

ROOT = Path(__file__).resolve().parents[1]
FIO = ROOT / "examples" / "randread-4k-hipri.fio"
PLAT = "optane900p-e3-1230v5"
FAST = ["--runtime-ms", "20", "--set", "numjobs=1"]


def run_cli(args, capsys):
    rc = cli_traces.main(args)
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.fixture(scope="module")
def sync_expl():
    return explain(str(FIO), PLAT, sets={"numjobs": "1"}, runtime_ms=20)


def test_three_policies_side_by_side_own_first(sync_expl):
    w = sync_expl.waterfalls
    # hipri=1 but the platform's queue has io_poll off: Linux completes by interrupt
    assert [x.policy for x in w] == ["interrupt", "classic-poll", "hybrid-poll"]
    assert w[0].own and not w[1].own
    assert w[1].summary["context_switches_per_io"] < 0.01
    assert w[0].summary["interrupts_per_io"] == pytest.approx(1.0, abs=0.05)
    assert w[1].latency_ns < w[0].latency_ns


def test_waterfall_segments_tile_the_latency(sync_expl):
    for w in sync_expl.waterfalls:
        t = 0.0
        for label, start, dur in w.segments:
            assert start == pytest.approx(t, abs=1e-6), label
            assert dur >= 0
            t = start + dur
        assert t == pytest.approx(w.latency_ns, abs=1e-6)
        labels = [s[0] for s in w.segments]
        assert labels[2] == "SSD: media service"
        media = w.segments[2][2]
        assert media == pytest.approx(w.io["device_service_ns"])
    irq, classic = sync_expl.waterfalls[:2]
    # the interrupt path pays the wake-up and the switch back in after the CQE; polling does not
    assert irq.segments[-1][2] > classic.segments[-1][2] + 1000


def test_median_io_is_typical(sync_expl):
    for w in sync_expl.waterfalls:
        assert w.latency_ns / 1e3 == pytest.approx(w.summary["latency_us"]["p50"], rel=0.01)


def test_cli_prints_waterfall_and_writes_html(tmp_path, capsys):
    out = tmp_path / "waterfall.html"
    rc, stdout, err = run_cli(["explain", str(FIO), "--platform", PLAT, *FAST, "-o", str(out)], capsys)
    assert rc == 0, err
    assert "interrupt (the job's own policy)" in stdout
    for text in (
        "SSD: media service",
        "completion found",
        "CPU time per IO by stack layer",
        "scheduler",
        "polling",
        "context switches per IO",
        "#",
    ):
        assert text in stdout
    page = out.read_text()
    assert page.lstrip().lower().startswith("<html") or page.lstrip().lower().startswith("<!doctype html")
    assert "Plotly.newPlot" in page and "<script src=" not in page  # plotly.js inlined: works offline
    for policy in ("interrupt", "classic-poll", "hybrid-poll"):
        assert policy in page
    html.parser.HTMLParser().feed(page)  # well-formed enough to parse


def test_async_job_shows_the_policies_it_can_use(tmp_path):
    job = tmp_path / "uring.fio"
    job.write_text("[u]\nioengine=io_uring\nrw=randread\nbs=4k\niodepth=4\ndirect=1\nhipri=1\nruntime=1\n")
    e = explain(str(job), PLAT, sets={"queue.io_poll": "1"}, runtime_ms=10)
    assert [w.policy for w in e.waterfalls] == ["classic-poll", "interrupt"]
    assert e.waterfalls[0].own
    assert any("hybrid polling applies to synchronous" in n for n in e.notes)
    assert "reaps it" in format_explanation(e)


def test_policies_option(capsys):
    rc, stdout, err = run_cli(["explain", str(FIO), "--platform", PLAT, *FAST, "--policies", "classic"], capsys)
    assert rc == 0, err
    assert "classic-poll" in stdout and "hybrid-poll" not in stdout


@pytest.mark.parametrize(
    "args, message",
    [
        (["missing.fio", "--platform", PLAT], "job file not found: missing.fio"),
        ([str(FIO)], "--platform NAME is required"),
        ([str(FIO), "--platform", PLAT, "-o", "w.png"], ".html"),
        ([str(FIO), "--platform", PLAT, "--policies", "warp"], "--policies warp"),
        ([str(FIO), "--platform", PLAT, "--runtime-ms", "0"], "--runtime-ms"),
    ],
)
def test_bad_input_exit_2(args, message, capsys):
    rc, _, err = run_cli(["explain", *args], capsys)
    assert rc == 2
    assert message in err and "Traceback" not in err
