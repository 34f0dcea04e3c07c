"""Traces with measured per-IO timing: what ``stacksim validate --trace`` and ``stacksim calibrate
--trace`` read.

    reader = open_timed("scenarios/data/traces/blkparse_qdc_sample.txt")
    for t in reader:                      # TimedIO, in arrival order
        t.io.t_ns, t.io.op, t.io.nbytes   # the IO to replay (a TraceIO)
        t.lat_ns, t.q2d_ns, t.d2c_ns      # what was measured (q2d/d2c: blkparse only)

Formats (``FORMATS``):

* ``blkparse``: blkparse text (``%D %2c %8s %5T.%9t %5p %2a %3d ...``, the default format) with
  ``Q`` (bio queued), ``D`` (dispatched to the driver) and ``C`` (completed) events. Events are
  paired by device and start sector. An IO is a Q (or, without Q events, a D) with its C: its
  latency is C - Q (C - D without Q), and with both Q and D events the two parts Q->D (block
  layer and IO scheduler) and D->C (driver and device). A bio merged into another request
  (``M``/``F`` events) completes with that request and is skipped (``"merged bio"``); an IO without
  a C within ``ORPHAN_NS`` of trace time is dropped (``"no completion"``), as are Qs and Ds still
  open at the end of the trace (``"incomplete at end"``). Other actions are skipped by name.
* ``msr``: MSR Cambridge CSV; the response time column (100 ns ticks) is the latency.
* ``fiolog``: an fio latency log (``write_lat_log`` with ``log_offset=1``): ``time (ms), latency
  (ns), direction (0 read, 1 write, 2 trim), block size (bytes), offset (bytes)[, priority[, issue
  time (ns)]]``. fio writes an entry when the IO completes, so the arrival is the issue time when
  the log has it (``log_issue_time=1``, clat logs) and otherwise time - latency, to within fio's
  1 ms time stamps. Trim entries are skipped (``"trim"``).

Records are yielded in arrival order: blkparse and fio logs are written in completion order, so a
reorder buffer holds the IOs completed before an earlier one is (blkparse: exactly, until no older
Q/D is open; fio: ``REORDER_WINDOW`` entries). Memory is bounded by the IOs in flight, not by the
trace's length. Malformed lines are handled as by :class:`~scenarios.inputs.traces.reader.TraceReader`:
an error naming file and line, or, with ``skip_bad_lines``, counted in ``bad_lines``.
"""

from __future__ import annotations

import heapq
import os
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from simcore.errors import ConfigError

from .blkparse import BlkparseLines
from .csvformats import SECTOR, MsrParser
from .reader import numbered_lines, out_of_range
from .record import BadLine, TraceIO, to_int

__all__ = [
    "FORMATS",
    "TimedIO",
    "TimedReader",
    "MultiTimedReader",
    "open_timed",
    "sniff_timed_format",
    "stream_overlaps",
    "ORPHAN_NS",
    "REORDER_WINDOW",
]

FORMATS = ("blkparse", "msr", "fiolog")
#: an IO queued or dispatched this long (trace time) before the newest event without completing is
#: dropped as ``"no completion"`` (a lost C event must not hold the reorder buffer forever)
ORPHAN_NS = 10 * 10**9
#: fio logs: entries held to put completion-ordered entries back in arrival order
REORDER_WINDOW = 4096


@dataclass(frozen=True, slots=True)
class TimedIO:
    """One IO of a timed trace: the IO to replay and what was measured for it (ns)."""

    io: TraceIO
    """The IO, with its arrival time (Q, or D without Q events; fio: issue time) from the first."""
    lat_ns: float
    """Measured latency: blkparse C - Q (C - D without Q), MSR response time, fio latency."""
    q2d_ns: float | None = None
    """blkparse with Q and D events: queued -> dispatched to the driver (block layer + scheduler)."""
    d2c_ns: float | None = None
    """blkparse with D events: dispatched -> completed (driver + device)."""
    stream: str = ""
    """The submitter the IO came from, one synchronous thread of a closed replay: blkparse the pid of
    its Q (D without Q), MSR its volume (host and disk), an fio log its file (fio writes one per job)."""
    cpu: int = -1
    """blkparse: the CPU its Q (D) event was recorded on; -1 where the format does not say."""

    @property
    def done_ns(self) -> float:
        """When the trace saw it complete, in its arrival times' scale: arrival + latency (blkparse the
        C event, MSR and fio the response / the application's return)."""
        return self.io.t_ns + self.lat_ns


# raw record before rebasing: (t_abs_ns, op, offset, nbytes, volume, lat_ns, q2d_ns, d2c_ns, lineno, pid, cpu);
# pid (blkparse: the submitter's) None and cpu -1 where the format has none
_Raw = tuple


class _MsrTimed:
    """MSR Cambridge lines with their response times (the reader's :class:`MsrParser`, then column 7)."""

    name = "msr"

    def __init__(self) -> None:
        self._msr = MsrParser()

    def parse(self, text: str, lineno: int) -> _Raw | str | None:
        out = self._msr.parse(text, lineno)
        if out is None or isinstance(out, str):
            return out
        ticks = to_int(text.split(",")[6].strip(), "response time")  # (the parse checked 7 columns)
        if ticks == 0:
            raise BadLine("response time 0: a measured latency must be positive")
        return (*out, ticks * 100.0, None, None)


class _FioLog:
    """fio latency log lines -> raw records (completion order)."""

    name = "fiolog"

    def __init__(self) -> None:
        self.approx = False  # an entry without issue time: its arrival is known to 1 ms only

    def parse(self, text: str, lineno: int):
        line = text.strip()
        if not line:
            return None
        fields = [f.strip() for f in line.split(",")]
        if len(fields) < 5:
            raise BadLine(
                f"expected at least 5 comma-separated columns (time ms, latency ns, direction, block size, "
                f"offset: fio's log_offset=1), got {len(fields)}"
                + ("; this log was written without log_offset=1, which the replay needs" if len(fields) == 4 else ""),
                fatal=len(fields) == 4 and all(f.strip().isdigit() for f in fields),
            )
        if len(fields) > 7:
            raise BadLine(
                f"expected at most 7 columns (time, latency, direction, block size, offset, priority, "
                f"issue time), got {len(fields)}"
            )
        t_ms = to_int(fields[0], "time (ms)")
        lat = to_int(fields[1], "latency (ns)")
        ddir = to_int(fields[2], "direction")
        nbytes = to_int(fields[3], "block size")
        offset = to_int(fields[4], "offset")
        issue = to_int(fields[6], "issue time (ns)") if len(fields) == 7 else 0
        if ddir == 2:
            return "trim"
        if ddir not in (0, 1):
            raise BadLine(f"direction {ddir} (expected 0 read, 1 write or 2 trim)")
        if lat == 0:
            raise BadLine("latency 0: a measured latency must be positive")
        if nbytes == 0:
            return "zero length"
        if issue <= 0:
            self.approx = True
        arrival = issue if issue > 0 else max(0, t_ms * 10**6 - lat)
        return (arrival, "read" if ddir == 0 else "write", offset, nbytes, "fio", float(lat), None, None)


class _Blkparse(BlkparseLines):
    """blkparse Q/D/C events -> raw records (in completion order), pairing by (device, sector)."""

    name = "blkparse"

    def __init__(self) -> None:
        super().__init__()
        self.queued: OrderedDict = OrderedDict()  # (dev, sector) -> (t, op, nbytes, lineno)
        self.dispatched: OrderedDict = OrderedDict()  # (dev, sector) -> (t_q|None, t_d, op, nbytes, lineno)
        self.dropped: dict[str, int] = {}
        self.seen_q = self.seen_d = False

    def _drop(self, reason: str, n: int = 1) -> None:
        self.dropped[reason] = self.dropped.get(reason, 0) + n

    def oldest_open_ns(self) -> int | None:
        """Start time of the oldest IO still waiting for its C (None: none)."""
        ts = []
        if self.queued:
            ts.append(next(iter(self.queued.values()))[0])
        if self.dispatched:
            t_q, t_d = next(iter(self.dispatched.values()))[:2]
            ts.append(t_d if t_q is None else t_q)
        return min(ts) if ts else None

    def expire(self, now_ns: int) -> None:
        for d, idx in ((self.queued, 0), (self.dispatched, 1)):
            while d:
                first = next(iter(d.values()))
                t = first[idx] if idx == 0 or first[0] is None else first[0]
                if now_ns - t <= ORPHAN_NS:
                    break
                d.popitem(last=False)
                self._drop("no completion")

    def finish(self) -> None:
        n = len(self.queued) + len(self.dispatched)
        if n:
            self._drop("incomplete at end", n)
        self.queued.clear()
        self.dispatched.clear()

    # long: one blkparse event line, every action's pairing rule in one place
    def parse(self, text: str, lineno: int):
        m = self.event(text)
        if m is None:
            return None
        action = m["action"]
        if action not in ("Q", "D", "C", "M", "F"):
            return f"action {action}"
        d = self.data(m)
        if isinstance(d, str):
            return d
        t, op, sector, nbytes = d
        key = (m["dev"], sector)
        self.expire(t)
        if action == "Q":
            self.seen_q = True
            self.queued[key] = (t, op, nbytes, lineno, m["pid"], int(m["cpu"]))
            return ("open", t)
        if action in ("M", "F"):
            if self.queued.pop(key, None) is not None:
                self._drop("merged bio")
            return ("open", t)
        if action == "D":
            self.seen_d = True
            q = self.queued.pop(key, None)
            # a merged request's D covers more sectors than its first bio's Q; the submitter is the Q's
            who = (m["pid"], int(m["cpu"])) if q is None else q[4:]
            self.dispatched[key] = (None if q is None else q[0], t, op, nbytes, lineno if q is None else q[3], *who)
            return ("open", t)
        d = self.dispatched.pop(key, None)
        if d is not None:
            t_q, t_d, op0, n0, line0, pid, cpu = d
            start = t_d if t_q is None else t_q
            if t < t_d or t < start:
                raise BadLine(
                    f"C event at {t} ns is before its {'D' if t < t_d else 'Q'} (line {line0}):"
                    " a completion cannot precede its IO (events of two IOs on one sector mixed up?)",
                    well_formed=True,
                )
            return (
                start,
                op0,
                sector * SECTOR,
                n0,
                m["dev"],
                float(t - start),
                None if t_q is None else float(t_d - t_q),
                float(t - t_d),
                line0,
                pid,
                cpu,
            )
        q = self.queued.pop(key, None)
        if q is None:
            return "C without Q or D"
        t_q, op0, n0, line0, pid, cpu = q
        if t < t_q:
            raise BadLine(
                f"C event at {t} ns is before its Q (line {line0}): a completion cannot precede its IO",
                well_formed=True,
            )
        return (t_q, op0, sector * SECTOR, n0, m["dev"], float(t - t_q), None, None, line0, pid, cpu)


_PARSERS = {"msr": _MsrTimed, "fiolog": _FioLog, "blkparse": _Blkparse}
#: blkparse: completed IOs held at most (beyond this, an IO waiting for an old open Q/D is let go
#: and replayed after the IO before it, as an out-of-order record)
_BLK_HOLD = 16 * REORDER_WINDOW


class TimedReader:
    """Iterable of :class:`TimedIO` from one timed trace (re-reads the file on each iteration).

    Counters after (and while) iterating, as :class:`~scenarios.inputs.traces.reader.TraceReader`'s:
    ``lines_read``, ``records``, ``bad_lines``, ``skipped`` (reason -> count), ``out_of_order``;
    ``has_q`` / ``has_d`` (blkparse: the trace has Q / D events); ``approx_arrivals`` (an fio log
    entry without issue time: arrivals known to fio's 1 ms only).
    """

    def __init__(self, path: str | os.PathLike, fmt: str, *, skip_bad_lines: bool = False) -> None:
        self.path = Path(path)
        self.format = fmt
        self.skip_bad_lines = skip_bad_lines
        self.rebase = True  # times from the first record (False: as in the file, for MultiTimedReader)
        self._reset()

    def _reset(self) -> None:
        self.lines_read = self.records = self.bad_lines = self.out_of_order = 0
        self.skipped: dict[str, int] = {}
        self.has_q = self.has_d = False
        self.approx_arrivals = False

    def _skip(self, reason: str, n: int = 1) -> None:
        self.skipped[reason] = self.skipped.get(reason, 0) + n

    def _bad(self, lineno: int, msg: str, fatal: bool = False) -> None:
        if fatal or not self.skip_bad_lines:
            raise ConfigError(f"{self.path}:{lineno}: {self.format}: {msg}")
        self.bad_lines += 1

    def _raw(self, parser) -> Iterator[tuple]:
        """Raw records in the file's order, and ("open", t) progress marks (blkparse)."""
        for lineno, text in numbered_lines(self.path):
            self.lines_read = lineno
            try:
                out = parser.parse(text, lineno)
            except BadLine as e:
                self._bad(lineno, str(e), e.fatal)
                continue
            if out is None:
                continue
            if isinstance(out, str):
                self._skip(out)
                continue
            if len(out) == 8:
                out = (*out, lineno, None, -1)
            yield out

    def _ordered(self, parser) -> Iterator[tuple]:
        """Raw records in arrival order (bounded reorder buffer)."""
        if self.format == "msr":
            yield from (r for r in self._raw(parser) if len(r) != 2)
            return
        heap: list = []
        seq = 0
        blk = self.format == "blkparse"
        hold = _BLK_HOLD if blk else REORDER_WINDOW
        for r in self._raw(parser):
            if len(r) != 2:
                heapq.heappush(heap, (r[0], seq, r))
                seq += 1
            if blk:
                oldest = parser.oldest_open_ns()
                while heap and (len(heap) > hold or oldest is None or heap[0][0] <= oldest):
                    yield heapq.heappop(heap)[2]
            elif len(heap) > hold:
                yield heapq.heappop(heap)[2]
        if blk:
            parser.finish()
            self.has_q, self.has_d = parser.seen_q, parser.seen_d
            for reason, n in parser.dropped.items():
                self._skip(reason, n)
        while heap:
            yield heapq.heappop(heap)[2]

    def __iter__(self) -> Iterator[TimedIO]:
        self._reset()
        parser = _PARSERS[self.format]()
        t0 = prev = None
        file_stream = self.path.name
        for t, op, offset, nbytes, volume, lat, q2d, d2c, lineno, pid, cpu in self._ordered(parser):
            problem = out_of_range(offset, nbytes, t - (t if t0 is None else t0))
            if problem is not None:
                self._bad(lineno, problem)
                continue
            if t0 is None:
                t0 = t if self.rebase else 0
                prev = t
            elif t < prev:
                self.out_of_order += 1
            prev = max(prev, t)
            self.records += 1
            stream = pid if pid is not None else volume if self.format == "msr" else file_stream
            yield TimedIO(TraceIO(t - t0, op, offset, nbytes, volume, lineno), lat, q2d, d2c, stream, cpu)
        if self.format == "blkparse":
            self.has_q, self.has_d = parser.seen_q, parser.seen_d
        self.approx_arrivals = getattr(parser, "approx", False)

    def describe(self) -> str:
        skipped = ", ".join(f"{n} {r}" for r, n in sorted(self.skipped.items())) or "none"
        text = (
            f"{self.format} trace {self.path}: {self.lines_read} lines, {self.records} timed IOs, "
            f"{self.bad_lines} bad lines, skipped: {skipped}"
        )
        if self.out_of_order:
            text += f", {self.out_of_order} out of order"
        return text


class MultiTimedReader:
    """Several timed traces of one run as one (fio writes a latency log per job): their IOs merged in
    arrival order, times from the earliest first record (the logs share fio's clock), each file its
    own stream. Counters are the files' totals."""

    def __init__(self, readers: list[TimedReader]) -> None:
        formats = {r.format for r in readers}
        if len(formats) != 1:
            raise ConfigError(
                f"--trace files of different formats ({', '.join(sorted(formats))}): give one run's files"
            )
        self.readers = readers
        self.format = readers[0].format
        self.path = Path(", ".join(str(r.path) for r in readers))
        for r in readers:
            r.rebase = False

    def __iter__(self) -> Iterator[TimedIO]:
        t0 = None
        for t in heapq.merge(*self.readers, key=lambda x: x.io.t_ns):
            if t0 is None:
                t0 = t.io.t_ns
            yield replace(t, io=t.io.at(t.io.t_ns - t0))

    def _total(self, name: str) -> int:
        return sum(getattr(r, name) for r in self.readers)

    lines_read = property(lambda self: self._total("lines_read"))
    records = property(lambda self: self._total("records"))
    bad_lines = property(lambda self: self._total("bad_lines"))
    out_of_order = property(lambda self: self._total("out_of_order"))
    approx_arrivals = property(lambda self: any(r.approx_arrivals for r in self.readers))
    has_q = property(lambda self: all(r.has_q for r in self.readers))
    has_d = property(lambda self: all(r.has_d for r in self.readers))

    @property
    def skipped(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.readers:
            for k, n in r.skipped.items():
                out[k] = out.get(k, 0) + n
        return out

    def describe(self) -> str:
        return "; ".join(r.describe() for r in self.readers)


def sniff_timed_format(path: str | os.PathLike) -> str:
    """The first of blkparse, fiolog, msr whose parser accepts the first 5 non-blank lines."""
    head = []
    for lineno, text in numbered_lines(path):
        if text.strip():
            head.append((lineno, text))
            if len(head) == 5:
                break
    if not head:
        raise ConfigError(f"{path}: empty trace, cannot tell its format")
    for fmt in ("blkparse", "fiolog", "msr"):
        parser = _PARSERS[fmt]()
        outs = []
        try:
            for lineno, text in head:
                outs.append(parser.parse(text, lineno))
        except BadLine as e:
            if e.fatal:  # recognisably this format, unusable as written (an fio log without offsets)
                raise ConfigError(f"{path}:{lineno}: {fmt}: {e}") from None
            if e.well_formed:  # this format; the reader reports the line
                return fmt
            continue
        if any(o is not None for o in outs):
            return fmt
    raise ConfigError(
        f"{path}:{head[0][0]}: cannot tell the timed trace format from {head[0][1].strip()[:60]!r}; "
        f"give it with --format, one of {', '.join(FORMATS)} (a trace without per-IO timing "
        f"cannot be validated IO by IO)"
    )


def open_timed(
    path: str | os.PathLike | list, fmt: str | None = None, *, skip_bad_lines: bool = False
) -> TimedReader | MultiTimedReader:
    """Open a timed trace for streaming (``fmt`` None: :func:`sniff_timed_format`); several paths
    (one run's fio logs, one per job): a :class:`MultiTimedReader`."""
    if isinstance(path, (list, tuple)):
        if len(path) == 1:
            path = path[0]
        else:
            return MultiTimedReader([open_timed(p, fmt, skip_bad_lines=skip_bad_lines) for p in path])
    if fmt is None:
        fmt = sniff_timed_format(path)
    elif fmt not in FORMATS:
        raise ConfigError(f"{path}: format {fmt!r} carries no per-IO timing; expected one of {', '.join(FORMATS)}")
    elif not Path(path).is_file():
        raise ConfigError(f"{path}: trace file not found")
    return TimedReader(path, fmt, skip_bad_lines=skip_bad_lines)


def stream_overlaps(ios: Iterable[TimedIO], tolerance_ns: float = 0.0) -> tuple[dict[str, int], dict[str, int]]:
    """``(IOs per stream, overlapping IOs per stream)``: an IO overlaps when its stream issued it
    more than ``tolerance_ns`` before an earlier IO of the stream completed (the stream had more than
    one IO in flight: not a synchronous submitter). Streams without overlap are absent from the second."""
    count: dict[str, int] = {}
    over: dict[str, int] = {}
    last_done: dict[str, float] = {}
    for t in ios:
        s = t.stream
        count[s] = count.get(s, 0) + 1
        d = last_done.get(s)
        if d is not None and t.io.t_ns + tolerance_ns < d:
            over[s] = over.get(s, 0) + 1
        done = t.done_ns
        if d is None or done > d:
            last_done[s] = done
    return count, over
