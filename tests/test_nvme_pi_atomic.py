"""NVMe end-to-end protection information and atomic writes: the namespace's format
(``ssd.namespace``), what a command carries and costs at the device, fio's io_uring_cmd options
(``md_per_io_size``, ``pi_act``, ``pi_chk``) and ``atomic=1`` (RWF_ATOMIC) with the checks fio and
Linux make."""

import pytest

from models.ioengines.pi import PiPlan
from models.os.block.request import Request
from models.ssd.command import PRACT, PRCHK_GUARD
from models.ssd.config import NamespaceConfig
from models.ssd.device import NvmeDevice
from models.ssd.presets import optane_900p
from scenarios.config.host import resolve
from scenarios.run.simulate import simulate
from simcore.engine import Engine
from simcore.errors import ConfigError
from simcore.rng import RngStreams
from stacksim.cli import main

PLATFORM = "optane900p-e3-1230v5"
PI = {"ssd.namespace.lba_data_bytes": "4096", "ssd.namespace.metadata_bytes": "64", "ssd.namespace.pi_type": "1"}
#: fio's examples/uring-cmd-pi-sb.fio, one job (sequential reads or writes at depth 1)
PI_JOB = (
    "[j]\nfilename=/dev/ng0n1\nioengine=io_uring_cmd\ncmd_type=nvme\nsize=64m\niodepth=1\nbs={bs}\n"
    "md_per_io_size=64\npi_act={act}\npi_chk=GUARD,APPTAG,REFTAG\napptag=0x0888\nrw={rw}\n"
    "runtime=2ms\ntime_based=1\n"
)


def _device(namespace: NamespaceConfig):
    eng = Engine()
    cfg = optane_900p().model_copy(
        update={"namespace": namespace, "read": optane_900p().read.model_copy(update={"sd_ns": 0.0})}
    )
    dev = NvmeDevice(cfg, eng, RngStreams(1).stream("ssd"))
    qp = dev.add_queue_pair(polled=True, depth=64)
    qp.on_post = lambda q, r: None
    return eng, dev, qp


def _read(eng, dev, qp, meta: int = 0, prinfo: int = 0) -> tuple[float, float]:
    """(completion posted, media service) of one 4 KiB read, ns."""
    req = Request(0, None, 0, "read", 4096, 0, 0, False)
    req.meta_bytes, req.prinfo = meta, prinfo
    dev.submit(qp, req)
    eng.run(1e9)
    return req.t_cqe, req.device_service_ns


def test_separate_metadata_crosses_the_link_and_pi_checks_cost_the_controller_per_block():
    ns = NamespaceConfig(lba_data_bytes=4096, metadata_bytes=64, pi_type=1)
    eng, dev, qp = _device(ns)
    dp = dev.cfg.datapath  # the metadata crosses the media data path and the link (cut-through: the slower)
    ns_per_byte = max(1.0 / dev.cfg.link_gb_s, 1.0 / dp.read_gb_s if dp is not None else 0.0)
    plain = _read(eng, dev, qp)
    eng, dev, qp = _device(ns)
    with_meta = _read(eng, dev, qp, meta=64)
    assert with_meta[0] - plain[0] == pytest.approx(64 * ns_per_byte, rel=1e-6)  # the MPTR buffer's 64 bytes
    eng, dev, qp = _device(ns)
    unchecked = _read(eng, dev, qp)
    eng, dev, qp = _device(ns)
    checked = _read(eng, dev, qp, prinfo=PRACT | PRCHK_GUARD)
    assert checked[1] - unchecked[1] == pytest.approx(ns.pi_ns_per_lba)  # one 4 KiB block's tuple
    eng, dev, qp = _device(NamespaceConfig(lba_data_bytes=4096, metadata_bytes=64))  # no PI: no work
    assert _read(eng, dev, qp, prinfo=PRACT | PRCHK_GUARD)[1] == pytest.approx(unchecked[1])


def test_pi_plan_follows_fio_pi_act_and_the_format():
    kw = dict(lba_bytes=4096, pi_type=1, tuple_bytes=8, checks=("GUARD",), crc_cycles_per_byte=7.0, tuple_cycles=30)
    sb = PiPlan(metadata_bytes=64, extended=False, pi_act=False, **kw)
    assert sb.meta_bytes("write", 8192) == 128 and sb.meta_bytes("trim", 8192) == 0
    # the guard covers the block's data and the metadata before the tuple (4096 + 56 bytes)
    assert sb.cycles("write", 8192) == pytest.approx(2 * (30 + 7.0 * (4096 + 56)))
    ext = PiPlan(metadata_bytes=64, extended=True, pi_act=False, **kw)
    assert ext.unit == 4160 and ext.meta_bytes("read", 4160) == 0  # the metadata is inside the data
    assert ext.cycles("read", 4160) == pytest.approx(30 + 7.0 * 4152)
    act = PiPlan(metadata_bytes=8, extended=True, pi_act=True, **kw)  # PRACT, ms = the tuple: no metadata
    assert act.unit == 4096 and act.cycles("write", 4096) == 0 and act.prinfo & PRACT


def _pi_run(tmp_path, act: int, rw: str, extra=None) -> dict:
    job = tmp_path / "pi.fio"
    job.write_text(PI_JOB.format(bs=4096, act=act, rw=rw))
    s = simulate(resolve(job_file=str(job), platform=PLATFORM, sets={**PI, **(extra or {})})).summary
    return s


@pytest.mark.parametrize("rw", ["write", "read"])
def test_fio_generating_or_checking_pi_costs_its_thread_crc_cycles_per_byte(tmp_path, rw):
    """pi_act=0: fio builds each write's tuples (a CRC-16 over 4152 bytes a block) before queueing
    it and checks each read's after its completion; pi_act=1 leaves it to the controller."""
    host = _pi_run(tmp_path, 0, rw)["perf_by_layer"]["user"]["cycles_per_io"]
    device = _pi_run(tmp_path, 1, rw)["perf_by_layer"]["user"]["cycles_per_io"]
    crc = 7.0 * (4096 + 56) + 30  # KernelCosts.pi_crc16_cycles_per_byte, pi_tuple_cycles
    assert host - device == pytest.approx(crc, rel=0.02)


def test_extended_lba_block_size_must_hold_the_metadata(tmp_path):
    job = tmp_path / "pi.fio"
    job.write_text(PI_JOB.format(bs=4096, act=0, rw="write"))
    ext = {**PI, "ssd.namespace.extended_lba": "1"}
    with pytest.raises(ConfigError, match=r"multiple of 4160 \(LBA data size \+ Metadata size\).*4160"):
        resolve(job_file=str(job), platform=PLATFORM, sets=ext)
    job.write_text(PI_JOB.format(bs=4160, act=0, rw="write"))
    cfg = resolve(job_file=str(job), platform=PLATFORM, sets=ext)
    assert simulate(cfg).summary["ios"] > 0
    job.write_text(PI_JOB.format(bs=8192, act=0, rw="write"))  # 2 blocks need 128 bytes of metadata
    with pytest.raises(ConfigError, match="md_per_io_size should be at least 128 bytes"):
        resolve(job_file=str(job), platform=PLATFORM, sets=PI)


def test_block_io_on_a_namespace_with_metadata_is_refused(tmp_path):
    job = tmp_path / "b.fio"
    job.write_text("[j]\nfilename=/dev/nvme0n1\nioengine=libaio\ndirect=1\nrw=randread\nruntime=2ms\ntime_based\n")
    with pytest.raises(ConfigError, match="blk-integrity"):
        resolve(job_file=str(job), platform=PLATFORM, sets=PI)


ATOMIC = (
    "[j]\nfilename=/dev/nvme0n1\nioengine={engine}\ndirect=1\nrw=randwrite\nbs={bs}\natomic=1\n"
    "runtime=2ms\ntime_based\n"
)


@pytest.mark.parametrize(
    "engine, bs, sets, fragments",
    [
        ("libaio", "4k", {"kernel.version": "6.11"}, ["atomic=1 with 4096-byte writes", "512..512", "EINVAL"]),
        (
            "libaio",
            "32k",
            {"kernel.version": "6.11", "ssd.namespace.atomic_write_unit_bytes": "16384"},
            ["32768-byte writes", "512..16384"],
        ),
        ("libaio", "4k", {"ssd.namespace.atomic_write_unit_bytes": "16384"}, ["Linux 6.11", "kernel.version is 5.15"]),
        ("psync", "4k", {"kernel.version": "6.11"}, ["engine does not support atomic writes"]),
    ],
)
def test_atomic_writes_beyond_the_unit_or_kernel_exit_2(tmp_path, capsys, engine, bs, sets, fragments):
    path = tmp_path / "a.fio"
    path.write_text(ATOMIC.format(engine=engine, bs=bs))
    args = [a for k, v in sets.items() for a in ("--set", f"{k}={v}")]
    rc = main(["run", str(path), "--platform", PLATFORM, *args])
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err and err.count("error") == 1
    for f in fragments:
        assert f in err, (f, err)


def test_atomic_writes_within_the_unit_run_as_writes(tmp_path):
    path = tmp_path / "a.fio"
    path.write_text(ATOMIC.format(engine="libaio", bs="16k"))
    sets = {"kernel.version": "6.11", "ssd.namespace.atomic_write_unit_bytes": str(16 * 4096 + 4096)}
    s = simulate(resolve(job_file=str(path), platform=PLATFORM, sets=sets)).summary
    assert s["ios"] > 0  # 68 KiB rounds down to a 64 KiB unit: 16 KiB fits
