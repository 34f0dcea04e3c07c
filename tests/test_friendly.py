"""Where a user would stumble (issue 13): ``explain`` takes scenarios, ``replay`` defaults to
``run``'s platform, ``analyze``/``report`` choose a server sweep's axes, ``list`` shortens
descriptions at word boundaries, plug-in paths resolve as the docs say, and the docs name no file
or machine a user does not have."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from policies.completion.base import COMPLETION_POLICIES
from scenarios.config.host import default_platform_name, resolve
from scenarios.config.registry import builtin_scenarios
from scenarios.studies.sweeps.efficiency import efficiency_map
from scenarios.studies.sweeps.groups import choose_axes
from scenarios.studies.sweeps.store import read_results
from stacksim.cli import list_line, main
from tests.conftest import TINY_SERVER_SWEEP

ROOT = Path(__file__).resolve().parents[1]
MSR = ROOT / "scenarios" / "data" / "traces" / "msr_sample.csv"


def cli(args, capsys):
    rc = main([str(a) for a in args])
    out = capsys.readouterr()
    return rc, out.out, out.err


# -- explain takes scenarios ----------------------------------------------------------------------
SCENARIO = """
name: polled-one
description: one polled reader
platform: optane-p4801x-e3-1230
set: {queue.io_poll: 1, queue.io_poll_delay: -1}
jobs:
  - {name: r, rw: randread, bs: 4k, ioengine: pvsync2, hipri: 1, direct: 1, numjobs: 1, runtime: 1s, time_based: 1}
"""


def test_explain_takes_a_yaml_scenario_with_its_platform_and_settings(tmp_path, capsys):
    scen = tmp_path / "polled.yaml"
    scen.write_text(SCENARIO)
    rc, out, err = cli(["explain", scen, "--runtime-ms", "5", "--policies", "classic"], capsys)
    assert rc == 0, err
    # the scenario's platform (no --platform) and its set: (polled queue -> the job's own policy polls)
    assert f"One typical IO of {scen} on optane-p4801x-e3-1230" in out
    assert "classic-poll (the job's own policy)" in out
    # --platform overrides the scenario's, as for run
    rc, out, err = cli(
        ["explain", scen, "--platform", "optane900p-e3-1230v5", "--runtime-ms", "5", "--policies", "classic"], capsys
    )
    assert rc == 0, err
    assert "on optane900p-e3-1230v5" in out


def test_explain_takes_a_builtin_scenario_name_and_refuses_server_ones(capsys):
    rc, out, err = cli(["explain", "default", "--runtime-ms", "5", "--policies", "interrupt"], capsys)
    assert rc == 0, err
    assert f"on {default_platform_name()}" in out and "interrupt (the job's own policy)" in out
    rc, _, err = cli(["explain", "server-stable"], capsys)
    assert rc == 2 and "storage-server scenario" in err
    rc, _, err = cli(["explain", "missing.yaml"], capsys)
    assert rc == 2 and "unknown scenario 'missing.yaml'" in err and "Traceback" not in err


# -- replay's default platform is run's -----------------------------------------------------------
def test_replay_runs_on_runs_default_platform(tmp_path, capsys):
    assert resolve().platform.name == default_platform_name()  # what `stacksim run` runs on
    out = tmp_path / "r.json"
    rc, stdout, err = cli(["replay", MSR, "--quiet", "--json", out], capsys)
    assert rc == 0, err
    assert json.loads(out.read_text())["platform"] == default_platform_name()


def test_replay_and_run_follow_the_default_scenario_together(tmp_path, monkeypatch, capsys):
    """One function gives both defaults: change the default scenario's platform and both move."""
    import scenarios.config.registry as registry

    builtin = tmp_path / "builtin"
    builtin.mkdir()
    text = builtin_scenarios()["default"].read_text()
    other = "optane-p4801x-e3-1230"
    (builtin / "default.yaml").write_text(re.sub(r"(?m)^platform: .*$", f"platform: {other}", text))
    monkeypatch.setattr(registry, "BUILTIN_DIR", builtin)
    assert default_platform_name() == other
    assert resolve().platform.name == other
    out = tmp_path / "r.json"
    rc, _, err = cli(["replay", MSR, "--quiet", "--json", out], capsys)
    assert rc == 0, err
    assert json.loads(out.read_text())["platform"] == other


# -- analyze / report choose a server sweep's axes ------------------------------------------------
TINY_SERVER = TINY_SERVER_SWEEP + "replicates: 2\n"


@pytest.fixture(scope="module")
def server_results(tmp_path_factory) -> Path:
    from scenarios.studies.sweep import load_sweep, plan
    from scenarios.studies.sweeps.runner import execute

    d = tmp_path_factory.mktemp("friendly_server")
    (d / "tiny.yaml").write_text(TINY_SERVER)
    sweep, where = load_sweep(d / "tiny.yaml")
    out = d / "tiny.csv"
    outcome = execute(plan(sweep, where=where), out, jobs=1, progress=False)
    assert outcome.computed == 8
    return out


def test_analyze_chooses_a_server_sweeps_axes(server_results, tmp_path, capsys):
    js = tmp_path / "tiles.json"
    rc, out, err = cli(
        ["analyze", "efficiency", server_results, "--metric", "energy_j", "--lower-is-better", "--json", js], capsys
    )
    assert rc == 0, err
    assert "--panels sweep --along workload.rate_iops --policy-axis policy" in err
    assert out.startswith("workload.rate_iops \\ sweep")
    tiles = json.loads(js.read_text())
    # the same map as the explicit, documented server analysis
    rows = read_results(server_results)
    explicit = efficiency_map(
        rows, x="sweep", y="workload.rate_iops", policy="server.policy", metric="energy_j", lower_is_better=True
    )
    assert [(t["x"], t["y"], t["best"], t["second"]) for t in tiles] == [
        (t["x"], t["y"], t["best"], t["second"]) for t in explicit
    ]
    assert [t["y"] for t in tiles] == [40000, 320000]
    assert {t["best"] for t in tiles} | {t["second"] for t in tiles} == {"sandman", "spdk-static"}


def test_report_chooses_the_same_axes_and_one_given_axis_is_kept(server_results, tmp_path, capsys):
    out = tmp_path / "r.html"
    rc, stdout, err = cli(["report", server_results, "-o", out], capsys)
    assert rc == 0, err
    assert out.is_file()
    assert "--panels sweep --along workload.rate_iops" in err
    rc, stdout, err = cli(["analyze", "efficiency", server_results, "--x", "workload.rate_iops"], capsys)
    assert rc == 0, err
    assert stdout.startswith("sweep \\ workload.rate_iops")


def _rows(axes: dict[str, list], completion_of) -> list[dict]:
    import itertools

    rows = []
    for combo in itertools.product(*axes.values()):
        a = dict(zip(axes, combo))
        rows.append(
            {
                "sweep": "s",
                "point": "|".join(f"{k}={v}" for k, v in a.items()),
                **a,
                "replicate": 0,
                "completion": completion_of(a),
                "config_sha": "x",
                "bytes_per_joule": 1.0,
            }
        )
    return rows


def test_choose_axes_rules():
    # a host size x depth sweep: bs x numjobs, whatever the axis order
    host = _rows({"mode": ["i", "c"], "numjobs": [1, 4], "bs": ["4k", "64k"]}, lambda a: a["mode"])
    assert choose_axes(host) == ("bs", "numjobs", ("completion",))
    # a block-size sweep at one numjobs: one panel (numjobs=1) with the sizes along it, not one
    # panel per size with one point each; with another axis varied, the sizes' panels run along it
    sizes = _rows({"mode": ["i", "c"], "numjobs": [1], "bs": ["4k", "64k", "1m"]}, lambda a: a["mode"])
    assert choose_axes(sizes) == ("numjobs", "bs", ("completion",))
    deep = _rows({"mode": ["i", "c"], "numjobs": [1], "bs": ["4k", "64k"], "iodepth": [1, 8]}, lambda a: a["mode"])
    assert choose_axes(deep) == ("bs", "iodepth", ("completion",))
    assert choose_axes(sizes, x="bs") == ("bs", "numjobs", ("completion",))  # as asked
    # two free axes after dropping the one that only names the policy (the 'mode' bundle)
    other = _rows({"mode": ["i", "c"], "iodepth": [1, 8], "rw": ["randread", "randwrite"]}, lambda a: a["mode"])
    assert choose_axes(other) == ("iodepth", "rw", ("completion",))
    # an explicit policy axis is not a tile axis either
    assert choose_axes(other, policy=["rw"])[:2] == ("mode", "iodepth")
    # nothing left to tile: the error says what to give
    from simcore.errors import ConfigError

    with pytest.raises(ConfigError, match="--x and --y"):
        choose_axes(
            [{k: v for k, v in r.items() if k != "sweep"} for r in _rows({"mode": ["i", "c"]}, lambda a: a["mode"])]
        )


# -- list shortens at word boundaries -------------------------------------------------------------
@pytest.mark.parametrize("columns", [60, 90, 200])
def test_list_never_cuts_a_word(columns, monkeypatch, capsys):
    from models.platforms import PLATFORMS
    from scenarios.config.server import server_scenarios
    from simcore.config import load_data_file

    monkeypatch.setenv("COLUMNS", str(columns))
    rc, out, _ = cli(["list"], capsys)
    assert rc == 0
    full = {
        name: " ".join(str((load_data_file(p) or {}).get("description", "")).split())
        for name, p in builtin_scenarios("host").items()
    }
    full.update({name: " ".join(d.split()) for name, d in server_scenarios().items()})
    full.update({name: " ".join(fn().description.split()) for name, fn in PLATFORMS.items()})
    seen = 0
    for line in out.splitlines():
        m = re.match(r"  (\S+)\s+(.*)$", line)
        if not m or m.group(1) not in full:
            continue
        seen += 1
        assert len(line) <= columns
        shown, desc = m.group(2), full[m.group(1)]
        if shown.endswith(" ..."):
            shown = shown[:-4]
            assert desc.startswith(shown) and desc[len(shown)] == " "  # cut between words
        else:
            assert shown == desc
    assert seen >= len(full)


def test_list_line_keeps_short_descriptions_whole():
    assert list_line("x", "short words", columns=80).endswith(" short words")
    line = list_line("x", "a " + "b" * 200, columns=80)
    assert line.rstrip().endswith("...") and "b" * 10 not in line


# -- plug-ins: where their paths are resolved from ------------------------------------------------
PLUGIN = """
from policies.completion.base import COMPLETION_POLICIES
from policies.completion.interrupt import InterruptCompletion

@COMPLETION_POLICIES.register({name!r})
class Friendly(InterruptCompletion):
    pass
"""
SCEN_WITH_PLUGIN = """
name: with-plugin
platform: optane900p-e3-1230v5
plugins: [{plugin}]
set: {{queue.completion: {name}}}
jobs:
  - {{name: r, rw: randread, bs: 4k, ioengine: pvsync2, direct: 1, runtime: 2ms, ramp_time: 0, time_based: 1}}
"""


@pytest.fixture
def registered():
    names: list[str] = []
    yield names
    for n in names:
        COMPLETION_POLICIES._items.pop(n, None)
    for mod in [m for m in sys.modules if m.startswith("stacksim_plugin_friendly") or m == "friendly_pkg_plugin"]:
        del sys.modules[mod]


def test_scenario_plugin_paths_are_relative_to_the_scenario_file(tmp_path, monkeypatch, capsys, registered):
    sub = tmp_path / "sub"
    sub.mkdir()
    (sub / "friendly_a.py").write_text(PLUGIN.format(name="friendly-a"))
    (sub / "scen.yaml").write_text(SCEN_WITH_PLUGIN.format(plugin="friendly_a.py", name="friendly-a"))
    registered.append("friendly-a")
    monkeypatch.chdir(tmp_path)  # the plug-in is not in the current directory
    rc, out, err = cli(["run", "sub/scen.yaml"], capsys)
    assert rc == 0, err
    assert "policies: friendly-a" in out


def test_cli_plugin_paths_are_relative_to_the_current_directory(tmp_path, monkeypatch, capsys, registered):
    (tmp_path / "friendly_b.py").write_text(PLUGIN.format(name="friendly-b"))
    registered.append("friendly-b")
    args = [
        "--plugin",
        "friendly_b.py",
        "--set",
        "queue.completion=friendly-b",
        "--set",
        "runtime=2ms",
        "--set",
        "ramp_time=0",
    ]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    rc, _, err = cli(["run", *args], capsys)
    assert rc == 2 and "plug-in file not found: friendly_b.py" in err
    monkeypatch.chdir(tmp_path)
    rc, out, err = cli(["run", *args], capsys)
    assert rc == 0, err
    assert "policies: friendly-b" in out
    # explain and replay take --plugin too
    rc, out, err = cli(
        [
            "explain",
            "default",
            "--plugin",
            "friendly_b.py",
            "--set",
            "queue.completion=friendly-b",
            "--runtime-ms",
            "2",
            "--policies",
            "friendly-b",
        ],
        capsys,
    )
    assert rc == 0, err
    assert "friendly-b (the job's own policy)" in out
    rc, out, err = cli(["replay", MSR, "--plugin", "friendly_b.py", "--set", "queue.completion=friendly-b"], capsys)
    assert rc == 0, err
    assert "policies: friendly-b" in out


def test_module_plugins_come_from_the_import_path(tmp_path, monkeypatch, capsys, registered):
    (tmp_path / "friendly_pkg_plugin.py").write_text(PLUGIN.format(name="friendly-m"))
    registered.append("friendly-m")
    monkeypatch.chdir(tmp_path)
    base = ["run", "--plugin", "friendly_pkg_plugin", "--set", "queue.completion=friendly-m", "--set", "runtime=2ms"]
    rc, _, err = cli(base, capsys)  # the current directory is not searched (unless on sys.path)
    if "" not in sys.path and str(tmp_path) not in sys.path and "." not in sys.path:
        assert rc == 2 and "not importable" in err and "--plugin friendly_pkg_plugin.py" in err
    monkeypatch.syspath_prepend(str(tmp_path))
    rc, out, err = cli(base, capsys)
    assert rc == 0, err
    assert "policies: friendly-m" in out


def test_plugins_with_the_same_file_name_do_not_shadow_each_other(tmp_path, registered):
    from simcore.plugins import load_plugin

    for d, name in (("one", "friendly-1"), ("two", "friendly-2")):
        (tmp_path / d).mkdir()
        (tmp_path / d / "friendly_same.py").write_text(PLUGIN.format(name=name))
        registered.append(name)
        load_plugin(str(tmp_path / d / "friendly_same.py"))
    load_plugin(str(tmp_path / "one" / "friendly_same.py"))  # the same file again: imported once
    assert "friendly-1" in COMPLETION_POLICIES and "friendly-2" in COMPLETION_POLICIES


# -- docs name nothing a user does not have -------------------------------------------------------
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_docs_name_no_outside_paths_or_this_machine(doc):
    text = doc.read_text()
    bad = [
        ".." + "/shared",
        "shared" + "/reference",
        "STACKSIM" + "_REFERENCE",
        "/work/",
        "/tmp/",
        "mechanisms.md",
        "this machine",
        "on 2 cores",
        "on the 2 cores",
        "development machine",
    ]
    for b in bad:
        assert b not in text, f"{doc.name} mentions {b!r}"


# -- the README quick start -----------------------------------------------------------------------
def _quick_start() -> list[list[str]]:
    import shlex

    text = (ROOT / "README.md").read_text()
    block = re.search(r"## Quick start\n.*?```sh\n(.*?)```", text, re.S).group(1)
    return [shlex.split(line, comments=True) for line in block.replace("\\\n", " ").splitlines() if line.strip()]


def test_readme_first_block_is_the_two_setup_commands():
    text = (ROOT / "README.md").read_text()
    first = re.search(r"```sh\n(.*?)```", text, re.S).group(1).strip().splitlines()
    assert len(first) == 2 and all(line.startswith("python3 -m venv .venv") for line in first)
    # the quick start works after it: the venv is activated first
    assert _quick_start()[0] == [".", ".venv/bin/activate"]


def test_readme_quick_start_commands_parse_and_name_existing_things(tmp_path, monkeypatch, capsys):
    """Every quick-start command is a valid `stacksim` command line whose files exist in the
    repository and whose sweeps plan (cheap: --dry-run); `list` and `schema` run."""
    from stacksim.cli import build_parser

    cmds = _quick_start()[1:]
    assert cmds and all(c[0] == "stacksim" for c in cmds)
    written: set[str] = set()
    for c in cmds:
        if c[1:] == ["--version"]:  # prints and exits 0 (which code runs: simcore.compiled)
            with pytest.raises(SystemExit) as done:
                build_parser().parse_args(c[1:])
            assert done.value.code == 0 and "stacksim" in capsys.readouterr().out
            continue
        args = build_parser().parse_args(c[1:])  # SystemExit on an unknown option
        for a in c[2:]:
            if "/" in a and not a.startswith("-") and "=" not in a:
                assert (ROOT / a).is_file(), f"{' '.join(c)}: {a} is not in the repository"
        if args.cmd in ("analyze", "report"):
            assert args.results in written, f"{' '.join(c)}: no earlier command writes {args.results}"
        if args.cmd == "sweep":
            written.add(args.output)
            monkeypatch.chdir(tmp_path)
            assert main([*c[1:], "--dry-run"]) == 0
            monkeypatch.chdir(ROOT)
        if args.cmd in ("list", "schema"):
            assert main(c[1:]) == 0
    capsys.readouterr()
