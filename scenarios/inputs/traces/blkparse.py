"""Line parser for blkparse's default text output.

An event line is ``%D %2c %8s %5T.%9t %5p %2a %3d`` then the action's fields, e.g.
``  8,32   7        1     0.000000000  2923  Q   R 272208 + 2 [fio]``: device (``maj,min``, the
record's volume), CPU, sequence, seconds.nanoseconds since the trace start, pid, action, RWBS,
``sector + sectors`` (512 B), process.

Only lines of the chosen action are records: ``Q`` (bio queued = issued by the submitter, the
default) or ``D`` (request dispatched to the driver, after merging and scheduling). Lines of
other actions are counted as skipped (``"action C"``, ...). Of the chosen action, RWBS with ``D``
(discard) is skipped as ``"discard"``, RWBS with neither R nor W (flush-only ``FN``, ``N``, ...)
as ``"no data (RWBS FN)"``, zero-sector IOs as ``"zero length"``. The summary blkparse prints at
the end (``CPU0 (8,32):``, ``Total (8,32):``, ``Throughput (R/W): ...``, ``Events (8,32): ...``)
and everything after its first line that is not an event line is ignored.
"""

from __future__ import annotations

import re
from typing import ClassVar

from .csvformats import SECTOR, LineParser, Parsed
from .record import BadLine, to_int

__all__ = ["BlkparseParser", "EVENT_RE", "ACTIONS"]

EVENT_RE = re.compile(
    r"\s*(?P<dev>\d+,\d+)\s+(?P<cpu>\d+)\s+(?P<seq>\d+)\s+(?P<sec>\d+)\.(?P<frac>\d{1,9})\s+"
    r"(?P<pid>\d+)\s+(?P<action>[A-Za-z]{1,2})\s+(?P<rwbs>\S+)(?P<rest>.*)"
)
_SECTORS_RE = re.compile(r"\s*(\d+)\s*\+\s*(\d+)")
_SUMMARY_RE = re.compile(r"(CPU\d+|Total|Throughput|Events) \(|Skips:")
ACTIONS = ("Q", "D")


class BlkparseLines:
    """What every blkparse reader does with a line: skip blank lines and blkparse's closing
    summary, refuse anything else that is not an event line, and read an event's data fields."""

    def __init__(self) -> None:
        self.in_summary = False

    def event(self, text: str):
        """The event line's match, or None for a blank or summary line (BadLine otherwise)."""
        if not text.strip():
            return None
        m = EVENT_RE.match(text)
        if m is None:
            if self.in_summary:
                return None
            if _SUMMARY_RE.match(text.lstrip()):
                self.in_summary = True
                return None
            raise BadLine("not a blkparse event line (device cpu seq sec.ns pid action rwbs ...)")
        return m

    @staticmethod
    def data(m) -> tuple[int, str, int, int] | str:
        """(time ns, op, sector, bytes) of a data event, or why it is skipped (a discard, no data,
        zero length)."""
        rwbs = m["rwbs"]
        if "D" in rwbs:
            return "discard"
        op = "write" if "W" in rwbs else "read" if "R" in rwbs else None
        if op is None:
            return f"no data (RWBS {rwbs})"
        s = _SECTORS_RE.match(m["rest"])
        if s is None:
            raise BadLine(f"expected 'sector + sectors' after RWBS {rwbs!r}")
        nbytes = to_int(s[2], "sectors") * SECTOR
        if nbytes == 0:
            return "zero length"
        t_ns = to_int(m["sec"], "timestamp seconds") * 10**9 + int(m["frac"].ljust(9, "0"))
        return t_ns, op, to_int(s[1], "sector"), nbytes


class BlkparseParser(BlkparseLines, LineParser):
    name: ClassVar[str] = "blkparse"

    def __init__(self, action: str = "Q") -> None:
        super().__init__()
        self.action = action

    def parse(self, text: str, lineno: int) -> Parsed:
        m = self.event(text)
        if m is None:
            return None
        action = m["action"]
        if action != self.action:
            return f"action {action}"
        d = self.data(m)
        if isinstance(d, str):
            return d
        t_ns, op, sector, nbytes = d
        return (t_ns, op, sector * SECTOR, nbytes, m["dev"])
