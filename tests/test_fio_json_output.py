"""``stacksim run --json``: the fio-shaped part (fio 3.x ``--output-format=json``), agreement of
``jobs[]`` with ``summary``, and reading it back with stacksim's own fio JSON reader."""

import csv
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models.ioengines.iostats import DirStats
from models.os.block.request import Request
from scenarios.inputs.fio.output import SAMPLE_WINDOW_NS, _direction, fio_options, lat_object
from scenarios.inputs.fio.parser import job_from_options
from scenarios.inputs.measurements import read_fio_json
from simcore.stats import FIO_PERCENTILES, PLAT_REL_ERROR, LatencyStats
from stacksim.cli import main

PLAT = "optane900p-e3-1230v5"
FIO_PCT_KEYS = [f"{p:.6f}" for p in FIO_PERCENTILES]


def run_json(tmp_path, *sets, job=None, records=False):
    out = tmp_path / "r.json"
    args = ["run", *([job, "--platform", PLAT] if job else []), "--json", str(out), "--quiet"]
    if records:
        args += ["--records", str(tmp_path / "r.csv")]
    for s in sets:
        args += ["--set", s]
    assert main(args) == 0
    return json.loads(out.read_text())


def test_top_level_fields_like_fio(tmp_path):
    r = run_json(tmp_path, "runtime=10ms", "ramp_time=2ms")
    assert r["fio version"].startswith("stacksim-") and "fio-3" in r["fio version"]
    assert isinstance(r["timestamp"], int) and isinstance(r["timestamp_ms"], int) and r["time"]
    assert r["global options"]["ioengine"] == "pvsync2" and r["global options"]["rw"] == "randread"
    job = r["jobs"][0]
    assert job["jobname"] == "randread-4k" and job["groupid"] == 0 and job["error"] == 0
    assert job["job options"]["name"] == "randread-4k"
    for d in ("read", "write", "trim"):
        assert {
            "io_bytes",
            "io_kbytes",
            "bw_bytes",
            "bw",
            "iops",
            "runtime",
            "total_ios",
            "short_ios",
            "drop_ios",
            "slat_ns",
            "clat_ns",
            "lat_ns",
            "bw_min",
            "bw_max",
            "bw_mean",
            "bw_dev",
            "bw_samples",
            "iops_min",
            "iops_max",
            "iops_mean",
            "iops_stddev",
            "iops_samples",
        } <= set(job[d])
    assert (
        job["write"]["total_ios"] == 0 and job["write"]["runtime"] == 0 and "percentile" not in job["write"]["lat_ns"]
    )
    for key in ("usr_cpu", "sys_cpu", "ctx", "majf", "minf", "iodepth_level", "latency_ns", "latency_us", "latency_ms"):
        assert key in job
    (disk,) = r["disk_util"]
    assert disk["name"] == "nvme0n1" and disk["read_ios"] == job["read"]["total_ios"]  # 4 KiB: one command per IO
    assert 0 < disk["util"] <= 100


def test_sync_engine_jobs_agree_with_summary(tmp_path):
    r = run_json(tmp_path, "runtime=15ms", "ramp_time=2ms")
    s, rd = r["summary"], r["jobs"][0]["read"]
    assert rd["total_ios"] == s["ios"]
    assert rd["iops"] == pytest.approx(s["iops"], rel=1e-12)
    assert rd["bw_bytes"] == pytest.approx(s["bandwidth_mb_s"] * 1e6, abs=1.0)  # integer B/s, as fio
    # synchronous engine: fio records no slat; clat is the whole call (= lat)
    assert rd["slat_ns"]["N"] == 0 and "percentile" not in rd["slat_ns"]
    assert rd["clat_ns"] == rd["lat_ns"]
    lat = rd["lat_ns"]
    assert lat["mean"] == pytest.approx(s["latency_us"]["mean"] * 1e3, rel=1e-12)
    assert list(lat["percentile"]) == FIO_PCT_KEYS
    for name, key in (("p50", "50.000000"), ("p90", "90.000000"), ("p99", "99.000000"), ("p99_9", "99.900000")):
        assert abs(lat["percentile"][key] - s["latency_us"][name] * 1e3) <= 0.5  # whole ns, as fio
    assert abs(lat["max"] - s["latency_us"]["max"] * 1e3) <= 0.5
    assert r["jobs"][0]["iodepth_level"]["1"] == 100.0


@pytest.mark.parametrize(
    "engine",
    [
        ["ioengine=io_uring"],
        ["ioengine=libaio"],
        [
            "ioengine=io_uring",
            "sqthread_poll=1",
            "hipri=1",
            "queue.io_poll=1",
        ],  # SQPOLL: slat ends at the SQ tail write
    ],
)
def test_async_engine_has_distinct_slat_clat_lat(tmp_path, engine):
    r = run_json(tmp_path, "runtime=5ms", "ramp_time=1ms", "iodepth=8", "iodepth_batch_submit=4", *engine)
    job = r["jobs"][0]
    rd = job["read"]
    slat, clat, lat = rd["slat_ns"], rd["clat_ns"], rd["lat_ns"]
    # fio takes slat when an IO is queued after the ramp (io_u_queued): the IOs in flight when the
    # window opens (at most iodepth) have a clat and a lat in the window but no slat
    assert clat["N"] == lat["N"] == rd["total_ios"] == r["summary"]["ios"] > 0
    assert lat["N"] - 8 <= slat["N"] <= lat["N"]
    assert slat["min"] > 0 and clat["min"] > 0
    # per IO lat = slat + clat; over the window the slat mean leaves out the few IOs queued before it
    exact = slat["N"] == lat["N"]
    assert slat["mean"] + clat["mean"] == pytest.approx(lat["mean"], rel=1e-9 if exact else 0.02)
    assert lat["mean"] == pytest.approx(r["summary"]["latency_us"]["mean"] * 1e3, rel=1e-12)
    assert slat["mean"] < clat["mean"] < lat["mean"]
    levels = job["iodepth_level"]
    assert sum(levels.values()) == pytest.approx(100.0)
    assert levels["8"] > 50.0  # the queue is kept full: most IOs are submitted at depth 8


def test_latency_buckets_are_clat_percentages(tmp_path):
    r = run_json(tmp_path, "runtime=10ms", "ramp_time=2ms")
    job = r["jobs"][0]
    total = sum(job["latency_ns"].values()) + sum(job["latency_us"].values()) + sum(job["latency_ms"].values())
    assert total == pytest.approx(100.0)
    assert list(job["latency_us"]) == ["2", "4", "10", "20", "50", "100", "250", "500", "750", "1000"]
    assert list(job["latency_ms"])[-2:] == ["2000", ">=2000"]
    # the bucket of the median clat holds IOs: fio's key is the upper bound ("20" = 10 to 19 us)
    p50_us = job["read"]["clat_ns"]["percentile"]["50.000000"] / 1000
    edges = [2, 4, 10, 20, 50, 100, 250, 500, 750, 1000]
    key = str(next(e for e in edges if p50_us < e))
    assert job["latency_us"][key] > 0


@pytest.mark.parametrize("group", [False, True])
def test_clones_per_entry_or_grouped_and_sums_equal_totals(tmp_path, group):
    sets = ["runtime=5ms", "ramp_time=1ms", "numjobs=3"] + (["group_reporting=1"] if group else [])
    r = run_json(tmp_path, *sets)
    jobs, s = r["jobs"], r["summary"]
    assert len(jobs) == (1 if group else 3)
    assert all(j["jobname"] == "randread-4k" for j in jobs)
    assert sum(j["read"]["total_ios"] for j in jobs) == s["ios"]
    assert sum(j["read"]["iops"] for j in jobs) == pytest.approx(s["iops"], rel=1e-12)
    assert sum(j["read"]["io_bytes"] for j in jobs) / r["sim"]["measured_s"] / 1e6 == pytest.approx(
        s["bandwidth_mb_s"], rel=1e-12
    )
    mean = sum(j["read"]["lat_ns"]["mean"] * j["read"]["lat_ns"]["N"] for j in jobs) / s["ios"]
    assert mean == pytest.approx(s["latency_us"]["mean"] * 1e3, rel=1e-9)
    assert sum(d["read_ios"] for d in r["disk_util"]) == s["ios"]


def test_bw_and_iops_samples_come_from_500ms_windows(tmp_path):
    """A paced run of 1.6 s: three full 500 ms windows (the last 100 ms are not sampled, as fio),
    each sample the IOs that completed in its window."""
    r = run_json(tmp_path, "runtime=1600ms", "ramp_time=1ms", "rate_iops=1000", "bs=8k", records=True)
    rd = r["jobs"][0]["read"]
    with open(tmp_path / "r.csv") as f:
        done = np.array([float(row["t_complete_ns"]) for row in csv.DictReader(f)])
    t0 = 1e6  # ramp_time
    counts = np.bincount(((done - t0) // SAMPLE_WINDOW_NS).astype(int), minlength=4)[:3]
    iops = np.floor(counts * 2.0)  # per 0.5 s
    assert rd["iops_samples"] == rd["bw_samples"] == 3
    assert rd["iops_min"] == iops.min() and rd["iops_max"] == iops.max()
    assert rd["iops_mean"] == pytest.approx(iops.mean()) and rd["iops_stddev"] == pytest.approx(iops.std(ddof=1))
    assert rd["bw_mean"] == pytest.approx(np.floor(counts * 8192 * 2 / 1024).mean())
    assert rd["iops_mean"] == pytest.approx(1000, rel=0.01)


def _read_done(t_submit: float, t_complete: float, nbytes: int) -> Request:
    """A completed read of ``nbytes`` submitted and completed at these times (ns)."""
    r = Request(0, None, 0, "read", nbytes, 0, 0, False)
    r.t_submit, r.t_complete = t_submit, t_complete
    return r


def test_short_run_has_no_samples_and_says_so():
    recs = [_read_done(i * 1e3, i * 1e3 + 500, 4096) for i in range(100)]
    ds = DirStats(is_async=False)
    ds.add(recs, False, 0.0)
    d = _direction(ds, 300e6)
    assert d["iops_samples"] == d["bw_samples"] == 0
    assert d["iops_mean"] == d["bw_mean"] == 0.0 and d["iops"] == pytest.approx(100 / 0.3)


def test_samples_per_window_synthetic():
    # 1.2 s: windows [0, .5) with 10 IOs, [.5, 1) with 30 IOs; 0.2 s tail with 50 IOs not sampled
    times = [*np.linspace(1e6, 4.9e8, 10), *np.linspace(5.1e8, 9.9e8, 30), *np.linspace(1.01e9, 1.19e9, 50)]
    recs = [_read_done(t - 100, t, 1024) for t in times]
    ds = DirStats(is_async=False)
    ds.add(recs, False, 0.0)
    d = _direction(ds, 1.2e9)
    assert d["iops_samples"] == 2 and d["iops_min"] == 20 and d["iops_max"] == 60
    assert d["iops_mean"] == 40.0 and d["iops_stddev"] == pytest.approx(math.sqrt(800))
    assert d["bw_min"] == 20 and d["bw_max"] == 60  # KiB/s: 10 KiB / 0.5 s


def test_lat_object_shape():
    o = lat_object(LatencyStats.of([1000.4, 2000.0, 3000.6]))
    assert o["min"] == 1000 and o["max"] == 3001 and o["N"] == 3
    assert isinstance(o["min"], int) and all(isinstance(v, int) for v in o["percentile"].values())
    assert o["mean"] == pytest.approx(2000.333, abs=1e-3) and o["stddev"] == pytest.approx(1000.1, rel=1e-3)
    # fio's histogram: the middle of 2000's bucket (2000-2015 ns), within 1/128 of the value
    assert o["percentile"]["50.000000"] == 2008 and abs(2008 - 2000) <= 2000 * PLAT_REL_ERROR


def test_round_trip_through_stacksims_fio_json_reader(tmp_path):
    r = run_json(tmp_path, "runtime=5ms", "ramp_time=1ms", "ioengine=libaio", "iodepth=4")
    (res,) = read_fio_json(tmp_path / "r.json")
    job = r["jobs"][0]
    assert res.fio_version == r["fio version"] and res.jobname == job["jobname"]
    assert res.read.iops == job["read"]["iops"] and res.read.total_ios == job["read"]["total_ios"]
    assert res.read.lat.mean_ns == job["read"]["lat_ns"]["mean"] and res.read.slat.n == job["read"]["slat_ns"]["N"]
    assert res.read.clat.percentiles[99.0] == job["read"]["clat_ns"]["percentile"]["99.000000"]
    assert res.options["ioengine"] == "libaio" and res.options["iodepth"] == "4"
    assert res.ctx == job["ctx"] and res.usr_cpu == job["usr_cpu"]


def test_options_in_json_rebuild_the_simulated_job(tmp_path):
    r = run_json(tmp_path, "runtime=3ms", "ramp_time=1ms", "bs=8k", "numjobs=2", "group_reporting=1")
    opts = {**r["global options"], **r["jobs"][0]["job options"]}
    name = opts.pop("name")
    job = job_from_options(opts, name=name)
    assert job.bs_read_bytes == 8192 and job.numjobs == 2 and job.ioengine == "pvsync2" and job.runtime_ns == 3_000_000


_OPTS = st.fixed_dictionaries(
    {
        "rw": st.sampled_from(["read", "randread", "write", "randwrite", "randrw", "rw"]),
        "bs": st.integers(1, 64).map(lambda n: f"{n * 512}"),
        "ioengine": st.sampled_from(["psync", "pvsync2", "libaio", "io_uring"]),
        "iodepth": st.integers(1, 64).map(str),
        "numjobs": st.integers(1, 8).map(str),
        "direct": st.just("1"),
        "runtime": st.sampled_from(["1", "20ms", "1500us", "2m"]),
        "ramp_time": st.sampled_from(["0", "100ms", "3s"]),
        "rwmixread": st.integers(0, 100).map(str),
    },
    optional={
        "time_based": st.just("1"),
        "rate_iops": st.sampled_from(["500", "1000,200"]),
        "thinktime": st.sampled_from(["10", "2ms"]),
        "size": st.sampled_from(["1g", "4m"]),
        "offset": st.sampled_from(["4k", "1m"]),
        "iodepth_batch_submit": st.integers(0, 16).map(str),
        "iodepth_batch_complete_min": st.integers(0, 8).map(str),
        "iodepth_batch_complete_max": st.integers(0, 16).map(str),
        "bssplit": st.sampled_from(["4k/50:8k/50", "4k/100,64k/25:128k/75"]),
        "cpus_allowed": st.sampled_from(["0-1", "2,5"]),
    },
)


@settings(max_examples=40, deadline=None)
@given(_OPTS)
def test_fio_options_round_trip(options):
    job = job_from_options(options, name="j")
    again = job_from_options(fio_options(job), name="j")
    skip = {"name", "source", "ignored_options"}
    assert again.model_dump(exclude=skip) == job.model_dump(exclude=skip)


@pytest.mark.parametrize(
    "sets, split, merges",
    [
        (["bs=256k", "queue.max_sectors_kb=128"], 2, False),  # each IO is split into two commands
        (
            ["rw=read", "ioengine=libaio", "iodepth=8", "iodepth_batch_submit=8", "iodepth_batch_complete_min=8"],
            1,
            True,
        ),
    ],
)
def test_disk_util_counts_commands_splits_and_merges(tmp_path, sets, split, merges):
    r = run_json(tmp_path, "runtime=3ms", "ramp_time=1ms", *sets)
    (disk,) = r["disk_util"]
    ios = r["jobs"][0]["read"]["total_ios"]
    assert disk["read_ios"] + disk["read_merges"] == split * ios
    assert (disk["read_merges"] > 0) == merges
    # the summary counts the commands dispatched in the window, disk_util those of the measured IOs
    assert disk["read_ios"] / ios == pytest.approx(r["summary"]["device_commands_per_io"], rel=0.1)
    assert disk["read_sectors"] * 512 == r["jobs"][0]["read"]["io_bytes"]
    assert 0 < disk["util"] <= 100 and disk["in_queue"] == disk["read_ticks"] + disk["write_ticks"]


def test_replay_json_has_async_slat(tmp_path):
    from pathlib import Path

    trace = Path(__file__).resolve().parents[1] / "scenarios/data/traces/msr_sample.csv"
    out = tmp_path / "replay.json"
    assert main(["replay", str(trace), "--platform", PLAT, "--json", str(out), "--quiet"]) == 0
    r = json.loads(out.read_text())
    assert r["fio version"].startswith("stacksim-") and "timestamp" in r
    for d in ("read", "write"):
        o = r["jobs"][0][d]
        assert o["slat_ns"]["N"] == o["clat_ns"]["N"] == o["total_ios"] > 0
        assert o["slat_ns"]["min"] > 0
        assert o["slat_ns"]["mean"] + o["clat_ns"]["mean"] == pytest.approx(o["lat_ns"]["mean"], rel=1e-9)


def test_global_and_job_options_split_like_fio(tmp_path):
    job = tmp_path / "two.fio"
    job.write_text(
        "[global]\nioengine=pvsync2\ndirect=1\nrw=randread\nruntime=3ms\nramp_time=1ms\ntime_based=1\n"
        "[small]\nbs=4k\n[big]\nbs=64k\niodepth=1\n"
    )
    r = run_json(tmp_path, job=str(job))
    g = r["global options"]
    assert g["ioengine"] == "pvsync2" and g["rw"] == "randread" and "bs" not in g
    small, big = r["jobs"]
    assert small["job options"] == {"name": "small", "bs": "4096"} and big["job options"]["bs"] == "65536"
    for entry, size in ((small, 4096), (big, 65536)):
        rebuilt = job_from_options({**g, **{k: v for k, v in entry["job options"].items() if k != "name"}})
        assert rebuilt.bs_read_bytes == size and rebuilt.ioengine == "pvsync2" and rebuilt.runtime_ns == 3_000_000
