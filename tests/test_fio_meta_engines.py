"""fio's engines that do no data IO: ``cpuio`` (models/ioengines/cpuio.py: a duty cycle of user-space
spinning and nanosleep) and the file-system metadata engines (models/ioengines/fsmeta.py: one system
call per IO, priced by the kernel's ``fs_*_cycles``, nothing reaching the device)."""

from __future__ import annotations

import pytest

from scenarios.config.host import resolve
from scenarios.inputs.fio.parser import job_from_options, parse_fio_text
from scenarios.run.simulate import simulate
from simcore.errors import ConfigError

PLATFORM = "optane900p-e3-1230v5"


def _run(opts: dict, sets: dict | None = None, keep_model: bool = False):
    job = job_from_options(opts, name="j")
    return simulate(resolve(jobs=[job], platform=PLATFORM, sets=sets or {}), keep_model=keep_model)


def _user_ns(res) -> float:
    return sum(cpu["user"] for cpu in res.summary["layers_ns_per_io_per_cpu"].values())


@pytest.mark.parametrize("load", [25, 50, 100])
def test_cpuio_burns_its_load_of_one_cpu(load):
    """cpuload=L: each burn spins cpuchunks us, then sleeps cpuchunks x (100 - L) / L us (fio's
    thinktime): the thread's user time over the runtime is L% of one CPU, a little less for the
    sleep's timer slack and the wake-up from the idle state the sleep let the CPU enter; no IO."""
    res = _run({"ioengine": "cpuio", "cpuload": str(load), "cpuchunks": "5000", "runtime": "60ms", "time_based": "1"})
    assert res.summary["ios"] == 0
    busy = _user_ns(res) / 60e6
    assert load / 100 - 0.04 < busy <= load / 100 + 0.002


def test_cpuio_needs_cpuload_and_a_runtime():
    with pytest.raises(ConfigError, match="cpuload"):
        parse_fio_text("[j]\nioengine=cpuio\nruntime=1\n", path="t.fio")
    with pytest.raises(ConfigError, match="cpuio needs runtime"):
        _run({"ioengine": "cpuio", "cpuload": "50", "size": "1m"})


def test_filestat_latency_is_the_call_priced_by_the_kernel_costs():
    """One stat() per file: fio's user work, the syscall entry and exit, the file system's lookup
    (kernel.fs_stat_cycles); tripling those cycles adds their difference to every IO's latency."""
    opts = {"ioengine": "filestat", "nrfiles": "50", "filesize": "4k", "runtime": "5ms", "time_based": "1"}
    base = _run(opts).summary["latency_us"]["mean"]
    slow = _run(opts, {"kernel.fs_stat_cycles": str(3 * 1700)}).summary["latency_us"]["mean"]
    ghz = 4.0  # the E3-1230 v5's turbo under one busy core (the platform's top frequency)
    assert slow - base == pytest.approx(2 * 1700 / ghz / 1000, rel=0.15)


def test_filedelete_deletes_each_file_once_and_no_command_reaches_the_ssd():
    res = _run(
        {
            "ioengine": "filedelete",
            "nrfiles": "40",
            "filesize": "4k",
            "numjobs": "2",
            "runtime": "20ms",
            "time_based": "1",
        },
        keep_model=True,
    )
    assert res.summary["ios"] == 80  # one unlink per file; the second pass would find them gone
    assert all(dev.commands == 0 for dev in res.model.devices)


def test_filecreate_second_pass_opens_existing_files():
    """loops=2: the first pass creates the files (kernel.fs_create_cycles), the second opens them."""
    res = _run({"ioengine": "filecreate", "nrfiles": "20", "filesize": "4k", "loops": "2"}, keep_model=True)
    lat = [r.t_complete - r.t_submit for r in res.model.records]
    assert len(lat) == 40
    assert min(lat[:20]) > 3 * max(lat[20:])


def test_falloc_prices_each_mode_and_ftruncate_writes_only():
    res = _run(
        {"ioengine": "falloc", "rw": "randtrim", "filename": "f", "size": "1m", "runtime": "2ms", "time_based": "1"},
        {"kernel.fs_punch_hole_cycles": "40000"},
        keep_model=True,
    )
    assert res.summary["ios"] > 0 and all(r.op == "trim" for r in res.model.records)
    assert all(dev.commands == 0 for dev in res.model.devices)
    assert res.summary["latency_us"]["mean"] > 40000 / 4.0 / 1000
    with pytest.raises(ConfigError, match="ftruncate engine does writes only"):
        parse_fio_text("[j]\nioengine=ftruncate\nrw=read\nfilename=f\nsize=1m\n", path="t.fio")


def _fs_ns(res) -> float:
    return sum(cpu["fs"] for cpu in res.summary["layers_ns_per_io_per_cpu"].values())


def test_dirstat_charges_the_path_walk_per_stat_and_reaches_no_device():
    """dirstat: stat() of each directory the engine's setup made, again on every pass (time_based):
    each IO's file-system time is one stat's path walk and getattr (kernel.fs_stat_cycles), at the
    core's 4 GHz; no command reaches the SSD."""
    opts = {"ioengine": "dirstat", "nrfiles": "5", "filesize": "4k", "runtime": "3ms", "time_based": "1"}
    res = _run(opts, keep_model=True)
    assert res.summary["ios"] > 5  # (several passes over the 5 directories)
    assert all(dev.commands == 0 for dev in res.model.devices)
    assert _fs_ns(res) == pytest.approx(1700 / 4.0, rel=0.1)
    slow = _run(opts, {"kernel.fs_stat_cycles": str(4 * 1700)})
    assert _fs_ns(slow) == pytest.approx(4 * 1700 / 4.0, rel=0.1)


@pytest.mark.parametrize(("engine", "field"), [("dircreate", "fs_mkdir_cycles"), ("dirdelete", "fs_rmdir_cycles")])
def test_dircreate_and_dirdelete_make_one_pass_priced_by_their_call(engine, field):
    """mkdir (dircreate) and rmdir (dirdelete) of each directory once: a second pass would fail (EEXIST,
    ENOENT) and end the job, as fio's td_verror does; each call's file-system time is its own field."""
    opts = {"ioengine": engine, "nrfiles": "20", "numjobs": "2", "filesize": "4k", "runtime": "20ms", "time_based": "1"}
    res = _run(opts, {f"kernel.{field}": "80000"}, keep_model=True)
    assert res.summary["ios"] == 40
    assert all(dev.commands == 0 for dev in res.model.devices)
    assert _fs_ns(res) == pytest.approx(80000 / 4.0, rel=0.1)
    with pytest.raises(ConfigError, match="only files are supported"):
        parse_fio_text(f"[j]\nioengine={engine}\nfilename=/dev/nvme0n1\nsize=1m\n", path="t.fio")


def test_trims_on_a_regular_file_fail_with_enotty_and_end_the_job():
    """fio 3.41 trims a file as a block device (BLKDISCARD on its descriptor): the file system has
    no such ioctl (-ENOTTY), so the job's first trim fails and fio ends the job; with exitall its
    partner job ends too. Nothing reaches the SSD's discard path."""
    text = (
        "[global]\nioengine=libaio\ndirectory=/scratch\nfilesize=1g\nexitall\nruntime=5ms\ntime_based\n"
        "[w]\ndirect=1\nrw=randwrite\nbs=128k\nfilename=f\n[t]\nrw=randtrim\nbs=4k\nfilename=f\n"
    )
    res = simulate(resolve(jobs=list(parse_fio_text(text).jobs), platform=PLATFORM), keep_model=True)
    w, t = res.run.threads
    assert t.failed and t.task.error == 25 and "Inappropriate ioctl for device: trim" in t.error_msg
    assert all(r.op != "trim" for r in res.model.records)
    assert res.summary["ios"] < 10  # (exitall: the writer ended with it)
    with pytest.raises(ConfigError, match="ENOTTY"):
        parse_fio_text(text.replace("exitall", "continue_on_error=write\nignore_error=,ENOTTY"))
    with pytest.raises(ConfigError, match="io_uring"):
        parse_fio_text(text.replace("ioengine=libaio", "ioengine=io_uring"))


def test_continue_on_error_and_ignore_error_lists_are_fios():
    from scenarios.inputs.fio.errors import non_fatal, parse_ignore_error

    lists = parse_ignore_error(",ENOSPC:5")
    assert lists == (None, (28, 5), None)
    assert non_fatal("none", lists, "write", 28) and not non_fatal("none", lists, "write", 25)
    assert not non_fatal("none", lists, "read", 5)  # no read list, and reads not continued
    assert non_fatal("read", (None, None, None), "read", 5)  # a continued class: EIO, EILSEQ
    assert non_fatal("write", (None, None, None), "trim", 5) and not non_fatal("write", (None, None, None), "read", 5)
    with pytest.raises(ConfigError, match="unknown error EWHAT"):
        parse_ignore_error("EWHAT")
