"""Run a planned sweep: skip stored runs, execute the rest, store each row as it finishes."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Sequence

from scenarios.run.simulate import simulate
from scenarios.studies.sweeps.executors import run_dask, run_local
from scenarios.studies.sweeps.progress import Progress
from scenarios.studies.sweeps.rows import make_row, task_code_sha
from scenarios.studies.sweeps.store import ResultStore, describe_damage
from simcore.errors import ConfigError


@dataclass(frozen=True)
class SweepOutcome:
    """What a sweep did."""

    path: Path
    total: int
    """runs in the plan"""
    reused: int
    """runs found already stored (skipped)"""
    computed: int
    """runs simulated now (including the stale ones)"""
    stale: int
    """runs stored by another version of the simulator's code, recomputed"""
    extra_rows: int
    """rows in the results file that are not part of this plan (kept)"""
    damaged: int = 0
    """runs whose stored row was damaged (cut off, unreadable), recomputed"""


def run_task(task) -> dict[str, Any]:
    """Simulate one :class:`scenarios.studies.sweep.Task` and return its result row (a pure function of
    ``task.config``)."""
    try:
        result = simulate(task.config)
    except ConfigError as err:
        raise ConfigError(f"sweep {task.sweep}: point {task.point} replicate {task.replicate}: {err}") from None
    return make_row(task, result)


def execute(
    tasks: Iterable,
    results: str | Path,
    *,
    jobs: int | None = None,
    scheduler: str | None = None,
    local_cluster: int | None = None,
    fresh: bool = False,
    progress: bool | None = None,
    flush_interval_s: float = 5.0,
    fn=None,
    total: int | None = None,
    desc: str | None = None,
) -> SweepOutcome:
    """Run the ``tasks`` not yet stored in ``results`` and store their rows.

    ``tasks``: a list, or a stream (:func:`scenarios.studies.sweep.plan_stream`) taken as runs
    finish, with its length ``total`` for the progress line. Executes in a local process pool of
    ``jobs`` processes, or on Dask when ``scheduler`` or ``local_cluster`` is given (Dask takes the
    whole list at once). ``fresh`` discards stored results first. ``progress`` None: a bar on a
    terminal, periodic lines otherwise. ``fn`` (default :func:`run_task`) maps a task to its row. On
    any error or interrupt the finished rows are kept (journal + final flush).
    """
    if fn is None:
        fn = run_task
    if total is None and isinstance(tasks, Sequence):
        total = len(tasks)
    store = ResultStore(results, fresh=fresh, flush_interval_s=flush_interval_s)
    scan = _Scan(store)
    computed = 0
    try:
        bar = Progress(total or 0, enabled=progress, desc=desc or _first_sweep(tasks))
        scan.reused_hook = bar.skip
        todo = scan.to_run(tasks)
        if scheduler is not None or local_cluster is not None:
            todo = list(todo)
            stream = run_dask(fn, todo, scheduler=scheduler, local_cluster=local_cluster) if todo else iter(())
        else:
            stream = run_local(fn, todo, jobs)
        try:
            for _task, row in stream:
                store.add(row, scan.order)
                computed += 1
                bar.update()
            store.drop_damaged()
        finally:
            if hasattr(stream, "close"):
                stream.close()
            bar.close()
    except KeyboardInterrupt:  # (the store is flushed below before the message is seen)
        raise SweepInterrupted(
            f"interrupted: {scan.reused + computed} of {total or scan.seen} runs are stored in {store.path}"
            f" ({computed} from this session); run the same command again to resume"
            " (stored runs are not recomputed)"
        ) from None
    finally:
        store.close(scan.order)
    extra = scan.report()
    return SweepOutcome(store.path, scan.seen, scan.reused, computed, scan.stale, extra, scan.damaged)


def _first_sweep(tasks: Iterable) -> str:
    return tasks[0].sweep if isinstance(tasks, Sequence) and tasks else "sweep"


class _Scan:
    """Goes through the planned tasks as they come: their plan order (for the results file), which
    are stored already (by this code: skipped; by other code: run again), and at the end the
    stored rows of no task here."""

    def __init__(self, store: ResultStore):
        self.store = store
        self.order: dict = {}
        self.seen = self.reused = self.stale = self.damaged = 0
        self.reused_hook = None

    def to_run(self, tasks: Iterable):
        """The tasks to run, in plan order (a generator)."""
        store = self.store
        for t in tasks:
            if not self.seen:
                names = {str(r.get("sweep")) for r in store.rows.values()} | {d.sweep for d in store.damage if d.sweep}
                others = sorted(names - {t.sweep})
                if others:
                    raise ConfigError(
                        f"{store.path} holds results of sweep {', '.join(others)}, not {t.sweep}: "
                        "give another results file (or --fresh to replace it)"
                    )
            self.seen += 1
            self.order[(t.point, t.replicate)] = t.index
            status = store.status(t.point, t.replicate, t.config_sha, task_code_sha(t), t.axes)
            if status == "done":
                self.reused += 1
                if self.reused_hook is not None:
                    self.reused_hook()
                continue
            self.stale += status == "stale"
            self.damaged += status == "damaged"
            yield t

    def report(self) -> int:
        """Say on stderr what was recomputed and what else the file holds; the count of the latter."""
        self._report_damage()
        if self.stale:
            print(
                f"stacksim: note: {self.stale} stored runs were computed by another version of the simulator:"
                " recomputed",
                file=sys.stderr,
            )
        extra = sum(1 for k in self.store.rows if k not in self.order)
        if extra:
            print(
                f"stacksim: note: {self.store.path} also holds {extra} rows that are not part of this sweep (kept)",
                file=sys.stderr,
            )
        return extra

    def _report_damage(self) -> None:
        """Say which damaged stored rows were recomputed, and which were dropped (no run of this plan)."""
        damage = self.store.damage
        if not damage:
            return
        redone = [d for d in damage if d.key is not None and d.key in self.order]
        dropped = [d for d in damage if d.key is None or d.key not in self.order]
        path = self.store.path
        if redone:
            print(
                f"stacksim: note: {path}: {_count(len(redone), 'damaged stored row', 'damaged stored rows')}"
                f" recomputed: {describe_damage(redone)}",
                file=sys.stderr,
            )
        if dropped:
            print(
                f"stacksim: note: {path}: {_count(len(dropped), 'damaged stored entry', 'damaged stored entries')}"
                f" of no run of this sweep dropped: {describe_damage(dropped)}",
                file=sys.stderr,
            )


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C during a sweep, with what is stored and how to resume (its message)."""
