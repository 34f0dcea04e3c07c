"""fio's job-file language (HOWTO: "Job file format", "Environment variables", "Reserved
keywords", arithmetic in "Job file parameters"): what stacksim models and what it refuses."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scenarios.inputs.fio.language import PAGESIZE_BYTES, expand, platform_keywords
from scenarios.inputs.fio.parser import parse_fio_file, parse_fio_text
from simcore.errors import ConfigError

KW = platform_keywords(16)
HEAD = "[global]\nrw=randread\ndirect=1\nsize=1m\n"


def one(body: str, env=None):
    return parse_fio_text(HEAD + "[j]\n" + body + "\n", keywords=KW, env=env or {}).jobs[0]


def err(body: str, env=None) -> str:
    with pytest.raises(ConfigError) as e:
        parse_fio_text(HEAD + "[j]\n" + body + "\n", keywords=KW, env=env or {})
    return str(e.value)


def test_environment_expansion_as_the_howto_example():
    j = one("size=${SIZE}\nnumjobs=${NUMJOBS}", env={"SIZE": "64m", "NUMJOBS": "4"})
    assert (j.size_bytes, j.numjobs) == (64 << 20, 4)
    j = one("bs=${BS}k", env={"BS": "8"})  # part of a value
    assert j.bs_read_bytes == 8192


def test_unset_environment_variable_is_empty():
    # fio substitutes the empty string; an option that needs a value then says so
    assert one("description=x${NOPE}y").name == "j"
    assert "'iodepth' needs a value" in err("iodepth=${NOPE}")
    # a number that expands to nothing: fio's parse fails, in fio's words (sprandom.fio without FIO_BS)
    assert "fio: 'fio: failed parsing bs=${FIO_BS}'" in err("bs=${FIO_BS}")
    assert one("bs=${FIO_BS}", env={"FIO_BS": "8192"}).bs_read_bytes == 8192


def test_reserved_keywords_from_the_platform():
    j = one("numjobs=$ncpus\nbs=$pagesize")
    assert (j.numjobs, j.bs_read_bytes) == (16, PAGESIZE_BYTES)
    j = one("numjobs=$ncpus/4\niodepth=2*$ncpus")  # the HOWTO's "size=8*$mb_memory" form
    assert (j.numjobs, j.iodepth) == (4, 32)
    assert "not modelled yet" in err("size=8*$mb_memory") and "memory" in err("size=8*$mb_memory")
    assert "reserved keywords" in err("iodepth=$cpus")
    # a platform with a known memory size gives $mb_memory in MiB (the 900P machine: 64 GB)
    assert platform_keywords(8, 64 << 30)["mb_memory"] == 65536
    j = parse_fio_text("[j]\ndirect=1\nsize=$mb_memory*16\n", keywords=platform_keywords(8, 64 << 30)).jobs[0]
    assert j.size_bytes == 65536 * 16
    # no platform known: $ncpus is refused with a reason rather than guessed
    with pytest.raises(ConfigError, match="ncpus"):
        parse_fio_text("[j]\ndirect=1\nsize=1m\nnumjobs=$ncpus\n")


@pytest.mark.parametrize(
    "value,kind,expected",
    [
        ("(4*1024)", "int", "4096"),
        ("(1k*4)", "int", "4096"),  # units inside expressions: kb_base 1024
        ("(2^10)", "int", "1024"),  # ^ is exponentiation
        ("(7%4)", "int", "3"),
        ("(7/2)", "int", "3"),  # truncated to an integer
        ("(1+2)*x", "str", "(1+2)*x"),  # strings keep their parentheses
        ("(1000)", "time", "1000us"),  # bare numbers in time expressions are microseconds
        ("(2s+500ms)", "time", "2500000us"),
        ("(4k),(8k)", "int", "4096,8192"),  # read,write lists
    ],
)
def test_arithmetic(value, kind, expected):
    assert expand(value, option="o", kind=kind, keywords=KW, env={}) == expected


def test_arithmetic_in_job_values():
    j = one("size=(64*1024*1024)\nruntime=(1500000)\nbs=(4*1024),(16*1024)")
    assert j.size_bytes == 64 << 20
    assert j.runtime_ns == 1_500_000_000  # 1.5e6 us: the expression's unit, not seconds
    assert (j.bs_read_bytes, j.bs_write_bytes) == (4096, 16384)
    j = one("runtime=2")  # outside an expression a bare time is seconds
    assert j.runtime_ns == 2 * 10**9


@pytest.mark.parametrize(
    "value,fragment",
    [
        ("(1/0)", "division by zero"),
        ("(2^100000)", "out of range"),
        ("((1+2)", "unbalanced"),
        ("(1+)", "bad arithmetic expression"),
        ("(__import__)", "bad arithmetic expression"),
        ("(1-5)", "negative"),
    ],
)
def test_bad_arithmetic(value, fragment):
    assert fragment in err(f"size={value}")


def test_include_nested_relative_to_the_including_file(tmp_path):
    (tmp_path / "inc").mkdir()
    (tmp_path / "glob-include.fio").write_text("; shared\nthread=1\ngroup_reporting=1\ninclude inc/depth.fio\n")
    (tmp_path / "inc" / "depth.fio").write_text("ioengine=libaio\niodepth=4\n")
    (tmp_path / "test-include.fio").write_text("bs=8k\n")
    job = tmp_path / "including.fio"
    job.write_text(
        "[global]\ndirect=1\nsize=1m\ninclude glob-include.fio\n\n"
        "[test]\nrw=randread\ntime_based=1\nruntime=10\ninclude test-include.fio\n"
    )
    j = parse_fio_file(job, keywords=KW).jobs[0]
    assert (j.ioengine, j.iodepth, j.bs_read_bytes, j.rw) == ("libaio", 4, 8192, "randread")
    assert "group_reporting" in j.ignored_options


def test_include_errors(tmp_path):
    (tmp_path / "sect.fio").write_text("[x]\nbs=4k\n")
    (tmp_path / "loop.fio").write_text("include loop.fio\n")
    for name, fragment in (("sect.fio", "section header"), ("loop.fio", "include cycle"), ("nope.fio", "not found")):
        job = tmp_path / "j.fio"
        job.write_text(f"[j]\ndirect=1\nsize=1m\ninclude {name}\n")
        with pytest.raises(ConfigError, match=fragment):
            parse_fio_file(job)


def test_stonewall_and_wait_for_become_job_fields():
    f = parse_fio_text(HEAD + "[a]\n[b]\nstonewall\n[c]\nwait_for=a\n[d]\nwait_for_previous\n", keywords=KW)
    assert [j.stonewall for j in f.jobs] == [False, True, False, True]
    assert [j.wait_for for j in f.jobs] == [None, None, "a", None]
    g = parse_fio_text(HEAD + "stonewall\n[a]\n[b]\n", keywords=KW)  # from [global]: every job
    assert all(j.stonewall for j in g.jobs)
    assert "stonewall" not in g.ignored_options


def test_new_group_and_group_reporting_are_reporting_only():
    f = parse_fio_text(HEAD + "group_reporting\n[a]\nnumjobs=4\n[b]\nnew_group\n", keywords=KW)
    assert f.jobs[0].numjobs == 4 and "group_reporting" in f.ignored_options
    assert f.jobs[1].new_group  # modelled: the JSON's groupid (models/ioengines/job_control.py)


def test_size_percentage_is_kept_for_the_platform():
    j = one("size=50%")
    assert (j.size_percent, j.size_bytes) == (50.0, None)  # resolved against ssd.capacity_bytes later


def test_job_language_leftovers_are_parsed():
    j = one("rw=randread:8\nrw_sequencer=identical\nloops=3\nstartdelay=1-2\nnumber_ios=100\noffset_increment=1m")
    assert (j.rw, j.rw_modifier, j.rw_sequencer, j.loops, j.number_ios) == ("randread", 8, "identical", 3, 100)
    assert (j.startdelay_ns, j.startdelay_max_ns, j.offset_increment_bytes) == (10**9, 2 * 10**9, 1 << 20)
    assert one("rw=write:4k").rw_modifier == 4096  # sequential: a size (holes)
    assert one("startdelay=20ms").startdelay_ns == 20_000_000 and not set(j.ignored_options)
    assert "range ends before it starts" in err("startdelay=3-1")
    assert "'rw_sequencer'" in err("rw_sequencer=backwards")


def test_string_values_keep_what_cannot_be_replaced():
    f = parse_fio_text("[j]\ndirect=1\nsize=1m\ndescription=$ncpus cpus, $5 (cheap)\n")
    assert "description" in f.jobs[0].ignored_options  # no platform, a string: left as written


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 10**6), st.sampled_from(["+", "*", "/", "%", "-"]))
def test_arithmetic_matches_integer_arithmetic(a, b, op):
    expected = {"+": a + b, "*": a * b, "/": a // b, "%": a % b, "-": a - b}[op]
    text = f"({a}{op}{b})"
    if expected < 0:
        with pytest.raises(ConfigError, match="negative"):
            expand(text, option="o", kind="int", keywords=KW, env={})
    else:
        assert expand(text, option="o", kind="int", keywords=KW, env={}) == str(expected)
