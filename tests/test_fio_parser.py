"""Tests for scenarios.inputs.fio: fio job-file parsing, units and option catalogue."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scenarios.config.host import resolve
from scenarios.inputs.fio import (
    FIO_OPTIONS,
    STACKSIM_OPTIONS,
    FioJob,
    apply_overrides,
    job_from_options,
    parse_bool,
    parse_cpu_list,
    parse_cpumask,
    parse_fio_file,
    parse_fio_text,
    parse_size,
    parse_time_ns,
)
from simcore.errors import ConfigError

BASIC = """\
; a typical job file
[global]
ioengine=libaio
direct=1
bs=4k
iodepth=16
runtime=30
time_based
group_reporting
filename=/dev/nvme0n1

[reads]
rw=randread
numjobs=4

[writes]   # overrides
rw=randwrite
bs=64k
iodepth=4
"""


def parse(body: str, path: str = "t.fio"):
    return parse_fio_text(body, path=path)


def one(body: str) -> FioJob:
    """Parse a single job section (direct=1 added, since stacksim requires it)."""
    return parse("[j]\ndirect=1\n" + body).jobs[0]


def error(body: str, path: str = "t.fio") -> str:
    with pytest.raises(ConfigError) as exc:
        parse(body, path)
    return str(exc.value)


# --- job file structure ---------------------------------------------------------------------------
def test_global_inheritance_and_override():
    f = parse(BASIC)
    reads, writes = f.jobs
    assert (reads.name, writes.name) == ("reads", "writes")
    assert reads.rw == "randread" and reads.numjobs == 4 and reads.iodepth == 16
    assert reads.ioengine == "libaio" and reads.direct and reads.time_based
    assert reads.runtime_ns == 30 * 10**9 and reads.bs_read_bytes == reads.bs_write_bytes == 4096
    assert writes.bs_write_bytes == 65536 and writes.iodepth == 4 and writes.numjobs == 1
    assert reads.source == "t.fio:[reads]"


def test_later_global_applies_only_to_later_jobs_and_last_value_wins():
    f = parse("[global]\ndirect=1\n[a]\n[global]\niodepth=8\n[b]\niodepth=2\niodepth=3\n")
    assert [j.iodepth for j in f.jobs] == [1, 3]


def test_defaults_mirror_fio():
    j = one("")
    assert (j.rw, j.ioengine, j.iodepth, j.numjobs, j.rwmixread) == ("read", "psync", 1, 1, 50)
    assert (j.bs_read_bytes, j.runtime_ns, j.size_bytes, j.offset_bytes) == (4096, None, None, 0)
    assert (j.iodepth_batch_submit, j.iodepth_batch_complete_min, j.iodepth_batch_complete_max) == (1, 1, 1)


def test_iodepth_batch_rules():
    j = one("ioengine=io_uring\niodepth=32\niodepth_batch=0\niodepth_batch_complete_max=64")
    assert (j.iodepth_batch_submit, j.iodepth_batch_complete_max) == (32, 32)
    j = one("ioengine=io_uring\niodepth=32\niodepth_batch_submit=8\niodepth_batch_complete=4")
    assert (j.iodepth_batch_submit, j.iodepth_batch_complete_min, j.iodepth_batch_complete_max) == (8, 4, 4)
    assert one("ioengine=psync\niodepth=32").queue_depth == 1


def test_rwmix():
    assert one("rw=randrw\nrwmixread=70").rwmixread == 70
    assert one("rw=randrw\nrwmixwrite=30").rwmixwrite == 30
    assert one("rw=rw\nrwmixread=10\nrwmixwrite=40").rwmixread == 60  # last one wins
    assert "must be <= 100" in error("[j]\ndirect=1\nrwmixread=101")


def test_comments_and_whitespace():
    j = one("# full comment\n  rw = randwrite ; trailing\n\niodepth=2 # x\n")
    assert (j.rw, j.iodepth) == ("randwrite", 2)


# --- units ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text,expected",
    [
        ("4096", 4096),
        ("4k", 4096),
        ("4K", 4096),
        ("4kb", 4096),
        ("4KB", 4096),
        ("1m", 1 << 20),
        ("1g", 1 << 30),
        ("2t", 2 << 40),
        ("0x1000", 4096),
        ("512b", 512),
        ("4Ki", 4096),
        ("1mi", 1 << 20),
        ("4KiB", 4000),
        ("1MiB", 10**6),  # as fio 3.33 (kb_base=1024)
    ],
)
def test_parse_size(text, expected):
    assert parse_size(text, option="bs") == expected


def test_parse_size_kb_base_1000():
    assert parse_size("4KiB", option="bs", kb_base=1000) == 4096
    assert parse_size("4k", option="bs", kb_base=1000) == 4000
    assert one("kb_base=1000\nbs=4KiB\nsize=1m").size_bytes == 10**6


@pytest.mark.parametrize(
    "text,fragment",
    [
        ("-4k", "negative"),
        ("abc", "bad size"),
        ("1.5g", "fractions"),
        ("4x", "unknown size unit"),
        ("0", "greater than zero"),
        ("", "needs a value"),
        ("50%", "percentage"),
    ],
)
def test_parse_size_errors(text, fragment):
    with pytest.raises(ConfigError, match=fragment) as exc:
        parse_size(text, option="size")
    assert "'size'" in str(exc.value)


@given(st.integers(min_value=1, max_value=10**12))
def test_parse_size_k_property(n):
    assert parse_size(f"{n}k", option="bs") == n * 1024


@pytest.mark.parametrize(
    "text,unit,expected",
    [
        ("10", "s", 10 * 10**9),
        ("250us", "s", 250_000),
        ("20ms", "s", 20 * 10**6),
        ("3s", "s", 3 * 10**9),
        ("2usec", "s", 2000),
        ("3msec", "s", 3 * 10**6),
        ("2m", "s", 120 * 10**9),
        ("1h", "s", 3600 * 10**9),
        ("1d", "s", 86400 * 10**9),
        ("5MS", "s", 5 * 10**6),
        ("7", "us", 7000),
        ("0", "s", 0),
    ],
)
def test_parse_time(text, unit, expected):
    assert parse_time_ns(text, option="runtime", default_unit=unit) == expected


@pytest.mark.parametrize("text", ["-1s", "1.5s", "10parsecs", "s", "", "2sec", "1min", "5ns"])
def test_parse_time_errors(text):
    with pytest.raises(ConfigError, match="'runtime'"):
        parse_time_ns(text, option="runtime")


def test_time_suffix_fio_reads_as_microseconds_is_rejected():
    with pytest.raises(ConfigError, match="microseconds"):
        parse_time_ns("2sec", option="runtime")


def test_times_in_job():
    j = one("runtime=2m\nramp_time=500ms\nthinktime=50\ntime_based=1")
    assert (j.runtime_ns, j.ramp_time_ns, j.thinktime_ns) == (120 * 10**9, 500 * 10**6, 50_000)


@pytest.mark.parametrize(
    "text,expected",
    [
        ("1", True),
        ("0", False),
        ("true", True),
        ("FALSE", False),
        ("yes", True),
        ("no", False),
        ("on", True),
        ("Off", False),
    ],
)
def test_parse_bool(text, expected):
    assert parse_bool(text, option="direct") is expected


def test_parse_bool_flag():
    assert parse_bool(None, option="time_based", flag=True) is True
    assert parse_bool("3", option="time_based", flag=True) is True
    assert parse_bool("0", option="time_based", flag=True) is False
    with pytest.raises(ConfigError, match="needs a value"):
        parse_bool(None, option="direct")


def test_bool_forms_in_job():
    assert one("time_based\nruntime=1").time_based
    assert one("time_based=2\nruntime=1").time_based  # fio set-type option: any non-zero int
    assert not one("time_based=off\nruntime=1").time_based
    assert one("direct=yes\nbuffered=no").direct
    assert "bad boolean 'maybe'" in error("[j]\ndirect=maybe")
    assert "bad boolean '2'" in error("[j]\ndirect=2")
    # like fio, plain booleans need a value; set-type ones (group_reporting, ...) do not
    assert "'direct' needs a value" in error("[j]\ndirect\n")
    assert "'nowait' needs a value" in error("[j]\ndirect=1\nioengine=io_uring\nnowait\n")
    assert one("group_reporting\nstonewall\nwrite_lat_log\n").ignored_options
    assert "'filename' needs a value" in error("[j]\ndirect=1\nfilename\n")


def test_bs_pairs():
    j = one("bs=4k,16k")
    assert (j.bs_read_bytes, j.bs_write_bytes) == (4096, 16384)
    j = one("blocksize=,8k")
    assert (j.bs_read_bytes, j.bs_write_bytes) == (4096, 8192)
    assert one("bs=8k,32k,").bs_write_bytes == 32768
    assert "multiple of 512" in error("[j]\ndirect=1\nbs=1000")


def test_cpus_allowed():
    assert parse_cpu_list("0-3,6") == (0, 1, 2, 3, 6)
    assert parse_cpu_list("6,0-1,1") == (0, 1, 6)
    assert parse_cpumask("0x22") == (1, 5) and parse_cpumask("34") == (1, 5)
    assert one("cpus_allowed=2-3,8").cpus_allowed == (2, 3, 8)
    assert one("cpus_allowed=0-7\ncpumask=0x3").cpus_allowed == (0, 1)
    assert one("cpus_allowed=1\ncpus_allowed_policy=split").cpus_allowed_policy == "split"
    for bad in ("3-1", "a", "1,,2"):
        with pytest.raises(ConfigError, match="cpus_allowed"):
            parse_cpu_list(bad)


def test_rate_iops():
    j = one("rate_iops=1000,500")
    assert (j.rate_iops_read, j.rate_iops_write) == (1000, 500)
    j = one("rate_iops=200")
    assert (j.rate_iops_read, j.rate_iops_write) == (200, 200)
    assert one("rate_iops=,300").rate_iops_read is None


# --- errors --------------------------------------------------------------------------------------
def test_unknown_option_message():
    msg = error("[global]\ndirect=1\n\n[myjob]\nrw=read\niodeph=8\n", path="disk.fio")
    assert "unknown fio option 'iodeph'" in msg and "job 'myjob'" in msg
    assert "disk.fio line 6" in msg and "fio would reject it too" in msg and "'iodepth'" in msg


def test_unknown_option_in_global():
    msg = error("[global]\nrunntime=3\n[a]\n")
    assert "'runntime'" in msg and "[global]" in msg and "line 2" in msg and "'runtime'" in msg


def test_unknown_option_never_suggests_nonsense():
    assert "Did you mean" not in error("[a]\nzzzzzzzz=1\n")


@pytest.mark.parametrize(
    "body,fragments",
    [
        ("rw=randred", ["'randred'", "randread", "line 3"]),
        ("rw=randread:x", ["'rw'", "expected an integer"]),
        ("rw=read:-4q", ["'rw'", "unknown size unit"]),
        ("ioengine=sg", ["'sg'", "not modelled", "io_uring"]),
        ("ioengine=libaoi", ["unknown ioengine", "libaio"]),
        ("verify=md6", ["'verify'", "unknown value 'md6'", "crc32c"]),
        ("verify=md5\nverify_async=-2", ["verify_async", ">= 0"]),
        ("continue_on_error=maybe", ["continue_on_error", "unknown value 'maybe'"]),
        ("verify=md5\nverify_backlog=-8", ["verify_backlog", ">= 0"]),
        ("zonemode=zbd\nioengine=null", ["zonemode=zbd", "ioengine=null", "not modelled yet"]),
        ("zoneskip=1m", ["zoneskip", "zonemode=strided"]),
        ("io_submit_mode=offload\nflow=2", ["flow", "offload", "not modelled yet"]),
        ("bssplit=4k/60:64k/60", ["bssplit", "add up to 120"]),
        ("size=500%", ["percentage"]),
        ("size=-1g", ["negative", "'size'", "line 3"]),
        ("size=lots", ["bad size 'lots'"]),
        ("numjobs=0", ["numjobs", ">= 1"]),
        ("iodepth=0", ["iodepth", ">= 1"]),
        ("rw", ["'rw' needs a value"]),
        ("fixedbufs=1", ["io_uring", "ioengine=psync", "Bad option"]),
        ("ioengine=libaio\nhipri=1", ["hipri", "ioengine=libaio"]),
        ("size=$mb_memory", ["mb_memory", "not modelled yet"]),
        ("stacksim_irq_hint=loud", ["stacksim_irq_hint", "'loud'", "urgent"]),
        ("stacksim_irq=urgent", ["unknown stacksim option", "stacksim_irq_hint"]),
    ],
)
def test_value_errors(body, fragments):
    msg = error("[j]\ndirect=1\n" + body + "\n")
    assert "job 'j'" in msg and "t.fio" in msg
    for fragment in fragments:
        assert fragment in msg


def test_buffered_io_accepted_where_modelled_and_rejected_elsewhere():
    """The page cache is modelled for the sync engines and libaio (models/ioengines/buffered_io.py)
    and io_uring (models/ioengines/buffered_uring.py); io_uring's O_SYNC / O_DSYNC buffered writes are
    refused with a message naming the engine."""
    assert not parse("[j]\nrw=read\n").jobs[0].direct
    assert parse("[j]\nrw=read\nioengine=libaio\niodepth=8\n").jobs[0].queue_depth == 1
    assert parse("[j]\nrw=read\nioengine=io_uring\niodepth=8\n").jobs[0].queue_depth == 8
    assert parse("[j]\nrw=write\nioengine=io_uring\niodepth=8\n").jobs[0].queue_depth == 8  # NOWAIT or io-wq
    assert parse("[j]\nrw=write\nioengine=io_uring\nfsync=4\n").jobs[0].fsync == 4  # IORING_OP_FSYNC
    msg = error("[j]\nrw=write\nioengine=io_uring\nsync=dsync\n")
    assert "job 'j'" in msg and "ioengine=io_uring" in msg and "fsync=N" in msg
    # NVMe passthrough has no page cache: direct means nothing there (fio's uring-cmd examples omit it)
    passthru = parse("[j]\ndirect=1\nbuffered=1\nioengine=io_uring_cmd\nfilename=/dev/ng0n1\n").jobs[0]
    assert passthru.ioengine == "io_uring_cmd"


def test_global_value_error_names_global_line():
    msg = error("[global]\nbs=4q\n[a]\ndirect=1\n")
    assert "line 2 [global]" in msg and "job 'a'" in msg and "'bs'" in msg


@pytest.mark.parametrize(
    "body,fragment",
    [
        ("", "no job sections"),
        ("[global]\ndirect=1\n", "no job sections"),
        ("direct=1\n[a]\n", "outside of any [section]"),
        ("[a\n", "malformed section header"),
        ("include other.fio\n[a]\n", "included file (include at t.fio line 1) not found"),
    ],
)
def test_structure_errors(body, fragment):
    assert fragment in error(body)


def test_missing_file(tmp_path):
    missing = tmp_path / "nope.fio"
    with pytest.raises(ConfigError, match="job file not found: .*nope.fio"):
        parse_fio_file(missing)


def test_parse_file(tmp_path):
    p = tmp_path / "x.fio"
    p.write_text(BASIC)
    f = parse_fio_file(p)
    assert f.path == str(p) and len(f.jobs) == 2 and f.jobs[0].source == f"{p}:[reads]"


# --- ignored and stacksim-specific options ---------------------------------------------------------
def test_ignored_options_listed():
    f = parse(BASIC + "exitall\nnew_group\nwrite_lat_log=lat\nverify=0\n")
    assert f.jobs[0].ignored_options == ("group_reporting",)  # filename is modelled (the target)
    assert set(f.jobs[1].ignored_options) == {"group_reporting", "write_lat_log"}  # verify=0 is modelled: none
    assert f.jobs[1].exitall and f.jobs[1].new_group  # modelled (job control)
    assert f.ignored_options == tuple(sorted(set(f.jobs[1].ignored_options)))


def test_stacksim_option():
    assert one("stacksim_irq_hint=urgent").stacksim_irq_hint == "urgent"
    assert one("").stacksim_irq_hint == "default"
    assert "stacksim_irq_hint" in STACKSIM_OPTIONS and "stacksim_irq_hint" not in FIO_OPTIONS


def test_io_uring_options():
    j = one("ioengine=io_uring\nsqthread_poll=1\nsqthread_poll_cpu=3\nregisterfiles\nfixedbufs\nhipri\nnowait=1")
    assert (j.sqthread_poll, j.sqthread_poll_cpu, j.registerfiles, j.fixedbufs, j.hipri, j.nowait) == (
        True,
        3,
        True,
        True,
        True,
        True,
    )


def test_catalogue_has_fio_names():
    for name in (
        "ioscheduler",
        "iodepth_batch",
        "iodepth_batch_complete_max",
        "cmdprio_percentage",
        "rate_process",
        "bssplit",
        "blocksize_range",
        "zonemode",
        "log_avg_msec",
        "percentile_list",
        "numa_cpu_nodes",
        "exitall",
        "unified_rw_reporting",
        "randseed",
        "allrandrepeat",
        "random_generator",
        "file_service_type",
        "invalidate",
        "end_fsync",
        "hipri_percentage",
        "timeout",
        "readwrite",
    ):
        assert name in FIO_OPTIONS, name
    assert len(FIO_OPTIONS) >= 300


# --- programmatic construction -------------------------------------------------------------------
def test_job_from_options_and_overrides():
    j = job_from_options({"rw": "randread", "direct": "1", "ioengine": "io_uring", "iodepth": "8"}, name="cli")
    assert (j.name, j.rw, j.iodepth, j.source) == ("cli", "randread", 8, "<set>")
    k = apply_overrides(j, {"bs": "8k", "numjobs": "4", "fixedbufs": ""})
    assert (k.bs_read_bytes, k.numjobs, k.fixedbufs, k.iodepth, k.rw) == (8192, 4, True, 8, "randread")
    assert j.bs_read_bytes == 4096  # original unchanged
    with pytest.raises(ConfigError, match="override.*'numjobs'"):
        apply_overrides(j, {"numjobs": "-1"})
    with pytest.raises(ConfigError, match="unknown fio option 'bsz'"):
        apply_overrides(j, {"bsz": "4k"})
    with pytest.raises(ConfigError, match="fixedbufs"):
        apply_overrides(k, {"ioengine": "libaio"})


_KEYS = [
    "rw",
    "bs",
    "size",
    "runtime",
    "iodepth",
    "cpus_allowed",
    "rate_iops",
    "verify",
    "verify_backlog",
    "verify_interval",
    "xnvme_async",
    "ioengine",
    "direct",
    "kb_base",
    "iodepth_low",
    "cpumask",
    "thinktime",
    "stacksim_irq_hint",
    "nope",
]
_VALUES = st.text(alphabet="0123456789kKmMiIbBsux-,%:$ .", max_size=8) | st.sampled_from(
    ["read", "randrw", "io_uring", "libaio", "sg", "1", "0", "4k,8k", "0-3", "urgent", "1000", "xnvme", "md5"]
)


@given(st.lists(st.tuples(st.sampled_from(_KEYS), st.one_of(st.none(), _VALUES)), max_size=8))
def test_arbitrary_options_raise_only_config_error(pairs):
    lines = "\n".join(k if v is None else f"{k}={v}" for k, v in pairs)
    try:
        parse_fio_text("[j]\n" + lines + "\n")
    except ConfigError:
        pass


# -- mixed block sizes ---------------------------------------------------------------------------------
def test_bssplit_and_bsrange_parse_like_fio():
    from scenarios.inputs.fio.units import parse_bsrange, parse_bssplit

    assert parse_bssplit("4k/50:64k/30:1m/20") == ((4096, 50.0), (65536, 30.0), (1 << 20, 20.0))
    assert parse_bssplit("4k/10:64k:128k") == ((4096, 10.0), (65536, 45.0), (131072, 45.0))  # blanks share the rest
    with pytest.raises(ConfigError, match="add up to 120"):
        parse_bssplit("4k/60:8k/60")
    with pytest.raises(ConfigError, match="not 100"):
        parse_bssplit("4k/60:8k/30")
    with pytest.raises(ConfigError, match="not a percentage"):
        parse_bssplit("4k/x")
    assert parse_bsrange("4k-16k") == (4096, 16384)
    with pytest.raises(ConfigError, match="below minimum"):
        parse_bsrange("16k-4k")
    job = job_from_options(
        {"rw": "randrw", "direct": "1", "bssplit": "4k/100,64k/100", "bsrange": "8k-32k"}, name="j", source="t"
    )
    assert job.bssplit_read == ((4096, 100.0),) and job.bssplit_write == ((65536, 100.0),)
    assert job.bsrange_read == (8192, 32768) == job.bsrange_write


def test_mixed_sizes_reach_the_device_in_their_shares():
    from scenarios.config.host import resolve
    from scenarios.run.assembly import build_run

    host, _fio, _ramp, end = build_run(
        resolve(sets={"runtime": "60ms", "ramp_time": "0", "bssplit": "4k/50:64k/30:256k/20"}), keep_requests=True
    )
    host.engine.run(end)
    recs = host.records
    n = len(recs)
    share = {s: sum(r.nbytes == s for r in recs) / n for s in (4096, 65536, 262144)}
    assert share[4096] == pytest.approx(0.5, abs=0.04) and share[65536] == pytest.approx(0.3, abs=0.04)
    assert sum(share.values()) == 1.0
    assert all(r.offset % 4096 == 0 and r.offset + r.nbytes <= (1 << 30) for r in recs)
    assert {r.nbytes for r in recs if r.splits} == {262144}  # above max_sectors_kb: split in two


def test_time_based_without_runtime_is_refused_after_the_sets(tmp_path):
    """fio only warns ('time_based requires a runtime/timeout setting') and runs until stopped: the run
    is refused unless a runtime comes from somewhere, ``--set runtime=...`` included."""
    path = tmp_path / "t.fio"
    path.write_text("[j]\nrw=read\ndirect=1\ntime_based\nsize=1m\n")
    with pytest.raises(ConfigError, match="'time_based' needs runtime"):
        resolve(job_file=str(path), platform="optane900p-e3-1230v5")
    cfg = resolve(job_file=str(path), platform="optane900p-e3-1230v5", sets={"runtime": "1ms"})
    assert cfg.jobs[0].runtime_ns == 1_000_000
