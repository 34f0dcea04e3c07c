"""A kernel spinlock (qspinlock), or a shared cache line updated with atomics, as the CPUs see it:
a hold time, FIFO waiters that spin, and the data the sections touch, which moves to the cache of
the CPU that touches it.

Linux 6.6 ``include/asm-generic/qspinlock.h``, ``kernel/locking/qspinlock.c``: the fast path is one
``lock cmpxchg`` on the lock word and the release a plain byte store, so an uncontended lock whose
line is already in this CPU's cache costs only the critical section itself. A contended lock queues
its waiters MCS-style, strictly FIFO and not NUMA-aware: each waiter spins (busy, in the layer that
takes the lock) until the holder releases, then the lock word and the data the section writes move
from the previous holder's cache to the next holder's (``Package.line_transfer_cycles``) before the
new holder's section can proceed. The same holds for a lock-free structure on one shared line (an
sbitmap word, an atomic counter): a CPU updating a line another CPU wrote last fetches it first, and
updates of one line are serialised by the cache-coherence protocol.

Model. A lock is a single FIFO server in time: ``acquire(runner, t, hold_cycles, touched)`` says
that the CPU of ``runner`` reaches the lock at ``t`` (ns) and then holds it ``hold_cycles`` at its
frequency, its section touching the lock's data items ``touched`` (:meth:`data`: the lock word and
the data it protects, item by item, each with its cache lines). If the lock is reserved past ``t``
by CPUs that reached it first, the acquirer spins until then; the items another CPU touched last
are fetched (their lines x the transfer cycles between the two CPUs, at the acquirer's frequency),
which lengthens the hold as well, and are then this CPU's. ``acquire`` returns the ns the acquirer
spends beyond the hold (spin + fetch), which the caller charges to the CPU (``CpuRunner.lock_wait``:
busy time in the lock's layer, carried into what the CPU runs next). The hold itself is part of the
cost bundle that already charges the section. A queue of two or more waiters costs the new holder
one more line: it hands the queue's head to the next waiter by writing that waiter's MCS node
(Linux 6.1 kernel/locking/qspinlock.c, ``arch_mcs_spin_unlock_contended``). :meth:`touch` is an
atomic on the lock's data from outside the lock (a counter on a line its sections write): it fetches
the lines, and the next section fetches them back. Nothing here caps throughput: under saturation
the lock passes from CPU to CPU and each section fetches its data, so throughput through it tends
to ``1 / (hold + lines x transfer)`` and the spin of each waiter grows with the number of CPUs
queued ahead of it.

A CPU never waits for its own reservation: the kernel's lock is released before the same CPU can
take it again (a re-acquire would deadlock), so an overlap with its own earlier hold is an artefact
of when the model places the hold (the section already ran inside a segment) and the new hold
simply follows the old one.

Arrival order. The lock keeps the sections reserved past now in time order, each with the time
its CPU reached the lock (a section a CPU takes right after its own previous one arrives when that
one ends: a CPU cannot wait for a lock it holds). An acquirer queues behind every section whose CPU
reached the lock before it did (the MCS queue is FIFO by arrival) and cuts in before the sections
reached later: a CPU whose code takes the lock several times in one go (a batch of dispatches, the
merge, insert and dispatch of one IO with other locks and code between them) reserves them when
its event runs, and another CPU reaching the lock in the middle takes it after the section in
progress, as in the kernel, where the holder releases between sections. The later sections move
by the acquirer's section and the transfer of the lines back, charged to their CPUs as spinning
(``lock_wait``); a gap in which the lock was idle absorbs the move. Under saturation the lock so
passes from CPU to CPU at every section, as the kernel's does, and throughput through it tends to
``1 / (hold + transfer)`` per section whatever the batches.
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
        "pkg",
        "free_at",
        "cpu",
        "acquisitions",
        "contended",
        "transfers",
        "spin_ns",
        "transfer_ns",
        "owner",
        "levels",
        "secs",
        "item_names",
        "item_lines",
        "item_walk",
        "item_owner",
        "shared",
        "run_start",
        "run_n",
    )

    def __init__(self, name: str, layer: int, lines: float, pkg: Any, walk: float = 0.0, levels: Any = None):
        self.name = name
        self.layer = layer
        self.pkg = pkg
        #: ``levels()``: the depth now of the tree the lock's sections walk (an rb-tree of requests:
        #: one node, one line, per level); the items that walk it (``lines`` and ``walk`` per level:
        #: item 0's) move that path too (the nodes were last written by the CPUs that inserted or
        #: dispatched them, under this lock)
        self.levels = levels
        #: the end of the last reserved hold, ns
        self.free_at = 0.0
        #: the CPU of the last reserved section (-1: not yet taken), and its runner
        self.cpu = -1
        self.owner: Any = None
        self.acquisitions = 0
        self.contended = 0
        self.transfers = 0
        self.spin_ns = 0.0
        self.transfer_ns = 0.0
        #: the sections reserved that may not have ended, in time order: (arrival, start, end, the
        #: transfer that preceded the start, runner, the data items it touches), ns
        self.secs: list[tuple[float, float, float, float, Any, tuple[int, ...]]] = []
        #: the data the lock protects, item by item (item 0: the lock's own ``lines`` and the tree
        #: path): name, lines, lines per tree level, and the CPU whose cache holds it (-1: none yet)
        self.item_names: list[str] = [name]
        self.item_lines: list[float] = [lines]
        self.item_walk: list[float] = [walk]
        self.item_owner: list[int] = [-1]
        #: another CPU has taken the lock: until then one CPU owns it and all its data, and the
        #: sections are not kept (the start of the current run of them is, ``run_start``)
        self.shared = False
        self.run_start = 0.0
        self.run_n = 0

    def data(self, items: tuple[tuple[str, float, float], ...]) -> tuple[int, ...]:
        """The indices of the data ``items`` a use of the lock touches, each (name, lines, lines per
        level of the tree), registered on first sight; none given: the lock's own lines (item 0)."""
        if not items:
            return (0,)
        out = []
        for name, lines, walk in items:
            if name in self.item_names:
                out.append(self.item_names.index(name))
                continue
            self.item_names.append(name)
            self.item_lines.append(lines)
            self.item_walk.append(walk)
            self.item_owner.append(-1)
            out.append(len(self.item_names) - 1)
        return tuple(out)

    def moved_lines(self, touched: tuple[int, ...] = (0,)) -> float:
        """The lines of the items ``touched`` (default: the lock's own), with the tree path they
        walk, now."""
        depth = self.levels() if self.levels is not None else 0.0
        total = 0.0
        for i in touched:
            total += self.item_lines[i] + self.item_walk[i] * depth
        return total

    def _fetch(self, cpu: int, f: float, touched: tuple[int, ...]) -> float:
        """Bring the items ``touched`` to ``cpu`` (at ``f`` GHz) from the caches that hold them:
        ns; they are then ``cpu``'s."""
        owners = self.item_owner
        x = 0.0
        depth = -1.0
        for i in touched:
            o = owners[i]
            if o != cpu:
                if o >= 0:
                    if depth < 0.0:
                        depth = self.levels() if self.levels is not None else 0.0
                    lines = self.item_lines[i] + self.item_walk[i] * depth
                    x += lines * self.pkg.line_transfer_cycles(o, cpu) / f
                owners[i] = cpu
        if x > 0.0:
            self.transfers += 1
            self.transfer_ns += x
        return x

    def hold_own(self, t: float, hold_ns: float) -> None:
        """A section of ``hold_ns`` reached at ``t`` (ns) on the one CPU that has taken the lock so far
        (not :attr:`shared`): it follows that CPU's earlier sections, no wait and no fetch, and
        starts a new run of them if the lock is free by ``t``. (:meth:`acquire`'s first branch; the
        blk-mq hot path calls it directly, without the branch's checks.)"""
        start = self.free_at
        if t > start:
            start = self.run_start = t
            self.run_n = 0
        self.run_n += 1
        self.free_at = start + hold_ns

    def acquire(
        self,
        runner: Any,
        t: float,
        hold_cycles: float,
        touched: tuple[int, ...] = (0,),
        now: float = -1.0,
        cpu: int = -1,
        freq: float = 0.0,
    ) -> float:
        """The CPU of ``runner`` takes the lock at ``t`` (ns) and holds it ``hold_cycles`` (at its
        frequency); its section touches the data items ``touched`` (:meth:`data`), fetched from the
        caches of the CPUs that last touched them. ``now``: the event clock (no CPU reaches the lock
        before it; default ``t``). Returns the ns it spends beyond the hold, spinning and fetching."""
        self.acquisitions += 1
        if cpu < 0:  # (callers on the hot path pass the CPU and its frequency: native values)
            cpu = runner.id
            freq = runner.freq
        if not self.shared:  # one CPU's lock so far: its sections follow each other, its data is here
            if cpu == self.cpu or self.cpu < 0:
                if self.cpu < 0:
                    self.cpu = cpu
                    self.owner = runner
                self.hold_own(t, hold_cycles / freq)
                return 0.0
            self._share()
        if self.secs:
            self._prune(t if now < 0.0 else now)
        if cpu == self.cpu:  # the last reserved section is this CPU's: no one to wait for
            f = freq
            start = self.free_at if self.free_at > t else t
            x = self._fetch(cpu, f, touched)
            end = start + x + hold_cycles / f
            self.secs.append((start, start + x, end, x, runner, touched))
            self.free_at = end
            return x
        return self.handoff(runner, t, hold_cycles, touched)

    def touch(self, runner: Any, touched: tuple[int, ...]) -> float:
        """An atomic update of the lock's data items ``touched`` by the CPU of ``runner``, outside
        the lock (a counter on a line the sections write): the ns it fetches their lines; no one
        waits for it, and the next section that touches them fetches them from this CPU."""
        self.acquisitions += 1
        return self._fetch(runner.id, runner.freq, touched)

    def _share(self) -> None:
        """A second CPU reaches the lock: from now on its sections are kept. The first CPU's data is
        in its cache, and its current run of back-to-back sections is taken as equally long ones,
        each arriving as the one before ends."""
        self.shared = True
        cpu = self.cpu
        owners = self.item_owner
        for i in range(len(owners)):
            owners[i] = cpu
        n = self.run_n if self.run_n > 0 else 1
        length = (self.free_at - self.run_start) / n
        every = tuple(range(len(owners)))
        secs = []
        for k in range(n):
            s0 = self.run_start + k * length
            secs.append((s0, s0, s0 + length, 0.0, self.owner, every))
        self.secs = secs

    def _prune(self, t: float) -> None:
        secs = self.secs
        k = 0
        n = len(secs)
        while k < n and secs[k][2] <= t:
            k += 1
        if k:
            del secs[:k]

    def handoff(self, runner: Any, t: float, hold_cycles: float, touched: tuple[int, ...] = (0,)) -> float:
        """:meth:`acquire` when the last reserved section is another CPU's: queue behind the
        sections whose CPUs reached the lock first, fetch the data, and move the sections reached
        later (see the module docstring)."""
        secs = self.secs
        cpu = runner.id
        f = runner.freq
        n = len(secs)
        j = 0
        while j < n and secs[j][0] <= t:  # FIFO: behind every CPU that reached the lock first
            j += 1
        at = secs[j - 1][2] if j and secs[j - 1][2] > t else t
        wait = at - t
        if wait > 0.0:
            self.contended += 1
            self.spin_ns += wait
        if j < n:  # the items are where the sections before position j left them
            owners = self.item_owner
            for i in touched:
                for k in range(j - 1, -1, -1):
                    if i in secs[k][5]:
                        owners[i] = secs[k][4].id
                        break
        x_in = self._fetch(cpu, f, touched)
        if wait > 0.0 and j >= 2 and secs[j - 2][2] > t:
            # a queue of two or more at the lock: the waiter it passes the queue's head to spins on
            # its own MCS node, whose line the new holder writes before its section
            # (Linux 6.1 kernel/locking/qspinlock.c: arch_mcs_spin_unlock_contended(&next->locked))
            mcs = self.pkg.line_transfer_cycles(secs[j - 1][4].id, cpu) / f
            x_in += mcs
            self.transfer_ns += mcs
        start = at + x_in
        end = start + hold_cycles / f
        mine = (t, start, end, x_in, runner, touched)
        if j == n:
            secs.append(mine)
            self.cpu = cpu
            self.owner = runner
            self.free_at = end
            return wait + x_in
        self._move_later(j, mine, cpu)
        return wait + x_in

    def _move_later(self, j: int, mine: tuple, cpu: int) -> None:
        """Put section ``mine`` (of CPU ``cpu``) before ``secs[j]`` and move the sections from
        ``j`` on later as far as they must: the next one waits for it and fetches back the items
        both touch; an idle gap absorbs the move. A CPU's later sections move at least as far as
        its first moved one (its code runs that much later); each move beyond that is charged to
        the CPU as spinning. The items end up with the last section that touches them."""
        secs = self.secs
        out = secs[:j]
        out.append(mine)
        edge = mine[2]  # the end of the section before, ns
        mine_items = mine[5]
        moved: dict[int, float] = {}
        owners = self.item_owner
        for k in range(j, len(secs)):
            arr, s, e, x, r, items = secs[k]
            rid = r.id
            x_new = x
            if k == j and rid != cpu:
                both = tuple(i for i in items if i in mine_items)
                if both:  # those items now come from ``cpu`` (the others as before: at most x)
                    back = self.moved_lines(both) * self.pkg.line_transfer_cycles(cpu, rid) / r.freq
                    if back > x:
                        x_new = back
                        self.transfers += 1 if x == 0.0 else 0
                        self.transfer_ns += back - x
            base = moved.get(rid, 0.0)
            new_s = s + base
            if x_new > x:
                new_s += x_new - x
            if new_s < edge + x_new:
                new_s = edge + x_new
            delta = new_s - s
            extra = delta - base
            if extra > 0.0:
                r.lock_wait(extra, self.layer)
                moved[rid] = delta
            else:
                extra = 0.0
            self.spin_ns += extra - (x_new - x)
            out.append((arr + base, new_s, new_s + (e - s), x_new, r, items))
            edge = new_s + (e - s)
            for i in items:
                owners[i] = rid
        self.secs = out
        self.free_at = edge
