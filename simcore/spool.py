"""Inputs that can be read only once (standard input, a pipe, a process substitution) for readers
that read their file more than once (a trace: once to tell its format, then to replay it).

:func:`spooled` copies such a stream, once, into a temporary file (removed when the process exits)
and gives that file's path; a regular file is used as it is.
"""

from __future__ import annotations

import atexit
import os
import shutil
import stat
import sys
import tempfile
from pathlib import Path

from simcore.errors import ConfigError

__all__ = ["STDIN", "spooled"]

#: the name that means standard input
STDIN = "-"
_DIRS: list[tempfile.TemporaryDirectory] = []


def _spool_dir() -> Path:
    if not _DIRS:
        d = tempfile.TemporaryDirectory(prefix="stacksim-stream-")
        _DIRS.append(d)
        atexit.register(d.cleanup)
    return Path(_DIRS[0].name)


def spooled(path: str, what: str = "trace") -> str:
    """``path`` itself for a regular file (or a name that does not exist: the reader says so); for
    ``-`` (standard input) or a FIFO, the path of a temporary copy of everything it gives; a
    directory or a device is refused (ConfigError saying what it is)."""
    if path == STDIN:
        source, name = sys.stdin.buffer, "stdin"
    else:
        try:
            mode = os.stat(path).st_mode
        except OSError:
            return path
        if stat.S_ISREG(mode):
            return path
        if stat.S_ISDIR(mode):
            raise ConfigError(f"{path}: is a directory, not a {what} file")
        if not stat.S_ISFIFO(mode):
            kind = (
                "block device" if stat.S_ISBLK(mode) else "character device" if stat.S_ISCHR(mode) else "special file"
            )
            raise ConfigError(f"{path}: is a {kind}, not a {what} file (give a file, a pipe or '-' for standard input)")
        source, name = None, Path(path).name or "fifo"
    spool = _spool_dir()
    target = spool / f"{len(list(spool.iterdir()))}-{name}"
    try:
        with open(target, "wb") as out:
            if source is None:
                with open(path, "rb") as src:
                    shutil.copyfileobj(src, out, 1 << 20)
            else:
                shutil.copyfileobj(source, out, 1 << 20)
    except OSError as e:
        raise ConfigError(f"{path}: cannot read the {what} stream into a temporary file: {e.strerror or e}") from None
    print(f"stacksim: {what} read from {'standard input' if path == STDIN else path} into {target}", file=sys.stderr)
    return str(target)
