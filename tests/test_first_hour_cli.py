"""The rough edges a new user met first (issue 46): the sweep schema, a sweep base's unknown key,
the terminal summary's policies, `stacksim list NAME` in full."""

from __future__ import annotations

import json

import pytest

from simcore.errors import ConfigError
from stacksim.cli import main


def run_cli(args, capsys):
    rc = main(args)
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_schema_sweep_describes_the_sweep_file(capsys):
    rc, out, _err = run_cli(["schema", "sweep"], capsys)
    schema = json.loads(out)
    assert rc == 0 and {"name", "base", "axes", "replicates", "seed"} <= set(schema["properties"])
    assert set(schema["$defs"]["SweepBase"]["properties"]) == {"scenario", "job_file", "platform"}


def test_a_sweep_bases_unknown_key_lists_the_valid_ones(tmp_path, capsys):
    f = tmp_path / "s.yaml"
    f.write_text("name: t\nbase: {job: x.fio, platform: optane900p-e3-1230v5}\naxes: {bs: [4k]}\n")
    rc, _out, err = run_cli(["sweep", str(f), "-o", str(tmp_path / "o.csv")], capsys)
    assert rc == 2
    assert "base.job: unknown key (valid: job_file, platform, scenario); did you mean 'job_file'?" in err
    assert "Traceback" not in err


def test_an_unknown_key_deeper_down_names_its_own_models_keys(tmp_path, capsys):
    """The valid keys are those of the model that holds the key (the platform's queue here), not
    the top level's."""
    from scenarios.config.host import RunConfig
    from simcore.config import validate
    from tests.conftest import make_cfg

    data = make_cfg().model_dump(mode="json")
    data["platform"]["queue"]["schedulr"] = "kyber"
    with pytest.raises(ConfigError) as e:
        validate(RunConfig, data, where="cfg")
    msg = str(e.value)
    assert "platform.queue.schedulr: unknown key (valid: " in msg and "did you mean 'scheduler'?" in msg
    assert "nr_requests" in msg and "jobs" not in msg.split("valid: ")[1]


def test_the_summary_names_the_io_scheduler(tmp_path, capsys):
    job = tmp_path / "j.fio"
    job.write_text("[j]\nrw=randread\nioengine=io_uring\ndirect=1\nruntime=3ms\ntime_based\nioscheduler=kyber\n")
    rc, out, err = run_cli(["run", "--platform", "optane900p-e3-1230v5", str(job)], capsys)
    assert rc == 0, err
    assert "(seed 1, policies: interrupt, IO scheduler kyber)" in out.splitlines()[0]
    rc, out, _err = run_cli(["run", "--scenario", "default", "--set", "runtime=3ms", "--set", "ramp_time=1ms"], capsys)
    assert "policies: interrupt, IO scheduler none)" in out.splitlines()[0]


def test_list_a_scenario_prints_its_whole_configuration(capsys):
    rc, out, _err = run_cli(["list", "hybrid8"], capsys)
    lines = out.splitlines()
    assert rc == 0 and lines[0] == "hybrid8: scenario"
    assert any(line.startswith("  platform: optane900p-e3-1230v5 (Dell R230") for line in lines)
    assert "  set: {queue.io_poll: 1, queue.io_poll_delay: 0}" in lines
    job = next(line for line in lines if line.startswith("  job randread-4k-hybrid:"))
    assert "numjobs=8" in job and "hipri=1" in job
    pol = next(line for line in lines if line.startswith("  policies:"))
    assert "completion hybrid-poll" in pol and "IO scheduler none" in pol
    rc, out, _err = run_cli(["list", "poll_energy_small"], capsys)
    assert "  base: {scenario: default}" in out and "    numjobs: [1, 4]" in out
