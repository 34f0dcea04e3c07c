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
  A pass (``load_balance``: ``load_balance_cycles`` + ``idle_scan_cycles`` per other CPU of the
  domain) compares the domain's groups (single CPUs in the SMT pair; cores in the package): their
  runnable tasks, idle CPUs and load (the runnable tasks' load weights, by nice level), and their
  type (spare capacity, fully busy, overloaded: fewer, as many or more tasks than CPUs). It picks
  the busiest group (``update_sd_pick_busiest``) and, by ``find_busiest_group``'s rules, either
  evens the tasks (a local group with spare capacity: half the difference in tasks; the package
  spreads tasks over cores because the SMT level prefers siblings) or, when both groups are busy
  and the busiest is overloaded, moves load: the smaller of the busiest group's excess and the
  local group's shortfall over the domain's average. A busy CPU pulls only from an overloaded
  group. From the busiest group's busiest CPU it moves queued tasks, oldest first, allowed here
  and free to move, not cache-hot (unless the domain's passes failed more than
  ``cache_nice_tries`` times in a row), and, moving load, not heavier than what is left to move
  (halved per failed pass). Domain parameters: :class:`SchedDomain`.
- **For idle CPUs whose tick is stopped** (``nohz_balancer_kick``): a busy CPU whose tick finds
  tasks waiting in its queue, or more than one busy CPU in the package (``nr_busy_cpus``), kicks
  the first such idle CPU with an IPI, at most once per the smallest domain's interval
  (``nohz.next_balance``), and that CPU balances on behalf of every tick-stopped idle CPU
  (``_nohz_idle_balance``) the domains whose interval has elapsed, waking those that pulled a task.

The whole package is one last-level-cache domain (the presets are single-socket parts). Not
modelled: wake_affine's load comparison for busy CPUs, ``recent_used_cpu``, the scan-depth limit
of ``select_idle_cpu`` (every CPU of the domain is examined), PELT: a group's load is its runnable
tasks' weights now, not their decayed averages; NUMA. When passes keep failing, the busiest CPU's stopper pushes its running task
(active balancing: :mod:`models.os.stopper`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from models.os.task import NICE_0_LOAD, Task

if TYPE_CHECKING:
    from models.os.sched import CpuRunner

#: sg_lb_stats group types (group_type, in order of busyness): fewer runnable tasks than CPUs, as
#: many, more
HAS_SPARE: Final = 0
FULLY_BUSY: Final = 1
OVERLOADED: Final = 2
#: sysctl_sched_nr_migrate: tasks examined per balance pass at most (kernel/sched/core.c, 5.x)
SCHED_NR_MIGRATE: Final = 32
#: MAX_PINNED_INTERVAL (kernel/sched/fair.c): how far a domain's balance interval may double while
#: every task it could move is pinned, ns (512 ms)
MAX_PINNED_INTERVAL_NS: Final = 512e6


def is_idle(runner: CpuRunner) -> bool:
    """``available_idle_cpu``: nothing running (the idle task, possibly in an interrupt) and
    nothing queued."""
    return runner.current is None and not runner.rq


def may_run_on(task: Task, cpu: int) -> bool:
    """The task may be moved to CPU ``cpu``: its affinity allows it and its engine thread is free
    to move (``can_migrate``)."""
    return task.affinity is not None and cpu in task.affinity and task.owner is not None and task.owner.can_migrate()


def select_wake_cpu(runners: list[CpuRunner], task: Task, waker: CpuRunner) -> tuple[CpuRunner, int]:
    """The runner a woken ``task`` (with an affinity) should run on, and the CPUs examined."""
    prev = runners[task.cpu]
    if is_idle(prev):
        return prev, 1
    allowed = task.affinity
    assert allowed is not None  # (only tasks with an affinity are placed)
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


def pull_candidate(runners: list[CpuRunner], this: CpuRunner, now: float,
                   migration_cost_ns: float) -> tuple[Any, Any, int]:
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
    movable = [t for t in best.rq if may_run_on(t, this.id) and now - t.last_ran >= migration_cost_ns]
    if not movable:
        return None, None, n - 1
    return best, min(movable, key=lambda t: (t.last_ran, t.tid)), n - 1


def nr_running(runner: CpuRunner) -> int:
    """Tasks on a runqueue: the running one and the queued ones."""
    return (1 if runner.current is not None else 0) + len(runner.rq)


class SchedDomain:
    """One CPU's view of one scheduling domain (the kernel keeps a ``struct sched_domain`` per CPU
    and level): the domain's CPUs, its groups (the child domains: single CPUs in the SMT pair,
    cores in the package) and this CPU's balancing state. Defaults: kernel/sched/topology.c
    sd_init (5.x): ``imbalance_pct`` 110 for the SMT level, 117 above; ``cache_nice_tries`` 0 for
    the SMT level, 1 above; ``SD_PREFER_SIBLING`` on the SMT level, so the level above spreads
    tasks evenly over its groups."""

    __slots__ = ("runners", "groups", "imbalance_pct", "cache_nice_tries", "prefer_sibling", "nr_balance_failed",
                 "min_interval_ns", "max_interval_ns", "balance_interval_ns")

    def __init__(self, runners: tuple, groups: tuple, *, smt_level: bool, prefer_sibling: bool) -> None:
        self.runners = runners
        self.groups = groups
        self.imbalance_pct = 110 if smt_level else 117
        self.cache_nice_tries = 0 if smt_level else 1
        self.prefer_sibling = prefer_sibling  # the child level (SMT pairs) prefers siblings: spread tasks
        self.nr_balance_failed = 0  # passes in a row that found an imbalance and moved nothing
        #: sd_init: min_interval = the domain's CPU count in ms, max_interval twice that; the
        #: current sd->balance_interval starts at the minimum (see :func:`_tune_interval`)
        self.min_interval_ns = len(runners) * 1e6
        self.max_interval_ns = 2.0 * self.min_interval_ns
        self.balance_interval_ns = self.min_interval_ns

    def __len__(self) -> int:
        return len(self.runners)


def task_load(task) -> float:
    """The task's load weight (sched_prio_to_weight: 1024 at nice 0)."""
    return NICE_0_LOAD / task.vscale


def cpu_load(runner) -> float:
    """The load of a runqueue: its runnable tasks' load weights (the running one included)."""
    cur = runner.current
    return sum(task_load(t) for t in ((cur,) if cur is not None else ()) + tuple(runner.rq))


class _GroupStats:
    """sg_lb_stats of one group: runnable tasks, CPUs, idle CPUs, load (the runnable tasks' load
    weights) and its type."""

    __slots__ = ("group", "nr", "cpus", "idle", "load", "kind", "avg_load")

    def __init__(self, group: tuple) -> None:
        self.group = group
        self.cpus = len(group)
        self.nr = sum(nr_running(r) for r in group)
        self.idle = sum(1 for r in group if is_idle(r))
        self.load = sum(cpu_load(r) for r in group)
        self.kind = HAS_SPARE if self.nr < self.cpus else FULLY_BUSY if self.nr == self.cpus else OVERLOADED
        self.avg_load = self.load / self.cpus  # per CPU of capacity SCHED_CAPACITY_SCALE

    def busier_than(self, other: "_GroupStats") -> bool:
        """update_sd_pick_busiest: a higher type; among overloaded or fully busy groups the higher
        average load; among groups with spare capacity the fewer idle CPUs, then more tasks."""
        if self.kind != other.kind:
            return self.kind > other.kind
        if self.kind != HAS_SPARE:
            return self.avg_load > other.avg_load
        if self.idle != other.idle:
            return self.idle < other.idle
        return self.nr > other.nr


def balance_pull(domain: SchedDomain, this, now: float, migration_cost_ns: float) -> tuple[Any, list]:
    """``load_balance`` of runner ``this`` over one ``domain`` (this CPU's copy): (the runqueue
    pulled from, the tasks pulled, oldest first); (the busiest runqueue, []) when nothing could
    move from it (a failed pass: active balancing may push its running task); (None, []) when the
    domain is balanced or nothing may run here at all. Updates ``domain.nr_balance_failed``."""
    local = busiest = None
    total_load, total_cpus = 0.0, 0
    for group in domain.groups:
        st = _GroupStats(group)
        total_load += st.load
        total_cpus += st.cpus
        if this in group:
            local = st
        elif st.nr and (busiest is None or st.busier_than(busiest)):
            busiest = st
    assert local is not None
    kind, imbalance = _imbalance(domain, is_idle(this), local, busiest, total_load / total_cpus)
    if kind is None:
        domain.nr_balance_failed = 0  # out_balanced
        _tune_interval(domain, False)
        return None, []
    assert busiest is not None  # (an imbalance has a busiest group)
    src = _busiest_queue(busiest.group, kind, imbalance)
    if src is None:
        domain.nr_balance_failed = 0
        _tune_interval(domain, False)
        return None, []
    tasks, all_pinned = _detach(domain, src, this, now, migration_cost_ns, kind, imbalance)
    if tasks or not all_pinned:
        domain.balance_interval_ns = domain.min_interval_ns  # unbalanced: the interval is reset
    if tasks or all_pinned:
        domain.nr_balance_failed = 0  # moved, or out_all_pinned
        if not tasks:
            _tune_interval(domain, True)
        return (src if tasks else None), tasks
    domain.nr_balance_failed += 1  # an imbalance, and nothing could move (cache-hot, too heavy, running)
    return src, []


def _tune_interval(domain: SchedDomain, all_pinned: bool) -> None:
    """load_balance's out_balanced / out_all_pinned: a pass that found nothing to move doubles
    the domain's balance interval, up to ``max_interval`` (twice the minimum), or up to
    MAX_PINNED_INTERVAL when every task it could have moved is pinned (kernel/sched/fair.c, 5.x;
    a pass that moved or failed resets it to the minimum)."""
    iv = domain.balance_interval_ns
    if (all_pinned and iv < MAX_PINNED_INTERVAL_NS) or iv < domain.max_interval_ns:
        domain.balance_interval_ns = 2.0 * iv


def _imbalance(domain: SchedDomain, this_idle: bool, local: _GroupStats, busiest: _GroupStats | None,
               avg_load: float) -> tuple[str | None, float]:
    """find_busiest_group's checks and calculate_imbalance: (``"task"`` and a number of tasks, or
    ``"load"`` and an amount of load weight; None when balanced)."""
    if busiest is None:
        return None, 0.0
    if local.kind > busiest.kind:
        return None, 0.0  # the local group is busier than the busiest one
    if local.kind == OVERLOADED and (local.avg_load >= busiest.avg_load or local.avg_load >= avg_load
                                     or 100 * busiest.avg_load <= domain.imbalance_pct * local.avg_load):
        return None, 0.0
    force = domain.prefer_sibling and local.kind == HAS_SPARE and busiest.nr > local.nr + 1
    if not force and busiest.kind != OVERLOADED:
        if not this_idle:
            return None, 0.0  # a busy CPU pulls only from an overloaded group
        if busiest.cpus > 1 and local.idle <= busiest.idle + 1:
            return None, 0.0  # no imbalance in idle CPUs worth moving
        if busiest.nr == 1:
            return None, 0.0
    if local.kind == HAS_SPARE:  # (inside the last-level cache: spread tasks, not load)
        if busiest.cpus == 1 or domain.prefer_sibling:
            n = (busiest.nr - local.nr) >> 1 if busiest.nr > local.nr else 0
        else:
            n = max(0, local.idle - busiest.idle) >> 1
        return ("task", float(n)) if n else (None, 0.0)
    if local.avg_load >= busiest.avg_load:
        return None, 0.0
    load = min((busiest.avg_load - avg_load) * busiest.cpus, (avg_load - local.avg_load) * local.cpus)
    return ("load", load) if load > 0 else (None, 0.0)


def _busiest_queue(group: tuple, kind: str, imbalance: float):
    """find_busiest_queue: the group's CPU with the most runnable tasks (moving tasks) or the most
    load (moving load: not a CPU whose single task weighs more than the imbalance)."""
    best, best_key = None, 0.0
    for r in group:
        n = nr_running(r)
        if not n:
            continue
        if kind == "task":
            key = float(n)
        else:
            key = cpu_load(r)
            if n == 1 and key > imbalance:
                continue
        if key > best_key:
            best, best_key = r, key
    return best


def _detach(domain: SchedDomain, src, this, now: float, migration_cost_ns: float, kind: str,
            imbalance: float) -> tuple[list, bool]:
    """detach_tasks: (the queued tasks of ``src`` to move to ``this``, oldest first; whether none
    of them may run on ``this``). A task is skipped while cache-hot, unless the domain's passes
    failed more than ``cache_nice_tries`` times in a row; moving load, a task heavier than what
    is left of the imbalance is skipped (its load halved per failed pass: shr_bound)."""
    out: list = []
    all_pinned = True
    this_idle = is_idle(this)
    runnable = nr_running(src)
    hot_ok = domain.nr_balance_failed > domain.cache_nice_tries
    for n, t in enumerate(sorted(src.rq, key=lambda t: (t.last_ran, t.tid))):
        if n >= SCHED_NR_MIGRATE or (this_idle and runnable <= 1):
            break
        if not may_run_on(t, this.id):
            continue
        all_pinned = False
        if now - t.last_ran < migration_cost_ns and not hot_ok:
            continue
        if kind == "load":
            load = task_load(t) / (1 << min(domain.nr_balance_failed, 31))
            if load > imbalance:
                continue
            imbalance -= task_load(t)
        else:
            imbalance -= 1
        out.append(t)
        runnable -= 1
        if imbalance <= 0:
            break
    if src.current is not None and src.current.affinity is not None and this.id in src.current.affinity:
        all_pinned = False  # (the running task could move, by active balancing: not modelled)
    return out, all_pinned and not out

