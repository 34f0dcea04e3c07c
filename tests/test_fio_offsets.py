"""fio's random offsets (random_distribution, random_generator=lfsr, percentage_random) against
their documented semantics: the pickers of models/ioengines/offsets.py with many draws, and small
end-to-end jobs (offsets of the simulated requests)."""

import math
from collections import Counter

import numpy as np
import pytest

from models.ioengines.offsets import Lfsr, Normal, OffsetPicker, Pareto, Zipf, zeta
from scenarios.config.host import resolve
from scenarios.inputs.fio.parser import job_from_options, parse_fio_text
from scenarios.run.simulate import simulate
from simcore.errors import ConfigError

PLATFORM = "optane900p-e3-1230v5"


def _gen(seed=1):
    return np.random.default_rng(seed)


def _tol(p, n, sigmas=5.0):
    """Binomial tolerance on an observed share of n draws."""
    return sigmas * math.sqrt(p * (1 - p) / n)


def test_zipf_hottest_block_share_is_analytic():
    n, theta, draws = 1024, 1.2, 200_000
    z = Zipf(n, theta, None, _gen())
    g = _gen(2)
    counts = Counter(z.block(u) for u in g.random(draws).tolist())
    zn = zeta(n, theta)
    (b1, c1), (b2, c2) = counts.most_common(2)
    p1, p2 = 1 / zn, 0.5**theta / zn
    assert abs(c1 / draws - p1) < _tol(p1, draws)
    assert abs(c2 / draws - p2) < _tol(p2, draws)
    # the tail: ranks k >= 3 carry 1 - p1 - p2 spread over the other blocks (no block above rank 2)
    assert all(0 <= b < n for b in counts)
    assert counts.most_common(3)[2][1] / draws < p2


def test_zipf_center_places_the_hottest_block():
    n = 1000
    z = Zipf(n, 1.5, 0.25, _gen())
    counts = Counter(z.block(u) for u in _gen(3).random(20_000).tolist())
    assert counts.most_common(1)[0][0] == 250  # center x nranges
    assert counts.most_common(2)[1][0] == 251  # ranks follow it unscattered


def test_pareto_hot_fraction_takes_one_minus_h():
    n, h, draws = 10_000, 0.2, 200_000
    p = Pareto(n, h, 0.0, _gen())  # center 0: block = rank, hottest first
    blocks = np.array([p.block(u) for u in _gen(4).random(draws).tolist()])
    top = (blocks < h * (n - 1)).mean()
    assert abs(top - (1 - h)) < _tol(1 - h, draws)  # the 80/20 rule for h = 0.2
    scattered = Pareto(n, h, None, _gen())  # hashed: the same shares, scattered over the range
    counts = np.bincount([scattered.block(u) for u in _gen(4).random(draws).tolist()], minlength=n)
    hot = np.bincount(blocks, minlength=n).max()
    assert 0 <= counts.max() - hot < 0.002 * draws and counts.argmax() != 0  # (+ ranks hashed onto it)


def test_normal_deviation_is_percent_of_range():
    n, dev = 100_000, 10.0
    g = _gen(5)
    draw = iter(g.random(2_000_000).tolist()).__next__
    nrm = Normal(n, dev, None, draw)
    blocks = np.array([nrm.block(draw()) for _ in range(20_000)])
    assert abs(blocks.mean() - n / 2) < 0.01 * n
    assert abs(blocks.std() / (dev / 100 * n) - 1) < 0.03


def test_lfsr_covers_every_block_once_per_pass():
    for n in (1, 7, 1000, 4096):
        lf = Lfsr(n, _gen(n))
        seen = [lf.block(0.0) for _ in range(n)]
        assert sorted(seen) == list(range(n))


def _job(**opts):
    base = dict(rw="randread", direct="1", size="4m", runtime="20ms", time_based="1", ioengine="pvsync2")
    return job_from_options({**base, **opts}, name="j")


def test_zoned_access_shares_per_zone():
    job = _job(random_distribution="zoned:60/10:30/20:8/30:2/40")
    n = 1000
    pk = OffsetPicker(job, n, 4096, _gen(6))
    blocks = np.array([pk.block("read") for _ in range(50_000)])
    edges = [0, 100, 300, 600, 1000]
    shares = np.histogram(blocks, bins=edges)[0] / len(blocks)
    for got, want in zip(shares, (0.60, 0.30, 0.08, 0.02)):
        assert abs(got - want) < _tol(want, len(blocks))


def test_zoned_abs_zones_in_bytes_and_per_direction():
    job = _job(random_distribution="zoned_abs:50/1m:50/3m,100/512k", rw="randrw")
    assert job.zones_read == ((50.0, 1 << 20), (50.0, 3 << 20)) and job.zones_write == ((100.0, 512 << 10),)
    pk = OffsetPicker(job, 1024, 4096, _gen(7))
    w = [pk.block("write") for _ in range(2000)]
    assert max(w) < 128  # 512 KiB = 128 blocks
    r = np.array([pk.block("read") for _ in range(20_000)])
    assert abs((r < 256).mean() - 0.5) < 0.02


_JOB = {"ioengine": "pvsync2", "direct": "1", "rw": "randread", "size": "4m", "runtime": "15ms", "time_based": "1"}


def _offsets(sets, seed=1):
    job = job_from_options({**_JOB, **sets}, name="j")
    res = simulate(resolve(jobs=[job], platform=PLATFORM, seed=seed), keep_model=True)
    return [(r.offset, r.nbytes) for r in res.model.records]


def test_zipf_job_end_to_end_skew_and_range():
    offs = _offsets({"random_distribution": "zipf:1.2"})
    assert len(offs) > 1000
    assert all(0 <= o and o + b <= 4 << 20 and o % 4096 == 0 for o, b in offs)
    share = Counter(o for o, _b in offs).most_common(1)[0][1] / len(offs)
    p1 = 1 / zeta(1024, 1.2)
    assert abs(share - p1) < _tol(p1, len(offs))
    assert offs == _offsets({"random_distribution": "zipf:1.2"})  # deterministic
    assert offs != _offsets({"random_distribution": "zipf:1.2"}, seed=2)


def test_uniform_job_draws_unchanged_by_the_option():
    """random_distribution=random and random_generator=tausworthe64 are fio's uniform default:
    the same offsets as without them."""
    plain = _offsets({})
    assert _offsets({"random_distribution": "random", "random_generator": "tausworthe64"}) == plain


def test_percentage_random_mixes_sequential_runs():
    offs = _offsets({"percentage_random": "25"})
    seq = sum(1 for (o0, b0), (o1, _b) in zip(offs, offs[1:]) if o1 == o0 + b0)
    share = seq / (len(offs) - 1)
    assert abs(share - 0.75) < _tol(0.75, len(offs)) + 1 / 1024  # + a random draw landing next by chance


def test_lfsr_job_never_repeats_within_a_pass():
    offs = [o for o, _b in _offsets({"random_generator": "lfsr", "size": "1m"})]
    assert len(offs) > 256
    assert sorted(offs[:256]) == [i * 4096 for i in range(256)]


@pytest.mark.parametrize(
    "value, words",
    [
        ("zipf", "needs a value"),
        ("zipf:1", "different from 1.0"),
        ("zipf:-1", "> 0"),
        ("pareto:1.5", "0 < h < 1"),
        ("normal:100", "0 <= dev < 100"),
        ("zipf:1.2:2", "center out of range"),
        ("zoned:50/10:40/20", "add up to 90"),
        ("zoned:60/80:40/80", "more than 100%"),
        ("zoned:60", "add up to 60"),
        ("gauss:3", "unknown distribution"),
        ("zipf:x", "not a number"),
        ("zipf:1.2,1.1", "per-direction"),
        ("sequence", "needs block indices"),
        ("sequence:2,x,1", "'x' is not a block index"),
        ("sequence:" + ",".join(["1"] * 65), "at most 64"),
        ("random:1", "takes no value"),
    ],
)
def test_bad_random_distribution_names_the_option(value, words):
    with pytest.raises(ConfigError) as e:
        parse_fio_text(f"[j]\nrandom_distribution={value}\n", path="t.fio")
    assert "random_distribution" in str(e.value) and words in str(e.value)


def test_bad_percentage_random_and_generator():
    with pytest.raises(ConfigError, match="percentage_random.*<= 100"):
        parse_fio_text("[j]\npercentage_random=101\n", path="t.fio")
    with pytest.raises(ConfigError, match="random_generator.*allowed"):
        parse_fio_text("[j]\nrandom_generator=mt\n", path="t.fio")


def test_zoned_abs_beyond_the_range_is_a_clear_error():
    with pytest.raises(ConfigError, match="zoned_abs: a zone starts at block"):
        _offsets({"random_distribution": "zoned_abs:60/8m:40/8m"})


@pytest.mark.parametrize(
    "opts",
    [
        {"random_distribution": "zipf:1.2:0.25", "random_generator": "lfsr"},
        {"random_distribution": "zoned:60/10:40/90,100/50", "rw": "randrw", "percentage_random": "30,60"},
        {"random_distribution": "zoned_abs:50/1m:50/3m"},
        {"random_distribution": "normal:5"},
        {"random_distribution": "sequence:2,0,1", "random_sequence_stride": "1"},
        {"rate": "1m,2m", "rate_process": "poisson", "rw": "randrw"},
        {"rate_iops": "100", "rate_iops_min": "50,", "rate_cycle": "250", "rate_min": ",1m"},
        {
            "prio": "3",
            "prioclass": "1",
            "ioengine": "io_uring",
            "cmdprio_percentage": "10,30",
            "cmdprio_class": "2",
            "cmdprio": "1",
        },
        {
            "rw": "randread:8",
            "rw_sequencer": "identical",
            "number_ios": "5",
            "loops": "2",
            "offset_increment": "1m",
            "startdelay": "1ms-3ms",
        },
        {"rw": "write:8k", "startdelay": "2s"},
    ],
)
def test_fio_options_read_back_give_the_same_job(opts):
    from scenarios.inputs.fio.output import fio_options

    job = _job(**opts)
    again = job_from_options(fio_options(job), name="j")
    assert again.model_dump(exclude={"source", "ignored_options"}) == job.model_dump(
        exclude={"source", "ignored_options"}
    )


def test_backwards_read_steps_back_and_wraps_to_the_end():
    """fio's rw=read:-8k (examples/backwards-read.fio): the first IO at the start, then each one 8 KiB
    before the end of the last (4 KiB back per IO), wrapping from the start to 8 KiB before the end: the
    region's last block is never read, as in fio."""
    offs = [o for o, _b in _offsets({"rw": "read:-8k", "bs": "4k", "size": "64k"})]
    k = 4096
    one_pass = [0] + [(14 - i) * k for i in range(14)]  # 0, 56k, 52k, ..., 4k (the last block is skipped)
    assert offs[: 2 * len(one_pass)] == one_pass + one_pass
    assert len(offs) > 100


def test_backwards_read_ends_by_size():
    job = job_from_options({**_JOB, "rw": "read:-8k", "size": "64k", "time_based": "0", "runtime": "0"}, name="j")
    res = simulate(resolve(jobs=[job], platform=PLATFORM), keep_model=True)
    assert sum(r.nbytes for r in res.model.records) == 64 << 10


def test_zoned_range_left_out_takes_the_rest():
    """fio's zone_split_ddir: a zone without a range (``20/``) takes what the others leave of 100%
    (fio's examples/rand-zones.fio)."""
    job = _job(random_distribution="zoned:50/5:30/15:20/")
    assert job.zones_read == ((50.0, 5.0), (30.0, 15.0), (20.0, 80.0))
    job = _job(random_distribution="zoned:40/10:30:30/0")
    assert job.zones_read == ((40.0, 10.0), (30.0, 45.0), (30.0, 45.0))


def test_io_size_larger_than_size_wraps_within_the_region():
    """fio's io_size: the IO amount; size stays the region (fio's HOWTO: 40 GiB of IO within 20 GiB)."""
    job = job_from_options(
        {**_JOB, "rw": "read", "size": "64k", "io_size": "256k", "time_based": "0", "runtime": "0"}, name="j"
    )
    res = simulate(resolve(jobs=[job], platform=PLATFORM), keep_model=True)
    offs = [r.offset for r in res.model.records]
    assert sum(r.nbytes for r in res.model.records) == 256 << 10
    assert max(offs) < 64 << 10 and offs.count(0) == 4


def test_fill_device_sizes_the_job_to_the_device():
    """fio's fill_device: size is the device's capacity past the offset (ENOSPC ends the writes)."""
    job = job_from_options({**_JOB, "rw": "write", "fill_device": "1", "offset": "1m", "size": "4k"}, name="j")
    cfg = resolve(jobs=[job], platform=PLATFORM)
    assert cfg.jobs[0].size_bytes == (cfg.platform.ssd.capacity_bytes - (1 << 20)) // 4096 * 4096


def test_sequence_distribution_takes_the_blocks_in_order_end_to_end():
    """fio's random_distribution=sequence:2,0,1 (HOWTO; fio's examples/sequence-distribution.fio):
    blocks 2, 0, 1 of the job's range in that order, repeated indefinitely."""
    job = _job(random_distribution="sequence:2,0,1")
    assert (job.random_distribution, job.random_sequence, job.random_sequence_stride) == ("sequence", (2, 0, 1), False)
    offs = [o for o, _b in _offsets({"random_distribution": "sequence:2,0,1", "bs": "8k"})]
    assert len(offs) > 30
    assert offs[:9] == [k * 8192 for k in (2, 0, 1) * 3]
    assert set(offs) == {0, 8192, 16384}


def test_sequence_stride_moves_on_by_the_sequence_length_and_wraps():
    """random_sequence_stride=1: each repetition one sequence length further (block groups of 3:
    2,0,1 then 5,3,4 then 8,6,7 ...); past the range's last block it wraps to its start."""
    job = _job(random_distribution="sequence:2,0,1", random_sequence_stride="1", size="32k")
    pk = OffsetPicker(job, 8, 4096, _gen())  # 32 KiB = 8 blocks of 4 KiB
    blocks = [pk.block("read") for _ in range(9)]
    assert blocks == [2, 0, 1, 5, 3, 4, 8 % 8, 6, 7]
    offs = [o for o, _b in _offsets({"random_distribution": "sequence:2,0,1", "random_sequence_stride": "1"})]
    assert offs[:6] == [k * 4096 for k in (2, 0, 1, 5, 3, 4)]
    assert all(0 <= o < 4 << 20 for o in offs)
