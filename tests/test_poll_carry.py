"""Work carried ahead of what a CPU does next (the submission or wake-up path before a poll loop, a
C-state exit before a task's pick) is CPU time spent first: an interrupt that lands during it
delays it, never deletes it (models/os/irq/entry.py, models/os/sched/poll.py), and a task's clock starts after
it (models/os/sched/cfs.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

#: run in pure Python (STACKSIM_PURE=1) in a child process: it patches methods of classes that the
#: compiled build freezes. Prints the (interrupt time, carried ns left) seen and, per resumed poll,
#: (resume time, the loop's new start, the carried ns left).
SPY = """
import json
from models.os.irq.entry import IrqEntry
from models.os.sched.poll import Polling
from scenarios.config.host import resolve
from scenarios.run.simulate import simulate

seen, resumed = [], []
start_irq, poll_check = IrqEntry._start_irq, Polling._poll_check

def spy_start(self):
    now = self.engine.now
    if self.mode == "poll" and self._poll_start > now:
        self._spy = (now, self._poll_start - now)
        seen.append(self._spy)
    start_irq(self)

def spy_check(self):
    spy = getattr(self, "_spy", None)
    if spy is not None and self.mode == "poll":
        resumed.append((self.engine.now, self._poll_start, spy[1]))
        self._spy = None
    poll_check(self)

IrqEntry._start_irq, Polling._poll_check = spy_start, spy_check
sets = {"runtime": "60ms", "queue.io_poll": "1", "queue.io_poll_delay": "5", "hipri": "1"}
simulate(resolve(scenario="default", sets=sets))
print(json.dumps({"seen": seen, "resumed": resumed}))
"""


def test_an_interrupt_during_carried_work_resumes_it_after_the_handler():
    env = {**os.environ, "STACKSIM_PURE": "1"}
    out = subprocess.run([sys.executable, "-c", SPY], env=env, capture_output=True, text=True, check=True)
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["seen"] and got["resumed"]  # the hybrid sleep's wake-up path is carried into the poll
    for now, start, left in got["resumed"]:
        assert start == pytest.approx(now + left)


def test_a_task_is_charged_nothing_before_its_clock_starts():
    """A task picked while carried work runs first has ``ran_since`` in the future: charging it
    then (a counter read, a wake-up's preemption check) adds nothing and keeps its clock's start;
    it used to subtract the carry from its time and then count the carry as its own."""
    from models.os.sched.task import Task
    from scenarios.config.host import resolve
    from scenarios.run.assembly import build_run

    host, _fio, _ramp, _end = build_run(resolve(scenario="default", sets={"runtime": "1ms"}))
    r = host.runners[0]
    task = Task(99, "t", r.id)
    task.ran_since, task.exec_ns, task.vruntime = 5_000.0, 100.0, 100.0
    r.charge_runtime(task, 3_000.0)
    assert (task.ran_since, task.exec_ns, task.vruntime) == (5_000.0, 100.0, 100.0)
    r.charge_runtime(task, 6_000.0)
    assert task.exec_ns == 1_100.0 and task.ran_since == 6_000.0
