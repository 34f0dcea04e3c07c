"""A kernel spinlock (qspinlock), or a shared cache line updated with atomics, as the CPUs see it:
a hold time, FIFO waiters that spin, and a hand-off that moves the lock's cache lines to the next
holder's CPU.

Linux 6.6 ``include/asm-generic/qspinlock.h``, ``kernel/locking/qspinlock.c``: the fast path is one
``lock cmpxchg`` on the lock word and the release a plain byte store, so an uncontended lock whose
line is already in this CPU's cache costs only the critical section itself. A contended lock queues
its waiters MCS-style, strictly FIFO and not NUMA-aware: each waiter spins (busy, in the layer that
takes the lock) until the holder releases, then the lock word and the data the section writes move
from the previous holder's cache to the next holder's (``Package.line_transfer_cycles``) before the
new holder's section can proceed. The same holds for a lock-free structure on one shared line (an
sbitmap word, an atomic counter): a CPU updating a line another CPU wrote last fetches it first, and
updates of one line are serialised by the cache-coherence protocol.

Model. A lock is a single FIFO server in time: ``acquire(runner, t, hold_cycles)`` says that the CPU
of ``runner`` reaches the lock at ``t`` (ns) and then holds it ``hold_cycles`` at its frequency. If
the lock is reserved past ``t`` by another CPU, the acquirer spins until then; if the lock's lines
were last written by another CPU, they are fetched (``lines`` x the transfer cycles between the two
CPUs, at the acquirer's frequency), which lengthens the hold as well. ``acquire`` returns the ns the
acquirer spends beyond the hold (spin + transfer), which the caller charges to the CPU
(``CpuRunner.lock_wait``: busy time in the lock's layer, carried into what the CPU runs next). The
hold itself is part of the cost bundle that already charges the section. Nothing here caps
throughput: under saturation the lock passes from CPU to CPU, each hand-off costs a transfer, so
throughput through it tends to ``1 / (hold + lines x transfer)`` and the spin of each waiter grows
with the number of CPUs queued ahead of it.

A CPU never waits for its own reservation: the kernel's lock is released before the same CPU can
take it again (a re-acquire would deadlock), so an overlap with its own earlier hold is an artefact
of when the model places the hold (the section already ran inside a segment) and the new hold
simply follows the old one.
"""

from __future__ import annotations

from typing import Any

__all__ = ["SpinLock"]


class SpinLock:
    """One lock (or contended cache line): ``name`` as the kernel calls it, the stack ``layer`` (index
    in ``models.os.costs.bundle.LAYERS``) its waits are charged to, the cache ``lines`` a hand-off moves, and
    the CPU package that prices the transfers. Counters: ``acquisitions``, ``contended`` (the
    acquirer had to spin), ``transfers`` (the lines came from another CPU), ``spin_ns`` and
    ``transfer_ns`` (summed over acquirers)."""

    __slots__ = (
        "name",
        "layer",
        "lines",
        "pkg",
        "free_at",
        "cpu",
        "acquisitions",
        "contended",
        "transfers",
        "spin_ns",
        "transfer_ns",
    )

    def __init__(self, name: str, layer: int, lines: float, pkg: Any):
        self.name = name
        self.layer = layer
        self.lines = lines
        self.pkg = pkg
        #: the end of the last reserved hold, ns
        self.free_at = 0.0
        #: the CPU whose cache holds the lock's lines (-1: not yet taken)
        self.cpu = -1
        self.acquisitions = 0
        self.contended = 0
        self.transfers = 0
        self.spin_ns = 0.0
        self.transfer_ns = 0.0

    def acquire(self, runner: Any, t: float, hold_cycles: float) -> float:
        """The CPU of ``runner`` takes the lock at ``t`` (ns) and holds it ``hold_cycles`` (at its
        frequency): returns the ns it spends beyond the hold, spinning and fetching the lines."""
        self.acquisitions += 1
        if runner.id == self.cpu:  # uncontended, lines in this CPU's cache: the fast path
            free = self.free_at
            self.free_at = (t if t > free else free) + hold_cycles / runner.freq
            return 0.0
        return self.handoff(runner, t, hold_cycles)

    def handoff(self, runner: Any, t: float, hold_cycles: float) -> float:
        """:meth:`acquire` when the lock's lines are in another CPU's cache (or nowhere yet): wait
        for its hold to end, then fetch them. (Callers on the hot path test ``cpu`` themselves.)"""
        cpu = runner.id
        f = runner.freq
        wait = self.free_at - t
        if wait > 0.0:
            self.contended += 1
            self.spin_ns += wait
        else:
            wait = 0.0
        xfer = 0.0
        prev = self.cpu
        if prev >= 0:
            xfer = self.lines * self.pkg.line_transfer_cycles(prev, cpu) / f
            self.transfers += 1
            self.transfer_ns += xfer
        self.cpu = cpu
        self.free_at = t + wait + xfer + hold_cycles / f
        return wait + xfer
