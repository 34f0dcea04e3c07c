"""Load balancing (Linux 5.x, ``kernel/sched/fair.c``): the scheduler-wide state (which tasks may
move, the scheduling domains, nohz idle balancing) and the passes that move queued tasks between
CPUs. Balancing runs at ticks and idle entries, not per IO step: one object for the whole scheduler,
:class:`LoadBalancer`, reading the runners' public surface (``current``, ``rq``, ``nr_running``,
``load``, ``nohz_idle``, ``has_blocked_load``, ``last_task_ns``) and moving tasks with
``CpuRunner.move_queued``. Wake-up placement is :mod:`models.os.sched.placement`.

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
  Otherwise, every NOHZ_STATS_PERIOD_NS, a busy tick kicks one to bring the blocked load averages
  of idle CPUs up to date (a stats kick).
- **When passes keep failing** (active balancing): the busiest CPU's stopper pushes its running
  task (:mod:`models.os.sched.stopper`).

The whole package is one last-level-cache domain (the presets are single-socket parts). Not
modelled: PELT (a group's load is its runnable tasks' weights now, not their decayed averages);
NUMA.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, cast

from models.os.interfaces import Balancer
from models.os.irq.irqwork import no_effect
from models.os.sched.config import SchedConfig
from models.os.sched.execution import Execution
from models.os.sched.host import SchedHost
from models.os.sched.idle import BLOCKED_LOAD_DECAY_NS
from models.os.sched.placement import Wakeup, is_idle, may_run_on
from models.os.sched.stopper import Stopper
from models.os.sched.task import task_load

if TYPE_CHECKING:
    from models.cpu.core import Package
    from models.os.sched.runner import CpuRunner

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
#: nohz.next_blocked's period: idle CPUs' blocked load averages are brought up to date at most this
#: often, ns (msecs_to_jiffies(LOAD_AVG_PERIOD): 32 ms, kernel/sched/fair.c, 5.x)
NOHZ_STATS_PERIOD_NS: Final = 32e6


def _nohz_idle_balance(runner) -> None:
    """The effect of a nohz kick's IPI on the kicked CPU."""
    balancer = runner.balancer
    balancer.nohz_idle_balance(runner, balancer.nohz_kick_balance)


class LoadBalancer(Balancer):
    """The scheduler-wide side of CFS: which tasks may move, task migrations, each CPU's scheduling
    domains and balancing state, nohz idle balancing (``nohz``), the CPUs' stoppers. Passes run on
    (and are charged to) the runner given as ``by``."""

    def __init__(self, host: SchedHost, sched: SchedConfig):
        # movable_tasks: tasks the scheduler may move (an IO engine sets it when it gives a task an
        # affinity); False: every task is pinned, and no balancing pass runs. migrations: task
        # migrations (set_task_cpu to another CPU: wake-ups and balancing)
        super().__init__(sched.migration_cost_ns)
        self.host = host
        self.engine = host.engine
        self.nohz_next_balance = 0.0  # nohz.next_balance: no idle balance kick before this time, ns
        self.nohz_next_blocked = 0.0  # nohz.next_blocked: no stats kick before this time, ns
        self.nohz_kick_pending = False  # a kicked CPU has not run its nohz balance yet (kick_ilb's nohz_flags)
        self.nohz_kick_balance = False  # ... and it is to balance, not only to update blocked load
        self.nohz_stats_kicks = 0  # stats-only kicks (NOHZ_STATS_KICK) sent
        self._periodic = sched.periodic_balance
        self._busy_factor = sched.balance_busy_factor
        self._tick_ns = 1e9 / sched.tick_hz
        #: max_load_balance_interval, ns (HZ x CPUs / 10 jiffies: set with the domains)
        self._max_balance_ns = 1e8
        self.runners: list[CpuRunner] = []
        #: each CPU's scheduling domains, smallest first (its own copy: see :meth:`_set_domains`),
        #: and the time each was last balanced
        self.domains: list[tuple[SchedDomain, ...]] = []
        self.last_balance: list[list[float]] = []
        self.stoppers: dict[int, Stopper] = {}  # each CPU's stopper (active balancing), made on first use
        k = host.kcosts
        ct = host.costs
        self.cost_newidle = ct.get("newidle_balance", actions={"newidle_balance": 1})
        self.cost_blocked_update = ct.get("update_blocked_averages", actions={"pelt_update": k.cgroup_depth + 1})
        self.cost_balance = ct.get("load_balance", actions={"load_balance": 1})

    def attach(self, runners: list[CpuRunner], pkg: Package) -> None:
        """Every runner exists: each learns the others and its SMT sibling; with periodic
        balancing, each gets its scheduling domains."""
        self.runners = runners
        for r in runners:
            sib = pkg.sibling_of(r.cpu)
            r.sibling_runner = runners[sib.id] if sib is not None else None
            r.runners = cast("list[Execution]", runners)  # (the same list: each runner's view of all)
            r.wake_targets = cast("list[Wakeup]", runners)
        self.domains = [() for _r in runners]
        self.last_balance = [[] for _r in runners]
        if self._periodic:
            self._set_domains()

    def _set_domains(self) -> None:
        """Each runner's scheduling domains, smallest first: its SMT pair (groups: its CPUs), the
        package, one last-level cache (groups: the cores). Each CPU has its own copy (its balancing
        state: failed passes, balance interval)."""
        runners = self.runners
        smt = any(r.sibling_runner is not None for r in runners)
        cores: dict = {}
        for r in runners:
            cores.setdefault(min(r.id, r.sibling_runner.id) if r.sibling_runner is not None else r.id, []).append(r)
        core_groups = tuple(tuple(sorted(c, key=lambda x: x.id)) for _k, c in sorted(cores.items()))
        for r in runners:
            levels = []
            if r.sibling_runner is not None:
                pair = tuple(sorted((r, r.sibling_runner), key=lambda x: x.id))
                levels.append(SchedDomain(pair, tuple((x,) for x in pair), smt_level=True, prefer_sibling=False))
            if len(runners) > 1:
                levels.append(SchedDomain(tuple(runners), core_groups, smt_level=False, prefer_sibling=smt))
            self.domains[r.id] = tuple(levels)
            self.last_balance[r.id] = [0.0] * len(levels)
        self._max_balance_ns = len(runners) * 1e8

    # -- new-idle balancing -------------------------------------------------------------------
    def newidle_balance(self, this: CpuRunner, now: float) -> bool:
        """newidle_balance for ``this``, about to idle: pull a queued task it may run (charged to
        it, carried into the pulled task's switch-in); True when it did."""
        src, task, examined = pull_candidate(self.runners, this, now, self.migration_cost_ns)
        if task is None:
            return False
        this.add_carry(self.cost_newidle)
        this.add_carry(this.scan_cost(examined))
        this.move_queued(task, src, this)
        return True

    # -- periodic balancing and nohz kicks ------------------------------------------------------
    def sched_softirq(self, by: CpuRunner) -> None:
        """SCHED_SOFTIRQ after a tick on ``by`` (with periodic balancing: it has domains)."""
        if self.domains[by.id]:
            self.balance_tick(by)

    def balance_tick(self, by: CpuRunner) -> None:
        """SCHED_SOFTIRQ after a tick: rebalance_domains for CPU ``by`` (each domain whose interval,
        stretched while busy, has elapsed; when any task may move), then nohz_balancer_kick: a
        balance kick if tasks wait there (or more than one CPU is busy), else a stats kick when idle
        CPUs' blocked load is due for an update."""
        now = self.engine.now
        busy = by.current is not None
        if self.movable_tasks:
            last = self.last_balance[by.id]
            for level, domain in enumerate(self.domains[by.id]):
                if now - last[level] >= self.balance_interval_ns(domain, busy):
                    last[level] = now
                    self._balance(by, by, domain, now)
        if not busy and not by.rq:
            return  # an idle CPU's tick kicks nobody: rq->idle_balance
        if self.movable_tasks and now >= self.nohz_next_balance and (by.rq or self._nr_busy_cpus() > 1):
            self._nohz_kick(by, now, True)
        elif now >= self.nohz_next_blocked and self._idle_blocked_load():
            self._nohz_kick(by, now, False)

    def _idle_blocked_load(self) -> bool:
        """nohz.has_blocked: a CPU idle with its tick stopped may still carry blocked load."""
        for r in self.runners:
            if r.has_blocked_load and r.nohz_idle:
                return True
        return False

    def balance_interval_ns(self, domain: SchedDomain, busy: bool) -> float:
        """get_sd_balance_interval: the domain's balance interval, times ``sched.balance_busy_factor``
        less one tick when its CPU is busy (so the levels' busy periods are not multiples of each
        other), within one tick and max_load_balance_interval (HZ x CPUs / 10 jiffies: CPUs / 10 s)."""
        iv: float = domain.balance_interval_ns
        if busy:
            iv = iv * self._busy_factor - self._tick_ns
        if iv < self._tick_ns:
            return self._tick_ns
        return iv if iv < self._max_balance_ns else self._max_balance_ns

    def _nr_busy_cpus(self) -> int:
        """``sd_llc_shared->nr_busy_cpus``: CPUs of the package (one LLC) not idle with their tick
        stopped."""
        n = 0
        for r in self.runners:
            if not r.nohz_idle:
                n += 1
        return n

    def _balance(self, by: CpuRunner, this: CpuRunner, domain: SchedDomain, now: float) -> bool:
        """One load_balance pass over ``domain`` on behalf of ``this``, run (and charged) on ``by``;
        True when it pulled tasks to ``this``."""
        by.add_carry(self.cost_balance)
        by.add_carry(by.scan_cost(len(domain) - 1))
        src, tasks = balance_pull(domain, this, now, self.migration_cost_ns)
        if not tasks:
            if src is not None and domain.nr_balance_failed > domain.cache_nice_tries + 2:
                self._active_balance(by, src, this, domain)
            return False
        for task in tasks:
            by.move_queued(task, src, this)
            this.note_enqueue(now)
        this.arm_slice()
        return True

    def _active_balance(self, by: CpuRunner, src: CpuRunner, this: CpuRunner, domain: SchedDomain) -> None:
        """need_active_balance: passes over ``domain`` kept failing, so ``src``'s stopper pushes
        its running task to ``this`` (if that task may run there and no push is pending)."""
        cur = src.current
        if cur is None or cur.kthread or not may_run_on(cur, this.id):
            return  # pinned: out_one_pinned
        stopper = self.stoppers.get(src.id)
        if stopper is None:
            stopper = self.stoppers[src.id] = Stopper(self.host, src)
        if not stopper.pending:
            stopper.push(this, by)
        domain.nr_balance_failed = domain.cache_nice_tries + 1

    def _nohz_kick(self, by: CpuRunner, now: float, balance: bool) -> None:
        """kick_ilb from busy CPU ``by``: if a CPU idles with its tick stopped, kick the first one
        (an IPI) to update the blocked load of every such CPU and, for a balance kick (tasks wait
        on ``by``, or more than one CPU of the package is busy: tasks may be packed on SMT siblings
        while cores idle), to balance them, at most once per the smallest domain's interval."""
        for r in self.runners:
            if r.nohz_idle and r is not by:
                if balance:
                    self.nohz_next_balance = now + self.domains[by.id][0].min_interval_ns
                    self.nohz_kick_balance = True
                if self.nohz_kick_pending:
                    return  # one kick at a time: a balance kick joins the pending one (nohz_flags)
                if not balance:
                    self.nohz_stats_kicks += 1
                self.nohz_kick_pending = True
                by.send_ipi(r, _nohz_idle_balance)
                return

    def nohz_idle_balance(self, by: CpuRunner, balance: bool) -> None:
        """_nohz_idle_balance on the kicked CPU ``by``: every tick-stopped idle CPU (``by`` last) has
        its blocked load averages updated (update_nohz_stats: ``pelt_update`` per cgroup level,
        while it has any) and, for a balance kick, is balanced over its domains; each other CPU
        that pulled a task is woken by an IPI. The next stats update is due NOHZ_STATS_PERIOD_NS
        later."""
        now = self.engine.now
        self.nohz_kick_pending = self.nohz_kick_balance = False
        for r in self.runners:
            if r is by or not r.nohz_idle:
                continue
            self.update_blocked(by, r, now)
            if balance and self._idle_rebalance(by, r, now):
                by.send_ipi(r, no_effect)
        self.update_blocked(by, by, now)
        if balance:
            self._idle_rebalance(by, by, now)
        self.nohz_next_blocked = now + NOHZ_STATS_PERIOD_NS

    def update_blocked(self, by: CpuRunner, r: CpuRunner, now: float) -> None:
        """update_nohz_stats for idle CPU ``r``, run (and charged) on ``by``: its blocked load decays
        to zero BLOCKED_LOAD_DECAY_NS after its last task stopped running."""
        if not r.has_blocked_load:
            return
        by.add_carry(self.cost_blocked_update)
        if now - r.last_task_ns >= BLOCKED_LOAD_DECAY_NS:
            r.has_blocked_load = False

    def _idle_rebalance(self, by: CpuRunner, r: CpuRunner, now: float) -> bool:
        """rebalance_domains for idle CPU ``r``, run on ``by``: each of its domains whose interval
        has elapsed (an idle CPU's: not stretched), until one pulls; True when one did."""
        last = self.last_balance[r.id]
        for level, domain in enumerate(self.domains[r.id]):
            if now - last[level] >= self.balance_interval_ns(domain, False):
                last[level] = now
                if self._balance(by, r, domain, now):
                    return True
        return False


def pull_candidate(
    runners: list[CpuRunner], this: CpuRunner, now: float, migration_cost_ns: float
) -> tuple[Any, Any, int]:
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


class SchedDomain:
    """One CPU's view of one scheduling domain (the kernel keeps a ``struct sched_domain`` per CPU
    and level): the domain's CPUs, its groups (the child domains: single CPUs in the SMT pair,
    cores in the package) and this CPU's balancing state. Defaults: kernel/sched/topology.c
    sd_init (5.x): ``imbalance_pct`` 110 for the SMT level, 117 above; ``cache_nice_tries`` 0 for
    the SMT level, 1 above; ``SD_PREFER_SIBLING`` on the SMT level, so the level above spreads
    tasks evenly over its groups."""

    __slots__ = (
        "runners",
        "groups",
        "imbalance_pct",
        "cache_nice_tries",
        "prefer_sibling",
        "nr_balance_failed",
        "min_interval_ns",
        "max_interval_ns",
        "balance_interval_ns",
    )

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


class _GroupStats:
    """sg_lb_stats of one group: runnable tasks, CPUs, idle CPUs, load (the runnable tasks' load
    weights) and its type."""

    __slots__ = ("group", "nr", "cpus", "idle", "load", "kind", "avg_load")

    def __init__(self, group: tuple) -> None:
        self.group = group
        self.cpus = len(group)
        self.nr = sum(r.nr_running for r in group)
        self.idle = sum(1 for r in group if is_idle(r))
        self.load = sum(r.load for r in group)
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


def _imbalance(
    domain: SchedDomain, this_idle: bool, local: _GroupStats, busiest: _GroupStats | None, avg_load: float
) -> tuple[str | None, float]:
    """find_busiest_group's checks and calculate_imbalance: (``"task"`` and a number of tasks, or
    ``"load"`` and an amount of load weight; None when balanced)."""
    if busiest is None:
        return None, 0.0
    if local.kind > busiest.kind:
        return None, 0.0  # the local group is busier than the busiest one
    if local.kind == OVERLOADED and (
        local.avg_load >= busiest.avg_load
        or local.avg_load >= avg_load
        or 100 * busiest.avg_load <= domain.imbalance_pct * local.avg_load
    ):
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
        n = r.nr_running
        if not n:
            continue
        if kind == "task":
            key = float(n)
        else:
            key = r.load
            if n == 1 and key > imbalance:
                continue
        if key > best_key:
            best, best_key = r, key
    return best


def _detach(
    domain: SchedDomain, src, this, now: float, migration_cost_ns: float, kind: str, imbalance: float
) -> tuple[list, bool]:
    """detach_tasks: (the queued tasks of ``src`` to move to ``this``, oldest first; whether none
    of them may run on ``this``). A task is skipped while cache-hot, unless the domain's passes
    failed more than ``cache_nice_tries`` times in a row; moving load, a task heavier than what
    is left of the imbalance is skipped (its load halved per failed pass: shr_bound)."""
    out: list = []
    all_pinned = True
    this_idle = is_idle(this)
    runnable = src.nr_running
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
