"""The limits that keep a hostile or broken input from exhausting memory or time, each one an
environment variable with a default (``STACKSIM_MAX_LINE_BYTES=4M stacksim replay ...`` raises one).

Every refusal names its limit and how to raise it (:meth:`Limit.hint`). The limits and what they bound:

- ``STACKSIM_MAX_LINE_BYTES`` (1 MiB): one line of a file read line by line (traces, sweep results
  take the text limit);
- ``STACKSIM_MAX_TEXT_BYTES`` (64 MiB): a file read whole (job files, YAML, JSON, measurements), one
  row of a sweep results file, a saved machine tree (``probe --root``);
- ``STACKSIM_MAX_INFLATED_BYTES`` (1 TiB): what a compressed input (gzip, bzip2, xz) inflates to;
- ``STACKSIM_MAX_INFLATE_RATIO`` (200): inflated / compressed bytes, once 16 MiB have come out;
- ``STACKSIM_MAX_YAML_NODES`` (200,000): the nodes of a YAML document with its aliases expanded;
- ``STACKSIM_MAX_MEMORY_BYTES`` (4 GiB): the memory a configuration's simulated state is estimated
  to take, before any of it is allocated (:mod:`simcore.memory`).

A value is a whole number, with an optional binary suffix for byte limits (``k``, ``M``, ``G``,
``T``: powers of 1024; ``4G``, ``512MiB``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass

from simcore.errors import ConfigError

__all__ = [
    "Limit",
    "LINE_BYTES",
    "TEXT_BYTES",
    "INFLATED_BYTES",
    "INFLATE_RATIO",
    "YAML_NODES",
    "MEMORY_BYTES",
    "format_bytes",
]

_SUFFIX = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_VALUE = re.compile(r"\s*(\d+)\s*([kmgt]?)(i?b)?\s*", re.IGNORECASE)


def format_bytes(n: float) -> str:
    """``n`` bytes for a message: ``512 bytes``, ``1.5 MiB``, ``4 GiB``."""
    for unit, size in (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{int(n)} bytes"


@dataclass(frozen=True)
class Limit:
    """One limit: its environment variable, its default and what it counts (for messages)."""

    env: str
    default: int
    unit: str
    """``bytes`` (shown as KiB/MiB/GiB, suffixes accepted) or the name of what is counted"""

    def value(self) -> int:
        """The limit in force: the environment variable's value, else the default (ConfigError
        naming the variable for a value that is not a whole number >= 1)."""
        text = os.environ.get(self.env, "").strip()
        if not text:
            return self.default
        m = _VALUE.fullmatch(text)
        if m is None or (m.group(2) or m.group(3)) and self.unit != "bytes":
            raise ConfigError(f"{self.env}={text!r}: expected a whole number{' of bytes' * (self.unit == 'bytes')}")
        v = int(m.group(1)) * _SUFFIX[m.group(2).lower()]
        if v < 1:
            raise ConfigError(f"{self.env}={text!r}: expected a number >= 1")
        return v

    def shown(self, value: int | None = None) -> str:
        """``value`` (default: the limit in force) in the limit's unit."""
        v = self.value() if value is None else value
        return format_bytes(v) if self.unit == "bytes" else f"{v:,} {self.unit}"

    def hint(self) -> str:
        """``(the limit: 1 MiB, STACKSIM_MAX_LINE_BYTES; set it higher to allow more)``."""
        return f"(the limit: {self.shown()}, {self.env}; set it higher to allow more)"


LINE_BYTES = Limit("STACKSIM_MAX_LINE_BYTES", 1 << 20, "bytes")
TEXT_BYTES = Limit("STACKSIM_MAX_TEXT_BYTES", 64 << 20, "bytes")
INFLATED_BYTES = Limit("STACKSIM_MAX_INFLATED_BYTES", 1 << 40, "bytes")
INFLATE_RATIO = Limit("STACKSIM_MAX_INFLATE_RATIO", 200, "times")
YAML_NODES = Limit("STACKSIM_MAX_YAML_NODES", 200_000, "nodes")
MEMORY_BYTES = Limit("STACKSIM_MAX_MEMORY_BYTES", 4 << 30, "bytes")
