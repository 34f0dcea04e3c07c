"""Output files written all-or-nothing: checked before a run, staged, then renamed into place.

Every file the simulator writes (``--json``, ``--records``, ``--trace``, reports, platforms,
sweep results) goes through this module:

- :func:`check_output` tells, before a possibly long simulation, whether a path can be written
  (its directory exists, it is not a directory, it is not on a kernel or read-only file system,
  a file can be created next to it) and raises :class:`OutputError` naming the path and the reason.
- :class:`Outputs` writes several files as one transaction: each regular file is written to a
  temporary file in its own directory (``.NAME.tmp-XXXXXXXX``), flushed to disk, and only when
  every output has been written are they renamed over their targets (``os.replace``, atomic).
  On any error or Ctrl-C every temporary file is removed and no target is touched. A staged file
  is locked (``flock``) while its writer lives; one that a killed writer left (unlocked, older than
  :data:`STALE_AFTER_S`) is removed by the next write of the same output.
- New files get the usual Unix mode, ``0666`` less the umask (``0644`` under umask 022, as fio
  and every Unix tool); a replaced file keeps its mode (and its owner where the user may keep it).
- ``-`` is standard output; an existing character device or FIFO (``/dev/stdout``, a terminal,
  ``/dev/null``, a named pipe) is written in place, as a stream. Write errors there (``/dev/full``:
  no space left on device) are reported like the others.

OS errors become :class:`OutputError`, a :class:`~simcore.errors.ConfigError`: the CLI prints one
line and exits with status 2.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import glob
import os
import secrets
import stat
import sys
import time
from pathlib import Path
from typing import IO, Callable, Iterator

from simcore.errors import ConfigError

STDOUT = "-"
#: kernel file systems that hold no user files (Linux ``/proc/self/mounts`` type names)
KERNEL_FS = frozenset(
    {
        "proc",
        "sysfs",
        "cgroup",
        "cgroup2",
        "debugfs",
        "tracefs",
        "securityfs",
        "configfs",
        "devpts",
        "bpf",
        "pstore",
        "efivarfs",
        "fusectl",
        "mqueue",
        "binfmt_misc",
        "autofs",
        "hugetlbfs",
        "rpc_pipefs",
        "nsfs",
    }
)
#: names of staged files start with ``.NAME`` + this (and 8 random hex digits)
TMP_TAG = ".tmp-"
#: a staged file not changed for this long and locked by no writer is a killed writer's leftover, s
STALE_AFTER_S = 10.0

_data_stream: list[IO] = []  # the stream '-' writes to, while the CLI sends its own text to stderr


class OutputError(ConfigError):
    """An output file cannot be written (the message names the path and the reason)."""


def _label(path, what: str | None) -> str:
    return f"{what} {path}" if what else str(path)


def _fail(path, what: str | None, reason: str) -> OutputError:
    return OutputError(f"cannot write {_label(path, what)}: {reason}")


def _reason(err: OSError) -> str:
    return err.strerror or str(err)


def _is_stream(path: Path) -> bool:
    """``/dev/stdout`` and the like, or an existing file that is neither regular nor a directory:
    a terminal, a device, a FIFO."""
    if str(path) in ("/dev/stdout", "/dev/stderr") or str(path).startswith(("/dev/fd/", "/proc/self/fd/")):
        return True
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)


def _is_dir(path: Path, what: str | None) -> bool:
    """``path`` is a directory; an OS error looking it up (a name too long, a loop of links, no
    permission) is the output's error."""
    try:
        return stat.S_ISDIR(os.stat(path).st_mode)
    except (FileNotFoundError, NotADirectoryError):
        return False
    except OSError as err:
        raise _fail(path, what, _reason(err)) from None


def _mount_of(path: Path) -> tuple[str, str, set[str]] | None:
    """(mount point, file system type, options) of the mount holding ``path`` (Linux), else None."""
    try:
        lines = Path("/proc/self/mounts").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    best = None
    target = str(path)
    for line in lines:
        parts = line.split()
        if len(parts) < 4:
            continue
        mnt = parts[1].replace("\\040", " ")
        inside = target == mnt or target.startswith(mnt.rstrip("/") + "/")
        if inside and (best is None or len(mnt) >= len(best[0])):
            best = (mnt, parts[2], set(parts[3].split(",")))
    return best


def check_output(path: str | os.PathLike, what: str | None = None, *, stream_ok: bool = True) -> None:
    """Raise :class:`OutputError` unless ``path`` can be written now.

    ``what`` names the option in messages (``--json``). ``stream_ok`` False refuses ``-`` and
    devices/FIFOs (for files that are read back, such as sweep results). Creates and removes one
    empty temporary file next to the target to prove the directory is writable.
    """
    if str(path) == STDOUT:
        if not stream_ok:
            raise _fail(path, what, "standard output is not possible here, give a file name")
        return
    p = Path(path)
    if _is_dir(p, what):
        raise _fail(path, what, "it is a directory")
    if _is_stream(p):
        if not stream_ok:
            raise _fail(path, what, "not a regular file")
        try:
            mode = p.stat().st_mode
            if stat.S_ISFIFO(mode):
                return  # opening a FIFO blocks until there is a reader: nothing to check
            if stat.S_ISSOCK(mode):
                raise _fail(path, what, "it is a socket")
            os.close(os.open(p, os.O_WRONLY | os.O_NOCTTY | os.O_NONBLOCK))
        except OSError as err:
            raise _fail(path, what, _reason(err)) from None
        return
    real = Path(os.path.realpath(p))
    parent = real.parent
    if not parent.exists():
        raise _fail(path, what, f"directory {p.parent} does not exist")
    if not parent.is_dir():
        raise _fail(path, what, f"{p.parent} is not a directory")
    mount = _mount_of(parent)
    if mount is not None and mount[1] in KERNEL_FS:
        raise _fail(path, what, f"{mount[0]} is a kernel file system ({mount[1]}), not a place for files")
    if (mount is not None and "ro" in mount[2]) or _read_only(parent):
        raise _fail(path, what, "read-only file system")
    if real.exists() and not os.access(real, os.W_OK):
        raise _fail(path, what, "permission denied")
    try:
        fd, tmp = _create_tmp(real)
    except OSError as err:
        raise _fail(path, what, _create_reason(err, parent)) from None
    os.close(fd)
    os.unlink(tmp)


def _identity(path: str) -> tuple | None:
    """What makes two names one file: (device, inode) of an existing regular file, through
    symbolic links and across hard links; the resolved path of a file not there yet; None for
    what is no file of its own (standard output, a device, a FIFO, a directory: checked elsewhere)."""
    if path == STDOUT:
        return None
    try:
        st = os.stat(path)
    except OSError:  # not there yet (or unreachable): its resolved name
        try:
            return ("path", os.path.realpath(path))
        except (OSError, ValueError):
            return None
    return ("inode", st.st_dev, st.st_ino) if stat.S_ISREG(st.st_mode) else None


def check_distinct(inputs: list[tuple[str, str | None]], outputs: list[tuple[str, str | None]]) -> None:
    """Raise :class:`OutputError` when an output ``(path, what)`` is the same file as one of the
    ``inputs`` (writing it would destroy what the command reads) or as an earlier output (one
    would silently replace the other). Inputs that are not existing regular files (a built-in
    name, standard input) are not files to protect."""
    seen: dict[tuple, tuple[str, str, str | None]] = {}
    for path, what in inputs:
        ident = _identity(path)
        if ident is not None and ident[0] == "inode":
            seen.setdefault(ident, ("input", path, what))
    for path, what in outputs:
        ident = _identity(path)
        if ident is None:
            continue
        other = seen.get(ident)
        if other is not None:
            role, other_path, other_what = other
            named = f"{other_path} ({other_what})" if other_what else other_path
            if role == "input":
                raise _fail(
                    path,
                    what,
                    f"it is the same file as the input {named}: writing it would destroy what the command reads",
                )
            raise _fail(path, what, f"it is the same file as the output {named}: one would replace the other")
        seen[ident] = ("output", path, what)


def _read_only(directory: Path) -> bool:
    try:
        return bool(os.statvfs(directory).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):
        return False


def _create_reason(err: OSError, parent: Path) -> str:
    if err.errno in (errno.ENOENT, errno.ENOTDIR):
        if not parent.exists():
            return f"directory {parent} does not exist"
        if not parent.is_dir():
            return f"{parent} is not a directory"
        return f"files cannot be created in {parent}"
    return _reason(err)


def _create_tmp(real: Path) -> tuple[int, str]:
    """A new file ``.NAME.tmp-XXXXXXXX`` next to ``real``, mode 0666 less the umask (the kernel
    applies the umask on creation, unlike :func:`tempfile.mkstemp`'s 0600)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        tmp = str(real.with_name(f".{real.name}{TMP_TAG}{secrets.token_hex(4)}"))
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no free temporary file name", str(real.parent))


Writer = Callable[[IO], None]


class Outputs:
    """Write several outputs all-or-nothing (use as a context manager)::

        with Outputs() as out:
            out.text(args.json_out, json_text, what="--json")
            out.write(args.records, write_parquet, binary=True, what="--records")
        # every file is in place here; after an error none was touched

    Regular files are staged as temporary files next to their targets and renamed at the end;
    streams (``-``, devices, FIFOs) are written after all files were staged, so that a failing
    stream leaves no file behind.
    """

    def __init__(self):
        self._staged: list[tuple[str, str, str | None]] = []  # (tmp, target, what)
        self._streams: list[tuple[str, Writer, bool, str | None]] = []
        self._locks: list[int] = []  # a descriptor of each staged file, holding its flock

    def __enter__(self) -> "Outputs":
        return self

    def __exit__(self, kind, value, tb) -> None:
        if kind is None:
            self.commit()
        else:
            self.discard()

    def text(self, path: str | os.PathLike, text: str, *, what: str | None = None) -> None:
        """Write ``text`` (UTF-8) to ``path``."""
        self.write(path, lambda fh: fh.write(text), what=what)

    def write(
        self,
        path: str | os.PathLike,
        writer: Writer,
        *,
        binary: bool = False,
        newline: str | None = None,
        what: str | None = None,
    ) -> None:
        """Write ``path`` with ``writer(file)`` (a text file in UTF-8 unless ``binary``)."""
        p = Path(path)
        if str(path) == STDOUT or _is_stream(p):
            self._streams.append((str(path), writer, binary, what))
            return
        if _is_dir(p, what):
            raise _fail(path, what, "it is a directory")
        real = Path(os.path.realpath(p))  # through symbolic links: the link stays, its target is replaced
        remove_stale_temporaries(real)
        try:
            fd, tmp = _create_tmp(real)
        except OSError as err:
            raise _fail(path, what, _create_reason(err, real.parent)) from None
        self._staged.append((tmp, str(real), what))
        self._locks.append(_locked(fd))
        try:
            if real.exists():  # a replaced file keeps its mode (and, where allowed, its owner)
                st = real.stat()
                os.chmod(tmp, stat.S_IMODE(st.st_mode))
                if (st.st_uid, st.st_gid) != (os.geteuid(), os.getegid()):
                    with contextlib.suppress(OSError):
                        os.chown(tmp, st.st_uid, st.st_gid)
            with os.fdopen(
                fd, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8", "newline": newline})
            ) as fh:
                writer(fh)
                fh.flush()
                os.fsync(fh.fileno())
        except OSError as err:
            self.discard()
            raise _fail(path, what, _reason(err)) from None
        except BaseException:
            self.discard()
            raise

    def commit(self) -> None:
        """Write the streams, then rename every staged file over its target."""
        try:
            for path, writer, binary, what in self._streams:
                _write_stream(path, writer, binary, what)
            for tmp, target, what in self._staged:
                try:
                    os.replace(tmp, target)
                except OSError as err:
                    raise _fail(target, what, _reason(err)) from None
        finally:
            self.discard()

    def discard(self) -> None:
        """Remove the temporary files not renamed yet."""
        for tmp, _target, _what in self._staged:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        for fd in self._locks:
            with contextlib.suppress(OSError):
                os.close(fd)
        self._staged.clear()
        self._streams.clear()
        self._locks.clear()


def _write_stream(path: str, writer: Writer, binary: bool, what: str | None) -> None:
    try:
        if path == STDOUT:
            out = _data_stream[-1] if _data_stream else sys.stdout
            if binary:
                out.flush()
                writer(out.buffer)
                out.buffer.flush()
            else:
                writer(out)
                out.flush()
            return
        with open(path, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8"})) as fh:
            writer(fh)
    except BrokenPipeError:
        raise  # the reader went away (`| head`): the CLI exits quietly
    except OSError as err:
        raise _fail(path, what, _reason(err)) from None


def write_text(path: str | os.PathLike, text: str, *, what: str | None = None) -> None:
    """Write one text file all-or-nothing (see :class:`Outputs`)."""
    with Outputs() as out:
        out.text(path, text, what=what)


def write_file(
    path: str | os.PathLike,
    writer: Writer,
    *,
    binary: bool = False,
    newline: str | None = None,
    what: str | None = None,
) -> None:
    """Write one file with ``writer(file)`` all-or-nothing (see :class:`Outputs`)."""
    with Outputs() as out:
        out.write(path, writer, binary=binary, newline=newline, what=what)


@contextlib.contextmanager
def data_to_stdout() -> Iterator[None]:
    """While active, ``-`` writes to the current standard output and everything else printed to
    standard output (summaries, tables) goes to standard error, so the data stays parseable."""
    _data_stream.append(sys.stdout)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        _data_stream.pop()


def stale_temporaries(path: str | os.PathLike) -> list[Path]:
    """Temporary files next to ``path`` (``.NAME.tmp-*``): a writer's, or a killed writer's leftovers."""
    p = Path(path)
    return sorted(p.parent.glob(f".{glob.escape(p.name)}{TMP_TAG}*"))


def _locked(fd: int) -> int:
    """A second descriptor of the staged file ``fd`` holding an exclusive ``flock`` on it until it is
    closed (the kernel drops the lock when the writer dies, however it dies); -1 where the file
    system has no ``flock``."""
    lock = os.dup(fd)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(lock)
        return -1
    return lock


def remove_stale_temporaries(path: str | os.PathLike) -> int:
    """Remove the staged files of ``path`` that a killed writer left: locked by no process and
    unchanged for :data:`STALE_AFTER_S` seconds (a live writer holds its lock; a file just created
    may not be locked yet). Says on stderr how many it removed; returns that count."""
    removed = 0
    now = time.time()
    for tmp in stale_temporaries(path):
        try:
            if now - tmp.lstat().st_mtime < STALE_AFTER_S or not tmp.is_file() or tmp.is_symlink():
                continue
            fd = os.open(tmp, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:  # a live writer's (or no flock here: left alone)
            os.close(fd)
            continue
        try:
            tmp.unlink()
            removed += 1
        except OSError:
            pass
        finally:
            os.close(fd)
    if removed:
        print(
            f"stacksim: note: removed {removed} temporary file{'s' * (removed > 1)} of {path} that a killed"
            " writer left",
            file=sys.stderr,
        )
    return removed
