"""fio's rate control (rate, rate_iops, rate_process) on small jobs: the achieved rate per direction
and the inter-arrival coefficient of variation (linear: paced, ~0; poisson: exponential gaps, ~1)."""

import math

import numpy as np
import pytest

from models.ioengines.rate import RatePacer
from scenarios.config.host import resolve
from scenarios.inputs.fio.parser import job_from_options, parse_fio_text
from scenarios.run.simulate import simulate
from simcore.errors import ConfigError

PLATFORM = "optane900p-e3-1230v5"


def _run(opts, runtime="1s"):
    base = {
        "rw": "randread",
        "direct": "1",
        "ioengine": "libaio",
        "iodepth": "4",
        "runtime": runtime,
        "time_based": "1",
    }
    job = job_from_options({**base, **opts}, name="r")
    res = simulate(resolve(jobs=[job], platform=PLATFORM), records=True)
    out = {}
    for op in ("read", "write"):
        t = np.sort(res.records["t_submit_ns"][res.records["op"] == op])
        if len(t) > 2:
            gaps = np.diff(t)
            out[op] = (len(gaps) / ((t[-1] - t[0]) / 1e9), gaps.std() / gaps.mean(), len(gaps))
    return out


@pytest.mark.parametrize("engine", ["libaio", "psync"])
def test_linear_rate_is_met_with_even_gaps(engine):
    """2000 IO/s: gaps of 500 us, well above the 50 us timer slack, so every IO is due when the
    thread wakes; what varies is the wake-up (timer slack, C-state exit: tens of us), far from the
    CV of 1 of a Poisson stream."""
    (rate, cv, n) = _run({"rate_iops": "2000", "ioengine": engine})["read"]
    assert abs(rate / 2000 - 1) < 2 / n  # one IO of quantisation
    assert cv < 0.15


def test_poisson_rate_has_exponential_gaps():
    rate, cv, n = _run({"rate_iops": "2000", "rate_process": "poisson"})["read"]
    # fio's mean gap is whole us: floor(500 x Exp(1)) us has mean 499.5 us
    want = 1e6 / 499.5
    assert abs(rate - want) < 4 * want / math.sqrt(n)  # Poisson count over the window
    assert abs(cv - 1.0) < 4 / math.sqrt(n) + 0.02  # exponential gaps: CV 1 (+ the timer slack's rounding)


def test_rate_caps_each_direction():
    got = _run({"rw": "randrw", "rate_iops": "3000,1000"}, runtime="500ms")
    assert abs(got["read"][0] / 3000 - 1) < 0.01 and abs(got["write"][0] / 1000 - 1) < 0.01


def test_uncapped_direction_runs_free_in_a_mixed_job():
    got = _run({"rw": "randrw", "rate_iops": "2000,", "iodepth": "1"}, runtime="100ms")
    assert abs(got["read"][0] / 2000 - 1) < 0.05
    assert got["write"][0] > 10 * 2000  # writes are not held (fio: rate_bps[write] = 0)


def test_rate_in_bytes_uses_the_smallest_block_size():
    got = _run({"rate": "8m", "bs": "8k"}, runtime="500ms")["read"]
    assert abs(got[0] / 1024 - 1) < 0.01  # 8 MiB/s of 8 KiB IOs


def test_pacer_choice_follows_fio_rate_ddir():
    job = job_from_options({"rw": "randrw", "rate_iops": "1000,500", "direct": "1"}, name="p")
    p = RatePacer(job, np.random.default_rng(1))
    assert p.choose("read", 0.0) == ("read", 0.0)
    p.issued("read", 4096)  # next read at 1 ms
    assert p.choose("read", 10.0) == ("write", 10.0)  # reads ahead, writes due: switch
    p.issued("write", 4096)  # next write at 2 ms
    assert p.choose("write", 20.0) == ("read", 1e6)  # both ahead: the earlier one, after a sleep


def test_poisson_gaps_are_whole_microseconds():
    job = job_from_options({"rw": "randread", "rate_iops": "3000", "rate_process": "poisson", "direct": "1"}, name="p")
    p = RatePacer(job, np.random.default_rng(2))
    p.start(0.0)
    times = []
    for _ in range(20_000):
        p.issued("read", 4096)
        times.append(p.next_ns["read"])
    gaps = np.diff([0.0, *times])
    assert np.all(gaps % 1000 == 0)
    assert abs(gaps.mean() / 1000 - (333 - 0.5)) < 4 * 333 / math.sqrt(len(gaps))  # (int)(1e6 / 3000) = 333


@pytest.mark.parametrize(
    "body, words",
    [
        ("rate=1m\nrate_iops=100", "mutually exclusive"),
        ("rate_process=exp", "allowed: linear, poisson"),
        ("rate=fast", "'rate'"),
    ],
)
def test_bad_rate_options(body, words):
    with pytest.raises(ConfigError, match=words):
        parse_fio_text(f"[j]\ndirect=1\n{body}\n", path="t.fio")


def _ended(opts):
    """(fio error of the job, time of its last completion in s) of a 4 s psync job at ~450 IO/s."""
    base = {
        "rw": "randread",
        "direct": "1",
        "ioengine": "psync",
        "runtime": "4s",
        "time_based": "1",
        "thinktime": "2ms",
    }
    job = job_from_options({**base, **opts}, name="m")
    res = simulate(resolve(jobs=[job], platform=PLATFORM), records=True)
    return res.to_dict()["jobs"][0]["error"], float(res.records["t_complete_ns"].max()) / 1e9


@pytest.mark.parametrize(
    "opts, end_s",
    [
        ({"rate_iops_min": "800"}, 3.0),  # 2 s settle, then one rate_cycle (1 s)
        ({"rate_iops_min": "800", "rate_cycle": "500"}, 2.5),
        ({"rate_min": "4m"}, 3.0),  # ~1.8 MB/s of 4 KiB reads < 4 MiB/s
    ],
)
def test_rate_min_miss_ends_the_job_with_eio(opts, end_s):
    error, last = _ended(opts)
    assert error == 5 and end_s <= last < end_s + 0.01


def test_rate_min_met_runs_to_the_end():
    error, last = _ended({"rate_iops_min": "300"})
    assert error == 0 and last > 3.99


@pytest.mark.parametrize(
    "body, words",
    [
        ("rate_min=1m\nrate_iops_min=10", "mutually exclusive"),
        ("rate_iops=100\nrate_iops_min=200", "minimum rate exceeds the rate"),
        ("rate=1m\nrate_min=2m", "minimum rate exceeds the rate"),
        ("rate_cycle=0", "'rate_cycle': must be >= 1"),
    ],
)
def test_bad_minimum_rates(body, words):
    with pytest.raises(ConfigError, match=words):
        parse_fio_text(f"[j]\ndirect=1\n{body}\n", path="t.fio")
