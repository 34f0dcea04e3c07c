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

Arrival order. A CPU whose code takes the lock several times in one go (a batch of dispatches, of
completions) reserves its sections back to back, one *run*, when its event runs; another CPU that
reaches the lock during that run would, in the kernel, queue behind the section in progress only
(the MCS queue is FIFO by arrival, and the holder releases between sections), and the holder's
next section queues behind it. So an acquirer arriving inside another CPU's run cuts in at the end
of the section in progress: it waits until then and fetches the lines, and the rest of the run
moves later by its section and two transfers (the lines come to it and go back), charged to the
run's CPU as spinning (``owner.lock_wait``). Under saturation the lock so passes from CPU to CPU at
every section, as the kernel's does, and throughput through it tends to ``1 / (hold + transfer)``
per section whatever the batches.
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
        "run_start",
        "run_n",
        "owner",
        "walk",
        "levels",
    )

    def __init__(self, name: str, layer: int, lines: float, pkg: Any, walk: float = 0.0, levels: Any = None):
        self.name = name
        self.layer = layer
        self.lines = lines
        self.pkg = pkg
        #: lines per level of the tree the lock's sections walk (an rb-tree of requests: one node, one
        #: line, per level), and ``levels()``, the tree's depth now; a hand-off moves those too (the
        #: nodes were last written by the CPUs that inserted or dispatched them, under this lock)
        self.walk = walk
        self.levels = levels
        #: the end of the last reserved hold, ns
        self.free_at = 0.0
        #: the CPU whose cache holds the lock's lines (-1: not yet taken)
        self.cpu = -1
        self.acquisitions = 0
        self.contended = 0
        self.transfers = 0
        self.spin_ns = 0.0
        self.transfer_ns = 0.0
        #: the holder's current run of back-to-back sections: its start (ns) and number of
        #: sections (equal lengths assumed), and the holder's runner (charged when one cuts in)
        self.run_start = 0.0
        self.run_n = 0
        self.owner: Any = None

    def acquire(self, runner: Any, t: float, hold_cycles: float) -> float:
        """The CPU of ``runner`` takes the lock at ``t`` (ns) and holds it ``hold_cycles`` (at its
        frequency): returns the ns it spends beyond the hold, spinning and fetching the lines."""
        self.acquisitions += 1
        if runner.id == self.cpu:  # uncontended, lines in this CPU's cache: the fast path
            free = self.free_at
            if t > free:  # free since the last section: a new run
                self.run_start = t
                self.run_n = 1
                free = t
            else:
                self.run_n += 1
            self.free_at = free + hold_cycles / runner.freq
            return 0.0
        return self.handoff(runner, t, hold_cycles)

    def handoff(self, runner: Any, t: float, hold_cycles: float) -> float:
        """:meth:`acquire` when the lock's lines are in another CPU's cache (or nowhere yet): wait
        for its hold to end, then fetch them. (Callers on the hot path test ``cpu`` themselves.)"""
        cpu = runner.id
        f = runner.freq
        n = self.run_n
        if n > 1 and self.free_at > t:
            length = (self.free_at - self.run_start) / n
            done = -(-(t - self.run_start) // length) if t > self.run_start else 1.0
            if done < n:
                return self._cut_in(runner, t, hold_cycles, int(done), length)
        wait = self.free_at - t
        if wait > 0.0:
            self.contended += 1
            self.spin_ns += wait
        else:
            wait = 0.0
        xfer = 0.0
        prev = self.cpu
        if prev >= 0:
            xfer = self.moved_lines() * self.pkg.line_transfer_cycles(prev, cpu) / f
            self.transfers += 1
            self.transfer_ns += xfer
        self.cpu = cpu
        self.owner = runner
        start = t + wait + xfer
        self.run_start = start
        self.run_n = 1
        self.free_at = start + hold_cycles / f
        return wait + xfer

    def moved_lines(self) -> float:
        """The lines a hand-off moves now: the lock's own, and the tree path its sections walk."""
        if self.levels is None:
            return self.lines
        return self.lines + self.walk * self.levels()

    def _cut_in(self, runner: Any, t: float, hold_cycles: float, done: int, length: float) -> float:
        """``runner``'s CPU reaches the lock at ``t`` inside the holder's run, ``done`` of whose
        sections (``length`` ns each) have ended by then: it takes the lock after that section and
        the run's rest moves later by its section and the two transfers (see the module
        docstring). Returns the acquirer's spin and fetch, ns."""
        owner = self.owner
        prev = self.cpu
        cpu = runner.id
        lines = self.moved_lines()
        at = self.run_start + done * length
        wait = at - t if at > t else 0.0
        x_in = lines * self.pkg.line_transfer_cycles(prev, cpu) / runner.freq
        x_back = lines * self.pkg.line_transfer_cycles(cpu, prev) / owner.freq
        hold = hold_cycles / runner.freq
        shift = x_in + hold + x_back
        self.free_at += shift
        self.run_start = at + shift
        self.run_n -= done
        if wait > 0.0:
            self.contended += 1
        self.transfers += 2
        self.spin_ns += wait + x_in + hold  # the acquirer's wait, and the holder's for it
        self.transfer_ns += x_in + x_back
        owner.lock_wait(shift, self.layer)
        return wait + x_in
