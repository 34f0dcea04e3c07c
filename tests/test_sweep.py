"""Parameter sweeps: grid and seeds, validation before running, resume, executors, the efficiency
analysis and the HTML report (rendered in headless Chromium when it is installed)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from scenarios.studies.sweep import combinations, load_sweep, plan, point_key, replicate_seed
from scenarios.studies.sweeps.efficiency import efficiency_map, format_table, welch_p
from scenarios.studies.sweeps.progress import Progress
from scenarios.studies.sweeps.report import write_report
from scenarios.studies.sweeps.rows import TIMING_COLUMNS
from scenarios.studies.sweeps.runner import execute, run_task
from scenarios.studies.sweeps.store import journal_dir, read_results
from simcore.errors import ConfigError
from stacksim import cli_sweep
from tests.browser import assert_plots_render

REPO = Path(__file__).resolve().parents[1]
TINY = """
name: tiny
base: {scenario: default}
set: {runtime: RUNTIME, ramp_time: 1ms, queue.io_poll: 1}
axes:
  bs: [4k, 16k]
  hipri: [0, 1]
replicates: 2
seed: 3
"""


def tiny_sweep(tmp_path: Path, runtime: str = "5ms") -> Path:
    p = tmp_path / "tiny.yaml"
    p.write_text(TINY.replace("RUNTIME", runtime))
    return p


def tiny_tasks(path: Path, **kw):
    sweep, where = load_sweep(path)
    return plan(sweep, where=where, **kw)


def strip_timing(rows):
    return [{k: v for k, v in r.items() if k not in TIMING_COLUMNS} for r in rows]


@pytest.fixture(scope="module")
def small_results(tmp_path_factory) -> Path:
    """The scaled-down study, run once in a local process pool."""
    out = tmp_path_factory.mktemp("small") / "RESULTS.csv"
    sweep, where = load_sweep("poll_energy_small")
    outcome = execute(plan(sweep, where=where), out, jobs=2, progress=False)
    assert outcome.computed == outcome.total == 24
    return out


def test_builtin_governor_sweep_plans_every_point():
    """The cpufreq-governor study resolves: 6 governor settings x 3 completion modes x 2 depths."""
    sweep, where = load_sweep("cpufreq_governors")
    tasks = plan(sweep, where=where)
    assert len(tasks) == 36
    govs = {
        (
            t.axes["governor"],
            t.config.platform.cpu.cpufreq_governor,
            tuple(sorted(t.config.platform.cpu.cpufreq.items())),
        )
        for t in tasks
    }
    assert ("ondemand-no-iowait", "ondemand", (("io_is_busy", 0),)) in govs
    assert ("schedutil-no-boost", "schedutil", (("iowait_boost", False),)) in govs


# -- grid and seeds -------------------------------------------------------------------------------
def test_grid_expansion_order_and_configs():
    sweep, where = load_sweep("poll_energy_small")
    points = combinations(sweep)
    assert len(points) == 2 * 2 * 3
    assert [point_key(p) for p in points[:4]] == [
        "bs=4k|numjobs=1|mode=interrupt",
        "bs=4k|numjobs=1|mode=classic",
        "bs=4k|numjobs=1|mode=hybrid",
        "bs=4k|numjobs=4|mode=interrupt",
    ]
    tasks = plan(sweep, where=where)
    assert len(tasks) == 24 and [t.index for t in tasks] == list(range(24))
    assert [(t.point, t.replicate) for t in tasks[:3]] == [
        ("bs=4k|numjobs=1|mode=interrupt", 0),
        ("bs=4k|numjobs=1|mode=interrupt", 1),
        ("bs=4k|numjobs=1|mode=classic", 0),
    ]
    by = {(t.point, t.replicate): t for t in tasks}
    hyb = by[("bs=64k|numjobs=4|mode=hybrid", 1)].config
    assert hyb.queue.io_poll and hyb.queue.io_poll_delay == 0
    assert hyb.jobs[0].hipri and hyb.jobs[0].numjobs == 4 and hyb.jobs[0].bs_read_bytes == 65536
    intr = by[("bs=4k|numjobs=1|mode=interrupt", 0)].config
    assert not intr.jobs[0].hipri and not intr.queue.io_poll
    assert all(t.config.jobs[0].ramp_time_ns > 100_000_000 for t in tasks)  # hybrid's first window closed


def test_replicate_seeds_independent_and_deterministic():
    sweep, where = load_sweep("poll_energy_small")
    a = plan(sweep, where=where)
    b = plan(sweep, where=where)
    assert [t.seed for t in a] == [t.seed for t in b]
    assert [t.config_sha for t in a] == [t.config_sha for t in b]
    assert len({t.seed for t in a}) == len(a)  # every run its own stream
    assert all(t.config.seed == t.seed >= 0 for t in a)
    # a seed depends on (base seed, point, replicate) only: extending an axis keeps the others' seeds
    wider = sweep.model_copy(update={"axes": {**sweep.axes, "numjobs": [1, 2, 4]}})
    w = {(t.point, t.replicate): t.seed for t in plan(wider, where=where)}
    assert all(w[(t.point, t.replicate)] == t.seed for t in a)
    assert replicate_seed(7, "bs=4k", 0) != replicate_seed(8, "bs=4k", 0)
    assert {t.seed for t in plan(sweep, where=where, seed=8)}.isdisjoint({t.seed for t in a})


# -- validation before running --------------------------------------------------------------------
def test_bad_axis_name_fails_before_running(tmp_path, capsys, monkeypatch):
    ran = []
    monkeypatch.setattr("scenarios.studies.sweeps.runner.run_task", lambda t: ran.append(t))
    bad = tmp_path / "bad.yaml"
    bad.write_text(TINY.replace("RUNTIME", "5ms").replace("hipri: [0, 1]", "hipri: [0, 1]\n  numjbos: [1, 2]"))
    out = tmp_path / "out.csv"
    assert cli_sweep.main(["sweep", str(bad), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "axis 'numjbos'" in err and err.count("\n") == 1
    assert not ran and not out.exists() and not journal_dir(out).exists()
    # a bad key inside a bundle axis names the axis; a bad section is caught too
    bad.write_text(
        TINY.replace("RUNTIME", "5ms").replace("hipri: [0, 1]", "mode: {a: {hipri: 1}, b: {queue.io_pol: 1}}")
    )
    with pytest.raises(ConfigError, match=r"axis 'mode' = b: .*queue\.io_pol"):
        tiny_tasks(bad)
    bad.write_text(TINY.replace("RUNTIME", "5ms").replace("hipri: [0, 1]", "kernal.ctx_switch_cycles: [1000]"))
    with pytest.raises(ConfigError, match="axis 'kernal.ctx_switch_cycles'"):
        tiny_tasks(bad)
    bad.write_text(TINY.replace("RUNTIME", "5ms").replace("seed: 3", "seed: 3\nreplicate: 4"))
    with pytest.raises(ConfigError, match="replicate: unknown key"):
        tiny_tasks(bad)


# -- storage, resume, --fresh ---------------------------------------------------------------------
class Stop(BaseException):
    """Raised by a task function to interrupt a sweep (like Ctrl-C)."""


def test_resume_after_interrupt_skips_done_runs(tmp_path):
    tasks = tiny_tasks(tiny_sweep(tmp_path))
    out = tmp_path / "r.csv"
    calls = []

    def stop_after_3(task):
        if len(calls) == 3:
            raise Stop
        calls.append(task.index)
        return run_task(task)

    with pytest.raises(Stop):
        execute(tasks, out, jobs=1, progress=False, fn=stop_after_3)
    assert len(read_results(out)) == 3  # finished runs were stored
    again = []
    outcome = execute(tasks, out, jobs=1, progress=False, fn=lambda t: again.append(t.index) or run_task(t))
    assert (outcome.reused, outcome.computed) == (3, 5)
    assert sorted(again) == [t.index for t in tasks if t.index not in calls]
    ref = tmp_path / "ref.csv"
    execute(tasks, ref, jobs=1, progress=False)
    assert strip_timing(read_results(out)) == strip_timing(read_results(ref))  # same rows, plan order
    assert not journal_dir(out).exists()


def test_resume_after_kill_loses_nothing(tmp_path):
    """SIGKILL a running sweep: the journal keeps every finished run, the restart completes it."""
    sweep = tiny_sweep(tmp_path, runtime="40ms")
    out = tmp_path / "k.csv"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "stacksim.cli_sweep", "sweep", str(sweep), "-o", str(out), "-j", "1"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            if len(list(journal_dir(out).glob("*.json"))) >= 2:
                break
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
    finally:
        proc.wait()
    assert proc.returncode == -signal.SIGKILL  # killed mid-sweep, not finished
    done = read_results(out)  # the journal is merged
    assert 2 <= len(done) <= 8
    tasks = tiny_tasks(sweep)
    outcome = execute(tasks, out, jobs=1, progress=False)
    assert outcome.reused == len(done) and outcome.computed == 8 - len(done)
    rows = read_results(out)
    assert [(r["point"], r["replicate"]) for r in rows] == [(t.point, t.replicate) for t in tasks]
    assert not journal_dir(out).exists()


def test_fresh_recomputes_and_changed_config_is_refused(tmp_path):
    path = tiny_sweep(tmp_path)
    out = tmp_path / "f.csv"
    tasks = tiny_tasks(path)
    assert execute(tasks, out, jobs=1, progress=False).computed == 8
    assert execute(tasks, out, jobs=1, progress=False).computed == 0
    assert execute(tasks, out, jobs=1, progress=False, fresh=True).computed == 8
    changed = tiny_tasks(path, sets={"runtime": "6ms"})
    with pytest.raises(ConfigError, match="--fresh"):
        execute(changed, out, jobs=1, progress=False)
    assert execute(changed, out, jobs=1, progress=False, fresh=True).computed == 8


def test_rows_of_another_simulator_version_are_recomputed(tmp_path, monkeypatch):
    """Same configuration, changed model code: the stored rows are stale, never silently reused."""
    import simcore.fingerprint

    tasks = tiny_tasks(tiny_sweep(tmp_path))
    out = tmp_path / "v.csv"
    first = execute(tasks, out, jobs=1, progress=False)
    assert (first.computed, first.stale) == (8, 0)
    current = simcore.fingerprint.code_sha()
    assert {r["code_sha"] for r in read_results(out)} == {current}
    monkeypatch.setattr(simcore.fingerprint, "code_sha", lambda plugins=(): "0123456789abcdef")  # "new code"
    again = execute(tasks, out, jobs=1, progress=False)
    assert (again.computed, again.stale, again.reused) == (8, 8, 0)
    assert {r["code_sha"] for r in read_results(out)} == {"0123456789abcdef"}
    assert execute(tasks, out, jobs=1, progress=False).reused == 8


def test_code_fingerprint_covers_the_packages_and_plugin_files(tmp_path):
    from simcore.fingerprint import PACKAGES, _package_files, code_sha

    files = [rel for name in PACKAGES for rel, _ in _package_files(name)]
    assert (
        "models/os/sched/runner.py" in files and "simcore/engine.py" in files and not any("tests/" in f for f in files)
    )
    assert code_sha() == code_sha() and len(code_sha()) == 16
    plugin = tmp_path / "my_policy.py"
    plugin.write_text("X = 1\n")
    before = code_sha([str(plugin)])
    assert before != code_sha()
    plugin.write_text("X = 2\n")
    assert code_sha([str(plugin)]) != before


def test_rows_have_identity_config_metrics_and_cdf(small_results):
    rows = read_results(small_results)
    assert len(rows) == 24
    r = rows[0]
    for col in (
        "point",
        "bs",
        "numjobs",
        "mode",
        "replicate",
        "seed",
        "completion",
        "iops",
        "bandwidth_mb_s",
        "latency_us.p99",
        "cpu_utilization",
        "context_switches_per_io",
        "context_switches_per_s",
        "interrupts_per_io",
        "power_w.system",
        "energy_j",
        "bytes_per_joule",
        "energy_j_per_million_ios",
        "layers.block",
        "sim.wall_s",
    ):
        assert col in r, col
    assert {x["completion"] for x in rows} == {"interrupt", "classic", "hybrid"}
    assert all(x["completion"] == x["mode"] for x in rows)
    cfg = json.loads(r["config"])
    assert cfg["seed"] == r["seed"] and cfg["jobs"][0]["bs_read_bytes"] == 4096
    cdf = json.loads(r["cdf"])
    assert cdf["pct"][0] == 1.0 and cdf["pct"][-1] == 99.99 and cdf["read_us"] == sorted(cdf["read_us"])


def test_parquet_results(tmp_path):
    pytest.importorskip("pyarrow")
    tasks = tiny_tasks(tiny_sweep(tmp_path))
    execute(tasks, tmp_path / "t.parquet", jobs=1, progress=False)
    execute(tasks, tmp_path / "t.csv", jobs=1, progress=False)
    assert strip_timing(read_results(tmp_path / "t.parquet")) == strip_timing(read_results(tmp_path / "t.csv"))


# -- executors ------------------------------------------------------------------------------------
def test_dask_local_cluster_gives_identical_results(small_results, tmp_path):
    pytest.importorskip("distributed", reason="Dask distributed is not installed")
    sweep, where = load_sweep("poll_energy_small")
    out = tmp_path / "dask.csv"
    outcome = execute(plan(sweep, where=where), out, local_cluster=2, progress=False)
    assert outcome.computed == 24
    assert strip_timing(read_results(out)) == strip_timing(read_results(small_results))


def test_progress_only_on_a_terminal(capsys):
    bar = Progress(5, 1)  # stderr is captured: not a TTY
    bar.update(), bar.close()
    assert capsys.readouterr().err == ""
    bar = Progress(5, 1, enabled=True)
    bar.update(), bar.close()
    assert "2/5" in capsys.readouterr().err


# -- efficiency analysis --------------------------------------------------------------------------
def _synthetic(values: dict[tuple, list[float]]) -> list[dict]:
    rows = []
    for (bs, nj, pol), vals in values.items():
        for i, v in enumerate(vals):
            rows.append(
                {
                    "point": f"{bs}|{nj}|{pol}",
                    "bs": bs,
                    "numjobs": nj,
                    "completion": pol,
                    "replicate": i,
                    "bytes_per_joule": v,
                }
            )
    return rows


def test_efficiency_clear_winner_tie_and_untestable():
    rows = _synthetic(
        {
            ("4k", 1, "classic"): [10.0, 10.1, 9.9],
            ("4k", 1, "hybrid"): [8.0, 8.1, 7.9],
            ("4k", 1, "interrupt"): [5.0, 5.1, 4.9],
            ("16k", 1, "classic"): [10.0, 10.5, 9.5],
            ("16k", 1, "hybrid"): [10.1, 9.6, 10.4],
            ("16k", 1, "interrupt"): [7.0, 7.1, 6.9],
            ("4k", 8, "interrupt"): [12.0],
            ("4k", 8, "classic"): [11.0],
        }
    )
    tiles = {(t["x"], t["y"]): t for t in efficiency_map(rows)}
    win = tiles[("4k", 1)]
    assert (win["winner"], win["second"]) == ("classic", "hybrid")
    assert win["margin_pct"] == pytest.approx(25.0) and win["p_value"] < 0.01
    tie = tiles[("16k", 1)]
    assert tie["winner"] == "tie" and tie["best"] == "hybrid" and tie["p_value"] > 0.05
    one = tiles[("4k", 8)]
    assert one["winner"] == "interrupt" and one["p_value"] is None
    assert [(t["x"], t["y"]) for t in efficiency_map(rows)] == [("4k", 1), ("4k", 8), ("16k", 1)]  # size order
    table = format_table(list(tiles.values()))
    assert "classic +25.0%" in table and "tie" in table and "interrupt +9.1%?" in table
    assert welch_p([1.0, 1.0], [1.0, 1.0]) == 1.0 and welch_p([1.0, 1.0], [2.0, 2.0]) == 0.0
    # a combined policy of several axes
    settings = {"interrupt": (0, -1), "classic": (1, -1), "hybrid": (1, 0)}
    for r in rows:
        r["hipri"], r["queue.io_poll_delay"] = settings[r["completion"]]
    combo = {(t["x"], t["y"]): t for t in efficiency_map(rows, policy=["hipri+queue.io_poll_delay"])}
    assert combo[("4k", 1)]["winner"] == "hipri=1,queue.io_poll_delay=-1"
    with pytest.raises(ConfigError, match="policy axis 'mode'"):
        efficiency_map(rows, policy="mode")


def test_analyze_cli(small_results, capsys, tmp_path):
    js = tmp_path / "tiles.json"
    assert cli_sweep.main(["analyze", "efficiency", str(small_results), "--json", str(js)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("numjobs \\ bs") and "64k" in out
    assert len(json.loads(js.read_text())) == 4
    assert cli_sweep.main(["analyze", "efficiency", str(small_results), "--x", "bogus"]) == 2
    assert "column 'bogus'" in capsys.readouterr().err


# -- report ---------------------------------------------------------------------------------------
BASE_FIGURES = 9  # bandwidth, CPU, power, power-vs-CPU, ctx/s, ctx/IO, layers, efficiency, CDF
MEM_OPS = {
    "mem_ops_per_s.block/": 3e8,
    "mem_ops_per_s.blk_poll": 1e8,
    "mem_ops_per_s.drivers/nvme/host/": 5e7,
    "mem_ops_per_s.other": 1e9,
    "mem_ops_per_s.total": 1.35e9,
}


def test_report_has_one_div_per_figure_and_no_network(small_results, tmp_path):
    rows = [{k: v for k, v in r.items() if not k.startswith("mem_ops_per_s.")} for r in read_results(small_results)]
    out = tmp_path / "report.html"
    assert write_report(rows, out) == BASE_FIGURES
    text = out.read_text(encoding="utf-8")
    assert text.count('class="plotly-graph-div"') == BASE_FIGURES
    assert "<script src=" not in text and text.count("Plotly.newPlot") >= BASE_FIGURES
    for r in rows:  # per-layer memory operations appear when the results have them
        r.update(MEM_OPS)
    assert write_report(rows, out) == BASE_FIGURES + 1
    assert out.read_text(encoding="utf-8").count('class="plotly-graph-div"') == BASE_FIGURES + 1


def test_report_renders_in_headless_chromium(small_results, tmp_path):
    out = tmp_path / "report.html"
    n = write_report([{**MEM_OPS, **r} for r in read_results(small_results)], out)
    assert n == BASE_FIGURES + 1
    assert_plots_render(out, n)


def test_dry_run_lists_points(capsys):
    assert cli_sweep.main(["sweep", "poll_energy_study", "--dry-run"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "bs=1k|numjobs=1|mode=interrupt"
    assert out[-1] == "168 points x 5 replicates = 840 runs"


def test_ctrl_c_says_how_many_runs_are_stored_and_how_to_resume(tmp_path):
    from scenarios.studies.sweeps.runner import SweepInterrupted

    tasks = tiny_tasks(tiny_sweep(tmp_path))
    out = tmp_path / "r.csv"
    calls = []

    def ctrl_c_after_2(task):
        if len(calls) == 2:
            raise KeyboardInterrupt
        calls.append(task.index)
        return run_task(task)

    with pytest.raises(SweepInterrupted) as stop:
        execute(tasks, out, jobs=1, progress=False, fn=ctrl_c_after_2)
    assert f"2 of {len(tasks)} runs are stored in {out}" in str(stop.value)
    assert "run the same command again to resume" in str(stop.value)
    assert len(read_results(out)) == 2


def test_progress_without_a_terminal_prints_periodic_lines(capsys, monkeypatch):
    from scenarios.studies.sweeps.progress import Progress

    monkeypatch.setattr(sys.stderr, "isatty", lambda: False, raising=False)
    bar = Progress(10, 2, desc="tiny", log_every_s=0.0)
    bar.update()
    bar.update()
    bar.close()
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("tiny: 3/10 runs") and lines[1].startswith("tiny: 4/10 runs") and "ETA" in lines[1]
    quiet = Progress(10, enabled=False, log_every_s=0.0)  # --no-progress: nothing at all
    quiet.update()
    assert capsys.readouterr().err == ""


MILLION = """
name: million
base: {scenario: default}
set: {runtime: 1ms, ramp_time: 0}
axes:
  kernel.ctx_switch_cycles: RANGE
  kernel.wakeup_cycles: RANGE
  kernel.idle_entry_cycles: RANGE
"""


def test_a_million_point_sweep_starts_at_once_and_streams_its_points(tmp_path, capsys):
    """Points are resolved as the runs reach them: the first runs start without resolving the million."""
    import time

    from scenarios.studies.sweep import count_points, plan_stream

    path = tmp_path / "million.yaml"
    path.write_text(MILLION.replace("RANGE", str(list(range(1000, 1100)))))
    sweep, where = load_sweep(path)
    assert count_points(sweep) == 10**6
    t0 = time.monotonic()
    tasks = plan_stream(sweep, where=where)
    ran = []

    def three_then_stop(task):
        if len(ran) == 3:
            raise Stop
        ran.append(task.point)
        return run_task(task)

    with pytest.raises(Stop):
        execute(tasks, tmp_path / "r.csv", jobs=1, progress=False, fn=three_then_stop, total=10**6)
    assert len(ran) == 3 and time.monotonic() - t0 < 60  # not hours
    assert len(read_results(tmp_path / "r.csv")) == 3
    assert ran[0] == "kernel.ctx_switch_cycles=1000|kernel.wakeup_cycles=1000|kernel.idle_entry_cycles=1000"
