"""The CPU stopper thread of one CPU (``migration/N``): active load balancing.

When periodic balancing keeps finding an imbalance and cannot move anything (the busiest CPU's
only CFS task is the one running: two CPU-bound pollers on the siblings of one core while
another core idles), ``load_balance`` has that CPU's stopper push its running task
(``need_active_balance``: ``sd->nr_balance_failed > sd->cache_nice_tries + 2``, Linux 5.x,
kernel/sched/fair.c): ``stop_one_cpu_nowait(busiest, active_load_balance_cpu_stop)``. The stopper
is of the stop class, above every CFS task: it preempts the running task at once, detaches one
task that may run on the balancing CPU (``detach_one_task``, cache-hot or not) and attaches it
there (``attach_one_task``: an IPI wakes that CPU when it idles).

Modelled as a kernel thread woken from the balancing CPU (an IPI to the busiest CPU), whose
virtual time puts it ahead of every task there: it preempts the running task at its next
preemption point (a poll loop at once). Costs: the wake-up, the switches in and out of a kernel
thread, the move (``migrate_cycles``), the IPI to the target.
"""

from __future__ import annotations

from models.os.irq.irqwork import no_effect
from models.os.sched.host import SchedHost
from models.os.sched.placement import may_run_on
from models.os.sched.task import SLEEPING, kernel_thread


class Stopper:
    """The stopper of one CPU (its runner ``runner``); :meth:`push` asks it to move a task to
    ``target``."""

    def __init__(self, host: SchedHost, runner):
        self.host = host
        self.runner = runner
        # nice -20: the stop class runs before any CFS task
        self.task = kernel_thread(host.all_tasks, f"migration/{runner.id}", runner.id, nice=-20)
        self.target = None  # the CPU to push a task to (rq->push_cpu), while a push is pending
        self.pushes = 0  # tasks pushed

    @property
    def pending(self) -> bool:
        """A push is queued (``rq->active_balance``)."""
        return self.target is not None

    def push(self, target, waker) -> None:
        """Queue a push of a task to runner ``target``, waking the stopper from ``waker`` (the
        balancing CPU)."""
        self.target = target
        if self.task.state == SLEEPING:
            self.task.resume = self._work
            waker.wake(self.task)

    def _work(self) -> None:
        """active_load_balance_cpu_stop: move the first task here that may run on the target (the
        longest waiting first), then sleep until asked again."""
        src, target = self.runner, self.target
        self.target = None
        if target is not None:
            for t in sorted(src.rq, key=lambda t: (t.last_ran, t.tid)):
                if may_run_on(t, target.id):
                    self._move(t, target)
                    break
        src.sleep(self._work, iowait=False)

    def _move(self, task, target) -> None:
        src = self.runner
        src.move_queued(task, src, target)
        self.pushes += 1
        target.note_enqueue(self.host.engine.now)
        src.send_ipi(target, no_effect)  # attach_one_task: the target runs it when it idles
