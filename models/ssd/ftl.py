"""A compact page-mapped flash translation layer with greedy garbage collection and flexible
data placement (:class:`~models.ssd.config.FtlConfig`).

The mechanism: logical pages map to physical pages; physical pages sit in blocks (reclaim units,
``pages_per_block`` each) that are free, open (being filled by one stream) or closed. A host write
of a page invalidates the page's old copy and programs the page into its stream's open block; a
stream is the write's FDP placement handle (NVMe TP4146: the reclaim unit handle it names), or
stream 0 for every write without flexible data placement. Garbage collection, when fewer than
``gc_free_blocks`` blocks are free, picks the closed block with the fewest valid pages (greedy),
programs those pages into the GC stream's own open block and erases the victim. Pages programmed
over pages the host wrote is the write amplification; it emerges from the over-provisioning
(``spare_fraction``), how full the mapped space is and how the writes mix lifetimes in a block
(FDP keeps streams apart, so a block tends to hold data that dies together). GC's copies of every
handle share the GC stream's blocks: the handles are "initially isolated" (NVMe TP4146's reclaim
unit handle type whose data GC may mix), and each copy is counted against the handle that last
wrote the page (``handle_pages``, ``handle_copies``, ``handle_units``: a write amplification per
placement ID).

The map covers ``span_bytes`` of user space; a larger device folds onto it (logical page modulo
the span). A write's pages beyond the span wrap around with it.

The state at the start (``precondition``): empty (a fresh drive: every block free), full (every
logical page written once in order: SNIA PTS's sequential fill, whose blocks are wholly valid, so
random writes then meet a write amplification that climbs to its steady value only after the
span has been overwritten a few times) or steady (the state random overwrites of the whole span
converge to, SNIA PTS's preconditioning, set at once from greedy GC's analytic steady state,
models.ssd.gc_analytic, as MQSim does rather than simulating the overwrites).
"""

from __future__ import annotations

from collections import deque

import numpy as np

from models.ssd.config import DeviceConfig, FtlConfig
from models.ssd.gc_analytic import steady_valid_counts

FREE, OPEN, CLOSED = 0, 1, 2
#: the stream of garbage-collection copies (their own open block, apart from host writes)
GC_STREAM = -1


#: memory of one page's map entry, bytes: a list slot holding a Python int of its own (l2p for each
#: logical page, p2l for each physical page; measured: 78 bytes a logical page with the default 7%
#: spare, the map preconditioned full)
PAGE_ENTRY_BYTES = 38


def ftl_state_bytes(cfg: FtlConfig, capacity_bytes: int | None) -> int:
    """The memory the FTL of one device takes (for the run's estimate before anything is built), bytes."""
    return int(cfg.mapped_pages(capacity_bytes) * PAGE_ENTRY_BYTES * (2.0 + cfg.spare_fraction))


class Ftl:
    """The FTL's state and counters (pages; monotonic counters)."""

    def __init__(
        self, cfg: FtlConfig, capacity_bytes: int | None, rng: np.random.Generator | None = None, copy_ns: float = 0.0
    ):
        """``cfg.check_steady(capacity_bytes)`` must hold (DeviceConfig checks it). ``rng``: the
        stream the steady precondition draws its layout from (a generator of its own, seed 0,
        without one); ``copy_ns``: the media time of one GC copy (for :attr:`gc_ns`)."""
        self.cfg = cfg
        self.copy_ns = copy_ns
        self.page = cfg.page_bytes
        self.n_lpn = cfg.mapped_pages(capacity_bytes)
        ppb = self.ppb = cfg.pages_per_block
        self.n_blocks = cfg.blocks(capacity_bytes)
        self.l2p = [-1] * self.n_lpn
        self.p2l = [-1] * (self.n_blocks * ppb)
        self.valid = [0] * self.n_blocks
        self.state = [FREE] * self.n_blocks
        self.free: deque[int] = deque(range(self.n_blocks))
        #: stream -> [open block, next page in it]
        self.open: dict[int, list[int]] = {}
        self.host_pages = 0
        self.nand_pages = 0
        self.gc_copies = 0
        self.erases = 0
        self._copies_now = 0
        self._erases_now = 0
        handles = cfg.placement_handles
        #: with flexible data placement (more than one reclaim unit handle), per handle: the host
        #: pages written with it, the GC copies of its data and the reclaim units (blocks) it opened
        #: (the FDP statistics log's host and media bytes per handle); and each logical page's handle
        self.handle_pages = [0] * handles
        self.handle_copies = [0] * handles
        self.handle_units = [0] * handles
        self._lpn_handle: bytearray | None = bytearray(self.n_lpn) if handles > 1 else None
        if cfg.precondition == "full":
            self._fill()
        elif cfg.precondition == "steady":
            self._steady(rng if rng is not None else np.random.default_rng(0))

    @classmethod
    def of_device(cls, dev: DeviceConfig, rng: np.random.Generator) -> "Ftl":
        """A device's FTL: its steady precondition draws from a child of the device's stream ``rng``
        (spawning one leaves the stream's own draws as they are); a GC copy is a page read
        (``read.base_ns``) then its program (``write_cache_program_ns``, or ``write.base_ns``)."""
        copy_ns = dev.read.base_ns + (dev.write_cache_program_ns or dev.write.base_ns)
        return cls(dev.ftl, dev.capacity_bytes, rng.spawn(1)[0], copy_ns)

    @property
    def gc_ns(self) -> float:
        """Media time garbage collection took so far (its copies and erases, summed over the media
        units; what :func:`gc_work` books on them), ns."""
        return self.gc_copies * self.copy_ns + self.erases * self.cfg.erase_ns

    @property
    def data_blocks(self) -> int:
        """The blocks that hold data in steady state: all but the ``gc_free_blocks`` free ones GC
        keeps and one block's worth of pages not yet written in the open blocks (the host's and
        GC's, each half written on average)."""
        return self.n_blocks - self.cfg.gc_free_blocks - 1

    @property
    def data_spare(self) -> float:
        """The spare factor greedy GC works with, (data blocks x pages per block - user pages) /
        user pages: ``spare_fraction`` less the free and open blocks' share."""
        return self.data_blocks * self.ppb / self.n_lpn - 1.0

    def _fill(self) -> None:
        """Every logical page written once, in order, by stream 0 (not counted as host writes): the
        state :meth:`_program` leaves after programming pages 0 .. n_lpn - 1 into stream 0, built
        at once (page p in block p // ppb, the blocks taken from the free list in order, every one
        closed but the last, stream 0's open block)."""
        n, ppb = self.n_lpn, self.ppb
        used = -(-n // ppb)
        last = n - (used - 1) * ppb  # pages in the last (open) block
        self.l2p = list(range(n))
        self.p2l = [*range(n), *[-1] * (self.n_blocks * ppb - n)]
        self.valid = [ppb] * (used - 1) + [last] + [0] * (self.n_blocks - used)
        self.state = [CLOSED] * (used - 1) + [OPEN] + [FREE] * (self.n_blocks - used)
        self.free = deque(range(used, self.n_blocks))
        self.open = {0: [used - 1, last]}

    def _steady(self, rng: np.random.Generator) -> None:
        """The state random overwrites of the whole span leave, set at once as MQSim does for its
        steady-state preconditioning: the :attr:`data_blocks` blocks closed, holding
        :func:`~models.ssd.gc_analytic.steady_valid_counts` valid pages each (greedy GC's
        steady-state distribution for :attr:`data_spare`), the logical pages dealt to them in an
        order drawn from ``rng`` (random overwrites scatter them; the blocks too are in a drawn
        order), each block's valid pages at its first page slots (the slot is never observed), the
        other ``gc_free_blocks`` + 1 blocks free and no block open: the state a collection leaves."""
        n, ppb, nd = self.n_lpn, self.ppb, self.data_blocks
        counts = steady_valid_counts(n, nd, ppb)
        order = rng.permutation(nd).tolist()
        lpns = rng.permutation(n).tolist()
        l2p, p2l = self.l2p, self.p2l
        i = 0
        for blk, c in zip(order, counts):
            base = blk * ppb
            for slot in range(c):
                lpn = lpns[i + slot]
                l2p[lpn] = base + slot
                p2l[base + slot] = lpn
            i += c
            self.valid[blk] = c
            self.state[blk] = CLOSED
        self.free = deque(range(nd, self.n_blocks))

    def _alloc(self, stream: int) -> list[int]:
        blk = self.free.popleft()
        self.state[blk] = OPEN
        ob = self.open[stream] = [blk, 0]
        if stream >= 0:
            self.handle_units[stream] += 1
        return ob

    def _program(self, lpn: int, stream: int) -> None:
        """Program logical page ``lpn`` into ``stream``'s open block (a new one when it is full)."""
        ob = self.open.get(stream)
        if ob is None or ob[1] >= self.ppb:
            if ob is not None:
                self.state[ob[0]] = CLOSED
            ob = self._alloc(stream)
        blk = ob[0]
        ppn = blk * self.ppb + ob[1]
        ob[1] += 1
        self.l2p[lpn] = ppn
        self.p2l[ppn] = lpn
        self.valid[blk] += 1

    def _invalidate(self, lpn: int) -> None:
        old = self.l2p[lpn]
        if old >= 0:
            self.p2l[old] = -1
            self.valid[old // self.ppb] -= 1
            self.l2p[lpn] = -1

    def write(self, offset: int, nbytes: int, stream: int) -> tuple[int, int]:
        """A host write of ``nbytes`` at byte ``offset`` into ``stream``: (pages copied by garbage
        collection, blocks erased) before it could be programmed."""
        self._copies_now = self._erases_now = 0
        first = offset // self.page
        n = max(1, -(-(offset + nbytes) // self.page) - first)
        n_lpn = self.n_lpn
        need = self.cfg.gc_free_blocks
        by_page = self._lpn_handle
        for i in range(n):
            lpn = (first + i) % n_lpn
            self._invalidate(lpn)
            if by_page is not None:
                by_page[lpn] = stream
            ob = self.open.get(stream)
            if (ob is None or ob[1] >= self.ppb) and len(self.free) <= need:
                self._collect()
            self._program(lpn, stream)
        self.host_pages += n
        self.nand_pages += n
        self.handle_pages[stream] += n
        return self._copies_now, self._erases_now

    def trim(self, offset: int, nbytes: int) -> None:
        """A deallocation: the range's pages hold no data any more (garbage collection skips them)."""
        first = offset // self.page
        last = (offset + nbytes) // self.page  # whole pages only
        n_lpn = self.n_lpn
        for lpn in range(first, min(last, first + n_lpn)):
            self._invalidate(lpn % n_lpn)

    def _collect(self) -> None:
        """Greedy garbage collection until more than ``gc_free_blocks`` blocks are free."""
        need = self.cfg.gc_free_blocks
        ppb = self.ppb
        state, valid = self.state, self.valid
        while len(self.free) <= need:
            victim = -1
            best = ppb
            for b in range(self.n_blocks):
                if state[b] == CLOSED and valid[b] < best:
                    best = valid[b]
                    victim = b
                    if best == 0:
                        break
            if victim < 0:
                return  # every closed block is wholly valid: nothing to reclaim
            base = victim * ppb
            p2l = self.p2l
            by_page = self._lpn_handle
            copies = self.handle_copies
            for ppn in range(base, base + ppb):
                lpn = p2l[ppn]
                if lpn >= 0:
                    self._invalidate(lpn)
                    self._program(lpn, GC_STREAM)
                    copies[by_page[lpn] if by_page is not None else 0] += 1
            self.gc_copies += best
            self.nand_pages += best
            self._copies_now += best
            state[victim] = FREE
            self.erases += 1
            self._erases_now += 1
            self.free.append(victim)

    @property
    def write_amplification(self) -> float:
        """Pages programmed per page the host wrote (1.0 before any write)."""
        return self.nand_pages / self.host_pages if self.host_pages else 1.0


def gc_work(
    units: list[float], u: int, copies: int, erases: int, copy_ns: float, erase_ns: float, t: float
) -> tuple[int, float]:
    """Garbage collection's work before a write can be placed, booked on the device's media units
    ``units`` (the time each becomes free, ns): each copy (a page read and a program, ``copy_ns``)
    and each erase (``erase_ns``) occupies one unit, round robin from unit ``u`` (the controller
    spreads its collection over the dies), from ``t`` or when the unit is free. Returns the next
    unit and the unit time booked, ns."""
    n = len(units)
    busy = 0.0
    for i in range(copies + erases):
        free = units[u]
        dur = copy_ns if i < copies else erase_ns
        units[u] = (free if free > t else t) + dur
        busy += dur
        u = u + 1 if u + 1 < n else 0
    return u, busy
