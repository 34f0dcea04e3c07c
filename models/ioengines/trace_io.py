"""The record a trace replay consumes: one IO of a block trace, whatever the source format (the
readers in :mod:`scenarios.inputs.traces` produce it)."""

from __future__ import annotations

from typing import Final


class TraceIO:
    """One IO of a block trace, in the same form whatever the source format. Immutable (compiled,
    assigning a field raises AttributeError); equal when every field is equal.

    A plain class rather than a frozen dataclass: a replay makes one per trace line, and a frozen
    dataclass's ``__init__`` (``object.__setattr__`` per field) cost ~1 us of the ~3 us a line took
    to read; compiled (:mod:`simcore.compiled`) this one costs ~0.1 us.
    """

    __slots__ = ("t_ns", "op", "offset", "nbytes", "volume", "line")

    def __init__(self, t_ns: int, op: str, offset: int, nbytes: int, volume: str, line: int) -> None:
        #: Issue time relative to the trace's first record, ns (negative only if the trace goes
        #: backwards past its first record; see :class:`~scenarios.inputs.traces.reader.TraceReader`).
        self.t_ns: Final = t_ns
        #: ``"read"`` or ``"write"``.
        self.op: Final = op
        #: Byte offset on the volume (>= 0).
        self.offset: Final = offset
        #: Transfer size, bytes (> 0).
        self.nbytes: Final = nbytes
        #: Device/volume/disk identifier as in the trace (``"hm_0"``, ``"7"``, ``"8,32"``).
        self.volume: Final = volume
        #: 1-based source line number.
        self.line: Final = line

    def at(self, t_ns: int) -> TraceIO:
        """The same IO issued at ``t_ns`` instead."""
        return TraceIO(t_ns, self.op, self.offset, self.nbytes, self.volume, self.line)

    def _key(self) -> tuple[int, str, int, int, str, int]:
        return (self.t_ns, self.op, self.offset, self.nbytes, self.volume, self.line)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TraceIO):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return (
            f"TraceIO(t_ns={self.t_ns!r}, op={self.op!r}, offset={self.offset!r}, nbytes={self.nbytes!r}, "
            f"volume={self.volume!r}, line={self.line!r})"
        )
