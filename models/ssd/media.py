"""The NAND media of a flash SSD: channels x dies x planes, each die one operation at a time, each
channel one transfer at a time (:class:`MediaConfig`, :class:`Media`).

A read on a die takes the array read time ``tR`` of its page type (LSB/CSB/MSB of TLC: the page
type is the page's place in its wordline, derived from the address), then its data crosses the
die's channel at the channel rate (the die holds the data in its page register until it has
crossed: the die is busy until then, as MQSim's die occupancy is the transfer's end plus the
command's latency). Programs (the write buffer's flushes) and GC's copies and erases are booked on
the dies as operations with a start and an end (an erase takes ``ftl.erase_ns``, tBERS). A read
whose die is busy with a program or an
erase either waits for it to end and then goes before the queued ones (read priority), or, where
the controller suspends programs and erases for reads (``suspend``), waits the suspend latency, runs,
and the suspended operation resumes after it, later by the read and the resume time (an operation is
suspended once: a later read waits for it). A command's latency distribution therefore comes from
the page types, the collisions on dies and channels and the suspends, not from a drawn spread.

The drive's state decides which time a read takes: on a filled drive (the default, as the FTL's
``full`` precondition) the data has been folded out of the SLC cache into the cells' own pages, read
by page type; with ``reads_from_slc`` it sits in pSLC blocks (a fresh client drive reading data just
written, the state client ratings are measured in: "on a fresh drive, inside the SLC cache"), every
page read in ``slc_read_ns``.

The device's ``parallel_units`` are the dies: die d sits on channel d mod ``channels``; the FTL
stripes pages over the dies in turn (``unit_stripe_bytes`` = ``page_bytes`` in the presets). Multi-plane
reads: a read of more than a page takes a page from each of the next dies, and up to
``planes_per_die`` pages from one die as one multi-plane read (one tR). Programs are multi-plane:
the write buffer gathers a page for each plane of the frontier's die, then books their program as
one operation at the buffer's calibrated rate.

Interface for the rest of the device (the zones' stripe may book on it too): ``Media.dies`` (the
count), ``Media.die_free`` (when each die's booked work ends, ns: the list the write buffer and GC
share), ``read(die, t, page_type, extra_ns, nbytes)`` and ``book(die, ready, dur, kind)``.
"""

from __future__ import annotations

from typing import Any, Callable, Literal

from pydantic import Field, model_validator

from simcore.config import Model

#: page types per cell (bits per cell): SLC 1, MLC 2 (LSB/MSB), TLC 3 (LSB/CSB/MSB), QLC 4
PAGE_TYPES = {"slc": 1, "mlc": 2, "tlc": 3, "qlc": 4}
#: operation kinds booked on a die
PROGRAM, ERASE = 0, 1
#: added to a booked operation's kind once a read has suspended it: it is not suspended again (MQSim
#: keeps one suspended command per chip, recalled), so reads cannot starve it
SUSPENDED = 2


class MediaConfig(Model):
    """The NAND geometry and timings of a flash SSD; the dies are the device's ``parallel_units``.

    Defaults (3D TLC): tR and tPROG per page type in the ratios of FEMU's TLC table (read 56.5 /
    77.5 / 106 us, program 820.5 / 2225 / 5734 us: exact, FEMU's nand.h, from the SimpleSSD
    paper), scaled so that the slowest page reads in a generation's tR (Samsung V6 ~45 us,
    recalled; the presets set theirs); 16 KiB pages and 4 planes per die (recalled, 3D TLC rules of
    thumb); suspend latencies MQSim's (program 100 us, erase 700 us: exact, ssdconfig.xml)."""

    cell: Literal["slc", "mlc", "tlc", "qlc"] = Field("tlc", description="bits per cell: the page types")
    channels: int = Field(
        8, ge=1, le=1024, description="flash channels; die d is on channel d mod channels (at most one per die)"
    )
    planes_per_die: int = Field(4, ge=1, le=16, description="planes per die: a multi-plane operation covers them")
    page_bytes: int = Field(16_384, ge=2048, le=1 << 20, description="NAND page, bytes (3D TLC: 16 KiB, recalled)")
    channel_gb_s: float = Field(
        1.2, gt=0, description="one channel's transfer rate, GB/s (Toggle/ONFI MT/s x 1 byte; V6 1.2 Gb/s, recalled)"
    )
    read_ns: tuple[float, ...] = Field(
        (24_000.0, 32_900.0, 45_000.0),
        description="tR per page type, LSB first, ns (one per bit of the cell; default: FEMU's TLC ratios"
        " with MSB at V6's ~45 us, estimate)",
    )
    program_ns: tuple[float, ...] = Field(
        (820_500.0, 2_225_000.0, 5_734_000.0),
        description="tPROG per page type, LSB first, ns: the buffer's programs keep their calibrated mean"
        " time and take these ratios by page type (FEMU's TLC table, exact)",
    )
    slc_read_ns: float = Field(
        30_000.0,
        gt=0,
        description="tR of a page in SLC mode (pSLC: the SLC cache's blocks), ns (SLC-mode on a TLC die"
        " 25-35 us, recalled: the midpoint)",
    )
    reads_from_slc: bool = Field(
        False,
        description="the data read sits in pSLC blocks (the SLC cache): a fresh client drive reading data"
        " just written, the state its ratings are measured in; False (default): a filled drive, its data"
        " folded into the cells' own pages, read by page type",
    )
    suspend: bool = Field(True, description="the controller suspends programs and erases for reads")
    program_suspend_ns: float = Field(
        100_000.0, ge=0, description="a program's suspend latency for a read, ns (MQSim's 100 us, exact)"
    )
    erase_suspend_ns: float = Field(
        700_000.0, ge=0, description="an erase's suspend latency for a read, ns (MQSim's 700 us, exact)"
    )
    resume_ns: float = Field(
        0.0, ge=0, description="extra time of a suspended operation once it resumes, ns (MQSim: none, exact)"
    )

    @model_validator(mode="after")
    def _types_match_cell(self) -> "MediaConfig":
        n = PAGE_TYPES[self.cell]
        for name in ("read_ns", "program_ns"):
            v = getattr(self, name)
            if len(v) != n or min(v) <= 0:
                raise ValueError(f"{name}: {n} positive times for {self.cell.upper()} ({n} page types), got {v}")
        return self

    @property
    def mean_read_ns(self) -> float:
        """tR averaged over the page types (pages of each type are equally many), ns."""
        return sum(self.read_ns) / len(self.read_ns)

    def transfer_ns(self, nbytes: int) -> float:
        """``nbytes`` crossing one channel, ns."""
        return nbytes / self.channel_gb_s

    def controller_read_ns(self, base_ns: float) -> float:
        """The controller's share of a 4 KiB read (firmware, mapping, ECC) when the media's is the mean
        tR and the 4 KiB channel transfer: what is left of the device's calibrated ``base_ns`` (the
        filled drive's read: ``read_ns`` by page type, whatever ``reads_from_slc``)."""
        return base_ns - self.mean_read_ns - self.transfer_ns(4096)


class Media:
    """The dies and channels of one device, their booked operations (times in ns).

    ``die_free[d]``: when die d's booked work ends; ``read_free[d]``: when its last read ends (reads
    keep their order); ``_ops[d]``: its booked programs and erases not yet over, as flat
    [start, end, kind, ...] in time order."""

    def __init__(self, cfg: MediaConfig, dies: int, channel: Callable[[], Any]) -> None:
        """``channel()``: a new transfer path, one per channel (:class:`models.ssd.transfer_path.TransferPath`);
        at most one channel per die."""
        self.cfg = cfg
        self.dies = dies
        self.die_free = [0.0] * dies
        self.read_free = [0.0] * dies
        self._ops: list[list[float]] = [[] for _ in range(dies)]
        self.channels = [channel() for _ in range(min(cfg.channels, dies))]
        self._n_ch = len(self.channels)
        self._types = PAGE_TYPES[cfg.cell]
        # a read's tR by page type: the cells' own, or pSLC's for every page when the data is in the SLC cache
        self._tr = [cfg.slc_read_ns] * self._types if cfg.reads_from_slc else list(cfg.read_ns)
        mean_prog = sum(cfg.program_ns) / len(cfg.program_ns)
        self._prog_ratio = [p / mean_prog for p in cfg.program_ns]
        self._programs = [0] * dies  # pages programmed on each die (their page types in turn)
        self._ns_per_byte = 1.0 / cfg.channel_gb_s
        self._suspend = cfg.suspend
        self._suspend_ns = (cfg.program_suspend_ns, cfg.erase_suspend_ns)
        self._resume_ns = cfg.resume_ns
        self._page = cfg.page_bytes
        self._multi = cfg.page_bytes * cfg.planes_per_die  # a multi-plane operation's bytes
        # counters (monotonic)
        self.reads = 0
        self.suspends = 0
        self.suspend_ns = 0.0  # reads' waits for suspends, summed
        self.collision_ns = 0.0  # reads' waits for the die (reads or operations ahead), summed
        self.channel_wait_ns = 0.0  # reads' waits for their channel, summed
        self.programs = 0  # program operations booked on the dies (multi-plane: one; GC copies too)
        self.erases = 0  # erase operations booked on the dies (GC's)
        # the last read's page that ended last (its critical path): its wait for the die (suspends
        # excluded), its suspend latency, its array time; read by the device for the command's record
        self.last_wait_ns = 0.0
        self.last_suspend_ns = 0.0
        self.last_tr_ns = 0.0

    def page_type(self, offset: int) -> int:
        """The page type of the data at ``offset``: its page's place in its die's wordlines (pages
        striped over the dies in turn; the slices of one page share it)."""
        return (offset // self._page // self.dies) % self._types

    def read(self, die: int, t: float, page_type: int, extra_ns: float, nbytes: int) -> tuple[float, float, float]:
        """A read of ``nbytes`` from ``die`` on, ready at ``t``: (start of its first array read, end of
        its last channel transfer, its die time), ns. ``extra_ns``: array time beyond tR. A read of
        more than a page reads a page on each of the next dies at once (the FTL stripes pages over
        the dies), each crossing its own die's channel."""
        page = self._page
        if nbytes <= page:
            return self._read_page(die, t, page_type, extra_ns, nbytes)
        k = -(-nbytes // page)
        if k > self.dies:
            k = self.dies
        share = nbytes // k
        # a die's pages on its planes are one multi-plane read (one tR); more take a tR per plane-set
        rounds = -(-share // self._multi)
        if rounds > 1:
            extra_ns += (rounds - 1) * self._tr[page_type] * k
        first, last, occ = self._read_page(die, t, page_type, extra_ns / k, nbytes - share * (k - 1))
        crit = (self.last_wait_ns, self.last_suspend_ns, self.last_tr_ns)
        for i in range(1, k):
            d = die + i
            s, e, o = self._read_page(d - self.dies if d >= self.dies else d, t, page_type, extra_ns / k, share)
            if s < first:
                first = s
            if e > last:
                last = e
                crit = (self.last_wait_ns, self.last_suspend_ns, self.last_tr_ns)
            occ += o
        self.last_wait_ns, self.last_suspend_ns, self.last_tr_ns = crit
        return first, last, occ

    def _read_page(
        self, die: int, t: float, page_type: int, extra_ns: float, nbytes: int
    ) -> tuple[float, float, float]:
        """A read of at most a page on ``die``: (start of its array read, end of its transfer, die time)."""
        tr = self._tr[page_type] + extra_ns
        t0 = self.read_free[die]
        if t0 < t:
            t0 = t
        start = t0
        ops = self._ops[die]
        now_free = self.die_free[die]
        pause = 0.0
        suspend = 0.0
        if ops:
            while ops and ops[1] <= t0:  # (operations over by the time it could start)
                del ops[:3]
            if ops and ops[0] < t0:  # an operation in progress when it could start
                end = ops[1]
                kind = int(ops[2])  # (+ SUSPENDED once it has been: an operation is suspended once)
                wait = self._suspend_ns[kind] if self._suspend and kind < SUSPENDED else end - t0
                if end - t0 <= wait:  # it ends before a suspend would take effect: wait for it
                    start = end
                else:
                    start = t0 + wait
                    suspend = wait
                    pause = self._resume_ns  # (the operation goes on during its suspend latency)
                    ops[2] = float(kind + SUSPENDED)
                    self.suspends += 1
                    self.suspend_ns += wait
        elif now_free > start:  # (reads booked by others, e.g. read-ahead: after them)
            start = now_free
        self.collision_ns += start - t
        self.last_wait_ns = start - t - suspend
        self.last_suspend_ns = suspend
        self.last_tr_ns = tr
        xfer = nbytes * self._ns_per_byte
        ch = self.channels[die % self._n_ch]
        xstart = ch.reserve(start + tr, xfer)
        self.channel_wait_ns += xstart - start - tr
        end = xstart + xfer
        if ops:  # the queued operations (and the suspended one) run after it
            delta = end - start + pause
            if ops[0] >= start:  # none in progress: they move only if it overlaps them
                delta = end - ops[0] if end > ops[0] else 0.0
            if delta > 0.0:
                for i in range(0, len(ops), 3):
                    if ops[i + 1] > start:
                        if ops[i] >= start:
                            ops[i] += delta
                        ops[i + 1] += delta
                now_free += delta
        self.read_free[die] = end
        self.die_free[die] = now_free if now_free > end else end
        self.reads += 1
        return start, end, end - start

    def book(self, die: int, ready: float, dur: float, kind: int) -> float:
        """A program or an erase on ``die`` of ``dur`` ns, from ``ready`` or when the die is free; a
        program's time scales by its page type's share of tPROG (the die's next page); its end, ns."""
        if kind == PROGRAM:
            self.programs += 1
            k = self._programs[die]
            self._programs[die] = k + 1
            dur *= self._prog_ratio[k % self._types]
        else:
            self.erases += 1
        free = self.die_free[die]
        start = free if free > ready else ready
        end = start + dur
        self.die_free[die] = end
        ops = self._ops[die]
        ops += (start, end, float(kind))
        return end

    def gc_work(self, u: int, copies: int, erases: int, copy_ns: float, erase_ns: float, t: float) -> tuple[int, float]:
        """Garbage collection's copies (a read and a program, booked as a program) and erases on the
        dies round robin from ``u`` (as :func:`models.ssd.ftl.gc_work`); the next die and the time booked."""
        busy = 0.0
        n = self.dies
        for i in range(copies + erases):
            if i < copies:
                self.book(u, t, copy_ns, PROGRAM)
                busy += copy_ns
            else:
                self.book(u, t, erase_ns, ERASE)
                busy += erase_ns
            u = u + 1 if u + 1 < n else 0
        return u, busy

    def counters(self) -> dict[str, float]:
        """The media's counters for the run summary (monotonic)."""
        return {
            "media_reads": self.reads,
            "media_programs": self.programs,
            "media_erases": self.erases,
            "suspends": self.suspends,
            "suspend_wait_ns": self.suspend_ns,
            "die_wait_ns": self.collision_ns,
            "channel_wait_ns": self.channel_wait_ns,
        }
