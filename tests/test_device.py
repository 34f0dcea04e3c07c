"""The NVMe device model: service time, saturation, bandwidth limit, queueing."""

import numpy as np
import pytest

from models.ssd.device import NvmeDevice
from models.ssd.presets import optane_900p
from models.os.request import Request
from simcore.engine import Engine
from simcore.rng import RngStreams
from stacksim.run import simulate
from tests.conftest import make_cfg


class _Q:
    def __init__(self):
        self.posted = []


def _device(**kw):
    eng = Engine()
    dev = NvmeDevice(optane_900p(**kw), eng, RngStreams(1).stream("ssd"))
    qp = dev.add_queue_pair(0, polled=True, depth=1024)
    q = _Q()
    qp.on_post = lambda qp_, req: q.posted.append((eng.now, req))
    return eng, dev, qp, q


def test_single_command_timeline_is_fetch_media_transfer_post():
    from models.ssd.config import ServiceConfig

    eng, dev, qp, q = _device(read=ServiceConfig(base_ns=5_000.0, sd_ns=0.0))
    req = Request(0, None, 0, "read", 4096, 0, 0, False)
    eng.call_at(1_000, dev.submit, qp, req)
    eng.run(1e6)
    cfg = dev.cfg
    xfer = 4096 / cfg.link_gb_s
    assert req.t_dev_start == pytest.approx(1_000 + cfg.fetch_ns)
    assert req.t_dev_end == pytest.approx(1_000 + cfg.fetch_ns + 5_000 + xfer)
    assert q.posted[0][0] == pytest.approx(req.t_dev_end + cfg.post_ns)


def test_saturation_follows_parallel_units_and_queueing_is_fifo():
    from models.ssd.config import ServiceConfig

    eng, dev, qp, q = _device(read=ServiceConfig(base_ns=5_000.0, sd_ns=0.0))
    reqs = [Request(i, None, 0, "read", 512, 0, 0, False) for i in range(30)]
    for r in reqs:
        dev.submit(qp, r)
    eng.run(1e7)
    ends = [t for t, _ in q.posted]
    assert [r.id for _, r in q.posted] == list(range(30))  # FIFO through the units
    units = dev.cfg.parallel_units
    rate = (len(ends) - units) / (ends[-1] - ends[0]) * 1e9  # completions come in groups of `units`
    assert rate == pytest.approx(dev.cfg.parallel_units / 5_000e-9, rel=0.05)


def test_large_transfers_are_bandwidth_bound():
    eng, dev, qp, q = _device()
    reqs = [Request(i, None, 0, "read", 128 * 1024, 0, 0, False) for i in range(50)]
    for r in reqs:
        dev.submit(qp, r)
    eng.run(1e8)
    ends = [t for t, _ in q.posted]
    bw = 49 * 128 * 1024 / (ends[-1] - ends[0])  # bytes per ns = GB/s
    assert bw == pytest.approx(dev.cfg.link_gb_s, rel=0.02)


def test_900p_saturates_near_published_iops():
    # mechanisms.md s.5: a 900P saturates around 550-600K 4 KiB random-read IOPS
    s = simulate(make_cfg("classic", threads=16, runtime_ms=30))["summary"]
    assert 540_000 <= s["iops"] <= 620_000


def test_littles_law_in_the_device():
    cfg = make_cfg("interrupt", threads=6, runtime_ms=30, ramp_ms=5)
    from stacksim.run import build

    host, ramp, end = build(cfg)
    host.engine.run(end)
    recs = [r for r in host.records if r.t_dispatch >= ramp and r.t_cqe <= end]
    t_in = np.array([r.t_cqe - r.t_dispatch for r in recs])
    span = max(r.t_cqe for r in recs) - min(r.t_dispatch for r in recs)
    throughput = len(recs) / span
    # the time-average number of commands in the device equals throughput x time in device
    events = sorted([(r.t_dispatch, 1) for r in recs] + [(r.t_cqe, -1) for r in recs])
    area = level = 0.0
    last = events[0][0]
    for t, d in events:
        area += level * (t - last)
        level += d
        last = t
    assert area / span == pytest.approx(throughput * t_in.mean(), rel=0.02)
