"""Sweep results on disk: a columnar file (CSV, or Parquet with pyarrow) plus a journal.

Every finished run is written at once, atomically (temporary file + ``os.replace``), as one small
JSON file in the journal directory ``RESULTS.journal/``; the columnar file is rewritten atomically
from all rows every few seconds and at the end, after which the journal is removed. A sweep that
is killed at any instant therefore loses no finished run: on restart the rows of the file and of
the journal are merged (journal wins) and the runs whose point, replicate and configuration hash
are already there are skipped. Readers (:func:`read_results`) merge the journal too.

One sweep at a time writes a results file: it holds an exclusive ``flock`` on ``.RESULTS.lock``
(which records its pid). The kernel releases the lock when the process dies, however it dies, so
the lock of a killed sweep is taken over by the next one; where ``flock`` is not supported, a lock
file whose pid is no longer alive is taken over. The holder of the lock removes temporary files
that a killed writer left (``.RESULTS.tmp-*``, journal ``.*.tmp-*``).
"""

from __future__ import annotations

import csv
import hashlib
import json
import os
import re
import shutil
import time
from pathlib import Path
from typing import Any, Iterable

from scenarios.studies.sweeps.rows import TEXT_COLUMNS
from simcore.errors import ConfigError
from simcore.outfile import OutputError, check_output, stale_temporaries, write_file, write_text

FORMATS = (".csv", ".parquet")
#: Columns every sweep results file has (a CSV without them is another kind of file).
REQUIRED_COLUMNS = ("sweep", "point", "replicate", "config_sha")
_INT_RE = re.compile(r"[+-]?\d+")

Row = dict[str, Any]
RowKey = tuple[str, int]


def row_key(row: Row) -> RowKey:
    """Identity of a row within a results file: (point key, replicate)."""
    return str(row["point"]), int(row["replicate"])


def check_results_path(path: str | Path) -> Path:
    """Validate the results file name (``.csv`` or ``.parquet``; the latter needs pyarrow)."""
    p = Path(path)
    if p.suffix.lower() not in FORMATS:
        raise ConfigError(f"results file {p}: use a .csv or .parquet name")
    if p.suffix.lower() == ".parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise ConfigError(f"results file {p}: .parquet needs pyarrow (pip install pyarrow), or use .csv") from None
    check_output(p, "results file", stream_ok=False)
    journal = journal_dir(p)
    if journal.exists() and not journal.is_dir():
        raise OutputError(f"cannot write results file {p}: {journal} (its journal) is not a directory")
    return p


def journal_dir(path: str | Path) -> Path:
    """The journal directory that goes with a results file."""
    return Path(str(path) + ".journal")


def read_results(path: str | Path) -> list[Row]:
    """All rows of a results file, merged with its journal (an interrupted sweep), file order."""
    p = Path(path)
    if not p.exists() and not journal_dir(p).is_dir():
        raise ConfigError(f"results file not found: {p}")
    rows = {row_key(r): r for r in (_read_table(p) if p.exists() else [])}
    for r in _read_journal(journal_dir(p)):
        rows[row_key(r)] = r
    return list(rows.values())


class ResultStore:
    """Rows of one sweep's results file, updated run by run (see the module docstring)."""

    def __init__(self, path: str | Path, *, fresh: bool = False, flush_interval_s: float = 5.0):
        self.path = check_results_path(path)
        self.journal = journal_dir(self.path)
        self._lock = _lock(self.path)
        self.flush_interval_s = flush_interval_s
        try:
            _remove_stale_temporaries(self.path)
            if fresh:
                if self.path.exists():
                    _read_table(self.path)  # never delete a file that is not a results file
                shutil.rmtree(self.journal, ignore_errors=True)
                self.path.unlink(missing_ok=True)
            exists = self.path.exists() or self.journal.is_dir()
            self.rows: dict[RowKey, Row] = {row_key(r): r for r in read_results(self.path)} if exists else {}
        except BaseException:
            Path(self._lock.name).unlink(missing_ok=True)
            self._lock.close()
            raise
        self._dirty = self.journal.is_dir()  # journal rows are consolidated into the file at close
        self._last_flush = time.monotonic()

    def status(self, point: str, replicate: int, config_sha: str, code_sha: str) -> str:
        """``"done"`` if this run is stored with the same configuration and simulator code,
        ``"stale"`` if it was computed by another version of the simulator (to recompute), or
        ``"missing"``. A stored run of the same point and replicate with another configuration is
        an error (the sweep file or the overrides changed)."""
        row = self.rows.get((point, replicate))
        if row is None:
            return "missing"
        if str(row.get("config_sha")) != config_sha:
            raise ConfigError(
                f"{self.path} holds point {point} replicate {replicate} computed with another configuration "
                f"(the sweep or the overrides changed): use --fresh to recompute, or another results file"
            )
        return "done" if str(row.get("code_sha")) == code_sha else "stale"

    def add(self, row: Row, order: dict[RowKey, int] | None = None) -> None:
        """Store one finished run durably (journal), and refresh the results file now and then."""
        try:
            self.journal.mkdir(exist_ok=True)
        except OSError as err:
            raise OutputError(
                f"cannot write results file {self.path}: journal {self.journal}: {err.strerror or err}"
            ) from None
        key = row_key(row)
        name = hashlib.sha1(f"{key[0]}\0{key[1]}".encode("utf-8")).hexdigest()[:24] + ".json"
        write_text(self.journal / name, json.dumps(row), what="results journal")
        self.rows[key] = row
        self._dirty = True
        if time.monotonic() - self._last_flush >= self.flush_interval_s:
            self.flush(order)

    def flush(self, order: dict[RowKey, int] | None = None) -> None:
        """Rewrite the results file atomically from all rows (planned order first)."""
        if not self._dirty:
            return
        rows = list(self.rows.values())
        if order:
            last = len(order)
            rows.sort(key=lambda r: order.get(row_key(r), last))
        _write_table(self.path, rows)
        self._dirty = False
        self._last_flush = time.monotonic()

    def close(self, order: dict[RowKey, int] | None = None) -> None:
        """Final flush; the journal is then redundant and removed."""
        try:
            self.flush(order)
            if self.path.exists():
                shutil.rmtree(self.journal, ignore_errors=True)
        finally:
            Path(self._lock.name).unlink(missing_ok=True)  # before unlocking: a waiter gets a new file
            self._lock.close()


# -- file formats ---------------------------------------------------------------------------------
def _columns(rows: Iterable[Row]) -> list[str]:
    cols: dict[str, None] = {}
    for r in rows:
        cols.update(dict.fromkeys(r))
    # JSON columns last, for readability
    tail = [c for c in ("cdf", "config") if c in cols]
    return [c for c in cols if c not in tail] + tail


def _write_table(path: Path, rows: list[Row]) -> None:
    cols = _columns(rows)
    if path.suffix.lower() == ".parquet":
        write_file(path, lambda fh: _write_parquet(fh, rows, cols), binary=True, what="results file")
        return

    def write_csv(fh) -> None:
        w = csv.writer(fh)
        w.writerow(cols)
        for r in rows:
            w.writerow(["" if r.get(c) is None else _cell(r[c]) for c in cols])

    write_file(path, write_csv, newline="", what="results file")


def _cell(v: Any) -> str:
    if isinstance(v, float):
        return repr(v)  # shortest text that reads back to the same double
    return str(v)


def _write_parquet(fh, rows: list[Row], cols: list[str]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    data = {}
    for c in cols:
        vals = [r.get(c) for r in rows]
        kinds = {type(v) for v in vals if v is not None}
        if str in kinds and len(kinds) > 1:  # mixed text and numbers: keep as text
            vals = [None if v is None else _cell(v) for v in vals]
        elif kinds == {int, float}:
            vals = [None if v is None else float(v) for v in vals]
        data[c] = vals
    pq.write_table(pa.table(data), fh)


def _read_table(path: Path) -> list[Row]:
    """The rows of a results file; ConfigError if it is unreadable or another kind of file."""
    try:
        if path.suffix.lower() == ".parquet":
            import pyarrow.parquet as pq

            table = pq.read_table(path)
            _check_kind(path, table.column_names)
            rows = [{k: v for k, v in r.items() if v is not None} for r in table.to_pylist()]
        else:
            with open(path, newline="", encoding="utf-8-sig") as fh:  # (a spreadsheet's byte-order mark)
                reader = csv.DictReader(fh)
                _check_kind(path, reader.fieldnames or [])
                rows = []
                for r in reader:
                    if None in r or None in r.values():
                        raise ConfigError(
                            f"{path} line {reader.line_num}: {len(r) - (None in r)} fields where the "
                            f"header has {len(reader.fieldnames)}: not a sweep results file, or damaged"
                        )
                    rows.append({k: (v if k in TEXT_COLUMNS else _parse(v)) for k, v in r.items() if v != ""})
    except ConfigError:
        raise
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not a sweep results file (not UTF-8 text)") from None
    except (csv.Error, OSError, ValueError) as err:  # pyarrow's ArrowInvalid is a ValueError
        raise ConfigError(f"{path}: cannot read sweep results: {err}") from None
    for i, r in enumerate(rows):
        if not isinstance(r.get("replicate"), int) or not isinstance(r.get("point"), str):
            raise ConfigError(
                f"{path}: row {i + 1} has no point or no integer replicate: not a sweep results file, or damaged"
            )
    return rows


def _check_kind(path: Path, columns: Iterable[str]) -> None:
    cols = list(columns)
    missing = [c for c in REQUIRED_COLUMNS if c not in cols]
    if missing:
        shown = ", ".join(cols[:5]) + (", ..." if len(cols) > 5 else "") if cols else "none"
        raise ConfigError(
            f"{path}: not a stacksim sweep results file (no {', '.join(missing)} column"
            f"{'s' if len(missing) > 1 else ''}; its columns: {shown})"
        )


def _parse(text: str) -> Any:
    if _INT_RE.fullmatch(text):
        return int(text)
    try:
        return float(text)
    except ValueError:
        return text


def _read_journal(jdir: Path) -> list[Row]:
    if not jdir.is_dir():
        return []
    rows = []
    for f in sorted(jdir.glob("*.json")):
        try:
            rows.append(json.loads(f.read_text(encoding="utf-8")))
        except (OSError, ValueError):
            continue  # cannot happen with atomic writes; a stray file is ignored
    return rows


def lock_path(path: str | Path) -> Path:
    """The lock file that goes with a results file."""
    p = Path(path)
    return p.with_name(f".{p.name}.lock")


def _lock(path: Path):
    """An exclusive lock on ``.RESULTS.lock`` (released when the returned file is closed, or by the
    kernel when the process dies), so that two sweeps cannot write the same results file at once.
    The file holds the pid of the holder, for the message to the next one."""
    import fcntl

    lpath = lock_path(path)
    for _ in range(10):
        try:
            fh = open(lpath, "a+", encoding="utf-8")
        except OSError as err:
            raise OutputError(f"cannot write results file {path}: lock file {lpath}: {err.strerror or err}") from None
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _lock_pid(fh)
            fh.close()
            raise ConfigError(
                f"{path}: another sweep{f' (pid {holder})' if holder else ''} is writing this results file"
            ) from None
        except OSError:  # no flock on this file system: a pid file, taken over when its process is gone
            holder = _lock_pid(fh)
            if holder and holder != os.getpid() and pid_alive(holder):
                fh.close()
                raise ConfigError(f"{path}: another sweep (pid {holder}) is writing this results file") from None
        try:  # the holder before us may have removed the file meanwhile: lock the file that is there
            if os.fstat(fh.fileno()).st_ino != os.stat(lpath).st_ino:
                fh.close()
                continue
        except FileNotFoundError:
            fh.close()
            continue
        fh.seek(0)
        fh.truncate()
        fh.write(f"{os.getpid()}\n")
        fh.flush()
        return fh
    raise ConfigError(f"{path}: could not lock {lpath} (it keeps being replaced)")


def _lock_pid(fh) -> int | None:
    fh.seek(0)
    text = fh.read().strip()
    return int(text) if text.isdigit() else None


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` exists and is not a zombie (on this machine)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # Linux: a killed process not yet reaped by its parent is a zombie
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state not in ("Z", "X")


def _remove_stale_temporaries(path: Path) -> None:
    """Under the lock: temporary files of the results file and its journal are leftovers of a
    killed writer (no other writer can be running)."""
    jdir = journal_dir(path)
    leftovers = stale_temporaries(path)
    if jdir.is_dir():
        leftovers += sorted(jdir.glob(".*.tmp-*"))
    for f in leftovers:
        f.unlink(missing_ok=True)
