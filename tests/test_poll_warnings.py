"""A warning (not an error) for queue settings that cannot take effect: ``queue.io_poll`` with no
polling job (``hipri``), ``queue.io_poll_delay`` without ``queue.io_poll``."""

from pathlib import Path

import pytest

from models.os.block.queue import QueueConfig
from scenarios.config.checks import queue_warnings
from stacksim.cli import main

ROOT = Path(__file__).resolve().parents[1]
FAST = ["--set", "runtime=2ms", "--set", "ramp_time=1ms", "--quiet"]


def run(args, capsys):
    rc = main(["run", *args, *FAST])
    out = capsys.readouterr()
    return rc, out.err


@pytest.mark.parametrize(
    "sets, warned",
    [
        (["queue.io_poll=1"], "queue.io_poll=1 has no effect: no job sets hipri=1"),
        (["queue.io_poll_delay=0"], "queue.io_poll_delay=0 has no effect without queue.io_poll=1"),
        (["queue.io_poll_delay=5", "hipri=1"], "queue.io_poll_delay=5 has no effect without queue.io_poll=1"),
    ],
)
def test_ineffective_poll_settings_warn_and_still_run(sets, warned, capsys):
    rc, err = run([x for s in sets for x in ("--set", s)], capsys)
    assert rc == 0
    (line,) = err.strip().splitlines()  # one warning, nothing else
    assert line.startswith(f"stacksim: warning: {warned}")


@pytest.mark.parametrize(
    "sets",
    [
        [],  # defaults: interrupts
        ["queue.io_poll=1", "hipri=1"],  # classic polling
        ["queue.io_poll=1", "hipri=1", "queue.io_poll_delay=0"],  # hybrid polling
        ["queue.io_poll=1", "queue.completion=classic-poll"],  # a policy chosen by name decides itself
    ],
)
def test_effective_settings_do_not_warn(sets, capsys):
    rc, err = run([x for s in sets for x in ("--set", s)], capsys)
    assert rc == 0
    assert "warning" not in err


def test_queue_warnings_cover_both_settings():
    both = queue_warnings(QueueConfig(io_poll=True), polling_requested=False)
    assert len(both) == 1 and "io_poll=1" in both[0]
    assert queue_warnings(QueueConfig(io_poll=True), polling_requested=True) == []
    assert queue_warnings(QueueConfig(io_poll_delay=0), polling_requested=True)[0].startswith("queue.io_poll_delay=0")
    assert queue_warnings(QueueConfig(), polling_requested=False) == []


def test_replay_warns_when_no_submitter_polls(capsys):
    rc = main(
        [
            "replay",
            str(ROOT / "scenarios/data/traces/msr_sample.csv"),
            "--platform",
            "optane900p-e3-1230v5",
            "--set",
            "queue.io_poll=1",
            "--window",
            "0:0.002",
            "--quiet",
        ]
    )
    err = capsys.readouterr().err
    assert rc == 0
    assert "stacksim: warning: queue.io_poll=1 has no effect: replay.hipri is not set" in err
