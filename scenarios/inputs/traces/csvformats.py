"""Line parsers for the CSV block-trace formats: Alibaba, Tencent and MSR Cambridge.

Every parser turns one text line into ``None`` (blank or header line, not a record), a skip
reason (a string, counted by the reader) or a raw record ``(t_abs_ns, op, offset_bytes,
nbytes, volume)``; a malformed line raises :class:`~scenarios.inputs.traces.record.BadLine`.
A header line is accepted only as the first non-blank line, with the right number of columns,
all of them non-numeric. Zero-length IOs are skipped (reason ``"zero length"``).

Column units (mechanisms.md, Appendix B):

* ``alibaba``: device_id, opcode (R/W), offset (bytes), length (bytes), timestamp (us).
* ``tencent``: timestamp (s), offset (512 B sectors), size (sectors), io_type (0 read,
  1 write), volume_id.
* ``msr``: timestamp (Windows FILETIME, 100 ns ticks), hostname, disk number, type
  (Read/Write), offset (bytes), size (bytes), response time (100 ns ticks; checked here, the
  latency that ``stacksim validate --trace`` compares, read by :mod:`.timed`);
  volume = ``f"{hostname}_{disk}"``.
"""

from __future__ import annotations

import re
from typing import Any, ClassVar, Final

import numpy as np
from mypy_extensions import mypyc_attr

from .record import BadLine, to_int, to_ns

__all__ = ["Raw", "Parsed", "LineParser", "AlibabaParser", "TencentParser", "MsrParser", "msr_columns"]

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


#: MSR lines the usual way, one after the other (what :meth:`MsrParser.record` takes at once): plain
#: ASCII digits of at most 18 (within int64), a hostname without commas or blanks, Read or Write,
#: each line ending in a newline
_MSR_USUAL: Final = re.compile(
    r"(?:[0-9]{1,18},[^,\s]+,[0-9]{1,18},(?:Read|Write),[0-9]{1,18},[0-9]{1,18},[0-9]{1,18}\n)+"
)


def msr_columns(lines: list[str]) -> tuple[list[int], list[str], list[int], list[str], list[int], list[int]] | None:
    """MSR ``lines`` (after the first non-blank one) parsed at once when every one is a usual
    line (one regular-expression match over them all, then numpy's C reader): the columns
    (timestamp ticks, hostname, disk number, type as written, offset, size), each value what
    :meth:`MsrParser.record` takes from it; None when any line is not, so that the parser reads
    them one by one, with its messages. (A trace is read in chunks of lines: ~0.3 us a line
    instead of ~3 us.)"""
    if _MSR_USUAL.fullmatch("".join(lines)) is None:
        return None
    width = max(len(line) for line in lines)
    dtype = np.dtype(
        [("t", "i8"), ("host", f"U{width}"), ("disk", "i8"), ("op", "U5"), ("off", "i8"), ("size", "i8"), ("r", "i8")]
    )
    a: Any = np.loadtxt(lines, delimiter=",", dtype=dtype, comments=None, ndmin=1)
    return (
        a["t"].tolist(),
        a["host"].tolist(),
        a["disk"].tolist(),
        a["op"].tolist(),
        a["off"].tolist(),
        a["size"].tolist(),
    )
