"""A cache keyed by small counts, for the hot path's built-once costs.

The IO engines build a :class:`~models.os.costs.bundle.Cost` once per distinct shape of a call (IOs in it,
pages, requests after the plug, completions reaped) and look it up per call. A dict keyed by a
tuple or a packed integer builds (and frees) a Python object per look-up; :class:`CountGrid` keeps
the values in lists nested by key, so a look-up reads three lists at machine-integer indices
(compiled). Each list grows to the largest key seen at its level (the last level's lists hold
pointers, the others lists): put the count that varies most last. Counts beyond :data:`GRID_SPAN`
go to a dict, so the lists stay small (a few shapes of large batches cost no memory).
"""

from __future__ import annotations

from typing import Any, Final

__all__ = ["CountGrid", "GRID_SPAN"]

#: the largest key (each of the three) kept in the lists; larger ones go to the dict
GRID_SPAN: Final = 256


class CountGrid:
    """Values keyed by three non-negative integers (``get`` / ``put``); None: not stored."""

    __slots__ = ("_rows", "_far")

    def __init__(self) -> None:
        self._rows: list[list[list[Any]]] = []
        self._far: dict[tuple[int, int, int], Any] = {}

    def get(self, i: int, j: int, k: int) -> Any:
        """The value stored at ``(i, j, k)``, or None."""
        if i > GRID_SPAN or j > GRID_SPAN or k > GRID_SPAN:
            return self._far.get((i, j, k))
        if i < 0 or j < 0 or k < 0:
            return None  # (never stored: no list read from the end)
        rows = self._rows
        if i < len(rows):
            row = rows[i]
            if j < len(row):
                cells = row[j]
                if k < len(cells):
                    return cells[k]
        return None

    def put(self, i: int, j: int, k: int, value: Any) -> None:
        """Store ``value`` at ``(i, j, k)``."""
        if i < 0 or j < 0 or k < 0:
            raise ValueError(f"CountGrid keys are counts (>= 0), got {(i, j, k)}")
        if i > GRID_SPAN or j > GRID_SPAN or k > GRID_SPAN:
            self._far[(i, j, k)] = value
            return
        rows = self._rows
        while len(rows) <= i:
            rows.append([])
        row = rows[i]
        while len(row) <= j:
            row.append([])
        cells = row[j]
        while len(cells) <= k:
            cells.append(None)
        cells[k] = value
