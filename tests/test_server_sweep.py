"""Sweeps over the storage-server scenarios (issue 6 with the sweep runner): points resolved by
``resolve_server`` and run by ``simulate``, rows of the usual shape, identical in a local
process pool and on a Dask LocalCluster, bad axis keys refused before anything runs, resume,
analysis, and the two shipped server sweeps."""

from __future__ import annotations

import json
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from scenarios.config.server import ServerRunConfig, resolve_server
from scenarios.run.simulate import simulate
from scenarios.studies.sweep import load_sweep, plan
from scenarios.studies.sweeps.efficiency import efficiency_map
from scenarios.studies.sweeps.report import build_figures
from scenarios.studies.sweeps.rows import TIMING_COLUMNS
from scenarios.studies.sweeps.runner import execute
from scenarios.studies.sweeps.store import journal_dir, read_results
from simcore.errors import ConfigError
from stacksim import cli_sweep
from tests.conftest import TINY_SERVER_SWEEP

TINY = TINY_SERVER_SWEEP
METRICS = (
    "iops",
    "latency_us.p50",
    "latency_us.p99",
    "latency_us.p99_9",
    "power_w.cpu",
    "power_w.system",
    "energy_j",
    "thread_migrations",
    "active_cores_mean",
    "bytes_per_joule",
    "cpu_utilization",
)


def tiny_tasks(tmp_path: Path, text: str = TINY, **kw):
    p = tmp_path / "tiny_server.yaml"
    p.write_text(text)
    sweep, where = load_sweep(p)
    return plan(sweep, where=where, **kw)


def strip_timing(rows):
    return sorted(({k: v for k, v in r.items() if k not in TIMING_COLUMNS} for r in rows), key=lambda r: r["point"])


@pytest.fixture(scope="module")
def local_results(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("server_sweep")
    out = d / "RESULTS.csv"
    outcome = execute(tiny_tasks(d), out, jobs=2, progress=False)
    assert outcome.computed == outcome.total == 4
    return out


def test_points_resolve_as_server_configs(tmp_path):
    tasks = tiny_tasks(tmp_path)
    assert [t.point for t in tasks] == [
        "workload.rate_iops=40000|server.policy=spdk-static",
        "workload.rate_iops=40000|server.policy=sandman",
        "workload.rate_iops=320000|server.policy=spdk-static",
        "workload.rate_iops=320000|server.policy=sandman",
    ]
    for t in tasks:
        assert isinstance(t.config, ServerRunConfig) and t.config.seed == t.seed
        assert t.config.workload.duration_s == 0.003 and t.config.server.policy == t.axes["server.policy"]
        assert t.config.workload.rate_iops == t.axes["workload.rate_iops"]
    # the scenario's per-policy defaults apply as with `stacksim run`
    assert tasks[1].config.policy == {"coarse_first_s": 0.01}
    # a point is exactly the run `stacksim run --scenario server-stable --set ...` would make
    same = resolve_server(
        "server-stable",
        {
            "workload.duration_s": "0.003",
            "workload.warmup_s": "0.001",
            "workload.rate_iops": "320000",
            "server.policy": "sandman",
        },
        seed=tasks[3].seed,
    )
    assert same == tasks[3].config


def test_rows_have_identity_metrics_config_and_cdf(local_results):
    rows = read_results(local_results)
    assert len(rows) == 4
    for r in rows:
        assert r["sweep"] == "tiny_server" and r["completion"] == r["server.policy"]
        for m in METRICS:
            assert isinstance(r[m], (int, float)), m
        cfg = ServerRunConfig.model_validate(json.loads(r["config"]))
        assert cfg.seed == r["seed"] and cfg.workload.rate_iops == r["workload.rate_iops"]
        cdf = json.loads(r["cdf"])
        assert len(cdf["pct"]) == len(cdf["read_us"]) and cdf["read_us"] == sorted(cdf["read_us"])
        assert r["latency_us.p50"] == pytest.approx(cdf["read_us"][cdf["pct"].index(50.0)], abs=1e-3)
    by = {(r["workload.rate_iops"], r["server.policy"]): r for r in rows}
    # the policies differ as they should: static polls 48 cores, SANDMAN runs the light load on one
    assert by[(40000, "spdk-static")]["active_cores_mean"] == pytest.approx(48.0)
    assert by[(40000, "sandman")]["active_cores_mean"] < 3
    assert by[(40000, "sandman")]["power_w.system"] < by[(40000, "spdk-static")]["power_w.system"] - 200


def test_dask_local_cluster_gives_identical_rows(local_results, tmp_path):
    pytest.importorskip("distributed", reason="Dask distributed is not installed")
    out = tmp_path / "dask.csv"
    outcome = execute(tiny_tasks(tmp_path), out, local_cluster=2, progress=False)
    assert outcome.computed == 4
    assert strip_timing(read_results(out)) == strip_timing(read_results(local_results))


def test_resume_skips_stored_runs(local_results, tmp_path):
    out = tmp_path / "r.csv"
    out.write_bytes(local_results.read_bytes())
    tasks = tiny_tasks(tmp_path)
    outcome = execute(tasks, out, jobs=1, progress=False, fn=lambda t: pytest.fail("stored run recomputed"))
    assert outcome.reused == 4 and outcome.computed == 0


def test_bad_axis_key_fails_before_running(tmp_path, capsys, monkeypatch):
    ran = []
    monkeypatch.setattr("scenarios.studies.sweeps.runner.run_task", lambda t: ran.append(t))
    monkeypatch.setattr("scenarios.studies.sweeps.runner.simulate", lambda *a, **k: ran.append(a))
    out = tmp_path / "out.csv"
    bad = tmp_path / "bad.yaml"
    bad.write_text(TINY.replace("server.policy:", "server.polcy:"))
    assert cli_sweep.main(["sweep", str(bad), "-o", str(out)]) == 2
    err = capsys.readouterr().err
    assert "axis 'server.polcy'" in err and "server.polcy: unknown key" in err and err.count("\n") == 1
    assert not ran and not out.exists() and not journal_dir(out).exists()
    for axis, needle in (
        ("policy.t_healthi: [0.7]", "axis 'policy.t_healthi'"),
        ("workload.rate_iopz: [1000]", "axis 'workload.rate_iopz'"),
        ("workload.rate_iops: [-5]", "axis 'workload.rate_iops' = -5"),
        ("variant: {a: {policy.sleep: cstate}, b: {policy.slep: freq}}", r"axis 'variant' = b: .*policy.slep"),
    ):
        text = TINY.replace("server.policy: [spdk-static, sandman]", axis).replace(
            "set: {", "set: {server.policy: sandman, "
        )
        if axis.startswith("workload.rate_iops:"):  # the bad axis replaces the good one (a key once)
            text = text.replace("  workload.rate_iops: [40000, 320000]\n", "", 1)
        with pytest.raises(ConfigError, match=needle):
            tiny_tasks(tmp_path, text)
    assert not ran


def test_efficiency_and_report_on_server_results(local_results):
    rows = read_results(local_results)
    tiles = efficiency_map(
        rows, x="workload.rate_iops", y="sweep", policy="server.policy", metric="energy_j", lower_is_better=True
    )
    assert [t["x"] for t in tiles] == [40000, 320000]
    assert all(t["best"] == "sandman" and t["second"] == "spdk-static" for t in tiles)
    titles = [t for t, _ in build_figures(rows, x="sweep", y="workload.rate_iops", policy="server.policy")]
    assert {"System power", "Efficiency map", "Latency CDFs"} <= set(titles)


def test_shipped_server_sweeps_plan():
    sweep, where = load_sweep("server_stable")
    tasks = plan(sweep, where=where)
    assert len(tasks) == 66 and {t.config.server.policy for t in tasks} == {
        "spdk-static",
        "linux",
        "governor",
        "dynamic",
        "hybrid",
        "sandman",
    }
    assert sorted({t.config.workload.rate_iops for t in tasks}) == [10_000 * 2**k for k in range(11)]
    assert {t.config.workload.duration_s for t in tasks} == {0.1}
    sweep, where = load_sweep("server_burst_ablation")
    tasks = plan(sweep, where=where)
    assert len(tasks) == 2**7 * 2
    switches = (
        "sleep",
        "burst_signal",
        "wakeup",
        "hybrid_polling",
        "sibling_scheduling",
        "burst_detection",
        "consolidation",
    )
    assert len({tuple(t.config.policy[k] for k in switches) for t in tasks}) == 2**7
    for t in tasks:
        assert t.config.server.policy == "sandman" and t.config.workload.kind == "burst"
        assert t.config.policy["coarse_interval_s"] == t.config.workload.time_scale  # 1 s x time_scale


def _burst_load_in_worker(junk: int) -> dict:
    garbage = [object() for _ in range(junk)]  # a different heap history than the parent's
    cfg = resolve_server(
        "server-burst",
        {"server.policy": "sandman", "policy.burst_signal": "load", "workload.time_scale": "0.002"},
        seed=3,
    )
    r = simulate(cfg)
    del garbage
    return {"summary": r["summary"], "events": r["sim"]["events"]}


def test_a_run_does_not_depend_on_the_process():
    """Thread sets are iterated in insertion order, not by object address (the load-signal burst
    detector once flagged threads in address order, so a point differed between processes)."""
    here = _burst_load_in_worker(0)
    with ProcessPoolExecutor(2) as ex:
        there = list(ex.map(_burst_load_in_worker, [10, 12345]))
    assert here["summary"]["burst_detection"]["decisions"] > 0
    for r in there:
        assert json.dumps(r, sort_keys=True) == json.dumps(here, sort_keys=True)


def test_analyze_names_the_server_policy_axis(local_results, capsys):
    assert read_results(local_results)[0]["policy"] in ("spdk-static", "sandman")
    assert cli_sweep.main(["analyze", "efficiency", str(local_results)]) == 0
    out = capsys.readouterr()
    assert "--policy-axis policy" in out.err and "completion" not in out.err
