"""The registry of blk-mq IO schedulers, and a helper queue for them. The interface
(:class:`IoScheduler`, :class:`Tunable`, the request flags) lives next to blk-mq in
:mod:`models.os.block.elevator` and is re-exported here for plug-ins."""

from __future__ import annotations

from bisect import bisect_left, bisect_right

from models.os.block.elevator import (
    CTX,
    DEVICE,
    HCTX,
    LAST_MERGE,
    MERGE_HASH,
    REQ_ASYNC,
    SECTOR,
    IoScheduler,
    LockUse,
    Tunable,
    is_sync,
)
from simcore.plugins import Registry

IO_SCHEDULERS = Registry("IO scheduler")

__all__ = [
    "CTX",
    "DEVICE",
    "HCTX",
    "IO_SCHEDULERS",
    "LAST_MERGE",
    "MERGE_HASH",
    "REQ_ASYNC",
    "SECTOR",
    "IoScheduler",
    "LockUse",
    "SortedQueue",
    "Tunable",
    "is_sync",
]


class SortedQueue:
    """Requests sorted by start position (the kernel's per-queue rb-tree ``sort_list``).

    Equal positions keep insertion order. ``add``/``remove`` are O(n) list moves with O(log n)
    search, fast for the queue lengths that matter here; plug-in schedulers may reuse it.
    """

    __slots__ = ("_keys", "_reqs", "_key_of", "_seq")

    def __init__(self):
        self._keys: list[tuple[int, int]] = []
        self._reqs: list = []
        self._key_of: dict = {}
        self._seq = 0

    def __len__(self) -> int:
        return len(self._reqs)

    def __bool__(self) -> bool:
        return bool(self._reqs)

    def __iter__(self):
        return iter(list(self._reqs))

    def __contains__(self, req) -> bool:
        return req in self._key_of

    def add(self, req) -> None:
        key = (req.offset, self._seq)
        self._seq += 1
        i = bisect_right(self._keys, key)
        self._keys.insert(i, key)
        self._reqs.insert(i, req)
        self._key_of[req] = key

    def remove(self, req) -> None:
        i = bisect_left(self._keys, self._key_of.pop(req))
        del self._keys[i]
        del self._reqs[i]

    def from_pos(self, pos: int):
        """The requests starting at or after byte ``pos``, in order (a copy: safe to change the queue)."""
        i = bisect_left(self._keys, (pos, -1))
        return self._reqs[i:]

    def first(self):
        """The lowest-positioned request, or None."""
        return self._reqs[0] if self._reqs else None

    def ceiling(self, pos: int):
        """The first request starting at or after byte ``pos``, or None."""
        i = bisect_left(self._keys, (pos, -1))
        return self._reqs[i] if i < len(self._reqs) else None

    def lower(self, pos: int):
        """The last request starting before byte ``pos``, or None."""
        i = bisect_left(self._keys, (pos, -1))
        return self._reqs[i - 1] if i > 0 else None
