"""The common trace record (:class:`~models.ioengines.trace_io.TraceIO`, what the replay engine
consumes) and the small number parsers shared by the format readers."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Final

from models.ioengines.trace_io import TraceIO

__all__ = ["TraceIO", "BadLine", "to_int", "to_ns", "MAX_TRACE_NS"]

#: Latest record, from the first: 2**53 ns (~104 days), where the float ns clock stays exact.
MAX_TRACE_NS: Final = 2**53


class BadLine(Exception):
    """A malformed line. The reader adds file and line; ``fatal`` ones ignore skip_bad_lines;
    ``well_formed``: the line is of its format, what it says is impossible (a completion before its
    IO), so it still tells the format apart."""

    def __init__(self, msg: str, *, fatal: bool = False, well_formed: bool = False) -> None:
        super().__init__(msg)
        self.fatal = fatal
        self.well_formed = well_formed


def to_int(text: str, what: str, *, minimum: int | None = 0) -> int:
    """Parse a decimal integer field; ``what`` names it in the error."""
    if len(text) > 40:  # beyond 64 bits; int() refuses more than 4300 digits with its own message
        raise BadLine(f"{what} {text[:24]!r}... ({len(text)} characters) is out of range (beyond 64 bits)")
    try:
        value = int(text)
    except ValueError:
        raise BadLine(f"{what} {text!r} is not an integer") from None
    if minimum is not None and value < minimum:
        raise BadLine(f"{what} {value} is negative" if minimum == 0 else f"{what} {value} < {minimum}")
    return value


def to_ns(text: str, ns_per_unit: int, what: str) -> int:
    """Parse a non-negative decimal number of some unit (``"12"``, ``"1.5"``) exactly into ns."""
    if len(text) > 40:
        raise BadLine(f"{what} {text[:24]!r}... ({len(text)} characters) is out of range")
    if text.isdigit():  # fast path: the usual integer timestamps
        return int(text) * ns_per_unit
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise BadLine(f"{what} {text!r} is not a number") from None
    if not value.is_finite():
        raise BadLine(f"{what} {text!r} is not a finite number")
    if value < 0:
        raise BadLine(f"{what} {text} is negative")
    return int((value * ns_per_unit).to_integral_value())
