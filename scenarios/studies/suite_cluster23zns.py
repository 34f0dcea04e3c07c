"""The ``cluster23-zns`` validation suite: the CLUSTER'23 measurements of a WD Ultrastar DC ZN540
shipped with stacksim (:data:`scenarios.data.measurements.CLUSTER23ZNS_DIR`, MIT licence) as measured
points on the ``zn540-e5-2660v4`` platform.

Each point is one row of the artifact's ``summary.csv`` run as the shipped job ``zn540.fio``: job k
in zone k (``offset_increment`` = one 2 GiB zone) over the zone's capacity, the row's engine, block
size, depth and jobs; io_uring with SQPOLL, fixed buffers and registered files, the row's scheduler
as the queue's (``queue.scheduler``), SPDK through its fio plugin. Zones are addressed by bytes, not by
fio's ``zonemode=zbd`` (stacksim does not model zonemode=zbd with SPDK): a run's writes start at the
zone's start, the write pointer of an empty zone, and stay inside it for the simulated
:data:`RUNTIME_MS`, so they are the artifact's sequential zone writes. The measured run lengths are
not simulated (:data:`RUNTIME_MS` after :data:`RAMP_MS`); fio's NUMA pinning is left out (the
platform has one node).

Points and what they check (IOPS and mean latency, submission to completion, within
:data:`TOLERANCE`):

* the **depth sweep**: 4, 8 and 16 KiB random reads in one zone, one job at depth 1-256, SPDK and
  io_uring with ``none`` and ``mq-deadline``;
* the **concurrent readers and writers**: 1-8 jobs at depth 1, each in a zone of its own: random
  reads, and writes of 4 and 16 KiB (SPDK, io_uring with ``none``); SPDK's 14 jobs are reported
  only (:data:`REPORTED_ONLY_JOBS`: fourteen polling threads on the host's fourteen cores, where the
  measured reads fall below eight jobs' and the host, not the device, sets the figure); io_uring's
  14 jobs are left out (with their 14 SQPOLL threads, 28 spinning threads on the platform's 14
  cores: the simulated run ends hardly an IO);
* not here: zone appends (no fio engine of stacksim issues them; tests/test_zns_media.py checks
  the ZN540's append ceiling on the device), the deeper mq-deadline writes (the scheduler's zone
  write locking and merging), the conventional namespaces (other controllers, models not stated).
"""

from __future__ import annotations

import csv

from scenarios.data.measurements import CLUSTER23ZNS_DIR
from scenarios.studies.points import Point

__all__ = [
    "PLATFORM",
    "JOB",
    "RUNTIME_MS",
    "RAMP_MS",
    "TOLERANCE",
    "REPORTED_ONLY_JOBS",
    "SPDK_FILENAME",
    "rows",
    "cluster23zns_points",
]

PLATFORM = "zn540-e5-2660v4"
JOB = CLUSTER23ZNS_DIR / "zn540.fio"
RUNTIME_MS = 20.0
RAMP_MS = 5.0
#: the issue's bar: IOPS and mean latency within 10%
TOLERANCE = {"iops": 0.10, "latency_us.mean": 0.10}
#: job counts reported without a tolerance (see the module docstring)
REPORTED_ONLY_JOBS = (14,)
#: SPDK's fio plugin names the controller and namespace (the artifact's ZN540 was ns 2 of 0000:88:00.0,
#: beside a namespace 1 of unknown size; the preset's zoned namespace is ns 1, models.ssd.namespaces)
SPDK_FILENAME = "trtype=PCIe traddr=0000.88.00.0 ns=1"
#: io_uring as the artifact ran it
IO_URING = {"sqthread_poll": 1, "fixedbufs": 1, "registerfiles": 1}


def rows() -> list[dict[str, str]]:
    """The ZN540's rows of ``summary.csv`` (device ``zns-a``)."""
    with open(CLUSTER23ZNS_DIR / "summary.csv", newline="", encoding="utf-8") as f:
        return [r for r in csv.DictReader(f) if r["device"] == "zns-a"]


def _selected(r: dict[str, str]) -> bool:
    """The suite's rows: one zone's depth sweep and depth-1 concurrency, reads and writes."""
    jobs, qd = int(r["zones_or_jobs"]), int(r["iodepth"])
    if jobs in REPORTED_ONLY_JOBS and r["engine"] != "spdk":
        return False  # 14 fio threads and 14 SQPOLL threads on the platform's 14 cores: hardly an IO ends
    if r["op"] in ("randread", "randreadmq"):
        return jobs == 1 or qd == 1
    return r["op"] == "write" and qd == 1


def cluster23zns_points() -> list[Point]:
    """The suite's points, in the order of ``summary.csv``."""
    out = []
    for r in rows():
        if not _selected(r):
            continue
        jobs = int(r["zones_or_jobs"])
        spdk = r["engine"] == "spdk"
        rw = "randread" if r["op"].startswith("randread") else "write"
        config = {} if spdk else {**IO_URING, "queue.scheduler": r["ioscheduler"]}
        env = {
            "RW": rw,
            "BS": r["bs"],
            "QD": r["iodepth"],
            "JOBS": str(jobs),
            "ENGINE": r["engine"],
            "FILENAME": SPDK_FILENAME if spdk else "/dev/nvme0n1",
            "RUNTIME_MS": f"{RUNTIME_MS:g}",
            "RAMP_MS": f"{RAMP_MS:g}",
        }
        sched = "" if spdk else f" {r['ioscheduler']}"
        out.append(
            Point(
                label=f"cluster23-zns {r['engine']}{sched} {rw} {r['bs']} qd{r['iodepth']} x{jobs}",
                config=config,
                metrics={"iops": float(r["iops"]), "latency_us.mean": float(r["lat_mean_ns"]) / 1e3},
                job_file=str(JOB),
                platform=PLATFORM,
                runtime_ms=RUNTIME_MS,
                ramp_ms=RAMP_MS,
                env=env,
                tolerance=None if jobs in REPORTED_ONLY_JOBS else TOLERANCE,
            )
        )
    return out
