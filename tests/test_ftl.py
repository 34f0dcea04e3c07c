"""The FTL's garbage collection and flexible data placement (models/ssd/ftl.py): write
amplification emerges from over-provisioning, utilisation and how writes mix lifetimes; GC copies
occupy media time; FDP streams kept apart lower it; nothing changes where the FTL is off."""

import numpy as np
import pytest

from models.os.block.request import Request
from models.ssd.config import FtlConfig
from models.ssd.device import NvmeDevice
from models.ssd.ftl import Ftl
from models.ssd.presets import p3700
from scenarios.config.host import resolve
from scenarios.run.simulate import simulate
from simcore.engine import Engine
from simcore.rng import RngStreams
from tests.conftest import make_cfg

SPAN = 32 << 20  # 8192 pages of 4 KiB
PAGES = SPAN // 4096


def ftl(**kw) -> Ftl:
    cfg = FtlConfig(enabled=True, span_bytes=SPAN, pages_per_block=64, **kw)
    return Ftl(cfg, None)


def test_sequential_overwrite_has_no_write_amplification():
    f = ftl()
    for k in range(3 * PAGES):  # three whole passes over the full space
        f.write((k % PAGES) * 4096, 4096, 0)
    assert f.erases > 0  # blocks were reclaimed ...
    assert f.gc_copies == 0 and f.write_amplification == 1.0  # ... each wholly invalid


@pytest.mark.parametrize("span,ppb", [(SPAN, 64), (SPAN + 4096 * 10, 64), (4 << 20, 16)])
def test_the_full_precondition_is_every_page_programmed_in_order(span, ppb):
    """A full device's state, built at once, is what programming every page in order leaves (the
    last block open, whole or not)."""
    cfg = FtlConfig(enabled=True, span_bytes=span, pages_per_block=ppb)
    built, ref = Ftl(cfg, None), Ftl(cfg.model_copy(update={"precondition": "empty"}), None)
    for lpn in range(ref.n_lpn):
        ref._program(lpn, 0)
    for attr in ("l2p", "p2l", "valid", "state", "open"):
        assert getattr(built, attr) == getattr(ref, attr), attr
    assert list(built.free) == list(ref.free)


def test_random_overwrite_at_high_utilisation_amplifies_writes():
    rng = np.random.default_rng(1)
    wa = {}
    for spare in (0.07, 0.28):
        f = ftl(spare_fraction=spare)
        for p in rng.integers(0, PAGES, 6 * PAGES):
            f.write(int(p) * 4096, 4096, 0)
        wa[spare] = f.write_amplification
    assert wa[0.07] > 3.0  # greedy GC at 7% spare: (1 + 0.07) / (2 x 0.07) ~ 7.6 in theory
    assert 1.2 < wa[0.28] < wa[0.07]  # more over-provisioning, less amplification


def test_empty_device_has_no_gc_until_its_space_is_used():
    f = ftl(precondition="empty")
    rng = np.random.default_rng(2)
    for p in rng.integers(0, PAGES // 2, PAGES // 2):  # half the space, written once-ish
        f.write(int(p) * 4096, 4096, 0)
    assert f.gc_copies == 0


def _hot_cold(f: Ftl, apart: bool, n: int) -> float:
    """A hot stream rewriting 1/8 of the space at random and a cold one rewriting the rest in
    order, interleaved; with ``apart`` each has its own placement handle."""
    rng = np.random.default_rng(3)
    hot = PAGES // 8
    cold = 0
    for _ in range(n):
        f.write(int(rng.integers(0, hot)) * 4096, 4096, 0)
        f.write((hot + cold) * 4096, 4096, 1 if apart else 0)
        cold = (cold + 1) % (PAGES - hot)
    return f.write_amplification


def test_fdp_streams_kept_apart_lower_write_amplification():
    mixed = _hot_cold(ftl(placement_handles=2), False, 3 * PAGES)
    apart = _hot_cold(ftl(placement_handles=2), True, 3 * PAGES)
    # mixed: every block holds hot pages that die soon and cold ones that live a whole pass, so GC
    # copies the cold ones again and again (~6.7 here); apart: the cold stream's blocks die whole
    # and the hot stream's are nearly all invalid when collected (~1.7)
    assert apart < 0.4 * mixed


def test_trim_relieves_garbage_collection():
    rng = np.random.default_rng(4)
    offs = [int(p) * 4096 for p in rng.integers(0, PAGES, 3 * PAGES)]
    wa = []
    for trim in (False, True):
        f = ftl()
        if trim:
            f.trim(PAGES // 2 * 4096, PAGES // 2 * 4096)  # half the space holds no data
        for off in offs:
            f.write(off % (PAGES // 2 * 4096), 4096, 0)  # writes stay in the first half
        wa.append(f.write_amplification)
    assert wa[1] < wa[0]


def _device(gc: bool):
    eng = Engine()
    kw = dict(ftl=FtlConfig(enabled=True, span_bytes=SPAN, pages_per_block=64)) if gc else {}
    dev = NvmeDevice(p3700(**kw), eng, RngStreams(1).stream("ssd"))
    qp = dev.add_queue_pair(polled=True, depth=4096)
    posted = []
    qp.on_post = lambda q, r: posted.append(eng.now)
    return eng, dev, qp, posted


def test_gc_copies_occupy_media_time():
    """The same random writes take longer to drain with garbage collection: its copies and erases
    occupy the media units (the device's busy time grows by them)."""
    rng = np.random.default_rng(5)
    offs = [int(p) * 4096 for p in rng.integers(0, PAGES, 4000)]
    done = {}
    for gc in (False, True):
        eng, dev, qp, posted = _device(gc)
        for i, off in enumerate(offs):
            dev.submit(qp, Request(i, None, 0, "write", 4096, off, 0, False))
        eng.run(1e12)
        done[gc] = (max(posted), dev.busy_unit_ns["write"])
    assert done[True][1] > 1.5 * done[False][1]
    assert done[True][0] > done[False][0]


def test_read_only_workload_is_identical_with_the_ftl_on():
    base = make_cfg(rw="randread", runtime_ms=20, ramp_ms=5, platform=None)
    ssd = base.platform.ssd.model_copy(update={"ftl": FtlConfig(enabled=True, span_bytes=SPAN)})
    on = base.model_copy(update={"platform": base.platform.model_copy(update={"ssd": ssd})})
    a, b = simulate(base).summary, simulate(on).summary
    assert a["ios"] == b["ios"] and a["latency_us"] == b["latency_us"]
    assert b["ssd_media"]["ssd0"]["host_pages"] == 0 and "ssd_media" not in a


FDP_JOB = """
[global]
direct=1
filename=/dev/ng0n1
ioengine=io_uring_cmd
iodepth=8
bs=4k
time_based
runtime=60ms
{fdp}
[hot]
rw=randwrite
size=4m
{hot}
[cold]
rw=write
offset=4m
size=28m
{cold}
"""
FDP_SETS = {
    "kernel.version": "6.6",
    "ssd.ftl.enabled": "1",
    "ssd.ftl.span_bytes": str(SPAN),
    "ssd.ftl.pages_per_block": "64",
    "ssd.ftl.placement_handles": "4",
    "ssd.write_cache_program_ns": "100000",
}


def test_fio_fdp_jobs_on_two_placement_handles_lower_write_amplification(tmp_path):
    wa = {}
    for name, text in (
        ("mixed", FDP_JOB.format(fdp="", hot="", cold="")),
        ("fdp", FDP_JOB.format(fdp="fdp=1", hot="fdp_pli=0", cold="fdp_pli=1")),
    ):
        path = tmp_path / f"{name}.fio"
        path.write_text(text)
        s = simulate(resolve(job_file=str(path), platform="p3700-e5-2660v4", sets=FDP_SETS)).summary
        wa[name] = s["ssd_media"]["ssd0"]["write_amplification"]
    assert wa["fdp"] < 0.85 * wa["mixed"]


@pytest.mark.parametrize("select", ["roundrobin", "random"])
def test_fdp_pli_select_cycles_through_the_listed_handles(tmp_path, select):
    path = tmp_path / "rr.fio"
    path.write_text(
        FDP_JOB.format(fdp=f"fdp=1\nfdp_pli=1,3\nfdp_pli_select={select}", hot="", cold="").replace("60ms", "5ms")
    )
    cfg = resolve(job_file=str(path), platform="p3700-e5-2660v4", sets={**FDP_SETS, "ssd.ftl.precondition": "empty"})
    ftl_ = simulate(cfg, keep_model=True).model.devices[0].ftl
    assert ftl_.host_pages > 0 and set(ftl_.open) == {1, 3}  # the writes filled blocks of handles 1 and 3 only
