"""Wake-ups and where woken tasks run: ``try_to_wake_up`` and CFS's choice of a CPU at each wake-up
(Linux 5.x, ``kernel/sched/core.c``, ``kernel/sched/fair.c``).

A wake-up from code running on a CPU (an IRQ handler, a poller, a submitting task) costs that CPU
``wakeup_cycles`` plus the enqueue's load and pressure accounting, carried into what it runs next.
A task woken on another CPU's runqueue is enqueued there by an IPI. The woken task's virtual time
is placed at no less than ``min_vruntime - sched_latency/2`` (``place_entity``, GENTLE_FAIR_SLEEPERS);
it preempts the running task (``need_resched``, acted on at the next preemption point, a poll loop
at once) when that one's virtual time is ahead by more than ``wakeup_granularity_ns`` scaled to the
wakee's weight.

A task with an affinity (``Task.affinity``: fio threads without a CPU list, or with a
``cpus_allowed`` set under the ``shared`` policy) is placed by the kernel, not pinned. At every
wake-up (``select_task_rq_fair`` -> ``select_idle_sibling``): the task's previous CPU if it is idle
(nothing running, nothing queued: ``available_idle_cpu``); else the waker's CPU if it is idle
(``wake_affine``'s idle test); else the first idle *core* of the last-level-cache domain (both SMT
siblings idle, ``select_idle_core``), scanning from the previous CPU; else the first idle CPU
(``select_idle_cpu``); else the previous CPU, where the task queues. Each CPU examined beyond the
first costs ``idle_scan_cycles`` on the waking CPU; a move costs ``migrate_cycles``
(``set_task_cpu``: detach and attach of the task's load averages) and counts in
``Task.nr_migrations``. The whole package is one last-level-cache domain (the presets are
single-socket parts). Not modelled: wake_affine's load comparison for busy CPUs,
``recent_used_cpu``, the scan-depth limit of ``select_idle_cpu`` (every CPU of the domain is
examined). Tasks also move by load balancing: :mod:`models.os.sched.balance`.
"""

from __future__ import annotations

from models.cpu.core import LogicalCpu
from models.cpu.cpuidle import CpuidleGovernor
from models.os.costs.bundle import Cost
from models.os.costs.tables import CostTable
from models.os.interfaces import Balancer
from models.os.sched import eevdf
from models.os.sched.cfs import Cfs
from models.os.sched.config import SchedConfig
from models.os.sched.execution import IDLE, POLL, Execution
from models.os.sched.host import SchedHost
from models.os.sched.task import RUNNABLE, SLEEPING, WAKING, Task


def is_idle(runner: Execution) -> bool:
    """``available_idle_cpu`` -> ``idle_cpu`` (6.1 kernel/sched/core.c): nothing running (the idle
    task, possibly in an interrupt), nothing queued, and no wake-up on its way through the wake
    list (``rq->ttwu_pending``)."""
    return runner.current is None and not runner.rq and not runner.ttwu_pending


def may_run_on(task: Task, cpu: int) -> bool:
    """The task may be moved to CPU ``cpu``: its affinity allows it and its engine thread is free
    to move (``can_migrate``)."""
    return task.affinity is not None and cpu in task.affinity and task.owner is not None and task.owner.can_migrate()


def select_wake_cpu(runners: list[Wakeup], task: Task, waker: Wakeup) -> tuple[Wakeup, int]:
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


def select_fork_cpu(runners: list[Execution], allowed, start: int) -> Execution:
    """The CPU a new task starts on (wake_up_new_task -> select_task_rq_fair with SD_BALANCE_FORK:
    find_idlest_cpu): among ``allowed``, an idle core (both SMT siblings idle) first, then an idle
    CPU, then the CPU with the fewest runnable tasks; the first found scanning from ``start`` (the
    creating task's CPU) on a tie. (The package is one domain, as for wake-ups.)"""
    n = len(runners)

    def key(cpu: int) -> tuple:
        r = runners[cpu]
        sib = r.sibling_runner
        idle = is_idle(r)
        return (not (idle and (sib is None or is_idle(sib))), not idle, r.nr_running, (cpu - start) % n)

    return runners[min(allowed, key=key)]


class Wakeup(Cfs):
    """The wake-up level of a CPU's runner (models.os.sched.execution)."""

    def __init__(
        self, host: SchedHost, cpu: LogicalCpu, governor: CpuidleGovernor, sched: SchedConfig, balancer: Balancer
    ):
        super().__init__(host, cpu, governor, sched, balancer)
        k = host.kcosts
        ct: CostTable = host.costs
        # a wake-up enqueues the task (with its load and pressure accounting); kernel threads live
        # in the root cgroup: the accounting at one level
        self.cost_wakeup = ct.get("wakeup", actions={"wakeup": 1, **k.accounting_actions()})
        self.cost_wakeup_kthread = ct.get("wakeup_kthread", actions={"wakeup": 1, "pelt_update": 1, "psi_change": 1})
        self.cost_migrate = ct.get("migrate", actions={"migrate": 1})
        # a wake-up on another CPU's runqueue: the waker queues the task on the target's wake list and
        # sends the IPI (ttwu_queue_wakelist), whose handler takes it off (sched_ttwu_pending); their
        # cycles are the wake-up's and the IPI's
        self.cost_ttwu_queue = ct.get("ttwu_queue", actions={"ttwu_queue": 1})
        self.cost_ttwu_pending = ct.get("ttwu_pending", actions={"ttwu_pending": 1})
        # select_idle_sibling's path past a busy CPU (its CPUs examined: idle_scan), cycles idle_scan's
        self.cost_sis = ct.get("select_idle_sibling", actions={"select_idle_sibling": 1})
        self._scan_costs: dict[int, Cost] = {}
        #: a remote wake-up's cache-line fetch, by its cycles (Package.line_transfer_cycles)
        self._line_costs: dict[float, Cost] = {}
        self._sleeper_credit_ns = self.tunables.latency_ns / 2  # CFS place_entity (GENTLE_FAIR_SLEEPERS)
        self._wakeup_gran_ns = self.tunables.wakeup_granularity_ns
        #: every CPU's runner, as this level knows them (the balancer's list, as ``runners`` is: typed
        #: here, compiled, a runner taken from it is checked against this class, the second of the
        #: runner's bases, where ``runners`` checks against the chain's first level, the eighth)
        self.wake_targets: list[Wakeup] = []

    def wake(self, task: Task) -> None:
        """try_to_wake_up from code running on this CPU (IRQ handler, poller); its cycles are
        carried into what this CPU runs next."""
        if task.state != SLEEPING:
            return
        cost = self.cost_wakeup_kthread if task.kthread else self.cost_wakeup
        self.add_carry(cost)
        target = self.wake_targets[task.cpu]
        if task.affinity is not None and not task.delayed and not is_idle(target):
            # its CPU is busy: the fair class looks for another (a delayed task is still queued
            # there: ttwu_runnable requeues it where it is)
            target = self._place_woken(task, target)
        if target is self:
            self._enqueue_woken(task)
        else:
            # the wake-up crosses CPUs through memory: the waker writes into the target's run queue
            # (its lock, or its wake list: ttwu_queue_wakelist's llist_add), a line last written
            # there; the target then reads the task's wake entry the waker wrote. One line each way,
            # a stall of the fabric's transfer time (Package.line_transfer_cycles: more across sockets)
            cycles = self.host.pkg.line_transfer_cycles(target.id, self.id)
            task.state = WAKING  # a second wake-up before the IPI lands finds it waking (ttwu)
            target.ttwu_pending += 1
            self.add_carry(self.cost_ttwu_queue)
            if cycles:
                line = self.line_cost(cycles)
                self.add_carry(line)
                self.send_ipi(target, lambda r, t=task, c=line: r._enqueue_remote(t, c))
            else:
                self.send_ipi(target, lambda r, t=task: r._enqueue_remote(t, None))

    def line_cost(self, cycles: float) -> Cost:
        """The bundle of one cache-line fetch of ``cycles`` (a stall: the 'cache' layer)."""
        cost = self._line_costs.get(cycles)
        if cost is None:
            cost = self._line_costs[cycles] = self.host.costs.get("remote_wake_line", cache=cycles)
        return cost

    def _enqueue_remote(self, task: Task, line: Cost | None) -> None:
        """A task woken from another CPU arrives (the IPI's handler takes it off the wake list): its
        wake entry's line is fetched from the waker (``line``: none within a core), then it is
        enqueued."""
        self.ttwu_pending -= 1
        self.add_carry(self.cost_ttwu_pending)
        if line is not None:
            self.add_carry(line)
        self._enqueue_woken(task)

    def _enqueue_woken(self, task: Task) -> None:
        if task.state != SLEEPING and task.state != WAKING:
            return
        iowait = task.iowait
        if iowait:
            slept_on = task.slept_on
            assert slept_on is not None
            slept_on.iowaiters -= 1  # nr_iowait of the runqueue it slept on (it may have moved)
            task.iowait = False
        task.state = RUNNABLE
        if not task.kthread and self.no_user_task():
            self.add_carry(self.cost_group_enqueue)  # the first of its cgroup here: its levels are queued
        if self.cpufreq_hook is not None:
            self.cpufreq_hook(self, self.engine.now, iowait)
        cur = self.current
        if self.eevdf:  # place_entity with its lag (or requeue_delayed_entity), then EEVDF's check
            alone = not self.rq and not self.delayed
            if task.delayed:
                self.requeue_delayed(task)
            else:
                self._place(task)
            self.rq.append(task)
            preempt = cur is not None and self.wakeup_preempt_eevdf(task, cur, alone)
        else:
            floor = self.min_vruntime - self._sleeper_credit_ns
            if task.vruntime < floor:
                task.vruntime = floor
            self.rq.append(task)
            # wakeup_preempt_entity: the granularity in the wakee's virtual time (calc_delta_fair)
            preempt = (
                cur is not None
                and cur.vruntime + max(self.engine.now - cur.ran_since, 0.0) * cur.vscale - task.vruntime
                > self._wakeup_gran_ns * task.vscale
            )
        if cur is not None:
            if preempt:
                self.need_resched = True
                if self.mode == POLL:
                    self._poll_interrupt_for_resched()
            else:
                self._arm_slice()
        elif self.mode == IDLE:
            self._leave_idle()

    def _place_woken(self, task: Task, prev: Wakeup) -> Wakeup:
        """select_task_rq_fair for a task woken while its CPU is busy (models.os.sched.placement): the
        CPUs examined cost this CPU ``idle_scan_cycles`` each, a move ``migrate_cycles``."""
        owner = task.owner
        if owner is None or not owner.can_migrate():
            return prev
        target, examined = select_wake_cpu(self.wake_targets, task, self)
        self.add_carry(self.scan_cost(examined - 1))
        if examined > 2:  # past the previous CPU and the waker's: the LLC is searched
            self.add_carry(self.cost_sis)
        if target is not prev:
            self._migrate(task, target)
        return target

    def scan_cost(self, cpus: int) -> Cost:
        """The bundle of examining ``cpus`` more CPUs (select_idle_sibling, newidle_balance)."""
        cost = self._scan_costs.get(cpus)
        if cost is None:
            cost = self._scan_costs[cpus] = self.host.costs.get("select_idle_scan", actions={"idle_scan": cpus})
        return cost

    def move_queued(self, task: Task, src: Cfs, target: Cfs) -> None:
        """Move queued ``task`` from ``src``'s runqueue to ``target``'s (detach_task /
        attach_task), charged to this CPU; its virtual time re-based on the new queue."""
        if not self.eevdf:
            src.rq.remove(task)
            self._migrate(task, target)
            task.vruntime += target.min_vruntime - src.min_vruntime
            target.rq.append(task)
            return
        # EEVDF: dequeued with its lag (and, 6.12, its deadline relative: PLACE_REL_DEADLINE), placed
        # on the new queue with both
        cur = src.current
        v = src.cur_vruntime(cur, self.engine.now) if cur is not None else 0.0
        avg, load = eevdf.queue_sums(src.rq, src.delayed, cur, v, src.min_vruntime)
        task.vlag = eevdf.entity_lag(avg, load, src.min_vruntime, task, task.vruntime, self._tick_ns)
        rel = task.deadline - task.vruntime
        src.rq.remove(task)
        self._migrate(task, target)
        target._place(task)
        if self.rel_deadline:
            task.deadline = task.vruntime + rel
        target.rq.append(task)

    def _migrate(self, task: Task, target: Execution) -> None:
        """set_task_cpu: the task's runqueue becomes ``target``'s (its load averages move), charged
        to this CPU; its engine thread follows (models.ioengines: its runner and queues)."""
        self.add_carry(self.cost_migrate)
        task.cpu = target.id
        task.nr_migrations += 1
        self.balancer.migrations += 1
        task.owner.migrated(target)
