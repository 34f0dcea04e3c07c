"""A run's ``--json`` records what made it (command line, input files with their hash and text, the
resolved configuration, seed, plug-ins, code version and source hash), and ``stacksim run --rerun
OUT.json`` runs it again bit for bit."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from policies.completion.base import COMPLETION_POLICIES
from simcore.fingerprint import packages_sha
from stacksim import cli

JOB = """[global]
ioengine=pvsync2
direct=1
bs=4k
rw=randread
time_based=1
runtime=4ms
ramp_time=1ms
[r]
numjobs=2
"""
PLUGIN = """
from policies.completion.base import COMPLETION_POLICIES
from policies.completion.interrupt import InterruptCompletion

@COMPLETION_POLICIES.register({name!r})
class Rerun(InterruptCompletion):
    pass
"""
#: what differs between two runs of the same configuration: the wall clock
WALL = ("timestamp", "timestamp_ms", "time")
SIM_WALL = ("wall_s", "real_time_factor", "ios_per_wall_s")


def run(args, capsys):
    rc = cli.main(args)
    out = capsys.readouterr()
    return rc, out.out, out.err


def same_run(a: dict, b: dict) -> None:
    """Two results of one configuration: identical but for the wall clock and the provenance."""
    assert set(a) == set(b)
    for k in a:
        if k in WALL or k == "provenance":
            continue
        if k == "sim":
            assert {x: v for x, v in a[k].items() if x not in SIM_WALL} == {
                x: v for x, v in b[k].items() if x not in SIM_WALL
            }
        else:
            assert a[k] == b[k], k


def test_the_json_records_what_made_the_run_and_rerun_reproduces_it(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    Path("job.fio").write_text(JOB)
    args = ["run", "job.fio", "--platform", "optane900p-e3-1230v5", "--set", "bs=8k", "--seed", "5"]
    rc, _, err = run([*args, "--json", "a.json", "--quiet"], capsys)
    assert rc == 0, err
    a = json.loads(Path("a.json").read_text())
    prov = a["provenance"]
    assert prov["argv"] == ["stacksim", *args, "--json", "a.json", "--quiet"]
    assert prov["inputs"]["job_file"]["text"] == JOB and len(prov["inputs"]["job_file"]["sha256"]) == 64
    assert prov["inputs"]["sets"] == ["bs=8k"] and prov["inputs"]["seed"] == 5 and prov["seed"] == 5
    assert prov["config"]["jobs"][0]["bs_read_bytes"] == 8192  # the resolved value, after --set
    assert prov["source_sha256"] == packages_sha() and prov["version"] and prov["code"]
    # the rerun simulates the recorded configuration, not the job file as it is now
    Path("job.fio").write_text(JOB.replace("bs=4k", "bs=64k"))
    rc, _, err = run(["run", "--rerun", "a.json", "--json", "b.json", "--quiet"], capsys)
    assert rc == 0, err
    b = json.loads(Path("b.json").read_text())
    same_run(a, b)
    assert b["provenance"]["inputs"]["rerun_of"]["path"] == "a.json"
    assert b["provenance"]["config"] == prov["config"]
    # and a rerun of the rerun too
    assert run(["run", "--rerun", "b.json", "--json", "c.json", "--quiet"], capsys)[0] == 0
    same_run(a, json.loads(Path("c.json").read_text()))


def test_a_server_run_reruns_too(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    sets = ["--set", "workload.time_scale=0.002", "--set", "server.policy=sandman"]
    rc, _, err = run(["run", "--scenario", "server-burst", *sets, "--json", "a.json", "--quiet"], capsys)
    assert rc == 0, err
    assert run(["run", "--rerun", "a.json", "--json", "b.json", "--quiet"], capsys)[0] == 0
    a, b = (json.loads(Path(p).read_text()) for p in ("a.json", "b.json"))
    assert a["provenance"]["kind"] == "server" and a["provenance"]["inputs"]["scenario"] == "server-burst"
    same_run(a, b)


@pytest.fixture
def plugin_name():
    name = "rerun-plugin"
    yield name
    COMPLETION_POLICIES._items.pop(name, None)
    for mod in [m for m in sys.modules if "rerun_plugin" in m]:
        del sys.modules[mod]


def test_a_plugin_that_changed_since_the_run_is_refused(tmp_path, monkeypatch, capsys, plugin_name):
    monkeypatch.chdir(tmp_path)
    Path("rerun_plugin.py").write_text(PLUGIN.format(name=plugin_name))
    sets = ["--set", f"queue.completion={plugin_name}", "--set", "runtime=2ms", "--set", "ramp_time=0"]
    rc, out, err = run(["run", "--plugin", "rerun_plugin.py", *sets, "--json", "a.json"], capsys)
    assert rc == 0 and f"policies: {plugin_name}" in out, err
    assert json.loads(Path("a.json").read_text())["provenance"]["cli_plugins"][0]["path"] == "rerun_plugin.py"
    Path("rerun_plugin.py").write_text(PLUGIN.format(name=plugin_name) + "\n# edited\n")
    rc, _, err = run(["run", "--rerun", "a.json"], capsys)
    assert rc == 2 and "plug-in rerun_plugin.py changed since the run" in err and "Traceback" not in err


def test_rerun_refuses_what_it_cannot_rerun_as_recorded(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert run(["run", "--set", "runtime=2ms", "--json", "a.json", "--quiet"], capsys)[0] == 0
    rc, _, err = run(["run", "--rerun", "a.json", "--set", "bs=8k", "--seed", "2"], capsys)
    assert rc == 2 and "drop --set, --seed" in err
    doc = json.loads(Path("a.json").read_text())
    Path("old.json").write_text(json.dumps({k: v for k, v in doc.items() if k != "provenance"}))
    rc, _, err = run(["run", "--rerun", "old.json"], capsys)
    assert rc == 2 and "no 'provenance'" in err
    doc["provenance"]["config"]["jobs"][0]["iodepth"] = -3
    Path("bad.json").write_text(json.dumps(doc))
    rc, _, err = run(["run", "--rerun", "bad.json"], capsys)
    assert rc == 2 and "iodepth" in err and "Traceback" not in err
    rc, _, err = run(["run", "--rerun", "a.json", "--json", "a.json"], capsys)
    assert rc == 2 and "same file as the input" in err


def test_other_code_is_said_on_stderr(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert run(["run", "--set", "runtime=2ms", "--json", "a.json", "--quiet"], capsys)[0] == 0
    doc = json.loads(Path("a.json").read_text())
    doc["provenance"]["source_sha256"] = "0" * 64
    Path("old.json").write_text(json.dumps(doc))
    rc, _, err = run(["run", "--rerun", "old.json", "--json", "b.json", "--quiet"], capsys)
    assert rc == 0 and "written by other code" in err and "the rerun may differ" in err
    same_run(json.loads(Path("a.json").read_text()), json.loads(Path("b.json").read_text()))
