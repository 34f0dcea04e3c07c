"""Where tasks run: CFS's choice of a CPU at each wake-up and its new-idle pull (Linux 5.x,
``kernel/sched/fair.c``).

A task with an affinity (``Task.affinity``: fio threads without a CPU list, or with a
``cpus_allowed`` set under the ``shared`` policy) is placed by the kernel, not pinned:

- **At every wake-up** (``select_task_rq_fair`` -> ``select_idle_sibling``): the task's previous
  CPU if it is idle (nothing running, nothing queued: ``available_idle_cpu``); else the waker's CPU
  if it is idle (``wake_affine``'s idle test); else the first idle *core* of the last-level-cache
  domain (both SMT siblings idle, ``select_idle_core``), scanning from the previous CPU; else the
  first idle CPU (``select_idle_cpu``); else the previous CPU, where the task queues. Each CPU
  examined beyond the first costs ``idle_scan_cycles`` on the waking CPU; a move costs
  ``migrate_cycles`` (``set_task_cpu``: detach and attach of the task's load averages) and counts
  in ``Task.nr_migrations``.
- **When a CPU is about to go idle** (``newidle_balance``): unless its average idle period
  (``rq->avg_idle``, an 1/8 moving average of its idle periods, starting at twice the migration
  cost) is shorter than ``sched.migration_cost_ns``, it looks for a queued (runnable, not running)
  task it may run that is not cache-hot (left a CPU more than ``migration_cost_ns`` ago) and pulls
  it; the pass costs ``newidle_balance_cycles`` plus ``idle_scan_cycles`` per CPU examined.
- **Periodically, at the tick** (``rebalance_domains``): each CPU balances each of its scheduling
  domains (the SMT pair, then the package) once per balance interval: the domain's CPU count in
  ms (``sd->min_interval``), stretched by ``sched.balance_busy_factor`` while the CPU is busy.
  A pass (``load_balance_cycles`` + ``idle_scan_cycles`` per other CPU of the domain) finds the
  CPU with the most runnable tasks and pulls half the difference in tasks (``calculate_imbalance``
  with equal-weight tasks), queued ones only, not cache-hot, allowed here and free to move.
- **For idle CPUs whose tick is stopped** (``nohz_balancer_kick``): a busy CPU whose tick finds
  tasks waiting in its queue kicks the first such idle CPU with an IPI, at most once per the
  smallest domain's interval (``nohz.next_balance``), and that CPU balances on behalf of every
  tick-stopped idle CPU (``_nohz_idle_balance``), waking those that pulled a task.

The whole package is one last-level-cache domain (the presets are single-socket parts). Not
modelled: wake_affine's load comparison for busy CPUs, ``recent_used_cpu``, the scan-depth limit
of ``select_idle_cpu`` (every CPU of the domain is examined), load weights (nice levels: every
task weighs the same) and the doubling of an interval after a balanced pass, NUMA.
"""

from __future__ import annotations

from typing import Any


def is_idle(runner) -> bool:
    """``available_idle_cpu``: nothing running (the idle task, possibly in an interrupt) and
    nothing queued."""
    return runner.current is None and not runner.rq


def select_wake_cpu(runners: list, task, waker) -> tuple[Any, int]:
    """The runner a woken ``task`` (with an affinity) should run on, and the CPUs examined."""
    prev = runners[task.cpu]
    if is_idle(prev):
        return prev, 1
    allowed = task.affinity
    if waker is not prev and waker.id in allowed and is_idle(waker):
        return waker, 2
    n = len(runners)
    examined = 2
    first_idle = None
    for k in range(1, n):
        r = runners[(prev.id + k) % n]
        if r.id not in allowed:
            continue
        examined += 1
        if is_idle(r):
            sib = r.sibling_runner
            if sib is None or is_idle(sib):
                return r, examined  # an idle core
            if first_idle is None:
                first_idle = r
    return (first_idle or prev), examined


def pull_candidate(runners: list, this, now: float, migration_cost_ns: float) -> tuple[Any, Any, int]:
    """``newidle_balance`` for runner ``this``: (the runner to pull from, the task, CPUs examined),
    or (None, None, examined) when nothing may move. The busiest runqueue (most queued tasks)
    first; from it the queued task that left a CPU longest ago, if it may run here and is not
    cache-hot."""
    n = len(runners)
    best = None
    for k in range(1, n):
        r = runners[(this.id + k) % n]
        if r.rq and (best is None or len(r.rq) > len(best.rq)):
            best = r
    if best is None:
        return None, None, n - 1
    movable = [t for t in best.rq if t.affinity is not None and this.id in t.affinity
               and now - t.last_ran >= migration_cost_ns and t.owner is not None and t.owner.can_migrate()]
    if not movable:
        return None, None, n - 1
    return best, min(movable, key=lambda t: (t.last_ran, t.tid)), n - 1


def nr_running(runner) -> int:
    """Tasks on a runqueue: the running one and the queued ones."""
    return (runner.current is not None) + len(runner.rq)


def balance_pull(domain: tuple, this, now: float, migration_cost_ns: float) -> tuple[Any, list]:
    """``load_balance`` of runner ``this`` over the runners of one ``domain``: (the busiest runner,
    the tasks to pull from it, oldest first), or (None, []) when the domain is balanced or nothing
    may move. Imbalance in tasks: half the difference in runnable tasks (at least one)."""
    mine = nr_running(this)
    busiest = None
    most = mine + 1  # a busiest group must lead by two tasks to move one
    for r in domain:
        if r is not this:
            n = nr_running(r)
            if n > most:
                busiest, most = r, n
    if busiest is None:
        return None, []
    movable = sorted((t for t in busiest.rq if t.affinity is not None and this.id in t.affinity
                      and now - t.last_ran >= migration_cost_ns and t.owner is not None and t.owner.can_migrate()),
                     key=lambda t: (t.last_ran, t.tid))
    return busiest, movable[: (most - mine) // 2]
