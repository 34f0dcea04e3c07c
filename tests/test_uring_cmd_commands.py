"""The NVM commands fio's io_uring_cmd sends besides Read and Write (models/ssd/nvm_commands.py,
models/ioengines/write_mode.py, scenarios/inputs/fio/write_mode.py): Write Zeroes moves no data and
deallocates on a flash FTL, Write Uncorrectable makes later reads fail as fio reports them, Verify
reads the media without moving data, Zone Append lets many writes to one zone be in flight; and
flexible data placement on the PM1743 preset lowers write amplification of mixed lifetimes."""

import re
from pathlib import Path

import pytest

from models.os.block.request import Request
from models.platforms import compose_platform
from models.ssd.command import READ_ERROR, VERIFY, WRITE_UNCOR, WRITE_ZEROES, ZONE_APPEND
from models.ssd.config import FtlConfig
from models.ssd.device import NvmeDevice
from models.ssd.presets import optane_900p, p3700, zn540
from models.ssd.zones import ZONE_INVALID_WRITE
from scenarios.config.host import resolve
from scenarios.config.platform_file import platform_yaml
from scenarios.inputs.fio.write_mode import parse_write_mode
from scenarios.run.simulate import simulate
from simcore.engine import Engine
from simcore.errors import ConfigError
from simcore.rng import RngStreams
from stacksim.output import format_summary
from tests.test_ftl import FDP_JOB  # the hot/cold writers (its direct=1 changes nothing for io_uring_cmd)

ROOT = Path(__file__).resolve().parents[1]
SPAN = 32 << 20
FTL = FtlConfig(enabled=True, span_bytes=SPAN, pages_per_block=64, precondition="full")


def _device(cfg):
    eng = Engine()
    dev = NvmeDevice(cfg, eng, RngStreams(1).stream("ssd"))
    qp = dev.add_queue_pair(polled=True, depth=4096)
    posted: list[Request] = []
    qp.on_post = lambda q, r: posted.append(r)
    return eng, dev, qp, posted


def _cmd(i: int, op: str, off: int, nbytes: int = 4096, opcode: int = 0) -> Request:
    r = Request(i, None, 0, op, nbytes, off, 0, False)
    r.opcode = opcode
    return r


# -- fio's write_mode option ----------------------------------------------------------------------


def test_write_mode_values_and_mixes_parse_as_fio_documents_them():
    assert parse_write_mode("write") == ()
    assert parse_write_mode("zeroes") == (("zeroes", 100.0),)
    assert parse_write_mode("write/60:zeroes/30:uncor/10") == (("write", 60.0), ("zeroes", 30.0), ("uncor", 10.0))
    assert parse_write_mode("write/50:zeroes/:uncor/") == (("write", 50.0), ("zeroes", 25.0), ("uncor", 25.0))
    for bad, words in (
        ("write/60:zeroes/30", "must sum to 100"),
        ("erase", "unknown mode 'erase'"),
        ("write/80:zeroes/40:uncor/", "more than 100"),
    ):
        with pytest.raises(ConfigError, match=words):
            parse_write_mode(bad)


def _job(tmp_path, text: str) -> str:
    path = tmp_path / "job.fio"
    path.write_text(text)
    return str(path)


JOB = """
[global]
filename=/dev/ng0n1
ioengine=io_uring_cmd
bs=4k
iodepth=8
size=4m
{extra}
[w]
rw=randwrite
write_mode={mode}
"""


def test_zone_append_needs_zonemode_zbd_and_write_mode_needs_io_uring_cmd(tmp_path):
    with pytest.raises(ConfigError, match="write_mode=zone_append' requires zonemode=zbd"):
        resolve(job_file=_job(tmp_path, JOB.format(extra="", mode="zone_append")), platform="p3700-e5-2660v4")
    old = JOB.format(extra="stacksim_fio_version=3.41", mode="write/50:zeroes/50")
    with pytest.raises(ConfigError, match="fio 3.41 has no zone_append mode nor mixes"):
        resolve(job_file=_job(tmp_path, old), platform="p3700-e5-2660v4")
    text = JOB.format(extra="", mode="zeroes").replace("io_uring_cmd", "libaio").replace("/dev/ng0n1", "/dev/nvme0n1")
    with pytest.raises(ConfigError, match="write_mode"):
        resolve(job_file=_job(tmp_path, text), platform="p3700-e5-2660v4")


# -- the device's side ---------------------------------------------------------------------------


def test_write_zeroes_moves_no_data_and_deallocates_on_an_ftl():
    eng, dev, qp, posted = _device(p3700(ftl=FTL))
    valid = sum(dev.ftl.valid)
    for i in range(64):
        dev.submit(qp, _cmd(i, "write", i * 4096, opcode=WRITE_ZEROES))
    eng.run(1e12)
    assert len(posted) == 64 and all(r.status == 0 for r in posted)
    assert dev.bytes == 0  # nothing crossed the link
    assert dev.ftl.host_pages == 0 and dev.ftl.nand_pages == 0  # no page programmed
    assert sum(dev.ftl.valid) == valid - 64 and all(dev.ftl.l2p[p] == -1 for p in range(64))
    assert dev.busy_unit_ns["write"] == 0 and dev.nvm_commands.zeroes_deallocated_bytes == 64 * 4096


def test_write_zeroes_without_an_ftl_programs_the_media():
    eng, dev, qp, posted = _device(optane_900p())
    for i in range(16):
        dev.submit(qp, _cmd(i, "write", i * 4096, opcode=WRITE_ZEROES))
    eng.run(1e12)
    assert len(posted) == 16 and dev.bytes == 0
    assert dev.busy_unit_ns["write"] > 16 * 0.5 * optane_900p().write.base_ns
    assert dev.nvm_commands.zeroes_deallocated_bytes == 0


def test_uncorrectable_blocks_fail_reads_and_verifies_until_rewritten():
    eng, dev, qp, posted = _device(p3700(ftl=FTL))
    dev.submit(qp, _cmd(0, "write", 8192, 8192, opcode=WRITE_UNCOR))  # blocks of pages 2 and 3
    eng.run(1e12)
    reads = [_cmd(1, "read", 8192), _cmd(2, "read", 0), _cmd(3, "read", 12288, 8192)]
    for r in reads:
        dev.submit(qp, r)
    dev.submit(qp, _cmd(4, "write", 12288, opcode=VERIFY))
    eng.run(2e12)
    assert [r.status for r in reads] == [READ_ERROR, 0, READ_ERROR]
    assert posted[-1].id == 4 and posted[-1].status == READ_ERROR
    assert reads[0].t_dev_end - reads[0].t_dev_start > 0.5 * p3700().read.base_ns  # the media read happened
    dev.submit(qp, _cmd(5, "write", 8192, 8192))  # a write clears the marks
    eng.run(3e12)
    again = _cmd(6, "read", 8192)
    dev.submit(qp, again)
    eng.run(4e12)
    assert again.status == 0
    c = dev.nvm_commands.counters()
    assert c["uncorrectable_reads"] == 2 and c["verify_errors"] == 1 and c["write_uncorrectable"] == 1


def test_verify_reads_the_media_and_moves_no_data():
    eng, dev, qp, posted = _device(p3700(ftl=FTL))
    for i in range(32):
        dev.submit(qp, _cmd(i, "write", i * 131072, 131072, opcode=VERIFY))
    eng.run(1e12)
    assert dev.bytes == 0 and dev.busy_path_ns["read"] == 0
    cfg = p3700()
    assert dev.busy_unit_ns["read"] > 32 * 0.5 * (cfg.read.base_ns + cfg.read.per_kib_ns * 124)
    assert dev.ftl.host_pages == 0 and dev.nvm_commands.verify_bytes == 32 * 131072


def test_zone_appends_in_flight_to_one_zone_all_land_where_writes_would_fail():
    eng, dev, qp, posted = _device(zn540())
    size = dev.zones.size
    appends = [_cmd(i, "write", size, 65536, opcode=ZONE_APPEND) for i in range(8)]
    for r in appends:
        dev.submit(qp, r)
    eng.run(1e12)
    assert [r.status for r in appends] == [0] * 8
    assert sorted(r.offset for r in appends) == [size + k * 65536 for k in range(8)]
    assert dev.zones.wp[1] == 8 * 65536
    writes = [_cmd(10 + i, "write", 2 * size, 65536) for i in range(2)]  # both at the zone's start
    for r in writes:
        dev.submit(qp, r)
    eng.run(2e12)
    assert [r.status for r in writes] == [0, ZONE_INVALID_WRITE]


# -- through fio ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pm1743(tmp_path_factory) -> str:
    """A platform of the PM1743 with its FTL and FDP (the pm1743-gc preset), as `platform new` makes."""
    platform, _ = compose_platform("xeon-silver-4210r", 1, "pm1743-gc", 1)
    path = tmp_path_factory.mktemp("plat") / "pm1743.yaml"
    path.write_text(platform_yaml(platform, header="pm1743-gc"))
    return str(path)


SMALL_FTL = {"ssd.ftl.span_bytes": str(SPAN), "ssd.ftl.pages_per_block": "64"}

UNCOR_THEN_READ = """
[global]
bs=4k
size=1m
stonewall=1
[mark]
filename=/dev/ng0n1
ioengine=io_uring_cmd
rw=write
write_mode=uncor
[read]
{read}
rw=read
"""


@pytest.mark.parametrize(
    "read, err, text",
    [
        ("filename=/dev/ng0n1\nioengine=io_uring_cmd", 0x281, "device error 0x281"),
        ("filename=/dev/nvme0n1\nioengine=psync\ndirect=1", 61, "No data available"),
    ],
)
def test_a_read_of_an_uncorrectable_block_fails_the_job_as_fio_reports_it(tmp_path, pm1743, read, err, text):
    cfg = resolve(job_file=_job(tmp_path, UNCOR_THEN_READ.format(read=read)), platform=pm1743, sets=SMALL_FTL)
    res = simulate(cfg, keep_model=True)
    th = [t for t in res.run.threads if t.job.name == "read"][0]
    assert th.failed and th.task.error == err and text in th.error_msg and "read offset=0" in th.error_msg
    jobs = {j["jobname"]: j for j in res.to_dict()["jobs"]}
    assert jobs["mark"]["error"] == 0 and jobs["read"]["error"] == err
    said = "device error 0x281: an NVMe status" if err == 0x281 else "ENODATA: No data available"
    assert f"job read: ended with error {err} ({said}" in format_summary(res.to_dict())
    media = res.summary["ssd_media"]["ssd0"]
    assert media["write_uncorrectable"] == 256 and media["uncorrectable_reads"] == 1


def test_the_write_mode_example_counts_each_command(pm1743):
    cfg = resolve(job_file=str(ROOT / "examples/uring-cmd-write-mode.fio"), platform=pm1743, sets=SMALL_FTL)
    m = simulate(cfg).summary["ssd_media"]["ssd0"]
    assert m["write_zeroes"] > 0 and m["write_zeroes_deallocated_bytes"] == m["write_zeroes_bytes"]
    assert m["verifies"] > 0 and m["verify_bytes"] == 4096 * m["verifies"]
    assert m["write_uncorrectable"] > 0 and m["uncorrectable_reads"] == 0
    assert 0 < m["host_pages"] < m["write_zeroes"]  # only the mixed job's Writes (60% of it) program pages


def test_the_zoned_append_example_keeps_32_appends_in_flight_without_errors():
    cfg = resolve(
        job_file=str(ROOT / "examples/uring-cmd-zoned-append.fio"),
        platform="zn540-e5-2660v4",
        sets={"kernel.version": "6.6"},
    )
    s = simulate(cfg).summary
    m = s["ssd_media"]["ssd0"]
    assert m["zone_appends"] > 100 and m["zone_errors"] == 0
    assert s["bandwidth_mb_s"] == pytest.approx(1.2e3 * 1.048576 * 0.9, rel=0.2)  # one zone's write rate
    page = (ROOT / "docs/zoned-fdp.md").read_text()  # the run the page shows
    assert f"IOPS {s['iops']:,.0f}   bandwidth {s['bandwidth_mb_s']:,.1f} MB/s" in page
    assert f"zone_appends {m['zone_appends']}  " in page


def test_fdp_on_the_pm1743_lowers_write_amplification_and_counts_it_per_handle(tmp_path, pm1743):
    out = {}
    sets = {**SMALL_FTL, "ssd.write_cache_program_ns": "100000"}
    for name, text in (
        ("mixed", FDP_JOB.format(fdp="", hot="", cold="")),
        ("fdp", FDP_JOB.format(fdp="fdp=1", hot="fdp_pli=0", cold="fdp_pli=5")),
    ):
        out[name] = simulate(resolve(job_file=_job(tmp_path, text), platform=pm1743, sets=sets)).summary
    mixed, fdp = out["mixed"]["ssd_media"]["ssd0"], out["fdp"]["ssd_media"]["ssd0"]
    assert mixed["gc_copies"] > 0 and "ruh0_host_pages" not in mixed  # one handle: no per-handle rows
    assert fdp["write_amplification"] < 0.85 * mixed["write_amplification"]
    assert fdp["ruh0_host_pages"] + fdp["ruh5_host_pages"] == fdp["host_pages"]
    assert fdp["ruh0_gc_copies"] + fdp["ruh5_gc_copies"] <= fdp["gc_copies"]
    assert fdp["ruh5_write_amplification"] < fdp["ruh0_write_amplification"]  # the cold stream's blocks die whole
    assert fdp["ruh0_reclaim_units"] > 0 and fdp["ruh5_reclaim_units"] > 0
    page = re.sub(r"\s+", " ", (ROOT / "docs/zoned-fdp.md").read_text())  # the figures the page quotes
    wa = {k: f"{v:.2f}" for k, v in (("mixed", mixed["write_amplification"]), ("fdp", fdp["write_amplification"]))}
    hot, cold = (f"{fdp[f'ruh{h}_write_amplification']:.2f}" for h in (0, 5))
    assert f"write amplification {wa['mixed']} when they share the default handle" in page
    assert f"{wa['fdp']} on handles 0 and 5, the hot handle's {hot} and the cold one's {cold}" in page
