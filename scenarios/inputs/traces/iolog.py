"""Line parser for fio iologs, versions 2 and 3 (``read_iolog=``/``write_iolog=`` files).

* v2: header ``fio version 2 iolog``, then ``filename action [offset length]``. There are no
  timestamps: the trace clock starts at 0 and each ``filename wait usec [length]`` line advances
  it by ``usec`` microseconds (fio waits that long relative to the previous wait/issue; fio's
  run-time catch-up for time already spent is not modelled).
* v3: header ``fio version 3 iolog``, then ``timestamp_ms filename action [offset length]``;
  the timestamp (ms, decimals allowed) is the issue time, and ``wait`` is not allowed.

Actions ``read``/``write`` are records (offset and length in bytes, volume = filename);
``add``/``open``/``close`` are counted as skipped ``"file add/open/close"``, ``sync``/``datasync``
as ``"sync"`` and ``trim`` as ``"trim"``. iolog v1 (no header) is not supported: a missing
header is an error even with skip_bad_lines.
"""

from __future__ import annotations

from typing import ClassVar

from .csvformats import LineParser, Parsed
from .record import BadLine, to_int, to_ns

__all__ = ["IologParser", "HEADERS"]

HEADERS = {"fio version 2 iolog": 2, "fio version 3 iolog": 3}
_FILE_ACTIONS = ("add", "open", "close")
_SKIP = {"sync": "sync", "datasync": "sync", "trim": "trim"}


class IologParser(LineParser):
    name: ClassVar[str] = "iolog"

    def __init__(self) -> None:
        self.version: int | None = None
        self.clock_ns = 0  # v2: sum of the waits so far

    def parse(self, text: str, lineno: int) -> Parsed:
        line = text.strip()
        if not line:
            return None
        if self.version is None:
            self.version = HEADERS.get(" ".join(line.split()))
            if self.version is None:
                raise BadLine(
                    "not a fio iolog: the first line must be 'fio version 2 iolog' or "
                    "'fio version 3 iolog' (iolog v1 is not supported)",
                    fatal=True,
                )
            return None
        fields = line.split()
        if self.version == 3:
            if len(fields) < 3:
                raise BadLine(f"expected 'timestamp_ms filename action [offset length]', got {len(fields)} fields")
            t_ns = to_ns(fields[0], 1_000_000, "timestamp (ms)")
            fields = fields[1:]
        else:
            t_ns = self.clock_ns
        if len(fields) < 2:
            raise BadLine("expected 'filename action [offset length]'")
        filename, action, args = fields[0], fields[1], fields[2:]
        if action in _FILE_ACTIONS:
            if args:
                raise BadLine(f"'{action}' takes no offset/length, got {len(args)} extra fields")
            return "file add/open/close"
        if action == "wait":
            if self.version == 3:
                raise BadLine("'wait' is not allowed in iolog v3 (timestamps give the time)")
            if len(args) not in (1, 2):
                raise BadLine("expected 'filename wait usec [length]'")
            self.clock_ns += to_int(args[0], "wait (us)") * 1_000
            return None
        if action in _SKIP:
            if len(args) not in (0, 2):
                raise BadLine(f"expected 'filename {action} [offset length]'")
            return _SKIP[action]
        if action not in ("read", "write"):
            raise BadLine(
                f"unknown action {action!r} (expected read, write, wait, sync, datasync, trim, add, open or close)"
            )
        if len(args) != 2:
            raise BadLine(f"expected 'filename {action} offset length', got {len(args)} of offset/length")
        offset, nbytes = to_int(args[0], "offset"), to_int(args[1], "length")
        if nbytes == 0:
            return "zero length"
        return (t_ns, action, offset, nbytes, filename)
