"""The record a trace replay consumes: one IO of a block trace, whatever the source format (the
readers in :mod:`scenarios.traces` produce it)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TraceIO:
    """One IO of a block trace, in the same form whatever the source format."""

    t_ns: int
    """Issue time relative to the trace's first record, ns (negative only if the trace goes
    backwards past its first record; see :class:`~scenarios.traces.reader.TraceReader`)."""
    op: str
    """``"read"`` or ``"write"``."""
    offset: int
    """Byte offset on the volume (>= 0)."""
    nbytes: int
    """Transfer size, bytes (> 0)."""
    volume: str
    """Device/volume/disk identifier as in the trace (``"hm_0"``, ``"7"``, ``"8,32"``)."""
    line: int
    """1-based source line number."""
