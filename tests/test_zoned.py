"""Zoned namespaces: the zone state machine (models/ssd/zones.py), the device's zone rules and
costs, mq-deadline's zone write locking, and fio's zonemode=zbd / strided job files
(tests/fio_zoned/, in the style of fio's examples) on a ZNS device."""

from pathlib import Path

import pytest

from models.ioengines.zbd import ZbdFile, ZbdJob
from models.os.block.request import Request
from models.os.block.zoned import ZoneReport
from models.ssd.config import ZonedConfig
from models.ssd.device import NvmeDevice
from models.ssd.presets import zn540
from models.ssd.zones import (
    CLOSED,
    EMPTY,
    EXPLICIT_OPEN,
    FULL,
    IMPLICIT_OPEN,
    OK,
    TOO_MANY_ACTIVE_ZONES,
    TOO_MANY_OPEN_ZONES,
    ZONE_BOUNDARY_ERROR,
    ZONE_INVALID_WRITE,
    ZONE_IS_FULL,
    ZoneSet,
)
from policies.io_scheduler.mq_deadline import MqDeadline
from scenarios.config.host import resolve
from scenarios.inputs.fio.parser import parse_fio_file
from scenarios.run.simulate import simulate
from simcore.engine import Engine
from simcore.errors import ConfigError
from simcore.rng import RngStreams

ZONE = 1 << 20
CAP = 768 << 10


def zones(**kw) -> ZoneSet:
    cfg = ZonedConfig(zone_size_bytes=ZONE, zone_capacity_bytes=CAP, **kw)
    return ZoneSet(cfg, 16 * ZONE)


def test_writes_only_at_the_write_pointer():
    z = zones()
    assert z.write(0, 4096) == (OK, 0)
    assert z.write(0, 4096)[0] == ZONE_INVALID_WRITE  # behind the write pointer
    assert z.write(8192, 4096)[0] == ZONE_INVALID_WRITE  # ahead of it
    assert z.wp[0] == 4096 and z.state[0] == IMPLICIT_OPEN
    assert z.write(4096, CAP)[0] == ZONE_BOUNDARY_ERROR  # beyond the zone's capacity
    assert z.write(4096, CAP - 4096) == (OK, 4096)
    assert z.state[0] == FULL and z.n_active == 0 and not z.open
    assert z.write(CAP, 4096)[0] == ZONE_IS_FULL


def test_open_and_active_limits():
    z = zones(max_open_zones=2, max_active_zones=3)
    for k in range(2):
        assert z.write(k * ZONE, 4096)[0] == OK
    # a third open zone: the controller closes the least recently written implicitly opened one
    assert z.write(0, 4096, append=True)[0] == OK  # zone 0 written again: zone 1 is now the oldest
    assert z.write(2 * ZONE, 4096)[0] == OK
    assert z.state[1] == CLOSED and z.implicit_closes == 1
    assert len(z.open) == 2 and z.n_active == 3
    # a fourth active zone is refused; writing the closed one reopens it (closing another)
    assert z.write(3 * ZONE, 4096)[0] == TOO_MANY_ACTIVE_ZONES
    assert z.write(ZONE + 4096, 4096)[0] == OK and z.state[1] == IMPLICIT_OPEN
    # explicitly opened zones are never closed by the controller
    z2 = zones(max_open_zones=2)
    assert z2.open_zone(0) == OK and z2.open_zone(1) == OK
    assert z2.state[0] == EXPLICIT_OPEN
    assert z2.write(2 * ZONE, 4096)[0] == TOO_MANY_OPEN_ZONES


def test_reset_returns_to_empty_and_costs_follow_the_zn540():
    z = zones(max_active_zones=1)
    assert z.reset(5) == pytest.approx(2_000.0)  # an empty zone: 2 us
    z.write(0, CAP // 2)
    assert z.write(ZONE, 4096)[0] == TOO_MANY_ACTIVE_ZONES
    assert z.reset(0) == pytest.approx(11_700_000.0)  # half full: the 50% median
    assert z.state[0] == EMPTY and z.wp[0] == 0 and z.n_active == 0
    assert z.write(ZONE, 4096)[0] == OK  # the active slot is free again
    z3 = zones()
    z3.write(0, CAP)
    assert z3.reset(0) == pytest.approx(16_050_000.0)  # full: 15.5-16.6 ms


def test_finish_pads_and_append_takes_the_write_pointer():
    z = zones()
    assert z.write(0, 4096, append=True) == (OK, 0)
    assert z.write(0, 8192, append=True) == (OK, 4096)  # an append names the zone start
    status, ns = z.finish(0)
    assert status == OK and z.state[0] == FULL and z.wp[0] == CAP
    assert ns > 800e6  # almost empty: the device pads ~all of it (908 ms with 1 LBA written)
    assert z.finish(1) == (OK, pytest.approx(14_000.0))  # an empty zone
    assert z.close(2) != OK  # not open
    z.open_zone(3)
    assert z.close(3) == OK and z.state[3] == EMPTY and z.n_active == 0  # nothing written: empty again


def _device(**kw):
    eng = Engine()
    dev = NvmeDevice(zn540(**kw), eng, RngStreams(1).stream("ssd"))
    qp = dev.add_queue_pair(polled=True, depth=1024)
    posted = []
    qp.on_post = lambda q, r: posted.append((eng.now, r))
    return eng, dev, qp, posted


def test_device_fails_a_write_off_the_write_pointer_without_media_time():
    eng, dev, qp, posted = _device()
    good = Request(0, None, 0, "write", 4096, 0, 0, False)
    bad = Request(1, None, 0, "write", 4096, 0, 0, False)  # the same place again
    dev.submit(qp, good)
    dev.submit(qp, bad)
    eng.run(1e9)
    assert good.status == 0 and bad.status == ZONE_INVALID_WRITE
    assert bad.t_cqe == pytest.approx(dev.cfg.fetch_ns + dev.cfg.post_ns)
    assert bad.device_service_ns == 0 and dev.zone_errors == 1
    assert dev.zones.wp[0] == 4096


def test_two_zones_share_the_devices_write_ceiling():
    """The ZN540's zones share its firmware, buffer and dies (models/ssd/zone_media.py): 64 writes of
    64 KiB (4 MiB, twice the write buffer) take as long to two zones as to one, about 4 MiB at the
    dies' 1.2 GB/s program rate."""
    ends = []
    for nz in (1, 2):
        eng, dev, qp, posted = _device()
        zs = dev.cfg.zoned.zone_size_bytes
        wp = [0, 0]
        for i in range(64):
            z = i % nz
            dev.submit(qp, Request(i, None, 0, "write", 65536, z * zs + wp[z], 0, False))
            wp[z] += 65536
        eng.run(1e10)
        ends.append(max(t for t, _ in posted))
    assert ends[1] == pytest.approx(ends[0], rel=0.1)
    # the buffer (2 MiB) takes the first half at once; the second half waits for its programs
    assert 0.45 * 64 * 65536 / 1.2 < ends[0] < 0.7 * 64 * 65536 / 1.2


def test_zone_reset_command_takes_the_measured_time_and_empties_the_zone():
    eng, dev, qp, posted = _device(zoned=zn540().zoned.model_copy(update={"precondition": "full"}))
    req = Request(0, None, 0, "zone_reset", 0, 0, 0, False)
    dev.submit(qp, req)
    eng.run(1e10)
    assert req.status == 0 and req.device_service_ns == pytest.approx(16_050_000.0)
    assert dev.zones.state[0] == EMPTY and dev.zones.resets == 1


class _Host:
    class engine:
        now = 0.0


class _Rq:
    def __init__(self, op, offset, nbytes=4096):
        self.op, self.offset, self.nbytes = op, offset, nbytes
        self.ioprio = 0
        self.task = None


def _drain(sched) -> list:
    return list(iter(sched.dispatch, None))


def test_mq_deadline_dispatches_one_write_per_zone():
    sched = MqDeadline(_Host(), {})
    sched.zone_bytes = ZONE
    writes = [_Rq("write", z * ZONE + k * 4096) for z in (0, 1) for k in range(4)]
    read = _Rq("read", 8 * ZONE)
    for r in (*writes, read):
        sched.insert(r)
    in_flight: list = []
    order: list = []
    while sched.has_work() or in_flight:
        got = _drain(sched)
        order += got
        in_flight += got
        zs = [r.offset // ZONE for r in in_flight if r.op == "write"]
        assert len(zs) == len(set(zs))  # never two writes in flight to one zone
        sched.completed(in_flight.pop(0))
    assert read in order[:3]  # reads are not held back by the locks
    for z in (0, 1):  # each zone's writes went out in write-pointer order
        assert [r.offset for r in order if r.op == "write" and r.offset // ZONE == z] == [
            z * ZONE + k * 4096 for k in range(4)
        ]


def test_without_zones_mq_deadline_dispatches_every_write():
    sched = MqDeadline(_Host(), {})
    for k in range(4):
        sched.insert(_Rq("write", k * 4096))
    assert len(_drain(sched)) == 4


# -- fio's zonemode=zbd and strided job files --------------------------------------------------
CORPUS = Path(__file__).parent / "fio_zoned"
FILES = sorted(CORPUS.glob("*.fio"))
PLATFORM = "zn540-e5-2660v4"
#: a device with fio's examples' 256 MiB zones (capacity 192 MiB: a gap to skip), 1024 of them
SETS = {
    "ssd.zoned.zone_size_bytes": str(256 << 20),
    "ssd.zoned.zone_capacity_bytes": str(192 << 20),
    "ssd.capacity_bytes": str(1024 * (256 << 20)),
    "ssd.zoned.max_open_zones": "64",
    "ssd.zoned.max_active_zones": "64",
    "queue.scheduler": "mq-deadline",
}
FILE_SETS = {
    "zbd-seq-read.fio": {"ssd.zoned.precondition": "full"},
    "zbd-rand-write-zone-reset-gc.fio": {"ssd.zoned.precondition": "full"},
    "zbd-ignore-limits.fio": {"ssd.zoned.max_open_zones": "14", "ssd.zoned.max_active_zones": "14"},
}


def _run(path: Path):
    cfg = resolve(job_file=str(path), platform=PLATFORM, sets={**SETS, **FILE_SETS.get(path.name, {})})
    return cfg, simulate(cfg)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_zoned_job_file_runs(path):
    cfg, result = _run(path)
    s = result.summary
    assert s["ios"] > 0
    media = s.get("ssd_media", {}).get("ssd0", {})
    if path.name == "zbd-ignore-limits.fio":
        assert media["zone_errors"] >= 1  # more zones than the device allows: Too Many Active Zones
        assert any(j["error"] for j in result.to_dict()["jobs"])  # and fio's job ends with EIO
    elif any(j.zonemode == "zbd" for j in cfg.jobs):
        assert media["zone_errors"] == 0  # fio issues only valid writes


def test_zone_reset_gc_example_resets_zones():
    _cfg, result = _run(CORPUS / "zbd-rand-write-zone-reset-gc.fio")
    assert result.summary["ssd_media"]["ssd0"]["zone_resets"] > 0


class _Job:
    name = "j"
    job_max_open_zones = 0
    read_beyond_wp = False
    size_bytes = 8 * ZONE

    def __init__(self, zrt=0.0, zrf=0.0):
        self.zone_reset_threshold, self.zone_reset_frequency = zrt, zrf


def _zbd(wp: int, zrt=0.0, zrf=0.0, random=True, max_open=0):
    report = ZoneReport(ZONE, CAP, (wp,) * 8, (wp >= CAP,) * 8, max_open, 0)
    return ZbdJob(ZbdFile(report, 0), _Job(zrt, zrf), 0, 8 * ZONE, random, 4096)


def test_zbd_threshold_resets_every_nth_write_once_the_zones_hold_enough():
    below = _zbd(CAP // 2, zrt=0.7, zrf=0.125)  # 8 x 384 KiB of 8 x 1 MiB: under 70%
    assert not any(op == "zone_reset" for k in range(64) for op, _n, _o in below.write(k * 4096, 4096))
    above = _zbd(CAP - 64 * 4096, zrt=0.3, zrf=0.125)  # over 30%: every 8th write resets its zone
    resets = [k for k in range(32) if any(op == "zone_reset" for op, _n, _o in above.write(k * 8192, 4096))]
    assert resets == [7, 15, 23, 31]


def test_zbd_writes_go_to_write_pointers_and_full_zones_are_reset():
    zbd = _zbd(0, random=False)
    assert zbd.write(12 * 4096, 4096) == [("write", 4096, 0)]  # zone 0's write pointer
    assert zbd.write(CAP + 4096, 4096) == [("write", 4096, ZONE)]  # past zone 0's capacity: zone 1
    assert zbd.write(4096, 4096) == [("write", 4096, 4096)]
    assert zbd.write(ZONE + 4096, 4096) == [("write", 4096, ZONE + 4096)]
    full = _zbd(CAP)
    assert full.write(3 * ZONE + 4096, 8192) == [("zone_reset", 0, 3 * ZONE), ("write", 8192, 3 * ZONE)]
    limited = _zbd(0, max_open=2)  # at most two write zones: a third zone's write goes to one of them
    targets = {off // ZONE for k in range(8) for op, _n, off in limited.write(k * ZONE, 4096) if op == "write"}
    assert len(targets) == 2
    reads = _zbd(8192)
    assert reads.read(5 * ZONE + 500_000, 4096) in (5 * ZONE, 5 * ZONE + 4096)  # folded below the write pointer
    assert _zbd(0).read(0, 4096) is None  # nothing written anywhere: fio's io_u_eof


def test_trim_in_zbd_mode_is_a_zone_reset_counted_as_a_trim():
    _cfg, result = _run(CORPUS / "zbd-rand-write-trim-gc.fio")
    jobs = result.to_dict()["jobs"]
    assert result.summary["ssd_media"]["ssd0"]["zone_resets"] > 0
    assert sum(j["trim"]["total_ios"] for j in jobs) > 0


def test_zbd_sequential_write_stays_on_write_pointers_at_depth(tmp_path):
    """libaio at depth 16 writes 4 KiB blocks sequentially over the zones (skipping each zone's
    part beyond its capacity): mq-deadline keeps one write per zone at the device and every write
    lands on its write pointer."""
    job = tmp_path / "seq.fio"
    job.write_text(
        "[w]\nzonemode=zbd\ndirect=1\nfilename=/dev/nvme0n1\nioengine=libaio\niodepth=16\nrw=write\nbs=4m\nsize=3z\n"
    )
    cfg = resolve(job_file=str(job), platform=PLATFORM, sets=SETS)
    s = simulate(cfg).summary
    media = s["ssd_media"]["ssd0"]
    assert media["zone_errors"] == 0
    # size=3z is 768 MiB of 4 MiB writes; the zones hold 3 x 192 MiB, so the job wraps to zone 0,
    # which is full: fio resets it (after its writes in flight complete) and goes on
    assert s["ios"] == 192 and media["zone_resets"] == 1


def test_zbd_parse_keeps_zone_options():
    jobs = parse_fio_file(CORPUS / "zbd-job-limits.fio").jobs
    w = jobs[0]
    assert (w.zonemode, w.zonesize_bytes, w.max_open_zones, w.job_max_open_zones) == ("zbd", 256 << 20, 8, 2)
    assert w.size_zones == 16 and jobs[2].read_beyond_wp


def test_zbd_random_trim_moves_to_the_nearest_zone_with_data_and_ends_without_one():
    """fio 3.41's zbd_adjust_block (DDIR_TRIM) and zbd_find_zone: a random trim of an empty zone
    resets the nearest zone holding data (up, then down, alternating), and with none the job ends;
    a sequential trim takes its own zone."""
    zbd = _zbd(0)
    info = zbd.info
    info.wp[2], info.wp[7] = 4096, 8192
    assert zbd.trim(4 * ZONE) == 2 * ZONE  # zones 5, 3 empty; 6 empty, 2 has data (distance 2 down)
    assert info.wp[2] == 0 and info.resets == 1
    assert zbd.trim(0) == 7 * ZONE
    assert zbd.trim(3 * ZONE) is None  # nothing left: fio's io_u_eof
    seq = _zbd(0, random=False)
    assert seq.trim(5 * ZONE) == 5 * ZONE and seq.info.resets == 0  # an empty zone: no reset counted


def test_zbd_threshold_reset_of_an_empty_zone_issues_no_ioctl():
    """__zbd_reset_zone returns at once for a zone without data: the threshold's every-Nth write
    lands on an empty zone without a reset before it."""
    zbd = _zbd(0, zrt=0.0, zrf=1.0)  # threshold 0: every write would reset its zone first
    assert zbd.write(0, 4096) == [("write", 4096, 0)]  # the zone was empty: no reset
    assert zbd.write(0, 4096) == [("zone_reset", 0, 0), ("write", 4096, 0)]


def test_zbd_trim_block_size_must_be_the_zone_size(tmp_path):
    job = tmp_path / "t.fio"
    job.write_text("[t]\nzonemode=zbd\ndirect=1\nfilename=/dev/nvme0n1\nrw=randtrim\nbs=64m\nsize=4z\nruntime=5ms\n")
    with pytest.raises(ConfigError, match="trim block size 67108864 is not the zone size 268435456"):
        resolve(job_file=str(job), platform=PLATFORM, sets=SETS)


def test_zone_resets_of_the_reset_threshold_cost_the_writer_time(tmp_path):
    """zone_reset_frequency=0.5 over a threshold of 0: every second write first resets its zone,
    an ioctl the thread sleeps in (1.66 ms and more on the ZN540): far fewer writes in the same time
    than with resets only of full zones."""
    base = "[w]\nzonemode=zbd\ndirect=1\nfilename=/dev/nvme0n1\nioengine=psync\nrw=randwrite\nbs=1m\nsize=4z\n"
    out = {}
    for name, extra in (("full", ""), ("gc", "zone_reset_threshold=0\nzone_reset_frequency=0.5\n")):
        job = tmp_path / f"{name}.fio"
        job.write_text(base + extra + "runtime=60ms\ntime_based\n")
        out[name] = simulate(resolve(job_file=str(job), platform=PLATFORM, sets=SETS)).summary
    resets = {n: s["ssd_media"]["ssd0"]["zone_resets"] for n, s in out.items()}
    assert resets["gc"] >= 0.25 * out["gc"]["ios"] and resets["full"] <= 1
    assert out["gc"]["iops"] < 0.6 * out["full"]["iops"]
