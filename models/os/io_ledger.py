"""The host's ledger of completed IOs: their count, the run's statistics sink, the kept records.

Every IO engine hands each completed IO (its ``t_complete`` stamped) to :meth:`IoLedger.done`,
the host's ``io_done``; it is compiled with the hot path (simcore/compiled.py), so a completion
costs no Python-level call here.
"""

from __future__ import annotations

from typing import Any, Callable


class IoLedger:
    """IOs of one host: ``next_id`` (the id the next submitted IO gets), and of the completed
    ones ``count``, ``sink`` (called with each, e.g. ``scenarios.iostats.IoStats.add``; None:
    none) and ``records`` (every completed request, kept only when asked: None otherwise)."""

    __slots__ = ("next_id", "count", "sink", "records")

    def __init__(self) -> None:
        self.next_id = 0
        self.count = 0
        self.sink: Callable[[Any], None] | None = None
        self.records: list | None = None

    def new_id(self) -> int:
        """The id of an IO being submitted (0, 1, 2, ... in submission order)."""
        rid = self.next_id
        self.next_id = rid + 1
        return rid

    def done(self, req: Any) -> None:
        """An IO completed: counted, handed to the sink, kept when asked."""
        self.count += 1
        sink = self.sink
        if sink is not None:
            sink(req)
        records = self.records
        if records is not None:
            records.append(req)
