"""The run queue of a CPU: CFS picking, context switches, time slices and preemption.

CFS reduced to what IO workloads exercise: tasks ordered by vruntime (CPU time scaled by the
inverse of their nice level's load weight), the smallest picked; time-slice preemption at the
scheduler tick after a slice of ``max(sched_latency / nr_running, min_granularity)`` when others
are runnable; wake-up preemption (models.os.sched.placement) beyond ``wakeup_granularity_ns``. A
switch's cycles are carried into the next task's first segment (no event of its own); a switch
between a task and a kernel thread needs no address-space switch (``kthread_switch_cycles``). A
task leaving the CPU to sleep counts a voluntary switch, a preempted task an involuntary one
(``getrusage`` semantics). A user task switched in after another one, or after a cache-flushing
idle state, first refetches its working set (``cold_switch_refill_cycles``, scaled by the share
displaced by the other work since it left, ``cold_switch_evict_cycles``; ``cold_idle_refill_cycles``).
"""

from __future__ import annotations

import math
from typing import Final

from models.cpu.core import LogicalCpu
from models.cpu.cpuidle import CpuidleGovernor
from models.os.costs.bundle import Cost
from models.os.costs.tables import CostTable
from models.os.interfaces import Balancer
from models.os.irq.entry import IrqEntry
from models.os.sched.config import SchedConfig
from models.os.sched.execution import IDLE, NONE, POLL, RUN
from models.os.sched.host import SchedHost
from models.os.sched.task import DEAD, RUNNABLE, RUNNING, SLEEPING, Task
from simcore.engine import Call, pop_last

#: the switch refill's resolution: the share of a task's working set displaced by other work, in
#: steps of 1/REFILL_STEPS (one precomputed bundle each)
REFILL_STEPS: Final = 8


class Cfs(IrqEntry):
    """The run-queue level of a CPU's runner (models.os.sched.execution)."""

    def __init__(
        self, host: SchedHost, cpu: LogicalCpu, governor: CpuidleGovernor, sched: SchedConfig, balancer: Balancer
    ):
        super().__init__(host, cpu, governor, sched, balancer)
        k = host.kcosts
        ct: CostTable = host.costs
        self.cost_cs = ct.get("ctx_switch", actions={"switch": 1})
        self.cost_kcs = ct.get("ctx_switch_kthread", actions={"kthread_switch": 1})
        self._levels = k.cgroup_depth + 1
        # the cgroup levels queued with a task whose CPU had no other user task (enqueue_entity of each
        # group entity), and dequeued with the last one (dequeue_entity, with its update_curr): parts
        # of the wake-up's and the dequeue's cycles, counted for their memory operations
        self.cost_group_enqueue = ct.get("group_enqueue", actions={"entity_enqueue": k.cgroup_depth})
        self.cost_group_dequeue = ct.get(
            "group_dequeue", actions={"entity_dequeue": k.cgroup_depth, "update_curr": k.cgroup_depth}
        )
        #: the switches' load and pressure accounting bundles (made at first use), by (from the idle
        #: task, previous task a kernel thread, next task a kernel thread, previous task still queued)
        #: as bits 8, 4, 2, 1
        self._cs_accounting: list[Cost | None] = [None] * 16
        self.cost_cs_to_idle = ct.get("ctx_switch_to_idle", actions={"switch": 1, "idle_entry": 1})
        # leaving idle: the idle loop's exit (the idle task's time), then the switch (the task's)
        self.cost_idle_exit = ct.get("idle_exit", actions={"idle_exit": 1})
        # cache warmth: the user task switched in after another one, or after a cache-flushing idle
        # (the switch refill in REFILL_STEPS steps of the share of the working set displaced)
        self.cost_cold_switch = tuple(
            ct.get("cache_refill_switch", cache=k.cold_switch_refill_cycles * n / REFILL_STEPS)
            for n in range(1, REFILL_STEPS + 1)
        )
        self._evict_cycles = k.cold_switch_evict_cycles
        self.run_ns_total = 0.0  # tasks' time on this CPU so far (the warmth marks' clock)
        self.cost_cold_idle = ct.get("cache_refill_idle", cache=k.cold_idle_refill_cycles)
        # a task going to sleep is dequeued (load and pressure accounting), whatever runs next:
        # another task or the idle loop; kernel threads live in the root cgroup (one level)
        self.cost_dequeue = ct.get("dequeue_sleep", actions=k.accounting_actions())
        self.cost_dequeue_kthread = ct.get("dequeue_sleep_kthread", actions={"pelt_update": 1, "psi_change": 1})
        self.min_vruntime = 0.0
        self._slice_call: Call | None = None

    def no_user_task(self, queued_only: bool = False) -> bool:
        """No user task runs (unless ``queued_only``) or waits on this CPU: the user cgroup's group
        entities are not queued here (kernel threads live in the root)."""
        cur = self.current
        if not queued_only and cur is not None and not cur.kthread:
            return False
        for t in self.rq:
            if not t.kthread:
                return False
        return True

    def charge_runtime(self, task: Task, now: float) -> None:
        """Charge ``task`` its time on the CPU up to ``now``. Its clock starts at its pick, which
        can be later than now while carried work (a C-state exit, the previous task's dequeue)
        runs first: then it has run nothing yet."""
        ran = now - task.ran_since
        if ran <= 0.0:
            return
        self.run_ns_total += ran
        task.vruntime += ran * task.vscale
        task.exec_ns += ran
        task.ran_since = now

    def add_task(self, task: Task) -> None:
        """Place a new runnable task on this CPU at time now."""
        self._start_tick()
        task.cpu = self.id
        task.vruntime = self.min_vruntime
        task.state = RUNNABLE
        self.rq.append(task)
        if self.cpufreq_hook is not None:
            self.cpufreq_hook(self, self.engine.now, False)
        if self.mode == IDLE:
            self._leave_idle()  # pays the C-state exit
        elif self.mode == NONE and self.current is None and not self._irqs and not self._waking:
            self._schedule(from_idle=False)  # (a CPU leaving idle picks it when it is awake)
        else:
            self._arm_slice()

    def sleep(self, resume, iowait: bool = True) -> None:
        """The current task blocks (voluntary switch); ``resume`` runs when it is switched back in."""
        task = self.current
        assert task is not None
        self._switch_out(task, True, resume, iowait)

    def exit_task(self) -> None:
        """The current task exits."""
        task = self.current
        assert task is not None
        self.charge_runtime(task, self.clock())
        self.settle_carry(task)
        task.state = DEAD
        self.current = None
        self.need_resched = False
        if task.job is not None and task.job >= 0:
            self.host.task_exited(self.clock(), task)
        self._schedule(from_idle=False)

    def _switch_out(self, task: Task, voluntary: bool, resume, iowait: bool = False) -> None:
        now = self.engine.now
        if voluntary:  # dequeue_task: the sleeping task's own time (update_curr runs after it)
            if task.kthread:
                self.add_carry(self.cost_dequeue_kthread)
            else:
                self.add_carry(self.cost_dequeue)
                if self.no_user_task(queued_only=True):
                    self.add_carry(self.cost_group_dequeue)  # it was its cgroup's last task here
        # the work carried so far is the task's own (its syscall's tail, its dequeue): it runs until
        # that ends (put_prev_task's update_curr)
        self.charge_runtime(task, self.clock())
        self.settle_carry(task)
        task.last_ran = self.last_task_ns = now
        task.warm_cpu = self.id
        task.warm_mark = self.run_ns_total
        task.resume = resume
        if voluntary:
            task.nvcsw += 1
            task.state = SLEEPING
            task.iowait = iowait
            if iowait:
                self.iowaiters += 1
                task.slept_on = self
        else:
            task.nivcsw += 1
            task.state = RUNNABLE
            self.rq.append(task)
        self.current = None
        self.need_resched = False
        self._schedule(False, task.kthread, not voluntary)

    def preemption_point(self, then) -> None:
        """A return to user space (or cond_resched): if a woken task should preempt the current
        one, switch now (involuntarily) and ``then`` runs when it is switched back in."""
        task = self.current
        if self.need_resched and task is not None and self.rq:
            self._switch_out(task, voluntary=False, resume=then)
        else:
            then()

    def _pick(self) -> Task:
        rq = self.rq
        if len(rq) == 1:
            return pop_last(rq)
        best = 0
        for i in range(1, len(rq)):
            if rq[i].vruntime < rq[best].vruntime:
                best = i
        return rq.pop(best)

    def _switch_accounting(self, from_idle: bool, prev_kthread: bool, kthread: bool, prev_queued: bool) -> Cost:
        """The levels of a switch's load and pressure accounting, to a task (a kernel thread if
        ``kthread``): sub-actions whose cycles are ctx_switch_cycles', counted for their memory
        operations (models.os.costs.memops; a bundle of no cycles beside the switch's). pick_next_task_fair
        from the idle task (its "simple" path) makes the next task's entity current at every level
        (set_next_entity -> update_load_avg each), and psi_task_switch marks it on the CPU in every
        group; between two tasks of one cgroup (user tasks share one here: fio's job threads are one
        session's) only the leaf entities change (put_prev_entity updates the previous one's load if
        it is still queued) and psi stops at the first group where a task is on the CPU; a kernel
        thread lives in the root: the walk between it and a task covers the task's levels."""
        key = (8 if from_idle else 0) | (4 if prev_kthread else 0) | (2 if kthread else 0) | (1 if prev_queued else 0)
        cost = self._cs_accounting[key]
        if cost is None:
            levels = self._levels
            mine = 1 if kthread else levels  # the next task's levels
            queued = 1 if prev_queued else 0
            curr = queued  # update_curr on the way down: levels whose current entity is queued
            if from_idle:  # (the simple path: no update_curr)
                pelt, psi, curr = mine, mine, 0
            elif prev_kthread == kthread:  # one cgroup: the leaf level; the ancestors' entities run on
                pelt, psi = 1 + queued, 0
                curr += mine - 1
            elif kthread:  # task -> kernel thread: the task's levels put back if it is queued
                pelt, psi = 1 + (levels if prev_queued else 0), 0
            else:  # kernel thread -> task: the task's levels set; psi up to the root, where both are
                pelt, psi = levels + queued, levels - 1
            acts = {"pelt_switch": pelt, "psi_switch": psi, "update_curr": curr}
            cost = self.host.costs.get("switch_accounting", actions=acts)
            self._cs_accounting[key] = cost
        return cost

    def _schedule(self, from_idle: bool, prev_kthread: bool = False, prev_queued: bool = False) -> None:
        """Pick the next task (or the idle task) and switch to it. The switch's cycles are carried
        into the task's next segment instead of taking an event of their own. A switch between a
        task and a kernel thread (``prev_kthread``, or the next task is one) costs
        ``kthread_switch_cycles`` (no address-space switch); ``prev_queued``: the previous task was
        preempted (still runnable)."""
        if self.rq:
            nxt = self._pick()
            self.current = nxt
            nxt.state = RUNNING
            if nxt.vruntime > self.min_vruntime:
                self.min_vruntime = nxt.vruntime
            if from_idle:
                self.add_carry(self.cost_idle_exit)
            cost = self.cost_kcs if (prev_kthread or nxt.kthread) else self.cost_cs
            now = self.engine.now
            # the task's clock starts at its pick (set_next_entity): what is carried before the
            # switch (a C-state exit, an interrupt handled on the idle CPU, the previous task's
            # dequeue) is not its time; the switch itself is (finish_task_switch runs as it)
            start = self.clock()
            self.settle_carry(None)
            self.add_carry(cost)
            self.add_carry(self._switch_accounting(from_idle, prev_kthread, nxt.kthread, prev_queued))
            if not nxt.kthread and (nxt is not self._last_user or self._caches_flushed):
                self._cold_start(nxt)
            cpu = self.cpu
            if not cpu.busy or cpu.activity != cost.activity:
                cpu.set_busy(now, cost.activity)
            self.mode = RUN
            nxt.ran_since = start
            if self.rq:
                self._arm_slice()
            resume = nxt.resume
            nxt.resume = None
            assert resume is not None  # a runnable task always has its continuation
            resume()
        else:
            self.run(self.cost_cs_to_idle, self._enter_idle_cb)

    def _cold_start(self, task: Task) -> None:
        """Cache warmth: ``task`` finds the core's caches flushed by an idle state, or holding
        another task's lines: its next work first refetches its working set (carried), the more of
        it the more other work ran here since it left (all of it if it last ran elsewhere)."""
        if self._caches_flushed:
            self.add_carry(self.cost_cold_idle)
        elif self._last_user is not None:
            steps = REFILL_STEPS
            if task.warm_cpu == self.id:
                other = (self.run_ns_total - task.warm_mark) * self.freq / self._evict_cycles
                steps = min(REFILL_STEPS, math.ceil(other * REFILL_STEPS))
            if steps > 0:
                self.add_carry(self.cost_cold_switch[steps - 1])
        self._last_user = task
        self._caches_flushed = False

    def _arm_slice(self) -> None:
        """With others runnable, preempt the current task at the tick after its slice ends."""
        task = self.current
        if task is None or self._slice_call is not None:
            return
        nr = len(self.rq) + 1
        slice_ns = max(self.sched.sched_latency_ns / nr, self.sched.min_granularity_ns)
        now = self.engine.now
        due = task.ran_since + slice_ns
        tick = self._tick_ns
        due = (int(max(due, now) / tick) + 1) * tick
        self._slice_call = self.engine.call_at(due, self._slice_expired, task)

    def _slice_expired(self, task: Task) -> None:
        self._slice_call = None
        if self.current is not task:
            if self.current is not None and self.rq:
                self._arm_slice()
            return
        if not self.rq:
            return
        self.need_resched = True
        if self.mode == POLL:
            self._poll_interrupt_for_resched()
