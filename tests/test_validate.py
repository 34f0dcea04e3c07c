"""``stacksim validate``: measured points from CSV and fio JSON, the error table, exit codes
(0 within the bound, 1 past it, 2 bad input), and the built-in suites of published figures."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from models.platforms import POLL_ENERGY_FIT
from scenarios.studies.calibrate_poll_energy import run_mode
from scenarios.studies.validation import Point, PointRunner, load_measured, metric_value, suite_points
from simcore.errors import ConfigError
from stacksim import cli_traces

PLAT = "optane900p-e3-1230v5"
FAST = ["--runtime-ms", "15", "--ramp-ms", "5"]


def run_cli(args, capsys):
    rc = cli_traces.main(args)
    out = capsys.readouterr()
    return rc, out.out, out.err


@pytest.fixture(scope="module")
def simulated_points():
    """(hipri, bs) -> summary of the platform itself at the CLI's FAST settings and seed 7."""
    runner = PointRunner(platform=PLAT, runtime_ms=15, ramp_ms=5, seed=7)
    out = {}
    for hipri in ("0", "1"):
        for bs in ("4k", "8k"):
            cfg = {"hipri": hipri, "bs": bs, "queue.io_poll": hipri == "1"}
            out[(hipri, bs)] = runner.summary(Point("p", cfg, {}))
    return out


def write_points(path: Path, simulated, factor: float = 1.0) -> Path:
    lines = ["label,hipri,bs,queue.io_poll,metric.latency_us.mean,metric.iops"]
    for (hipri, bs), s in simulated.items():
        lines.append(
            f"{'poll' if hipri == '1' else 'irq'}-{bs},{hipri},{bs},{int(hipri == '1')},"
            f"{s['latency_us']['mean'] * factor!r},{s['iops'] * factor!r}"
        )
    path.write_text("\n".join(lines) + "\n")
    return path


def test_within_bound_exit_0(tmp_path, simulated_points, capsys):
    csv = write_points(tmp_path / "m.csv", simulated_points, factor=1.02)
    out = tmp_path / "v.json"
    rc, stdout, err = run_cli(
        ["validate", "--platform", PLAT, "--measured", str(csv), "--max-error", "5", "--json", str(out), *FAST], capsys
    )
    assert rc == 0, err
    assert "read measured points" in stdout and "PASS" in stdout
    assert "poll-8k" in stdout and "latency_us.mean" in stdout
    res = json.loads(out.read_text())
    assert len(res["rows"]) == 8 and res["passed"]
    for row in res["rows"]:  # the simulator is 1/1.02 of the "measurements"
        assert row["error_pct"] == pytest.approx(100 * (1 / 1.02 - 1), abs=1e-6)
    assert res["mape_pct"] == pytest.approx(100 * (1 - 1 / 1.02), abs=1e-6)


def test_past_bound_exit_1(tmp_path, simulated_points, capsys):
    csv = write_points(tmp_path / "m.csv", simulated_points, factor=1.2)
    rc, stdout, _ = run_cli(
        ["validate", "--platform", PLAT, "--measured", str(csv), "--max-error", "10", "--metrics", "iops", *FAST],
        capsys,
    )
    assert rc == 1
    assert "FAIL: 4 of 4 values" in stdout and "over the bound" in stdout
    assert "latency_us.mean  " not in stdout  # --metrics selects the rows
    # without a bound there is nothing to fail
    rc, stdout, _ = run_cli(["validate", "--platform", PLAT, "--measured", str(csv), *FAST], capsys)
    assert rc == 0 and "MAPE" in stdout


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--measured", "missing.csv", "--platform", PLAT], "measurements file not found: missing.csv"),
        (["--measured", "MEAS"], "--platform NAME is required"),
        (["--measured", "MEAS", "--platform", "nope"], "unknown platform 'nope'"),
        (["--measured", "MEAS", "--platform", PLAT, "--metrics", "watts"], "not measured at any point"),
        (["--measured", "BADMETRIC", "--platform", PLAT], "metric 'latency_us.median' is not a simulator output"),
        (["--measured", "ZERO", "--platform", PLAT], "needs a finite non-zero value"),
        (["--measured", "BADCOL", "--platform", PLAT], "point irq: "),
        (["--measured", "MEAS", "--platform", PLAT, "--max-error", "-1"], "--max-error"),
        (["--suite", "nope"], "unknown suite 'nope'"),
    ],
)
def test_bad_input_exit_2(extra, message, tmp_path, capsys):
    files = {
        "MEAS": "bs,metric.iops\n4k,90000\n",
        "BADMETRIC": "bs,metric.latency_us.median\n4k,9\n",
        "ZERO": "bs,metric.iops\n4k,0\n",
        "BADCOL": "label,queue.io_pol,metric.iops\nirq,1,90000\n",
    }
    args = []
    for a in extra:
        if a in files:
            p = tmp_path / f"{a.lower()}.csv"
            p.write_text(files[a])
            a = str(p)
        args.append(a)
    rc, _, err = run_cli(["validate", *args, *FAST], capsys)
    assert rc == 2
    assert message in err and "Traceback" not in err


def test_builtin_suites_pass_at_5_percent(capsys):
    rc, stdout, err = run_cli(["validate", "--suite", "calibrated", "--max-error", "5"], capsys)
    assert rc == 0, stdout + err
    assert "poll-vs-interrupt interrupt" in stdout and "io-schedulers bfq write" in stdout
    assert "PASS" in stdout
    # docs/io-schedulers.md's calibration table quotes these rows
    import math
    import re

    cells, errors = {}, []
    for sched, op, meas, pred in re.findall(
        r"^io-schedulers (\S+) (read|write)\s+latency_us\.p50\s+([\d.]+)\s+([\d.]+)", stdout, re.M
    ):
        errors.append(100 * (float(pred) / float(meas) - 1))
        cells.setdefault(sched, []).append(f"{float(meas):.2f} / {float(pred):.2f} ({errors[-1]:+.1f}%)")
    page = (Path(__file__).resolve().parents[1] / "docs" / "io-schedulers.md").read_text(encoding="utf-8")
    assert (
        len(errors) == 8
        and [f"| {s} | {r} | {w} |" for s, (r, w) in cells.items() if f"| {s} | {r} | {w} |" not in page] == []
    )
    assert f"All eight within 5% (rms {math.sqrt(sum(e * e for e in errors) / 8):.1f}%)" in page
    # and docs/traces-and-calibration.md its summary line
    mape, worst = re.search(r"^MAPE ([\d.]+%) over \d+ values; max ([\d.]+%)", stdout, re.M).groups()
    page = (Path(__file__).resolve().parents[1] / "docs" / "traces-and-calibration.md").read_text(encoding="utf-8")
    assert f"`stacksim validate --suite calibrated --max-error 5` passes (MAPE {mape}, max {worst})" in page


def test_suite_points_reproduce_the_calibration_scripts():
    """A suite point simulates exactly what calibrate_poll_energy.run_mode does."""
    point = next(p for p in suite_points("poll-vs-interrupt") if p.label.endswith(" interrupt"))
    ours = PointRunner(platform=None, runtime_ms=30).summary(point)
    theirs = run_mode(POLL_ENERGY_FIT, "interrupt", runtime_ms=30)
    assert ours["latency_us"] == theirs["latency_us"] and ours["iops"] == theirs["iops"]


def test_suite_points_carry_the_shipped_published_figures():
    from scenarios.data import reference

    table1 = reference.values("io_schedulers_ull", "median_latency_4k_qd1")
    points = {p.label: p for p in suite_points("calibrated")}
    assert len(points) == 3 + 2 * len(table1)
    assert points["io-schedulers bfq write"].metrics == {"latency_us.p50": table1["bfq"]["write"]}
    poll = reference.values("poll_vs_interrupt_energy", "latency_iops_4k_1_thread")
    assert points["poll-vs-interrupt interrupt"].metrics == {
        "latency_us.mean": poll["interrupt"]["mean_latency_us"],
        "iops": poll["interrupt"]["iops"],
    }
    with pytest.raises(ConfigError, match="unknown suite 'nope'"):
        suite_points("nope")


FIO_JSON = {
    "fio version": "fio-3.29",
    "global options": {
        "ioengine": "pvsync2",
        "direct": "1",
        "rw": "randread",
        "bs": "4k",
        "runtime": "120",
        "ramp_time": "10",
        "time_based": "1",
        "filename": "/dev/nvme0n1",
        "group_reporting": "1",
    },
    "jobs": [
        {
            "jobname": "poll",
            "groupid": 0,
            "error": 0,
            "job options": {"name": "poll", "hipri": "1", "numjobs": "1"},
            "read": {
                "io_bytes": 1,
                "bw": 470000,
                "iops": 120470.0,
                "runtime": 120000,
                "total_ios": 14456400,
                "clat_ns": {
                    "min": 7000,
                    "max": 90000,
                    "mean": 8050.0,
                    "stddev": 300.0,
                    "N": 14456400,
                    "percentile": {"50.000000": 8000, "90.000000": 8400, "99.000000": 9200, "99.900000": 12000},
                },
                "lat_ns": {"min": 7000, "max": 90000, "mean": 8100.0, "stddev": 300.0, "N": 14456400},
            },
            "write": {"io_bytes": 0, "bw": 0, "iops": 0.0, "runtime": 0, "total_ios": 0},
            "usr_cpu": 20.0,
            "sys_cpu": 80.0,
            "ctx": 120,
            "majf": 0,
            "minf": 20,
        }
    ],
}


def test_fio_json_points(tmp_path, capsys):
    path = tmp_path / "fio.json"
    path.write_text("fio: some note before the JSON\n" + json.dumps(FIO_JSON, indent=1))
    seen = []
    (point,) = load_measured([path], echo=seen.append)
    assert "fio JSON: 1 files, 1 jobs (poll)" in seen[0]
    assert point.metrics["iops"] == 120470.0
    assert point.metrics["latency_us.mean"] == pytest.approx(8.1)  # lat (slat + clat) is what stacksim reports
    assert point.metrics["latency_us.p99"] == pytest.approx(9.2)  # synchronous engine: clat percentiles
    assert point.metrics["context_switches_per_io"] == pytest.approx(120 / 14456400)
    assert point.config["hipri"] == "1" and "name" not in point.config
    assert point.config["filename"] == FIO_JSON["global options"]["filename"]  # the SSD it ran on
    rc, stdout, err = run_cli(
        [
            "validate",
            "--platform",
            PLAT,
            "--measured",
            str(path),
            "--set",
            "queue.io_poll=1",
            "--metrics",
            "latency_us.mean,iops",
            "--max-error",
            "6",
            *FAST,
        ],
        capsys,
    )
    assert rc == 0, stdout + err
    assert "poll" in stdout and "PASS" in stdout


def test_metric_value_paths():
    s = {"iops": 5.0, "latency_us": {"mean": 2.0}, "power_w": {"system": 40.0}, "name": "x"}
    assert metric_value(s, "latency_us.mean") == 2.0
    assert metric_value(s, "power_w.system") == 40.0
    with pytest.raises(ConfigError, match="not a number"):
        metric_value(s, "name")
    with pytest.raises(ConfigError, match="not a simulator output"):
        metric_value(s, "latency_us.p42")


def test_points_csv_with_job_file_and_power_log(tmp_path):
    (tmp_path / "job.fio").write_text("[j]\nrw=randread\nbs=8k\nioengine=pvsync2\ndirect=1\nruntime=1\n")
    (tmp_path / "power.csv").write_text("time,watts\n0,50\n1,52\n")
    csv = tmp_path / "m.csv"
    csv.write_text("label,job,power_log,numjobs,metric.iops\nx,job.fio,power.csv,2,90000\n")
    seen = []
    (pt,) = load_measured([csv], echo=seen.append)
    assert pt.label == "x" and pt.job_file == str(tmp_path / "job.fio")
    assert pt.metrics == {"iops": 90000.0, "power_w.system": 51.0}
    assert any(line.startswith("power log (csv)") for line in seen)
    cfg = PointRunner(platform=PLAT, runtime_ms=5).config(pt)
    job = cfg.jobs[0]
    assert job.bs_read_bytes == 8192 and job.numjobs == 2  # job file, then the point's columns
    assert job.runtime_ns == 5_000_000 and job.ramp_time_ns == 10_000_000  # simulated length, not measured


def test_values_near_zero_are_compared_by_an_absolute_tolerance():
    """fio's 2e-5 context switches per IO against a predicted 0 is agreement, not -100%: a value
    measured below its metric's absolute tolerance is judged by the difference, not in the MAPE."""
    from scenarios.studies.near_zero import ABSOLUTE_TOLERANCE
    from scenarios.studies.validation import Validation, ValidationRow, format_validation

    tol = ABSOLUTE_TOLERANCE["context_switches_per_io"]
    rows = [
        ValidationRow("a", "iops", 100.0, 102.0),
        ValidationRow("a", "context_switches_per_io", 2e-5, 0.0),
        ValidationRow("b", "iops", 100.0, 96.0),
        ValidationRow("b", "context_switches_per_io", 1.0, 0.9),  # not near zero: relative, -10%
    ]
    v = Validation(rows, max_error_pct=12)
    assert v.mape_pct == pytest.approx((2 + 4 + 10) / 3)
    assert v.passed and v.worst.metric == "context_switches_per_io" and v.worst.point == "b"
    text = format_validation(v)
    assert "MAPE 5.33% over 3 values" in text and "-100" not in text
    assert "1 value(s) measured near zero" in text and f"context_switches_per_io +-{tol:g}" in text
    assert "all within" in text and "PASS" in text
    row = v.to_dict()["rows"][1]
    assert row["difference"] == pytest.approx(-2e-5) and row["near_zero_within"] is True
    # a prediction far from a near-zero measurement still fails the bound
    bad = Validation([rows[0], ValidationRow("a", "context_switches_per_io", 2e-5, 0.5)], max_error_pct=12)
    assert not bad.passed and "1 past it" in format_validation(bad) and "FAIL: 1 of 2" in format_validation(bad)


def test_a_measured_zero_is_refused_only_where_a_relative_error_is_needed():
    from scenarios.studies.points import Point
    from scenarios.studies.validation import check_measured_values

    points = [Point(label="p", config={}, metrics={"context_switches_per_io": 0.0, "iops": 1.0})]
    check_measured_values(points, ["context_switches_per_io"], near_zero_ok=True)  # validate: by difference
    with pytest.raises(ConfigError, match="non-zero"):
        check_measured_values(points, ["context_switches_per_io"])  # calibrate fits relative residuals
    with pytest.raises(ConfigError, match="non-zero"):
        check_measured_values([Point(label="p", config={}, metrics={"iops": 0.0})], ["iops"], near_zero_ok=True)
