"""Per-CPU execution: segments of CPU work, the work carried into the next segment, and the CPU
time they account (uses of each cost bundle, time per stack layer at the frequency each piece ran
at, SMT contention).

A segment is a stretch of code of known cycles (a :class:`~models.os.costs.bundle.Cost`), converted to time
with the CPU's frequency at the moment it runs, ending in one continuation callback: one event,
however many stack layers it spans. Work that needs no event of its own (a context switch, a
wake-up, an interrupt on an idle CPU, CQ reaping) is *carried* into the next segment.

The per-CPU runner (:class:`models.os.sched.runner.CpuRunner`) is one object built as a single-inheritance
chain, one module per kernel seam, across the kernel's directories (models/os/sched/, time/, irq/); each
level sets up its own state and calls the levels below it:

=====================================  ==========================================================
:class:`Execution` (this module)       segments, carried work, CPU-time accounting
``Polling`` (sched/poll.py)            blk_poll and user-space spins
``Hrtimers`` (time/hrtimer.py)         the CPU's armed hrtimers
``IdleLoop`` (sched/idle.py)           the idle path (cpuidle, C-state entry and exit) and the tick
``IrqEntry`` (irq/entry.py)            hard-IRQ entry and exit (what an IRQ runs: irq/irqwork.py)
``Cfs`` (sched/cfs.py)                 the run queue: CFS picking, context switches, slices
``Wakeup`` (sched/placement.py)        try_to_wake_up, wake-up placement, task moves
``CpuRunner`` (sched/runner.py)        the whole, and the surface load balancing reads
                                       (sched/balance.py)
=====================================  ==========================================================

The few calls up the chain are the hooks declared at the end of :class:`Execution`. (A chain rather
than parts calling each other: compiled with mypyc, a method of any level is a direct call on the
one object, and its state a field of one struct, on the hottest path of the simulator.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from models.cpu.core import LogicalCpu, SmtWatcher
from models.cpu.cpuidle import CpuidleGovernor
from models.os.costs.bundle import LAYERS as _LAYER_NAMES
from models.os.costs.bundle import Cost
from models.os.interfaces import Balancer, BlockDriver, RunQueue
from models.os.sched.config import SchedConfig
from models.os.sched.host import SchedHost
from models.os.sched.task import Task
from simcore.engine import Call, Engine

if TYPE_CHECKING:
    from models.os.irq.irqwork import IrqWork

#: the runner's modes: what the CPU is doing (``mode``)
IDLE: Final = "idle"  # in the C-state the cpuidle governor chose
RUN: Final = "run"  # executing a segment (a task's, or the idle task's switching)
POLL: Final = "poll"  # the current task spins in a poll loop
IRQ: Final = "irq"  # a hard-IRQ handler runs on top of what it interrupted
NONE: Final = "none"  # between two of the above (within one event)
POLLING_LAYER: Final = _LAYER_NAMES.index("polling")


class Tally:
    """How many times one thing happened on one CPU (a cost bundle ran, an interrupt of one kind
    came): a native int field (compiled, counting allocates nothing, where a list or dict of ints
    boxes a new int object per count)."""

    __slots__ = ("n",)

    def __init__(self) -> None:
        self.n = 0


class Execution(RunQueue, SmtWatcher):
    """The execution level of one logical CPU's runner: see the module docstring."""

    def __init__(
        self, host: SchedHost, cpu: LogicalCpu, governor: CpuidleGovernor, sched: SchedConfig, balancer: Balancer
    ):
        self.host = host
        self.engine: Engine = host.engine
        #: the scheduler-wide state and load balancing (models.os.sched.balance)
        self.balancer = balancer
        self.cpu = cpu
        self.id = cpu.id
        self.freq: float = cpu.core.freq_ghz
        cpu.core.listeners.append(self._freq_changed)
        # SMT contention: work runs smt_fac times slower than alone, smt_fac = 1 + (smt_slowdown - 1)
        # x the sibling's executing activity (1.0 busy, less for poll loops and the POLL spin, 0
        # asleep); the host's core watcher keeps it current (sibling_activity_changed)
        self._smt_excess = cpu.core.pkg.cfg.smt_slowdown - 1.0
        self._smt_fac = 1.0
        self.governor = governor
        self.sched = sched
        self.cstates = cpu.core.pkg.cfg.cstates
        self._exit_ns = tuple(st.wake_latency_ns for st in self.cstates)
        self.sibling_runner: Execution | None = None  # the SMT sibling's runner (set by the balancer)
        #: every CPU's runner (set by the balancer once they all exist) and the NVMe driver
        self.runners: list[Execution] = []
        self.driver: BlockDriver | None = None
        self.current: Task | None = None
        self.rq: list[Task] = []  # the queued tasks (runnable, not running), in arrival order
        #: wake-ups queued on this CPU's wake list whose IPI has not run yet (rq->ttwu_pending: such a
        #: CPU is not idle to select_idle_sibling, 6.1 kernel/sched/core.c idle_cpu)
        self.ttwu_pending = 0
        self.mode = NONE
        self.need_resched = False
        #: the cpufreq governor's scheduler hooks (cpufreq_update_util), if it wants them: at
        #: enqueue (runner, now, iowait) and at each tick (runner, now)
        self.cpufreq_hook: Any = None
        self.cpufreq_tick_hook: Any = None
        self._cnt: list[Tally] = []  # uses of each cost bundle, by its idx (``counts``: a dict)
        self._used: list[int] = []  # the idx of each bundle used, in first-use order
        self.smt_stall_ns = 0.0
        #: the end of the core's P-state stall (its clock stopped: work waits for it), ns
        self._pstate_stall_end = 0.0
        self._init_layer_time()
        self._carry_lock_ns = 0.0  # the part of _carry_ns that is lock waiting (a task's system time)
        # work carried into the next segment (a context switch merged with what follows it): the
        # first _ncarry of _carry (a list kept between segments: none allocated or grown per segment)
        self._carry: list[Cost] = []
        self._ncarry = 0
        self._carry_ns = 0.0
        self._carry_fixed_ns = 0.0  # the part of _carry_ns that is not CPU work (C-state exit)
        #: the first carried bundles, already accounted to whoever ran them (settle_carry): the task
        #: that runs the carried work is charged only for the rest
        self._carry_owned = 0
        self._trace_parts: list = []  # (label, ns) of carried work, kept only when tracing
        # segment state
        self._seg_call: Call | None = None
        self._seg_then: Any = None
        self._seg_end = 0.0
        self._seg_work_from = 0.0  # the segment's work starts here (after a C-state exit)
        self._seg_act = 0.0

    def _init_layer_time(self) -> None:
        # CPU time per stack layer at the frequency each piece ran at: counts are closed into
        # layer_ns_done (at the old frequency) whenever the core's frequency changes
        self.layer_ns_done = [0.0] * len(_LAYER_NAMES)
        self._epoch_counts: dict[int, int] = {}
        # cycles spun in the cpuidle POLL state, banked at each frequency change like layer time
        self._poll_states = [j for j, st in enumerate(self.cstates) if st.polling]
        self.spin_cycles_done = 0.0
        self._epoch_spin_ns = 0.0
        # time spun on contended locks and spent fetching their cache lines (models.os.locking.spinlock), per
        # stack layer: ns, and cycles at the frequency it ran at
        self.lock_ns = [0.0] * len(_LAYER_NAMES)
        self.lock_cycles = [0.0] * len(_LAYER_NAMES)
        self.lock_waited = 0.0  # ns waited on locks so far, all layers
        #: where this CPU's last lock section ended (ns, absolute): a CPU takes its locks one after
        #: another, so sections placed at one instant queue behind its own earlier ones
        self.lock_at = 0.0

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
            # same time, one event fewer
            dur += self._absorb_carry(task) - fixed
        if self._pstate_stall_end > now:
            # the core's clock is stopped (a P-state change): the work waits, overlapping a C-state exit
            wait = self._pstate_stall_end - now
            if wait > fixed:
                fixed = wait
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
        # the hottest event of the simulator: dur >= 0 by construction, so no checks; the previous
        # segment's Call is reused once it has fired (on_event releases it)
        self._seg_call = self.engine.rearm(self._seg_call, self, t)

    def _count(self, idx: int) -> None:
        """One more use of cost bundle ``idx``."""
        cnt = self._cnt
        if idx >= len(cnt):
            cnt.extend([Tally() for _ in range(idx + 1 - len(cnt))])
        uses = cnt[idx]
        if not uses.n:
            self._used.append(idx)
        uses.n += 1

    @property
    def counts(self) -> dict[int, int]:
        """Uses of each cost bundle so far: {bundle idx: count}, in the order of first use."""
        cnt = self._cnt
        return {i: cnt[i].n for i in self._used}

    def add_carry(self, cost: Cost) -> None:
        """Charge ``cost`` as work done before whatever this CPU runs next (no event of its own)."""
        n = self._ncarry
        carry = self._carry
        if n < len(carry):
            carry[n] = cost
        else:
            carry.append(cost)
        self._ncarry = n + 1
        self._carry_ns += cost.cycles / self.freq
        if self.engine.tracer is not None:
            self._trace_parts.extend(self._layer_parts(cost))

    def carried(self) -> list[Cost]:
        """The cost bundles carried into this CPU's next segment, in order (not run yet)."""
        return self._carry[: self._ncarry]

    def lock_wait(self, ns: float, layer: int) -> None:
        """``ns`` spent spinning on a lock and fetching its cache lines (models.os.locking.spinlock): busy
        time in stack layer ``layer`` before whatever this CPU runs next (no event of its own)."""
        self._carry_ns += ns
        self._carry_lock_ns += ns
        self.lock_waited += ns
        self.lock_ns[layer] += ns
        self.lock_cycles[layer] += ns * self.freq
        if self.engine.tracer is not None:
            self._trace_parts.append((f"lock wait ({_LAYER_NAMES[layer]})", ns))

    # -- tracing (only when engine.tracer is set) -------------------------------------------------
    def _layer_parts(self, cost) -> list:
        f = self.freq
        return [(name, cyc / f) for name, cyc in zip(_LAYER_NAMES, cost.layer_cycles) if cyc]

    def _trace_segment(self, tr, now: float, dur: float, cost) -> None:
        parts = self._trace_parts + self._layer_parts(cost)
        self._trace_parts = []
        who = self.current.name if self.current is not None else "swapper (idle task)"
        tr.segment(self.id, now, dur, who, parts)

    # -- carried work, frequency and CPU-time accounting ---------------------------------------
    def _absorb_carry(self, task: Task | None) -> float:
        """Count the carried bundles (on this CPU, and the ones not yet owned on the task) and
        return their time, ns."""
        owned = self._carry_owned
        carry = self._carry
        for i in range(self._ncarry):
            c = carry[i]
            self._count(c.idx)
            if task is not None and i >= owned:
                task.sys_ns += c.sys_cycles / self.freq
        if self._carry_lock_ns:
            if task is not None:
                task.sys_ns += self._carry_lock_ns
            self._carry_lock_ns = 0.0
        self._ncarry = 0
        self._carry_owned = 0
        ns = self._carry_ns
        self._carry_ns = 0.0
        self._carry_fixed_ns = 0.0
        return ns

    def settle_carry(self, task: Task | None) -> None:
        """The work carried so far was run by ``task`` (None: the idle task, which nobody is
        charged for): its system time goes to ``task`` now, and whoever runs next is not charged
        for it. Called at a context switch: the kernel charges a task up to its switch-out
        (update_curr in put_prev_task) and the next one from its pick (set_next_entity)."""
        carry = self._carry
        if task is not None:
            f = self.freq
            for i in range(self._carry_owned, self._ncarry):
                task.sys_ns += carry[i].sys_cycles / f
            task.sys_ns += self._carry_lock_ns
        self._carry_lock_ns = 0.0
        self._carry_owned = self._ncarry

    def _freq_changed(self, freq_ghz: float) -> None:
        if freq_ghz != self.freq:
            self._close_freq_epoch()
        self.freq = freq_ghz
        self._set_loop_ns()
        end = self.cpu.core.stall_until
        now = self.engine.now
        if end > now:
            self._pstate_stall_end = end
            self._pstate_stalled(now, end - now)

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

    def segment_work_ns(self) -> float:
        """The work time of the segment that has just ended (its continuation runs now), ns; 0
        otherwise. Where a continuation places the sections its segment's code took locks in
        (models.os.block.blk_mq): spread over a span as long as that code ran."""
        if self.engine.now != self._seg_end:
            return 0.0
        return self._seg_end - self._seg_work_from

    def clock(self) -> float:
        """The time code running now on this CPU sees (now + any context switch carried into
        its segment), ns."""
        return self.engine.now + self._carry_ns

    def on_event(self) -> None:
        """The running segment ends (its Call's event: this runner is the Call's handler)."""
        call = self._seg_call
        assert call is not None  # (it just fired)
        call.release()  # fired: run() may reuse it
        self.mode = NONE
        then = self._seg_then
        self._seg_then = None
        task = self.current
        if self.need_resched and task is not None and self.rq:
            self._switch_out(task, voluntary=False, resume=then)
            return
        then()

    @property
    def nr_running(self) -> int:
        """Tasks on this runqueue: the running one and the queued ones."""
        return (1 if self.current is not None else 0) + len(self.rq)

    # ------------------------------------------------------------------ hooks (levels above)
    def _switch_out(self, task: Task, voluntary: bool, resume, iowait: bool = False) -> None:
        """``task`` leaves the CPU (models.os.sched.cfs)."""
        raise NotImplementedError

    def _schedule(self, from_idle: bool, prev_kthread: bool = False, prev_queued: bool = False) -> None:
        """Switch to the next task or to idle (models.os.sched.cfs)."""
        raise NotImplementedError

    def raise_irq(self, work: IrqWork) -> None:
        """An interrupt arrives at this CPU now (models.os.irq.entry)."""
        raise NotImplementedError

    def _set_loop_ns(self) -> None:
        """The poll and spin loops' iteration times follow the frequency and SMT (models.os.sched.poll)."""
        raise NotImplementedError

    def _pstate_stalled(self, now: float, ns: float) -> None:
        """The core's clock stops for ``ns`` from ``now`` (a P-state change): the work under way
        (a segment, a handler, a poll loop) ends that much later (models.os.irq.entry)."""
        raise NotImplementedError
