"""fio's job synchronization (backend.c run_threads, HOWTO "Threads, processes and job
synchronization"): which jobs start when, and which end together.

* a job with ``stonewall`` starts once every job before it in the file has finished (all its
  threads exited); with ``wait_for=NAME``, once every thread of that earlier job has; the others
  start at time 0. A job's ``startdelay``, ``ramp_time`` and ``runtime`` count from its start;
* reporting groups: a ``stonewall`` or ``new_group`` job opens the next group (fio's ``groupid``);
* ``exitall`` (``exitall_on_error``: only a thread that ended with an error): when one thread of
  the job finishes, the others stop at their next IO: those of its group (``exit_what=group``, the
  default), every job (``all``: jobs not started yet never start), or the running ones
  (``stonewall``: waiting jobs still start).

The threads are built up front (their random streams do not depend on when they start); this
object starts them and tells the run when each job began and ended.
"""

from __future__ import annotations

from typing import Callable

from simcore.engine import Engine


def group_ids(jobs) -> list[int]:
    """fio's ``groupid`` of each job: the first job is group 0; ``stonewall`` and ``new_group``
    open the next one."""
    out, gid = [], 0
    for i, job in enumerate(jobs):
        if i and (job.stonewall or job.new_group):
            gid += 1
        out.append(gid)
    return out


def waits_of(jobs) -> list[frozenset[int]]:
    """The jobs each job waits for (indices)."""
    names = [j.name for j in jobs]
    out = []
    for i, job in enumerate(jobs):
        w = set(range(i)) if job.stonewall else set()
        if job.wait_for is not None:
            w.add(names.index(job.wait_for))
        out.append(frozenset(w))
    return out


class JobControl:
    """Starts each job's threads when what it waits for has finished, and applies ``exitall``.

    ``start_thread(th, now)`` starts one thread (its own start delay from ``now``);
    ``thread_cancelled(t)`` tells the run that a thread ended at ``t`` without running (a job
    cancelled by ``exit_what=all``);
    ``measure_from_ns[j]`` is when job j's measured interval starts (its start + ``ramp_time``)
    and ``exited_ns[j]`` when its last thread exited (None while running)."""

    def __init__(
        self, engine: Engine, jobs, threads: list, start_thread: Callable, thread_cancelled: Callable[[float], None]
    ) -> None:
        self.engine = engine
        self.jobs = jobs
        self.waits = waits_of(jobs)
        self.groups = group_ids(jobs)
        self.threads = [[th for th in threads if th.job_idx == j] for j in range(len(jobs))]
        self.live = [len(t) for t in self.threads]
        self.started = [False] * len(jobs)
        self.cancelled = [False] * len(jobs)
        self.start_ns: list[float | None] = [None] * len(jobs)
        self.exited_ns: list[float | None] = [None] * len(jobs)
        self._start_thread = start_thread
        self._thread_cancelled = thread_cancelled
        self._by_tid = {th.task.tid: th for th in threads}
        self.deferred = any(self.waits)
        #: whether it matters at all: some job waits or ends others (else the run needs no hook)
        self.active = self.deferred or any(j.exitall or j.exitall_on_error for j in jobs)

    def start(self) -> None:
        """t = 0: start every job that waits for nothing."""
        self._start_ready(0.0)

    def measure_from_ns(self, j: int, global_ramp_ns: float) -> float:
        """Where job j's measured interval starts: the run's ramp for a job started at 0, else its
        own start + ramp_time (inf while it has not started)."""
        s = self.start_ns[j]
        if s is None:
            return float("inf")
        return global_ramp_ns if s == 0.0 else s + self.jobs[j].ramp_time_ns

    def _start_ready(self, now: float) -> None:
        for j, job in enumerate(self.jobs):
            if self.started[j] or any(self.exited_ns[w] is None for w in self.waits[j]):
                continue
            self.started[j] = True
            self.start_ns[j] = now
            for th in self.threads[j]:
                self._start_thread(th, now)
            if not self.threads[j]:
                self.exited_ns[j] = now

    def thread_exited(self, task, t: float) -> None:
        """The task of a fio thread exited at ``t`` (told by :meth:`FioRun.task_exited
        <models.ioengines.fio_run.FioRun.task_exited>`)."""
        th = self._by_tid[task.tid]
        j = th.job_idx
        self.live[j] -= 1
        job = self.jobs[j]
        if job.exitall or (job.exitall_on_error and th.task.error):
            self._exit_others(j, t)
        if self.live[j] == 0 and self.exited_ns[j] is None:
            self.exited_ns[j] = t
            # in an event of its own: the exiting task's CPU is in the middle of its switch away
            self.engine.call_in(0.0, self._start_ready, t)

    def _exit_others(self, j: int, t: float) -> None:
        what = self.jobs[j].exit_what
        for k, ths in enumerate(self.threads):
            if what == "group" and self.groups[k] != self.groups[j]:
                continue
            if not self.started[k]:
                if what == "all":
                    self._cancel(k, t)
                continue
            for other in ths:
                if other.end_ns > t:
                    other.end_ns = t

    def _cancel(self, k: int, t: float) -> None:
        """``exit_what=all``: a job that has not started never will."""
        self.started[k] = self.cancelled[k] = True
        self.exited_ns[k] = t
        for _th in self.threads[k]:
            self._thread_cancelled(t)
