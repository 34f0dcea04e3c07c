"""Run a planned sweep: skip stored runs, execute the rest, store each row as it finishes."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from scenarios.run.simulate import simulate
from scenarios.studies.sweeps.executors import run_dask, run_inline, run_local
from scenarios.studies.sweeps.progress import Progress
from scenarios.studies.sweeps.rows import make_row, task_code_sha
from scenarios.studies.sweeps.store import ResultStore
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


def run_task(task) -> dict[str, Any]:
    """Simulate one :class:`scenarios.studies.sweep.Task` and return its result row (a pure function of
    ``task.config``)."""
    try:
        result = simulate(task.config)
    except ConfigError as err:
        raise ConfigError(f"sweep {task.sweep}: point {task.point} replicate {task.replicate}: {err}") from None
    return make_row(task, result)


def execute(
    tasks: Sequence,
    results: str | Path,
    *,
    jobs: int | None = None,
    scheduler: str | None = None,
    local_cluster: int | None = None,
    fresh: bool = False,
    progress: bool | None = None,
    flush_interval_s: float = 5.0,
    fn=None,
) -> SweepOutcome:
    """Run the ``tasks`` not yet stored in ``results`` and store their rows.

    Executes in a local process pool of ``jobs`` processes, or on Dask when ``scheduler`` or
    ``local_cluster`` is given. ``fresh`` discards stored results first. ``progress`` None shows
    progress only on a terminal. ``fn`` (default :func:`run_task`) maps a task
    to its row. On any error or interrupt the finished rows are kept (journal + final flush).
    """
    if fn is None:
        fn = run_task
    store = ResultStore(results, fresh=fresh, flush_interval_s=flush_interval_s)
    order = {(t.point, t.replicate): t.index for t in tasks}
    todo, computed = list(tasks), 0
    try:
        todo, stale, extra = _still_to_run(tasks, store, order)
        if not todo:
            stream = run_inline(fn, [])
        elif scheduler is not None or local_cluster is not None:
            stream = run_dask(fn, todo, scheduler=scheduler, local_cluster=local_cluster)
        else:
            stream = run_local(fn, todo, jobs)
        bar = Progress(len(tasks), len(tasks) - len(todo), enabled=progress, desc=tasks[0].sweep if tasks else "sweep")
        try:
            for _task, row in stream:
                store.add(row, order)
                computed += 1
                bar.update()
        finally:
            stream.close()
            bar.close()
    except KeyboardInterrupt:  # (the store is flushed below before the message is seen)
        stored = len(tasks) - len(todo) + computed
        raise SweepInterrupted(
            f"interrupted: {stored} of {len(tasks)} runs are stored in {store.path}"
            f" ({computed} from this session); run the same command again to resume"
            " (stored runs are not recomputed)"
        ) from None
    finally:
        store.close(order)
    return SweepOutcome(store.path, len(tasks), len(tasks) - len(todo), computed, stale, extra)


def _still_to_run(tasks: Sequence, store: ResultStore, order: dict) -> tuple[list, int, int]:
    """The tasks ``store`` does not hold (done by this code), the stored runs of other code (run
    again) and the stored rows of no task here (kept); the last two are said on stderr."""
    others = sorted({str(r.get("sweep")) for r in store.rows.values()} - {t.sweep for t in tasks})
    if tasks and others:
        raise ConfigError(
            f"{store.path} holds results of sweep {', '.join(others)}, not {tasks[0].sweep}: "
            "give another results file (or --fresh to replace it)"
        )
    status = {t.index: store.status(t.point, t.replicate, t.config_sha, task_code_sha(t)) for t in tasks}
    stale = sum(1 for s in status.values() if s == "stale")
    if stale:
        print(
            f"stacksim: note: {stale} stored runs were computed by another version of the simulator: recomputing them",
            file=sys.stderr,
        )
    extra = sum(1 for k in store.rows if k not in order)
    if extra:
        print(
            f"stacksim: note: {store.path} also holds {extra} rows that are not part of this sweep (kept)",
            file=sys.stderr,
        )
    return [t for t in tasks if status[t.index] != "done"], stale, extra


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C during a sweep, with what is stored and how to resume (its message)."""
