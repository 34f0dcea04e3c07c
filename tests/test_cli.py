"""The command line: default run, JSON shape, records, and bad input (exit 2, one message)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from stacksim.cli import main

ROOT = Path(__file__).resolve().parents[1]
FIO = ROOT / "examples" / "randread-4k-hipri.fio"
FAST = ["--set", "runtime=20ms", "--set", "ramp_time=5ms"]


def run_cli(args, capsys):
    rc = main(args)
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_run_fio_file_writes_fio_shaped_json_and_records(tmp_path, capsys):
    out = tmp_path / "r.json"
    rec = tmp_path / "r.csv"
    rc, stdout, err = run_cli(
        [
            "run",
            str(FIO),
            "--platform",
            "optane900p-e3-1230v5",
            "--set",
            "queue.io_poll=1",
            "--json",
            str(out),
            "--records",
            str(rec),
            "--seed",
            "5",
            *FAST,
        ],
        capsys,
    )
    assert rc == 0, err
    assert "IOPS" in stdout
    res = json.loads(out.read_text())
    job = res["jobs"][0]
    for key in ("io_bytes", "bw", "iops", "lat_ns", "clat_ns"):
        assert key in job["read"]
    assert {"mean", "stddev", "percentile"} <= set(job["read"]["clat_ns"])
    assert {"usr_cpu", "sys_cpu", "ctx"} <= set(job)
    s = res["summary"]
    for key in (
        "iops",
        "bandwidth_mb_s",
        "latency_us",
        "cpu_utilization",
        "context_switches_per_io",
        "interrupts_per_io",
        "power_w",
        "energy_j",
        "bytes_per_joule",
        "cstate_residency",
        "layers",
    ):
        assert key in s
    assert set(s["layers"]) >= {"syscall", "fs", "block", "driver", "irq", "scheduler", "timer", "polling", "idle"}
    assert {"simulated_s", "events", "wall_s", "real_time_factor"} <= set(res["sim"])
    lines = rec.read_text().splitlines()
    assert lines[0].startswith("io,job,thread,cpu,op,bytes,t_submit_ns")
    assert len(lines) - 1 == s["ios"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["run", "missing.fio", "--platform", "optane900p-e3-1230v5"], "job file not found: missing.fio"),
        (["run", str(FIO), "--platform", "nope"], "unknown platform 'nope'"),
        (["run", str(FIO)], "--platform NAME is required"),
        (["run", "--set", "queue.io_pol=1"], "io_pol: unknown key"),
        (["run", "--set", "queue.io_poll_delay=-5"], "io_poll_delay"),
        (["run", "--set", "queue.completion=warp"], "unknown completion policy 'warp'"),
        (["run", "--set", "bs=-4k"], "bs"),
        (["run", "--set", "bs=lots"], "bs"),
        (["run", "--set", "frobnicate=1"], "frobnicate"),
        (["run", "--set", "cpu.cores=4"], "cpu.cores: unknown key"),
        (["run", "--scenario", "nosuch"], "unknown scenario 'nosuch'"),
        (["run", "--set", "nodots"], "expected KEY=VALUE"),
    ],
)
def test_bad_input_one_message_exit_2_no_output(args, message, tmp_path, capsys):
    out = tmp_path / "out.json"
    rc, stdout, err = run_cli(args + ["--json", str(out)], capsys)
    assert rc == 2
    assert message in err
    assert "Traceback" not in err
    assert not out.exists()


def test_unknown_fio_option_in_job_file_is_an_error(tmp_path, capsys):
    bad = tmp_path / "bad.fio"
    bad.write_text("[job]\nrw=randread\nbs=4k\ndirect=1\nruntime=1\nfoo_bar=3\n")
    rc, _, err = run_cli(["run", str(bad), "--platform", "optane900p-e3-1230v5"], capsys)
    assert rc == 2 and "foo_bar" in err and "line 6" in err


def test_console_script_default_scenario_runs():
    # the README's first command: `stacksim run` with no arguments
    proc = subprocess.run(
        [sys.executable, "-m", "stacksim", "run", "--set", "runtime=20ms"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "optane900p-e3-1230v5" in proc.stdout


def test_list_and_schema(capsys):
    rc, out, _ = run_cli(["list"], capsys)
    assert rc == 0 and "default" in out and "classic-poll" in out and "optane900p-e3-1230v5" in out
    for section, item in (
        ("server scenarios", "server-burst"),
        ("sweeps", "cpufreq_governors"),
        ("interrupt generation", "cinterrupts"),
        ("cpufreq governors", "schedutil"),
    ):
        assert section in out and item in out.split(section, 1)[1]
    rc, out, _ = run_cli(["schema", "queue"], capsys)
    assert rc == 0 and "io_poll_delay" in json.loads(out)["properties"]


def test_list_name_shows_the_whole_description(capsys):
    """`stacksim list` shortens descriptions to the terminal; `stacksim list NAME` shows one whole."""
    from stacksim.cli import _described

    desc = _described()["platforms (--platform NAME)"]["optane900p-e3-1230v5"]
    assert main(["list", "optane900p-e3-1230v5"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("optane900p-e3-1230v5: platform") and " ".join(out.split()[2:]) == " ".join(desc.split())
    assert main(["list", "server-burst"]) == 0 and "server scenario" in capsys.readouterr().out
    assert main(["list", "no-such-thing"]) == 2
    assert "nothing built in is named 'no-such-thing'" in capsys.readouterr().err


def test_explain_without_a_job_explains_the_default_scenario(capsys):
    """Like `stacksim run`, `stacksim explain` with no job takes the built-in default scenario."""
    assert main(["explain", "--runtime-ms", "3", "--policies", "interrupt"]) == 0
    assert "interrupt" in capsys.readouterr().out


def test_version_imports_no_model():
    """``stacksim --version`` starts in a fraction of a second: it imports none of the simulator's
    models, policies or scenarios, nor pydantic, numpy or simpy (each command imports what it does)."""
    probe = (
        "import json, sys\n"
        "from stacksim.cli import main\n"
        "try:\n    main(['--version'])\nexcept SystemExit as e:\n    assert e.code in (0, None), e.code\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    first, modules = out.stdout.splitlines()[0], json.loads(out.stdout.splitlines()[-1])
    assert first.startswith("stacksim ") and ("compiled hot path" in first or "pure Python" in first)
    heavy = ("models", "policies", "scenarios", "pydantic", "numpy", "simpy", "scipy", "plotly", "yaml")
    assert [m for m in modules if m.split(".")[0] in heavy] == []
    assert "simcore.compiled" in modules  # (it says which code runs)
