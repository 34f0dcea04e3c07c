"""The run queue of a CPU: the fair class's pick (CFS before Linux 6.6, EEVDF from 6.6), context
switches, time slices and preemption.

The fair class follows the host's kernel release (``kernel.version``; models.os.kernel_version):

- **CFS** (to 6.5; 6.1 kernel/sched/fair.c), reduced to what IO workloads exercise: tasks
  ordered by vruntime (CPU time scaled by the inverse of their nice level's load weight), the
  smallest picked; time-slice preemption at the scheduler tick after a slice of
  ``max(sched_latency / nr_running, min_granularity)`` when others are runnable; wake-up
  preemption (models.os.sched.placement) beyond ``wakeup_granularity``.
- **EEVDF** (6.6+; 6.12 kernel/sched/fair.c, arithmetic in models.os.sched.eevdf): the
  eligible entity (vruntime no later than the queue's weighted average) with the earliest virtual
  deadline (vruntime + base_slice / weight) is picked; a task whose request is used up
  (vruntime past its deadline) gets a new one at the next tick and is rescheduled
  (update_deadline) unless it is still the pick; RUN_TO_PARITY: a task keeps the CPU against
  wake-ups until its request is used up or it is no longer eligible; a task's lag is saved when it
  sleeps and restored when it wakes (PLACE_LAG). 6.12 adds DELAY_DEQUEUE (a task that sleeps
  with negative lag stays queued, competing, until it is picked or woken; then its lag is zeroed,
  DELAY_ZERO), PREEMPT_SHORT (a wakee with a shorter request cancels the protection) and keeps a
  moved task's relative deadline (PLACE_REL_DEADLINE).

The tunables are Linux's normalized values times 1 + ilog2(min(CPUs, 8))
(models.os.sched.config.FairTunables). A
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
from models.os.kernel_version import has
from models.os.sched import eevdf
from models.os.sched.config import FairTunables, SchedConfig
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
        #: the task the pending slice check is for, and when the current task was picked (CFS's
        #: slice runs from the pick: check_preempt_tick's sum_exec_runtime - prev_sum_exec_runtime)
        self._slice_for: Task | None = None
        self._picked_ns = 0.0
        # the fair class of the host's kernel release, and its tunables for the host's CPU count
        release = k.release
        self.tunables = FairTunables(sched, len(host.pkg.cpus), release)
        self.eevdf = has(release, "eevdf")
        self.delay_dequeue = has(release, "delay_dequeue")
        self.preempt_short = has(release, "preempt_short")
        self.rel_deadline = has(release, "place_rel_deadline")
        self.base_slice_ns = self.tunables.base_slice_ns
        #: EEVDF 6.12: tasks asleep whose dequeue is delayed (DELAY_DEQUEUE), still competing here
        self.delayed: list[Task] = []

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
        if self.eevdf:  # place_entity(ENQUEUE_INITIAL): no lag, half a request to its first deadline
            task.vlag = 0.0
            self._place(task, initial=True)
        else:
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
        if self.eevdf:
            self._put_prev(task, voluntary)
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

    def _pick(self) -> Task | None:
        if self.eevdf:
            return self._pick_eevdf()
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
        nxt = self._pick() if self.rq else None
        if nxt is None and self.delayed:
            self._drop_delayed()
        if nxt is not None:
            self.current = nxt
            nxt.state = RUNNING
            nxt.protect = True  # set_next_entity: set_protect_slice (RUN_TO_PARITY; EEVDF only reads it)
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
            self._picked_ns = start
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
        if task is None:
            return
        pending = self._slice_call
        if pending is not None and self._slice_for is task and (self.eevdf or pending.time <= self._slice_due(task)):
            return
        if pending is not None:
            # a check armed for a task that has since left the CPU, or (CFS) for a slice that a task
            # joining the queue has shortened: Linux's check_preempt_tick recomputes sched_slice at
            # every tick, for whatever runs then
            pending.cancel()
            self._slice_call = None
        if self.eevdf:  # update_deadline at the first tick once its request is used up
            now = self.engine.now
            due = now
            if task.protect or not self.preempt_short:  # (6.12, unprotected: did_preempt_short at each tick)
                due += max(task.deadline - self.cur_vruntime(task, now), 0.0) / task.vscale
            tick = self._tick_ns
            due = (int(max(due, now) / tick) + 1) * tick
        else:
            due = self._slice_due(task)
        self._slice_call = self.engine.call_at(due, self._slice_expired, task)
        self._slice_for = task

    def _slice_due(self, task: Task) -> float:
        """CFS: the first tick at which the current ``task`` has run its slice since its pick, ns
        (sched_slice: max(sched_latency / nr_running, min_granularity) with this queue's tasks)."""
        nr = len(self.rq) + 1
        due = self._picked_ns + max(self.tunables.latency_ns / nr, self.tunables.min_granularity_ns)
        tick = self._tick_ns
        return (int(max(due, self.engine.now) / tick) + 1) * tick

    def _slice_expired(self, task: Task) -> None:
        self._slice_call = None
        self._slice_for = None
        if self.current is not task:
            if self.current is not None and self.rq:
                self._arm_slice()
            return
        if not self.rq:
            return
        if self.eevdf and not self._tick_resched(task):
            self._arm_slice()
            return
        self.need_resched = True
        if self.mode == POLL:
            self._poll_interrupt_for_resched()

    # -- EEVDF (6.6+): models.os.sched.eevdf's arithmetic on this queue ------------------------------
    def cur_vruntime(self, task: Task, now: float) -> float:
        """The running ``task``'s virtual time at ``now``: charged so far plus its time since."""
        return task.vruntime + max(now - task.ran_since, 0.0) * task.vscale

    def _request_ns(self, task: Task) -> float:
        """The task's request r_i: its own slice (6.12 sched_attr) or sysctl_sched_base_slice."""
        own = task.custom_slice_ns
        return own if own > 0.0 and self.preempt_short else self.base_slice_ns

    def _place(self, task: Task, initial: bool = False) -> None:
        """place_entity: ``task`` (not queued) joins this queue with its saved lag."""
        cur = self.current
        cur_v = self.cur_vruntime(cur, self.engine.now) if cur is not None else 0.0
        eevdf.place(task, self.rq, self.delayed, cur, cur_v, self.min_vruntime, self._request_ns(task), initial)

    def _sums(self, cur: Task | None, cur_v: float) -> tuple[float, float]:
        return eevdf.queue_sums(self.rq, self.delayed, cur, cur_v, self.min_vruntime)

    def renew_request(self, task: Task, v: float) -> bool:
        """update_deadline for the running ``task`` at virtual time ``v``: once its request is used
        up it gets a new one (deadline v + r / w; its slice no longer protected). True if renewed."""
        if v < task.deadline:
            return False
        task.slice_ns = self._request_ns(task)
        task.deadline = v + task.slice_ns * task.vscale
        task.protect = False
        return True

    def _put_prev(self, task: Task, voluntary: bool) -> None:
        """``task`` (charged up to now) leaves the CPU: update_curr's deadline check, then, if it
        sleeps, dequeue_entity: its lag saved (entity_lag), or, 6.12, if it is not eligible, its
        dequeue delayed (it stays here, asleep, competing until picked or woken)."""
        v = task.vruntime
        self.renew_request(task, v)
        if not voluntary:
            return
        if not self.rq and not self.delayed:  # alone on its queue: V is its own vruntime
            task.vlag = 0.0
            return
        v0 = self.min_vruntime
        avg, load = self._sums(task, v)
        if self.delay_dequeue and not eevdf.is_eligible(avg, load, v, v0):
            task.delayed = True
            self.delayed.append(task)
            return
        task.vlag = eevdf.entity_lag(avg, load, v0, task, v, self._tick_ns)

    def _finish_delayed(self, task: Task) -> None:
        """A delayed task is dequeued at last (picked): its lag now, clipped to 0 (DELAY_ZERO)."""
        avg, load = self._sums(None, 0.0)
        lag = eevdf.entity_lag(avg, load, self.min_vruntime, task, task.vruntime, self._tick_ns)
        self.delayed.remove(task)
        task.delayed = False
        task.vlag = min(lag, 0.0)

    def _pick_eevdf(self) -> Task | None:
        """pick_next_entity: pick_eevdf over the queued and delayed tasks; a delayed one picked is
        dequeued (DEQUEUE_DELAYED) and the pick retried."""
        while True:
            t = eevdf.pick_eevdf(self.rq, self.delayed, None, 0.0, self.min_vruntime, True)
            if t is None or not t.delayed:
                if t is not None:
                    self.rq.remove(t)
                return t
            self._finish_delayed(t)

    def _drop_delayed(self) -> None:
        """Nothing runnable is left: the pick dequeues each delayed task in turn (each eligible, the
        earliest first, when picked), their lags zeroed (DELAY_ZERO)."""
        while self.delayed:
            t = eevdf.pick_eevdf([], self.delayed, None, 0.0, self.min_vruntime, True)
            assert t is not None
            self._finish_delayed(t)

    def requeue_delayed(self, task: Task) -> None:
        """A delayed task is woken (ttwu_runnable -> requeue_delayed_entity): it is runnable here
        again; with DELAY_ZERO a positive lag is dropped and it is placed anew."""
        avg, load = self._sums(self.current, self._cur_v())
        lag = eevdf.entity_lag(avg, load, self.min_vruntime, task, task.vruntime, self._tick_ns)
        self.delayed.remove(task)
        task.delayed = False
        task.vlag = lag
        if lag > 0.0:
            task.vlag = 0.0
            self._place(task)

    def _cur_v(self) -> float:
        cur = self.current
        return self.cur_vruntime(cur, self.engine.now) if cur is not None else 0.0

    def _tick_resched(self, task: Task) -> bool:
        """The tick's update_curr for the running ``task`` with others queued: resched once its
        request is used up (update_deadline) or, 6.12, once it is unprotected and no longer eligible
        (did_preempt_short); False also when the pick would keep it (schedule() keeps prev: no
        switch)."""
        v = self.cur_vruntime(task, self.engine.now)
        if not self.renew_request(task, v):
            if not (self.preempt_short and not task.protect):
                return False
            avg, load = self._sums(task, v)
            if eevdf.is_eligible(avg, load, v, self.min_vruntime):
                return False
        return eevdf.pick_eevdf(self.rq, self.delayed, task, v, self.min_vruntime, True) is not task

    def wakeup_preempt_eevdf(self, task: Task, cur: Task, alone: bool) -> bool:
        """check_preempt_wakeup_fair for woken ``task`` (queued) against the running ``cur``: the
        enqueue's update_curr renews a used-up request (rescheduling unless ``cur`` was ``alone``
        on the queue); 6.12's PREEMPT_SHORT cancels ``cur``'s protection for an eligible wakee with
        a shorter request that is due first (or ``cur`` not eligible); then preempt if the wakee is
        now the pick."""
        now = self.engine.now
        v = self.cur_vruntime(cur, now)
        if alone and v >= cur.deadline:
            # while it ran alone each tick's update_curr renewed its request: the last one did
            tick = self._tick_ns
            last = math.floor(now / tick) * tick
            if last > cur.ran_since:
                self.renew_request(cur, self.cur_vruntime(cur, last))
        if self.renew_request(cur, v) and not alone:
            return True
        v0 = self.min_vruntime
        if self.preempt_short and task.slice_ns < cur.slice_ns and cur.protect:
            avg, load = self._sums(cur, v)
            if eevdf.is_eligible(avg, load, task.vruntime, v0) and (
                task.deadline < cur.deadline or not eevdf.is_eligible(avg, load, v, v0)
            ):
                cur.protect = False  # cancel_protect_slice
        return eevdf.pick_eevdf(self.rq, self.delayed, cur, v, v0, True) is task
