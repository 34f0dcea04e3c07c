"""Line parsers for the CSV block-trace formats: Alibaba, Tencent and MSR Cambridge.

Every parser turns one text line into ``None`` (blank or header line, not a record), a skip
reason (a string, counted by the reader) or a raw record ``(t_abs_ns, op, offset_bytes,
nbytes, volume)``; a malformed line raises :class:`~scenarios.inputs.traces.record.BadLine`.
A header line is accepted only as the first non-blank line, with the right number of columns,
all of them non-numeric. Zero-length IOs are skipped (reason ``"zero length"``).

Column units, as the publishers of each trace set give them:

* ``alibaba``: device_id, opcode (R/W), offset (bytes), length (bytes), timestamp (us): the
  Alibaba Cloud block traces' ``io_traces.csv`` (Li, Wang, Lee & Shi, "An In-Depth Analysis of
  Cloud Block Storage Workloads in Large-Scale Production", IISWC 2020).
* ``tencent``: timestamp (s), offset (512 B sectors), size (sectors), io_type (0 read,
  1 write), volume_id: the Tencent Cloud Block Storage traces (Zhang et al., "OSCA: An
  Online-Model Based Cache Allocation Scheme in Cloud Block Storage Systems", USENIX ATC 2020;
  SNIA IOTTA repository).
* ``msr``: the MSR Cambridge traces (Narayanan, Donnelly & Rowstron, "Write Off-Loading:
  Practical Power Management for Enterprise Storage", FAST 2008; SNIA IOTTA repository):
  timestamp (Windows FILETIME, 100 ns ticks), hostname, disk number, type
  (Read/Write), offset (bytes), size (bytes), response time (100 ns ticks; checked here, the
  latency that ``stacksim validate --trace`` compares, read by :mod:`.timed`);
  volume = ``f"{hostname}_{disk}"``.
"""

from __future__ import annotations

from typing import Any, ClassVar, Final

import numpy as np
from mypy_extensions import mypyc_attr

from .record import BadLine, to_int, to_ns

__all__ = ["Raw", "Parsed", "LineParser", "AlibabaParser", "TencentParser", "MsrParser", "MsrColumns", "msr_columns"]

Raw = tuple[int, str, int, int, str]
"""``(t_abs_ns, op, offset_bytes, nbytes, volume)`` before rebasing to the first record."""
Parsed = Raw | str | None

SECTOR = 512  # bytes


def _numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


@mypyc_attr(allow_interpreted_subclasses=True)  # blkparse and iolog (interpreted) extend it
class LineParser:
    """Base of the per-format line parsers; one instance per pass over a file (may keep state)."""

    name: ClassVar[str] = ""
    columns: ClassVar[tuple[str, ...]] = ()

    def parse(self, text: str, lineno: int) -> Parsed:  # pragma: no cover - interface
        raise NotImplementedError


class _CsvParser(LineParser):
    def __init__(self) -> None:
        self._first = True
        self._ncols = len(self.columns)

    def parse(self, text: str, lineno: int) -> Parsed:
        line = text.strip()
        if not line:
            return None
        fields = line.split(",")
        if " " in line or "\t" in line:
            fields = [f.strip() for f in fields]
        first, self._first = self._first, False
        if len(fields) != self._ncols:
            raise BadLine(
                f"expected {self._ncols} comma-separated columns ({', '.join(self.columns)}), got {len(fields)}"
            )
        if first and not any(_numeric(f) for f in fields):
            return None  # header
        return self.record(fields)

    def record(self, f: list[str]) -> Parsed:  # pragma: no cover - interface
        raise NotImplementedError


def _sized(t: int, op: str, offset: int, nbytes: int, volume: str) -> Parsed:
    return "zero length" if nbytes == 0 else (t, op, offset, nbytes, volume)


_ALIBABA_OPS: Final = {"R": "read", "W": "write", "r": "read", "w": "write"}
_TENCENT_OPS: Final = {"0": "read", "1": "write"}
_MSR_OPS: Final = {"read": "read", "write": "write"}  # of the type's lower case
_MSR_OPS_AS_IS: Final = {"Read": "read", "Write": "write", "read": "read", "write": "write"}  # (no lower() per line)


class AlibabaParser(_CsvParser):
    name: ClassVar[str] = "alibaba"
    columns: ClassVar[tuple[str, ...]] = ("device_id", "opcode", "offset", "length", "timestamp_us")

    def record(self, f: list[str]) -> Parsed:
        if not f[0]:
            raise BadLine("empty device_id")
        op = _ALIBABA_OPS.get(f[1])
        if op is None:
            raise BadLine(f"unknown opcode {f[1]!r} (expected R or W)")
        return _sized(to_ns(f[4], 1_000, "timestamp"), op, to_int(f[2], "offset"), to_int(f[3], "length"), f[0])


class TencentParser(_CsvParser):
    name: ClassVar[str] = "tencent"
    columns: ClassVar[tuple[str, ...]] = ("timestamp_s", "offset_sectors", "size_sectors", "io_type", "volume_id")

    def record(self, f: list[str]) -> Parsed:
        op = _TENCENT_OPS.get(f[3])
        if op is None:
            raise BadLine(f"unknown io_type {f[3]!r} (expected 0 = read or 1 = write)")
        if not f[4]:
            raise BadLine("empty volume_id")
        return _sized(
            to_ns(f[0], 10**9, "timestamp"), op, to_int(f[1], "offset") * SECTOR, to_int(f[2], "size") * SECTOR, f[4]
        )


class MsrParser(_CsvParser):
    name: ClassVar[str] = "msr"
    columns: ClassVar[tuple[str, ...]] = (
        "timestamp_filetime",
        "hostname",
        "disk_number",
        "type",
        "offset",
        "size",
        "response_time",
    )

    def __init__(self) -> None:
        super().__init__()
        self._volumes: dict[str, dict[str, str]] = {}  # hostname -> disk number text -> volume

    def record(self, f: list[str]) -> Parsed:
        t, host, disk, off, size, resp = f[0], f[1], f[2], f[4], f[5], f[6]
        if (
            host
            and len(t) <= 40
            and len(disk) <= 40
            and len(off) <= 40
            and len(size) <= 40
            and len(resp) <= 40
            and t.isdecimal()
            and disk.isdecimal()
            and off.isdecimal()
            and size.isdecimal()
            and resp.isdecimal()
        ):
            # the usual line, at once: every number plain decimal digits (what to_int accepts
            # without a message, and parses the same), a known type
            op = _MSR_OPS_AS_IS.get(f[3]) or _MSR_OPS.get(f[3].lower())
            if op is not None:
                nbytes = int(size)
                if nbytes == 0:
                    return "zero length"
                disks = self._volumes.get(host)
                if disks is None:
                    disks = self._volumes[host] = {}
                volume = disks.get(disk)
                if volume is None:
                    volume = disks[disk] = f"{host}_{int(disk)}"
                return (int(t) * 100, op, int(off), nbytes, volume)
        return self.checked_record(f)

    def checked_record(self, f: list[str]) -> Parsed:
        """:meth:`record` field by field, each number through ``to_int`` (its messages)."""
        ticks = to_int(f[0], "timestamp")
        if not f[1]:
            raise BadLine("empty hostname")
        disk = to_int(f[2], "disk number")
        op = _MSR_OPS.get(f[3].lower())
        if op is None:
            raise BadLine(f"unknown type {f[3]!r} (expected Read or Write)")
        to_int(f[6], "response time")
        return _sized(ticks * 100, op, to_int(f[4], "offset"), to_int(f[5], "size"), f"{f[1]}_{disk}")


def _bare(host: str) -> bool:
    """A hostname without blanks (``str.isspace``: what the parser's ``strip`` would change)."""
    for c in host:
        if c.isspace():
            return False
    return True


MsrColumns = tuple[Any, Any, Any, Any, Any, list[tuple[str, int]]]
"""numpy arrays of one value per line: timestamp ticks, write (else read), offset, size, volume
(an index into the last item); then the (hostname, disk number) of each volume."""

_U64: Final = np.uint64
_ALL: Final = np.uint64(0xFFFF_FFFF_FFFF_FFFF)
_ZEROS: Final = np.uint64(0x3030_3030_3030_3030)  # eight ASCII "0"
_HIGH_NIBBLES: Final = np.uint64(0xF0F0_F0F0_F0F0_F0F0)
_SIXES: Final = np.uint64(0x0606_0606_0606_0606)
_READ_WORD: Final = np.uint64(int.from_bytes(b"Read", "little"))
_WRITE_WORD: Final = np.uint64(int.from_bytes(b"Write", "little"))
#: "0" characters before a chunk: the 24 bytes below any field's end lie in the buffer
_PAD: Final = 24
#: per line: six commas, then the newline
_LINE_SEPS: Final = np.array([44] * 6 + [10], dtype=np.uint8)
_NUMERIC: Final = (0, 2, 4, 5, 6)  # timestamp, disk number, offset, size, response time
_MAX_DIGITS: Final = 18  # within int64


def msr_columns(lines: list[str]) -> MsrColumns | None:
    """MSR ``lines`` (after the first non-blank one; as the text reader gives them, each ending at
    its first newline) parsed at once when every one is a usual line: ASCII, seven
    comma-separated fields, the numbers plain digits (1 to 18: within int64), a hostname without
    blanks, Read or Write, and a newline at the end. The columns hold what
    :meth:`MsrParser.record` takes from each line (:data:`MsrColumns`); None when any line is not
    usual, so that the parser reads them one by one, with its messages.

    numpy over the chunk's bytes, no Python step per line: the separators' positions give each
    field's span; a number of up to 18 digits is read eight bytes at a time (SWAR: one 64-bit
    word per eight digits, three multiply-and-mask steps; the bytes before the field count as
    "0"), which also checks that every byte is a digit. (~1/3 of what a regular expression over
    the chunk and numpy's text reader cost, ~1/8 of a Python parse per line.)"""
    n = len(lines)
    text = "".join(lines)
    if n == 0 or not text.isascii():
        return None
    buf: Any = np.frombuffer(("0" * _PAD + text).encode("ascii"), dtype=np.uint8)
    seps: Any = np.flatnonzero((buf == 44) | (buf == 10))
    if seps.size != 7 * n or not (buf[seps].reshape(n, 7) == _LINE_SEPS).all():
        return None  # (n newlines: every line ends with one; six commas before each)
    # field j of line i lies between bounds[i, j] and bounds[i, j + 1] (the separators around it)
    bounds: Any = np.empty((n, 8), dtype=np.int64)
    bounds[0, 0] = _PAD - 1
    bounds[1:, 0] = seps[6:-1:7]
    bounds[:, 1:] = seps.reshape(n, 7)
    starts, stops = bounds[:, :7] + 1, bounds[:, 1:]
    lengths = stops - starts
    # the eight bytes from each position, as a little-endian 64-bit word (a view, no copy)
    words: Any = np.ndarray((buf.size - 7,), dtype="<u8", buffer=buf, strides=(1,))
    values = []
    for j in _NUMERIC:
        v = _numbers(words, stops[:, j], lengths[:, j])
        if v is None:
            return None
        values.append(v)
    ticks, disks, offsets, sizes, _resp = values
    op, kind = lengths[:, 3], words[starts[:, 3]]
    writes = (op == 5) & ((kind & _U64(0xFF_FFFF_FFFF)) == _WRITE_WORD)
    if not (writes | ((op == 4) & ((kind & _U64(0xFFFF_FFFF)) == _READ_WORD))).all():
        return None
    found = _volumes(text, words, starts[:, 1], lengths[:, 1], disks)
    if found is None:
        return None
    return (ticks, writes, offsets, sizes, *found)


def _numbers(words: Any, stops: Any, lengths: Any) -> Any:
    """The decimal numbers of ``lengths`` digits ending before ``stops`` (int64), or None when one
    is empty, longer than 18 digits or holds a byte other than a digit."""
    top = int(lengths.max())
    if int(lengths.min()) < 1 or top > _MAX_DIGITS:
        return None
    total: Any = 0
    for k in range((top + 7) // 8):  # the eight bytes k words below the end
        w = words[stops - 8 * (k + 1)]
        keep = _ALL << ((8 - np.clip(lengths - 8 * k, 0, 8)) * 8).astype(_U64)  # (a shift by 64: 0)
        w = (w & keep) | (_ZEROS & ~keep)  # the bytes before the number: "0"
        if not (((w & _HIGH_NIBBLES) == _ZEROS) & (((w + _SIXES) & _HIGH_NIBBLES) == _ZEROS)).all():
            return None  # a byte outside 0x30-0x39
        v = w - _ZEROS  # each byte its digit, the first digit in the lowest byte
        v = (v * _U64(10) + (v >> _U64(8))) & _U64(0x00FF_00FF_00FF_00FF)  # pairs of digits
        v = (v * _U64(100) + (v >> _U64(16))) & _U64(0x0000_FFFF_0000_FFFF)  # fours
        v = (v * _U64(10000) + (v >> _U64(32))) & _U64(0x0000_0000_FFFF_FFFF)  # the eight
        total = total + v.astype(np.int64) * 10 ** (8 * k)
    return total


def _volumes(text: str, words: Any, starts: Any, lengths: Any, disks: Any) -> tuple[Any, list[tuple[str, int]]] | None:
    """Each line's volume (hostname at ``starts`` of ``lengths`` bytes, disk number ``disks``): an
    index per line and the (hostname, disk) of each index; None for an empty hostname or one with
    blanks. Lines with the same hostname and disk as the line before are one run: one Python step
    per run (bursts come from one volume)."""
    if int(lengths.min()) < 1:
        return None
    same = disks[1:] == disks[:-1]
    same &= lengths[1:] == lengths[:-1]
    last = words.size - 1
    for k in range((int(lengths.max()) + 7) // 8):  # the hostname's bytes, eight at a time (past its end: 0)
        w = words[np.minimum(starts + 8 * k, last)] & (_ALL >> ((8 - np.clip(lengths - 8 * k, 0, 8)) * 8).astype(_U64))
        same &= w[1:] == w[:-1]
    runs = np.flatnonzero(~same) + 1
    first = [0, *runs.tolist()]
    index: dict[tuple[str, int], int] = {}
    keys: list[tuple[str, int]] = []
    run_volume: list[int] = []
    for i in first:
        a = int(starts[i]) - _PAD
        key = (text[a : a + int(lengths[i])], int(disks[i]))
        idx = index.get(key)
        if idx is None:
            if not _bare(key[0]):
                return None
            idx = index[key] = len(keys)
            keys.append(key)
        run_volume.append(idx)
    return np.repeat(np.array(run_volume, dtype=np.int64), np.diff([*first, len(disks)])), keys
