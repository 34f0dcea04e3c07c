"""The per-CPU runner: one :class:`CpuRunner` per logical CPU runs its tasks, its interrupts and its
idle periods.

It executes whatever the CPU is doing as *segments* (models.os.sched.execution): a stretch of code of
known cycles, converted to time with the CPU's frequency, ending in one continuation callback.
Modes (``CpuRunner.mode``):

``RUN``   the current task (or the idle task switching) executes a segment;
``POLL``  the current task spins in blk_poll on a polled queue until its request is reaped
          (models.os.sched.poll);
``IDLE``  the CPU sits in the C-state the cpuidle governor chose (models.os.sched.idle);
``IRQ``   a hard-IRQ handler runs on top of whatever was interrupted (which resumes afterwards,
          pushed back by the handler's duration). An IRQ that finds the CPU idle first pays the
          C-state's exit latency (models.os.irq.entry).

The runner is built as a chain of levels, one module per kernel seam (the table is in
:mod:`models.os.sched.execution`): segments and CPU-time accounting, polling, hrtimers
(models/os/time/hrtimer.py), the idle path and the tick, IRQ entry and exit (models/os/irq/entry.py),
the CFS run queue (cfs.py), wake-ups and placement (placement.py). Load balancing is scheduler-wide
(models.os.sched.balance) and reads the runners through the small surface this class adds.
"""

from __future__ import annotations

from models.os.irq.irqwork import FixedIrq, IrqWork
from models.os.sched.placement import Wakeup
from models.os.sched.task import task_load
from models.os.time.hrtimer import Timer

__all__ = ["CpuRunner", "FixedIrq", "IrqWork", "Timer"]


class CpuRunner(Wakeup):
    """Runs one logical CPU: its tasks, its interrupts and its idle periods (see the module
    docstring; ``CpuRunner(host, cpu, cpuidle governor, sched config, load balancer)``)."""

    # -- what load balancing reads and does (models.os.sched.balance) --------------------------------
    @property
    def load(self) -> float:
        """The load of this runqueue: its runnable tasks' load weights (the running one included)."""
        cur = self.current
        return sum(task_load(t) for t in ((cur,) if cur is not None else ()) + tuple(self.rq))

    def note_enqueue(self, now: float) -> None:
        """A task was moved onto this runqueue by balancing (attach_task): the cpufreq governor's
        enqueue hook hears of it."""
        if self.cpufreq_hook is not None:
            self.cpufreq_hook(self, now, False)

    def arm_slice(self) -> None:
        """Tasks were moved here: with others runnable, the running task's slice ends at a tick."""
        self._arm_slice()
