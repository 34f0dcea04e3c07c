"""``stacksim explain``: the waterfall of one typical IO per completion policy, in the terminal and
as a self-contained plotly HTML page."""

from __future__ import annotations

import html.parser
import re
from pathlib import Path

import pytest

from scenarios.studies.explain import (
    TASK_ASLEEP,
    TASK_WAKE,
    explain,
    format_explanation,
    layers_figure,
    waterfall_figure,
    write_html,
)
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
    # plotly.js from its CDN, once: the page of the tutorial's command was 4.8 MB with it inlined
    assert len(re.findall(r"<script[^>]*\bsrc=", page)) == 1 and 'src="https://cdn.plot.ly/plotly-' in page
    assert out.stat().st_size < 200_000
    assert page.count("Plotly.newPlot") == 2  # the waterfalls and the layers: a figure (and legend) each
    for policy in ("interrupt", "classic-poll", "hybrid-poll"):
        assert policy in page
    for row in ("task: hrtimer sleep (armed for", "task: wake-up: hrtimer interrupt", "task: spins in blk_poll"):
        assert row in page
    html.parser.HTMLParser().feed(page)  # well-formed enough to parse


def test_embed_plotlyjs_inlines_it_once(tmp_path, sync_expl, capsys):
    out = tmp_path / "offline.html"
    write_html(sync_expl, str(out), embed_plotlyjs=True)
    page = out.read_text()
    assert not re.findall(r"<script[^>]*\bsrc=", page)  # works offline
    assert page.count("Plotly.newPlot") == 2 and out.stat().st_size > 1_000_000  # plotly.js, once
    rc, _, err = run_cli(["explain", str(FIO), "--platform", PLAT, "--embed-plotlyjs"], capsys)
    assert rc == 2 and "--embed-plotlyjs" in err and "-o PAGE.html" in err


def _rows(w):
    return [label for label, _, _ in w.task_segments]


def test_rows_say_what_happened_interrupt_vs_poll(sync_expl):
    irq, classic, hybrid = sync_expl.waterfalls
    post = {w.policy: w.segments[4][0] for w in sync_expl.waterfalls}
    assert "MSI-X" in post["interrupt"]
    for w in (classic, hybrid):  # a polled queue raises no interrupt: no row of its IO names one
        assert post[w.policy] == "SSD: completion entry posted (polled queue: no interrupt)"
        assert not any("MSI-X" in label for label, _, _ in w.segments + w.task_segments)
        assert "a poll" in w.segments[5][0] and "observes the CQE" in w.segments[5][0]
    assert "interrupt" in irq.segments[5][0]
    # the submitting task: asleep until the interrupt, or spinning from the doorbell to the CQE
    doorbell, cqe = (lambda w: w.segments[1][1]), (lambda w: w.segments[5][1])
    assert _rows(irq) == [TASK_ASLEEP]
    assert _rows(classic) == ["task: spins in blk_poll"]
    for w in (irq, classic):
        (_, start, dur) = w.task_segments[0]
        assert start == pytest.approx(doorbell(w)) and start + dur == pytest.approx(cqe(w))
        assert w.io["t_sleep_ns"] != w.io["t_sleep_ns"]  # NaN: no hrtimer sleep recorded


def test_hybrid_shows_its_sleep_and_wake_up_classic_does_not(sync_expl):
    _, classic, hybrid = sync_expl.waterfalls
    rows = _rows(hybrid)
    assert rows[0].startswith("task: hrtimer sleep (armed for ") and rows[1:] == [
        "task: wake-up: hrtimer interrupt, switch in",
        "task: spins in blk_poll",
    ]
    (_, sleep, sleep_ns), (_, wake, wake_ns), (_, spin, spin_ns) = hybrid.task_segments
    io = hybrid.io
    # from the IO's record: armed after the doorbell, for about half its completion time (the
    # adaptive sleep: half the mean completion time of its bucket), woken, then polling to the CQE
    assert sleep > hybrid.segments[1][1] and sleep_ns == pytest.approx(io["t_timer_ns"] - io["t_sleep_ns"])
    assert sleep_ns == pytest.approx(0.5 * (io["t_reaped_ns"] - io["t_dispatch_ns"]), rel=0.1)
    assert f"{sleep_ns:,.0f} ns" in rows[0]
    assert wake == pytest.approx(sleep + sleep_ns) and wake_ns > 1000  # timer IRQ, wake-up, switch in
    assert spin == pytest.approx(wake + wake_ns) and spin + spin_ns == pytest.approx(hybrid.segments[5][1])
    assert "hrtimer" not in " ".join(_rows(classic))
    # in the figure: the hybrid row's subplot has the sleep and the wake-up, the classic one not
    fig = waterfall_figure(sync_expl)
    by_axis: dict[str, set[str]] = {}
    for tr in fig.data:
        by_axis.setdefault(tr.yaxis, set()).update(tr.y)
    assert any(y.startswith("task: hrtimer sleep") for y in by_axis["y3"]) and TASK_WAKE in by_axis["y3"]
    assert not any("hrtimer" in y for y in by_axis["y2"]) and "task: spins in blk_poll" in by_axis["y2"]


def test_each_legend_is_with_its_own_chart(sync_expl):
    layers = {k for w in sync_expl.waterfalls for k in w.layers_ns}
    wf = {tr.name for tr in waterfall_figure(sync_expl).data if tr.showlegend}
    lf = {tr.name for tr in layers_figure(sync_expl).data}
    assert lf <= layers and "polling" in lf
    assert not (wf & layers) and {"task: hrtimer sleep", "task: wake-up", "SSD: media"} <= wf


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
