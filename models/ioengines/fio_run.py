"""fio's own process in a host run (user space; backend.c run_threads and its thread reaping): the job
threads it created, their job control (:class:`~models.ioengines.job_control.JobControl`), the
steady-state checks (:class:`~models.ioengines.steadystate.SteadyState`) and the count of threads
still running, which ends the run when it reaches zero.

The kernel knows nothing of fio: it tells whoever registered for it that a task exited
(``models.host.Host.task_exited``); the assembly (``scenarios.run.assembly``) registers
:meth:`FioRun.task_exited` there. The trace replayer has its own threads and needs no run of fio.
"""

from __future__ import annotations

from typing import Callable

from models.ioengines.job_control import JobControl
from models.ioengines.steadystate import SteadyState
from models.os.sched.task import Task
from simcore.engine import Engine


class FioRun:
    """The job threads of a run (``threads``: fio engine threads, in fio's thread order), started
    and ended together by ``job_control``; ``start_thread(th, now)`` starts one thread (its own
    start delay from ``now``, ns)."""

    def __init__(
        self, engine: Engine, jobs, threads: list, steady: list[tuple[int, list, SteadyState]], start_thread: Callable
    ) -> None:
        self.threads = threads
        """every job thread of the run (fio's thread_number - 1 is the index)"""
        self.steady = steady
        """fio's steadystate checks: [(job index, the threads it watches, check)]"""
        self.live = len(threads)
        """fio threads still running (an exited or cancelled thread counts down)"""
        self.on_all_exited: Callable[[float], None] | None = None
        """called with the time (ns) the last thread exited (the run ends with it, as fio's does)"""
        self.job_control = JobControl(engine, jobs, threads, start_thread, self.thread_exited)
        """fio's job synchronization: stonewall, wait_for, exitall"""

    def start(self) -> None:
        """t = 0: start every job that waits for nothing (the others when what they wait for ends)."""
        self.job_control.start()

    def task_exited(self, t: float, task: Task) -> None:
        """The kernel's exit hook (``Host.on_task_exit``): the task of a job thread exited at ``t``
        (ns). fio's job control learns it first (each job's end: its runtime in the JSON; waits;
        exitall), then the run counts the thread down."""
        self.job_control.thread_exited(task, t)
        self.thread_exited(t)

    def thread_exited(self, t: float) -> None:
        """A fio thread ended at ``t`` (ns): its task exited, or job control cancelled it before it
        started (``exit_what=all``); the last one ends the run (:attr:`on_all_exited`)."""
        self.live -= 1
        if self.live == 0 and self.on_all_exited is not None:
            self.on_all_exited(t)
