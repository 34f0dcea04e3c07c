"""The simulation clock and event queue: a thin, fast layer over ``simpy.Environment``.

Models schedule plain callbacks (``call_in`` / ``call_at``) instead of running a simpy process per
IO per layer: a callback costs one heap entry and one function call, a generator costs a frame, a
process object and several events. The simpy environment is still the single clock and queue, so
simpy processes (used by slower control-plane logic such as periodic governors) interleave with
callbacks deterministically.

Time is in nanoseconds (float). Same-time events run in scheduling order (simpy's FIFO tie-break),
which keeps runs bit-for-bit reproducible.
"""

from __future__ import annotations

from typing import Any, Callable

import simpy
from heapq import heappush

from simpy.events import NORMAL, Event

__all__ = ["Engine", "Call"]


class Call(Event):
    """A scheduled callback (a pre-triggered simpy event); ``cancel()`` makes it a no-op."""

    def __init__(self, env, fn: Callable, args: tuple, time: float):
        # Event.__init__ inlined (hot path): already triggered, value None, one callback.
        self.env = env
        self.callbacks = [self._fire]
        self._value = None
        self._ok = True
        self.fn = fn
        self.args = args
        self.time = time

    def cancel(self) -> None:
        self.fn = _noop

    def _fire(self, _event) -> None:
        self.fn(*self.args)


def _noop(*_args) -> None:
    pass


class Engine:
    """Clock (ns), event queue and run control of one simulation."""

    def __init__(self, tracer: Any | None = None):
        self.env = simpy.Environment()
        self.events_scheduled = 0
        #: Optional event-trace hook; models test ``if engine.tracer:`` so it costs nothing when off.
        self.tracer = tracer

    @property
    def now(self) -> float:
        """Current simulated time in ns."""
        return self.env._now

    def call_in(self, delay_ns: float, fn: Callable, *args) -> Call:
        """Run ``fn(*args)`` after ``delay_ns`` ns of simulated time."""
        if delay_ns < 0:
            raise ValueError(f"negative delay {delay_ns} ns")
        env = self.env
        t = env._now + delay_ns
        call = Call(env, fn, args, t)
        # env.schedule inlined (hot path); same (time, priority, id) ordering as simpy
        heappush(env._queue, (t, NORMAL, next(env._eid), call))
        self.events_scheduled += 1
        return call

    def call_at(self, time_ns: float, fn: Callable, *args) -> Call:
        """Run ``fn(*args)`` at absolute simulated time ``time_ns`` (not in the past)."""
        return self.call_in(time_ns - self.env._now, fn, *args)

    def process(self, generator) -> simpy.Process:
        """Start a simpy process (available for slow control-plane logic; the models use callbacks)."""
        return self.env.process(generator)

    def run(self, until_ns: float) -> None:
        """Advance the simulation to ``until_ns``."""
        self.env.run(until=until_ns)
