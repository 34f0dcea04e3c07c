"""Per-CPU execution and scheduling: the run queue, context switches, hard IRQs, idle, polling.

One :class:`CpuRunner` per logical CPU executes whatever the CPU is doing as *segments*: a
stretch of code of known cycles (a :class:`~models.os.costs.Cost`), converted to time with the
CPU's frequency, ending in one continuation callback. A segment is one event, however many stack
layers it spans. Modes:

``RUN``   the current task (or the idle task switching) executes a segment;
``POLL``  the current task spins in blk_poll on a polled queue until its request is reaped;
``IDLE``  the CPU sits in the C-state the cpuidle governor chose;
``IRQ``   a hard-IRQ handler runs on top of whatever was interrupted (which resumes afterwards,
          pushed back by the handler's duration). An IRQ that finds the CPU idle first pays the
          C-state's exit latency.

Scheduling is CFS reduced to what IO workloads exercise: equal-weight tasks ordered by vruntime,
sleeper placement at ``min_vruntime - sched_latency/2``, wakeup preemption beyond
``wakeup_granularity_ns``, and time-slice preemption at scheduler ticks when others are runnable.
A task leaving the CPU to sleep counts a voluntary switch, a preempted task an involuntary one
(``getrusage`` semantics).
"""

from __future__ import annotations

import heapq
from collections import defaultdict, deque
from typing import TYPE_CHECKING, Any, Callable, Final

from models.cpu.core import LogicalCpu
from models.cpu.cpuidle import NO_TIMER_NS, CpuidleGovernor
from models.os.cost import LAYERS as _LAYER_NAMES, Cost
from models.os.costs import CostTable
from models.os.task import RUNNABLE, RUNNING, SLEEPING, Task
from models.os.sched_config import SchedConfig
from models.os.placement import balance_pull, may_run_on, pull_candidate, select_wake_cpu
from simcore.engine import Call, Engine

if TYPE_CHECKING:
    from models.os.nvme import NvmeDriver, NvmeQueue
    from models.os.request import Request

IDLE: Final = "idle"
RUN: Final = "run"
POLL: Final = "poll"
IRQ: Final = "irq"
NONE: Final = "none"
_POLLING: Final = _LAYER_NAMES.index("polling")
#: the heap functions and the new-idle pull (Finals: compiled code reads them from C statics, not
#: from the module's dictionary)
_heappush: Final = heapq.heappush
_heappop: Final = heapq.heappop
_pull_candidate: Final = pull_candidate
#: nohz.next_blocked's period: idle CPUs' blocked load averages are brought up to date at most this
#: often, ns (msecs_to_jiffies(LOAD_AVG_PERIOD): 32 ms, kernel/sched/fair.c, 5.x)
NOHZ_STATS_PERIOD_NS: Final = 32e6
#: how long a CPU's blocked load takes to decay to zero after its last task stopped running, ns:
#: ten PELT half-lives (LOAD_AVG_PERIOD = 32 periods of 1,024 us; a full load_avg or util_avg of
#: 1024, SCHED_CAPACITY_SCALE, reaches 0 after log2(1024) = 10 halvings)
BLOCKED_LOAD_DECAY_NS: Final = 10 * 32 * 1.024e6


class IrqWork:
    """A hard-IRQ (or IPI) to run on a CPU. ``cost(runner)`` is evaluated when the handler starts
    (so it sees the CQ as it is then) and returns a Cost; ``fire(runner)`` applies the handler's
    effects when it ends."""

    __slots__ = ("kind",)

    kind: str

    def cost(self, runner) -> Cost:
        raise NotImplementedError

    def fire(self, runner) -> None:
        raise NotImplementedError


class FixedIrq(IrqWork):
    """An interrupt of constant cost whose effect is a callback ``fire(runner)``."""

    __slots__ = ("_cost", "_fire")

    def __init__(self, cost: Cost, fire, kind: str):
        self._cost = cost
        self._fire = fire
        self.kind = kind

    def cost(self, runner) -> Cost:
        return self._cost

    def fire(self, runner) -> None:
        self._fire(runner)


def _no_effect(runner) -> None:
    pass


def _nohz_idle_balance(runner) -> None:
    runner.nohz_idle_balance(runner.host.nohz_kick_balance)


def _tick_softirq(runner) -> None:
    """What the tick raises after its handler: SCHED_SOFTIRQ's load balancing and nohz kicks
    (with periodic balancing: the runner has domains)."""
    if runner.domains:
        runner.balance_tick()


class Timer:
    """An armed hrtimer (for the governor's next-timer prediction and for cancellation)."""

    __slots__ = ("expiry", "call", "active", "runner", "fire")

    def __init__(self, expiry: float, runner: "CpuRunner", fire: Callable[[Any], None]):
        self.expiry = expiry
        self.call: Call | None = None
        self.active = True
        self.runner = runner  # the CPU it is armed on
        #: its effect: fire(runner) in the timer interrupt; dropped once it fired or was cancelled
        #: (the owner of ``fire`` often holds the timer: no cycle may outlive it, the collector is
        #: off during a run)
        self.fire: Callable[[Any], None] | None = fire

    def expire(self) -> None:
        """The hrtimer expires: unless cancelled, a timer interrupt on its CPU runs ``fire``."""
        self.call = None  # fired: no timer <-> call cycle left (the collector is off during a run)
        if self.active:
            self.active = False
            fire, self.fire = self.fire, None
            runner = self.runner
            runner.raise_irq(FixedIrq(runner._timer_cost, fire, "timer"))

    def __lt__(self, other: "Timer") -> bool:
        return self.expiry < other.expiry


class CpuRunner:
    """Runs one logical CPU: its tasks, its interrupts and its idle periods."""

    # long: one flat table of the runner's state, with the costs and constants of the hot path
    # precomputed as attributes (a split would only add indirection on every IO)
    def __init__(self, host: Any, cpu: LogicalCpu, governor: CpuidleGovernor, sched: SchedConfig):
        self.host = host
        self.engine: Engine = host.engine
        self._seg_done_cb = self._seg_done
        self._poll_hit_cb = self._poll_hit
        self._irq_end_cb = self._irq_end
        self._enter_idle_cb = self._enter_idle  # bound once: passed to run() at every idle entry
        self._idle_in_cb = self._idle_in
        self._idle_idx = 0  # the C-state chosen before a tick stop (_idle_in)
        self.cpu = cpu
        self.id = cpu.id
        self.freq: float = cpu.core.freq_ghz
        cpu.core.listeners.append(self._freq_changed)
        # SMT contention: work runs smt_fac times slower than alone, smt_fac = 1 + (smt_slowdown - 1)
        # x the sibling's executing activity (1.0 busy, less for poll loops and the POLL spin, 0
        # asleep); the host's core watcher keeps it current (sibling_activity_changed)
        self._smt_excess = cpu.core._cfg.smt_slowdown - 1.0
        self._smt_fac = 1.0
        self.governor = governor
        self.sched = sched
        self.cstates = cpu.core._cfg.cstates
        self._exit_ns = tuple(st.exit_latency_ns for st in self.cstates)
        act = cpu.core._cfg.activity
        self._act_poll = act["poll"]
        k = host.kcosts
        ct: CostTable = host.costs
        self.cost_cs = ct.get("ctx_switch", actions={"switch": 1})
        self.cost_kcs = ct.get("ctx_switch_kthread", actions={"kthread_switch": 1})
        self.cost_cs_to_idle = ct.get("ctx_switch_to_idle", actions={"switch": 1, "idle_entry": 1})
        self.cost_cs_from_idle = ct.get("ctx_switch_from_idle", actions={"switch": 1, "idle_exit": 1})
        self.cost_idle_reenter = ct.get("idle_reenter", actions={"idle_exit": 1, "idle_entry": 1})
        # cache warmth: the user task switched in after another one, or after a cache-flushing idle
        self.cost_cold_switch = ct.get("cache_refill_switch", cache=k.cold_switch_refill_cycles)
        self.cost_cold_idle = ct.get("cache_refill_idle", cache=k.cold_idle_refill_cycles)
        self._flushes = tuple(st.flushes_core_caches for st in self.cstates)
        self._last_user: Task | None = None  # the user task whose working set the core caches hold
        self._caches_flushed = False  # an idle state flushed them since a user task last ran
        self._waking = False  # leaving idle outside an IRQ: the switch in follows the C-state exit
        self.cost_noop = ct.get("noop")
        # a wake-up enqueues the task (with its load and pressure accounting); a task going to sleep
        # is dequeued (the same accounting), whatever runs next: another task or the idle loop
        self.cost_wakeup = ct.get("wakeup", actions={"wakeup": 1, **k.accounting_actions()})
        self.cost_dequeue = ct.get("dequeue_sleep", actions=k.accounting_actions())
        # kernel threads live in the root cgroup: load and pressure accounting at one level
        root = {"pelt_update": 1, "psi_change": 1}
        self.cost_wakeup_kthread = ct.get("wakeup_kthread", actions={"wakeup": 1, **root})
        self.cost_dequeue_kthread = ct.get("dequeue_sleep_kthread", actions=root)
        self.cost_migrate = ct.get("migrate", actions={"migrate": 1})
        # NOHZ idle: stopping the tick cancels its hrtimer and programs the clock event device for
        # the next timer; restarting it re-arms it (each an hrtimer (re)programming)
        self.cost_tick_stop = ct.get("tick_stop", actions={"hrtimer_program": 1})
        self.cost_tick_restart = ct.get("tick_restart", actions={"hrtimer_program": 1})
        self._tick_restart_due = False
        self.cost_newidle = ct.get("newidle_balance", actions={"newidle_balance": 1})
        self._scan_costs: dict = {}
        self.sibling_runner: CpuRunner | None = None  # the SMT sibling's runner (set by the host)
        #: every CPU's runner (the host's list, set once they all exist) and the NVMe driver
        self.runners: list[CpuRunner] = []
        self.driver: NvmeDriver | None = None
        self._timer_cost: Cost = host.timer_cost
        self._migration_cost_ns = sched.migration_cost_ns
        self.avg_idle_ns = 2.0 * sched.migration_cost_ns  # rq->avg_idle (starts at 2 x migration cost)
        self._poll_iter_cycles: float = k.poll_iteration_cycles
        self._spin_iter_cycles: float = k.spin_iteration_cycles
        self._iter_ns = k.poll_iteration_cycles / self.freq
        self._spin_ns = k.spin_iteration_cycles / self.freq
        self._tick_ns = 1e9 / sched.tick_hz
        self._sleeper_credit_ns = sched.sched_latency_ns / 2  # CFS place_entity (GENTLE_FAIR_SLEEPERS)
        self._wakeup_gran_ns = sched.wakeup_granularity_ns
        self.current: Task | None = None
        self.rq: list[Task] = []
        self.mode = NONE
        self.iowaiters = 0
        self.need_resched = False
        self.min_vruntime = 0.0
        # uses of each cost bundle, by its idx (``counts``: a dict in first-use order)
        self._cnt: list[int] = []
        self._used: list[int] = []  # the idx of each bundle used, in first-use order
        self.poll_cycles = 0.0
        self.poll_ns = 0.0
        self.smt_stall_ns = 0.0
        self.iowait_ns = 0.0  # idle time with IO waiters on this CPU (cpufreq's iowait time)
        # CPU time per stack layer at the frequency each piece ran at: counts are closed into
        # layer_ns_done (at the old frequency) whenever the core's frequency changes
        self.layer_ns_done = [0.0] * len(_LAYER_NAMES)
        self._epoch_counts: dict[int, int] = {}
        # cycles spun in the cpuidle POLL state, banked at each frequency change like layer time
        self._poll_states = [j for j, st in enumerate(self.cstates) if st.polling]
        self.spin_cycles_done = 0.0
        self._epoch_spin_ns = 0.0
        #: the cpufreq governor's scheduler hooks (cpufreq_update_util), if it wants them: at
        #: enqueue (runner, now, iowait) and at each tick (runner, now)
        self.cpufreq_hook: Any = None
        self.cpufreq_tick_hook: Any = None
        self.irq_kinds: defaultdict[str, int] = defaultdict(int)
        # work carried into the next segment (a context switch merged with what follows it)
        self._carry: list[Cost] = []
        self._carry_ns = 0.0
        self._carry_fixed_ns = 0.0  # the part of _carry_ns that is not CPU work (C-state exit)
        #: cumulative C-state exit latency, ns: C0 time spent waking up, in no stack layer
        self.cstate_exit_ns = 0.0
        self._trace_parts: list = []  # (label, ns) of carried work, kept only when tracing
        # segment state
        self._seg_call: Call | None = None
        self._seg_then: Any = None
        self._seg_end = 0.0
        self._seg_work_from = 0.0  # the segment's work starts here (after a C-state exit)
        self._seg_rem = 0.0
        self._seg_rem_fac = 1.0  # the SMT factor _seg_rem was measured at
        self._seg_act = 0.0
        self._irq_call: Call | None = None
        self._irq_end_t = 0.0
        self._irq_work_from = 0.0
        # polling state
        self._poll_qp: NvmeQueue | None = None
        self._poll_req: Any = None  # a Request, or a waiter with ``done`` (spin)
        self._poll_then: Any = None
        self._poll_start = 0.0
        self._poll_call: Call | None = None
        self._poll_more: tuple = ()  # more queues polled with _poll_qp (a moved io_uring IOPOLL ring)
        # irq state
        self._irqs: deque[IrqWork] = deque()
        self._irq_prev = NONE
        self._idle_since = 0.0
        self._slice_call: Call | None = None
        self.timers: list[Timer] = []
        # the periodic scheduler tick: a timer interrupt every _tick_ns, at jiffy boundaries, while
        # the CPU runs or idles briefly (NOHZ idle stops it, tick_nohz_idle_exit restarts it)
        self._tick_on = sched.tick
        self._tick_call: Call | None = None
        self._tick_irq = FixedIrq(host.tick_cost, _tick_softirq, "tick")
        #: scheduling domains for periodic balancing, smallest first (placement.SchedDomain: each
        #: holds its balance interval; set by the host once every runner exists) and the time each
        #: was last balanced
        self.domains: tuple = ()
        self._last_balance: list[float] = []
        #: this CPU's stopper thread (models.os.stopper: active balancing), created on first use
        self.stopper: Any = None
        self._busy_factor = sched.balance_busy_factor
        #: rq->has_blocked_load (set when the tick stops, cleared once decayed) and when this CPU's
        #: last task stopped running (ns): the nohz stats kick's state (see nohz_idle_balance)
        self.has_blocked_load = False
        self.last_task_ns = -BLOCKED_LOAD_DECAY_NS
        self._nohz_entry_ns = -2.0 * BLOCKED_LOAD_DECAY_NS  # the last time the tick stopped
        self.cost_blocked_update = ct.get("update_blocked_averages", actions={"pelt_update": k.cgroup_depth + 1})
        #: max_load_balance_interval, ns (HZ x CPUs / 10 jiffies: the host sets it with the domains)
        self._max_balance_ns = 1e8
        self.cost_balance = ct.get("load_balance", actions={"load_balance": 1})

    # ------------------------------------------------------------------ segments
    def run(self, cost: Cost, then) -> None:
        """Execute ``cost`` on this CPU now, then call ``then()``."""
        now = self.engine.now
        self._count(cost.idx)
        task = self.current
        f = self.freq
        if task is not None:
            task.usr_ns += cost.user_cycles / f
            task.sys_ns += cost.sys_cycles / f
        dur = cost.cycles / f
        fixed = self._carry_fixed_ns
        if self._carry_ns:
            # work carried into this segment (a context switch, an IRQ on an idle CPU, CQ reaping):
            # same time, one event fewer. (_absorb_carry, inlined: this runs once per IO)
            carry = self._carry
            for c in carry:
                self._count(c.idx)
                if task is not None:
                    task.sys_ns += c.sys_cycles / f
            self._carry = []
            dur += self._carry_ns - fixed
            self._carry_ns = 0.0
            self._carry_fixed_ns = 0.0
        act = self._seg_act = cost.activity
        cpu = self.cpu
        if not cpu.busy or cpu.activity != act:
            cpu.set_busy(now, act)  # first: a CPU waking up learns its SMT sibling's activity here
        fac = self._smt_fac
        if fac != 1.0:
            # the sibling competes for the core's pipeline: the same cycles take longer (re-timed
            # if the sibling's activity changes before the segment ends)
            extra = dur * (fac - 1.0)
            self.smt_stall_ns += extra
            dur += extra
        self._seg_work_from = now + fixed
        dur += fixed  # C-state exit latency first: wall time, not cycles
        tr = self.engine.tracer
        if tr is not None:
            self._trace_segment(tr, now, dur, cost)
        self.mode = RUN
        self._seg_then = then
        t = self._seg_end = now + dur
        # the hottest event of the simulator: dur >= 0 by construction, so engine.schedule (no
        # checks). The previous segment's Call is reused once it has fired (_seg_done marks it
        # with fn None; a cancelled one is still queued and is not)
        call = self._seg_call
        if call is not None and call.fn is None:
            call.fn = self._seg_done_cb
            call.time = t
        else:
            call = self._seg_call = Call(self._seg_done_cb, (), t)
        self.engine.schedule(call)

    def _count(self, idx: int) -> None:
        """One more use of cost bundle ``idx``."""
        cnt = self._cnt
        if idx < len(cnt):
            c = cnt[idx]
            if c:
                cnt[idx] = c + 1
                return
        else:
            cnt.extend([0] * (idx + 1 - len(cnt)))
        cnt[idx] = 1
        self._used.append(idx)

    @property
    def counts(self) -> dict[int, int]:
        """Uses of each cost bundle so far: {bundle idx: count}, in the order of first use."""
        cnt = self._cnt
        return {i: cnt[i] for i in self._used}

    def add_carry(self, cost: Cost) -> None:
        """Charge ``cost`` as work done before whatever this CPU runs next (no event of its own)."""
        self._carry.append(cost)
        self._carry_ns += cost.cycles / self.freq
        if self.engine.tracer is not None:
            self._trace_parts.extend(self._layer_parts(cost))

    # -- tracing (only when engine.tracer is set) -------------------------------------------------
    def _layer_parts(self, cost) -> list:
        f = self.freq
        return [(name, cyc / f) for name, cyc in zip(_LAYER_NAMES, cost.layer_cycles) if cyc]

    def _trace_segment(self, tr, now: float, dur: float, cost) -> None:
        parts = self._trace_parts + self._layer_parts(cost)
        self._trace_parts = []
        who = self.current.name if self.current is not None else "swapper (idle task)"
        tr.segment(self.id, now, dur, who, parts)

    def _trace_idle_end(self, now: float) -> None:
        tr = self.engine.tracer
        if tr is not None:
            tr.span(1, self.id, self.cstates[self.cpu.cstate].name, self._idle_since, now - self._idle_since, "idle")

    def _absorb_carry(self, task: Task | None) -> float:
        """Count the carried bundles (on this CPU and the task) and return their time, ns."""
        for c in self._carry:
            self._count(c.idx)
            if task is not None:
                task.sys_ns += c.sys_cycles / self.freq
        self._carry = []
        ns = self._carry_ns
        self._carry_ns = 0.0
        self._carry_fixed_ns = 0.0
        return ns

    def _freq_changed(self, freq_ghz: float) -> None:
        if freq_ghz != self.freq:
            self._close_freq_epoch()
        self.freq = freq_ghz
        self._set_loop_ns()

    def _set_loop_ns(self) -> None:
        """Poll and spin loop iteration times at the current frequency and SMT contention."""
        self._iter_ns = self._poll_iter_cycles / self.freq * self._smt_fac
        self._spin_ns = self._spin_iter_cycles / self.freq * self._smt_fac

    def sibling_activity_changed(self, now: float, activity: float) -> None:
        """The SMT sibling's executing activity changed at ``now``: the work under way from now
        runs at the new contention factor (the segment or interrupt handler end moves; loop
        iterations get their new length)."""
        fac = 1.0 + self._smt_excess * activity
        old = self._smt_fac
        if fac == old:
            return
        self._smt_fac = fac
        mode = self.mode
        if mode == RUN:
            start = now if now > self._seg_work_from else self._seg_work_from
            if self._seg_end > start:
                self._seg_end = end = start + self._stretch(self._seg_end - start, fac, old)
                old_call = self._seg_call
                assert old_call is not None  # a segment runs
                old_call.cancel()
                call = self._seg_call = Call(self._seg_done_cb, (), end)
                self.engine.schedule(call)
        elif mode == IRQ and self._irq_call is not None:
            start = now if now > self._irq_work_from else self._irq_work_from
            if self._irq_end_t > start:
                self._irq_end_t = end = start + self._stretch(self._irq_end_t - start, fac, old)
                work = self._irq_call.args[0]
                self._irq_call.cancel()
                self._irq_call = self.engine.call_at(end, self._irq_end_cb, work)
        self._set_loop_ns()

    def _stretch(self, rem_ns: float, fac: float, old: float) -> float:
        """``rem_ns`` of work timed at SMT factor ``old``, at factor ``fac`` (the difference is SMT
        contention time), ns."""
        new = rem_ns * fac / old
        self.smt_stall_ns += new - rem_ns
        return new

    def _add_epoch_layer_ns(self, acc: list) -> None:
        """Add to ``acc`` the ns per layer of the bundles run since the last frequency change, at
        the current frequency."""
        bundles = self.host.costs.bundles
        before = self._epoch_counts
        f = self.freq
        for idx, cnt in self.counts.items():
            d = cnt - before.get(idx, 0)
            if d:
                for j, cyc in enumerate(bundles[idx].layer_cycles):
                    if cyc:
                        acc[j] += d * cyc / f

    def _close_freq_epoch(self) -> None:
        """The frequency is about to change: bank the current epoch's layer time and POLL spin."""
        self._add_epoch_layer_ns(self.layer_ns_done)
        self._epoch_counts = dict(self.counts)
        spin = self._spin_ns_at(self.engine.now)
        self.spin_cycles_done += (spin - self._epoch_spin_ns) * self.freq
        self._epoch_spin_ns = spin

    def _spin_ns_at(self, now: float) -> float:
        cpu = self.cpu
        return sum(cpu.cstate_ns_at(now, j) for j in self._poll_states)

    def spin_cycles(self, now: float) -> float:
        """Cumulative cycles spent spinning in the cpuidle POLL state up to ``now`` (each stretch at
        the frequency it ran at)."""
        return self.spin_cycles_done + (self._spin_ns_at(now) - self._epoch_spin_ns) * self.freq

    def layer_ns(self) -> list[float]:
        """Cumulative CPU time per stack layer (``models.os.costs.LAYERS`` order) up to now, ns:
        each bundle at the frequency it ran at, polling as measured."""
        out = list(self.layer_ns_done)
        self._add_epoch_layer_ns(out)
        out[_POLLING] += self.poll_ns
        return out

    def iowait_ns_at(self, now: float) -> float:
        """Cumulative idle time with IO waiters up to ``now``, ns."""
        if self.mode == IDLE and self.iowaiters:
            return self.iowait_ns + now - self._idle_since
        return self.iowait_ns

    def clock(self) -> float:
        """The time code running now on this CPU sees (now + any context switch carried into
        its segment), ns."""
        return self.engine.now + self._carry_ns

    def _seg_done(self) -> None:
        call = self._seg_call
        assert call is not None  # (it just fired)
        call.fn = None  # fired: run() may reuse it
        self.mode = NONE
        then = self._seg_then
        self._seg_then = None
        task = self.current
        if self.need_resched and task is not None and self.rq:
            self._switch_out(task, voluntary=False, resume=then)
            return
        then()

    # ------------------------------------------------------------------ scheduling
    def charge_runtime(self, task: Task, now: float) -> None:
        ran = now - task.ran_since
        task.vruntime += ran * task.vscale
        task.exec_ns += ran
        task.ran_since = now

    # ------------------------------------------------------------------ the scheduler tick
    def _start_tick(self) -> None:
        """Arm the tick at the next jiffy boundary (tick_nohz_idle_exit / a CPU starting work)."""
        if self._tick_on and self._tick_call is None:
            tick = self._tick_ns
            self._tick_call = self.engine.call_at((int(self.engine.now / tick) + 1) * tick, self._tick)

    def _stop_tick(self) -> None:
        if self._tick_call is not None:
            self._tick_call.cancel()
            self._tick_call = None

    def _tick(self) -> None:
        """tick_sched_timer: the timer interrupt of the tick (its handler's cost is the tick cost)."""
        self._tick_call = self.engine.call_in(self._tick_ns, self._tick)
        if self.cpufreq_tick_hook is not None:
            self.cpufreq_tick_hook(self, self.engine.now)
        self.raise_irq(self._tick_irq)

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
        task.state = "dead"
        self.current = None
        self.need_resched = False
        if task.job is not None and task.job >= 0:
            self.host.task_exited(self.clock(), task)
        self._schedule(from_idle=False)

    def _switch_out(self, task: Task, voluntary: bool, resume, iowait: bool = False) -> None:
        now = self.engine.now
        ran = now - task.ran_since  # charge_runtime, inlined
        task.vruntime += ran * task.vscale
        task.exec_ns += ran
        task.ran_since = task.last_ran = self.last_task_ns = now
        task.resume = resume
        if voluntary:
            task.nvcsw += 1
            task.state = SLEEPING
            cost = self.cost_dequeue_kthread if task.kthread else self.cost_dequeue  # add_carry, inlined
            if self.engine.tracer is None:
                self._carry.append(cost)
                self._carry_ns += cost.cycles / self.freq
            else:
                self.add_carry(cost)
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
        self._schedule(False, task.kthread)

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
            return rq.pop()
        best = 0
        for i in range(1, len(rq)):
            if rq[i].vruntime < rq[best].vruntime:
                best = i
        return rq.pop(best)

    def _schedule(self, from_idle: bool, prev_kthread: bool = False) -> None:
        """Pick the next task (or the idle task) and switch to it. The switch's cycles are carried
        into the task's next segment instead of taking an event of their own. A switch between a
        task and a kernel thread (``prev_kthread``, or the next task is one) costs
        ``kthread_switch_cycles`` (no address-space switch)."""
        if self.rq:
            nxt = self._pick()
            self.current = nxt
            nxt.state = RUNNING
            if nxt.vruntime > self.min_vruntime:
                self.min_vruntime = nxt.vruntime
            cost = self.cost_cs_from_idle if from_idle else (
                self.cost_kcs if (prev_kthread or nxt.kthread) else self.cost_cs)
            now = self.engine.now
            if self.engine.tracer is None:  # add_carry without tracing, inlined (once per IO)
                self._carry.append(cost)
                self._carry_ns += cost.cycles / self.freq
            else:
                self.add_carry(cost)
            if not nxt.kthread and (nxt is not self._last_user or self._caches_flushed):
                self._cold_start(nxt)
            cpu = self.cpu
            if not cpu.busy or cpu.activity != cost.activity:
                cpu.set_busy(now, cost.activity)
            self.mode = RUN
            nxt.ran_since = now
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
        another task's lines: its next work first refetches its working set (carried)."""
        cold = self.cost_cold_idle if self._caches_flushed else self.cost_cold_switch
        if self._last_user is not None or self._caches_flushed:
            self.add_carry(cold)
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

    def wake(self, task: Task) -> None:
        """try_to_wake_up from code running on this CPU (IRQ handler, poller); its cycles are
        carried into what this CPU runs next."""
        if task.state != SLEEPING:
            return
        cost = self.cost_wakeup_kthread if task.kthread else self.cost_wakeup
        if self.engine.tracer is None:  # add_carry without tracing, inlined (once per IO)
            self._carry.append(cost)
            self._carry_ns += cost.cycles / self.freq
        else:
            self.add_carry(cost)
        target = self.runners[task.cpu]
        if task.affinity is not None and not (target.current is None and not target.rq):
            target = self._place_woken(task, target)  # its CPU is busy: CFS looks for another
        if target is self:
            self._enqueue_woken(task)
        else:
            host = self.host
            self.engine.call_in(self._carry_ns + host.kcosts.ipi_latency_ns, target.raise_irq, FixedIrq(host.ipi_cost, lambda r, t=task: r._enqueue_woken(t), "ipi"))

    def _place_woken(self, task: Task, prev: "CpuRunner") -> "CpuRunner":
        """select_task_rq_fair for a task woken while its CPU is busy (models.os.placement): the
        CPUs examined cost this CPU ``idle_scan_cycles`` each, a move ``migrate_cycles``."""
        owner = task.owner
        if owner is None or not owner.can_migrate():
            return prev
        target, examined = select_wake_cpu(self.runners, task, self)
        self.add_carry(self._scan_cost(examined - 1))
        if target is not prev:
            self._migrate(task, target)
        return target

    def _scan_cost(self, cpus: int) -> Cost:
        """The bundle of examining ``cpus`` more CPUs (select_idle_sibling, newidle_balance)."""
        cost = self._scan_costs.get(cpus)
        if cost is None:
            cost = self._scan_costs[cpus] = self.host.costs.get("select_idle_scan", actions={"idle_scan": cpus})
        return cost

    def move_queued(self, task: Task, src: "CpuRunner", target: "CpuRunner") -> None:
        """Move queued ``task`` from ``src``'s runqueue to ``target``'s (detach_task /
        attach_task), charged to this CPU; its virtual time re-based on the new queue."""
        src.rq.remove(task)
        self._migrate(task, target)
        task.vruntime += target.min_vruntime - src.min_vruntime
        target.rq.append(task)

    def _migrate(self, task: Task, target: "CpuRunner") -> None:
        """set_task_cpu: the task's runqueue becomes ``target``'s (its load averages move), charged
        to this CPU; its engine thread follows (models.ioengines: its runner and queues)."""
        self.add_carry(self.cost_migrate)
        task.cpu = target.id
        task.nr_migrations += 1
        self.host.migrations += 1
        task.owner.migrated(target)

    # -- periodic and nohz idle balancing (models.os.placement) ------------------------------------
    def balance_tick(self) -> None:
        """SCHED_SOFTIRQ after a tick: rebalance_domains for this CPU (each domain whose interval,
        stretched while busy, has elapsed; when any task may move), then nohz_balancer_kick: a
        balance kick if tasks wait here (or more than one CPU is busy), else a stats kick when idle
        CPUs' blocked load is due for an update."""
        now = self.engine.now
        busy = self.current is not None
        host = self.host
        if host.movable_tasks:
            last = self._last_balance
            for level, domain in enumerate(self.domains):
                if now - last[level] >= self._balance_interval_ns(domain, busy):
                    last[level] = now
                    self._balance(self, domain, now)
        if not busy and not self.rq:
            return  # an idle CPU's tick kicks nobody: rq->idle_balance
        if host.movable_tasks and now >= host.nohz_next_balance and (self.rq or self._nr_busy_cpus() > 1):
            self._nohz_kick(now, True)
        elif now >= host.nohz_next_blocked and self._idle_blocked_load():
            self._nohz_kick(now, False)

    def _idle_blocked_load(self) -> bool:
        """nohz.has_blocked: a CPU idle with its tick stopped may still carry blocked load."""
        for r in self.host.runners:
            if r.has_blocked_load and r.mode == IDLE and r._tick_call is None:
                return True
        return False

    def _balance_interval_ns(self, domain: Any, busy: bool) -> float:
        """get_sd_balance_interval: the domain's balance interval, times ``sched.balance_busy_factor``
        less one tick when this CPU is busy (so the levels' busy periods are not multiples of each
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
        for r in self.host.runners:
            if not (r.mode == IDLE and r._tick_call is None):
                n += 1
        return n

    def _balance(self, this: "CpuRunner", domain: Any, now: float) -> bool:
        """One load_balance pass over ``domain`` on behalf of ``this``, run (and charged) on this
        CPU; True when it pulled tasks to ``this``."""
        self.add_carry(self.cost_balance)
        self.add_carry(self._scan_cost(len(domain) - 1))
        src, tasks = balance_pull(domain, this, now, self._migration_cost_ns)
        if not tasks:
            if src is not None and domain.nr_balance_failed > domain.cache_nice_tries + 2:
                self._active_balance(src, this, domain)
            return False
        for task in tasks:
            self.move_queued(task, src, this)
            if this.cpufreq_hook is not None:
                this.cpufreq_hook(this, now, False)
        if this.current is not None:
            this._arm_slice()
        return True

    def _active_balance(self, src: "CpuRunner", this: "CpuRunner", domain: Any) -> None:
        """need_active_balance: passes over ``domain`` kept failing, so ``src``'s stopper pushes
        its running task to ``this`` (if that task may run there and no push is pending)."""
        cur = src.current
        if cur is None or cur.kthread or not may_run_on(cur, this.id):
            return  # pinned: out_one_pinned
        stopper = src.stopper
        if stopper is None:
            from models.os.stopper import Stopper  # (it builds on this module)

            stopper = src.stopper = Stopper(self.host, src.id)
        if not stopper.pending:
            stopper.push(this, self)
        domain.nr_balance_failed = domain.cache_nice_tries + 1

    def _nohz_kick(self, now: float, balance: bool) -> None:
        """kick_ilb: if a CPU idles with its tick stopped, kick the first one (an IPI) to update
        the blocked load of every such CPU and, for a balance kick (tasks wait on this busy CPU,
        or more than one CPU of the package is busy: tasks may be packed on SMT siblings while
        cores idle), to balance them, at most once per the smallest domain's interval."""
        host = self.host
        for r in host.runners:
            if r.mode == IDLE and r._tick_call is None and r is not self:
                if balance:
                    host.nohz_next_balance = now + self.domains[0].min_interval_ns
                    host.nohz_kick_balance = True
                if host.nohz_kick_pending:
                    return  # one kick at a time: a balance kick joins the pending one (nohz_flags)
                if not balance:
                    host.nohz_stats_kicks += 1
                host.nohz_kick_pending = True
                self.engine.call_in(self._carry_ns + host.kcosts.ipi_latency_ns, r.raise_irq,
                                    FixedIrq(host.ipi_cost, _nohz_idle_balance, "ipi"))
                return

    def nohz_idle_balance(self, balance: bool) -> None:
        """_nohz_idle_balance on the kicked CPU: every tick-stopped idle CPU (this one last) has
        its blocked load averages updated (update_nohz_stats: ``pelt_update`` per cgroup level,
        while it has any) and, for a balance kick, is balanced over its domains; each other CPU
        that pulled a task is woken by an IPI. The next stats update is due NOHZ_STATS_PERIOD_NS
        later."""
        now = self.engine.now
        host = self.host
        host.nohz_kick_pending = host.nohz_kick_balance = False
        for r in host.runners:
            if r is self or r.mode != IDLE or r._tick_call is not None:
                continue
            self._update_blocked(r, now)
            if balance and self._idle_rebalance(r, now):
                self.engine.call_in(self._carry_ns + host.kcosts.ipi_latency_ns, r.raise_irq,
                                    FixedIrq(host.ipi_cost, _no_effect, "ipi"))
        self._update_blocked(self, now)
        if balance:
            self._idle_rebalance(self, now)
        host.nohz_next_blocked = now + NOHZ_STATS_PERIOD_NS

    def _update_blocked(self, r: "CpuRunner", now: float) -> None:
        """update_nohz_stats for idle CPU ``r``, run (and charged) here: its blocked load decays
        to zero BLOCKED_LOAD_DECAY_NS after its last task stopped running."""
        if not r.has_blocked_load:
            return
        self.add_carry(self.cost_blocked_update)
        if now - r.last_task_ns >= BLOCKED_LOAD_DECAY_NS:
            r.has_blocked_load = False

    def _idle_rebalance(self, r: "CpuRunner", now: float) -> bool:
        """rebalance_domains for idle CPU ``r``, run here: each of its domains whose interval has
        elapsed (an idle CPU's: not stretched), until one pulls; True when one did."""
        last = r._last_balance
        for level, domain in enumerate(r.domains):
            if now - last[level] >= r._balance_interval_ns(domain, False):
                last[level] = now
                if self._balance(r, domain, now):
                    return True
        return False

    def _enqueue_woken(self, task: Task) -> None:
        if task.state != SLEEPING:
            return
        iowait = task.iowait
        if iowait:
            slept_on = task.slept_on
            assert slept_on is not None
            slept_on.iowaiters -= 1  # nr_iowait of the runqueue it slept on (it may have moved)
            task.iowait = False
        task.state = RUNNABLE
        if self.cpufreq_hook is not None:
            self.cpufreq_hook(self, self.engine.now, iowait)
        floor = self.min_vruntime - self._sleeper_credit_ns
        if task.vruntime < floor:
            task.vruntime = floor
        self.rq.append(task)
        cur = self.current
        if cur is not None:
            now = self.engine.now
            # wakeup_preempt_entity: the granularity in the wakee's virtual time (calc_delta_fair)
            if cur.vruntime + (now - cur.ran_since) * cur.vscale - task.vruntime > self._wakeup_gran_ns * task.vscale:
                self.need_resched = True
                if self.mode == POLL:
                    self._poll_interrupt_for_resched()
            else:
                self._arm_slice()
        elif self.mode == IDLE:
            self._leave_idle()

    # ------------------------------------------------------------------ idle
    def _enter_idle(self) -> None:
        if self.rq:  # a task became runnable while the CPU switched to idle: the idle loop exits at once
            self._schedule(from_idle=True)
            return
        now = self.engine.now
        if self.host.movable_tasks and self.avg_idle_ns >= self._migration_cost_ns:
            src, task, examined = _pull_candidate(self.runners, self, now, self._migration_cost_ns)
            if task is not None:  # newidle_balance found a queued task it may run: pull it and run it
                self.add_carry(self.cost_newidle)  # the pass's cost, carried into the pulled task's switch-in
                self.add_carry(self._scan_cost(examined))
                self.move_queued(task, src, self)
                self._schedule(from_idle=False)  # at once: nobody else can pull it meanwhile
                return
        timers = self.timers
        while timers and not timers[0].active:
            _heappop(timers)
        next_timer = timers[0].expiry - now if timers else NO_TIMER_NS
        if next_timer < 0.0:
            next_timer = 0.0
        call = self._tick_call
        if call is None:
            idx = self.governor.select(next_timer, self.iowaiters)
        else:
            idx = self.governor.select(next_timer, self.iowaiters, self._tick_ns, call.time - now)
            if self.governor.stop_tick:
                # tick_nohz_idle_stop_tick: cancel the tick's hrtimer and program the clock event
                # device for the next timer, before the CPU idles; nohz_balance_enter_idle assumes
                # the CPU has blocked load (the stats kick finds out). (Only after a task ran: the
                # kernel keeps the tick stopped through an interrupt that wakes no task, this model
                # restarts it, and that second stop is not an entry into nohz idle.)
                self._stop_tick()
                if self.last_task_ns >= self._nohz_entry_ns:
                    self.has_blocked_load = True
                self._nohz_entry_ns = now
                self._idle_idx = idx
                self.run(self.cost_tick_stop, self._idle_in_cb)
                return
        self.cpu.set_idle(now, idx)  # _idle_in, inlined (once per idle period)
        self.mode = IDLE
        self._idle_since = now

    def _idle_in(self) -> None:
        """The tick is stopped: enter the C-state chosen before it (``_idle_idx``) now, unless a task
        became runnable meanwhile (the idle loop exits)."""
        if self.rq:
            self._schedule(from_idle=True)
            return
        now = self.engine.now
        self.cpu.set_idle(now, self._idle_idx)
        self.mode = IDLE
        self._idle_since = now

    def _end_idle(self, now: float, tick_wakeup: bool = False) -> None:
        """The idle period ends now (by the scheduler tick's interrupt if ``tick_wakeup``): the
        cpuidle governor learns its length, and it counts as IO-wait time if tasks of this CPU
        wait for IO."""
        idle = now - self._idle_since
        self.governor.reflect(idle, tick_wakeup)
        self.avg_idle_ns += (idle - self.avg_idle_ns) * 0.125  # update_avg(&rq->avg_idle, delta)
        self.cstate_exit_ns += self._exit_ns[self.cpu.cstate]  # the CPU is in C0 from now, waking up
        if self._flushes[self.cpu.cstate]:
            self._caches_flushed = True
        if self.iowaiters:
            self.iowait_ns += idle
        if self._tick_call is None and self._tick_on:
            self._start_tick()
            self._tick_restart_due = True  # its cost is paid once the wake-up's handler has run
        if self.engine.tracer is not None:
            self._trace_idle_end(now)

    def _leave_idle(self) -> None:
        """A task became runnable on an idle CPU outside IRQ context (e.g. placement)."""
        now = self.engine.now
        self._end_idle(now)
        self._charge_tick_restart()
        exit_ns = self.cstates[self.cpu.cstate].exit_latency_ns
        self.cpu.set_busy(now, self._seg_act)
        self.mode = NONE
        if exit_ns > 0:
            self._waking = True
            self.engine.call_in(exit_ns, self._awake)
        else:
            self._schedule(from_idle=True)

    def _awake(self) -> None:
        """The C-state exit of :meth:`_leave_idle` is over: run what is runnable."""
        self._waking = False
        self._schedule(from_idle=True)

    # ------------------------------------------------------------------ interrupts
    def raise_irq(self, work: IrqWork) -> None:
        """An interrupt (device MSI-X, timer, IPI) arrives at this CPU now."""
        if self.mode == IDLE and not self._irqs:
            self._irq_on_idle(work, self.engine.now)
            return
        self._irqs.append(work)
        if self.mode != IRQ:
            self._start_irq()

    def _start_irq(self) -> None:
        now = self.engine.now
        prev = self.mode
        delay = 0.0
        if prev == IDLE and len(self._irqs) == 1:
            self._irq_on_idle(self._irqs.popleft(), now)
            return
        if prev == IDLE:
            delay = self.cstates[self.cpu.cstate].exit_latency_ns
            self._end_idle(now, self._irqs[0] is self._tick_irq)
        elif prev == RUN:
            self._seg_rem = self._seg_end - now
            exit_left = self._seg_work_from - now
            if exit_left > 0.0:
                # the CPU is still leaving its C-state (the exit that started this segment): the
                # handler runs once it is awake, and the segment keeps only its work
                delay = exit_left
                self._seg_rem -= exit_left
            self._seg_rem_fac = self._smt_fac
            seg_call = self._seg_call
            assert seg_call is not None  # the interrupted segment's end
            seg_call.cancel()
        elif prev == POLL:
            self._charge_poll(now)
            if self._poll_call is not None:
                self._poll_call.cancel()
                self._poll_call = None
        self._irq_prev = prev
        self.mode = IRQ
        self._next_irq(delay)

    def _irq_on_idle(self, work: IrqWork, now: float) -> None:
        """An interrupt wakes an idle CPU: C-state exit, handler, then whatever it made runnable.
        Nothing else can run on this CPU meanwhile, so the exit and handler time are carried into
        the next segment and the handler's effects apply now with timestamps from ``clock()``."""
        self._end_idle(now, work is self._tick_irq)
        # _take_irq for ``work``, inlined (once per interrupt-completed IO)
        cost = work.cost(self)
        self._count(cost.idx)
        self.irq_kinds[work.kind] += 1
        self.cpu.set_busy(now, cost.activity)
        self.mode = NONE
        exit_ns = self._exit_ns[self.cpu.cstate]
        self._carry_ns += exit_ns + cost.cycles / self.freq
        self._carry_fixed_ns += exit_ns
        if self.engine.tracer is not None:
            self._trace_parts += [(f"{self.cstates[self.cpu.cstate].name} exit", exit_ns)] + [
                (f"hard IRQ ({work.kind}): {name}", ns) for name, ns in self._layer_parts(cost)]
        work.fire(self)
        self._charge_tick_restart()
        if self.rq:
            self._schedule(from_idle=True)
        else:
            self.run(self.cost_idle_reenter, self._enter_idle_cb)

    def _charge_tick_restart(self) -> None:
        """tick_nohz_idle_exit: re-arming a stopped tick costs one hrtimer programming, carried
        into what the CPU runs after the wake-up's interrupt handler."""
        if self._tick_restart_due:
            self._tick_restart_due = False
            self.add_carry(self.cost_tick_restart)

    def _take_irq(self, now: float) -> tuple[IrqWork, Cost]:
        """Dequeue the next interrupt, evaluate its cost (the handler sees the CQ as it is now) and
        account it; the CPU is busy from now."""
        work = self._irqs.popleft()
        cost = work.cost(self)
        self._count(cost.idx)
        self.irq_kinds[work.kind] += 1
        self.cpu.set_busy(now, cost.activity)
        return work, cost

    def _next_irq(self, delay: float) -> None:
        now = self.engine.now
        work, cost = self._take_irq(now)
        ns = cost.cycles / self.freq
        act = self._seg_act = cost.activity
        cpu = self.cpu
        if not cpu.busy or cpu.activity != act:
            cpu.set_busy(now, act)  # first: a CPU waking up learns its SMT sibling's activity here
        fac = self._smt_fac
        if fac != 1.0:  # the handler competes with the sibling like any other work
            self.smt_stall_ns += ns * (fac - 1.0)
            ns *= fac
        tr = self.engine.tracer
        if tr is not None:
            tr.span(1, self.id, f"hard IRQ ({work.kind})", now + delay, ns, "irq")
        self._irq_work_from = now + delay
        self._irq_end_t = now + delay + ns
        self._irq_call = self.engine.call_in(delay + ns, self._irq_end_cb, work)

    def _irq_end(self, work: IrqWork) -> None:
        self._irq_call = None
        work.fire(self)
        if self._irqs:
            self._next_irq(0.0)
            return
        prev = self._irq_prev
        now = self.engine.now
        if prev == RUN:
            self.mode = RUN
            self.cpu.set_busy(now, self._seg_act)
            rem = self._seg_rem
            if self._seg_rem_fac != self._smt_fac:  # the sibling changed meanwhile
                rem = self._stretch(rem, self._smt_fac, self._seg_rem_fac)
            self._seg_work_from = now
            self._seg_end = now + rem
            self._seg_call = self.engine.call_in(rem, self._seg_done)
        elif prev == POLL:
            self.mode = POLL
            self.cpu.set_busy(now, self._act_poll)
            self._poll_start = now
            self._poll_check()
        elif prev == IDLE:
            self.mode = NONE
            self._charge_tick_restart()
            if self.rq:
                self._schedule(from_idle=True)
            else:
                self.run(self.cost_idle_reenter, self._enter_idle_cb)
        else:
            self.mode = prev

    # ------------------------------------------------------------------ timers
    def start_timer(self, delay_ns: float, fire) -> Timer:
        """Arm an hrtimer on this CPU; at expiry a timer interrupt runs ``fire(runner)``."""
        delay_ns += self._carry_ns  # armed at the end of carried work
        now = self.engine.now
        timer = Timer(now + delay_ns, self, fire)
        _heappush(self.timers, timer)
        # at the front of the heap, cancelled timers are dropped here too (not only on idle entry)
        timers = self.timers
        while timers and not timers[0].active:
            _heappop(timers)
        timer.call = self.engine.call_in(delay_ns, timer.expire)
        return timer

    @staticmethod
    def cancel_timer(timer: Timer) -> None:
        timer.active = False
        timer.fire = None  # (no owner <-> timer cycle left)
        call = timer.call
        if call is not None:
            call.cancel()
            timer.call = None  # no timer <-> call cycle left

    # ------------------------------------------------------------------ polling
    def poll(self, qp: NvmeQueue | None, req: Any, then, more: tuple = ()) -> None:
        """The current task busy-polls ``qp`` (blk_poll) until ``req`` is complete, then ``then()``;
        each iteration also polls the queues ``more`` (io_iopoll_check: a ring's requests on
        several CPUs' queues, after its thread moved). Work carried from a context switch runs
        first: polling starts after it."""
        if req.done:
            then()
            return
        now = self.engine.now
        start = now
        if self._carry_ns:
            start += self._absorb_carry(self.current)
        self.mode = POLL
        self._poll_qp = qp
        if qp is not None and qp.cpu != self.id:
            qp.remote_pollers.append(self)  # blk_poll of another CPU's queue (the task moved)
        self._poll_more = more
        for q in more:
            if q.cpu != self.id:
                q.remote_pollers.append(self)
        self._poll_req = req
        self._poll_then = then
        self._poll_start = start
        self.cpu.set_busy(now, self._act_poll)
        self._poll_check()

    def spin(self, waiter, then) -> None:
        """The current task spins (e.g. on a user-space ring) until ``waiter.done``; whoever makes
        it done calls :meth:`spin_notify`."""
        self.poll(None, waiter, then)

    def spin_notify(self, waiter, at: float | None = None) -> None:
        """``waiter`` became done (at time ``at``, default now; e.g. the clock of the CPU that
        completed it): a spinning task notices at the end of its loop iteration."""
        if self.mode == POLL and self._poll_req is waiter and self._poll_call is None:
            it = self._spin_ns
            now = self.engine.now
            t = now if at is None or at < now else at
            elapsed = t - self._poll_start
            delay = (t - now) + (it - elapsed % it if elapsed >= 0 else it - elapsed)
            self._poll_call = self.engine.call_in(delay, self._poll_hit_cb)

    def _poll_check(self) -> None:
        if self.need_resched and self.rq:
            self._poll_interrupt_for_resched()
        elif self._poll_qp is None:
            if self._poll_req.done and self._poll_call is None:
                self._poll_call = self.engine.call_in(max(0.0, self._poll_start - self.engine.now) + self._spin_ns, self._poll_hit_cb)
        elif (self._poll_qp.hw.cq or (self._poll_more and any(q.hw.cq for q in self._poll_more))) and self._poll_call is None:
            self._poll_call = self.engine.call_in(self._poll_start - self.engine.now + self._iter_ns, self._poll_hit_cb)

    def cqe_posted(self, qp: NvmeQueue) -> None:
        """A completion entry appeared on polled queue ``qp`` (mapped to this CPU, or polled by
        this CPU's task from here)."""
        if self.mode == POLL and (self._poll_qp is qp or qp in self._poll_more) and self._poll_call is None:
            it = self._iter_ns
            elapsed = self.engine.now - self._poll_start
            delay = it - elapsed % it if elapsed >= 0 else it - elapsed
            self._poll_call = self.engine.call_in(delay, self._poll_hit_cb)

    def _charge_poll(self, now: float) -> None:
        if self.engine.tracer is not None and now > self._poll_start:
            self.engine.tracer.span(1, self.id, "poll" if self._poll_qp is not None else "spin", self._poll_start,
                                    now - self._poll_start, "polling")
        ns = max(0.0, now - self._poll_start)
        cyc = ns * self.freq
        self.poll_ns += ns
        self.poll_cycles += cyc
        if self.current is not None:
            if self._poll_qp is None and not self.current.kthread:  # a user-space spin (a ring, fio's flow)
                self.current.usr_ns += ns
            else:
                self.current.sys_ns += ns
        self._poll_start = now

    def _poll_hit(self) -> None:
        self._poll_call = None
        now = self.engine.now
        self._charge_poll(now)
        qp, req, then, more = self._poll_qp, self._poll_req, self._poll_then, self._poll_more
        self._poll_qp = self._poll_req = self._poll_then = None
        self.mode = NONE
        if qp is not None and qp.cpu != self.id:
            qp.remote_pollers.remove(self)
        # reaping (carried) runs before what follows: the task's completion path or more polling
        driver = self.driver
        assert driver is not None
        if qp is not None:
            driver.reap(self, qp)
        if more:
            self._poll_more = ()
            for q in more:
                if q.cpu != self.id:
                    q.remote_pollers.remove(self)
                if q.hw.cq:
                    driver.reap(self, q)
        if req.done:
            then()
        else:
            self.poll(qp, req, then, more)

    def _poll_interrupt_for_resched(self) -> None:
        """need_resched ends the poll loop, and the poller is preempted: it stays runnable and
        polls again when it is switched back in (or finds its request completed by whoever
        reaped the queue meanwhile). In 5.x every poll loop behaves so: blk_poll returns 0 on
        need_resched with the task set back to TASK_RUNNING, so the dio wait loop's
        blk_io_schedule() only yields; io_iopoll_check stops and fio enters again; the io_uring SQ
        thread calls cond_resched; user-space ring spins are preempted."""
        if self._poll_call is not None:
            self._poll_call.cancel()
            self._poll_call = None
        self._charge_poll(self.engine.now)
        qp, req, then, more = self._poll_qp, self._poll_req, self._poll_then, self._poll_more
        self._poll_qp = self._poll_req = self._poll_then = None
        self._poll_more = ()
        self.mode = NONE
        if qp is not None and qp.cpu != self.id:
            qp.remote_pollers.remove(self)
        for q in more:
            if q.cpu != self.id:
                q.remote_pollers.remove(self)
        task = self.current
        assert task is not None
        runners = self.runners

        def resume():
            if req.done:
                then()
            else:  # on the CPU it is switched back in on (the balancer may have moved it)
                runners[task.cpu].poll(qp, req, then, more)

        self._switch_out(task, voluntary=False, resume=resume)
