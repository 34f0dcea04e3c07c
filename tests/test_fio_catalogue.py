"""fio's option catalogue (scenarios/data/fio_catalogue.json) and how stacksim classifies it."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scenarios.inputs.fio import options as opts
from scenarios.inputs.fio.parser import parse_fio_text
from simcore.errors import ConfigError

ALL_NAMES = sorted(opts.CATALOGUE_NAMES)
JOB = "[j]\nrw=randread\ndirect=1\nsize=1m\n"


def test_catalogue_metadata():
    cat = opts.CATALOGUE
    assert cat["fio_version"] == opts.FIO_VERSION and opts.FIO_VERSION.startswith("3.")
    entries = {e["name"]: e for e in cat["options"]}
    assert len(entries) >= 350
    assert entries["iodepth"]["type"] == "int" and entries["iodepth"]["default"] == "1"
    assert entries["nrfiles"]["aliases"] == ["nr_files"]
    assert entries["write_mode"]["engines"] == ["io_uring_cmd"]
    assert set(entries["hipri"]["engines"]) >= {"io_uring", "pvsync2"}
    assert entries["readwrite"]["aliases"] == ["rw"]
    assert {"psync", "libaio", "io_uring", "io_uring_cmd", "null"} <= set(cat["ioengines"])


def test_every_catalogue_name_is_classified_and_nothing_else():
    assert set(opts.CATALOGUE_NAMES) | set(opts.PROFILE_OPTIONS) == set(opts.FIO_OPTIONS)
    for name, spec in opts.FIO_OPTIONS.items():
        assert spec.status in ("used", "ignored", "limited")
        if spec.status == "limited":
            assert spec.reason, name  # every refusal says why


@pytest.mark.parametrize("line,name", [("verify_write_sequence=0", "verify_write_sequence")])
def test_issue_examples_are_accepted_and_listed(line, name):
    f = parse_fio_text(JOB + line + "\n")
    assert name in f.ignored_options


def test_random_sequence_stride_is_modelled_not_ignored():
    (job,) = parse_fio_text(JOB + "random_distribution=sequence:1,0\nrandom_sequence_stride=1\n").jobs
    assert job.random_sequence_stride and "random_sequence_stride" not in job.ignored_options


def test_profile_options_are_accepted_without_effect():
    """fio registers its profiles' options in its one option table (profile.c register_profile),
    so ``threads=1`` (tiobench's) is accepted in any job; without profile= it changes nothing."""
    job = parse_fio_text(JOB + "threads=1\nthreads-per-queue=4\nprep\n").jobs[0]
    assert {"threads", "threads-per-queue", "prep"} <= set(job.ignored_options)
    assert job.model_dump(exclude={"ignored_options"}) == parse_fio_text(JOB).jobs[0].model_dump(
        exclude={"ignored_options"}
    )
    assert opts.lookup("size").status == "used"  # the general option, not tiobench's
    with pytest.raises(ConfigError, match="unknown fio option 'thread_count'"):
        parse_fio_text(JOB + "thread_count=1\n")  # exact names only, as fio's o_match


def test_nr_files_alias_is_modelled_as_nrfiles():
    assert parse_fio_text(JOB + "nr_files=2\n").jobs[0].nrfiles == 2


def test_engine_option_is_checked_against_its_engine():
    with pytest.raises(ConfigError) as e:
        parse_fio_text(JOB + "write_mode=zeroes\n")
    msg = str(e.value)
    assert "unknown" not in msg and "io_uring_cmd" in msg and "write_mode" in msg


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(ALL_NAMES))
def test_no_catalogue_option_is_unknown(name):
    """Whatever the value's fate (accepted, refused with a reason, wrong engine), a name fio
    documents is never reported as an unknown option."""
    for value in ("1", "0", None):
        text = JOB + (name if value is None else f"{name}={value}") + "\n"
        try:
            parse_fio_text(text)
        except ConfigError as exc:
            assert "unknown fio option" not in str(exc), str(exc)


def test_misspelt_option_is_unknown_with_suggestion():
    with pytest.raises(ConfigError) as e:
        parse_fio_text(JOB + "random_sequence_strid=1\n")
    msg = str(e.value)
    assert "unknown fio option 'random_sequence_strid'" in msg and "'random_sequence_stride'" in msg


def test_refusal_names_the_reason():
    with pytest.raises(ConfigError) as e:
        parse_fio_text(JOB + "sprandom=1\n")
    assert "not modelled yet" in str(e.value) and "SPRandom" in str(e.value)
