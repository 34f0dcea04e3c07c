"""Where a fio thread's next IO goes: its direction, size and offset, as fio 3.41's io_u.c does them
(get_rw_ddir, get_next_buflen, get_next_offset / get_next_seq_offset, ``ddir_seq_nr`` and
``rw_sequencer``; HOWTO ``rw``, ``bssplit``, ``bsrange``, ``offset``, ``size``):

* the direction: a read with probability ``rwmixread`` (all reads, all writes or trims for a
  one-direction ``rw``); ``trimwrite`` trims each block, then writes it;
* the size: the direction's ``bs``, or drawn from ``bssplit`` / ``bsrange`` (:func:`size_picker`);
* the offset, in the thread's region (``offset`` + ``offset_increment`` x clone, ``size`` bytes): a
  sequential job goes on from where its last IO ended (wrapping to the start), ``rw=read:<n>``
  skipping ``n`` bytes after each IO (backwards for a negative ``n``); a uniform random job draws a
  block of its size; a random job with a non-default distribution, generator or
  ``percentage_random`` takes its blocks from :class:`models.ioengines.offsets.OffsetPicker`, with
  ``rw=randread:<n>`` a new random offset every ``n`` IOs.

:class:`IoOffsets` is one thread's part (compiled: a thread calls :meth:`IoOffsets.next` per IO, a
native call). Its draws are the thread's own uniform stream (the same one for the direction, the
size and the offset, in fio's order), so a thread's IOs do not depend on how it is assembled. A
thread over several files keeps one :class:`FileState` per file and swaps it in
(:meth:`IoOffsets.save`, :meth:`IoOffsets.load`: models.ioengines.files); a zoned job moves the
region (:meth:`IoOffsets.set_region`: models.ioengines.zbd).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from models.ioengines.job import FioJob
from models.ioengines.offsets import OffsetPicker


def size_picker(split: tuple, rng: tuple | None):
    """fio's choice of a block size from ``bssplit`` entries ((bytes, percent), ...) or a
    ``bsrange`` (min, max): a function of one uniform draw returning (bytes, alignment), or None
    for a fixed ``bs``. bssplit picks the first entry whose cumulative percentage exceeds
    100 x u; bsrange takes min + u x max rounded down to a multiple of min (fio's get_next_buflen
    with bs_unaligned=0: 4k-16k gives 4, 8, 12 and 16 KiB, a quarter each), capped at the largest
    multiple of min within max (fio draws again instead)."""
    if split:
        sizes = [s for s, _p in split]
        cum = []
        total = 0.0
        for _s, p in split:
            total += p
            cum.append(total)
        align = min(sizes)
        last = sizes[-1]

        def pick_split(u: float) -> tuple[int, int]:
            x = u * 100.0
            for s, c in zip(sizes, cum):
                if x < c:
                    return s, align
            return last, align

        return pick_split
    if rng is not None:
        lo, hi = rng
        top = hi - hi % lo

        def pick_range(u: float) -> tuple[int, int]:
            b = lo + int(u * hi)
            b -= b % lo
            return (b if b <= top else top), lo

        return pick_range
    return None


def needs_picker(job: FioJob) -> bool:
    """A random job needs an :class:`OffsetPicker` unless it is fio's default: uniform tausworthe,
    100% random, a new offset per IO."""
    return not (
        job.random_distribution == "random"
        and job.random_generator != "lfsr"
        and job.rw_modifier <= 1
        and job.percentage_random_read >= 100
        and job.percentage_random_write >= 100
    )


class FileState:
    """One file's position in a thread striping over several files (models.ioengines.files): its
    region, sequential position, random picker and device. A compiled class of typed fields, not a
    dict: a thread over several SSDs switches files on every IO."""

    def __init__(self, offs: IoOffsets, dev: int) -> None:
        self.base_offset = offs.base_offset
        self.span = offs.span
        self.nblocks = offs.nblocks
        self.next_offset = offs.next_offset
        self.picker = offs.picker
        self.seq_left = offs.seq_left
        self.last_start = offs.last_start
        self.dev = dev


class IoOffsets:
    """One fio thread's next IO: (direction, bytes, byte offset) per call of :meth:`next`."""

    def __init__(self, job: FioJob, base_offset: int, random: bool, draw: Callable[[], float]) -> None:
        self.job = job
        rw = job.rw
        self.draw = draw  # the thread's uniform [0, 1) draws
        self.random = random
        self.read_frac: float = (
            1.0 if rw in ("read", "randread") else job.rwmixread / 100.0 if rw in ("rw", "readwrite", "randrw") else 0.0
        )
        self.wop: str = "trim" if rw in ("trim", "randtrim") else "write"  # the op of a non-read IO
        self.time_based: bool = job.time_based
        self.identical: bool = job.rw_sequencer == "identical"
        self.base_offset: int = base_offset
        self.span: int = job.size_bytes or (1 << 30)
        self.bs: dict[str, int] = {"read": job.bs_read_bytes, "write": job.bs_write_bytes, "trim": job.bs_trim_bytes}
        self.nblocks: dict[str, int] = {}  # random offsets: block index range
        # mixed block sizes (fio bssplit / bsrange): a size picker per direction, None for a fixed bs
        self.pick_bs: dict[str, Any] = {
            "read": size_picker(job.bssplit_read, job.bsrange_read),
            "write": size_picker(job.bssplit_write, job.bsrange_write),
            "trim": None,
        }
        #: a read's size, picker and block range as native fields too (read per IO: a dict lookup
        #: each costs more than the rest of the pick; kept equal to the dicts' "read" entries)
        self.read_bs: int = self.bs["read"]
        self.read_pick: Any = self.pick_bs["read"]
        self.read_nblocks = 0
        self._count_blocks()
        self.next_offset: int = base_offset
        self.hole: int = job.rw_modifier if not random else 0  # rw=read:<n>: bytes skipped after each IO
        self.seq_nr: int = job.rw_modifier if random else 0  # rw=randread:<n>: IOs per random offset
        self.seq_left: int = self.seq_nr
        self.last_start: Any = None
        #: a sequential job with holes reached the end of its region (or a zbd job found no zone)
        self.region_end = False
        self.picker: OffsetPicker | None = None
        self.unit = 0  # the picker's block (the job's smallest block size)
        #: trimwrite: the write that follows a trim at the same offset (:meth:`next_trimwrite`)
        self.tw_write: Any = None

    def _count_blocks(self) -> None:
        self.nblocks = {op: self.span // bs if bs else 0 for op, bs in self.bs.items()}
        self.read_nblocks = self.nblocks["read"]

    def use_picker(self, gen: np.random.Generator) -> None:
        """The picker of non-uniform random offsets (:func:`needs_picker`), in blocks of the job's
        smallest block size, drawing from ``gen`` (the clone's own stream; each file has its own)."""
        job = self.job
        unit = min(
            min((s for s, _p in split), default=bs) if split else rng[0] if rng else bs
            for bs, split, rng in (
                (job.bs_read_bytes, job.bssplit_read, job.bsrange_read),
                (job.bs_write_bytes, job.bssplit_write, job.bsrange_write),
            )
        )
        self.unit = unit
        self.picker = OffsetPicker(job, max(1, self.span // unit), unit, gen)

    def set_region(self, base: int, span: int) -> None:
        """A new region (a file's; a zonemode window, models.ioengines.zbd): from its start."""
        self.base_offset = self.next_offset = base
        self.span = span
        self._count_blocks()

    def save(self, st: FileState) -> None:
        """The current file's position into its state (each field by name: no getattr per IO)."""
        st.base_offset = self.base_offset
        st.span = self.span
        st.nblocks = self.nblocks
        st.next_offset = self.next_offset
        st.picker = self.picker
        st.seq_left = self.seq_left
        st.last_start = self.last_start

    def load(self, st: FileState) -> None:
        """Make ``st`` (a file's state, :meth:`save`) the current file's."""
        self.base_offset = st.base_offset
        self.span = st.span
        self.nblocks = st.nblocks
        self.read_nblocks = st.nblocks["read"]
        self.next_offset = st.next_offset
        self.picker = st.picker
        self.seq_left = st.seq_left
        self.last_start = st.last_start

    # -- per IO ---------------------------------------------------------------------------------
    def draw_op(self) -> str:
        """fio's get_rw_ddir: the next IO's direction (one draw)."""
        return "read" if self.draw() < self.read_frac else self.wop

    def next(self, op: str | None = None) -> tuple[str, int, int]:
        """The next IO: (direction, bytes, byte offset); ``op``: its direction, if already drawn."""
        draw = self.draw
        if op is None:
            op = "read" if draw() < self.read_frac else self.wop
        if self.picker is not None:
            return self._next_picked(op)
        rd = op == "read"
        pick = self.read_pick if rd else self.pick_bs[op]
        u: float
        if pick is None:
            bs = self.read_bs if rd else self.bs[op]
            if self.random:
                u = draw()
                off = int(u * (self.read_nblocks if rd else self.nblocks[op])) * bs + self.base_offset
        else:
            bs, align = pick(draw())
            if self.random:  # fio's blockalign: the smallest size of the mix
                u = draw()
                off = int(u * max(1, (self.span - bs) // align + 1)) * align + self.base_offset
        if not self.random:
            if self.hole:
                return op, bs, self._next_with_hole(bs)
            off = self.next_offset
            self.next_offset += bs
            if self.next_offset + bs > self.base_offset + self.span:
                self.next_offset = self.base_offset
        return op, bs, off

    def next_trimwrite(self) -> tuple[str, int, int]:
        """fio's trimwrite / randtrimwrite: each block is trimmed, then written (the write's size)."""
        w = self.tw_write
        if w is not None:
            self.tw_write = None
            return w
        _op, bs, off = self.next("trim")
        self.tw_write = ("write", self.bs["write"], off)
        return "trim", bs, off

    def _next_with_hole(self, bs: int) -> int:
        """fio's get_next_seq_offset with ``rw=read:<n>``: n bytes skipped after each IO (not before
        the first); at the end of the region a time_based job starts over, another one ends."""
        if self.hole < 0:
            return self._next_backwards(bs)
        base = self.base_offset
        off = self.next_offset + (self.hole if self.next_offset != base else 0)
        if off + bs > base + self.span:
            off = base
            if not self.time_based:
                self.region_end = True
        self.next_offset = off + bs
        end = self.next_offset + self.hole
        if not self.time_based and end + bs > base + self.span:
            self.region_end = True  # the next IO would cross the end: this one is the last
        return off

    def _next_backwards(self, bs: int) -> int:
        """fio's get_next_seq_offset with a negative ``rw=read:-<n>`` (fio's examples/backwards-read.fio):
        the first IO at the region's start, each later one n bytes before the end of the last (n > bs:
        backwards); an offset before the region's start wraps to n bytes before its end (fio's unsigned
        position past the file's end: ``pos = io_size + ddir_seq_add``). The job never reaches an end
        of its own: its size (bytes done) or runtime ends it, as in fio."""
        base, span = self.base_offset, self.span
        rel = self.next_offset - base
        if rel:
            rel += self.hole
            if rel < 0:
                rel = span + self.hole
        if rel < 0 or rel + bs > span:  # n < bs steps forward: at the end, as a job with holes
            rel = 0
            if not self.time_based:
                self.region_end = True
        self.next_offset = base + rel + bs
        return base + rel

    def _next_picked(self, op: str) -> tuple[str, int, int]:
        """An IO of a random job with a non-default distribution, generator or percentage_random:
        random IOs from the picker, the others sequential from where the last IO ended."""
        pick = self.pick_bs[op]
        bs = self.bs[op] if pick is None else pick(self.draw())[0]
        base = self.base_offset
        picker = self.picker
        hit = True
        if self.seq_nr > 1:  # fio's ddir_seq_nr: a new random offset every n IOs
            self.seq_left -= 1
            hit = self.seq_left == 0
            if hit:
                self.seq_left = self.seq_nr
        pop = "write" if op == "trim" else op  # trims follow the write settings (fio's per-direction values)
        assert picker is not None  # (only random jobs with a picker come here)
        if hit and picker.is_random(pop):
            unit = self.unit
            off = base + min(picker.block(pop) * unit, max(0, self.span - bs) // unit * unit)
        elif not hit and self.identical:
            off = base if self.last_start is None else self.last_start
        else:
            off = self.next_offset
            if off + bs > base + self.span:
                off = base
        self.last_start = off
        self.next_offset = off + bs
        return op, bs, off
