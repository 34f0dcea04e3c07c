"""The files of ``/proc`` and ``/sys`` that ``stacksim probe`` reads, on this machine or in a saved tree.

A :class:`SysTree` reads paths named as on the machine (``/sys/devices/system/cpu/online``) under
its ``root``: ``/`` for the machine it runs on, a directory for a tree saved elsewhere. It remembers
every file it read and every directory it listed, and :meth:`SysTree.save` writes exactly those
into a ``.tar.gz`` under the same paths, so ``stacksim probe --root`` reads the copy as it read the
machine (a directory listed keeps the entries it had, as empty directories where nothing inside
them was read). A saved tree is read from its directory or straight from its ``.tar.gz``
(:func:`open_tree`, which unpacks it into a temporary directory; only plain files and directories
inside the tree are accepted).
"""

from __future__ import annotations

import contextlib
import io
import re
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path

from simcore.bounded import InputLimitError
from simcore.errors import ConfigError
from simcore.limits import TEXT_BYTES, format_bytes

__all__ = ["SysTree", "open_tree", "natural_key"]

#: the files that tell a saved tree from any other directory (one of them must be there)
MARKERS = ("/proc/cpuinfo", "/sys/devices/system/cpu/online")

#: a sysfs or procfs file is small: more than this is not one (a wrong --root)
MAX_FILE_BYTES = 4 << 20
#: files a saved tree may hold (one of a real machine holds a few thousand)
MAX_TREE_FILES = 200_000
READ_CHUNK = 1 << 16


def natural_key(name: str) -> tuple:
    """``cpu2`` before ``cpu10``: digits compare as numbers."""
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", name))


class SysTree:
    """``/proc`` and ``/sys`` under ``root``, and a record of what was read (for :meth:`save`)."""

    def __init__(self, root: str | Path = "/"):
        self.root = Path(root)
        #: machine path -> the bytes read
        self.files: dict[str, bytes] = {}
        #: machine path of a directory -> the names listed in it (and whether each is a directory)
        self.listed: dict[str, dict[str, bool]] = {}

    def _at(self, path: str) -> Path:
        return self.root / path.lstrip("/")

    def text(self, path: str) -> str | None:
        """The stripped text of the file at machine ``path``; None if it is absent or unreadable
        (a missing attribute is a fact about the machine, not an error)."""
        if path in self.files:
            return self.files[path].decode("utf-8", "replace").strip()
        chunks: list[bytes] = []
        try:
            with open(self._at(path), "rb") as fh:
                # in pieces: /proc/sys refuses one read larger than the kernel will allocate (ENOMEM)
                while sum(map(len, chunks)) <= MAX_FILE_BYTES and (chunk := fh.read(READ_CHUNK)):
                    chunks.append(chunk)
        except OSError:
            return None
        data = b"".join(chunks)
        if len(data) > MAX_FILE_BYTES:
            return None
        self.files[path] = data
        return data.decode("utf-8", "replace").strip()

    def number(self, path: str) -> int | None:
        """The file at ``path`` as an integer (None if absent or not a number)."""
        text = self.text(path)
        try:
            return int(text) if text is not None else None
        except ValueError:
            return None

    def names(self, path: str, pattern: str) -> list[str]:
        """The entries of directory ``path`` whose whole name matches the regular expression
        ``pattern``, in natural order (``cpu2`` before ``cpu10``); [] if there is no such directory."""
        regex = re.compile(pattern)
        try:
            entries = [(e.name, e.is_dir()) for e in self._at(path).iterdir() if regex.fullmatch(e.name)]
        except OSError:
            return []
        entries.sort(key=lambda e: natural_key(e[0]))
        self.listed.setdefault(path, {}).update(entries)
        return [name for name, _ in entries]

    def exists(self, path: str) -> bool:
        return self._at(path).exists()

    def is_tree(self) -> bool:
        """Whether ``root`` holds a ``/proc`` and ``/sys`` to probe (a machine, or a saved tree)."""
        return any(self._at(p).exists() for p in MARKERS)

    def save(self, fh) -> None:
        """Write what was read and listed as a gzip-compressed tar to the binary file ``fh``."""
        with tarfile.open(fileobj=fh, mode="w:gz") as tar:
            dirs = {
                f"{d.rstrip('/')}/{n}" for d, entries in self.listed.items() for n, is_dir in entries.items() if is_dir
            }
            dirs |= set(self.listed)
            for d in sorted(dirs, key=natural_key):
                info = tarfile.TarInfo(d.strip("/"))
                info.type, info.mode = tarfile.DIRTYPE, 0o755
                tar.addfile(info)
            for path in sorted(self.files, key=natural_key):
                data = self.files[path]
                info = tarfile.TarInfo(path.strip("/"))
                info.size, info.mode = len(data), 0o644
                tar.addfile(info, io.BytesIO(data))


def _unpack(archive: Path, into: Path) -> None:
    """Unpack the saved tree ``archive`` into ``into``: plain files and directories only, each
    inside the tree (no absolute path, no ``..``, no links)."""
    most = TEXT_BYTES.value()
    try:
        with tarfile.open(archive, "r:*") as tar:
            members = []
            total = 0
            for m in tar:  # each header checked before the data behind it is inflated
                parts = Path(m.name).parts
                if not (m.isfile() or m.isdir()) or m.name.startswith("/") or ".." in parts:
                    raise ConfigError(
                        f"--root {archive}: '{m.name}' is not a file of a saved tree (stacksim probe --save writes one)"
                    )
                total += m.size + 512
                if m.size > MAX_FILE_BYTES or total > most or len(members) >= MAX_TREE_FILES:
                    raise InputLimitError(
                        f"--root {archive}: more than a saved tree holds ({len(members) + 1:,} files,"
                        f" {format_bytes(total)} so far; a file of /proc or /sys is at most"
                        f" {format_bytes(MAX_FILE_BYTES)}, a tree at most {MAX_TREE_FILES:,} files and"
                        f" {TEXT_BYTES.shown()}): a decompression bomb? {TEXT_BYTES.hint()}"
                    )
                members.append(m)
            # every member checked above; Python's own "data" filter too where it has one (3.12, 3.11.4)
            extra = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
            tar.extractall(into, members=members, **extra)
    except (tarfile.TarError, EOFError):
        raise ConfigError(f"--root {archive}: not a readable saved tree (a .tar.gz from --save)") from None
    except OSError as err:
        raise ConfigError(f"--root {archive}: not a readable saved tree: {err.strerror or err}") from None


@contextlib.contextmanager
def open_tree(root: str | None) -> Iterator[SysTree]:
    """The :class:`SysTree` of ``root``: this machine (None), a directory holding a saved tree, or a
    ``.tar.gz`` written by ``--save`` (unpacked into a temporary directory for the duration).
    Anything else is bad input (:class:`ConfigError` naming ``--root``)."""
    if root is None:
        yield SysTree("/")
        return
    path = Path(root)
    with tempfile.TemporaryDirectory(prefix="stacksim-probe-") as tmp:
        if path.is_file():
            _unpack(path, Path(tmp))
            tree = SysTree(tmp)
        elif path.is_dir():
            tree = SysTree(path)
        else:
            raise ConfigError(f"--root {root}: no such directory (a saved tree, or its .tar.gz from --save)")
        if not tree.is_tree():
            raise ConfigError(
                f"--root {root}: holds no saved /proc or /sys (it needs {' or '.join(MARKERS)};"
                " stacksim probe --save FILE.tar.gz makes one)"
            )
        yield tree
