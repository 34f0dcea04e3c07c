"""fio's engines that reach an NVMe device through a library (xnvme, libblkio) run as the modelled
engine of their backend; the other engines are refused with one message naming the engine and why
(scenarios/inputs/fio/engines.py)."""

import pytest

from scenarios.config.host import resolve
from scenarios.inputs.fio.parser import parse_fio_text
from scenarios.run.simulate import simulate
from simcore.errors import ConfigError

BASE = "[global]\ndirect=1\nrw=randread\nsize=1m\nruntime=2ms\niodepth=4\n[j]\n"


def _job(text: str):
    return parse_fio_text(BASE + text).jobs[0]


@pytest.mark.parametrize(
    "text,engine",
    [
        ("ioengine=xnvme\nxnvme_async=io_uring\nfilename=/dev/nvme0n1\n", "io_uring"),
        ("ioengine=xnvme\nxnvme_async=io_uring_cmd\nfilename=/dev/ng0n1\n", "io_uring_cmd"),
        ("ioengine=xnvme\nxnvme_async=libaio\nfilename=/dev/nvme0n1\n", "libaio"),
        ("ioengine=libblkio\nlibblkio_driver=io_uring\nfilename=/dev/nvme0n1\n", "io_uring"),
        ("ioengine=libblkio\nlibblkio_driver=nvme-io_uring\nfilename=/dev/ng0n1\n", "io_uring_cmd"),
    ],
)
def test_library_backend_runs_as_its_engine(text, engine):
    job = _job(text)
    assert job.ioengine == engine and job.engine_library in ("xnvme", "libblkio") and job.engine_backend


def test_xnvme_options_follow_fio_engine_rules():
    job = _job("ioengine=xnvme\nxnvme_async=io_uring\nhipri=1\nsqthread_poll=1\nfilename=/dev/nvme0n1\n")
    assert job.hipri and job.sqthread_poll  # xnvme's poll_io / poll_sq: IOPOLL and SQPOLL rings
    with pytest.raises(ConfigError, match="fixedbufs.*not of ioengine=xnvme"):
        _job("ioengine=xnvme\nxnvme_async=io_uring\nfixedbufs=1\n")  # fio: Bad option
    with pytest.raises(ConfigError, match="xnvme_async.*not of ioengine=io_uring"):
        _job("ioengine=io_uring\nxnvme_async=io_uring\n")


def test_libblkio_wait_modes():
    loop = _job("ioengine=libblkio\nlibblkio_driver=io_uring\nlibblkio_wait_mode=loop\n")
    block = _job("ioengine=libblkio\nlibblkio_driver=io_uring\n")
    assert (loop.iodepth_batch_complete_min, block.iodepth_batch_complete_min) == (0, 1)
    with pytest.raises(ConfigError, match="eventfd"):
        _job("ioengine=libblkio\nlibblkio_driver=io_uring\nlibblkio_wait_mode=eventfd\n")


@pytest.mark.parametrize(
    "text,words",
    [
        ("ioengine=xnvme\n", ["emu", "NVMe ioctl", "xnvme_async=io_uring"]),
        ("ioengine=xnvme\nxnvme_async=thrpool\n", ["thrpool", "threads"]),
        ("ioengine=xnvme\nxnvme_async=bogus\n", ["xnvme_async", "bogus"]),
        ("ioengine=libblkio\n", ["libblkio_driver"]),
        ("ioengine=libblkio\nlibblkio_driver=virtio-blk-vhost-user\n", ["virtio-blk"]),
        ("ioengine=libblkio\nlibblkio_driver=nope\n", ["no driver 'nope'"]),
        ("ioengine=sg\n", ["'sg'", "SCSI translation", "4.13"]),
        ("ioengine=rdma\n", ["'rdma'", "network"]),
        ("ioengine=libcufile\n", ["GPU"]),
        ("ioengine=e4defrag\n", ["EXT4_IOC_MOVE_EXT"]),
    ],
)
def test_refused_engines_say_why(text, words):
    with pytest.raises(ConfigError) as e:
        _job(text)
    msg = str(e.value)
    assert msg.count("\n") == 0
    for w in words:
        assert w in msg, msg


def test_xnvme_io_uring_runs_the_io_uring_path(tmp_path):
    """The library adds no modelled work: the same job through xnvme's io_uring backend and
    through fio's io_uring engine gives the same simulation."""
    plat = "optane900p-e3-1230v5"
    a = BASE + "ioengine=io_uring\nfilename=/dev/nvme0n1\n"
    b = BASE + "ioengine=xnvme\nxnvme_async=io_uring\nfilename=/dev/nvme0n1\n"
    res = []
    for i, text in enumerate((a, b)):
        path = tmp_path / f"j{i}.fio"
        path.write_text(text)
        res.append(simulate(resolve(job_file=str(path), platform=plat)).summary)
    assert res[0]["ios"] == res[1]["ios"] > 0 and res[0]["latency_us"] == res[1]["latency_us"]


@pytest.mark.parametrize("line,word", [("cmd_type=bsg", "SCSI passthrough"), ("read_mode=prefetch", "Pre-Fetch")])
def test_io_uring_cmd_commands_other_than_nvme_ones_are_refused(line, word):
    """SCSI's commands are refused; NVMe's other write commands run (tests/test_uring_cmd_commands.py)."""
    ok = _job("ioengine=io_uring_cmd\nfilename=/dev/ng0n1\ncmd_type=nvme\nwrite_mode=zeroes\n")
    assert ok.ioengine == "io_uring_cmd" and ok.write_mode == (("zeroes", 100.0),)
    with pytest.raises(ConfigError, match=word):
        _job(f"ioengine=io_uring_cmd\nfilename=/dev/ng0n1\n{line}\n")
