"""Writing results: JSON, per-IO records (CSV or Parquet), and the terminal summary.

Files are written all-or-nothing through :mod:`simcore.outfile` (checked before the run, staged,
renamed into place; ``-`` is standard output).
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import numpy as np

from simcore.errors import ConfigError
from simcore.outfile import STDOUT, Outputs, check_output, data_to_stdout, write_text


def atomic_write_text(path: str | Path, text: str, what: str | None = None) -> None:
    """Write ``text`` to ``path`` all-or-nothing (:func:`simcore.outfile.write_text`)."""
    write_text(path, text, what=what)


def json_text(result: dict) -> str:
    """The JSON text of a result (fio's wall-clock fields stamped, for fio-shaped results)."""
    from stacksim.fio_output import stamped

    return json.dumps(stamped(result), indent=2, sort_keys=False) + "\n"


def write_json(path: str | Path, result: dict, what: str | None = "--json") -> None:
    atomic_write_text(path, json_text(result), what=what)


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


#: options of the sub-commands that name an output file ('-' = standard output where allowed)
OUTPUT_OPTIONS = {"json_out": "--json", "records": "--records", "trace": "--trace", "output": "-o"}


def stdout_outputs(args):
    """A context for running a sub-command: with one of its outputs on standard output ('-'),
    the command's own text (summary, tables) goes to standard error; two such outputs are an error."""
    dashes = [opt for attr, opt in OUTPUT_OPTIONS.items() if getattr(args, attr, None) == STDOUT]
    if len(dashes) > 1:
        raise ConfigError(f"only one output can go to standard output ('-'), not {' and '.join(dashes)}")
    return data_to_stdout() if dashes else contextlib.nullcontext()


def latency_line(s: dict) -> str:
    lat = s["latency_us"]
    return (f"  latency us: mean {lat['mean']:.2f}  p50 {lat['p50']:.2f}  p90 {lat['p90']:.2f}  p99 {lat['p99']:.2f}"
            f"  p99.9 {lat['p99_9']:.2f}  max {lat['max']:.2f}")


def power_energy_lines(s: dict) -> list[str]:
    pw = s["power_w"]
    return [f"  power W: CPU {pw['cpu']:.1f}  SSD {pw['ssd']:.1f}  DRAM {pw['dram']:.1f}  other {pw['other']:.1f}  system {pw['system']:.1f}",
            f"  energy {s['energy_j']:.2f} J   {s['bytes_per_joule'] / 1e6:.2f} MB/J   {s['energy_j_per_million_ios']:.1f} J per million IOs"]


def format_summary(result: dict) -> str:
    """A readable terminal summary of one run."""
    s = result["summary"]
    sim = result["sim"]
    out = [
        f"stacksim {result['scenario']} on {result['platform']} (seed {result['seed']}, policies: {', '.join(s['completion_policies'])})",
        f"  IOPS {s['iops']:,.0f}   bandwidth {s['bandwidth_mb_s']:,.1f} MB/s   IOs {s['ios']:,}",
        latency_line(s),
        f"  CPU utilization {100 * s['cpu_utilization']:.1f}% of all logical CPUs   context switches/IO {s['context_switches_per_io']:.3f}   interrupts/IO {s['interrupts_per_io']:.3f}",
        *power_energy_lines(s),
        "  CPU time per IO by layer (ns): " + "  ".join(f"{k} {v:.0f}" for k, v in s["layers"].items() if v >= 0.5),
    ]
    from models.cpu.power_limit import format_limit

    if s.get("freq_transitions"):
        freqs = "  ".join(f"{core} {ghz:.2f}" for core, ghz in list(s["freq_ghz_mean"].items())[:8])
        out.append(f"  CPU frequency (GHz, mean): {freqs}   P-state transitions {s['freq_transitions']:,}")
    if format_limit(s):
        out.append(format_limit(s))
    busy = [(cpu, row) for cpu, row in s["cstate_residency"].items() if row.get("C0", 0) > 0.001]
    for cpu, row in busy[:8]:
        out.append(f"  {cpu} residency: " + "  ".join(f"{k} {100 * v:.1f}%" for k, v in row.items() if v >= 0.0005))
    if result.get("ignored_fio_options"):
        out.append("  fio options accepted without effect on the simulation: " + ", ".join(result["ignored_fio_options"]))
    rtf = sim["real_time_factor"]
    out.append(
        f"  simulated {sim['simulated_s']:.3f} s in {sim['wall_s']:.2f} s wall ({sim['events']:,} events, "
        f"{(rtf or 0):.3f} simulated s per wall s, {sim['ios_per_wall_s'] or 0:,.0f} IOs per wall s)"
    )
    return "\n".join(out)
