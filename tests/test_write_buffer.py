"""The flash controller's DRAM write buffer and SLC cache (models/ssd/write_buffer.py): writes are
acknowledged from the buffer while it has room; a full buffer holds writes back until flushes free
room (their latency then follows the flush rate, and every write still completes once); a sustained
sequential write falls from the SLC rate to the native rate where the cache's bytes are used; the
3D XPoint presets have neither."""

import numpy as np
import pydantic
import pytest

from models.os.block.request import Request
from models.platforms import compose_platform
from models.ssd.controller_config import SlcCacheConfig, WriteBufferConfig
from models.ssd.device import NvmeDevice
from models.ssd.presets import SSD_CATALOGUE, p3700, samsung_980pro
from scenarios.inputs.fio.parser import job_from_options
from scenarios.run.simulate import simulate
from simcore.engine import Engine
from simcore.rng import RngStreams
from tests.conftest import make_cfg


def _exact(cfg):
    """``cfg`` without service-time jitter (timelines can be checked to the ns)."""
    return cfg.model_copy(update={"write": cfg.write.model_copy(update={"sd_ns": 0.0})})


def _burst(cfg, n: int, offset: int, nbytes: int = 4096):
    """``n`` writes of ``nbytes`` at ``offset`` submitted at once; (device, requests, posted)."""
    eng = Engine()
    dev = NvmeDevice(cfg, eng, RngStreams(1).stream("ssd"))
    qp = dev.add_queue_pair(polled=True, depth=1024)
    posted = []
    qp.on_post = lambda q, r: posted.append(r.id)
    reqs = [Request(i, None, 0, "write", nbytes, offset, 0, False) for i in range(n)]
    for r in reqs:
        dev.submit(qp, r)
    eng.run()
    return dev, reqs, posted


def _one_unit(**kw):
    """The P3700 with its buffer flushing to a single media unit (timelines in program times), no jitter,
    a service time per command (the NAND media's own timings: tests/test_flash_media.py)."""
    return _exact(p3700(parallel_units=1, media=None, **kw))


def test_writes_are_acknowledged_from_the_buffer_while_it_has_room():
    """Twenty 4 KiB writes flushed to one unit: each is acknowledged after its buffer service (its
    data crossing the link first, one after another), none waits for the unit's programs, which run
    on after the acknowledgements."""
    cfg = _one_unit()
    n = 20
    assert n * 4096 < cfg.write_buffer.size_bytes
    dev, reqs, posted = _burst(cfg, n, 0)
    xfer = 4096 / cfg.link_gb_s
    t0 = reqs[0].t_dev_start
    assert [r.t_dev_start - t0 for r in reqs] == pytest.approx([i * xfer for i in range(n)])
    assert all(r.t_dev_end - r.t_dev_start == pytest.approx(cfg.write.base_ns) for r in reqs)
    wb = dev.write_buffer
    assert (wb.hits, wb.full_waits) == (n, 0)
    # the unit programs them one after another, long after the last acknowledgement
    assert dev.busy_until() == pytest.approx(reqs[0].t_dev_end + n * cfg.write_cache_program_ns)
    assert dev.busy_unit_ns["write"] == pytest.approx(n * cfg.write_cache_program_ns)


def test_a_full_buffer_holds_writes_back_until_flushes_free_room():
    """A buffer of eight 4 KiB writes, forty writes flushed to one unit, submitted at once: the first eight are taken at
    once, each further one when the oldest program ends, so they are acknowledged one program time
    apart (the flush rate); every write completes exactly once."""
    cfg = _one_unit(write_buffer=WriteBufferConfig(size_bytes=8 * 4096, program_gb_s=1.9))
    n, room = 40, 8
    dev, reqs, posted = _burst(cfg, n, 0)
    assert sorted(posted) == list(range(n))  # conservation: each write completes once
    prog = cfg.write_cache_program_ns
    ends = np.array([r.t_dev_end for r in reqs])
    assert np.diff(ends[room:]) == pytest.approx([prog] * (n - room - 1))
    assert np.all(np.diff(ends[:room]) < 0.01 * prog)  # into the buffer
    wb = dev.write_buffer
    assert (wb.hits, wb.full_waits) == (room, n - room)
    # the k-th held-back write is taken when the k-th program ends (the first began at the first
    # acknowledgement), then its data crosses the link and it is acknowledged
    xfer, svc = 4096 / cfg.link_gb_s, cfg.write.base_ns
    taken = ends[room:] - xfer - svc
    assert taken - ends[0] == pytest.approx(prog * np.arange(1, n - room + 1))


def _sequential_write(cfg, total: int, bs: int = 131072, depth: int = 32):
    """A sustained sequential write of ``total`` bytes, ``depth`` commands kept in flight; returns
    the completion times and the device."""
    eng = Engine()
    dev = NvmeDevice(cfg, eng, RngStreams(3).stream("ssd"))
    qp = dev.add_queue_pair(polled=True, depth=1024)
    done: list[float] = []
    n = total // bs
    nxt = [0]

    def issue() -> None:
        i = nxt[0]
        nxt[0] += 1
        dev.submit(qp, Request(i, None, 0, "write", bs, i * bs, 0, False))

    def on_post(q, r) -> None:
        done.append(eng.now)
        if nxt[0] < n:
            issue()

    qp.on_post = on_post
    for _ in range(depth):
        eng.call_at(0.0, issue)
    eng.run()
    assert len(done) == n
    return np.array(done), dev


def _rate_gb_s(times: np.ndarray, bs: int, a: int, b: int) -> float:
    """Throughput from completion ``a`` to completion ``b``, GB/s: bytes over time (the medians of
    short windows lean with the number of dies the frontier cycles over)."""
    return (b - a) * bs / (times[b] - times[a])


def test_a_sustained_sequential_write_falls_off_a_cliff_at_the_slc_cache_size():
    """The 980 PRO with a 256 MiB SLC cache (to keep the run short), 768 MiB written sequentially in
    128 KiB commands at depth 32: about the SLC rate (the buffer's program rate, 5 GB/s) until the
    cache's bytes are written, then the native 2 GB/s. The cliff, where the lines fitted to the bytes
    written against time before and after it meet, lies within 2% of the cache size."""
    size, bs = 256 << 20, 131072
    base = samsung_980pro()
    cfg = samsung_980pro(slc_cache=base.slc_cache.model_copy(update={"size_bytes": size}))
    times, dev = _sequential_write(cfg, 3 * size, bs)
    slc_rate = cfg.write_buffer.program_gb_s
    native = cfg.slc_cache.native_write_gb_s
    n_slc = size // bs
    assert _rate_gb_s(times, bs, n_slc // 4, n_slc // 2) == pytest.approx(slc_rate, rel=0.05)
    assert _rate_gb_s(times, bs, len(times) - n_slc // 2, len(times) - 1) == pytest.approx(native, rel=0.05)
    written = bs * np.arange(1, len(times) + 1)  # bytes acknowledged by each completion
    early, late = slice(n_slc // 10, 8 * n_slc // 10), slice(2 * n_slc, None)
    r1, c1 = np.polyfit(times[early], written[early], 1)
    r2, c2 = np.polyfit(times[late], written[late], 1)
    cliff_bytes = r1 * (c2 - c1) / (r1 - r2) + c1
    assert cliff_bytes == pytest.approx(size, rel=0.02)
    slc = dev.write_buffer.slc
    assert slc.slc_bytes == size and slc.native_bytes == 2 * size


def test_a_cache_already_used_writes_at_the_native_rate_from_the_start():
    """``initial_used_bytes``: a drive just after a long write has no SLC room left."""
    base = samsung_980pro()
    full = base.slc_cache.model_copy(update={"size_bytes": 1 << 30, "initial_used_bytes": 1 << 30})
    times, dev = _sequential_write(samsung_980pro(slc_cache=full), 64 << 20)
    rate = _rate_gb_s(times, 131072, len(times) // 2, len(times) - 1)  # (after the buffer's first fill)
    assert rate == pytest.approx(full.native_write_gb_s, rel=0.05)
    assert dev.write_buffer.slc.slc_bytes == 0


def test_random_writes_through_a_run_count_buffer_and_cache_bytes():
    """A fio random-write run on the 980 PRO: the summary's ssd_media counts every write as a buffer
    hit or a full wait and every byte as SLC or native."""
    platform, _ = compose_platform("xeon-silver-4210r", 1, "samsung-980pro", 1)
    opts = {"rw": "randwrite", "bs": "4k", "ioengine": "libaio", "iodepth": "64", "direct": "1"}
    job = job_from_options({**opts, "runtime": "5ms", "time_based": "1"}, name="rw")
    s = simulate(make_cfg(platform=platform).model_copy(update={"jobs": (job,)})).summary
    media = s["ssd_media"]["ssd0"]
    writes = media["buffer_hits"] + media["buffer_full_waits"]
    assert writes > 100
    assert media["slc_bytes"] + media["native_bytes"] == pytest.approx(4096 * writes, rel=0.01)
    assert media["native_bytes"] == 0  # 42 GB of cache: a short run stays inside it


@pytest.mark.parametrize("name", [n for n in SSD_CATALOGUE if n.startswith("optane")])
def test_optane_presets_have_no_write_buffer_and_write_in_place(name):
    """3D XPoint writes in place: no buffer, no SLC cache; a write occupies its unit for its service
    time and is acknowledged after it, as before the buffer was modelled."""
    cfg = _exact(SSD_CATALOGUE[name].make())
    assert cfg.write_buffer is None and cfg.slc_cache is None and cfg.write_cache_program_ns == 0
    dev, reqs, _ = _burst(cfg, 3, 0)
    assert dev.write_buffer is None
    svc = cfg.write.base_ns
    # one unit: the second write starts when the first's service ends
    assert reqs[1].t_dev_start >= reqs[0].t_dev_start + svc - 1e-6
    assert dev.busy_unit_ns["write"] == pytest.approx(3 * svc)


def test_bad_buffer_and_cache_settings_name_the_field():
    with pytest.raises(pydantic.ValidationError, match="needs a write_buffer"):
        p3700(write_buffer=None)
    with pytest.raises(pydantic.ValidationError, match="native_write_gb_s"):
        samsung_980pro(slc_cache=SlcCacheConfig(size_bytes=1 << 30, native_write_gb_s=50.0))
    with pytest.raises(pydantic.ValidationError, match="initial_used_bytes"):
        SlcCacheConfig(size_bytes=100, native_write_gb_s=1.0, initial_used_bytes=200)
