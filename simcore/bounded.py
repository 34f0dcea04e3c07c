"""One bounded reader for every input: what a file may cost in memory and time is capped before
it is spent, and a file over a cap is refused with one message naming the file, the cap and the
environment variable that raises it (:mod:`simcore.limits`).

- :func:`read_text_file`: a file read whole (job files, YAML, JSON, measured CSVs): at most
  ``STACKSIM_MAX_TEXT_BYTES``, UTF-8 text without NUL bytes; a FIFO or a device is read up to the
  cap, a directory, a block device or a socket is refused.
- :func:`open_lines`: a file read line by line (traces, sweep results): plain, or compressed with
  gzip, bzip2 or xz (recognised by their magic bytes, whatever the name; zstd is recognised and
  refused); no line longer than ``STACKSIM_MAX_LINE_BYTES`` (a line is never held whole before it
  is measured: a file of NUL bytes without a newline costs one buffer, not its size); no NUL byte
  (a sparse or binary file); a compressed stream inflating past ``STACKSIM_MAX_INFLATED_BYTES`` or
  by more than ``STACKSIM_MAX_INFLATE_RATIO`` (a decompression bomb) is stopped as it inflates.
- :func:`parse_json`: JSON text to data with the errors of a bad input (nested too deeply, an
  integer of thousands of digits) as one message.
"""

from __future__ import annotations

import bz2
import gzip
import io
import json
import lzma
import os
import stat
import zlib
from pathlib import Path
from typing import Any, BinaryIO

from simcore.errors import ConfigError
from simcore.limits import INFLATE_RATIO, INFLATED_BYTES, LINE_BYTES, TEXT_BYTES, Limit, format_bytes

__all__ = [
    "InputLimitError",
    "read_text_file",
    "read_bounded",
    "open_lines",
    "compression_of",
    "parse_json",
    "RATIO_FLOOR_BYTES",
]

#: the inflation ratio is checked once this much has come out of a compressed stream (a small file
#: that compresses very well is no bomb)
RATIO_FLOOR_BYTES = 16 << 20
#: bytes read from the file at a time by :func:`open_lines`
_CHUNK = 256 << 10
#: magic bytes -> compression (``file(1)``'s), and the module that inflates it
_MAGIC = (
    (b"\x1f\x8b", "gzip"),
    (b"BZh", "bzip2"),
    (b"\xfd7zXZ\x00", "xz"),
    (b"\x28\xb5\x2f\xfd", "zstd"),
)
_DAMAGED = (OSError, EOFError, lzma.LZMAError, zlib.error)


class InputLimitError(ConfigError):
    """An input is over one of the limits of :mod:`simcore.limits` (the message names it)."""


def _kind_of(mode: int) -> str | None:
    """What a file that is not a regular file, a FIFO or a character device is, for messages."""
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return None


def _open_fd(p: Path, what: str) -> tuple[int, os.stat_result]:
    """A read-only descriptor of ``p`` and its status: a regular file, a FIFO or a character
    device (else ConfigError saying what it is)."""
    try:
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise ConfigError(f"{what} not found: {p}") from None
    except IsADirectoryError:
        raise ConfigError(f"{what} {p} is a directory, not a file") from None
    except OSError as err:
        raise ConfigError(f"cannot read {what} {p}: {err.strerror or err}") from None
    st = os.fstat(fd)
    kind = _kind_of(st.st_mode)
    if kind is not None:
        os.close(fd)
        raise ConfigError(f"{what} {p} is {kind}, not a file")
    return fd, st


def read_bounded(path: str | os.PathLike, what: str, limit: Limit = TEXT_BYTES) -> bytes:
    """At most ``limit`` bytes of ``path`` (a regular file, a FIFO such as ``/dev/stdin`` or a
    process substitution, or a character device), else a :class:`ConfigError` saying what it is."""
    p = Path(path)
    most = limit.value()
    fd, st = _open_fd(p, what)
    mode = st.st_mode
    with os.fdopen(fd, "rb") as fh:
        try:
            if stat.S_ISREG(mode) and st.st_size > most:
                raise InputLimitError(f"{what} {p} is larger than {limit.shown()}: not a {what}? {limit.hint()}")
            data = _read_upto(fh, st.st_size + 1 if stat.S_ISREG(mode) else most + 1)
        except OSError as err:
            raise ConfigError(f"cannot read {what} {p}: {err.strerror or err}") from None
    if len(data) > most:
        source = "regular file" if stat.S_ISREG(mode) else "stream" if stat.S_ISFIFO(mode) else "device"
        raise InputLimitError(f"{what} {p}: the {source} gives more than {limit.shown()}: not a {what}? {limit.hint()}")
    return data


def _read_upto(fh, most: int, chunk: int = 1 << 20) -> bytes:
    """At most ``most`` bytes of ``fh``, read in chunks (one ``read(most)`` would allocate all of
    ``most`` at once, whatever the file holds)."""
    parts: list[bytes] = []
    got = 0
    while got < most:
        part = fh.read(min(chunk, most - got))
        if not part:
            break
        parts.append(part)
        got += len(part)
    return b"".join(parts)


def read_text_file(path: str | os.PathLike, *, what: str = "file", limit: Limit = TEXT_BYTES) -> str:
    """The text of ``path`` (UTF-8, a leading byte-order mark dropped; at most ``limit`` bytes), or a
    :class:`ConfigError` naming the file when it is missing, unreadable, a directory or a block
    device, too large (a stream or device that gives more than ``limit``), binary (NUL bytes) or
    not UTF-8. FIFOs (``/dev/stdin``, a process substitution) are read like files."""
    p = Path(path)
    data = read_bounded(p, what, limit)
    if b"\0" in data:
        raise ConfigError(f"{p}: not a text {what} (it contains NUL bytes: a binary file?)")
    try:
        return data.decode("utf-8-sig")  # a byte-order mark (spreadsheets, Windows editors) is not text
    except UnicodeDecodeError as err:
        line = data[: err.start].count(b"\n") + 1
        raise ConfigError(
            f"{p} line {line}: not UTF-8 text (byte 0x{data[err.start]:02x} at offset {err.start})"
        ) from None


# -- line by line ---------------------------------------------------------------------------------
class _Counted:
    """A binary file that counts the bytes read from it (the compressed side of a stream)."""

    def __init__(self, fh: BinaryIO):
        self._fh = fh
        self.n = 0

    def read(self, size: int = -1) -> bytes:
        data = self._fh.read(size)
        self.n += len(data)
        return data

    def close(self) -> None:
        self._fh.close()


class _Guard(io.RawIOBase):
    """The bytes of a (possibly inflating) source, checked as they come: NUL bytes, the longest
    line, and for a compressed source its inflated size and ratio (see the module docstring)."""

    def __init__(self, source, counted: _Counted | None, path: Path, what: str, compression: str | None, line: Limit):
        super().__init__()
        self._src = source
        self._counted = counted
        self._path = path
        self._what = what
        self._compression = compression
        self._line = line
        self._line_max = line.value()
        self._inflated_max = INFLATED_BYTES.value() if compression else 0
        self._ratio_max = INFLATE_RATIO.value() if compression else 0
        self._out = 0  # bytes given so far
        self._lines = 0  # line ends given so far
        self._run = 0  # bytes since the last line end

    def readable(self) -> bool:
        return True

    def readinto(self, b) -> int:
        try:
            data = self._src.read(len(b))
        except _DAMAGED as err:
            if self._compression is None:
                raise
            raise OSError(f"damaged {self._compression} data ({err})") from None
        n = len(data)
        if n:
            self._check(data)
            b[:n] = data
        return n

    def _check(self, data: bytes) -> None:
        nul = data.find(b"\0")
        if nul >= 0:
            line = self._lines + max(data.count(b"\n", 0, nul), data.count(b"\r", 0, nul)) + 1
            raise InputLimitError(
                f"{self._path} line {line}: a NUL byte at offset {self._out + nul}: not a text {self._what}"
                " (a binary or sparse file?)"
            )
        self._lines += max(data.count(b"\n"), data.count(b"\r"))
        last = max(data.rfind(b"\n"), data.rfind(b"\r"))
        self._run = self._run + len(data) if last < 0 else len(data) - last - 1
        self._out += len(data)
        if self._run > self._line_max:
            raise InputLimitError(
                f"{self._path} line {self._lines + 1}: a line longer than {self._line.shown()}: not a {self._what}?"
                f" {self._line.hint()}"
            )
        if self._compression:
            self._check_inflation()

    def _check_inflation(self) -> None:
        kind = self._compression
        if self._out > self._inflated_max:
            raise InputLimitError(
                f"{self._path}: the {kind} data inflates to more than {INFLATED_BYTES.shown()} {INFLATED_BYTES.hint()}"
            )
        packed = max(self._counted.n if self._counted is not None else 0, 1)
        if self._out > RATIO_FLOOR_BYTES and self._out > self._ratio_max * packed:
            raise InputLimitError(
                f"{self._path}: {format_bytes(packed)} of {kind} data inflated to {format_bytes(self._out)} and"
                f" more (over {self._ratio_max} times its size: a decompression bomb?)"
                f" (the limit: {self._ratio_max} times, {INFLATE_RATIO.env}; set it higher to allow more)"
            )

    def close(self) -> None:
        if not self.closed:
            self._src.close()
        super().close()


def compression_of(head: bytes) -> str | None:
    """The compression whose magic bytes start ``head`` (gzip, bzip2, xz, zstd), else None."""
    for magic, kind in _MAGIC:
        if head.startswith(magic):
            return kind
    return None


def open_lines(path: str | os.PathLike, what: str = "file", *, line: Limit = LINE_BYTES) -> io.TextIOWrapper:
    """``path`` opened for reading lines (UTF-8, undecodable bytes replaced, a byte-order mark
    dropped, line ends as they are: ``newline=""``), plain or compressed, every byte checked as it
    is read (see the module docstring). Limits raise :class:`InputLimitError`; a damaged
    compressed stream raises ``OSError`` as the file is read."""
    p = Path(path)
    try:
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError as err:
        raise ConfigError(f"{p}: cannot open {what}: {err.strerror or err}") from None
    kind = _kind_of(os.fstat(fd).st_mode)
    if kind is not None:
        os.close(fd)
        raise ConfigError(f"{p}: cannot open {what}: it is {kind}, not a file")
    raw = io.BufferedReader(io.FileIO(fd, "rb", closefd=True), buffer_size=_CHUNK)
    try:
        kind = compression_of(raw.peek(6)[:6])
    except OSError as err:
        raw.close()
        raise ConfigError(f"cannot read {what} {p}: {err.strerror or err}") from None
    if kind == "zstd":
        raw.close()
        raise ConfigError(f"{p}: zstd-compressed {what}: not supported, decompress it first (zstd -d) or use gzip")
    counted = None
    source: Any = raw
    if kind is not None:
        counted = _Counted(raw)
        opener = {"gzip": gzip.GzipFile, "bzip2": bz2.BZ2File, "xz": lzma.LZMAFile}[kind]
        source = _Closing(opener(fileobj=counted, mode="rb") if kind == "gzip" else opener(counted, "rb"), counted)
    guard = _Guard(source, counted, p, what, kind, line)
    return io.TextIOWrapper(
        io.BufferedReader(guard, buffer_size=_CHUNK), encoding="utf-8-sig", errors="replace", newline=""
    )


class _Closing:
    """A decompressing reader that closes its file with itself (``GzipFile``, ``BZ2File`` and
    ``LZMAFile`` given a file object leave it open)."""

    def __init__(self, reader, counted: _Counted):
        self._reader = reader
        self._counted = counted

    def read(self, size: int = -1) -> bytes:
        return self._reader.read(size)

    def close(self) -> None:
        try:
            self._reader.close()
        finally:
            self._counted.close()


# -- JSON -----------------------------------------------------------------------------------------
def parse_json(text: str | bytes, where: str, *, unique_keys: bool = False) -> Any:
    """``text`` as JSON, or one :class:`ConfigError` ``WHERE: not valid JSON: ...`` (a syntax
    error, nesting deeper than Python's recursion allows, an integer of more than 4300 digits);
    with ``unique_keys`` an object that gives a key twice is refused too (JSON parsers keep the
    last one in silence)."""
    try:
        return json.loads(text, object_pairs_hook=_unique_object if unique_keys else None)
    except RecursionError:
        raise ConfigError(f"{where}: not valid JSON: nested too deeply") from None
    except _DuplicateKey as dup:
        raise ConfigError(
            f"{where}: key '{dup.args[0]}' is given twice in one object: keep one (the later one would"
            " silently replace the earlier)"
        ) from None
    except ValueError as err:  # json.JSONDecodeError, or an integer of more than 4300 digits
        raise ConfigError(f"{where}: not valid JSON: {err}") from None


class _DuplicateKey(Exception):
    pass


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key[:60])
        out[key] = value
    return out
