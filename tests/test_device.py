"""The NVMe device model: service time, saturation, bandwidth limit, queueing."""

import numpy as np
import pytest

from models.ssd.device import NvmeDevice
from models.ssd.presets import optane_900p
from models.os.request import Request
from simcore.engine import Engine
from simcore.rng import RngStreams
from scenarios.simulate import simulate
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
    """L = lambda W for the device: L from the device's own in-flight counter (integrated over
    time each time it changes), lambda and W from the requests' dispatch and completion-post
    stamps. The two sides share no code: a command whose stamps disagree with its real stay in
    the device, or a counter that leaks, breaks the equality."""
    cfg = make_cfg("interrupt", threads=6, runtime_ms=30, ramp_ms=5)
    from scenarios.assembly import build_run

    host, ramp, end = build_run(cfg)
    (dev,) = host.devices
    changes = []  # (time, commands in the device after the change), from the device's counter

    def level():
        return sum(qp.inflight for qp in dev.qps)

    submit, post = dev.submit, dev._post

    def counted_submit(qp, req):
        submit(qp, req)
        changes.append((host.engine.now, level()))

    def counted_post(qp, req):
        post(qp, req)
        changes.append((host.engine.now, level()))

    dev.submit, dev._post = counted_submit, counted_post
    host.engine.run(end)
    # time-average of the counter over the measured window [ramp, end]
    area, last_t, last_n = 0.0, ramp, 0
    for t, n in changes:
        if t > ramp:
            area += last_n * (min(t, end) - max(last_t, ramp))
        last_t, last_n = t, n
        if t >= end:
            break
    else:
        area += last_n * (end - max(last_t, ramp))
    span = end - ramp
    recs = [r for r in host.records if r.t_dispatch >= ramp and r.t_cqe <= end]
    w = np.array([r.t_cqe - r.t_dispatch for r in recs])
    assert len(recs) > 10_000
    # the counter also covers the commands that straddle the window's edges (in flight at ramp
    # or at end), which the records leave out: at most 6 per edge (one per synchronous thread),
    # each contributing less than the longest stay in the device
    longest = max(r.t_cqe - r.t_dispatch for r in host.records if r.t_cqe)
    straddle_bound = 2 * cfg.jobs[0].numjobs * longest
    assert abs(area - w.sum()) <= straddle_bound
    # the bound is tight enough to matter: below 2% of the area (1% per edge)
    assert straddle_bound < 0.02 * area
    assert area / span == pytest.approx(len(recs) / span * w.mean(), abs=straddle_bound / span)
    # and the device never holds more than the six synchronous threads' commands
    assert max(n for _, n in changes) <= 6

