"""The NAND media (models/ssd/media.py): reads colliding on a die wait for it, reads on one channel
share its transfers, a TLC read takes its page type's tR (three modes), a read suspends a program or
an erase at the suspend latency's cost (and the suspended operation ends later by the read), the
flash presets keep their calibrated QD1 read time, and runs are deterministic."""

import numpy as np
import pydantic
import pytest

from models.os.block.request import Request
from models.ssd.device import NvmeDevice
from models.ssd.media import ERASE, PROGRAM, Media, MediaConfig
from models.ssd.presets import SSD_CATALOGUE, samsung_980pro
from models.ssd.transfer_path import TransferPath
from scenarios.run.summary import media_counters
from simcore.engine import Engine
from simcore.rng import RngStreams

TLC = MediaConfig(channels=2, read_ns=(20_000.0, 30_000.0, 40_000.0), channel_gb_s=1.0)
XFER = 4096 / TLC.channel_gb_s  # a 4 KiB page slice on a channel, ns


def _media(cfg: MediaConfig = TLC, dies: int = 4) -> Media:
    eng = Engine()
    return Media(cfg, dies, lambda: TransferPath(eng))


def test_a_read_on_a_busy_die_waits_for_the_read_ahead_of_it():
    m = _media()
    s1, e1, _ = m.read(0, 0.0, 0, 0.0, 4096)
    s2, e2, _ = m.read(0, 0.0, 2, 0.0, 4096)  # the same die: after the first's transfer
    assert (s1, e1) == (0.0, 20_000.0 + XFER)
    assert s2 == e1 and e2 == e1 + 40_000.0 + XFER
    assert m.collision_ns == pytest.approx(e1)
    s3, e3, _ = m.read(1, 0.0, 0, 0.0, 4096)  # another die on another channel: in parallel
    assert (s3, e3) == (0.0, 20_000.0 + XFER)


def test_reads_of_two_dies_on_one_channel_share_its_transfers():
    m = _media()  # dies 0 and 2 are on channel 0
    _s, e0, _ = m.read(0, 0.0, 1, 0.0, 4096)
    _s, e2, _ = m.read(2, 0.0, 1, 0.0, 4096)  # its array read is done together, its transfer waits
    assert e0 == 30_000.0 + XFER
    assert e2 == e0 + XFER
    assert m.channel_wait_ns == pytest.approx(XFER)
    m = _media()
    # 64 KiB: a 16 KiB page on each of dies 1, 2, 3, 0 at once, two on each channel
    start, end, occ = m.read(1, 0.0, 0, 0.0, 65536)
    page = 16_384 / TLC.channel_gb_s
    assert (start, end) == (0.0, 20_000.0 + 2 * page)
    assert occ == pytest.approx(4 * 20_000.0 + 6 * page)  # (a die holds its page until it has crossed)


def test_a_die_reads_the_pages_on_its_planes_at_once():
    """One die of four planes: 64 KiB (a page per plane) is one multi-plane read, one tR; 128 KiB two."""
    for nbytes, reads in ((16_384, 1), (65_536, 1), (131_072, 2)):
        m = _media(dies=1)
        _s, end, _o = m.read(0, 0.0, 1, 0.0, nbytes)
        assert end == pytest.approx(reads * 30_000.0 + nbytes / TLC.channel_gb_s), nbytes


def _device(cfg, seed: int = 1):
    eng = Engine()
    dev = NvmeDevice(cfg, eng, RngStreams(seed).stream("ssd"))
    qp = dev.add_queue_pair(polled=True, depth=1024)
    qp.on_post = lambda q, r: None
    return eng, dev, qp


def _qd1_reads(cfg, n: int = 600, seed: int = 7) -> list[Request]:
    """``n`` 4 KiB reads at random addresses, one at a time (each after the last completed)."""
    eng, dev, qp = _device(cfg)
    offsets = np.random.default_rng(seed).integers(0, 1 << 24, n) * 4096
    done = []
    qp.on_post = lambda q, r: (done.append(r), submit())

    def submit():
        if len(done) < n:
            dev.submit(qp, Request(len(done), None, 0, "read", 4096, int(offsets[len(done)]), 0, False))

    submit()
    eng.run()
    return done


def test_tlc_reads_take_three_page_type_times_and_keep_the_preset_mean():
    """At depth 1 a TLC drive's read takes one of three times, LSB, CSB or MSB's tR plus the same
    controller share and transfer, each about a third of the reads; their mean is the preset's
    calibrated read time."""
    cfg = samsung_980pro()
    reads = _qd1_reads(cfg)
    times = np.array([r.t_dev_end - r.t_dev_start for r in reads])
    modes = sorted({round(x, 3) for x in times})
    tr = np.array(cfg.media.read_ns)
    assert len(modes) == 3
    assert np.diff(modes) == pytest.approx(np.diff(tr), abs=1.0)  # the modes differ by the tR steps
    shares = [np.mean(np.isclose(times, x)) for x in modes]
    assert min(shares) > 0.25 and max(shares) < 0.42
    svc = np.array([r.device_service_ns for r in reads])
    assert svc.mean() == pytest.approx(cfg.read.base_ns, rel=0.03)  # controller + mean tR + transfer


def _one_die(suspend: bool) -> Media:
    return _media(TLC.model_copy(update={"suspend": suspend, "resume_ns": 5_000.0}), dies=1)


@pytest.mark.parametrize("kind, cost", [(PROGRAM, TLC.program_suspend_ns), (ERASE, TLC.erase_suspend_ns)])
def test_a_read_suspends_a_program_or_an_erase_at_its_cost(kind, cost):
    """A read arriving while its die programs (erases) for long: it starts after the suspend
    latency, and the operation ends later by the read's die time and the resume; without suspend
    the read waits for the whole operation."""
    op = 3_000_000.0
    m = _one_die(suspend=True)
    end = m.book(0, 0.0, op, kind)
    if kind == PROGRAM:  # (one-shot ratio of its page type: the default TLC table's LSB)
        assert end < op
    start, rend, occ = m.read(0, 10_000.0, 0, 0.0, 4096)
    assert start == 10_000.0 + cost
    assert m.die_free[0] == pytest.approx(end + occ + 5_000.0)
    assert m.suspends == 1 and m.suspend_ns == cost
    start2, _e, _o = m.read(0, rend, 0, 0.0, 4096)  # suspended once already: the next read waits for it
    assert start2 == pytest.approx(m._ops[0][1]) and m.suspends == 1
    m2 = _one_die(suspend=False)
    end2 = m2.book(0, 0.0, op, kind)
    start2, _e, _o = m2.read(0, 10_000.0, 0, 0.0, 4096)
    assert start2 == end2 and m2.suspends == 0


def test_a_read_goes_before_queued_programs_and_they_run_after_it():
    m = _one_die(suspend=True)
    ends = [m.book(0, 0.0, 10_000.0, PROGRAM) for _ in range(3)]  # short: not worth a suspend
    start, rend, occ = m.read(0, 1_000.0, 0, 0.0, 4096)
    assert start == ends[0]  # the one in progress ends before a suspend would take effect
    assert m.die_free[0] == pytest.approx(ends[-1] + occ)  # the queued ones after the read
    assert m.suspends == 0


def test_reads_beside_a_writer_wait_for_suspends_on_a_preset():
    """On the 980 PRO, a read at an address whose die has a long backlog of buffered programs waits
    one program suspend, not the backlog; the suspended program and the queued ones end later."""
    base = samsung_980pro()
    # programs of 1 ms each (longer than a suspend takes), a buffer that takes every write
    cfg = samsung_980pro(
        write_buffer=base.write_buffer.model_copy(update={"size_bytes": 1 << 30}), write_cache_program_ns=1e6
    )
    eng, dev, qp = _device(cfg)
    dies = cfg.parallel_units
    writes = [Request(i, None, 0, "write", 4096, 0, 0, False) for i in range(10 * dies)]
    for r in writes:
        dev.submit(qp, r)
    read = Request(len(writes), None, 0, "read", 4096, 4096 * 3, 0, False)
    arrive = 200_000.0  # while its die programs
    eng.call_at(arrive, dev.submit, qp, read)
    eng.run()
    backlog = max(dev.media.die_free)
    assert dev.media.suspends == 1
    wait = read.t_dev_start - arrive - cfg.fetch_ns - dev._ctrl_read_ns
    assert wait == pytest.approx(cfg.media.program_suspend_ns)
    assert read.t_dev_start < 0.1 * backlog


def test_reads_from_the_slc_cache_take_pslc_time_with_the_same_controller_share():
    """``media.reads_from_slc`` (the data in pSLC blocks, a fresh client drive's state): every read
    takes one time, pSLC's tR where the filled drive's took its page type's, the controller share and
    transfer unchanged; on the 980 PRO that is the data sheet's QD1 read (45.45 us less fetch, post
    and the link's 4 KiB)."""
    filled = samsung_980pro()
    fresh = filled.model_copy(update={"media": filled.media.model_copy(update={"reads_from_slc": True})})
    slc = np.array([r.t_dev_end - r.t_dev_start for r in _qd1_reads(fresh, 200)])
    tlc = np.array([r.t_dev_end - r.t_dev_start for r in _qd1_reads(filled, 600)])
    assert len({round(x, 3) for x in slc}) == 1
    assert slc[0] - min(tlc) == pytest.approx(fresh.media.slc_read_ns - min(filled.media.read_ns), abs=1.0)
    svc = np.mean([r.device_service_ns for r in _qd1_reads(fresh, 200)])
    assert svc == pytest.approx(45_450 - 500 - 4096 / 7.0, rel=0.01)


def test_the_same_seed_gives_the_same_times():
    cfg = samsung_980pro()
    a = [(r.t_dev_start, r.t_dev_end) for r in _qd1_reads(cfg, 200)]
    b = [(r.t_dev_start, r.t_dev_end) for r in _qd1_reads(cfg, 200)]
    assert a == b


def test_every_flash_preset_has_media_and_the_3d_xpoint_ones_none():
    for name, preset in SSD_CATALOGUE.items():
        cfg = preset.make()
        assert (cfg.media is None) == name.startswith("optane"), name
        if cfg.media is not None:
            assert cfg.media.controller_read_ns(cfg.read.base_ns) > 0, name
            assert "media" in preset.sources, name


def test_media_slower_than_the_read_is_refused_naming_the_field():
    with pytest.raises(pydantic.ValidationError, match="media: the mean tR"):
        samsung_980pro(media=TLC.model_copy(update={"read_ns": (60_000.0, 70_000.0, 80_000.0)}))
    with pytest.raises(pydantic.ValidationError, match="read_ns: 3 positive times for TLC"):
        MediaConfig(read_ns=(1.0, 2.0))


def test_the_summary_counts_the_media_reads_and_waits():
    eng, dev, qp = _device(samsung_980pro())
    for i in range(4):  # four reads of one die at once: three wait for it
        dev.submit(qp, Request(i, None, 0, "read", 4096, 0, 0, False))
    eng.run()
    c = media_counters(dev)
    assert c["media_reads"] == 4 and c["suspends"] == 0
    assert c["die_wait_ns"] > 3 * min(samsung_980pro().media.read_ns)


def test_the_buffer_programs_a_die_a_multi_plane_page_at_a_time():
    """4 KiB writes gather on the frontier's die until it has a page for each plane (64 KiB), which
    it programs as one operation; then the next die gathers."""
    cfg = samsung_980pro()
    eng, dev, qp = _device(cfg)
    per_die = cfg.media.planes_per_die * cfg.media.page_bytes // 4096
    for i in range(per_die + 1):
        dev.submit(qp, Request(i, None, 0, "write", 4096, 4096 * i, 0, False))
    eng.run()
    ops = dev.media._ops
    assert len(ops[0]) == 3 and all(not o for o in ops[1:])  # one operation, on die 0 only
    assert dev.write_buffer._pend_bytes == 4096  # the next write waits on die 1 for more
    with pytest.raises(pydantic.ValidationError, match="multi-plane program"):
        samsung_980pro(write_buffer=cfg.write_buffer.model_copy(update={"size_bytes": 32768}))
