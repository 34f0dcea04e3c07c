"""Tables that docs pages make from sweeps and runs are today's: a few points of each are re-run
here at the table's own settings (the sweep file's, or the tool's), and the rows they make must be
the page's rows as written, with the prose figures that come from those points. A changed model
fails here until the page is re-made with its tool (the command is in each assertion's message).

Tables too long to re-run here carry a ``made at commit`` line with their command instead."""

from __future__ import annotations

import importlib.util
import re
import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PREDICTIONS = "python tools/predictions_tables.py threads.csv qd.csv (after the two sweeps: docs/predictions.md)"


def _tool(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(name, module)
    spec.loader.exec_module(module)
    return module


def _flat(page: str) -> str:
    return re.sub(r"\s+", " ", (DOCS / page).read_text(encoding="utf-8"))  # prose wraps anywhere


def _blocks(page: str) -> dict[str, str]:
    text = (DOCS / page).read_text(encoding="utf-8")
    return {m["name"]: m["body"] for m in _tool("predictions_tables").BLOCK.finditer(text)}


@cache
def _sweep_rows(sweep_name: str, **axes) -> tuple[dict, ...]:
    """The result rows (as the sweep's CSV has them) of the points of ``sweep_name`` whose axes
    match ``axes`` (a value or a tuple of values), run as ``stacksim sweep`` runs them."""
    from scenarios.studies.sweep import load_sweep, plan
    from scenarios.studies.sweeps.runner import run_task

    sweep, where = load_sweep(sweep_name)
    tasks = [
        t
        for t in plan(sweep, where=where.parent)
        if all(t.axes[k] in (v if isinstance(v, tuple) else (v,)) for k, v in axes.items())
    ]
    assert tasks, f"{sweep_name}: no point with {axes}"
    return tuple({k: str(v) for k, v in run_task(t).items()} for t in tasks)


def _check_rows(made: dict[str, str], page: str, command: str) -> None:
    blocks = _blocks(page)
    for name, body in made.items():
        rows = body.splitlines()[2:]  # below the header
        assert rows, name
        for row in rows:
            assert row in blocks[name].splitlines(), f"{page} table {name}: the model gives\n{row}\nrun: {command}"


@pytest.fixture(scope="module")
def one_thread():
    """threads_scaling's three one-thread points (interrupt, classic and hybrid polling)."""
    tool = _tool("predictions_tables")
    return tool._threads(list(_sweep_rows("threads_scaling", numjobs=1)))


def test_predictions_md_one_thread_rows_are_the_models(one_thread):
    """Every table of predictions.md's threads section has the one-thread row (or rows) the
    threads_scaling sweep gives today, and the prose's one-thread comparisons are theirs."""
    tool = _tool("predictions_tables")
    made = tool.tables_from(one_thread, [])
    assert set(made) == {
        "threads-latency",
        "threads-iops",
        "threads-switches",
        "threads-energy",
        "threads-memops",
        "threads-actions",
    }
    _check_rows(made, "predictions.md", PREDICTIONS)
    interrupt, classic = one_thread[1, "interrupt"], one_thread[1, "classic"]
    flat = _flat("predictions.md")
    gap = interrupt["latency_us.mean"] - classic["latency_us.mean"]
    assert f"an advantage over interrupts that shrinks from {gap:.1f} us at one thread" in flat
    more = 100 * (classic["iops"] / interrupt["iops"] - 1)
    assert f"classic polling completes ~{more:.0f}% more IOs" in flat
    sched = interrupt["mem_ops_per_s.kernel/sched/"] / interrupt["iops"]
    quoted = int(re.search(r"`kernel/sched/` stays at about ([\d,]+) operations per IO", flat)[1].replace(",", ""))
    assert abs(sched - quoted) <= 10, f"interrupts' kernel/sched/ per IO at 1 thread: {sched:.0f}, page {quoted}"


def test_predictions_md_queue_depth_row_and_its_comparison_are_the_models():
    """The queue-depth table's rows at 4 and 16 commands in flight are queue_depth's, and the
    comparison with the published QD16 point quotes the 16-command row."""
    from scenarios.data.reference import values

    rows = _sweep_rows("queue_depth", iodepth=(1, 4))
    made = _tool("predictions_tables").tables_from({}, list(rows))
    _check_rows(made, "predictions.md", PREDICTIONS)
    (qd16,) = (r for r in rows if int(float(r["iodepth"])) == 4)
    iops, lat = float(qd16["iops"]), float(qd16["latency_us.mean"])
    pub = values("optane_ssd", "random_read_4k_by_depth")[16]
    assert (
        f"The model gives {iops / 1e3:.0f}K at {lat:.1f} us with 16 commands in flight "
        f"({100 * (iops / pub['iops'] - 1):+.0f}% IOPS, {100 * (lat / pub['mean_latency_us'] - 1):+.0f}% latency)"
        in _flat("predictions.md")
    )


#: pagecache.md's prediction table: the rows re-run here (job, IO) of tools/pagecache_table.py's CASES
PAGECACHE_ROWS = (("random read", "direct"), ("write, fsync=8", "buffered"))


def test_pagecache_md_prediction_rows_are_the_models():
    """Two rows of pagecache.md's prediction table (a direct read, the fsync=8 writer), run as
    tools/pagecache_table.py runs them (its platform and runtime), are the page's rows."""
    tool = _tool("pagecache_table")
    text = (DOCS / "pagecache.md").read_text(encoding="utf-8")
    body = tool.BLOCK.search(text)["body"].splitlines()
    platform, runtime_ms = tool.PLATFORM, tool.RUNTIME_MS
    assert f"One psync thread, 4 KiB, 1 GiB file, {runtime_ms} ms, `{platform}`" in _flat("pagecache.md")
    cases = {name: (rw, extra) for name, rw, extra in tool.CASES}
    for name, mode in PAGECACHE_ROWS:
        rw, extra = cases[name]
        s = tool._summary(platform, rw, extra, int(mode == "direct"), runtime_ms)
        row = tool._row(name, mode, s)
        assert row in body, (
            f"pagecache.md prediction table: the model gives\n{row}\nrun: python tools/pagecache_table.py"
        )
        if "fsync" in extra:  # the prose below the table: most syncs take about one device write
            median = s["sync"]["latency_us"]["p50"]
            assert f"a wait of about one device write: ~{median:.0f} us for most (the median)" in _flat("pagecache.md")


def test_iopoll_sqpoll_tables_none_rows_are_the_models():
    """io-schedulers.md's and async-io.md's IOPOLL + SQPOLL tables: the `none` scheduler's four
    points of io_schedulers_iopoll_sqpoll (default and IOPOLL + SQPOLL, reads and writes) make the
    pages' `none` rows, and its gain at p50 is inside the range both pages quote."""
    tool = _tool("iopoll_tables")
    rows = _sweep_rows("io_schedulers_iopoll_sqpoll", **{"queue.scheduler": "none"})
    made = tool.tables_from(list(rows))
    command = "stacksim sweep io_schedulers_iopoll_sqpoll -o iopoll.csv -j 2; python tools/iopoll_tables.py iopoll.csv"
    for name, page in tool.PAGES.items():
        _check_rows({name: made[name]}, page, command)
    lat = tool._latencies(rows)
    gains = [lat["default", rw, "none"][0] - lat["iopoll+sqpoll", rw, "none"][0] for rw in ("randread", "randwrite")]
    for page, pattern in (
        ("io-schedulers.md", r"Every scheduler gains ([\d.]+)-([\d.]+) us at p50"),
        ("async-io.md", r"leave the critical path: about ([\d.]+)-([\d.]+) us for every scheduler"),
    ):
        low, high = (float(x) for x in re.search(pattern, _flat(page)).groups())
        assert all(low - 0.05 <= g <= high + 0.05 for g in gains), f"{page}: none gains {gains} us, page {low}-{high}"


def test_server_md_stable_sweeps_lightest_row_is_the_models():
    """server.md's three stable-sweep tables: their 10K rows (the six policies at the lightest client
    rate, 100 ms steps as server_stable runs them) are the model's."""
    tool = _tool("server_tables")
    rows = _sweep_rows("server_stable", **{"workload.rate_iops": 10_000})
    made = tool.tables_from(list(rows))
    assert all(len(body.splitlines()) == 3 for body in made.values()), made
    _check_rows(
        made, "server.md", "stacksim sweep server_stable -o stable.csv -j 2; python tools/server_tables.py stable.csv"
    )


def test_scaling_md_one_thread_per_scheduler_is_the_models():
    """scaling.md's threads section quotes each scheduler's one-thread point over both sockets
    (cheops23_threads at 1 thread): IOPS and CPU time per IO as tools/scaling_figures.py draws them."""
    rows = _sweep_rows("cheops23_threads", numjobs=1, sockets="both")
    point = {}
    for r in rows:
        iops = float(r["iops"])
        cpu_us = float(r["cpu_utilization"]) * 20 * 1e6 / iops  # as threads_figure: 20 logical CPUs
        point[r["queue.scheduler"]] = (f"{iops / 1e3:.0f}K", f"{cpu_us:.1f}")
    (mq, mq_cpu), (ky, ky_cpu), (bfq, bfq_cpu), (none, none_cpu) = (
        point[s] for s in ("mq-deadline", "kyber", "bfq", "none")
    )
    want = (
        f"mq-deadline {mq} IOPS at {mq_cpu} us of CPU per IO, kyber {ky} at {ky_cpu}, bfq {bfq} at {bfq_cpu},"
        f" against `none`'s {none} at {none_cpu}"
    )
    assert want in _flat("scaling.md"), f"scaling.md: the model gives {want!r}; run the commands of its made-at line"


def test_scaling_md_icpe24_mq_deadline_at_two_processes_is_the_models():
    """scaling.md's ICPE'24 list quotes mq-deadline at 2 processes (the icpe24 suite's point, at the
    suite's own length) against the measured figure."""
    from scenarios.studies.suite_icpe24 import fig7_points
    from scenarios.studies.validation import PointRunner, metric_value

    (point,) = (p for p in fig7_points() if p.label == "icpe24 fig7 mq-deadline 2p")
    iops = metric_value(PointRunner(platform=None).summary(point), "iops")
    err = 100 * (iops / point.metrics["iops"] - 1)
    want = f"predicted {iops / 1e6:.2f}M at 2 processes ({err:+.0f}%, CPU-bound as measured)"
    assert want in _flat("scaling.md"), (
        f"scaling.md: the model gives {want!r}; run python tools/scaling_figures.py --icpe24"
    )


def test_async_io_md_fio_defaults_rows_are_the_models():
    """async-io.md's table of fio's defaults against CHEOPS'23: its psync and io_uring depth-128
    rows, run as tools/async_io_table.py runs them (the study's job files, the page's settings)."""
    tool = _tool("async_io_table")
    text = (DOCS / "async-io.md").read_text(encoding="utf-8")
    body = tool.BLOCK.search(text)["body"].splitlines()
    measured = tool.measured_cells(text)
    for engine, depth, job, extra in tool.ROWS:
        if (engine, depth) in (("psync", 1), ("io_uring", 128)):
            want = tool.row(engine, depth, job, extra, measured[engine, depth])
            assert want in body, (
                f"async-io.md fio-defaults table: the model gives\n{want}\nrun: python tools/async_io_table.py"
            )


def test_server_md_burst_table_spdk_static_row_is_the_models():
    """server.md's closed-client burst table: the `spdk-static` row, run as
    scenarios/studies/server_burst.py runs it (time_scale 0.01, two cycles, iodepth 8)."""
    from scenarios.studies.server_burst import run_policy, table

    text = (DOCS / "server.md").read_text(encoding="utf-8")
    body = _tool("predictions_tables").BLOCK.search(text[text.index("<!-- sweep: burst-closed -->") :])["body"]
    (want,) = table([run_policy("spdk-static")]).splitlines()[2:]
    assert want in body.splitlines(), (
        f"server.md burst table: the model gives\n{want}\nrun: python -m scenarios.studies.server_burst"
    )
