"""Bad zoned and flexible-placement input: one message naming the cause, exit 2, no traceback."""

import pytest

from stacksim.cli import main

ZBD = "[j]\nzonemode=zbd\ndirect=1\nfilename=/dev/nvme0n1\nrw=randwrite\nbs=64k\nruntime=5ms\ntime_based\n"
FDP = "[j]\ndirect=1\nfilename=/dev/ng0n1\nioengine=io_uring_cmd\nrw=randwrite\nruntime=5ms\ntime_based\nfdp=1\n"
FDP_SETS = ["--set", "kernel.version=6.6", "--set", "ssd.ftl.enabled=1", "--set", "ssd.ftl.placement_handles=4"]


@pytest.mark.parametrize(
    "job, args, fragments",
    [
        (ZBD, ["--platform", "zn540-e5-2660v4", "--set", "ssd.zoned.max_open_zones=0"], ["max_open_zones", "0"]),
        (ZBD, ["--platform", "zn540-e5-2660v4", "--set", "ssd.zoned.max_active_zones=0"], ["max_active_zones"]),
        (ZBD + "zonesize=4t\n", ["--platform", "zn540-e5-2660v4"], ["zonesize", "larger than the device"]),
        (ZBD + "zonesize=256m\n", ["--platform", "zn540-e5-2660v4"], ["zonesize", "does not match"]),
        (ZBD, ["--platform", "p3700-e5-2660v4"], ["zonemode=zbd", "zoned device", "Intel DC P3700"]),
        (ZBD + "max_open_zones=32\n", ["--platform", "zn540-e5-2660v4"], ["max_open_zones=32", "ignore_zone_limits"]),
        (ZBD + "zone_reset_threshold=1.5\n", ["--platform", "zn540-e5-2660v4"], ["zone_reset_threshold", "0..1"]),
        (ZBD + "zoneskip=1m\n", ["--platform", "zn540-e5-2660v4"], ["zoneskip", "zonemode=strided"]),
        (FDP + "fdp_pli=0,7\n", ["--platform", "p3700-e5-2660v4", *FDP_SETS], ["fdp_pli", "index 7", "out of range"]),
        (FDP, ["--platform", "p3700-e5-2660v4", "--set", "kernel.version=6.6"], ["fdp=1", "placement"]),
        (FDP + "dataplacement=streams\n", ["--platform", "p3700-e5-2660v4", *FDP_SETS], ["streams", "not modelled"]),
        (
            FDP.replace("ioengine=io_uring_cmd", "ioengine=libaio").replace("/dev/ng0n1", "/dev/nvme0n1"),
            ["--platform", "p3700-e5-2660v4", *FDP_SETS],
            ["fdp=1", "lacks fetch ruhs"],
        ),
        (
            ZBD.replace("filename=/dev/nvme0n1", "filename=/dev/ng0n1\nioengine=io_uring_cmd\nfdp=1"),
            ["--platform", "zn540-e5-2660v4", "--set", "kernel.version=6.6"],
            ["fdp=1", "placement"],
        ),
    ],
)
def test_bad_zoned_input_one_message_exit_2(tmp_path, capsys, job, args, fragments):
    path = tmp_path / "j.fio"
    path.write_text(job)
    out = tmp_path / "out.json"
    rc = main(["run", str(path), *args, "--json", str(out)])
    err = capsys.readouterr().err
    assert rc == 2
    assert "Traceback" not in err and err.count("error") == 1
    for f in fragments:
        assert f in err, (f, err)
    assert not out.exists()


@pytest.mark.parametrize(
    "extra,msg",
    [
        ("zonemode=zbd\nrw=randwrite\nioengine=psync\ndirect=0\n", "zonemode=zbd writes need direct=1"),
        ("fdp=1\nrw=randwrite\nioengine=xnvme\nxnvme_async=libaio\ndirect=0\n", "fdp=1 needs direct=1"),
    ],
)
def test_zoned_and_fdp_writes_through_the_page_cache_are_refused(tmp_path, extra, msg):
    from scenarios.config.host import resolve
    from simcore.errors import ConfigError

    job = tmp_path / "j.fio"
    job.write_text("[j]\nfilename=/dev/nvme0n1\nsize=" + ("2z" if "zonemode" in extra else "64m") + "\n" + extra)
    with pytest.raises(ConfigError, match=msg):
        resolve(job_file=str(job), platform="zn540-e5-2660v4")
