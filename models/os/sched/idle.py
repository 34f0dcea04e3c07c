"""The idle path and the scheduler tick of a CPU (Linux 5.x ``do_idle``, cpuidle, NOHZ idle).

A CPU with nothing to run first tries a new-idle pull (models.os.sched.balance), then asks the cpuidle
governor (interface ``models.cpu.cpuidle``) for a C-state, with the time to its next timer as the
prediction's bound. The periodic tick (a timer interrupt every ``1 / sched.tick_hz``, at jiffy
boundaries) runs while the CPU runs or idles briefly; when the governor stops it
(``tick_nohz_idle_stop_tick``) the stop costs an hrtimer programming before the CPU idles, and
restarting it at the next wake-up another one. The idle period ends by an interrupt (models.os.irq.entry)
or by a task made runnable from elsewhere (:meth:`IdleLoop._leave_idle`): the governor learns its
length, the C-state's exit latency is paid before anything runs, and a cache-flushing state leaves
the next user task to refetch its working set (models.os.sched.cfs).
"""

from __future__ import annotations

from typing import Final

from models.cpu.core import LogicalCpu
from models.cpu.cpuidle import NO_TIMER_NS, CpuidleGovernor
from models.os.costs.tables import CostTable
from models.os.interfaces import Balancer
from models.os.irq.irqwork import FixedIrq
from models.os.sched.config import SchedConfig
from models.os.sched.execution import IDLE, NONE
from models.os.sched.host import SchedHost
from models.os.sched.task import Task
from models.os.time.hrtimer import Hrtimers

#: how long a CPU's blocked load takes to decay to zero after its last task stopped running, ns:
#: ten PELT half-lives (LOAD_AVG_PERIOD = 32 periods of 1,024 us; a full load_avg or util_avg of
#: 1024, SCHED_CAPACITY_SCALE, reaches 0 after log2(1024) = 10 halvings)
BLOCKED_LOAD_DECAY_NS: Final = 10 * 32 * 1.024e6


def _tick_softirq(runner) -> None:
    """What the tick raises after its handler: SCHED_SOFTIRQ's load balancing and nohz kicks
    (models.os.sched.balance)."""
    runner.balancer.sched_softirq(runner)


class IdleLoop(Hrtimers):
    """The idle and tick level of a CPU's runner (models.os.sched.execution)."""

    def __init__(
        self, host: SchedHost, cpu: LogicalCpu, governor: CpuidleGovernor, sched: SchedConfig, balancer: Balancer
    ):
        super().__init__(host, cpu, governor, sched, balancer)
        ct: CostTable = host.costs
        self._enter_idle_cb = self._enter_idle  # bound once: passed to run() at every idle entry
        self._idle_in_cb = self._idle_in
        self._idle_idx = 0  # the C-state chosen before a tick stop (_idle_in)
        self.cost_idle_reenter = ct.get("idle_reenter", actions={"idle_exit": 1, "idle_entry": 1})
        self._flushes = tuple(st.flushes_core_caches for st in self.cstates)
        self._last_user: Task | None = None  # the user task whose working set the core caches hold
        self._caches_flushed = False  # an idle state flushed them since a user task last ran
        self._waking = False  # leaving idle outside an IRQ: the switch in follows the C-state exit
        # NOHZ idle: stopping the tick cancels its hrtimer and programs the clock event device for
        # the next timer; restarting it re-arms it (each an hrtimer (re)programming)
        # (each moves the earliest timer: the clock event device is programmed)
        self.cost_tick_stop = ct.get("tick_stop", actions={"hrtimer_program": 1, "clockevent_program": 1})
        self.cost_tick_restart = ct.get("tick_restart", actions={"hrtimer_program": 1, "clockevent_program": 1})
        self._tick_restart_due = False
        self.avg_idle_ns = 2.0 * sched.migration_cost_ns  # rq->avg_idle (starts at 2 x migration cost)
        self.iowaiters = 0  # rq->nr_iowait: tasks of this runqueue asleep in IO wait
        self.iowait_ns = 0.0  # idle time with IO waiters on this CPU (cpufreq's iowait time)
        #: cumulative C-state exit latency, ns: C0 time spent waking up, in no stack layer
        self.cstate_exit_ns = 0.0
        self._idle_since = 0.0
        # the periodic scheduler tick: a timer interrupt every _tick_ns, at jiffy boundaries, while
        # the CPU runs or idles briefly (NOHZ idle stops it, tick_nohz_idle_exit restarts it)
        self._tick_ns = 1e9 / sched.tick_hz
        self._tick_on = sched.tick
        self._tick_irq = FixedIrq(host.tick_cost, _tick_softirq, "tick")
        #: rq->has_blocked_load (set when the tick stops, cleared once decayed) and when this CPU's
        #: last task stopped running (ns): the nohz stats kick's state (models.os.sched.balance)
        self.has_blocked_load = False
        self.last_task_ns = -BLOCKED_LOAD_DECAY_NS
        self._nohz_entry_ns = -2.0 * BLOCKED_LOAD_DECAY_NS  # the last time the tick stopped

    @property
    def unused(self) -> bool:
        """Nothing running, queued or under way on this CPU (before its first idle period)."""
        return self.current is None and not self.rq and self.mode == NONE

    def start_idle(self) -> None:
        """At the start of a run (Host.start): a CPU still unused enters the idle loop."""
        if self.unused:
            self._enter_idle()

    @property
    def nohz_idle(self) -> bool:
        """Idle with its tick stopped (in nohz.idle_cpus_mask)."""
        return self.mode == IDLE and self._tick_call is None

    def iowait_ns_at(self, now: float) -> float:
        """Cumulative idle time with IO waiters up to ``now``, ns."""
        if self.mode == IDLE and self.iowaiters:
            return self.iowait_ns + now - self._idle_since
        return self.iowait_ns

    def _trace_idle_end(self, now: float) -> None:
        tr = self.engine.tracer
        if tr is not None:
            tr.span(1, self.id, self.cstates[self.cpu.cstate].name, self._idle_since, now - self._idle_since, "idle")

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

    def _charge_tick_restart(self) -> None:
        """tick_nohz_idle_exit: re-arming a stopped tick costs one hrtimer programming, carried
        into what the CPU runs after the wake-up's interrupt handler."""
        if self._tick_restart_due:
            self._tick_restart_due = False
            self.add_carry(self.cost_tick_restart)

    # ------------------------------------------------------------------ idle
    def _enter_idle(self) -> None:
        if self.rq:  # a task became runnable while the CPU switched to idle: the idle loop exits at once
            self._schedule(from_idle=True)
            return
        now = self.engine.now
        balancer = self.balancer
        if (
            balancer.movable_tasks
            and self.avg_idle_ns >= balancer.migration_cost_ns
            and balancer.newidle_balance(self, now)
        ):
            self._schedule(from_idle=False)  # run the pulled task at once: nobody else can pull it meanwhile
            return
        first = self.next_timer()
        next_timer = first.expiry - now if first is not None else NO_TIMER_NS
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
        self._cstate_in(now, idx)

    def _idle_in(self) -> None:
        """The tick is stopped: enter the C-state chosen before it (``_idle_idx``) now, unless a task
        became runnable meanwhile (the idle loop exits)."""
        if self.rq:
            self._schedule(from_idle=True)
            return
        self._cstate_in(self.engine.now, self._idle_idx)

    def _cstate_in(self, now: float, idx: int) -> None:
        """The CPU enters C-state ``idx`` now: the idle period starts."""
        self.cpu.set_idle(now, idx)
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
        exit_ns = self._exit_ns[self.cpu.cstate]
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
