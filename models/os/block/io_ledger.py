"""The host's ledger of completed IOs: their count, the run's statistics sink, the kept records.

Every IO engine hands each completed IO (its ``t_complete`` stamped) to :meth:`IoLedger.done`,
the host's ``io_done``; it is compiled with the hot path (simcore/compiled.py), so a completion
costs no Python-level call here.
"""

from __future__ import annotations

from typing import Any, Callable


class IoLedger:
    """IOs of one host: ``next_id`` (the id the next submitted IO gets), and of the completed
    ones ``count``, ``sink`` (called with each; None: none), the blocks of a block sink (see
    :meth:`collect_blocks`: ``models.ioengines.iostats.IoStats`` folds its statistics per block) and
    ``records`` (every completed request, kept only when asked: None otherwise)."""

    __slots__ = ("next_id", "count", "sink", "records", "block", "block_size", "block_sink")

    def __init__(self) -> None:
        self.next_id = 0
        self.count = 0
        self.sink: Callable[[Any], None] | None = None
        self.records: list | None = None
        self.block: list | None = None  # completed IOs not handed to block_sink yet (None: no block sink)
        self.block_size = 0
        self.block_sink: Callable[[list], None] | None = None

    def collect_blocks(self, block_sink: Callable[[list], None], block_size: int) -> None:
        """Hand the completed IOs to ``block_sink`` in lists of ``block_size``, in completion order
        (:meth:`take_block` takes a partial one): one call per block, none per IO."""
        self.block_sink = block_sink
        self.block_size = block_size
        self.block = []

    def take_block(self) -> list:
        """The completed IOs not handed to the block sink yet (they will not be)."""
        out = self.block or []
        if self.block is not None:
            self.block = []
        return out

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
        block = self.block
        if block is not None:
            block.append(req)
            if len(block) >= self.block_size:
                self.block = []
                block_sink = self.block_sink
                assert block_sink is not None
                block_sink(block)
        records = self.records
        if records is not None:
            records.append(req)
