"""fio's error handling options: ``continue_on_error`` and ``ignore_error`` (fio 3.41, td_error.c,
options.c ``str_ignore_error_cb``), parsed here; the rule they make (is an error of an IO fatal to
its job?) is the job threads': :mod:`models.ioengines.td_error` (re-exported here).

* An error has a class (td_error.c ``td_error_type``): EILSEQ is a verify error, a read's a read
  error, every other direction's (writes and trims) a write error.
* ``continue_on_error`` sets the classes fio goes on after: ``none`` / ``0``, ``read``, ``write``,
  ``io`` (read and write), ``verify``, ``all`` / ``1``.
* ``ignore_error=READ_LIST,WRITE_LIST,VERIFY_LIST``: each list ``:``-separated errno names (``E...``)
  or numbers; a non-empty list replaces its class's errors and adds the class to
  ``continue_on_error`` (``ignore_error_type``). A class without a list continues on fio's
  ``__NON_FATAL_ERR``: EIO and EILSEQ.
* An error is not fatal when its class is continued and its errno is in the class's list
  (``td_non_fatal_error``); otherwise the job ends with it.
"""

from __future__ import annotations

import errno

from models.ioengines.td_error import CLASSES, CONTINUE, DEFAULT_NON_FATAL, IgnoreLists, non_fatal
from simcore.errors import ConfigError

__all__ = [
    "CLASSES",
    "CONTINUE",
    "DEFAULT_NON_FATAL",
    "IgnoreLists",
    "non_fatal",
    "parse_continue_on_error",
    "parse_ignore_error",
]


def parse_continue_on_error(text: str | None) -> str:
    val = (text or "").strip().lower()
    if val not in CONTINUE:
        raise ConfigError(f"option 'continue_on_error': unknown value '{val}' (allowed: {', '.join(CONTINUE)})")
    return val


def parse_ignore_error(text: str | None) -> IgnoreLists:
    """``READ_LIST,WRITE_LIST,VERIFY_LIST`` -> each class's errnos (None: no list given)."""
    parts = (text or "").split(",")
    if len(parts) > len(CLASSES):
        raise ConfigError("option 'ignore_error': at most three lists (read, write, verify), comma-separated")
    out: list[tuple[int, ...] | None] = [None, None, None]
    for i, part in enumerate(parts):
        codes = []
        for name in part.strip().split(":"):
            name = name.strip()
            if not name:
                break  # (ignore_error_type stops at an empty name)
            codes.append(_errno(name))
        out[i] = tuple(codes) or None
    return out[0], out[1], out[2]


def _errno(name: str) -> int:
    if name.startswith("E"):
        code = getattr(errno, name, None)
        if not isinstance(code, int):
            raise ConfigError(f"option 'ignore_error': unknown error {name}, please use number value (fio's message)")
        return code
    try:
        code = abs(int(name, 16 if name.lower().startswith("0x") else 10))
    except ValueError:
        code = 0
    if not code:
        raise ConfigError(f"option 'ignore_error': unknown error {name}, please use number value (fio's message)")
    return code
