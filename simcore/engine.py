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

import gc
import heapq
from typing import Any, Callable, Final

import simpy
from mypy_extensions import i64, mypyc_attr
from simpy.core import StopSimulation
from simpy.events import NORMAL, URGENT, Event

from simcore.simpy_env import ClockedEnvironment

__all__ = ["Engine", "Call", "Handler", "handler_call", "pop_last", "PROGRESS_EVERY_EVENTS"]

#: simpy's priority of ordinary events, and the heap functions (Finals: compiled code reads them
#: from C statics, not from the module's dictionary, on every event)
_NORMAL: Final[int] = int(NORMAL)
_heappush: Final = heapq.heappush
_heappop: Final = heapq.heappop

#: the heap functions the engine runs: heapq's C functions when this module is interpreted; compiled,
#: the typed 4-ary heap below (with Call.__lt__'s order called directly rather than through Python's
#: rich comparison). Every key (time, priority, id) is distinct, so any correct priority queue pops
#: the same sequence: the heap's shape changes nothing of a run's results, only its speed.
_COMPILED: Final = not __file__.endswith(".py")


def _push(heap: list[Call], item: Call) -> None:
    """Add ``item`` to the 4-ary heap ``heap`` (the children of ``heap[i]`` are ``heap[4i+1 .. 4i+4]``):
    half the levels of a binary heap, so half the moves (each a list read and write). Times are
    compared inline (native floats); only equal times go to :func:`_earlier`'s tie-break. (Positions
    are ``i64``: compiled, machine integers, not tagged Python ints.)"""
    pos: i64 = len(heap)
    heap.append(item)
    t = item.time
    while pos > 0:
        parentpos: i64 = (pos - 1) >> 2
        parent = heap[parentpos]
        pt = parent.time
        if t > pt or (t == pt and not _earlier(item, parent)):
            break
        heap[pos] = parent
        pos = parentpos
    heap[pos] = item


def pop_last(items: list[Any]) -> Any:
    """``items.pop()``, the last item leaving by ``clear()``: CPython shrinks a list popped to
    empty by reallocating its array to zero bytes, which its small-object allocator hands to the C
    library (malloc(0)), and the next append then reallocates that block through the C library
    too; a cleared list frees its array and the next append takes a small block from Python's own
    pools (a third of the cost; the event heaps, a CPU's timers and its run queue empty and refill
    at nearly every event)."""
    if len(items) == 1:
        only = items[0]
        items.clear()
        return only
    return items.pop()


def _pop(heap: list[Call]) -> Call:
    """Remove and return the earliest Call of the 4-ary heap ``heap`` (see :func:`_push`)."""
    last: Call = pop_last(heap)
    n: i64 = len(heap)
    if n == 0:
        return last
    top = heap[0]
    lt = last.time
    pos: i64 = 0
    child: i64 = 1
    while child < n:
        best = heap[child]
        bt = best.time
        bestpos: i64 = child
        stop: i64 = child + 4 if child + 4 <= n else n
        c: i64 = child + 1
        while c < stop:
            other = heap[c]
            ot = other.time
            if ot < bt or (ot == bt and _earlier(other, best)):
                best = other
                bt = ot
                bestpos = c
            c += 1
        if bt > lt or (bt == lt and not _earlier(best, last)):
            break
        heap[pos] = best
        pos = bestpos
        child = 4 * pos + 1
    heap[pos] = last
    return top


def _qpush(heap: list[Call], call: Call) -> None:
    """Push ``call`` onto ``heap``: heapq's C function interpreted, the 4-ary heap compiled."""
    if _COMPILED:
        _push(heap, call)
    else:
        _heappush(heap, call)


#: events between two calls of :attr:`Engine.progress_hook` (a power of two: a bit test per event)
PROGRESS_EVERY_EVENTS = 1 << 14


@mypyc_attr(allow_interpreted_subclasses=True)  # (a model or a test may write one in plain Python)
class Handler:
    """An object with one recurring event of its own (a CPU's segment end, an hrtimer's expiry):
    the engine calls its :meth:`on_event` directly (compiled, a native method call: no bound
    method, argument tuple or argument parsing per event, which cost as much as a short event's
    own work). Queue one with :meth:`Engine.call_handler_in` or :meth:`Engine.rearm`, or make its
    Call with :func:`handler_call` and :meth:`Engine.schedule` (or ``schedule_bulk``) it."""

    __slots__ = ()

    def on_event(self) -> None:
        """The event happens (now)."""
        raise NotImplementedError


class Call:
    """A scheduled callback: ``fn(*args)`` at ``time`` ns, or ``handler.on_event()`` when it
    has a :class:`Handler`; ``cancel()`` makes it a no-op.

    Not a simpy event: :meth:`Engine.run` dispatches it directly (it is its own heap entry: one
    call, no callback list, bound method or ``step()`` frame). Calls order by (time, priority, id),
    simpy's order; a simpy event is queued as a Call of :meth:`Engine._step` with simpy's priority,
    so callbacks and simpy processes interleave deterministically.

    Its public attributes are its owner's to read (native fields, compiled: no call): ``time``
    (when it runs, ns: a timer's expiry, the next tick), ``args`` (what it runs with: the work of an
    interrupt handler whose end moves), ``handler``; ``fn`` is None once released. Only the engine
    writes ``eid``; a model changes a queued Call only through :meth:`cancel`, :meth:`release` and
    :meth:`Engine.rearm`.
    """

    __slots__ = ("fn", "args", "time", "prio", "eid", "handler")

    def __init__(self, fn: Callable, args: tuple, time: float, prio: int = _NORMAL):
        self.fn: Any = fn  # None once released by its owner (release): Engine.rearm may reuse it
        self.args = args
        self.time = time
        self.prio = prio  # simpy's priority (URGENT 0 before NORMAL 1 at the same time)
        self.eid = 0  # its id, set when queued: same time and priority run in scheduling order
        self.handler: Handler | None = None  # (set: the event is handler.on_event(), fn is _HANDLED)

    def __lt__(self, other: Call) -> bool:
        return _earlier(self, other)

    def cancel(self) -> None:
        self.fn = _NOOP

    def release(self) -> None:
        """Its callback runs (called from it): :meth:`Engine.rearm` may queue this Call again."""
        self.fn = None


def _earlier(a: Call, b: Call) -> bool:
    """``a < b``: by time, then priority, then id (a function, not ``<``: compiled, ``<`` goes through
    Python's rich comparison, this is a direct call on the native fields)."""
    t, o = a.time, b.time
    if t != o:
        return t < o
    if a.prio != b.prio:
        return a.prio < b.prio
    return a.eid < b.eid


def _noop(*_args) -> None:
    pass


def _handled(*_args) -> None:
    raise AssertionError("a handler's Call is dispatched to its handler")


#: what a cancelled Call runs (Final: the loop's identity test reads it from a C static)
_NOOP: Final = _noop
#: the ``fn`` of a Call whose event is its handler's (never called)
_HANDLED: Final = _handled


def handler_call(handler: Handler, time_ns: float) -> Call:
    """A Call of ``handler.on_event()`` at ``time_ns`` (not queued: :meth:`Engine.schedule` it)."""
    call = Call(_HANDLED, (), time_ns)
    call.handler = handler
    return call


class Engine:
    """Clock (ns), event queue and run control of one simulation."""

    def __init__(self, tracer: Any | None = None):
        #: Current simulated time in ns: a plain attribute (read on every hot path), advanced only
        #: by :meth:`run`; the simpy environment's clock is this attribute. Read-only.
        self.now = 0.0
        self.env = ClockedEnvironment(self)
        #: events taken off the queue by :meth:`run` (a cancelled callback still costs its pop)
        self.events_processed = 0
        #: Optional event-trace hook; models test ``if engine.tracer:`` so it costs nothing when off.
        self.tracer = tracer
        #: Optional ``hook(now_ns)`` called every PROGRESS_EVERY_EVENTS events by :meth:`run` (a
        #: progress display: it must not change the simulation). ``None``: the loop has no check.
        self.progress_hook: Callable[[float], None] | None = None
        #: the event queue: two heaps of Calls (simpy's events among them, queued by
        #: ClockedEnvironment.schedule as Calls of _step): the bulk heap holds what :meth:`schedule_bulk`
        #: queued (a device's completions: thousands pending at depth 128 over many devices), the
        #: other one everything else (a few per CPU), so that the frequent near events are pushed and
        #: popped in a small heap; the next event is the earlier of the two tops (the order is the
        #: same as from one heap). ``_eid``: the id of the next Call queued (its same-time order).
        self._queue: list[Call] = []
        self._bulk: list[Call] = []
        self._eid = 0
        #: the earliest pending Call when it was queued ahead of both heaps (else None): the next
        #: event is most often the one the last callback just queued (a CPU's segment end), and it
        #: then costs no heap push and pop. Invariant: ``_next < _queue[0]`` and ``_next < _bulk[0]``.
        self._next: Call | None = None

    def schedule(self, call: Call) -> None:
        """Queue the :class:`Call` ``call`` at exactly ``call.time`` ns (not in the past: the
        caller guarantees it). The hot paths' entry: a model that reuses a ``Call`` (a CPU's
        segment end) or knows the absolute time of an event (a device's completion posting)
        schedules it without the checks and the re-based time of :meth:`call_at`. Same-time
        ordering as every other event (FIFO by scheduling order)."""
        eid = self._eid
        self._eid = eid + 1
        call.eid = eid
        nxt = self._next
        t = call.time  # (times compared inline, the tie-break by _earlier: compiled, no call)
        if nxt is None:
            queue = self._queue
            bulk = self._bulk
            ahead = True
            if queue:
                top = queue[0]
                tt = top.time
                ahead = t < tt or (t == tt and _earlier(call, top))
            if ahead and bulk:
                top = bulk[0]
                tt = top.time
                ahead = t < tt or (t == tt and _earlier(call, top))
            if ahead:
                self._next = call
            else:
                _qpush(queue, call)
        elif t < nxt.time or (t == nxt.time and _earlier(call, nxt)):
            _qpush(self._queue, nxt)
            self._next = call
        else:
            _qpush(self._queue, call)

    def schedule_bulk(self, call: Call) -> None:
        """:meth:`schedule` for an event of which many are pending at once (a device's completion
        postings): it waits in the bulk heap, apart from the few near events of the CPUs. The same
        order as every other event (by time, then FIFO by scheduling order)."""
        eid = self._eid
        self._eid = eid + 1
        call.eid = eid
        nxt = self._next
        if nxt is not None and _earlier(call, nxt):
            _qpush(self._queue, nxt)  # (no longer ahead of both heaps)
            self._next = None
        _qpush(self._bulk, call)

    def rearm(self, call: Call | None, handler: Handler, time_ns: float) -> Call:
        """Queue ``handler.on_event()`` at exactly ``time_ns`` (not in the past: the caller
        guarantees it, as for :meth:`schedule`), reusing ``call`` if its owner released it
        (:meth:`Call.release`), else a new Call; returns the Call queued. For a model's own
        recurring event (a CPU's segment end, the hottest event of the simulator): one allocation
        fewer per event. A cancelled Call is still queued and is never reused."""
        if call is not None and call.fn is None:
            call.fn = _HANDLED
            call.handler = handler
            call.time = time_ns
        else:
            call = handler_call(handler, time_ns)
        self.schedule(call)
        return call

    def call_handler_in(self, delay_ns: float, handler: Handler) -> Call:
        """Run ``handler.on_event()`` after ``delay_ns`` ns of simulated time (:meth:`call_in`'s
        times and checks)."""
        if delay_ns < 0:
            raise ValueError(f"negative delay {delay_ns} ns")
        call = handler_call(handler, self.now + delay_ns)
        self.schedule(call)
        return call

    def call_in(self, delay_ns: float, fn: Callable, *args) -> Call:
        """Run ``fn(*args)`` after ``delay_ns`` ns of simulated time."""
        if delay_ns < 0:
            raise ValueError(f"negative delay {delay_ns} ns")
        call = Call(fn, args, self.now + delay_ns)
        self.schedule(call)
        return call

    def schedule_simpy(self, event: Event, priority: int, time_ns: float) -> None:
        """Queue a simpy event (``simpy.Environment.schedule``, through ClockedEnvironment): a
        Call of :meth:`_step` with simpy's priority."""
        self.schedule(Call(self._step, (event,), time_ns, priority))

    def call_at(self, time_ns: float, fn: Callable, *args) -> Call:
        """Run ``fn(*args)`` at absolute simulated time ``time_ns`` (not in the past)."""
        return self.call_in(time_ns - self.now, fn, *args)

    def process(self, generator) -> simpy.Process:
        """Start a simpy process (available for slow control-plane logic; the models use callbacks)."""
        return self.env.process(generator)

    def run(self, until: float | Event | None = None) -> Any:
        """Advance the simulation: to time ``until`` (ns), until the simpy event ``until`` has
        been processed, or (``None``) until no events remain. Same semantics as
        ``simpy.Environment.run`` (a time limit runs the events before it, not those at it), with
        callbacks dispatched inline; always use this instead of ``env.run``.

        Python's cyclic garbage collector is paused while the loop runs (and restored after): the
        models free everything by reference counting (``tests/test_engine.py`` checks that one IO
        leaves no reference cycles behind), and collector passes over the growing per-IO records
        would otherwise cost about a tenth of the run time."""
        if isinstance(until, Event) and until.callbacks is None:
            return until.value  # (processed already)
        if until is not None:
            self._arm_stop(until)
        queue = self._queue
        bulk = self._bulk
        n = 0
        gc_was_on = gc.isenabled()
        gc.disable()
        hook = self.progress_hook
        mask = PROGRESS_EVERY_EVENTS - 1
        try:
            while True:
                call = self._next
                if call is not None:
                    self._next = None
                elif queue:
                    if bulk:  # the earlier of the two tops (times compared inline: compiled, no call)
                        head = bulk[0]
                        other = queue[0]
                        ht = head.time
                        ot = other.time
                        from_bulk = ht < ot or (ht == ot and _earlier(head, other))
                    else:
                        from_bulk = False
                    if from_bulk:
                        call = _pop(bulk) if _COMPILED else _heappop(bulk)
                    else:
                        call = _pop(queue) if _COMPILED else _heappop(queue)
                elif bulk:
                    call = _pop(bulk) if _COMPILED else _heappop(bulk)
                else:
                    break
                now = self.now = call.time
                n += 1
                if hook is not None and not n & mask:  # a progress call every PROGRESS_EVERY_EVENTS events
                    hook(now)
                fn = call.fn
                if fn is not _NOOP:  # (a cancelled call is only popped)
                    handler = call.handler
                    if handler is not None:
                        handler.on_event()
                    else:
                        fn(*call.args)
        except StopSimulation as stop:
            n -= 1  # the end marker is not an event of the model
            return stop.args[0]
        finally:
            self.events_processed += n
            if gc_was_on:
                gc.enable()
        if until is not None:
            raise RuntimeError(f'No scheduled events left but "until" event was not triggered: {until}')
        return None

    def _arm_stop(self, until: float | Event) -> None:
        """Make :meth:`run` return when the simpy event ``until`` is processed, or at time ``until`` (ns)."""
        stop: Any  # the simpy event whose processing ends the run
        if isinstance(until, Event):
            stop = until
        else:
            at = float(until)
            if at <= self.now:
                raise ValueError(f"until ({at}) must be greater than the current simulation time")
            stop = Event(self.env)
            stop._ok = True
            stop._value = None
            self.env.schedule(stop, URGENT, at - self.now)
        stop.callbacks.append(StopSimulation.callback)

    def _step(self, event: Event) -> None:
        """simpy.Environment.step for one simpy event (processes, timeouts, conditions)."""
        callbacks, event.callbacks = event.callbacks, None  # type: ignore[assignment]
        try:
            for callback in callbacks:
                callback(event)
        except StopSimulation:
            event.callbacks = callbacks[callbacks.index(callback) + 1 :]
            self.env.schedule(event, URGENT - 1)  # type: ignore[arg-type]
            raise
        if not event._ok and not hasattr(event, "_defused"):
            exc = type(event._value)(*event._value.args)
            exc.__cause__ = event._value
            raise exc
