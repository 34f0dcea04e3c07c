"""``stacksim validate --measured FIO.json`` simulates the job fio ran (its ``global options`` +
``job options``), refuses what it cannot know or model, and adds up ungrouped clones."""

import copy
import json

import pytest

from scenarios.studies.validation import PointRunner, load_measured
from simcore.errors import ConfigError
from stacksim.cli import main

PLAT = "optane900p-e3-1230v5"


def fio_doc(global_opts, jobs):
    """A fio 3.x JSON document (the fields fio writes; values of a plausible run)."""
    return {
        "fio version": "fio-3.33",
        "timestamp": 1700000000,
        "timestamp_ms": 1700000000000,
        "time": "Tue Nov 14 22:13:20 2023",
        "global options": global_opts,
        "jobs": jobs,
        "disk_util": [
            {
                "name": "nvme0n1",
                "read_ios": 1000,
                "write_ios": 0,
                "read_merges": 0,
                "write_merges": 0,
                "read_ticks": 80,
                "write_ticks": 0,
                "in_queue": 80,
                "util": 99.0,
            }
        ],
    }


def fio_job(name, job_opts=None, iops=90000.0, mean_ns=10500.0, n=1_000_000, ctx=1_000_010):
    lat = {"min": 8000, "max": 90000, "mean": mean_ns, "stddev": 400.0, "N": n}
    clat = dict(lat, percentile={"50.000000": int(mean_ns), "99.000000": int(mean_ns * 1.2)})
    empty = {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0}
    return {
        "jobname": name,
        "groupid": 0,
        "error": 0,
        "eta": 0,
        "elapsed": 11,
        "job options": dict({"name": name}, **(job_opts or {})),
        "read": {
            "io_bytes": n * 4096,
            "io_kbytes": n * 4,
            "bw_bytes": int(iops * 4096),
            "bw": int(iops * 4),
            "iops": iops,
            "runtime": 10000,
            "total_ios": n,
            "short_ios": 0,
            "drop_ios": 0,
            "slat_ns": empty,
            "clat_ns": clat,
            "lat_ns": lat,
        },
        "write": {
            "io_bytes": 0,
            "bw": 0,
            "iops": 0.0,
            "runtime": 0,
            "total_ios": 0,
            "slat_ns": empty,
            "clat_ns": empty,
            "lat_ns": empty,
        },
        "usr_cpu": 5.0,
        "sys_cpu": 30.0,
        "ctx": ctx,
        "majf": 0,
        "minf": 30,
    }


GLOBAL = {
    "filename": "/dev/nvme0n1",
    "direct": "1",
    "rw": "randread",
    "bs": "4k",
    "runtime": "10",
    "time_based": "1",
    "group_reporting": "1",
}


def write(tmp_path, doc, name="fio.json"):
    path = tmp_path / name
    path.write_text("note: fio prints this before the JSON\n" + json.dumps(doc, indent=1))
    return path


def test_the_jsons_job_is_simulated_not_the_default(tmp_path):
    doc = fio_doc(dict(GLOBAL, ioengine="libaio"), [fio_job("qd8", {"iodepth": "8", "bs": "8k", "numjobs": "2"})])
    base = tmp_path / "base.fio"  # a base job that must NOT be used: the JSON says what ran
    base.write_text("[b]\nrw=write\nbs=64k\nioengine=psync\ndirect=1\nruntime=1\n")
    (pt,) = load_measured([write(tmp_path, doc)], base_job=str(base))
    assert pt.fio_job and pt.config["ioengine"] == "libaio"
    cfg = PointRunner(platform=PLAT, job_file=str(base), runtime_ms=5, sets={"queue.io_poll": "0"}).config(pt)
    (job,) = cfg.jobs
    assert (job.ioengine, job.iodepth, job.bs_read_bytes, job.numjobs, job.rw) == ("libaio", 8, 8192, 2, "randread")
    assert job.runtime_ns == 5_000_000 and job.ramp_time_ns == 10_000_000  # the simulated length, not fio's


def test_run_wide_sets_apply_and_the_jsons_options_win(tmp_path):
    doc = fio_doc(dict(GLOBAL, ioengine="pvsync2"), [fio_job("p", {"hipri": "1"})])
    (pt,) = load_measured([write(tmp_path, doc)])
    cfg = PointRunner(platform=PLAT, runtime_ms=5, sets={"queue.io_poll": "1", "bs": "16k", "numjobs": "3"}).config(
        pt, {"kernel.ctx_switch_cycles": 3000}
    )
    (job,) = cfg.jobs
    assert job.hipri and job.numjobs == 3  # --set numjobs: the JSON did not set it
    assert job.bs_read_bytes == 4096  # the JSON's bs wins over the run-wide --set
    assert cfg.queue.io_poll and cfg.platform.kernel.ctx_switch_cycles == 3000


@pytest.mark.parametrize(
    "global_opts, job_opts, message",
    [
        # fio's default direct=0: the page cache, except for io_uring's O_DSYNC buffered writes
        (
            dict({k: v for k, v in GLOBAL.items() if k != "direct"}, ioengine="io_uring", rw="randwrite"),
            {"sync": "dsync"},
            "O_DSYNC",
        ),
        (dict(GLOBAL, ioengine="posixaio"), {}, "ioengine 'posixaio' is not modelled"),
        (dict(GLOBAL, ioengine="pvsync2"), {"verify": "md5", "verify_async": "-2"}, "verify_async"),
        (dict(GLOBAL, ioengine="pvsync2"), {"fsync": "4"}, "fsync"),
    ],
)
def test_options_that_cannot_be_modelled_are_refused(tmp_path, capsys, global_opts, job_opts, message):
    path = write(tmp_path, fio_doc(global_opts, [fio_job("j", job_opts)]))
    rc = main(["validate", "--platform", PLAT, "--measured", str(path), "--runtime-ms", "2"])
    err = capsys.readouterr().err
    assert rc == 2 and message in err and "fio.json:2" in err and "Traceback" not in err


def test_json_without_options_needs_the_job_file(tmp_path, capsys):
    doc = fio_doc({}, [fio_job("bare")])
    for j in doc["jobs"]:
        del j["job options"]
    path = write(tmp_path, doc)
    rc = main(["validate", "--platform", PLAT, "--measured", str(path), "--runtime-ms", "2"])
    err = capsys.readouterr().err
    assert rc == 2 and "no job options" in err and "--job" in err
    job = tmp_path / "ran.fio"
    job.write_text("[ran]\nrw=randread\nbs=8k\nioengine=pvsync2\ndirect=1\nruntime=1\n")
    (pt,) = load_measured([path], base_job=str(job))
    assert not pt.fio_job and pt.config == {}
    (sim,) = PointRunner(platform=PLAT, job_file=str(job), runtime_ms=2).config(pt).jobs
    assert sim.bs_read_bytes == 8192 and sim.name == "ran"


def test_clones_without_group_reporting_are_added_up(tmp_path):
    opts = {k: v for k, v in GLOBAL.items() if k != "group_reporting"}
    doc = fio_doc(
        dict(opts, ioengine="pvsync2"),
        [
            fio_job("c", {"numjobs": "2"}, iops=40000.0, mean_ns=10000.0, n=400_000, ctx=400_000),
            fio_job("c", {"numjobs": "2"}, iops=60000.0, mean_ns=12000.0, n=600_000, ctx=600_000),
        ],
    )
    (pt,) = load_measured([write(tmp_path, doc)])
    assert pt.metrics["iops"] == 100000.0
    assert pt.metrics["latency_us.mean"] == pytest.approx((0.4 * 10.0 + 0.6 * 12.0))
    assert pt.metrics["context_switches_per_io"] == pytest.approx(1.0)
    assert "latency_us.p50" not in pt.metrics  # percentiles of clones cannot be added up
    short = copy.deepcopy(doc)
    short["jobs"].pop()
    with pytest.raises(ConfigError, match="group_reporting=1"):
        load_measured([write(tmp_path, short, "short.json")])


def test_stacksims_own_json_validates_against_itself(tmp_path, capsys):
    """Round trip: a run's fio-shaped JSON, validated with the same length and seed, is the same
    simulation, so every error is 0 (percentiles: within fio's whole nanoseconds)."""
    out = tmp_path / "run.json"
    assert (
        main(
            [
                "run",
                "--set",
                "runtime=6ms",
                "--set",
                "ramp_time=10ms",
                "--set",
                "ioengine=io_uring",
                "--set",
                "iodepth=4",
                "--seed",
                "7",
                "--json",
                str(out),
                "--quiet",
            ]
        )
        == 0
    )
    capsys.readouterr()
    rj = tmp_path / "v.json"
    rc = main(
        [
            "validate",
            "--platform",
            PLAT,
            "--measured",
            str(out),
            "--runtime-ms",
            "6",
            "--ramp-ms",
            "10",
            "--json",
            str(rj),
        ]
    )
    assert rc == 0, capsys.readouterr().err
    rows = {r["metric"]: r["error_pct"] for r in json.loads(rj.read_text())["rows"]}
    assert abs(rows["iops"]) < 1e-9 and abs(rows["latency_us.mean"]) < 1e-9
    assert abs(rows["latency_us.p99"]) < 0.01


def test_the_jsons_filename_keeps_the_job_on_its_ssd(tmp_path):
    """A job measured on one SSD of eight is simulated on that SSD (issue 46: dropping filename
    striped it over all eight, 3x the measured IOPS)."""
    doc = fio_doc(dict(GLOBAL, ioengine="io_uring", filename="/dev/nvme3n1"), [fio_job("one", {"numjobs": "4"})])
    (pt,) = load_measured([write(tmp_path, doc)])
    assert pt.config["filename"] == "/dev/nvme3n1"
    runner = PointRunner(platform=PLAT, runtime_ms=2, ramp_ms=1, sets={"ssd_count": "8"})
    (job,) = runner.config(pt).jobs
    assert job.filename == ("/dev/nvme3n1",)
    from scenarios.run.assembly import build_run

    _host, fio, _r, _e = build_run(runner.config(pt))
    assert {d for th in fio.threads for d in th.devices_used()} == {3}
