"""Helpers shared by the measurement readers."""

from __future__ import annotations

import math
import os

from simcore.config import read_text_file
from simcore.errors import ConfigError

__all__ = ["read_text", "to_float"]


def read_text(path: str | os.PathLike, what: str) -> str:
    """The whole file as text (measurement files are small: bounded as configuration files are,
    a byte-order mark dropped, not UTF-8 refused with the line); ConfigError naming ``what``."""
    return read_text_file(path, what=what)


def to_float(text: str, where: str, what: str, *, minimum: float | None = None) -> float:
    """Parse a finite float; errors read ``"{where}: {what} ..."`` (``where`` = ``path:line``)."""
    try:
        value = float(text)
    except (TypeError, ValueError):
        raise ConfigError(f"{where}: {what} {text!r} is not a number") from None
    if not math.isfinite(value):
        raise ConfigError(f"{where}: {what} {text!r} is not a finite number")
    if minimum is not None and value < minimum:
        raise ConfigError(f"{where}: {what} {value:g} is below {minimum:g}")
    return value
