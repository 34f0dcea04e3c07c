"""Writing results: JSON (atomic), per-IO records (CSV or Parquet), and the terminal summary."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import numpy as np

from simcore.errors import ConfigError


def atomic_write_text(path: str | Path, text: str) -> None:
    """Write ``text`` to ``path`` via a temporary file + rename (no partial file on failure)."""
    path = Path(path)
    if path.parent and not path.parent.exists():
        raise ConfigError(f"output directory does not exist: {path.parent}")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent or ".")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_json(path: str | Path, result: dict) -> None:
    from stacksim.fio_output import stamped  # fio's wall-clock fields, for fio-shaped results

    atomic_write_text(path, json.dumps(stamped(result), indent=2, sort_keys=False) + "\n")


def check_records_path(path: str) -> None:
    suffix = Path(path).suffix.lower()
    if suffix not in (".csv", ".parquet"):
        raise ConfigError(f"--records {path}: use a .csv or .parquet file name")
    if suffix == ".parquet":
        try:
            import pyarrow  # noqa: F401
        except ImportError:
            raise ConfigError("--records *.parquet needs pyarrow (pip install pyarrow); or use a .csv name") from None


def write_records(path: str | Path, table: np.ndarray) -> None:
    """Per-IO records, one row per IO (times in ns)."""
    path = Path(path)
    if path.suffix.lower() == ".parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        t = pa.table({name: table[name] for name in table.dtype.names})
        tmp = path.with_name(f".{path.name}.tmp")
        pq.write_table(t, tmp)
        os.replace(tmp, path)
        return
    names = table.dtype.names
    lines = [",".join(names)]
    for row in table.tolist():
        lines.append(",".join(f"{v:.1f}" if isinstance(v, float) else str(v) for v in row))
    atomic_write_text(path, "\n".join(lines) + "\n")


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
