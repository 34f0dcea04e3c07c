"""A full machine (issue 44): on a host composed from presets as a new user would (a Xeon Silver
4210R and eight 980 PROs), ten fio processes of io_uring 4 KiB random reads at depth 128 on one SSD
(1,280 IOs outstanding) keep either the device or the CPUs busy, whatever the IO scheduler: a
scheduler's ceiling is its lock and its CPU time, never an idle machine."""

from __future__ import annotations

import pytest

from scenarios.config.host import resolve
from scenarios.inputs.fio.parser import job_from_options
from scenarios.run.simulate import simulate
from tests.conftest import composed_platform_file

PROCS = 10
JOB = {
    "rw": "randread",
    "bs": "4k",
    "ioengine": "io_uring",
    "iodepth": "128",
    "numjobs": str(PROCS),
    "direct": "1",
    "filename": "/dev/nvme0n1",
    "group_reporting": "1",
    "time_based": "1",
    "runtime": "8ms",
    "ramp_time": "4ms",
}


@pytest.fixture(scope="module")
def platform_file(tmp_path_factory):
    return composed_platform_file(tmp_path_factory.mktemp("full"), "xeon-silver-4210r", "samsung-980pro", 8)


@pytest.mark.parametrize("sched", ["none", "mq-deadline", "kyber", "bfq"])
def test_1280_ios_outstanding_keep_the_device_or_the_cpus_busy(platform_file, sched):
    cfg = resolve(platform=platform_file, jobs=[job_from_options(JOB, name="t")], sets={"queue.scheduler": sched})
    out = simulate(cfg)
    s = out["summary"]
    util = max(d["util"] for d in out["disk_util"]) / 100
    cpus_busy = s["cpu_utilization"] * cfg.platform.cpu.logical_cpus
    assert util > 0.9 or cpus_busy > 0.9 * PROCS, f"{sched}: device {util:.0%} busy, {cpus_busy:.1f} CPUs busy"
    assert s.get("cpu_power_limit", {}).get("throttled_fraction", 0.0) == 0.0  # under its limit: never throttled
