"""A completion policy polls with a time budget (``runner.poll_for``) and takes parameters
(``Params``, set with ``queue.completion_params.NAME``): the example plug-in of docs/completion.md
(examples/poll_budget.py) run with the doc's command does what the doc says; the budget is whole
poll-loop iterations at the core's frequency; bad parameters are one message naming the field."""

from __future__ import annotations

import csv
import json
import math
import re
import shlex
import sys
from pathlib import Path

import pytest

from policies.completion.base import COMPLETION_POLICIES
from scenarios.config.host import resolve
from scenarios.run.assembly import build_run
from simcore.errors import ConfigError
from simcore.plugins import load_plugin
from stacksim.cli import main
from tests.conftest import run_stacksim_process

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "completion.md"
PLUGIN = ROOT / "examples" / "poll_budget.py"
SCENARIO = ROOT / "examples" / "poll_budget.yaml"


@pytest.fixture(scope="module", autouse=True)
def poll_budget():
    """The example plug-in, loaded as ``stacksim run --plugin`` loads it; unregistered after."""
    load_plugin(str(PLUGIN))
    yield
    COMPLETION_POLICIES._items.pop("poll-budget", None)
    sys.modules.pop("stacksim_plugin_poll_budget", None)


def doc_command(start: str) -> list[str]:
    """The argv of the doc's ```sh command that starts with ``start``."""
    text = DOC.read_text()
    block = re.search(rf"```sh\n({re.escape(start)}[^`]*?)```", text, re.S).group(1)
    argv = shlex.split(" ".join(block.replace("\\\n", " ").split()))
    assert argv[0] == "stacksim"
    return argv[1:]


def run_stacksim(argv: list[str], tmp_path: Path) -> tuple[dict, list[dict]]:
    """Run the stacksim command ``argv`` from the checkout (the doc's commands name examples/...):
    its JSON summary and its per-IO records."""
    out, recs = tmp_path / "run.json", tmp_path / "ios.csv"
    run_stacksim_process([*argv, "--quiet", "--json", str(out), "--records", str(recs)], ROOT)
    with recs.open() as f:
        return json.loads(out.read_text()), list(csv.DictReader(f))


def test_the_docs_plugin_is_the_example_file():
    text = DOC.read_text()
    code = next(b for b in re.findall(r"```python\n(.*?)```", text, re.S) if 'register("poll-budget")' in b)
    assert code == PLUGIN.read_text()


def budget_of(argv: list[str]) -> float:
    return float(next(a.split("=")[1] for a in argv if a.startswith("queue.completion_params.budget_ns=")))


def test_the_docs_command_polls_short_ios_and_puts_long_ones_to_sleep(tmp_path):
    argv = doc_command("stacksim run --plugin examples/poll_budget.py")
    budget = budget_of(argv)
    res, rows = run_stacksim(argv, tmp_path)
    s = res["summary"]
    assert s["completion_policies"] == ["poll-budget"]
    assert res["provenance"]["config"]["platform"]["queue"]["completion_params"] == {"budget_ns": budget}
    lat = {4096: [], 65536: []}
    for r in rows:
        lat[int(r["bytes"])].append(float(r["t_complete_ns"]) - float(r["t_submit_ns"]))
    # the doc: 4 KiB reads take 8.4 us, within the budget; 64 KiB reads 36.1 us, past it
    mean = {b: sum(v) / len(v) for b, v in lat.items()}
    assert f"{mean[4096] / 1000:.1f}" == "8.4" and f"{mean[65536] / 1000:.1f}" == "36.1"
    assert max(lat[4096]) < budget < min(lat[65536])
    # one sleep, one voluntary switch and one interrupt per IO that outlived the budget; none for
    # the others (they end while the task polls: the interrupt handler reaps them, nothing is woken)
    share = len(lat[65536]) / len(rows)
    assert s["hybrid_sleeps_per_io"] == pytest.approx(share, abs=0.005)
    assert s["voluntary_context_switches_per_io"] == pytest.approx(share, abs=0.005)
    assert s["interrupts"]["nvme"] == pytest.approx(s["ios"], abs=2)
    assert 0.51 < share < 0.53 and f"{s['context_switches_per_io']:.2f}" == "0.52"  # the doc's 0.52


def run_api(sets: dict):
    """A run of the default scenario with ``sets`` through the Python API: (host, the policy)."""
    cfg = resolve(scenario="default", sets={"queue.completion": "poll-budget", "ramp_time": "0", **sets})
    host, _fio, _ramp, end = build_run(cfg, keep_requests=True)
    host.engine.run(end)
    return host, host.policy("poll-budget")


def test_each_io_polls_within_the_budget_or_sleeps_once_past_it():
    budget = 16_000.0
    host, pol = run_api({"queue.completion_params.budget_ns": budget, "bssplit": "4k/50:64k/50", "runtime": "20ms"})
    recs = host.records
    assert recs and pol.sleeps - sum(r.slept for r in recs) in (0, 1)  # (+ the IO asleep at the end)
    for r in recs:
        took = r.t_reaped - r.t_dispatch  # doorbell to the interrupt handler's reap
        assert r.slept == (took > budget), (r.own_bytes, took)
    # the context switches are the sleeps': none for the IOs that ended while the task polled
    task = recs[0].task
    assert task.nvcsw == pol.sleeps and task.nivcsw == 0 and 0 < pol.sleeps < len(recs)


@pytest.mark.parametrize("turbo", [True, False])
@pytest.mark.parametrize("budget", [2_000.0, 16_000.0])
def test_the_budget_is_whole_poll_iterations_at_the_cores_frequency(turbo, budget):
    # 64 KiB reads (about 36 us) outlive both budgets: each polls the budget, rounded up to whole
    # iterations of poll_iteration_cycles at the core's frequency (3.8 GHz turbo, 3.4 GHz base),
    # less the scheduler ticks that interrupt a loop (the budget is wall time)
    host, pol = run_api(
        {"queue.completion_params.budget_ns": budget, "bs": "64k", "runtime": "20ms", "cpu.turbo": turbo}
    )
    ghz = {r.freq for r in host.runners}
    assert len(ghz) == 1 and ghz == {3.8 if turbo else 3.4}
    it = host.kcosts.poll_iteration_cycles / ghz.pop()
    per_io = sum(r.poll_ns for r in host.runners) / pol.sleeps
    assert pol.sleeps == pytest.approx(host.completed_ios, abs=1)
    n = math.ceil(budget / it)
    assert n * it - 10.0 <= per_io <= n * it + 1e-6
    if turbo and budget == 16_000.0:  # the doc: "406 iterations of 39.5 ns at 3.8 GHz, 16,026 ns"
        assert (n, f"{it:.1f}", f"{n * it:,.0f}") == (406, "39.5", "16,026")


def test_a_preempted_poller_polls_on_with_its_budget():
    # two threads on one CPU, each polling 64 KiB reads (36 us) with a budget far longer: the
    # running one is preempted at the end of its slice (need_resched ends its loop); switched back
    # in, its loop goes on with its budget (no fallback: no IO outlives 2 ms), as classic polling's
    host, pol = run_api(
        {
            "queue.completion_params.budget_ns": 2_000_000,
            "bs": "64k",
            "runtime": "30ms",
            "numjobs": 2,
            "cpus_allowed": "0",
        }
    )
    recs = host.records
    tasks = {r.task for r in recs}
    assert len(tasks) == 2 and sum(t.nivcsw for t in tasks) > 0  # a loop was preempted
    assert pol.sleeps == 0 and all(t.nvcsw == 0 for t in tasks)
    assert len(recs) * 36e3 > 0.95 * 30e6  # the CPU polled all along: one IO after another


def test_a_scenario_file_sets_the_parameters():
    cfg = resolve(scenario=str(SCENARIO))
    assert cfg.queue.completion == "poll-budget" and cfg.queue.completion_params == {"budget_ns": 16000}
    cfg = resolve(scenario=str(SCENARIO), sets={"queue.completion_params.budget_ns": 1000})
    assert cfg.queue.completion_params == {"budget_ns": 1000}


@pytest.mark.parametrize(
    "sets, message",
    [
        (
            ["queue.completion=poll-budget", "queue.completion_params.budget_us=15"],
            "completion policy poll-budget (queue.completion_params): budget_us: unknown key (valid: budget_ns);"
            " did you mean 'budget_ns'?",
        ),
        (
            ["queue.completion=poll-budget", "queue.completion_params.budget_ns=soon"],
            "completion policy poll-budget (queue.completion_params): budget_ns: Input should be a valid number,"
            " unable to parse string as a number (got 'soon')",
        ),
        (
            ["queue.completion=poll-budget", "queue.completion_params.budget_ns=-1"],
            "completion policy poll-budget (queue.completion_params): budget_ns: Input should be greater than or"
            " equal to 0 (got -1)",
        ),
        (
            ["queue.completion=interrupt", "queue.completion_params.budget_ns=1"],
            "queue.completion_params.budget_ns: completion policy interrupt takes no parameters",
        ),
        (
            ["queue.completion_params.budget_ns=1"],
            "queue.completion_params: parameters of the completion policy queue.completion names;"
            " with queue.completion=auto (the Linux rules) no policy takes any",
        ),
    ],
)
def test_a_bad_parameter_is_one_message_naming_it(sets, message, capsys):
    argv = ["run", "--plugin", str(PLUGIN), "--set", "runtime=1ms"]
    for s in sets:
        argv += ["--set", s]
    assert main(argv) == 2
    assert capsys.readouterr().err.strip().splitlines() == [f"stacksim: error: {message}"]


def test_parameters_are_checked_before_the_run():
    cfg = resolve(scenario="default", sets={"queue.completion": "poll-budget", "queue.completion_params.budget": 1})
    with pytest.raises(ConfigError, match="budget: unknown key"):
        build_run(cfg)  # the host refuses them as it is built, before any IO


def test_a_poller_moved_to_another_cpu_notices_the_interrupts_completion_at_once():
    """A task polling with a budget on its CPU's interrupt-driven queue is pushed to another CPU
    mid-poll (the stopper's push, active balancing's: it preempts the poller and moves it). It polls
    on from there; the interrupt of its queue's CPU completes the request, and the loop notices at
    the end of its iteration, not at the budget's end (with a 50 us budget it was 43 us late), and
    does not sleep. The target CPU idles in POLL (idle=poll), so the move itself costs no C-state
    exit."""
    from models.os.sched.stopper import Stopper

    sets = {
        "queue.completion": "poll-budget",
        "queue.completion_params.budget_ns": 200_000,
        "ramp_time": "0",
        "runtime": "8ms",
        "cpu.cpuidle_disable": ["C1", "C1E", "C3", "C6", "C7s", "C8"],
    }
    host, _fio, _ramp, end = build_run(resolve(scenario="default", sets=sets), keep_requests=True)
    src, dst = host.runners[0], host.runners[2]
    moved = []

    def push():  # early in a poll loop with a budget on CPU 0: the IO completes after the move
        now = host.engine.now
        if src.mode == "poll" and src._poll_budget is not None and now - src._poll_req.t_dispatch < 1_000:
            moved.append((src._poll_req, now))
            Stopper(host, src).push(dst, dst)
        else:
            host.engine.call_in(50.0, push)

    host.engine.call_at(4e6, push)
    host.engine.run(end)
    task = host.all_tasks[0]
    ((req, pushed),) = moved
    assert task.nr_migrations == 1 and task.cpu == 2 and req.qp.cpu == 0  # it polled CPU 0's queue from CPU 2
    assert req.t_reaped > pushed  # completed after the move, while the task polled on CPU 2 (it never slept)
    assert req.done and not req.slept and host.policy("poll-budget").sleeps == 0 and task.nvcsw == 0
    # from the reap (the interrupt handler, CPU 0) to the task's return: at most the switch in on CPU 2
    # (the loop goes on after it), an iteration and the return path; not the budget's rest
    assert req.t_complete - req.t_reaped < 5_000
    assert max(r.t_complete - r.t_reaped for r in host.records if r is not req) < 1_000
