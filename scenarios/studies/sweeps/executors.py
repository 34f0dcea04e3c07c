"""Where sweep runs execute: in this process, a local process pool, or a Dask distributed cluster.

Each executor is a generator of ``(task, row)`` pairs in completion order; closing it early (an
error, Ctrl-C) cancels the runs not started yet. Results never depend on the executor: a run is a
pure function of its task.

The local pool's workers never outlive the sweep: they ask the kernel to kill them when their
parent dies (Linux ``PR_SET_PDEATHSIG``; elsewhere a thread watches the parent), so a sweep killed
with SIGKILL leaves no process behind; they ignore Ctrl-C (the sweep stops them itself, without a
traceback per worker).
"""

from __future__ import annotations

import itertools
import os
import signal
import sys
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from typing import Callable, Iterable, Iterator, Sequence

from scenarios.studies.sweeps.rows import task_code_sha
from scenarios.studies.sweeps.store import pid_alive
from simcore.errors import ConfigError

Pair = tuple[object, dict]


def run_inline(fn: Callable, tasks: Iterable) -> Iterator[Pair]:
    """One after the other in this process (``--jobs 1``: simplest to debug and profile)."""
    for t in tasks:
        yield t, fn(t)


#: a local pool holds at most this many runs per worker submitted ahead (the tasks may be a stream
#: of a million runs, resolved as they are taken)
AHEAD_PER_WORKER = 2


def run_local(fn: Callable, tasks: Iterable, jobs: int | None = None) -> Iterator[Pair]:
    """A pool of ``jobs`` worker processes (default: one per CPU), fed from ``tasks`` as runs finish
    (a list or a stream)."""
    if jobs is None:
        jobs = os.cpu_count() or 1
    if jobs < 1:
        raise ConfigError(f"--jobs must be >= 1, got {jobs}")
    stream = iter(tasks)
    ahead = list(itertools.islice(stream, jobs * AHEAD_PER_WORKER))
    if jobs == 1 or len(ahead) <= 1:
        yield from run_inline(fn, itertools.chain(ahead, stream))
        return
    pool = ProcessPoolExecutor(max_workers=min(jobs, len(ahead)), initializer=worker_init, initargs=(os.getpid(),))
    finished = False
    try:
        pending = {pool.submit(fn, t): t for t in ahead}
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for fut in done:
                yield pending.pop(fut), fut.result()
                for t in itertools.islice(stream, 1):
                    pending[pool.submit(fn, t)] = t
        finished = True
    finally:
        if not finished:  # an error or Ctrl-C: stop the runs in progress instead of waiting for them
            for proc in list((getattr(pool, "_processes", None) or {}).values()):
                proc.terminate()
        pool.shutdown(wait=True, cancel_futures=True)


def worker_init(parent_pid: int) -> None:
    """Pool worker start-up: die with the parent process and ignore Ctrl-C. ``parent_pid`` is the
    sweep's process (the parent itself, or with the ``forkserver`` start method its client)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if not _kill_me_with_parent():
        threading.Thread(target=_watch_parent, args=(os.getppid(),), name="parent-watch", daemon=True).start()
    if os.getppid() != parent_pid and not pid_alive(parent_pid):
        os._exit(1)  # the sweep died before we could ask to die with our parent


def _kill_me_with_parent() -> bool:
    """Linux: SIGKILL this process when its parent dies (``prctl(PR_SET_PDEATHSIG)``)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        return libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _watch_parent(ppid: int, interval_s: float = 0.5) -> None:
    """Portable fallback: exit as soon as the parent is gone (the worker is re-parented)."""
    while True:
        time.sleep(interval_s)
        if os.getppid() != ppid:
            os._exit(1)


def run_dask(
    fn: Callable, tasks: Sequence, *, scheduler: str | None = None, local_cluster: int | None = None
) -> Iterator[Pair]:
    """On a Dask distributed cluster: the scheduler at ``scheduler`` (``tcp://HOST:PORT``), or a
    ``LocalCluster`` of ``local_cluster`` single-threaded worker processes started here.
    The workers must be able to import stacksim (same installation as here)."""
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise ConfigError(
            "--scheduler/--local-cluster need Dask distributed: install stacksim's cluster extra"
            " (pip install -e '.[cluster]' in a checkout, or pip install distributed)"
        ) from None
    cluster = None
    if local_cluster is not None:
        if local_cluster < 1:
            raise ConfigError(f"--local-cluster must be >= 1 worker, got {local_cluster}")
        # workers inherit an ignored SIGINT: Ctrl-C reaches only this process, which shuts the
        # cluster down cleanly (instead of every worker printing a traceback)
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN) if _main_thread() else None
        try:
            cluster = LocalCluster(
                n_workers=local_cluster, threads_per_worker=1, processes=True, host="127.0.0.1", dashboard_address=None
            )
        finally:
            if previous is not None:
                signal.signal(signal.SIGINT, previous)
    try:
        try:
            client = Client(cluster if cluster is not None else scheduler, timeout="10s")
        except (OSError, TimeoutError, ValueError) as err:
            raise ConfigError(f"cannot reach the Dask scheduler at {scheduler}: {err}") from None
        futures = []
        try:
            keys = [f"stacksim-{t.sweep}-{t.index}-{t.config_sha}-{task_code_sha(t)}" for t in tasks]
            by_key = dict(zip(keys, tasks))
            futures = client.map(fn, list(tasks), key=keys, pure=False)
            for fut in as_completed(futures):
                yield by_key[fut.key], fut.result()
        finally:
            if futures:
                client.cancel(futures)
            client.close()
    finally:
        if cluster is not None:
            cluster.close()


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()
