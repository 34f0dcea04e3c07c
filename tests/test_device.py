"""The NVMe device model: service time, saturation, bandwidth limit, queueing."""

import numpy as np
import pytest

from models.os.block.request import Request
from models.ssd.device import NvmeDevice
from models.ssd.irq_generation import IrqGeneration
from models.ssd.presets import optane_900p
from scenarios.run.simulate import simulate
from simcore.engine import Engine
from simcore.rng import RngStreams
from tests.conftest import make_cfg


class _Q:
    def __init__(self):
        self.posted = []


def _device(**kw):
    eng = Engine()
    dev = NvmeDevice(optane_900p(**kw), eng, RngStreams(1).stream("ssd"))
    qp = dev.add_queue_pair(polled=True, depth=1024)
    q = _Q()
    qp.on_post = lambda qp_, req: q.posted.append((eng.now, req))
    return eng, dev, qp, q


def test_single_command_timeline_is_fetch_media_transfer_post():
    from models.ssd.config import ServiceConfig

    eng, dev, qp, q = _device(read=ServiceConfig(base_ns=5_000.0, sd_ns=0.0), datapath=None)
    req = Request(0, None, 0, "read", 4096, 0, 0, False)
    eng.call_at(1_000, dev.submit, qp, req)
    eng.run(1e6)
    cfg = dev.cfg
    xfer = 4096 / cfg.link_gb_s
    assert req.t_dev_start == pytest.approx(1_000 + cfg.fetch_ns)
    assert req.t_dev_end == pytest.approx(1_000 + cfg.fetch_ns + 5_000 + xfer)
    assert q.posted[0][0] == pytest.approx(req.t_dev_end + cfg.post_ns)


def test_saturation_follows_parallel_units_and_each_unit_is_fifo():
    from models.ssd.config import ServiceConfig

    eng, dev, qp, q = _device(read=ServiceConfig(base_ns=5_000.0, sd_ns=0.0), parallel_units=3, datapath=None)
    # consecutive 4 KiB blocks rotate over the units (the address interleave): no collisions
    reqs = [Request(i, None, 0, "read", 512, i * 4096, 0, False) for i in range(30)]
    for r in reqs:
        dev.submit(qp, r)
    eng.run(1e7)
    ends = [t for t, _ in q.posted]
    assert [r.id for _, r in q.posted] == list(range(30))  # FIFO through the units
    units = dev.cfg.parallel_units
    rate = (len(ends) - units) / (ends[-1] - ends[0]) * 1e9  # completions come in groups of `units`
    assert rate == pytest.approx(dev.cfg.parallel_units / 5_000e-9, rel=0.05)


def test_commands_to_one_unit_serialize():
    """Every command at the same address: one unit serves them one after another, whatever the
    number of units."""
    from models.ssd.config import ServiceConfig

    eng, dev, qp, q = _device(read=ServiceConfig(base_ns=5_000.0, sd_ns=0.0), parallel_units=3, datapath=None)
    for i in range(10):
        dev.submit(
            qp, Request(i, None, 0, "read", 512, 3 * dev.cfg.unit_stripe_bytes * dev.cfg.parallel_units, 0, False)
        )
    eng.run(1e7)
    starts = sorted(r.t_dev_start for _, r in q.posted)
    assert np.diff(starts) == pytest.approx([5_000.0] * 9)


def _closed_loop(dev_cfg, op: str, depth: int, n: int, device_seed: int, address_seed: int) -> tuple[float, float]:
    """Mean device latency (doorbell to completion posted, ns) and IOPS of ``n`` random 4 KiB
    commands of ``op`` kept at ``depth`` outstanding on a device alone (a closed loop)."""
    eng = Engine()
    dev = NvmeDevice(dev_cfg, eng, RngStreams(device_seed).stream("ssd"))
    qp = dev.add_queue_pair(polled=True, depth=1024)
    rng = np.random.default_rng(address_seed)
    lat: list[float] = []
    sent, last = [0], [0.0]

    def send():
        sent[0] += 1
        r = Request(sent[0], None, 0, op, 4096, int(rng.integers(0, 2**30)) * 4096, 0, False)
        r.t_submit = eng.now
        dev.submit(qp, r)

    def on_post(qp_, req):
        last[0] = eng.now
        lat.append(eng.now - req.t_submit)
        if sent[0] < n:
            send()

    qp.on_post = on_post
    for _ in range(depth):
        eng.call_at(0.0, send)
    eng.run(1e10)
    return float(np.mean(lat)), n / last[0] * 1e9


def _mean_latency_at_depth(depth: int, n: int = 4000, seed: int = 7, **kw) -> tuple[float, float]:
    """:func:`_closed_loop` of random 4 KiB reads on the 900P, by default with 3 units of a fixed
    5 us and no data path stage (the units alone); ``kw`` overrides."""
    from models.ssd.config import ServiceConfig

    kw = {"read": ServiceConfig(base_ns=5_000.0, sd_ns=0.0), "parallel_units": 3, "datapath": None, **kw}
    return _closed_loop(optane_900p(**kw), "read", depth, n, device_seed=1, address_seed=seed)


def test_random_addresses_collide_on_units_so_latency_rises_gradually_with_depth():
    """With 3 units, a second random command finds its unit busy one time in three: latency rises
    from depth 2 on, long before every unit is busy (the old first-free-unit model was flat up
    to depth 3, then a knee). Depth 2 adds the collision wait of the (fixed) 5 us service: about
    P(same unit) x half the service time overlapped, so between 1/3 x 1/2 and 1/3 of it."""
    lat1, _ = _mean_latency_at_depth(1)
    lat2, _ = _mean_latency_at_depth(2)
    lat4, _ = _mean_latency_at_depth(4)
    assert lat1 < lat2 < lat4
    assert 5_000 / 6 * 0.8 < lat2 - lat1 < 5_000 / 3


def test_device_iops_approach_the_units_ceiling_with_depth():
    """U units of fixed service s, N commands kept outstanding at random addresses: a closed
    network with random routing. With exponential service its throughput is U/s x N/(N+U-1)
    (product form); fixed service queues less, so that is a lower bound, approached as N grows and
    the units' ceiling U/s (3 / 5 us = 600K, the 900P's 550-600K) is never passed."""
    ceiling = 3 / 5_000e-9
    for depth in (16, 32):
        _, x = _mean_latency_at_depth(depth, n=12_000)
        assert ceiling * depth / (depth + 2) <= x < min(1.1 * ceiling * depth / (depth + 2), ceiling)


def _read_bandwidth(**kw) -> float:
    """GB/s of 50 back-to-back 128 KiB reads."""
    eng, dev, qp, q = _device(**kw)
    reqs = [Request(i, None, 0, "read", 128 * 1024, i * 128 * 1024, 0, False) for i in range(50)]
    for r in reqs:
        dev.submit(qp, r)
    eng.run(1e8)
    ends = [t for t, _ in q.posted]
    return 49 * 128 * 1024 / (ends[-1] - ends[0])  # bytes per ns = GB/s


def test_large_transfers_are_bound_by_the_slower_of_data_path_and_link():
    """The Optane's data path (2.4 GB/s, the datasheet's sequential read) is slower than its PCIe
    3.0 x4 link (3.5 GB/s): it bounds large reads. Without the data path stage the link does."""
    cfg = optane_900p()
    assert cfg.datapath.read_gb_s < cfg.link_gb_s
    assert _read_bandwidth() == pytest.approx(cfg.datapath.read_gb_s, rel=0.02)
    assert _read_bandwidth(datapath=None) == pytest.approx(cfg.link_gb_s, rel=0.02)
    faster = cfg.datapath.model_copy(update={"read_gb_s": 2 * cfg.link_gb_s})
    assert _read_bandwidth(datapath=faster) == pytest.approx(cfg.link_gb_s, rel=0.02)


def test_data_path_streams_into_the_link():
    """One read: media, then the data path, with the link transfer cut through (it ends when the
    slower of the two ends, not after their sum); one write: the link, then the data path."""
    from models.ssd.config import ServiceConfig

    eng, dev, qp, q = _device(
        read=ServiceConfig(base_ns=5_000.0, sd_ns=0.0), write=ServiceConfig(base_ns=6_000.0, sd_ns=0.0)
    )
    cfg = dev.cfg
    rd = Request(0, None, 0, "read", 4096, 0, 0, False)
    wr = Request(1, None, 0, "write", 4096, 4096, 0, False)
    eng.call_at(1_000, dev.submit, qp, rd)
    eng.call_at(100_000, dev.submit, qp, wr)
    eng.run(1e6)
    path_rd, path_wr, link = 4096 / cfg.datapath.read_gb_s, 4096 / cfg.datapath.write_gb_s, 4096 / cfg.link_gb_s
    assert path_rd > link and path_wr > link
    assert rd.t_dev_end == pytest.approx(1_000 + cfg.fetch_ns + 5_000 + path_rd)
    assert wr.t_dev_start == pytest.approx(100_000 + cfg.fetch_ns + path_wr)
    assert wr.t_dev_end == pytest.approx(wr.t_dev_start + 6_000)
    assert dev.busy_path_ns == pytest.approx({"read": path_rd, "write": path_wr})


def test_random_4k_iops_saturate_at_the_data_path_rate_not_the_units():
    """With the data path stage, 4 KiB random reads saturate at its rate / 4 KiB (2.4 GB/s: 586K,
    the P4800X's published QD16 585K) even with many more units than needed; the units still
    make latency rise from depth 2 on."""
    from models.ssd.config import ServiceConfig

    kw = {"read": ServiceConfig(base_ns=4_500.0, sd_ns=0.0), "datapath": optane_900p().datapath}
    ceiling = optane_900p().datapath.read_gb_s * 1e9 / 4096
    for units in (3, 28):
        _, x = _mean_latency_at_depth(32, n=12_000, parallel_units=units, **kw)
        assert x == pytest.approx(ceiling, rel=0.02)
    lat1, _ = _mean_latency_at_depth(1, parallel_units=3, **kw)
    lat2, _ = _mean_latency_at_depth(2, parallel_units=3, **kw)
    lat4, x4 = _mean_latency_at_depth(4, parallel_units=3, **kw)
    assert lat1 < lat2 < lat4 and x4 < 0.8 * ceiling


def test_data_path_count_beyond_the_units_is_refused():
    from pydantic import ValidationError

    from models.ssd.config import DataPathConfig

    with pytest.raises(ValidationError, match="datapath.count=4 exceeds parallel_units=3"):
        optane_900p(datapath=DataPathConfig(count=4, read_gb_s=1.0, write_gb_s=1.0))


def test_device_power_follows_the_data_path_busy_share():
    """With a data path stage, a device's active power is (active - idle) x the path's busy share:
    at its read ceiling it draws active_read_w."""
    from models.ssd.energy import ssd_energy_j, ssd_reading

    eng, dev, qp, q = _device()
    a = ssd_reading(dev, 0.0)
    for i in range(2000):  # far more than the path can move at once: busy from 0 to the last end
        dev.submit(qp, Request(i, None, 0, "read", 4096, i * 4096, 0, False))
    eng.run(1e9)
    last = max(t for t, _ in q.posted) - dev.cfg.post_ns
    path_busy_s = 2000 * 4096 / dev.cfg.datapath.read_gb_s * 1e-9
    e = ssd_energy_j([dev], [a], [ssd_reading(dev, last)], path_busy_s)
    assert e == pytest.approx(dev.cfg.active_read_w * path_busy_s, rel=1e-9)
    assert last * 1e-9 == pytest.approx(path_busy_s, rel=0.01)


def test_900p_saturates_near_published_iops():
    """The published ceiling (scenarios/data/reference/optane_ssd.yaml): 550K rated, 585K measured at
    QD16. 4 io_uring threads at depth 8 (32 outstanding) leave the CPUs short of saturation."""
    from scenarios.data.reference import values

    rated = values("optane_ssd", "rated_random_4k_iops")["read"]
    qd16 = values("optane_ssd", "random_read_4k_by_depth")[16]["iops"]
    s = simulate(make_cfg("interrupt", threads=4, runtime_ms=30, extra={"ioengine": "io_uring", "iodepth": "8"}))[
        "summary"
    ]
    assert s["cpu_utilization"] < 0.5
    assert 0.98 * rated <= s["iops"] <= 1.03 * qd16


def test_littles_law_in_the_device():
    """L = lambda W for the device: L from the device's own in-flight counter (integrated over
    time each time it changes), lambda and W from the requests' dispatch and completion-post
    stamps. The two sides share no code: a command whose stamps disagree with its real stay in
    the device, or a counter that leaks, breaks the equality."""
    cfg = make_cfg("interrupt", threads=6, runtime_ms=30, ramp_ms=5)
    from scenarios.run.assembly import build_run

    host, _fio, ramp, end = build_run(cfg, keep_requests=True)
    (dev,) = host.devices
    changes = []  # (time, commands in the device after the change), from the device's counter

    def level():
        return sum(qp.inflight for qp in dev.qps)

    # the queue pairs' hooks see every change: the SQ hook just before a submitted command counts,
    # the interrupt generation (wrapped) after a completion (the device's and the policies' methods
    # are not patched: they may be compiled)
    class Counted(IrqGeneration):
        def __init__(self, inner):
            super().__init__(inner.qp, inner.cfg, inner.engine)
            self.inner = inner

        def on_completion(self, req):  # after the counter went down
            changes.append((host.engine.now, level()))
            self.inner.on_completion(req)

    def watch(qp):
        sq_hook = qp.submit_hook

        def counted_submit(req):
            if sq_hook is not None:
                sq_hook(req)
            changes.append((host.engine.now, level() + 1))

        qp.submit_hook = counted_submit
        qp.irq_gen = Counted(qp.irq_gen)

    for qp in dev.qps:
        watch(qp)
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


@pytest.mark.parametrize("preset", ["optane_900p", "optane_p4800x"])
def test_optane_presets_meet_the_published_read_and_write_ceilings(preset):
    """Random 4 KiB reads and writes at 32 outstanding, device alone: within 6% of the published
    ceilings (scenarios/data/reference/optane_ssd.yaml: reads 585K measured at QD16, 550K rated; writes
    500K rated). Nothing in the presets is fitted to them: the data path's rates are the datasheet's
    sequential bandwidths."""
    from models.ssd import presets
    from scenarios.data.reference import values

    cfg = getattr(presets, preset)()
    rated = values("optane_ssd", "rated_random_4k_iops")
    measured_qd16 = values("optane_ssd", "random_read_4k_by_depth")[16]["iops"]
    (_, reads), (_, writes) = (
        _closed_loop(cfg, op, 32, 12_000, device_seed=5, address_seed=5) for op in ("read", "write")
    )
    assert rated["read"] * 0.98 <= reads <= measured_qd16 * 1.03
    assert writes == pytest.approx(rated["write"], rel=0.06)
    assert writes < reads  # read/write asymmetry
