"""The ICPE'24 measurements (third-party fio runs of Linux's IO schedulers on a 10-core Xeon with
Samsung 980 PRO SSDs, shipped with their MIT licence) and the ``icpe24`` validation suite on the
``icpe24-980pro`` platform, whose parameters are not fitted to them: every value is a prediction.

The IOPS bar is the issue's, 15% at every point of fig. 7; kyber's read/write split (tables 2-4) is
checked by its order. Where the model is outside today, the check is an ``xfail(strict=True)``
naming the measured and predicted figures and the suspected mechanism: it starts failing (XPASS)
when a mechanism closes the gap, and the mark must then go. Loosening a tolerance is a regression
to explain."""

from __future__ import annotations

import fnmatch
import statistics

import pytest

from models.platforms import PLATFORMS
from scenarios.data.measurements import ICPE24_DIR, MEASUREMENTS_DIR
from scenarios.studies.suite_icpe24 import (
    CPUS,
    IOPS_TOLERANCE,
    KYBER_TABLE2,
    KYBER_TABLE34,
    PROCS,
    SCHEDULERS,
    SPDK,
    ZERO_TARGET_NS,
    fig7_points,
    icpe24_points,
    kyber_label,
    kyber_order,
    kyber_points,
    kyber_runs,
    read_share,
)
from scenarios.studies.validation import (
    SUITE_GROUPS,
    SUITES,
    PointRunner,
    Validation,
    ValidationRow,
    format_validation,
    metric_value,
    suite_points,
)


def test_the_measurements_ship_with_their_licence_and_source():
    assert "MIT License" in (ICPE24_DIR / "LICENSE").read_text()
    readme = (ICPE24_DIR / "README.md").read_text()
    assert "ICPE'24" in readme and "LICENSE" in readme and "013f1e1" in readme


def test_every_shipped_file_is_package_data():
    """setup.cfg's package data patterns take every file of the copy (an install has them all)."""
    text = (MEASUREMENTS_DIR.parents[2] / "setup.cfg").read_text()
    line = next(v for v in text.splitlines() if v.startswith("scenarios.data.measurements ="))
    patterns = [p.strip() for p in line.split("=", 1)[1].split(",")]
    files = [p.relative_to(MEASUREMENTS_DIR).as_posix() for p in ICPE24_DIR.rglob("*") if p.is_file()]
    assert len(files) > 100
    # fnmatch's * crosses "/": compare the depth too, as setuptools' glob does not
    unmatched = [f for f in files if not any(fnmatch.fnmatch(f, p) and f.count("/") == p.count("/") for p in patterns)]
    assert unmatched == []


def test_the_platform_is_the_measured_host_as_the_artifact_states_it():
    p = PLATFORMS["icpe24-980pro"]()
    assert p.cpu.sockets == 1 and p.cpu.logical_cpus == CPUS and not p.cpu.smt
    assert "4210R" in p.cpu.model  # the one 10-core preset of the host's CBDMA generation
    assert p.ssd_count == 8 and p.ssd.model == "Samsung 980 PRO" and p.ssd.ftl.enabled
    assert p.kernel.version == "6.3" and p.queue.sched_dispatch == "direct"
    doc = PLATFORMS["icpe24-980pro"].__doc__ or ""
    assert "estimate" in doc.lower() and "8086:2021" in doc


def test_the_suite_loads_and_all_takes_it():
    assert "icpe24" in SUITES and "icpe24" in SUITE_GROUPS["all"]
    points = suite_points("icpe24")
    assert len(points) == (len(SCHEDULERS) + 1) * len(PROCS) + len(KYBER_TABLE2) + len(KYBER_TABLE34)
    assert len({p.label for p in points}) == len(points)
    assert all(p.platform == "icpe24-980pro" for p in points)


def test_fig7_points_are_the_runs_as_fio_recorded_them():
    by = {p.label: p for p in fig7_points()}
    bfq = by["icpe24 fig7 bfq 15p"]
    # proc_15_dev_1_sche_bfq.txt: read iops 273415.271539; usr 1.62%, sys 64.88% per process
    assert bfq.metrics["iops"] == 273415.271539
    assert bfq.metrics["cpu_utilization"] == pytest.approx(15 * (1.554333 + 64.946278) / 100 / CPUS, rel=1e-6)
    assert bfq.tolerance == {"iops": IOPS_TOLERANCE} and bfq.fio_job
    assert bfq.config["queue.scheduler"] == "bfq" and "ioscheduler" not in bfq.config
    assert bfq.config["numjobs"] == "15" and bfq.config["iodepth"] == "128" and bfq.config["filename"] == "/dev/nvme5n1"
    assert bfq.config["registerfiles"] == "1" and bfq.config["fixedbufs"] == "1"
    assert bfq.config["stacksim_fio_version"] == "3.35"
    spdk = by[f"icpe24 fig7 {SPDK} 1p"]
    assert spdk.metrics["iops"] == 741637.819685
    assert spdk.config["filename"] == "trtype=PCIe traddr=0000.19.00.0 ns=1" and "queue.scheduler" not in spdk.config


def test_kyber_points_are_the_mean_of_the_five_repetitions():
    (point,) = kyber_points({"table-2": (("1s", "0"),)})
    # separate_sche_kyber_r_1s_w_0.txt in rep_0..rep_4: read and write iops
    reads = (2115.326685, 2100.740586, 2072.791172, 2122.867648, 2029.270965)
    writes = (118496.521882, 125385.584287, 112422.990785, 113431.084519, 124452.461011)
    assert point.metrics["per_job.0.iops"] == pytest.approx(statistics.fmean(reads), rel=1e-12)
    assert point.metrics["per_job.1.iops"] == pytest.approx(statistics.fmean(writes), rel=1e-12)
    assert point.config["queue.iosched.read_lat_nsec"] == 1_000_000_000
    assert point.config["queue.iosched.write_lat_nsec"] == ZERO_TARGET_NS  # "0": a target of 0 ns
    reader, writer = point.fio_jobs
    assert reader["rw"] == "randread" and writer["rw"] == "randwrite" and writer["cpus_allowed"] == "2"
    assert writer["iodepth"] == reader["iodepth"] == "128"  # the global options' depth
    # tables 3-4: the reader at depth 1, as Little's law on every run says
    (l_t,) = kyber_points({"table-3-4": (("50us", "10ms"),)})
    assert l_t.fio_jobs[0]["iodepth"] == "1" and l_t.config["queue.iosched.read_lat_nsec"] == 50_000
    for run in kyber_runs("table-3-4", "50us", "10ms"):
        assert run.read.iops * run.read.lat.mean_ns / 1e9 == pytest.approx(1.0, abs=0.02)


def test_the_table_marks_each_value_against_its_points_tolerance():
    rows = [
        ValidationRow("a", "iops", 100.0, 110.0, 0.15),
        ValidationRow("b", "iops", 100.0, 130.0, 0.15),
        ValidationRow("b", "cpu_utilization", 0.5, 0.9),
    ]
    text = format_validation(Validation(rows))
    lines = text.splitlines()
    assert lines[0].split()[-2:] == ["bound", "result"]
    assert lines[1].split()[-2:] == ["15%", "pass"] and lines[2].split()[-2:] == ["15%", "FAIL"]
    assert lines[3].split()[-2:] == ["-", "-"]
    assert "1 of 2 values pass, 1 FAIL" in text
    assert not Validation(rows).passed and Validation([rows[0], rows[2]]).passed


# ------------------------------------------------------------------------------------------------
# predictions


@pytest.fixture(scope="module")
def predicted():
    """Every point of the suite simulated once, at the suite's own lengths."""
    runner = PointRunner(platform=None)
    return {p.label: (p, runner.summary(p)) for p in icpe24_points()}


_DEVICE = (
    "device ceiling: the samsung-980pro preset reads at its data sheet's 1M IOPS (a fresh drive); the"
    " filled drive of the study tops out at 776K (kernel) / 790K (SPDK) over its whole span: the"
    " preset's random-read ceiling (its NAND parallelism and read time) has no filled-drive behaviour"
)
_CLOCK = (
    "CPU-bound at 1 CPU per process: the model's 3.2 GHz turbo clock (the preset's; the artifact does"
    " not state it) and per-IO costs (cheops23-optane's, calibrated on 5.15 without fixed buffers) give"
    " {model} ns of CPU per IO against the measured {meas} ns"
)
#: point -> why the model is outside the bar today (figures at the suite's 20 ms after 5 ms)
XFAIL = {
    "icpe24 fig7 none 2p": "measured 727K, predicted 870K (+20%): " + _CLOCK.format(model="2.3K", meas="2.75K"),
    **{
        f"icpe24 fig7 none {n}p": f"measured 776-784K, predicted 0.98-1.01M (+27-31%): {_DEVICE}; the CPUs"
        " busy 3.4-8.5 against the measured 2.5-3.6 (at 8 processes the model spends 1.7 us per IO in the"
        " scheduler layer: the processes' sleeps and wake-ups; at 15 its clock is throttled to 1.83 GHz,"
        " issue 44 item 1)"
        for n in (4, 8, 12, 15)
    },
    **{
        f"icpe24 fig7 {SPDK} {n}p": f"measured 790K, predicted 0.96-1.01M (+21-28%): {_DEVICE}"
        for n in (2, 4, 8, 12, 15)
    },
    f"icpe24 fig7 {SPDK} 1p": "measured 742K, predicted 867K (+17%): "
    + _CLOCK.format(model="1.15K", meas="1.35K")
    + " (fio and the plugin 730 ns, the spin 420 ns)",
    **{
        f"icpe24 fig7 bfq {n}p": f"measured {m} flat from 2 processes on (93-97% sys, every process spinning),"
        f" predicted {pr} (+{e}%), flat too: the model's bfqd->lock hands off at nearly every section"
        f" (3-4 hand-offs per IO of 5.2-6.3 acquisitions), each moving 4 lines and half its trees' path"
        " at the preset's line transfer (100 cycles: Broadwell-EP's ring, 32 ns at 3.1 GHz), a serialized"
        " 2.2-2.8 us per IO where the kernel's is 3.3-3.7 us. Suspected: the core-to-core latency of"
        " Cascade Lake's mesh (no measured figure shipped) and the lines bfq's sections touch under"
        " contention (its queues' and requests' lines written by other CPUs)"
        for n, m, pr, e in (
            (2, "294K", "399K", "36"),
            (4, "309K", "457K", "48"),
            (8, "277K", "387K", "40"),
            (12, "270K", "372K", "38"),
            (15, "273K", "354K", "30"),
        )
    },
    **{
        f"icpe24 fig7 kyber {n}p": f"measured {m} at {c} CPUs, predicted {pr} (+15-21%) at {pc} CPUs: {_DEVICE}"
        for n, m, c, pr, pc in (
            (4, "786K", "3.2", "949K", "3.7"),
            (8, "775K", "3.8", "930K", "5.4"),
            (12, "775K", "4.3", "912K", "6.5"),
        )
    },
    "icpe24 fig7 mq-deadline 2p": "measured 505K at 2.0 CPUs (3.96 us of CPU per IO against 3.23 us for"
    " one process), predicted 648K (+28%) at 2.99 us: dd->lock hands off about once per IO in the model"
    " (94 ns of transfers per IO) where the kernel's two CPUs lose ~0.7 us per IO to it; the sort lists"
    " stay empty (the device takes every request at once), so no tree path moves either",
    **{
        f"icpe24 fig7 mq-deadline {n}p": f"measured {m} with every process on its CPU (90-97% sys, no sleep:"
        f" {us} us of CPU per IO: dd->lock saturated at ~2 us per IO, ~0.8 us per acquisition), predicted"
        f" {pr} (+{e}%): dd->lock does not limit the model (about 1 hand-off per IO of 4 acquisitions, 0.1 us"
        f" of transfers), which is bounded by the device ({_DEVICE.split(':')[0]}) with {pc} CPUs busy and"
        f" its processes sleeping ({cs} switches per IO, measured 0.001-0.003)"
        for n, m, us, pr, e, pc, cs in (
            (4, "499K", "8.0", "1.01M", "102", "3.8", "0.12"),
            (8, "492K", "16.2", "1.02M", "106", "5.6", "0.42"),
            (12, "476K", "21", "998K", "109", "6.9", "0.54"),
            (15, "477K", "21", "982K", "106", "7.4", "0.61"),
        )
    },
}


def _fig7_params():
    out = []
    for p in fig7_points():
        marks = [pytest.mark.xfail(strict=True, reason=XFAIL[p.label])] if p.label in XFAIL else []
        out.append(pytest.param(p.label, marks=marks, id=p.label.removeprefix("icpe24 fig7 ").replace(" ", "-")))
    return out


@pytest.mark.parametrize("label", _fig7_params())
def test_fig7_iops_within_the_bar(predicted, label):
    point, summary = predicted[label]
    err = metric_value(summary, "iops") / point.metrics["iops"] - 1
    assert abs(err) <= point.tolerance["iops"], f"{label}: {100 * err:+.1f}%"


def test_the_xfail_list_names_only_points_of_the_suite():
    labels = {p.label for p in fig7_points()}
    assert set(XFAIL) <= labels


#: (higher, lower) read shares -> why the model does not order them today
ORDER_XFAIL = {
    (
        kyber_label("table-2", "2ms", "2ms"),
        kyber_label("table-2", "10ms", "2ms"),
    ): "measured read shares 0.555 and 0.457 (five runs each, apart); predicted 0.486 for both (42K reads, 44K"
    " writes: the model's filled drive is 2.5-3x slower than the study's 102-141K per job), and no depth moves"
    " in the model: its reads' p99 in kyber's windows is in bucket 3 of the 10 ms target (x 4/4). Kyber's rule"
    " alone does not give the measured gap either: at r=10ms w=2ms the measured writes' p90 is 0.6 ms (< 2 ms:"
    " no congestion) and the reads' p99 5.5-7 ms (< 10 ms). Suspected: kyber's depths carried over from the"
    " study's previous run (a depth cut under congestion stays cut while its domain meets its target), or"
    " windows where the writes' device time passes 2 ms; and the filled 980 PRO's service under a mix (the"
    " FTL's estimates) for the model's latencies",
    (
        kyber_label("table-3-4", "50us", "10ms"),
        kyber_label("table-3-4", "10ms", "10ms"),
    ): "measured read shares 0.080 and 0.014; predicted 0.093 and 0.101 (5.2K and 5.7K reads/s beside 50.5K"
    " writes): the model's depth-1 reader gets the same share whatever its target, so the order is noise"
    " (0.096 and 0.092 without the P-state stall, whose 10 us at each turbo-limit change of the two cores,"
    " ~1 per ms, tips it). Not investigated further: why the reader's 50 us target does not raise its"
    " share in the model as the study's does",
}


def _order_params():
    out = []
    for table, pairs in (("table-2", KYBER_TABLE2), ("table-3-4", KYBER_TABLE34)):
        for hi, lo in kyber_order(table, pairs):
            marks = [pytest.mark.xfail(strict=True, reason=ORDER_XFAIL[(hi, lo)])] if (hi, lo) in ORDER_XFAIL else []
            ident = f"{hi.removeprefix('icpe24 ')} > {lo.split(' kyber ')[1]}".replace(" ", "_")
            out.append(pytest.param(hi, lo, marks=marks, id=ident))
    return out


@pytest.mark.parametrize("higher,lower", _order_params())
def test_kyber_read_share_in_the_measured_order(predicted, higher, lower):
    """Tables 2-4: where the five repetitions separate two target settings' read shares, the model
    orders them the same way."""

    def share(label):
        per_job = predicted[label][1]["per_job"]
        return read_share(per_job[0]["iops"], per_job[1]["iops"])

    assert share(higher) > share(lower), f"{higher}: {share(higher):.3f}, {lower}: {share(lower):.3f}"


def test_the_order_pairs_are_the_measurements_own():
    """The orders checked are the ones the repetitions establish: reads favoured by a missed read
    target and a long write target, starved by a missed write target, and the depth-1 reader of
    tables 3-4 helped by a read target below its latency."""
    t2 = kyber_order("table-2", KYBER_TABLE2)
    assert len(t2) == 6  # the four settings of table 2, in one order
    assert (kyber_label("table-2", "0", "1s"), kyber_label("table-2", "1s", "0")) in t2
    assert kyber_order("table-3-4", KYBER_TABLE34) == [
        (kyber_label("table-3-4", "50us", "10ms"), kyber_label("table-3-4", "10ms", "10ms"))
    ]
