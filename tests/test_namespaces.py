"""Conventional and zoned namespaces on one controller (models/ssd/namespaces.py): they share the
controller, the write buffer and the dies; the host names the namespace in the job's filename."""

from pathlib import Path

import pydantic
import pytest

from models.os.block.request import Request
from models.os.fs.filesystem import FileLayout
from models.ssd.device import NvmeDevice
from models.ssd.media import ERASE, PROGRAM
from models.ssd.namespaces import NAMESPACE_ALIGN_BYTES, ConventionalNamespaceConfig, extent_of, extents
from models.ssd.presets import zn540
from scenarios.config.host import resolve
from scenarios.run.simulate import simulate
from simcore.engine import Engine
from simcore.errors import ConfigError
from simcore.rng import RngStreams

ZONE = 2 << 30
CONV = ({"size_bytes": 64 << 30},)


def _device(**kw):
    eng = Engine()
    dev = NvmeDevice(zn540(**kw), eng, RngStreams(1).stream("ssd"))
    qp = dev.add_queue_pair(polled=True, depth=4096)
    return eng, dev, qp


def test_namespaces_follow_the_zoned_one_in_the_controllers_space():
    cfg = zn540(conventional_namespaces=CONV + ({"size_bytes": 1 << 30},))
    (b1, s1), (b2, s2), (b3, s3) = extents(cfg.capacity_bytes, cfg.conventional_namespaces)
    assert (b1, s1) == (0, cfg.capacity_bytes)
    assert b2 >= s1 and b2 % NAMESPACE_ALIGN_BYTES == 0 and s2 == 64 << 30
    assert b3 == b2 + s2 and s3 == 1 << 30


def _zoned_read_latency(conventional_writes: bool) -> float:
    """Mean latency of 4 KiB reads in a full zone at depth 16 while (or not) a conventional
    namespace's 64 KiB writes keep 32 in flight."""
    full = zn540().zoned.model_copy(update={"precondition": "full"})
    eng, dev, qp = _device(zoned=full, conventional_namespaces=CONV)
    base = extents(dev.cfg.capacity_bytes, dev.cfg.conventional_namespaces)[1][0]
    lat, n = [], [0]
    rng = RngStreams(2).stream("offsets")

    def read() -> None:
        off = int(rng.integers(0, 1 << 18)) * 4096
        n[0] += 1
        r = Request(n[0], None, 0, "read", 4096, off, 0, False)
        r.t_submit = eng.now
        dev.submit(qp, r)

    def write(k: int) -> None:
        n[0] += 1
        dev.submit(qp, Request(n[0], None, 1, "write", 65536, base + (k % 4096) * 65536, 0, False))

    def done(q, r) -> None:
        if r.op == "read":
            lat.append(eng.now - r.t_submit)
            if len(lat) < 3000:
                read()
        elif conventional_writes and len(lat) < 3000:
            write(r.id)

    qp.on_post = done
    for _ in range(16):
        read()
    if conventional_writes:
        for k in range(32):
            write(k)
    eng.run(1e12)
    assert dev.zone_errors == 0  # the conventional namespace's writes meet no zone rule
    return sum(lat) / len(lat)


def test_a_conventional_writer_slows_a_zoned_reader_on_the_shared_dies():
    alone, beside = _zoned_read_latency(False), _zoned_read_latency(True)
    assert beside > 1.3 * alone


def test_a_reset_is_an_erase_on_the_zones_dies_and_a_read_there_waits_its_suspend():
    full = zn540().zoned.model_copy(update={"precondition": "full", "stripe_width": 8})
    eng, dev, qp = _device(zoned=full)
    posted = {}
    qp.on_post = lambda q, r: posted.setdefault(r.id, eng.now)
    dev.submit(qp, Request(0, None, 0, "zone_reset", 0, 0, 0, False))  # zone 0: dies 0-7
    dies = dev.zoned_media.map.units_of(0)
    ops = dev.media._ops
    assert all(int(ops[d][2]) == ERASE for d in dies) and not any(ops[d] for d in range(8, 32))
    assert dev.zoned_media.erases == 8
    dev.submit(qp, Request(1, None, 0, "read", 4096, 0, 0, False))  # on an erasing die
    dev.submit(qp, Request(2, None, 0, "read", 4096, ZONE, 0, False))  # zone 1: dies 8-15
    eng.run(1e11)
    assert posted[0] == pytest.approx(16.05e6, rel=0.01)  # a full zone's reset, the measured median
    assert dev.media.suspends == 1
    # the read waits the erase's suspend latency (700 us), give or take the two reads' page types
    assert posted[1] - posted[2] == pytest.approx(dev.cfg.media.erase_suspend_ns, abs=40e3)


def test_an_empty_zones_reset_erases_nothing():
    eng, dev, qp = _device()
    qp.on_post = lambda q, r: None
    dev.submit(qp, Request(0, None, 0, "zone_reset", 0, 0, 0, False))
    eng.run(1e9)
    assert dev.zoned_media.erases == 0 and not any(dev.media._ops)


def test_a_finish_programs_the_padding_on_the_zones_dies():
    """A finish with one 64 KiB stripe unit written programs the rest of the capacity at the
    buffer's program rate: ~0.94 s (the measured median with one LBA written is 908 ms)."""
    eng, dev, qp = _device()
    posted = {}
    qp.on_post = lambda q, r: posted.setdefault(r.id, eng.now)
    dev.submit(qp, Request(0, None, 0, "write", 65536, 0, 0, False))
    eng.run(1e8)
    t0 = eng.now
    eng.call_at(t0, dev.submit, qp, Request(1, None, 0, "zone_finish", 0, 0, 0, False))
    eng.run(1e12)
    assert dev.zoned_media.pad_programs >= 32 * 500
    assert posted[1] - t0 == pytest.approx(908e6, rel=0.10)


def test_zone_appends_in_flight_get_the_write_pointer_in_submission_order():
    eng, dev, qp = _device()
    assigned = []
    qp.on_post = lambda q, r: assigned.append((r.id, r.offset))
    for i in range(16):  # all naming zone 3's start
        dev.submit(qp, Request(i, None, 0, "zone_append", 4096 * (1 + i % 3), 3 * ZONE, 0, False))
    eng.run(1e10)
    by_id = dict(assigned)
    expect, at = [], 3 * ZONE
    for i in range(16):
        expect.append(at)
        at += 4096 * (1 + i % 3)
    assert [by_id[i] for i in range(16)] == expect
    assert dev.zones.wp[3] == at - 3 * ZONE


def test_bad_namespaces_are_clear_errors():
    with pytest.raises(pydantic.ValidationError, match="nsid=3: the SSD has namespaces 1-2"):
        zn540(conventional_namespaces=CONV, nsid=3)
    with pytest.raises(pydantic.ValidationError, match="size_bytes: a conventional namespace needs its size"):
        zn540(conventional_namespaces=({},))
    with pytest.raises(pydantic.ValidationError):
        ConventionalNamespaceConfig(size_bytes=0)
    with pytest.raises(ConfigError, match=r"filename=/dev/nvme0n3: namespace 3; the SSD .* has namespaces 1-2"):
        layout = FileLayout(None, 1, zn540(conventional_namespaces=CONV))
        layout.reserve("/dev/nvme0n3", None)
        layout.place()
    with pytest.raises(ConfigError, match="namespace 2; the SSD .* has namespace 1 only"):
        extent_of(zn540(), 2, "ns=2")


JOB = """[global]
ioengine={engine}
direct=1
thread=1
time_based=1
runtime=4ms
bs=4k
iodepth=8
[w]
rw=randwrite
filename={filename}
size=1g
"""


@pytest.mark.parametrize(
    "engine, filename",
    [
        ("io_uring", "/dev/nvme0n2"),
        ("spdk", "trtype=PCIe traddr=0000.88.00.0 ns=2"),
        ("io_uring", None),  # no filename: ssd.nsid's namespace
        ("spdk", "trtype=PCIe traddr=0000.88.00.0"),  # no ns=: ssd.nsid's
    ],
)
def test_a_job_naming_namespace_2_writes_at_random_without_zone_errors(tmp_path, engine, filename):
    job = tmp_path / "conv.fio"
    text = JOB.format(engine=engine, filename=filename)
    job.write_text(text if filename else text.replace("filename=None\n", ""))
    sets = {"ssd.conventional_namespaces": '[{"size_bytes": 107374182400}]'}
    named = filename is not None and "2" in filename[-1]
    two = sets if named else {**sets, "ssd.nsid": "2"}
    s = simulate(resolve(job_file=str(job), platform="zn540-e5-2660v4", sets=two)).summary
    m = s["ssd_media"]["ssd0"]
    assert m["zone_errors"] == 0 and s["iops"] > 10_000
    # the same job on the zoned namespace fails at once (random writes break the write pointer)
    if named:
        job.write_text(JOB.format(engine=engine, filename=filename.replace("n2", "n1").replace("ns=2", "ns=1")))
    s1 = simulate(resolve(job_file=str(job), platform="zn540-e5-2660v4", sets=sets)).summary
    assert s1["ssd_media"]["ssd0"]["zone_errors"] > 0


ROOT = Path(__file__).resolve().parents[1]


def test_the_example_of_a_conventional_writer_beside_a_zoned_reader_as_the_docs_show_it():
    sets = {"ssd.conventional_namespaces": '[{"size_bytes": 107374182400}]'}
    cfg = resolve(job_file=str(ROOT / "examples/zns-with-conventional.fio"), platform="zn540-e5-2660v4", sets=sets)
    s = simulate(cfg).summary
    m = s["ssd_media"]["ssd0"]
    assert m["zone_errors"] == 0 and m["suspends"] > 0  # the writer's programs meet the zoned reads
    page = (ROOT / "docs/zoned-fdp.md").read_text()
    assert f"IOPS {s['iops']:,.0f}   bandwidth {s['bandwidth_mb_s']:,.1f} MB/s" in page
    assert f"suspends {m['suspends']}  " in page and f"({m['suspends']} suspends)" in page


def test_a_reset_drops_the_zones_partial_stripe_unit_from_the_buffer():
    """A write shorter than a stripe unit waits in the buffer for the rest of its unit; a reset of
    its zone discards it (else the rewritten zone's first unit would count it twice and the bytes
    stay held for ever)."""
    eng, dev, qp = _device()
    qp.on_post = lambda q, r: None
    wb = dev.write_buffer
    dev.submit(qp, Request(0, None, 0, "write", 16384, 0, 0, False))
    eng.run(1e8)
    assert wb.held == 16384 and not any(dev.media._ops)  # gathered, not programmed
    eng.call_at(eng.now, dev.submit, qp, Request(1, None, 0, "zone_reset", 0, 0, 0, False))
    eng.run(1e9)
    assert wb.held == 0
    t = eng.now
    eng.call_at(t, dev.submit, qp, Request(2, None, 0, "write", 65536, 0, 0, False))
    eng.run(1e10)
    die = dev.zoned_media.map.unit_of(0)
    ops = dev.media._ops[die]  # (the reset's erase, then) one 64 KiB program
    assert [int(k) for k in ops[2::3]] == [ERASE, PROGRAM] and ops[4] - ops[3] == pytest.approx(1.75e6)
    eng.call_at(eng.now, dev.submit, qp, Request(3, None, 0, "write", 4096, 65536, 0, False))
    eng.run(1e11)
    assert wb.held == 4096  # the first unit's program ended and left the buffer; the next gathers
