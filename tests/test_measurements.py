"""Tests for scenarios.inputs.measurements: fio JSON, power logs, measured-point CSVs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scenarios.inputs.measurements import read_fio_json, read_points_csv, read_power_log
from simcore.errors import ConfigError


def lat(mean_ns: float, pct: bool = True) -> dict:
    d = {"min": 5000, "max": 900000, "mean": mean_ns, "stddev": 1234.5, "N": 1000}
    if pct:
        d["percentile"] = {"50.000000": 80896, "99.000000": 150528, "99.990000": 403456}
    return d


def job(name: str, riops: float, wiops: float = 0.0, **opts) -> dict:
    def direction(iops):
        return {
            "io_bytes": int(iops * 4096 * 10),
            "bw": iops * 4,
            "iops": iops,
            "runtime": 10000,
            "total_ios": int(iops * 10),
            "slat_ns": lat(900, False),
            "clat_ns": lat(81234.5),
            "lat_ns": lat(82345.0, False),
        }

    return {
        "jobname": name,
        "groupid": 0,
        "error": 0,
        "job options": opts,
        "read": direction(riops),
        "write": direction(wiops),
        "trim": direction(0),
        "usr_cpu": 12.5,
        "sys_cpu": 40.25,
        "ctx": 123456,
        "majf": 0,
        "minf": 42,
    }


def fio_doc(*jobs, **global_opts) -> str:
    return json.dumps(
        {"fio version": "fio-3.33", "timestamp": 1700000000, "global options": global_opts, "jobs": list(jobs)},
        indent=2,
    )


def write(tmp_path: Path, body: str, name: str = "m.txt") -> Path:
    path = tmp_path / name
    path.write_text(body)
    return path


# --- fio JSON -------------------------------------------------------------------------------------
def test_fio_json_with_leading_text(tmp_path):
    body = (
        "note: both iodepth >= 1 and synchronous I/O engine are selected, queue depth will "
        "be capped at 1\nfio: this platform does not support process shared mutexes\n"
        + fio_doc(job("reads", 96722.3, rw="randread", iodepth="1"), ioengine="pvsync2", bs="4k", iodepth="32")
    )
    path = write(tmp_path, body, "a.json")
    results = read_fio_json(path)
    assert len(results) == 1 and results.files == [str(path)]
    r = results[0]
    assert (r.jobname, r.path, r.line, r.fio_version) == ("reads", str(path), 3, "fio-3.33")
    assert r.read.iops == 96722.3 and r.read.bw_kib_s == pytest.approx(386889.2)
    assert r.read.io_bytes == int(96722.3 * 40960) and r.read.total_ios == 967223
    assert r.read.clat.mean_ns == 81234.5 and r.read.clat.percentiles[99.0] == 150528
    assert r.read.lat.mean_ns == 82345.0 and r.read.lat.percentiles == {}
    assert r.read.slat.mean_ns == 900
    assert (r.usr_cpu, r.sys_cpu, r.ctx, r.minf) == (12.5, 40.25, 123456, 42)
    assert r.options == {"ioengine": "pvsync2", "bs": "4k", "iodepth": "1", "rw": "randread"}
    assert "read 96722 IOPS" in r.describe()


def test_fio_json_many_files_and_documents(tmp_path):
    a = write(tmp_path, fio_doc(job("r1", 1000), job("r2", 2000)), "a.json")
    b = write(tmp_path, fio_doc(job("w", 0, 500)) + "\n" + fio_doc(job("w2", 0, 700)), "b.json")
    results = read_fio_json([a, b])
    assert [r.jobname for r in results] == ["r1", "r2", "w", "w2"]
    assert results[3].line == fio_doc(job("w", 0, 500)).count("\n") + 2
    text = results.describe()
    assert text.startswith("fio JSON: 2 files, 4 jobs") and "read iops 3000" in text
    assert "write iops 1200" in text


def test_fio2_microsecond_latencies(tmp_path):
    j = job("old", 10)
    j["read"] = {
        "iops": 10,
        "bw": 40,
        "io_bytes": 409600,
        "runtime": 10000,
        "clat": {"min": 5, "max": 90, "mean": 20.5, "stddev": 1.0, "percentile": {"99.000000": 80}},
    }
    r = read_fio_json(write(tmp_path, fio_doc(j)))[0]
    assert r.read.clat.mean_ns == 20500 and r.read.clat.percentiles[99.0] == 80000


@pytest.mark.parametrize(
    "body, msg",
    [
        ("fio: some error, no json\n", r"m.txt: no JSON object found"),
        ('text\n{\n  "jobs": [\n  }\n', r"m.txt:4: invalid fio JSON"),
        ('{"fio version": "x"}\n', r"m.txt:1: no 'jobs' array"),
        (
            'hdr\n{"jobs": [{"jobname": "j", "read": {"iops": "fast"}}]}\n',
            r"m.txt:2: jobs\[0\].read.iops: expected a number",
        ),
        ('{"jobs": [{"read": {}}]}\n', r"m.txt:1: jobs\[0\]: expected a job object with a 'jobname'"),
    ],
)
def test_fio_json_errors(tmp_path, body, msg):
    with pytest.raises(ConfigError, match=msg):
        read_fio_json(write(tmp_path, body))


def test_fio_json_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="fio JSON output not found: .*nope.json"):
        read_fio_json(tmp_path / "nope.json")
    with pytest.raises(ConfigError, match="no files"):
        read_fio_json([])


# --- power logs -----------------------------------------------------------------------------------
POWERSTAT = """\
Running for 4.0 seconds (4 samples at 1.0 second intervals).
Power measurements will start in 0 seconds time.

  Time    User  Nice   Sys  Idle    IO  Run Ctxt/s  IRQ/s Fork Exec Exit  Watts
23:59:58   0.5   0.0   0.2  99.2   0.0    1    259    125    0    0    0  10.00
23:59:59   0.2   0.0   0.2  99.5   0.0    1    240    115    0    0    0  12.00
00:00:00   0.2   0.0   0.2  99.5   0.0    1    240    115    0    0    0  14.00
00:00:01   0.2   0.0   0.2  99.5   0.0    1    240    115    0    0    0  16.00
-------- ----- ----- ----- ----- ----- ---- ------ ------ ---- ---- ---- ------
 Average   0.3   0.0   0.2  99.4   0.0  1.0  255.3  122.1  0.0  0.0  0.0  13.00
  StdDev   0.1   0.0   0.0   0.1   0.0  0.0   14.8    6.9  0.0  0.0  0.0   2.24
-------- ----- ----- ----- ----- ----- ---- ------ ------ ---- ---- ---- ------
Summary:
System:  13.00 Watts on average with standard deviation 2.24
"""


def ipmi_reading(watts: int, stamp: str | None) -> str:
    text = f"""
    Instantaneous power reading:                   {watts} Watts
    Minimum during sampling period:                 {watts - 10} Watts
    Maximum during sampling period:                {watts + 20} Watts
    Average power reading over sample period:      {watts + 1} Watts
"""
    if stamp:
        text += f"    IPMI timestamp:                           {stamp}\n"
    return (
        text
        + """    Sampling period:                          00000001 Seconds.
    Power reading state is:                   activated

"""
    )


def test_powerstat(tmp_path):
    log = read_power_log(write(tmp_path, POWERSTAT))
    assert log.format == "powerstat"
    assert log.samples == ((0.0, 10.0), (1.0, 12.0), (2.0, 14.0), (3.0, 16.0))  # across midnight
    assert log.mean_w == 13.0 and log.duration_s == 3.0
    assert "4 samples" in log.describe() and "mean 13.0 W" in log.describe()


def test_powerstat_bad_row(tmp_path):
    path = write(tmp_path, POWERSTAT.replace("  14.00", "  lots"))
    with pytest.raises(ConfigError, match=rf"{path.name}:7: Watts 'lots' is not a number"):
        read_power_log(path)
    path = write(tmp_path, POWERSTAT.replace("    0  12.00", "  12.00"))
    with pytest.raises(ConfigError, match=rf"{path.name}:6: powerstat row has 12 columns"):
        read_power_log(path)


def test_ipmi_concatenated_with_timestamps(tmp_path):
    body = "".join(ipmi_reading(w, f"Thu Jan  1 00:00:{s:02d} 2020") for w, s in ((220, 0), (230, 2), (240, 5)))
    log = read_power_log(write(tmp_path, body))
    assert log.format == "ipmi"
    assert log.samples == ((0.0, 220.0), (2.0, 230.0), (5.0, 240.0))
    assert log.reported == {"min_w": 210.0, "max_w": 260.0, "avg_w": 231.0}
    assert log.mean_w == 230.0


def test_ipmi_without_timestamps_uses_interval(tmp_path):
    body = "Mon Jan 1 00:00:00 UTC 2024\n" + ipmi_reading(100, None) + ipmi_reading(300, None)
    log = read_power_log(write(tmp_path, body), interval_s=0.5)
    assert log.samples == ((0.0, 100.0), (0.5, 300.0))
    with pytest.raises(ConfigError, match=r"m.txt:2: instantaneous power -5 is below 0"):
        read_power_log(write(tmp_path, ipmi_reading(-5, None)))


def test_csv_power(tmp_path):
    log = read_power_log(write(tmp_path, "time,watts\n10.0,50\n10.5,70\n# gap\n11.0,60\n"))
    assert log.format == "csv" and log.samples == ((0.0, 50.0), (0.5, 70.0), (1.0, 60.0))
    assert read_power_log(write(tmp_path, "0,5\n1,7\n", "n.csv")).mean_w == 6.0
    with pytest.raises(ConfigError, match=r"m.txt:3: time 0.5 s goes backwards"):
        read_power_log(write(tmp_path, "1,5\n2,5\n0.5,5\n"))
    with pytest.raises(ConfigError, match=r"m.txt:2: expected 2 columns"):
        read_power_log(write(tmp_path, "1,5\n2,5,6\n"))


def test_power_unknown_and_empty(tmp_path):
    with pytest.raises(ConfigError, match="cannot tell the power log format"):
        read_power_log(write(tmp_path, "hello\n"))
    with pytest.raises(ConfigError, match=r"no power samples found \(csv\)"):
        read_power_log(write(tmp_path, "time,watts\n"))
    with pytest.raises(ConfigError, match="unknown power log format 'rapl'"):
        read_power_log(write(tmp_path, "1,2\n"), "rapl")


# --- measured points ------------------------------------------------------------------------------
POINTS = """\
# measured on host A
rw,bs,iodepth,cpu.governor,metric.latency_us.mean,measured.iops,metric.power_w
randread,4k,1,performance,81.2,12000,
randread,4k,32,"performance",95.5,310000,64.5
"""


def test_points_csv(tmp_path):
    points = read_points_csv(write(tmp_path, POINTS))
    assert points.config_columns == ["rw", "bs", "iodepth", "cpu.governor"]
    assert points.metric_names == ["latency_us.mean", "iops", "power_w"]
    assert points[0] == {
        "line": 3,
        "config": {"rw": "randread", "bs": "4k", "iodepth": "1", "cpu.governor": "performance"},
        "metrics": {"latency_us.mean": 81.2, "iops": 12000.0},
    }
    assert points[1]["metrics"]["power_w"] == 64.5
    assert "2 points" in points.describe()


@pytest.mark.parametrize(
    "body, msg",
    [
        ("bs,iodepth\n4k,1\n", r"m.txt:1: no metric columns"),
        ("bs,metric.iops,measured.iops\n4k,1,2\n", r"m.txt:1: duplicate column 'measured.iops'"),
        ("bs,metric.\n4k,1\n", r"m.txt:1: metric column 'metric.' has no metric name"),
        ("bs,metric.iops\n4k,fast\n", r"m.txt:2: metric 'metric.iops' 'fast' is not a number"),
        ("bs,metric.iops\n\n4k,1,2\n", r"m.txt:3: 3 fields, the header has 2"),
        ("bs,metric.iops\n4k,\n", r"m.txt:2: no metric value"),
        ("bs,metric.iops\n4k,inf\n", r"m.txt:2: .* not a finite number"),
        ("# only a comment\n", r"m.txt: empty measured points CSV"),
    ],
)
def test_points_errors(tmp_path, body, msg):
    with pytest.raises(ConfigError, match=msg):
        read_points_csv(write(tmp_path, body))
