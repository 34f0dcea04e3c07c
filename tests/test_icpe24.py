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
    "device ceiling: the samsung-980pro preset's 37 dies (derived from the data sheet's 1M IOPS read"
    " from pSLC, 30 us, on a fresh drive) read the filled drive's TLC pages (mean tR 34 us): the filled"
    " drive of the study tops out at 776K (kernel) / 790K (SPDK) over its whole span, the model at"
    " 0.90-0.96M; pSLC's tR is recalled as 25-35 us (the midpoint taken): the rest of the gap has no"
    " sourced mechanism yet"
)
_CLOCK = (
    "CPU-bound at 1 CPU per process: the model's 3.2 GHz turbo clock (the preset's; the artifact does"
    " not state it) and per-IO costs (cheops23-optane's, calibrated on 5.15 without fixed buffers) give"
    " {model} ns of CPU per IO against the measured {meas} ns"
)
#: point -> why the model is outside the bar today (figures at the suite's 20 ms after 5 ms)
XFAIL = {
    **{
        f"icpe24 fig7 {sched} 1p": f"measured {m}, predicted {pr} ({e}%): " + _CLOCK.format(model=model, meas=meas)
        for sched, m, pr, e, model, meas in (
            ("none", "381K", "441K", "+16", "2.27K", "2.62K"),
            ("mq-deadline", "310K", "358K", "+16", "2.79K", "3.23K"),
        )
    },
    "icpe24 fig7 none 2p": "measured 727K, predicted 855K (+18%): " + _CLOCK.format(model="2.3K", meas="2.75K"),
    **{
        f"icpe24 fig7 none {n}p": f"measured 776-784K, predicted 946-961K (+21-24%): {_DEVICE}; the CPUs"
        " busy 3.4-8.5 against the measured 2.5-3.6 (at 8 processes the model spends 1.7 us per IO in the"
        " scheduler layer: the processes' sleeps and wake-ups; at 15 its clock is throttled to 1.83 GHz,"
        " issue 44 item 1)"
        for n in (4, 8, 12, 15)
    },
    **{f"icpe24 fig7 {SPDK} {n}p": f"measured 790K, predicted 924-953K (+17-21%): {_DEVICE}" for n in (4, 8, 12, 15)},
    **{
        f"icpe24 fig7 kyber {n}p": f"measured {m} at {c} CPUs, predicted {pr} (+16-17%): {_DEVICE}"
        for n, m, c, pr in (
            (4, "786K", "3.2", "911K"),
            (8, "775K", "3.8", "904K"),
            (12, "775K", "4.3", "907K"),
            (15, "773K", "4.1", "903K"),
        )
    },
    "icpe24 fig7 mq-deadline 4p": "measured 499K with every process spinning (8.0 us of CPU per IO:"
    " dd->lock saturated at ~2 us per IO from 2 processes on), predicted 702K (+41%): at 4 processes the"
    " model's lock passes at 1.4 us per IO: one IO's merge, insert and dispatch still run back to back on"
    " one CPU more often than the kernel's FIFO queue lets them",
    **{
        f"icpe24 fig7 mq-deadline {n}p": f"measured {m}, predicted {pr} ({e}%): dd->lock saturated, as"
        f" measured, but the model's serializes {us} us per IO (1 / IOPS) against the measured 2.03-2.10 us:"
        " its sections' data items are counted from Linux 6.1 block/mq-deadline.c, each line moved at the"
        " mesh's 70 ns (`cpu.line_transfer_ns`, an estimate: no measured figure shipped), and the"
        " waiters' spinning does not slow the holder's misses"
        for n, m, pr, e, us in (
            (8, "492K", "589K", "+20", "1.70"),
            (12, "476K", "569K", "+19", "1.76"),
            (15, "477K", "550K", "+15.3", "1.82"),
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
    ): "measured read shares 0.555 and 0.457 (five runs each, apart); predicted 0.910 for both (319K reads, 31K"
    " writes: reads go before the dies' queued programs and suspend the one in progress, and the model's filled"
    " drive writes 3.6x slower than the study's 113K), and no depth moves in the model. Kyber's rule alone does"
    " not give the measured gap either: at r=10ms w=2ms the measured writes' p90 is 0.6 ms (< 2 ms: no"
    " congestion) and the reads' p99 5.5-7 ms (< 10 ms). Suspected: kyber's depths carried over from the"
    " study's previous run, or windows where the writes' device time passes 2 ms; and the filled 980 PRO's"
    " service under a mix (the controller's scheduling of reads against programs, the FTL's estimates)",
    (
        kyber_label("table-3-4", "50us", "10ms"),
        kyber_label("table-3-4", "10ms", "10ms"),
    ): "measured 7,026 and 1,871 reads/s beside 80K and 127K writes (a 50 us read target throttles the writer"
    " 1.6x and the reader's latency falls 3.7x); predicted the same share for both (0.087: ~4,800 reads/s,"
    " ~46K writes: the dies' suspends serve the QD1 reader at ~200 us either way, so kyber's read domain"
    " never misses a 50 us target by more than a 10 ms one changes, and the writer is 2.7x slower than the"
    " study's). It separated by 5% either way before (5,390 / 5,130 at the last stop, 5,200 / 5,440 with"
    " the lock model): noise, not kyber. Suspected: the filled 980 PRO's writes (its program time and FTL"
    " under a mixed load), which decide how much kyber has to throttle",
}


#: pairs whose predicted shares are equal within the run's noise (either order can come out): their
#: xfail is not strict
ORDER_NOISE = {(kyber_label("table-3-4", "50us", "10ms"), kyber_label("table-3-4", "10ms", "10ms"))}


def _order_params():
    out = []
    for table, pairs in (("table-2", KYBER_TABLE2), ("table-3-4", KYBER_TABLE34)):
        for hi, lo in kyber_order(table, pairs):
            strict = (hi, lo) not in ORDER_NOISE
            marks = [pytest.mark.xfail(strict=strict, reason=ORDER_XFAIL[(hi, lo)])] if (hi, lo) in ORDER_XFAIL else []
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
