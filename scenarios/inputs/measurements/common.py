"""Helpers shared by the measurement readers."""

from __future__ import annotations

import math
import os

from simcore.errors import ConfigError

__all__ = ["read_text", "to_float"]


def read_text(path: str | os.PathLike, what: str) -> str:
    """The whole file as text (measurement files are small); ConfigError naming ``what``."""
    try:
        with open(path, encoding="utf-8", errors="replace", newline="") as f:
            text = f.read()
    except OSError as e:
        raise ConfigError(f"{path}: cannot read {what}: {e.strerror or e}") from None
    if "\0" in text:
        raise ConfigError(f"{path}: not a {what} (it contains NUL bytes: a binary file?)")
    return text


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
