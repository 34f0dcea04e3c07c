"""Sweep results on disk: a columnar file (CSV, or Parquet with pyarrow) plus a journal.

Every finished run is written at once, atomically (temporary file + ``os.replace``), as one small
JSON file in the journal directory ``RESULTS.journal/``; the columnar file is rewritten atomically
from all rows every few seconds and at the end, after which the journal is removed. A sweep that
is killed at any instant therefore loses no finished run: on restart the rows of the file and of
the journal are merged (journal wins) and the runs whose point, replicate and configuration hash
are already there are skipped. Readers (:func:`read_results`) merge the journal too.

Every stored row is verified when it is read (:func:`load_store`): a CSV record with as many
fields as the header and, for the last one, its line end (a file cut in the middle of a row has
none, whatever column the cut fell in); the identity columns (sweep, point, an integer replicate,
the two hashes); a ``config`` column that is a JSON object whose SHA-256 is the row's
``config_sha``, and a ``cdf`` column that is a JSON object; a journal entry that is a JSON object
of such a row. A damaged row is never taken for a finished run: a resumed sweep recomputes it and
says so on stderr (:attr:`ResultStore.damage`), and an analysis refuses the file, naming the
damaged rows, until a resume has recomputed them.

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
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Iterator

from scenarios.studies.sweeps.rows import TEXT_COLUMNS
from simcore.bounded import open_lines, parse_json, read_text_file
from simcore.errors import ConfigError
from simcore.limits import TEXT_BYTES
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


@dataclass(frozen=True)
class Damage:
    """A stored row that is not a whole row: where it is (``line 9``, ``journal NAME.json``), the
    run it names when that can be read (else None) and what is wrong with it."""

    where: str
    key: RowKey | None
    why: str
    sweep: str | None = None

    def __str__(self) -> str:
        run = f" (point {self.key[0]} replicate {self.key[1]})" if self.key is not None else ""
        return f"{self.where}{run}: {self.why}"


def load_store(path: str | Path) -> tuple[dict[RowKey, Row], list[Damage]]:
    """The whole rows of a results file merged with its journal (journal wins; file order), and
    the damaged ones (see the module docstring). ConfigError when the file cannot be read at all
    or is another kind of file."""
    p = Path(path)
    if not p.exists() and not journal_dir(p).is_dir():
        raise ConfigError(f"results file not found: {p}")
    rows: dict[RowKey, Row] = {}
    damage: list[Damage] = []
    if p.exists():
        table, damage = _read_table(p)
        rows = {row_key(r): r for r in table}
    for r, dmg in _read_journal(journal_dir(p)):
        if dmg is None:
            rows[row_key(r)] = r
            damage = [d for d in damage if d.key != row_key(r)]  # a whole row of the run replaces it
        else:
            damage.append(dmg)
            if dmg.key is not None:
                rows.pop(dmg.key, None)  # a newer result of the run is damaged: the older row is no answer
    return rows, damage


def read_results(path: str | Path) -> list[Row]:
    """All rows of a results file, merged with its journal (an interrupted sweep), file order; a
    file that holds damaged rows is refused (ConfigError naming them and how to recompute them)."""
    rows, damage = load_store(path)
    if damage:
        raise ConfigError(
            f"{path}: {_count(len(damage), 'damaged stored row')}: {describe_damage(damage)}. Resume the sweep"
            f" on this file (stacksim sweep SWEEP -o {path}) to recompute {'it' if len(damage) == 1 else 'them'}"
        )
    return list(rows.values())


def describe_damage(damage: list[Damage], most: int = 3) -> str:
    """The first ``most`` damaged rows, ``; ``-joined (and how many more)."""
    text = "; ".join(str(d) for d in damage[:most])
    return text + (f"; and {len(damage) - most} more" if len(damage) > most else "")


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'s' if n != 1 else ''}"


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
            self.rows: dict[RowKey, Row] = {}
            #: the damaged stored rows found (recomputed when the plan has their run, else dropped)
            self.damage: list[Damage] = []
            if exists:
                self.rows, self.damage = load_store(self.path)
        except BaseException:
            Path(self._lock.name).unlink(missing_ok=True)
            self._lock.close()
            raise
        self._damaged = {d.key for d in self.damage if d.key is not None}
        self._dirty = self.journal.is_dir()  # journal rows are consolidated into the file at close
        self._last_flush = time.monotonic()

    def status(self, point: str, replicate: int, config_sha: str, code_sha: str, axes: Iterable[str] = ()) -> str:
        """``"done"`` if this run is stored with the same configuration and simulator code,
        ``"stale"`` if it was computed by another version of the simulator (to recompute),
        ``"damaged"`` if its stored row is damaged or lacks one of the ``axes`` columns (to
        recompute), or ``"missing"``. A stored run of the same point and replicate with another
        configuration is an error (the sweep file or the overrides changed)."""
        row = self.rows.get((point, replicate))
        if row is None:
            return "damaged" if (point, replicate) in self._damaged else "missing"
        lacking = [a for a in axes if row.get(a) is None]
        if lacking:
            self.damage.append(Damage("a row", (point, replicate), f"no {lacking[0]} column (an axis of the sweep)"))
            del self.rows[(point, replicate)]
            self._dirty = True
            return "damaged"
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

    def drop_damaged(self) -> None:
        """Leave the damaged rows out of the results file at the next flush (a sweep that went through
        its whole plan: the damaged rows of its runs are recomputed, the others are no result)."""
        if self.damage:
            self._dirty = True

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


def _read_table(path: Path) -> tuple[list[Row], list[Damage]]:
    """The whole rows of a results file and its damaged ones; ConfigError if it is unreadable or
    another kind of file."""
    try:
        if path.suffix.lower() == ".parquet":
            import pyarrow.parquet as pq

            table = pq.read_table(path)
            _check_kind(path, table.column_names)
            records = [
                (f"row {i + 1}", {k: v for k, v in r.items() if v is not None}) for i, r in enumerate(table.to_pylist())
            ]
            damage: list[Damage] = []
        else:
            records, damage = _read_csv(path)
    except ConfigError:
        raise
    except (csv.Error, OSError, ValueError) as err:  # pyarrow's ArrowInvalid is a ValueError
        hint = ""
        if path.suffix.lower() == ".parquet":  # (a Parquet file cut short has no footer: no row can be read)
            hint = " (a cut or damaged Parquet file holds no readable row: remove it, or give another results file)"
        raise ConfigError(f"{path}: cannot read sweep results: {err}{hint}") from None
    rows = []
    for where, r in records:
        why = row_damage(r)
        if why is None:
            rows.append(r)
        else:
            damage.append(_damage(where, r, why))
    return rows, damage


def _damage(where: str, r: Any, why: str) -> Damage:
    """A :class:`Damage` naming the run of ``r`` when its identity columns can be read."""
    key = None
    if isinstance(r, dict) and isinstance(r.get("point"), str) and _whole_number(r.get("replicate")):
        key = (r["point"], r["replicate"])
    sweep = r.get("sweep") if isinstance(r, dict) and isinstance(r.get("sweep"), str) else None
    return Damage(where, key, why, sweep)


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _whole_number(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 0


class _Lines:
    """The lines of a text file for the CSV reader, remembering whether the last one ended."""

    def __init__(self, fh):
        self._fh = fh
        self.ended = True
        self.count = 0

    def __iter__(self) -> Iterator[str]:
        for line in self._fh:
            self.count += 1
            self.ended = line.endswith(("\n", "\r"))
            yield line


def _read_csv(path: Path) -> tuple[list[tuple[str, Row]], list[Damage]]:
    """(where, row) of each record of a CSV results file with as many fields as its header (the
    last one also ended by a line end), and the damage of the others; one line may hold up to
    ``STACKSIM_MAX_TEXT_BYTES`` (a row holds a whole configuration)."""
    csv.field_size_limit(max(csv.field_size_limit(), TEXT_BYTES.value()))
    records: list[tuple[str, Row]] = []
    damage: list[Damage] = []
    with open_lines(path, "sweep results file", line=TEXT_BYTES) as fh:
        lines = _Lines(fh)
        reader = csv.reader(lines)
        header = next(reader, [])
        if not lines.ended and header and lines.count == 1 and "sweep,point".startswith(",".join(header)[:11]):
            return [], [Damage("line 1", None, "the header line is cut off (no row is whole)")]
        _check_kind(path, header)
        twice = sorted({c for c in header if header.count(c) > 1})
        if twice:
            raise ConfigError(
                f"{path} line 1: column {twice[0]!r} is named twice: not a sweep results file, or damaged"
            )
        start = reader.line_num + 1
        for fields in reader:
            where = f"line {start}"
            cut = not lines.ended
            start = reader.line_num + 1
            if not fields:
                continue  # a blank line
            row = {k: (v if k in TEXT_COLUMNS else _parse(v)) for k, v in zip(header, fields) if v != ""}
            if len(fields) != len(header):
                why = f"{len(fields)} fields where the header has {len(header)}"
                damage.append(_damage(where, row, why + (": the file ends in it (cut off)" if cut else "")))
            elif cut:
                damage.append(_damage(where, row, "the file ends in this row, with no line end (cut off)"))
            else:
                records.append((where, row))
    return records, damage


#: the identity columns of a row (text, not empty)
_IDENTITY = ("sweep", "point", "config_sha", "code_sha")


def row_damage(r: Any) -> str | None:
    """What makes ``r`` not a whole row of a results file, or None: the identity columns, the
    ``config`` column (a JSON object whose SHA-256 starts with the row's ``config_sha``), the
    ``cdf`` column (a JSON object), every other value a number or text."""
    if not isinstance(r, dict):
        return f"not a row (a JSON {type(r).__name__})"
    for name in _IDENTITY:
        if name == "config_sha" and not _whole_number(r.get("replicate")):
            why = "no replicate column" if r.get("replicate") is None else "its replicate is not a whole number"
            return why + ("" if r.get("replicate") is None else f" ({str(r['replicate'])[:20]!r})")
        if not isinstance(r.get(name), str) or not r[name]:
            return f"no {name} column" if r.get(name) in (None, "") else f"its {name} is not text"
    config = r.get("config")
    if not isinstance(config, str) or not config:
        return "no config column"
    if hashlib.sha256(config.encode("utf-8")).hexdigest()[: len(r["config_sha"])] != r["config_sha"]:
        try:
            parsed = parse_json(config, "config")
        except ConfigError:
            return "its config column is cut off or damaged (not JSON)"
        if not isinstance(parsed, dict):
            return "its config column is not a JSON object"
        return "its config column does not match its config_sha (edited or damaged)"
    cdf = r.get("cdf")
    try:
        curves = parse_json(cdf, "cdf") if isinstance(cdf, str) else None
    except ConfigError:
        return "its cdf column is cut off or damaged (not JSON)"
    if not isinstance(curves, dict):
        return "its cdf column is not a JSON object"
    for name, values in curves.items():
        if not isinstance(values, list) or not all(_number(v) for v in values):
            return f"its cdf column's {str(name)[:20]!r} is not a list of numbers"
    for name, value in r.items():
        if not (value is None or isinstance(value, (str, int, float))):
            return f"column {str(name)[:40]!r} holds a {type(value).__name__}, not a number or text"
    return None


def _check_kind(path: Path, columns: Iterable[str]) -> None:
    cols = list(columns)
    missing = [c for c in REQUIRED_COLUMNS if c not in cols]
    if missing:
        shown = ", ".join(cols[:5]) + (", ..." if len(cols) > 5 else "") if cols else "none"
        raise ConfigError(
            f"{path}: not a stacksim sweep results file (no {', '.join(missing)} column"
            f"{'s' if len(missing) > 1 else ''}; its columns: {shown})"
        )
    twice = sorted({c for c in cols if cols.count(c) > 1})
    if twice:
        raise ConfigError(f"{path}: column {twice[0]!r} is named twice: not a sweep results file, or damaged")


def _parse(text: str) -> Any:
    if _INT_RE.fullmatch(text):
        try:
            return int(text)
        except ValueError:  # more than 4300 digits: no number of a row
            return text
    try:
        return float(text)
    except ValueError:
        return text


def _read_journal(jdir: Path) -> list[tuple[Row, Damage | None]]:
    """(row, None) for each whole journal entry, (entry, its damage) for the others."""
    if not jdir.is_dir():
        return []
    out: list[tuple[Row, Damage | None]] = []
    for f in sorted(jdir.glob("*.json")):
        where = f"journal entry {f.name}"
        try:
            entry = parse_json(read_text_file(f, what="results journal entry", limit=TEXT_BYTES), where)
        except ConfigError as err:
            why = str(err).replace(f"{where}: ", "").replace(f"{f}: ", "").replace(f" {f}", "").replace(f"{f} ", "")
            out.append(({}, Damage(where, None, why)))
            continue
        why = row_damage(entry)
        out.append((entry, None if why is None else _damage(where, entry, why)))
    return out


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
