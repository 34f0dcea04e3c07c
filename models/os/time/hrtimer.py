"""hrtimers on a CPU: armed timers, their expiry as a timer interrupt, cancellation.

The earliest armed timer is also the cpuidle governor's next-timer prediction (models.os.sched.idle).
"""

from __future__ import annotations

from typing import Any, Callable

from mypy_extensions import i64

from models.cpu.core import LogicalCpu
from models.cpu.cpuidle import CpuidleGovernor
from models.os.costs.bundle import Cost
from models.os.interfaces import Balancer
from models.os.irq.irqwork import FixedIrq
from models.os.sched.config import SchedConfig
from models.os.sched.host import SchedHost
from models.os.sched.poll import Polling
from simcore.engine import Call, Handler, pop_last


class Timer(Handler):
    """An armed hrtimer (for the governor's next-timer prediction and for cancellation); the
    handler of its expiry's Call."""

    __slots__ = ("expiry", "call", "active", "runner", "fire")

    def __init__(self, expiry: float, runner: Hrtimers, fire: Callable[[Any], None]):
        self.expiry = expiry
        self.call: Call | None = None
        self.active = True
        self.runner = runner  # the CPU it is armed on
        #: its effect: fire(runner) in the timer interrupt; dropped once it fired or was cancelled
        #: (the owner of ``fire`` often holds the timer: no cycle may outlive it, the collector is
        #: off during a run)
        self.fire: Callable[[Any], None] | None = fire

    def on_event(self) -> None:
        """The hrtimer expires: unless cancelled, a timer interrupt on its CPU runs ``fire``."""
        self.call = None  # fired: no timer <-> call cycle left (the collector is off during a run)
        if self.active:
            self.active = False
            fire, self.fire = self.fire, None
            runner = self.runner
            runner.raise_irq(FixedIrq(runner._timer_cost, fire, "timer"))

    def __lt__(self, other: "Timer") -> bool:
        return self.expiry < other.expiry


# A CPU's armed timers are a binary heap by expiry, heapq's own (``heapq.heapify`` of it is a no-op):
# these are heapq's push and pop step for step, typed (compiled, the expiries are compared as native
# floats, not through Timer.__lt__ by Python's rich comparison).
def _timer_push(heap: list[Timer], timer: Timer) -> None:
    """``heapq.heappush(heap, timer)``."""
    heap.append(timer)
    _sift_down(heap, 0, len(heap) - 1)


def _timer_pop(heap: list[Timer]) -> Timer:
    """``heapq.heappop(heap)``."""
    last: Timer = pop_last(heap)
    if not heap:
        return last
    top = heap[0]
    heap[0] = last
    end: i64 = len(heap)
    pos: i64 = 0
    child: i64 = 1
    while child < end:  # heapq's _siftup: the smaller child up, to a leaf
        right = child + 1
        if right < end and not heap[child].expiry < heap[right].expiry:
            child = right
        heap[pos] = heap[child]
        pos = child
        child = 2 * pos + 1
    heap[pos] = last
    _sift_down(heap, 0, pos)
    return top


def _sift_down(heap: list[Timer], start: i64, pos: i64) -> None:
    """heapq's _siftdown: the item at ``pos`` up towards ``start`` while it is earlier than its parent."""
    item = heap[pos]
    t = item.expiry
    while pos > start:
        parent_pos = (pos - 1) >> 1
        parent = heap[parent_pos]
        if t < parent.expiry:
            heap[pos] = parent
            pos = parent_pos
            continue
        break
    heap[pos] = item


class Hrtimers(Polling):
    """The hrtimer level of a CPU's runner (models.os.sched.execution)."""

    def __init__(
        self, host: SchedHost, cpu: LogicalCpu, governor: CpuidleGovernor, sched: SchedConfig, balancer: Balancer
    ):
        super().__init__(host, cpu, governor, sched, balancer)
        self._timer_cost: Cost = host.timer_cost
        self.timers: list[Timer] = []  # a heap by expiry (cancelled ones leave it lazily)
        #: the tick's next expiry (tick_sched_timer, an hrtimer of this CPU too; models.os.sched.idle runs it)
        self._tick_call: Call | None = None
        # a started timer that expires before every other one of this CPU reprograms the clock event
        # device (hrtimer_reprogram); its cycles are part of hrtimer_start_cycles
        self._cost_clockevent: Cost = host.costs.get("clockevent_program", actions={"clockevent_program": 1})

    def start_timer(self, delay_ns: float, fire) -> Timer:
        """Arm an hrtimer on this CPU; at expiry a timer interrupt runs ``fire(runner)``. If it is
        the CPU's earliest timer (the tick's included), the clock event device is reprogrammed."""
        delay_ns += self._carry_ns  # armed at the end of carried work
        now = self.engine.now
        expiry = now + delay_ns
        first = self.next_timer()
        tick = self._tick_call
        if (first is None or expiry < first.expiry) and (tick is None or expiry < tick.time):
            self.add_carry(self._cost_clockevent)  # it is the CPU's earliest timer now
        timer = Timer(expiry, self, fire)
        _timer_push(self.timers, timer)
        self.next_timer()  # cancelled timers at the front of the heap go here too (not only on idle entry)
        timer.call = self.engine.call_handler_in(delay_ns, timer)
        return timer

    def next_timer(self) -> Timer | None:
        """The earliest armed timer, if any (cancelled ones at the front of the heap are dropped)."""
        timers = self.timers
        while timers and not timers[0].active:
            _timer_pop(timers)
        return timers[0] if timers else None

    @staticmethod
    def cancel_timer(timer: Timer) -> None:
        timer.active = False
        timer.fire = None  # (no owner <-> timer cycle left)
        call = timer.call
        if call is not None:
            call.cancel()
            timer.call = None  # no timer <-> call cycle left
