"""Streaming statistics (issue 17): the histogram's percentile error bound against numpy, exact
means and counts, the streamed summary against the per-IO records, and memory that does not grow
with the number of simulated IOs."""

import gc
import tracemalloc
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import models.ioengines.iostats as iostats
from scenarios.config.host import resolve
from scenarios.run.simulate import simulate
from simcore.stats import FIO_PERCENTILES, PLAT_REL_ERROR, LatencyStats

latencies = st.lists(
    st.floats(min_value=0.0, max_value=5e10, allow_nan=False, allow_infinity=False), min_size=1, max_size=400
)


def _union_ns(spans, t0: float, t1: float) -> float:
    """Length of the union of the intervals ``spans`` clipped to [t0, t1], all sorted at once (the
    definition the streamed figure must match bit for bit)."""
    total = 0.0
    cur = None
    for a, b in sorted(spans):
        a, b = max(a, t0), min(b, t1)
        if b <= a:
            continue
        if cur is None or a > cur[1]:
            if cur is not None:
                total += cur[1] - cur[0]
            cur = [a, b]
        else:
            cur[1] = max(cur[1], b)
    return total + (cur[1] - cur[0] if cur is not None else 0.0)


def _bound(x: float) -> float:
    return max(x * PLAT_REL_ERROR, 1.0)


@settings(max_examples=150, deadline=None)
@given(xs=latencies, split=st.integers(0, 400))
def test_histogram_percentiles_are_within_the_bound_of_numpys(xs, split):
    a = np.array(xs)
    s = LatencyStats.of(a[:split]).merged(LatencyStats.of(a[split:]))  # blocks merged = one series
    assert s.n == a.size and s.min == a.min() and s.max == a.max()
    # exact mean: the correctly rounded sum / n
    assert s.mean == float(sum(map(Fraction, xs)) / len(xs))
    if a.size > 1:
        assert s.stddev == pytest.approx(float(a.std(ddof=1)), rel=1e-9, abs=1e-6)
    got = s.percentiles(FIO_PERCENTILES)
    # fio's rank rule is numpy's inverted_cdf: the smallest value with at least p% at or below it
    want = np.percentile(a, FIO_PERCENTILES, method="inverted_cdf")
    for g, w in zip(got, want):
        assert abs(g - w) <= _bound(w), (g, w)


def test_the_bound_is_tight_for_fios_buckets():
    """A value at the bottom of a bucket is reported as the bucket's middle: half a bucket away,
    1/128 of it (64 buckets per power of two)."""
    (p50,) = LatencyStats.of([1 << 20]).percentiles([50])
    assert p50 == pytest.approx(1 << 20, rel=PLAT_REL_ERROR)  # clamped to max: exact for one value
    s = LatencyStats.of([1 << 20, (1 << 20) + 2**14 - 1, 2 << 20])
    (lo,) = s.percentiles([1])
    assert lo - (1 << 20) == 2**13 == (1 << 20) * PLAT_REL_ERROR


@pytest.mark.parametrize(
    "sets",
    [
        {},
        {"ioengine": "libaio", "iodepth": "8"},
        {"ioengine": "io_uring", "iodepth": "4", "numjobs": "2", "bs": "256k", "queue.max_sectors_kb": "64"},
    ],
)
def test_streamed_summary_agrees_with_the_per_io_records(sets):
    r = simulate(resolve(sets={"runtime": "30ms", "ramp_time": "5ms", **sets}), records=True)
    rec, s = r.records, r.summary
    lat = rec["t_complete_ns"] - rec["t_submit_ns"]
    assert s["ios"] == rec.size == sum(j["read"]["total_ios"] for j in r["jobs"])
    assert s["latency_us"]["mean"] == float(sum(map(Fraction, lat.tolist())) / lat.size) / 1e3
    assert s["latency_us"]["max"] == lat.max() / 1e3
    for key, p in (("p50", 50), ("p99", 99), ("p99_9", 99.9)):
        want = float(np.percentile(lat, p, method="inverted_cdf"))
        assert abs(s["latency_us"][key] * 1e3 - want) <= _bound(want)
    # disk_util's busy time from the streamed spans is the union of every measured command's span
    (disk,) = r["disk_util"]
    if "queue.max_sectors_kb" not in sets:  # one command per IO: the records hold the spans
        t0, t1 = 5e6, 35e6
        busy = _union_ns(list(zip(rec["t_dispatch_ns"].tolist(), rec["t_reaped_ns"].tolist())), t0, t1)
        assert disk["util"] == 100.0 * busy / (t1 - t0)


def _peak_mb(runtime_ms: int) -> tuple[float, int]:
    gc.collect()
    tracemalloc.start()
    try:
        r = simulate(resolve(sets={"runtime": f"{runtime_ms}ms", "ramp_time": "0"}))
        return tracemalloc.get_traced_memory()[1] / 1e6, r.summary["ios"]
    finally:
        tracemalloc.stop()


def test_memory_does_not_grow_with_the_number_of_ios(monkeypatch):
    """Peak traced memory of the default job for 200 ms vs 40 ms: with nothing kept per IO the
    difference is at most the block of completed requests awaiting folding (64 of them here,
    ~30 KB); keeping 16 bytes per IO (one float in a list) would add ~0.25 MB over the extra IOs."""
    monkeypatch.setattr(iostats, "BLOCK", 64)
    simulate(resolve(sets={"runtime": "2ms", "ramp_time": "0"}))  # imports and caches first
    m0, n0 = _peak_mb(40)
    m1, n1 = _peak_mb(200)
    assert n1 - n0 > 14_000
    per_io_bytes = (m1 - m0) * 1e6 / (n1 - n0)
    assert per_io_bytes < 8, f"peak memory grows by {per_io_bytes:.1f} bytes per IO"


def test_a_tail_percentile_below_the_mean_is_said_to_be_a_histogram_bucket():
    """Latencies spread within one histogram bucket (26,880-27,136 ns: its middle 27,008): every
    percentile is that bucket's middle, below the exact mean 27,050; the summary says why."""
    from stacksim.output import latency_line

    s = {"latency_us": LatencyStats.of(np.array([26_970.0, 27_130.0] * 500)).summary_us()}
    assert s["latency_us"]["p99"] < s["latency_us"]["mean"] == pytest.approx(27.05)
    assert abs(s["latency_us"]["p99"] * 1e3 - 27_130.0) <= PLAT_REL_ERROR * 27_130.0  # (the bound holds)
    text = latency_line(s)
    assert "p90, p99, p99.9 below the mean by less than a histogram bucket" in text and "0.78%" in text
    wide = {"latency_us": LatencyStats.of(np.linspace(20_000.0, 40_000.0, 1000)).summary_us()}
    assert "\n" not in latency_line(wide)  # ordinary percentiles: no note
