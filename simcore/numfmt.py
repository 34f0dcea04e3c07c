"""Numbers printed for people: the same text on every machine.

A value that rounds to zero at the printed precision is printed as zero with a plus sign: the sign
of a zero (``-0.0004`` rounds to ``-0.00``) depends on the last bits of a float, which change with
library versions and summation order; quoted outputs (docs, tests) must not.
"""

from __future__ import annotations


def signed(x: float, places: int = 2, width: int = 0) -> str:
    """``x`` with an explicit sign and ``places`` decimals, right-aligned in ``width`` characters;
    a value that rounds to zero is ``+0.00`` (never ``-0.00``)."""
    r = round(x, places) + 0.0  # -0.0 + 0.0 is +0.0
    return f"{r:+{width}.{places}f}"
