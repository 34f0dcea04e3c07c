"""Writing results as data: JSON and per-IO records (CSV or Parquet).

Files are written all-or-nothing through :mod:`simcore.outfile` (checked before the run, staged,
renamed into place; ``-`` is standard output). The terminal text lives in :mod:`stacksim.output`.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from scenarios.fio.output import stamped
from simcore.errors import ConfigError
from simcore.outfile import STDOUT, Outputs, check_output, write_text


def json_text(result: dict) -> str:
    """The JSON text of a result (fio's wall-clock fields stamped, for fio-shaped results)."""
    return json.dumps(stamped(dict(result)), indent=2, sort_keys=False) + "\n"


def write_json(path: str | Path, result: dict, what: str | None = "--json") -> None:
    write_text(path, json_text(result), what=what)


def check_records_path(path: str) -> None:
    """``--records``: a .csv or .parquet name (or ``-``, CSV on standard output) that can be written."""
    suffix = Path(path).suffix.lower()
    if path != STDOUT and suffix not in (".csv", ".parquet"):
        raise ConfigError(f"--records {path}: use a .csv or .parquet file name")
    if suffix == ".parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise ConfigError("--records *.parquet needs pyarrow (pip install pyarrow); or use a .csv name") from None
    check_output(path, "--records")


def stage_records(out: Outputs, path: str | Path, table: np.ndarray) -> None:
    """Per-IO records, one row per IO (times in ns), as one output of the transaction ``out``."""
    if Path(path).suffix.lower() == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        t = pa.table({name: table[name] for name in table.dtype.names})
        out.write(path, lambda fh: pq.write_table(t, fh), binary=True, what="--records")
        return
    names = table.dtype.names
    lines = [",".join(names)]
    for row in table.tolist():
        lines.append(",".join(f"{v:.1f}" if isinstance(v, float) else str(v) for v in row))
    out.text(path, "\n".join(lines) + "\n", what="--records")


def write_records(path: str | Path, table: np.ndarray) -> None:
    """Per-IO records, one row per IO (times in ns)."""
    with Outputs() as out:
        stage_records(out, path, table)
