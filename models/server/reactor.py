"""Leaf classes of the server model: the commands it serves, lightweight threads, reactors, periodic tickers.

Kept apart from :mod:`models.server.target` so policies can import them without a cycle.
"""

from __future__ import annotations

from collections import deque
from math import ceil

from models.cpu.cpuidle import CpuidleGovernor
from models.ssd.command import NvmeCommand
from simcore.engine import Engine

# reactor states
AWAKE, ASLEEP, WAKING = 0, 1, 2
# what an awake reactor does when it has nothing to process
POLL, HYBRID, IRQ = 0, 1, 2
LOOP_EPS_NS = 1e-6  # ns; guards ceil() against rounding at exact loop boundaries


class FabricsCommand(NvmeCommand):
    """One NVMe-oF command a client sent (its command capsule), served by the target (not a block
    layer's request: the target has no kernel, see :class:`models.os.block.request.Request`): its
    :class:`NvmeCommand` to the SSD, plus the lightweight thread and SSD it goes to, and its arrival
    at the target and submit times (ns); when the run keeps records, also the CPU that completed
    it, when it did and when the client got the response (ns)."""

    __slots__ = ("id", "thread", "ssd", "t_arr", "t_submit", "cpu", "t_reaped", "t_complete", "conn")


class LThread:
    """A lightweight (SPDK) thread: its connections' RX queues and one NVMe queue pair per SSD."""

    __slots__ = ("idx", "reactor", "qps", "poll_cycles", "pending", "pending_cq", "busy", "arrivals", "moves", "queued")

    def __init__(self, idx: int, poll_cycles: float):
        self.idx = idx
        self.reactor: Reactor | None = None  # None while moving between reactors
        self.qps: list = []
        self.poll_cycles = poll_cycles
        # requests not yet taken by a reactor (thread in transit, or its reactor saturated): received
        # (RX queue) and completed by the SSD (NVMe CQ), polled separately as SPDK's pollers are
        self.pending: deque = deque()
        self.pending_cq: deque = deque()
        self.queued = False  # in its reactor's backlog ring
        self.busy = 0.0  # processing ns committed for this thread (cumulative)
        self.arrivals = 0  # requests received on its connections (cumulative)
        self.moves = 0


class Reactor:
    """One reactor (a reserved logical core), or a kernel CPU for the interrupt-driven target."""

    __slots__ = (
        "idx",
        "cpu_id",
        "cpu",
        "pcore",
        "sib",
        "threads",
        "state",
        "idle_mode",
        "t_mode",
        "free_at",
        "stall_until",
        "period_start",
        "busy",
        "loop_cycles",
        "infl",
        "incoming",
        "wake_end",
        "wake_ns",
        "sleep_cstate",
        "sleep_ev",
        "period_ev",
        "rx_cycles",
        "cq_cycles",
        "act",
        "idle",
        "idle_state",
        "idle_from",
        "idle_gov",
        "entry_ns",
        "exit_cycles",
        "hyb_kind",
        "hyb_sleep",
        "in_stretch",
        "st_t0",
        "st_L",
        "st_P",
        "st_E",
        "st_W",
        "svc",
        "wakes",
        "backlog",
        "refill_ev",
    )

    def __init__(self, idx: int, cpu, rx_cycles: float, cq_cycles: float, loop_cycles: float):
        self.idx = idx
        self.cpu_id = cpu.id
        self.cpu = cpu
        self.pcore = cpu.core
        self.sib: Reactor | None = None
        self.threads: list[LThread] = []
        self.state = AWAKE
        self.idle_mode = POLL
        self.t_mode = 0.0  # loop phase origin (reset when the ring changes or the reactor wakes)
        self.free_at = 0.0  # end of committed work
        self.stall_until = 0.0  # end of the core's last P-state stall (no work starts before it)
        self.period_start = 0.0  # start of the current contiguous busy period
        self.busy = 0.0  # committed processing ns (cumulative)
        self.loop_cycles = loop_cycles
        self.infl = 1.0  # time factor of scheduler overhead running on this reactor
        self.incoming = 0  # threads on their way here
        self.wake_end = 0.0
        self.wake_ns = 0.0
        self.sleep_cstate = 1
        self.sleep_ev = None
        self.period_ev = None
        self.rx_cycles = rx_cycles
        self.cq_cycles = cq_cycles
        self.act = 0.0  # activity while processing
        # interrupt-driven (IRQ) idle
        self.idle = False
        self.idle_state = 0
        self.idle_from = 0.0
        self.idle_gov: CpuidleGovernor | None = None
        self.entry_ns = 0.0
        self.exit_cycles = 0.0
        # hybrid polling
        self.hyb_kind = "kernel"
        self.hyb_sleep = None  # callable(reactor) -> sleep ns
        self.in_stretch = False
        self.st_t0 = self.st_L = self.st_P = self.st_E = self.st_W = 0.0
        self.svc = 0.0  # EWMA of the device time of this reactor's IOs (hybrid sleep length)
        self.wakes = 0
        self.backlog: deque = deque()  # threads with work waiting for this (saturated) reactor
        self.refill_ev = None

    def executed_busy(self, t: float) -> float:
        """Processing ns done up to ``t`` (committed work is contiguous from ``period_start``)."""
        fa = self.free_at
        if fa > t:
            return self.busy - (fa - (t if t > self.period_start else self.period_start))
        return self.busy


class Ticker:
    """A periodic decision at ``phase + k x period``. ``fn(now)`` returning False makes it dormant
    (nothing can change until new input; :meth:`poke` re-arms it at the next boundary); returning
    a number defers the next call by that many ns instead of one period."""

    def __init__(self, engine: Engine, period_ns: float, fn, phase_ns: float = 0.0):
        if period_ns <= 0:
            raise ValueError(f"period must be positive, got {period_ns}")
        self.engine = engine
        self.period = period_ns
        self.phase = phase_ns
        self.fn = fn
        self.armed = False
        self.fires = 0

    def next_boundary(self, now: float) -> float:
        k = ceil((now - self.phase) / self.period + 1e-9)
        t = self.phase + k * self.period
        return t if t > now else t + self.period

    def start(self, at_ns: float | None = None) -> None:
        if not self.armed:
            self.armed = True
            self.engine.call_at(self.next_boundary(self.engine.now) if at_ns is None else at_ns, self._fire)

    poke = start

    def _fire(self) -> None:
        self.fires += 1
        now = self.engine.now
        res = self.fn(now)
        if res is False:
            self.armed = False
        elif res is None or res is True:
            self.engine.call_at(now + self.period, self._fire)
        else:
            self.engine.call_at(now + res, self._fire)
