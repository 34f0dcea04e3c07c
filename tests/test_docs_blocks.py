"""Every fenced code block of README.md and docs/*.md runs, or is validated, as a reader would use it
(tools/doc_blocks.py finds and classifies them): shell commands are run in a scratch directory per
page (exit 0, no traceback), python blocks executed there in page order, yaml/json blocks validated
by their pydantic model, fio job blocks parsed, usage synopses checked against the sub-command's
options.

What is not run as written is in one of the tables below, each entry with its reason, and a test
checks that every entry still names a block of the docs: a new block is run or fails the suite.

* :data:`NOT_RUN`: installs, the test suite itself, root-only tools, and the long studies (a sweep
  of hundreds of runs), each with where it is checked instead.
* :data:`SHORTENED`: commands of a long simulated run, run with :data:`SHORT` appended (the same
  scenario, job and options; only a shorter measured window, as any ``--set runtime=`` does;
  ``explain``'s own ``--runtime-ms`` for explain).
* :data:`AS_RUN`: commands that read this machine (``probe``) are run on the saved tree of a lab
  machine instead (tests/data/probe/xeon2s, as docs/validate-your-hardware.md's own example).
* :data:`FRAGMENTS`: python/yaml blocks that are part of a larger whole shown on the page.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import doc_blocks as db  # noqa: E402

_SUITE = "the test suite itself (tests/test_readme_ci.py checks the README's commands and CI)"
_INSTALL = "installs into a new venv (tests/test_readme_ci.py runs the README's install in a clean copy)"
_STABLE = "needs stable.csv of `stacksim sweep server_stable` (66 runs, not run here)"
_WALK = (
    "a trace of the reader's own machine, traced as it runs (the sample of the repository is polled IO of "
    "another host): tests/test_walkthrough.py runs these steps on the sample with its polled settings"
)
_DASK = "the same sweep on a Dask LocalCluster (tests/test_sweep.py runs the Dask executor)"

#: (page, command) -> why it is not run here
NOT_RUN = {
    ("README.md", "python3 -m venv .venv && .venv/bin/pip install -q -e . && .venv/bin/stacksim run"): _INSTALL,
    ("README.md", "python3 -m venv .venv && .venv/bin/pip install -q -e .[test] && .venv/bin/python -m pytest"): _SUITE,
    ("README.md", ". .venv/bin/activate"): "a shell's set-up, nothing to check",
    ("README.md", "stacksim sweep poll_energy_study -o study.csv"): "840 runs (the small version is run)",
    ("README.md", "stacksim validate --suite calibrated --max-error 5"): "tests/test_golden.py and test_calibration.py",
    ("README.md", "stacksim validate --suite cheops23"): "tests/test_docs_quotes.py runs it (docs/scaling.md's quote)",
    ("README.md", "stacksim validate --suite icpe24"): "tests/test_icpe24.py",
    ("README.md", "stacksim sweep server_stable -o stable.csv"): "66 runs; tests/test_server_sweep.py",
    ("README.md", "stacksim analyze efficiency stable.csv"): _STABLE,
    ("calibration.md", "stacksim calibrate --study poll-energy"): "a few minutes; tests/test_calibration.py",
    ("calibration.md", "stacksim calibrate --study poll-energy --runtime-ms 400 -o fit.json"): "as above",
    ("calibration.md", "stacksim calibrate --study poll-energy -o optane900p-refit.yaml"): "as above",
    ("calibration.md", "python -m pytest tests/test_calibration.py"): _SUITE,
    ("predictions.md", "stacksim sweep threads_scaling -o threads.csv -j 2"): "21 long runs; tests/test_docs_tables.py",
    ("predictions.md", "stacksim sweep queue_depth -o qd.csv"): "7 long runs; tests/test_docs_tables.py",
    ("predictions.md", "python tools/predictions_tables.py threads.csv qd.csv --commit HASH"): "rewrites the page",
    ("predictions.md", "python tools/predictions_figures.py threads.csv qd.csv"): "redraws the figures (matplotlib)",
    (
        "predictions.md",
        "stacksim report threads.csv -o threads.html --panels numjobs --policy-axis mode",
    ): "needs threads.csv",
    ("quickstart.md", "python3 -m venv .venv && .venv/bin/pip install -q -e ."): _INSTALL,
    ("quickstart.md", "python3 -m venv .venv && .venv/bin/pip install -q -e .[test]"): _INSTALL,
    ("quickstart.md", ".venv/bin/python -m pytest"): _SUITE,
    ("scaling.md", "stacksim validate --suite cheops23"): "tests/test_docs_quotes.py runs it (this page's quote)",
    ("scaling.md", "stacksim sweep cheops23_depth -o depth.csv"): "long sweeps that redraw the page's figures",
    ("scaling.md", "stacksim sweep cheops23_threads -o threads.csv"): "as above",
    ("scaling.md", "stacksim sweep tenant_mix -o tenants.csv"): "as above",
    (
        "scaling.md",
        "pip install matplotlib && python tools/scaling_figures.py depth.csv threads.csv "
        "--tenants tenants.csv --icpe24",
    ): "installs matplotlib and redraws the figures",
    (
        "scaling.md",
        "python tools/tenant_tails_figure.py",
    ): "re-runs the tails study and redraws its figure (matplotlib)",
    ("server.md", "stacksim sweep server_stable -o stable.csv -j 2"): "66 runs; tests/test_server_sweep.py",
    ("server.md", "stacksim sweep server_burst_ablation -o ablation.csv -j 2"): "256 runs of up to 1.5 s",
    ("server.md", "stacksim sweep server_stable -o stable.csv --local-cluster 2"): _DASK,
    (
        "server.md",
        "stacksim analyze efficiency stable.csv --metric energy_j_per_million_ios --lower-is-better",
    ): _STABLE,
    ("server.md", "stacksim analyze efficiency stable.csv --metric latency_us.p99 --lower-is-better"): _STABLE,
    ("server.md", "stacksim report stable.csv -o stable.html"): _STABLE,
    (
        "server.md",
        "stacksim analyze efficiency ablation.csv --panels time_scale --along policy.burst_detection --policy-axis "
        "policy.sleep,policy.wakeup --metric energy_j --lower-is-better --long",
    ): "needs ablation.csv of the 256-run ablation sweep",
    ("sweeps.md", "stacksim sweep poll_energy_small -o small.csv --local-cluster 2"): _DASK,
    ("sweeps.md", "stacksim sweep server_stable -o stable.csv"): "66 runs; tests/test_server_sweep.py",
    (
        "sweeps.md",
        "stacksim analyze efficiency stable.csv --metric energy_j_per_million_ios --lower-is-better",
    ): _STABLE,
    (
        "validate-your-hardware.md",
        "stacksim calibrate --trace run1.blkparse --platform lab.yaml -o lab-cal.yaml",
    ): _WALK,
    (
        "validate-your-hardware.md",
        "stacksim validate --trace run2.blkparse --platform lab-cal.yaml --html r.html",
    ): _WALK,
    (
        "validate-your-hardware.md",
        "stacksim validate --latencies j_lat.1.log --job j.fio --platform lab-cal.yaml",
    ): _WALK,
    (
        "validate-your-hardware.md",
        "sudo blktrace -d /dev/nvme0n1 -a queue -a issue -a complete -w 60 -o run",
    ): "root and a real NVMe device",
    (
        "validate-your-hardware.md",
        r"blkparse -i run -f %D %2c %8s %5T.%9t %5p %2a %3d %S + %n [%C]\n -o run.txt",
    ): "needs blktrace's output (the repository's blkparse sample stands in for run.txt)",
}

#: appended to the commands of :data:`SHORTENED`: a shorter measured window of the same run
SHORT = ["--set", "runtime=10ms", "--set", "ramp_time=2ms"]
#: the same for ``explain`` (its own option; its warm-up for hybrid polling stays 110 ms)
EXPLAIN_SHORT = ["--runtime-ms", "5"]
#: a storage-server run: its own duration keys (server-stable), or the scale of its timeline (server-burst)
SERVER_SHORT = ["--set", "workload.duration_s=0.01", "--set", "workload.warmup_s=0.002"]
BURST_SHORT = ["--set", "workload.time_scale=0.01"]
_HIPRI_JOB = "stacksim run examples/randread-4k-hipri.fio --platform optane900p-e3-1230v5 --set queue.io_poll=1"
_JOB = "examples/randread-4k-hipri.fio"
#: (page, command) -> what is appended (the doc's run is 0.4 s of simulated time or more, or a
#: sweep of 24 runs of 130 ms: ``stacksim sweep --set`` applies it to every point)
SHORTENED = {
    ("README.md", "stacksim run"): SHORT,
    ("README.md", "stacksim sweep poll_energy_small -o small.csv"): SHORT,
    ("sweeps.md", "stacksim sweep poll_energy_small -o small.csv"): SHORT,
    ("README.md", f"{_HIPRI_JOB} --set queue.io_poll_delay=0 --json out.json --records ios.csv"): SHORT,
    ("README.md", "stacksim run --scenario hybrid8 --set numjobs=16 --set bs=8k"): SHORT,
    ("README.md", f"stacksim explain {_JOB} --platform optane900p-e3-1230v5"): EXPLAIN_SHORT,
    (
        "completion.md",
        f"stacksim run {_JOB} --platform optane900p-e3-1230v5 --set numjobs=1 --set runtime=300ms "
        "--set ramp_time=110ms --set queue.io_poll=1 --set queue.io_poll_delay=0",
    ): SHORT,
    ("quickstart.md", f"{_HIPRI_JOB} --set queue.io_poll_delay=-1 --json out.json --records ios.csv"): SHORT,
    ("quickstart.md", "stacksim run --scenario hybrid8 --set runtime=50ms"): SHORT,
    ("quickstart.md", "stacksim run"): SHORT,
    ("quickstart.md", "stacksim run --platform mine.yaml"): SHORT,
    ("quickstart.md", "stacksim run classic4.yaml"): SHORT,
    (
        "server.md",
        "stacksim run --scenario server-stable --set server.policy=sandman --set workload.rate_iops=1280000",
    ): SERVER_SHORT,
    (
        "README.md",
        "stacksim run --scenario server-burst --set server.policy=sandman --set workload.time_scale=0.05",
    ): BURST_SHORT,
    (
        "io-schedulers.md",
        "stacksim run --platform optane900p-e3-1230v5 --set queue.scheduler=mq-deadline "
        f"--set queue.iosched.fifo_batch=8 {_JOB}",
    ): SHORT,
    (
        "io-schedulers.md",
        "stacksim run --plugin my_sched.py --platform optane900p-e3-1230v5 --set "
        f"queue.scheduler=sstf --set queue.iosched.fifo_expire=200 {_JOB}",
    ): SHORT,
    ("presets.md", "stacksim run --platform mine.yaml job.fio"): SHORT,
    ("validate-your-hardware.md", "stacksim run my-job.fio --platform mine.yaml"): SHORT,
    ("traces-and-calibration.md", "stacksim run job.fio --platform optane900p-e3-1230v5 --records ios.blkparse"): SHORT,
    ("traces-and-calibration.md", "stacksim run job.fio --platform optane900p-e3-1230v5 --records lat.log"): SHORT,
}

_LAB = ["--root", "tests/data/probe/xeon2s"]
#: (page, command) -> the words put after ``stacksim probe``: probe reads this machine, which is
#: not the reader's; the lab tree of docs/validate-your-hardware.md stands in for it
AS_RUN = {
    ("README.md", "stacksim probe -o mine.yaml"): _LAB,
    ("validate-your-hardware.md", "stacksim probe -o lab.yaml"): _LAB,
    ("validate-your-hardware.md", "stacksim probe -o mine.yaml"): _LAB,
    ("validate-your-hardware.md", "stacksim probe --save lab.tar.gz -o lab.yaml"): _LAB,
    ("validate-your-hardware.md", "stacksim probe --ssd optane-p4800x -o vm.yaml"): _LAB,
}

#: (page, first line) -> why the block does not run alone
FRAGMENTS = {
    ("completion.md", "req.waiter_sleeping = True"): "the body of interrupt's wait(), shown in min_hybrid.py's run",
    ("completion.md", "runner.poll(req.qp, req, then)"): "the body of classic-poll's wait(), as above",
}
#: (page, first line) -> the scenario keys a yaml fragment is part of (it is validated and resolved with them)
YAML_WITH = {
    ("io-schedulers.md", "plugins: [my_sched.py]"): {
        "name": "sstf-demo",
        "platform": "optane900p-e3-1230v5",
        "job_file": "examples/randread-4k-hipri.fio",
    },
}

PAGES = sorted({b.page for b in db.code_blocks()}, key=lambda p: db.DOCS.index(p))


def _all_commands() -> list[db.Command]:
    return [c for b in db.code_blocks() if b.kind == "shell" for c in db.commands(b)]


def test_every_block_is_of_a_known_kind():
    unknown = [f"{b.where()}: {b.kind}" for b in db.code_blocks() if b.kind.startswith("unknown")]
    assert unknown == []


def test_the_tables_name_only_blocks_of_the_docs():
    """An entry whose block was edited or removed fails here (and the block is then run)."""
    commands = {c.key for c in _all_commands()}
    for table in (NOT_RUN, SHORTENED, AS_RUN):
        assert set(table) - commands == set()
    firsts = {b.key for b in db.code_blocks()}
    assert set(FRAGMENTS) - firsts == set() and set(YAML_WITH) - firsts == set()
    saved = {
        (p, head) for (p, head) in db.FILES for b in db.code_blocks() if b.key[0] == p and b.first.startswith(head)
    }
    assert saved == set(db.FILES)
    assert not set(NOT_RUN) & (set(SHORTENED) | set(AS_RUN))


def test_every_synopsis_names_options_its_command_takes():
    synopses = [c for c in _all_commands() if c.synopsis]
    assert len(synopses) >= 8
    bad = {c.text: db.unknown_options(c) for c in synopses if db.unknown_options(c)}
    assert bad == {}


def test_a_synopsis_with_a_misspelt_option_is_caught():
    block = db.CodeBlock(ROOT / "docs" / "x.md", 1, "sh", "stacksim validate --trace FILE [--max-eror PCT]\n")
    (cmd,) = db.commands(block)
    assert cmd.synopsis and db.unknown_options(cmd) == ["--max-eror"]


def test_a_failing_command_is_reported(tmp_path):
    """The runner hands back the exit status and message of a refused command (not a silent pass)."""
    block = db.CodeBlock(ROOT / "docs" / "x.md", 1, "sh", "stacksim run --set queue.no_such_key=1\n")
    with db.scratch(tmp_path):
        rc, out = db.run_command(db.commands(block)[0])
    assert rc == 2 and "no_such_key" in out


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_the_pages_blocks_run(page, tmp_path):
    """Each block of the page, in order, in one scratch directory."""
    t0 = time.perf_counter()
    with db.scratch(tmp_path, page):
        for block in (b for b in db.code_blocks() if b.page == page):
            _check(block)
    print(f"{page.name}: {time.perf_counter() - t0:.1f} s")


def _check(block: db.CodeBlock) -> None:
    if block.saved_as:
        Path(block.saved_as).write_text(block.text, encoding="utf-8")
        if block.saved_as.endswith(".py"):  # a plug-in: it imports and registers (a command may then use it)
            from simcore.plugins import load_plugin

            load_plugin(block.saved_as)
    if block.key in FRAGMENTS or block.kind in ("quote", "text"):
        return
    if block.kind == "shell":
        for cmd in db.commands(block):
            _run(cmd)
    elif block.kind == "python" and not block.saved_as:
        db.run_python(block)
    elif block.kind in ("yaml", "json"):
        _validate(block)
    elif block.kind == "fio":
        assert db.parse_fio(block).jobs, block.where()


def _run(cmd: db.Command) -> None:
    if cmd.key in NOT_RUN or cmd.synopsis:
        return
    if cmd.key in AS_RUN:
        cmd.argv = cmd.argv[:2] + AS_RUN[cmd.key] + cmd.argv[2:]
    if cmd.key in SHORTENED:
        cmd.argv = cmd.argv + SHORTENED[cmd.key]
    t0 = time.perf_counter()
    rc, out = db.run_command(cmd)
    print(f"  {time.perf_counter() - t0:5.1f} s  {' '.join(cmd.argv)}")
    assert rc == 0 and "Traceback" not in out, f"{cmd.block.where()}: {' '.join(cmd.argv)} -> exit {rc}\n{out[-3000:]}"


def _validate(block: db.CodeBlock) -> None:
    import yaml

    from scenarios.config.host import resolve

    base = YAML_WITH.get(block.key)
    if base is None:
        db.validate_config(block)
        return
    path = Path(f"fragment-{block.line}.yaml")
    path.write_text(yaml.safe_dump({**base, **yaml.safe_load(block.text)}), encoding="utf-8")
    merged = db.CodeBlock(block.page, block.line, "yaml", path.read_text())
    assert db.validate_config(merged) == "ScenarioFile"
    resolve(scenario=str(path))  # the plug-in loads, its scheduler and tunable are accepted
