"""Inputs that can be read only once (standard input, a pipe, a process substitution) for readers
that read their file more than once (a trace: once to tell its format, then to replay it).

:func:`spooled` copies such a stream, once, into a temporary file (removed when the process exits)
and gives that file's path; a regular file is used as it is. The copy is bounded: it stops, with
a clear error and the partial copy removed, before the temporary file system's free space falls
below a reserve (:data:`RESERVE_BYTES`, or 5% of the file system if more), or at
``STACKSIM_SPOOL_MAX_BYTES`` bytes when that is set (``yes | stacksim replay -`` must not fill a disk).
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

__all__ = ["STDIN", "spooled", "RESERVE_BYTES"]

#: free space a spooled copy leaves on the temporary file system (or 5% of it, if more), bytes
RESERVE_BYTES = 1 << 30
_CHUNK = 1 << 20

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
    limit = _limit(spool)
    try:
        with open(target, "wb") as out:
            if source is None:
                with open(path, "rb") as src:
                    _copy(src, out, limit)
            else:
                _copy(source, out, limit)
    except _TooBig:
        target.unlink(missing_ok=True)
        where = "standard input" if path == STDIN else path
        raise ConfigError(
            f"{where}: the {what} stream is larger than the {limit / 2**30:.3g} GiB its temporary copy may take"
            f" in {spool.parent} (free space less a reserve, or STACKSIM_SPOOL_MAX_BYTES): write it to a file and"
            " give the file"
        ) from None
    except OSError as e:
        target.unlink(missing_ok=True)
        raise ConfigError(f"{path}: cannot read the {what} stream into a temporary file: {e.strerror or e}") from None
    print(f"stacksim: {what} read from {'standard input' if path == STDIN else path} into {target}", file=sys.stderr)
    return str(target)


class _TooBig(Exception):
    pass


def _limit(spool: Path) -> int:
    """Bytes a spooled copy may take: ``STACKSIM_SPOOL_MAX_BYTES`` if set, else the file system's
    free space less the reserve."""
    env = os.environ.get("STACKSIM_SPOOL_MAX_BYTES", "").strip()
    if env:
        try:
            v = int(env)
        except ValueError:
            raise ConfigError(f"STACKSIM_SPOOL_MAX_BYTES={env!r}: expected a number of bytes") from None
        if v < 0:
            raise ConfigError(f"STACKSIM_SPOOL_MAX_BYTES={env!r}: expected a number of bytes >= 0")
        return v
    du = shutil.disk_usage(spool)
    return max(0, du.free - max(RESERVE_BYTES, du.total // 20))


def _copy(src, out, limit: int) -> None:
    """Copy ``src`` to ``out`` in chunks; :class:`_TooBig` past ``limit`` bytes."""
    n = 0
    while True:
        buf = src.read(_CHUNK)
        if not buf:
            return
        n += len(buf)
        if n > limit:
            raise _TooBig
        out.write(buf)
