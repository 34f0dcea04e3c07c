"""The memory a configuration's simulated state will take, estimated before any of it is built: a
run whose estimate is over ``STACKSIM_MAX_MEMORY_BYTES`` (:mod:`simcore.limits`, 4 GiB by
default) is refused with the estimate, the largest part of it and the field that sizes that part,
instead of ending in a ``MemoryError`` after minutes.

Each part (:class:`Need`) is computed by the model that owns the state (a device's zones, its FTL's
map; a job thread's files); :func:`check_memory` adds them up.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from simcore.errors import ConfigError
from simcore.limits import MEMORY_BYTES, format_bytes

__all__ = ["Need", "check_memory"]


@dataclass(frozen=True)
class Need:
    """A part of a run's memory: its size (bytes), what it is, and the field that sizes it."""

    nbytes: int
    what: str
    field: str


def check_memory(needs: Iterable[Need], where: str = "this run") -> int:
    """The estimated total (bytes) of ``needs``; ConfigError when it is over the limit, naming the
    estimate, the largest part, its field and the limit's variable."""
    parts = [n for n in needs if n.nbytes > 0]
    total = sum(n.nbytes for n in parts)
    limit = MEMORY_BYTES.value()
    if total > limit:
        big = max(parts, key=lambda n: n.nbytes)
        raise ConfigError(
            f"{where}: its simulated state would take about {format_bytes(total)} of memory, more than"
            f" {MEMORY_BYTES.shown()}: {big.what} take about {format_bytes(big.nbytes)}; change {big.field}"
            f" {MEMORY_BYTES.hint()}"
        )
    return total
