"""Streaming block-trace reader: :func:`open_trace` and :func:`sniff_format`.

A :class:`TraceReader` reads its file line by line each time it is iterated (a multi-GB trace
never sits in memory); gzip, bzip2 and xz files are recognised by their magic bytes and read
transparently, and no line, NUL byte or decompression bomb can take more than a buffer's memory
(:func:`simcore.bounded.open_lines`: the limits and how to raise them).
Times are rebased to the first record (``TraceIO.t_ns``, ns).

Out-of-order timestamps: the formats are time-sorted, but real traces sometimes step
backwards (clock adjustments, per-CPU buffers merged). Records are kept in file order with
their own times; ``out_of_order`` counts records earlier than their predecessor and
``max_backstep_ns`` is the largest such step. A record earlier than the first one gets a
negative ``t_ns``. Consumers that need monotonic time must decide what to do (the replayer can
issue a late record immediately).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Final

import numpy as np

from simcore.bounded import open_lines
from simcore.errors import ConfigError

from .blkparse import ACTIONS, BlkparseParser
from .csvformats import AlibabaParser, LineParser, MsrColumns, MsrParser, TencentParser, msr_columns
from .iolog import IologParser
from .record import MAX_TRACE_NS, BadLine, TraceIO

__all__ = [
    "FORMATS",
    "TraceReader",
    "open_trace",
    "sniff_format",
    "open_text",
    "numbered_lines",
    "line_blocks",
    "out_of_range",
]

FORMATS = ("alibaba", "tencent", "msr", "blkparse", "iolog")
_PARSERS: dict[str, type[LineParser]] = {
    "alibaba": AlibabaParser,
    "tencent": TencentParser,
    "msr": MsrParser,
    "blkparse": BlkparseParser,
    "iolog": IologParser,
}
_SNIFF_ORDER = ("iolog", "blkparse", "msr", "alibaba", "tencent")
_SNIFF_LINES = 5  # non-blank lines examined
#: MSR lines read at once (:func:`~.csvformats.msr_columns`)
CHUNK_LINES: Final = 4096


def open_text(path: str | os.PathLike):
    """Open a trace for reading lines: plain, or compressed (gzip, bzip2, xz, by magic bytes),
    every line and the inflation bounded (:func:`simcore.bounded.open_lines`)."""
    return open_lines(path, "trace")


def numbered_lines(path: str | os.PathLike) -> Iterator[tuple[int, str]]:
    """(1-based line number, text) for each line; read errors become ConfigError."""
    lineno = 0
    with open_text(path) as f:
        it = iter(f)
        while True:
            try:
                text = next(it)
            except StopIteration:
                return
            except (OSError, EOFError) as e:  # truncated/corrupt gzip, I/O error
                raise ConfigError(f"{path}:{lineno + 1}: cannot read trace: {e}") from None
            lineno += 1
            yield lineno, text


def line_blocks(path: str | os.PathLike, size: int) -> Iterator[tuple[int, list[str]]]:
    """(1-based number of the first line, the next ``size`` lines) until the file ends: the lines
    of :func:`numbered_lines`, read a block at a time (no Python step per line). A read error
    becomes :func:`numbered_lines`' ConfigError, naming its line."""
    lineno = 0
    with open_text(path) as f:
        while True:
            try:
                lines = list(itertools.islice(f, size))
            except (OSError, EOFError) as e:  # truncated/corrupt gzip, I/O error: find its line
                for _ in numbered_lines(path):
                    pass
                raise ConfigError(f"{path}:{lineno + 1}: cannot read trace: {e}") from None
            if not lines:
                return
            yield lineno + 1, lines
            lineno += len(lines)


#: Largest byte offset + size of one IO: Linux file offsets (loff_t) are signed 64-bit.
MAX_OFFSET_BYTES: Final = 2**63 - 1
#: Largest transfer of one replayed IO: Linux's MAX_RW_COUNT (2 GiB - 4 KiB); the replayer issues
#: each record as one request, which the kernel would cut short above this.
MAX_IO_BYTES: Final = 0x7FFFF000


def out_of_range(offset: int, nbytes: int, t_rel_ns: int) -> str | None:
    """Why a parsed record cannot be replayed, or None."""
    if offset + nbytes > MAX_OFFSET_BYTES:
        return (
            f"offset {offset} + size {nbytes} is beyond 2**63-1 bytes (a Linux file offset, loff_t, is signed 64-bit)"
        )
    if nbytes > MAX_IO_BYTES:
        return (
            f"size {nbytes} bytes is above the largest single transfer (MAX_RW_COUNT = {MAX_IO_BYTES} "
            "bytes, 2 GiB - 4 KiB)"
        )
    if abs(t_rel_ns) > MAX_TRACE_NS:
        return (
            f"timestamp {t_rel_ns} ns from the first record is beyond 2**53 ns (~104 days), where the "
            "simulated clock loses nanosecond resolution"
        )
    return None


class TraceReader:
    """Iterable of :class:`TraceIO` from one trace file. Each iteration re-reads the file.

    Counters (valid while and after iterating): ``lines_read``, ``records``, ``bad_lines``
    (malformed lines skipped, only with ``skip_bad_lines``), ``skipped`` (reason -> count of
    well-formed lines that are not read/write records, see the format modules),
    ``out_of_order`` and ``max_backstep_ns`` (see the module docstring).
    """

    def __init__(
        self, path: str | os.PathLike, fmt: str, *, skip_bad_lines: bool = False, blk_action: str = "Q"
    ) -> None:
        self.path = Path(path)
        self.format = fmt
        self.skip_bad_lines = skip_bad_lines
        self.blk_action = blk_action
        self._reset()

    def _reset(self) -> None:
        self._t0: int | None = None  # the first record's time (ns), and the last one's
        self._prev: int | None = None
        self._names: dict[tuple[str, int], str] = {}  # MSR (hostname, disk number) -> volume
        self.lines_read = 0
        self.records = 0
        self.bad_lines = 0
        self.skipped: dict[str, int] = {}
        self.out_of_order = 0
        self.max_backstep_ns = 0

    def _parser(self) -> LineParser:
        if self.format == "blkparse":
            return BlkparseParser(self.blk_action)
        return _PARSERS[self.format]()

    def __iter__(self) -> Iterator[TraceIO]:
        self._reset()
        parser = self._parser()
        self._t0 = self._prev = None
        msr = parser if isinstance(parser, MsrParser) else None
        chunk: list[str] = []
        first = 0
        for lineno, text in numbered_lines(self.path):
            if msr is None or msr._first:  # every line of the other formats; MSR's up to its first non-blank
                rec = self._line(parser, lineno, text)
                if rec is not None:
                    yield rec
                continue
            if not chunk:
                first = lineno
            chunk.append(text)
            if len(chunk) < CHUNK_LINES:
                continue
            for rec in self._chunk(parser, first, chunk):
                yield rec
            chunk = []
        for rec in self._chunk(parser, first, chunk):
            yield rec

    def _chunk(self, parser: LineParser, first: int, lines: list[str]) -> Iterator[TraceIO]:
        """The records of MSR lines ``first``, ``first + 1``, ...: at once (:func:`msr_columns`)
        when every line is a usual one, else line by line through the parser."""
        cols = msr_columns(lines) if lines else None
        if cols is None:
            for i, text in enumerate(lines):
                rec = self._line(parser, first + i, text)
                if rec is not None:
                    yield rec
            return
        yield from self._msr_records(first, cols)

    def _volume(self, host: str, disk: int) -> str:
        """The volume of MSR disk ``disk`` of ``host`` (one string per volume)."""
        key = (host, disk)
        volume = self._names.get(key)
        if volume is None:
            volume = self._names[key] = f"{host}_{disk}"
        return volume

    def batches(self) -> Iterator[list[TraceIO]]:
        """The records of :meth:`__iter__`, a list per block of lines read (no Python step per
        record between them: the replayer's feed). The counters move a block at a time; after the
        last block they are :meth:`__iter__`'s."""
        self._reset()
        parser = self._parser()
        msr = parser if isinstance(parser, MsrParser) else None
        for first, lines in line_blocks(self.path, CHUNK_LINES):
            out: list[TraceIO] = []
            k, n = 0, len(lines)
            while k < n and (msr is None or msr._first):  # the other formats; MSR's up to its first non-blank line
                rec = self._line(parser, first + k, lines[k])
                if rec is not None:
                    out.append(rec)
                k += 1
            if k < n and not self._msr_block(first + k, lines[k:] if k else lines, out):
                for i in range(k, n):
                    rec = self._line(parser, first + i, lines[i])
                    if rec is not None:
                        out.append(rec)
            if out:
                yield out

    def _msr_block(self, first: int, lines: list[str], out: list[TraceIO]) -> bool:
        """The records of MSR lines ``first``, ``first + 1``, ... appended to ``out`` at once
        (:func:`msr_columns`, then :meth:`_admit`'s checks and counts over the arrays); False
        (nothing read) when a line is not a usual one."""
        cols = msr_columns(lines)
        if cols is None:
            return False
        ticks, writes, offsets, sizes, vol, keys = cols
        keep = np.flatnonzero(sizes != 0)
        t = ticks[keep]
        t0, prev = self._t0, self._prev  # (ns: MSR times are whole ticks of 100 ns)
        base = int(t[0]) if t0 is None and t.size else (t0 or 0) // 100
        rel = t - base  # (both below 10**18: no overflow)
        # out_of_range: the offset + size of 18-digit numbers stays below 2**63 - 1; |rel| * 100 > 2**53
        if (sizes[keep] > MAX_IO_BYTES).any() or (np.abs(rel) > MAX_TRACE_NS // 100).any():
            out.extend(self._msr_records(first, cols))  # its bad lines, one at a time
            return True
        zero = len(lines) - keep.size
        if zero:
            self.skipped["zero length"] = self.skipped.get("zero length", 0) + zero
        self.lines_read = first + len(lines) - 1
        if not t.size:
            return True
        back = (t[:-1] - t[1:]) if prev is None else np.diff(t, prepend=prev // 100) * -1
        late = back[back > 0]
        if late.size:
            self.out_of_order += int(late.size)
            self.max_backstep_ns = max(self.max_backstep_ns, int(late.max()) * 100)
        if t0 is None:
            self._t0 = base * 100
        self._prev = int(t[-1]) * 100
        self.records += int(t.size)
        volumes = [self._volume(host, disk) for host, disk in keys]
        times: list[int] = (rel * 100).tolist()
        offs: list[int] = offsets[keep].tolist()
        nbs: list[int] = sizes[keep].tolist()
        wr: list[bool] = writes[keep].tolist()
        vs: list[int] = vol[keep].tolist()
        line: list[int] = (keep + first).tolist()
        for i in range(len(times)):
            out.append(TraceIO(times[i], "write" if wr[i] else "read", offs[i], nbs[i], volumes[vs[i]], line[i]))
        return True

    def _msr_records(self, first: int, cols: MsrColumns) -> Iterator[TraceIO]:
        """The records of MSR lines ``first``, ``first + 1``, ... parsed at once (``cols``), through
        :meth:`_admit` one at a time, counted as they come."""
        ticks, writes, offsets, sizes = (c.tolist() for c in cols[:4])
        vol: list[int] = cols[4].tolist()
        volumes = [self._volume(host, disk) for host, disk in cols[5]]
        for i in range(len(ticks)):
            self.lines_read = first + i
            nbytes: int = sizes[i]
            if nbytes == 0:
                self.skipped["zero length"] = self.skipped.get("zero length", 0) + 1
                continue
            op = "write" if writes[i] else "read"
            rec = self._admit(first + i, ticks[i] * 100, op, offsets[i], nbytes, volumes[vol[i]])
            if rec is not None:
                yield rec

    def _line(self, parser: LineParser, lineno: int, text: str) -> TraceIO | None:
        """Line ``lineno`` through the parser: its record, or None (skipped, counted)."""
        self.lines_read = lineno
        try:
            out = parser.parse(text, lineno)
        except BadLine as e:
            if e.fatal or not self.skip_bad_lines:
                raise ConfigError(f"{self.path}:{lineno}: {self.format}: {e}") from None
            self.bad_lines += 1
            return None
        if out is None:
            return None
        if isinstance(out, str):
            self.skipped[out] = self.skipped.get(out, 0) + 1
            return None
        t, op, offset, nbytes, volume = out
        return self._admit(lineno, t, op, offset, nbytes, volume)

    def _admit(self, lineno: int, t: int, op: str, offset: int, nbytes: int, volume: str) -> TraceIO | None:
        """A parsed record of line ``lineno``: the :class:`TraceIO` (counted, its time from the
        first record), or None when it cannot be replayed and bad lines are skipped."""
        t0, prev = self._t0, self._prev
        problem = out_of_range(offset, nbytes, 0 if t0 is None else t - t0)
        if problem is not None:
            if not self.skip_bad_lines:
                raise ConfigError(f"{self.path}:{lineno}: {self.format}: {problem}")
            self.bad_lines += 1
            return None
        if t0 is None or prev is None:
            t0 = self._t0 = t
        elif t < prev:
            self.out_of_order += 1
            self.max_backstep_ns = max(self.max_backstep_ns, prev - t)
        self._prev = t
        self.records += 1
        return TraceIO(t - t0, op, offset, nbytes, volume, lineno)

    def describe(self) -> str:
        """Short summary of what the last pass read."""
        skipped = ", ".join(f"{n} {r}" for r, n in sorted(self.skipped.items())) or "none"
        text = (
            f"{self.format} trace {self.path}: {self.lines_read} lines, {self.records} IOs, "
            f"{self.bad_lines} bad lines, skipped: {skipped}"
        )
        if self.out_of_order:
            text += f", {self.out_of_order} out of order (max {self.max_backstep_ns} ns back)"
        return text

    def __repr__(self) -> str:
        return f"TraceReader({str(self.path)!r}, fmt={self.format!r})"


def sniff_format(path: str | os.PathLike) -> str:
    """Guess the format from the first non-blank lines: the first format (iolog, blkparse, msr,
    alibaba, tencent) whose parser accepts them all, yielding at least one record or skip."""
    head: list[tuple[int, str]] = []
    for lineno, text in numbered_lines(path):
        if text.strip():
            head.append((lineno, text))
            if len(head) == _SNIFF_LINES:
                break
    if not head:
        raise ConfigError(f"{path}: empty trace, cannot tell its format")
    for fmt in _SNIFF_ORDER:
        parser = TraceReader(path, fmt)._parser()
        try:
            outs = [parser.parse(text, lineno) for lineno, text in head]
        except BadLine:
            continue
        if any(o is not None for o in outs) or fmt == "iolog":
            return fmt
    first = head[0][1].strip()
    raise ConfigError(
        f"{path}:{head[0][0]}: cannot tell the trace format from {first[:60]!r}; "
        f"give it explicitly, one of {', '.join(FORMATS)}"
    )


def open_trace(
    path: str | os.PathLike, fmt: str | None = None, *, skip_bad_lines: bool = False, blk_action: str = "Q"
) -> TraceReader:
    """Open a block trace for streaming. ``fmt`` None = :func:`sniff_format`.

    ``blk_action`` (blkparse only): ``"Q"`` issue (bio queued) or ``"D"`` dispatch to driver.
    Malformed lines raise ConfigError ``"path:line: ..."`` unless ``skip_bad_lines``.
    """
    if blk_action not in ACTIONS:
        raise ConfigError(f"blk_action must be one of {', '.join(ACTIONS)}, got {blk_action!r}")
    if fmt is None:
        fmt = sniff_format(path)
    elif fmt not in FORMATS:
        raise ConfigError(f"{path}: unknown trace format {fmt!r}; expected one of {', '.join(FORMATS)}")
    elif not Path(path).is_file():
        raise ConfigError(f"{path}: trace file not found")
    return TraceReader(path, fmt, skip_bad_lines=skip_bad_lines, blk_action=blk_action)
