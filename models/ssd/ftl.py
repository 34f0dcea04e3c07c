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
(FDP keeps streams apart, so a block tends to hold data that dies together).

The map covers ``span_bytes`` of user space; a larger device folds onto it (logical page modulo
the span). A write's pages beyond the span wrap around with it.
"""

from __future__ import annotations

from collections import deque

from models.ssd.config import FtlConfig

FREE, OPEN, CLOSED = 0, 1, 2
#: the stream of garbage-collection copies (their own open block, apart from host writes)
GC_STREAM = -1


#: memory of one page's map entry, bytes: a list slot holding a Python int of its own (l2p for each
#: logical page, p2l for each physical page; measured: 78 bytes a logical page with the default 7%
#: spare, the map preconditioned full)
PAGE_ENTRY_BYTES = 38


def _mapped_pages(cfg: FtlConfig, capacity_bytes: int | None) -> int:
    span = min(cfg.span_bytes, capacity_bytes) if capacity_bytes else cfg.span_bytes
    return max(1, span // cfg.page_bytes)


def ftl_state_bytes(cfg: FtlConfig, capacity_bytes: int | None) -> int:
    """The memory the FTL of one device takes (for the run's estimate before anything is built), bytes."""
    return int(_mapped_pages(cfg, capacity_bytes) * PAGE_ENTRY_BYTES * (2.0 + cfg.spare_fraction))


class Ftl:
    """The FTL's state and counters (pages; monotonic counters)."""

    def __init__(self, cfg: FtlConfig, capacity_bytes: int | None):
        self.cfg = cfg
        self.page = cfg.page_bytes
        self.n_lpn = _mapped_pages(cfg, capacity_bytes)
        ppb = self.ppb = cfg.pages_per_block
        self.n_blocks = -(-int(self.n_lpn * (1.0 + cfg.spare_fraction)) // ppb)
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
        if cfg.precondition == "full":
            self._fill()

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

    def _alloc(self, stream: int) -> list[int]:
        blk = self.free.popleft()
        self.state[blk] = OPEN
        ob = self.open[stream] = [blk, 0]
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
        for i in range(n):
            lpn = (first + i) % n_lpn
            self._invalidate(lpn)
            ob = self.open.get(stream)
            if (ob is None or ob[1] >= self.ppb) and len(self.free) <= need:
                self._collect()
            self._program(lpn, stream)
        self.host_pages += n
        self.nand_pages += n
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
            for ppn in range(base, base + ppb):
                lpn = p2l[ppn]
                if lpn >= 0:
                    self._invalidate(lpn)
                    self._program(lpn, GC_STREAM)
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
