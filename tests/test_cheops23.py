"""The CHEOPS'23 measurements (third-party fio runs on 2 x 10-core Xeons with Optane SSDs, shipped
with their MIT licence) and the ``cheops23`` validation suite on the ``cheops23-optane`` platform:
the study's job files run unchanged; seven physical parameters come from six points (SPDK's depth 1
and 16, SQPOLL's depth 64, libaio's depth 1 and 8, io_uring's depth 8: calibrate --study cheops23),
every other point and metric is a prediction.

The tolerances are the issue's targets, per operating point; loosening one is a regression to
explain."""

from __future__ import annotations

import pytest

from models.platforms import CHEOPS23_FIT, PLATFORMS
from scenarios.data.measurements import CHEOPS23_DIR
from scenarios.studies.calibrate_cheops23 import residuals
from scenarios.studies.suite_cheops23 import ENGINES, MIN_CTX_PER_IO, POINTS, SCHEDULERS, cheops23_points
from scenarios.studies.validation import PointRunner, metric_value, suite_points


def test_the_measurements_ship_with_their_licence_and_source():
    assert "MIT License" in (CHEOPS23_DIR / "LICENSE").read_text()
    readme = (CHEOPS23_DIR / "README.md").read_text()
    assert "10.1145/3578353.3589545" in readme and "LICENSE" in readme
    header = (CHEOPS23_DIR / "perf_stat.csv").read_text().splitlines()[0]
    assert header.startswith("point,engine,ioengine,iodepth") and "instructions_per_5s" in header


def test_the_platform_is_the_measured_host_as_the_artifact_states_it():
    p = PLATFORMS["cheops23-optane"]()
    assert p.cpu.logical_cpus == 20 and not p.cpu.smt and not p.cpu.turbo
    assert p.cpu.sockets == 2 and p.cpu.node_cpus(1) == tuple(range(10, 20))
    assert all(p.ssd_node(i) == 1 for i in range(p.ssd_count))  # the node the study pins its jobs to
    assert p.cpu.base_freq_ghz == pytest.approx(2.41)
    assert p.ssd_count == 8 and "P4800X" in p.ssd.model
    assert "estimate" in (PLATFORMS["cheops23-optane"].__doc__ or "").lower()


def test_suite_points_are_the_studys_runs_with_their_measured_values():
    points = suite_points("cheops23")
    # psync was measured only at depth 1; every other engine at the three points; io_uring's depth
    # 128 with each scheduler
    assert len(points) == len(ENGINES) * len(POINTS) - 2 + len(SCHEDULERS)
    by = {p.label: p for p in points}
    qd1 = by["cheops23 qd1 psync"]
    assert qd1.platform == "cheops23-optane" and qd1.env == {"FIO_RUN_TIME": "120", "FIO_RAMP_TIME": "20"}
    assert qd1.metrics["iops"] == pytest.approx(94630, rel=1e-3)
    assert qd1.metrics["context_switches_per_io"] == pytest.approx(1.0, abs=0.01)
    # hipri runs on polled queues, as on the measured host; the others on interrupt queues
    numactl = {"numa_cpu_nodes": "1", "numa_mem_policy": "bind:1"}  # numactl -N 1 -m 1, as the study pinned
    assert (
        by["cheops23 qd1 iou_c"].config == {**numactl, "queue.io_poll": 1} and by["cheops23 qd1 iou"].config == numactl
    )
    # a thread that never blocks measures ~1e-5 switches per IO: not a relative comparison
    assert "context_switches_per_io" not in by["cheops23 saturation aio"].metrics
    assert all(p.metrics.get("context_switches_per_io", 1) >= MIN_CTX_PER_IO for p in points)
    bfq = by["cheops23 sched_t1 bfq"]
    assert bfq.config == {**numactl, "queue.scheduler": "bfq"}
    assert bfq.metrics["iops"] == pytest.approx(198931, rel=1e-4)
    assert "context_switches_per_io" not in bfq.metrics  # 394 in 140 s: the dispatch ran in the thread


@pytest.fixture(scope="module")
def predicted():
    runner = PointRunner(platform=None, runtime_ms=20, ramp_ms=5)
    return {p.label: (p, runner.summary(p)) for p in cheops23_points()}


#: (point, metric) -> the relative error the model must stay within: the issue's targets (10% for
#: IOPS and latency at every point, 20% for the depth-1 thread's CPU share, 15% for perf's
#: instructions per IO and IPC)
TOLERANCE = {
    ("qd1", "iops"): 0.10,
    ("qd1", "latency_us.mean"): 0.10,
    ("saturation", "iops"): 0.10,
    ("saturation", "latency_us.mean"): 0.10,
    ("depth128_1thread", "iops"): 0.10,
    ("depth128_1thread", "latency_us.mean"): 0.10,
    ("qd1", "instructions_per_io"): 0.15,
    ("qd1", "per_job.0.cpu_share"): 0.20,
    ("qd1", "ipc"): 0.15,
    ("saturation", "instructions_per_io"): 0.15,
    ("saturation", "ipc"): 0.15,
    # one thread at depth 128 over seven devices with each IO scheduler: the 10%
    ("sched_t1", "iops"): 0.10,
    ("sched_t1", "latency_us.mean"): 0.10,
}


def test_the_calibration_study_meets_its_seven_observations():
    """calibrate --study cheops23's fit (CHEOPS23_FIT) reproduces the six points it came from
    (SPDK's depth 1 and 16, SQPOLL's depth 64, libaio's CPU-bound depth 8 (IOPS and instructions
    per IO) and depth-1 latency, io_uring's depth 8), at the suite's shorter runs within 1.5%."""
    res = residuals(CHEOPS23_FIT, 20.0)
    assert len(res) == 7 and max(abs(res)) < 0.015


#: (point, metric) -> why the model is outside the tolerance today
TOLERANCE_XFAIL = {
    ("saturation", "ipc"): "iou_s (SQPOLL) at saturation: IPC 1.94 predicted against 2.55 measured (-24%; -11%"
    " with menu's ring primed as after a quiet stretch, MenuGovernor.prime): the idle CPUs' states in the first"
    " milliseconds of a 20 ms run decide it, i.e. menu's starting history (zeroed at menu_enable_device; an idle"
    " machine's is tick-ended periods) and 6.1 poll_idle's time limit (cpuidle_poll_time), which is not modelled",
}


@pytest.mark.parametrize(
    "where,metric",
    [
        pytest.param(w, m, marks=[pytest.mark.xfail(strict=True, reason=TOLERANCE_XFAIL[(w, m)])])
        if (w, m) in TOLERANCE_XFAIL
        else (w, m)
        for w, m in sorted(TOLERANCE)
    ],
)
def test_predictions_within_the_stated_tolerance(predicted, where, metric):
    for label, (point, summary) in predicted.items():
        if f" {where} " not in label:
            continue
        if metric not in point.metrics:
            continue
        err = metric_value(summary, metric) / point.metrics[metric] - 1
        assert abs(err) <= TOLERANCE[(where, metric)], f"{label} {metric}: {100 * err:+.1f}%"


def test_context_switches_per_io_follow_how_the_thread_waits(predicted):
    for label, (point, summary) in predicted.items():
        blocks = label.startswith("cheops23 qd1") and label.endswith((" psync", " aio", " iou"))
        ctx = summary["context_switches_per_io"]
        # blocking engines at depth 1 sleep once per IO; polling, SQPOLL, SPDK and saturated threads never
        # do, nor (5.15's __blkdev_direct_IO plug: the thread dispatches) does io_uring with a scheduler
        assert ctx == pytest.approx(1.0, abs=0.02) if blocks else ctx < 0.01, label


def test_a_fio_json_of_spdk_keeps_its_controllers():
    """Validating from fio's JSON alone: an SPDK job's filename names its controllers (seven here),
    unlike a kernel job's device path, so it is kept."""
    from scenarios.studies.validation import load_measured

    (point,) = load_measured(CHEOPS23_DIR / "saturation" / "spdk_fio.json")
    assert point.config["filename"].count("traddr=") == 7
    summary = PointRunner(platform="cheops23-optane", runtime_ms=5, ramp_ms=1).summary(point)
    assert summary["iops"] > 0.8 * point.metrics["iops"]  # seven devices: not one device's ~0.59M ceiling
