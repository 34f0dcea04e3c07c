"""Writing results as data: JSON and per-IO records (CSV or Parquet).

Files are written all-or-nothing through :mod:`simcore.outfile` (checked before the run, staged,
renamed into place; ``-`` is standard output). The terminal text lives in :mod:`stacksim.output`.
"""

from __future__ import annotations

import html
import json
from pathlib import Path

import numpy as np

from scenarios.inputs.fio.output import stamped
from scenarios.run.trace_out import TRACE_FORMATS, per_thread_paths, trace_lines
from simcore.errors import ConfigError
from simcore.outfile import STDOUT, Outputs, check_output, write_text
from simcore.stats import RECORD_FIELDS, RecordChunks, records_array


def json_text(result: dict) -> str:
    """The JSON text of a result (fio's wall-clock fields stamped, for fio-shaped results)."""
    return json.dumps(stamped(dict(result)), indent=2, sort_keys=False) + "\n"


def write_json(path: str | Path, result: dict, what: str | None = "--json") -> None:
    write_text(path, json_text(result), what=what)


#: ``--records-format`` values: stacksim's own columns (CSV, Parquet) or a trace format
#: (:mod:`scenarios.run.trace_out`)
RECORD_FORMATS = ("csv", "parquet", *TRACE_FORMATS)
#: the format a ``--records`` file name implies (without ``--records-format``)
_BY_SUFFIX = {".csv": "csv", ".parquet": "parquet", ".blkparse": "blkparse", ".log": "fiolog"}


def records_format(path: str, fmt: str | None = None) -> str:
    """The format of ``--records PATH``: ``fmt`` (``--records-format``) if given, else by the file's
    extension (.csv, .parquet, .blkparse = blkparse text, .log = fio latency log; ``-``: CSV)."""
    if fmt is not None:
        if fmt not in RECORD_FORMATS:
            raise ConfigError(f"--records-format {fmt!r}: expected one of {', '.join(RECORD_FORMATS)}")
        if fmt == "parquet" and path == STDOUT:
            raise ConfigError("--records-format parquet cannot go to standard output ('-'); give a file name")
        return fmt
    if path == STDOUT:
        return "csv"
    got = _BY_SUFFIX.get(Path(path).suffix.lower())
    if got is None:
        raise ConfigError(
            f"--records {path}: use a .csv, .parquet, .blkparse (blkparse text) or .log (fio latency log) file "
            f"name, or give --records-format ({', '.join(RECORD_FORMATS)})"
        )
    return got


def check_records_path(path: str, fmt: str | None = None) -> None:
    """``--records``: a file of a known format (:func:`records_format`; ``-``: standard output) that
    can be written."""
    suffix = records_format(path, fmt)
    if suffix == "parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise ConfigError("--records *.parquet needs pyarrow (pip install pyarrow); or use a .csv name") from None
    check_output(path, "--records")


def _chunks(table: np.ndarray | RecordChunks):
    if isinstance(table, RecordChunks):
        yield from table.chunks()
    else:
        yield table


def _write_parquet(fh, table: np.ndarray | RecordChunks) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    writer = None
    for chunk in _chunks(table):
        t = pa.table({name: chunk[name] for name in chunk.dtype.names})
        if writer is None:
            writer = pq.ParquetWriter(fh, t.schema)
        writer.write_table(t)
    if writer is None:  # no rows: the columns all the same
        empty = records_array({})
        t = pa.table({name: empty[name] for name in empty.dtype.names})
        writer = pq.ParquetWriter(fh, t.schema)
        writer.write_table(t)
    writer.close()


def _write_csv(fh, table: np.ndarray | RecordChunks) -> None:
    fh.write(",".join(name for name, _t in RECORD_FIELDS) + "\n")
    for chunk in _chunks(table):
        lines = [",".join(f"{v:.1f}" if isinstance(v, float) else str(v) for v in row) for row in chunk.tolist()]
        if lines:
            fh.write("\n".join(lines) + "\n")


def _stage_trace(out: Outputs, path: str | Path, table: np.ndarray | RecordChunks, fmt: str) -> None:
    """The records as a trace (:mod:`scenarios.run.trace_out`): an fio log per thread, as fio writes."""
    rec = table.to_array() if isinstance(table, RecordChunks) else table
    if fmt != "fiolog" or str(path) == STDOUT:
        out.text(path, "".join(ln + "\n" for ln in trace_lines(rec, fmt)), what="--records")
        return
    threads = sorted(set(rec["thread"].tolist()))
    for p, th in zip(per_thread_paths(path, threads), threads):
        out.text(p, "".join(ln + "\n" for ln in trace_lines(rec[rec["thread"] == th], fmt)), what="--records")


def stage_records(out: Outputs, path: str | Path, table: np.ndarray | RecordChunks, fmt: str | None = None) -> None:
    """Per-IO records, one row per IO (times in ns), as one output of the transaction ``out``;
    ``table`` an array or the chunks a run streamed (:class:`simcore.stats.RecordChunks`), written
    chunk by chunk; ``fmt`` (:func:`records_format`): a trace format writes the records as that trace."""
    fmt = records_format(str(path), fmt)
    if fmt in TRACE_FORMATS:
        _stage_trace(out, path, table, fmt)
        return
    if fmt == "parquet":
        out.write(path, lambda fh: _write_parquet(fh, table), binary=True, what="--records")
        return
    out.write(path, lambda fh: _write_csv(fh, table), what="--records")


def write_records(path: str | Path, table: np.ndarray | RecordChunks, fmt: str | None = None) -> None:
    """Per-IO records, one row per IO (times in ns), or as a trace (``fmt``, :func:`records_format`)."""
    with Outputs() as out:
        stage_records(out, path, table, fmt)


def figures_page(title: str, intro: list[str], figs: list, css: str = "", plotlyjs: str = "inline") -> str:
    """An HTML page: ``title``, the ``intro`` HTML fragments, a table of contents and the plotly
    figures ``figs`` as (heading, figure) pairs, plotly.js once: ``plotlyjs`` "inline" (about
    4.7 MB, the page works offline) or "cdn" (a script tag loading it from cdn.plot.ly)."""
    if plotlyjs not in ("inline", "cdn"):
        raise ValueError(f"plotlyjs: 'inline' or 'cdn', got {plotlyjs!r}")
    parts = [
        "<!DOCTYPE html>",
        "<html><head><meta charset='utf-8'>",
        f"<title>{html.escape(title)}</title>",
        (
            "<style>body{font-family:sans-serif;margin:1.5em;max-width:1400px}h2{margin-top:1.6em}"
            f"nav a{{margin-right:1em}}{css}</style></head><body>"
        ),
        f"<h1>{html.escape(title)}</h1>",
        *intro,
        "<nav>" + "".join(f"<a href='#fig{i}'>{html.escape(t)}</a>" for i, (t, _) in enumerate(figs)) + "</nav>",
    ]
    for i, (t, fig) in enumerate(figs):
        div = fig.to_html(
            full_html=False,
            include_plotlyjs=(True if plotlyjs == "inline" else "cdn") if i == 0 else False,
            div_id=f"plot{i}",
            config={"displaylogo": False, "responsive": True},
        )
        parts.append(f"<h2 id='fig{i}'>{html.escape(t)}</h2>\n{div}")
    parts.append("</body></html>")
    return "\n".join(parts)
