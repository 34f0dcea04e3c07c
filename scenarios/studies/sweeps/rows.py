"""One result row per run: identity columns, flattened summary metrics, a compact latency CDF.

Column order: ``sweep, point, <axes...>, replicate, seed, completion, config_sha, code_sha``
(:func:`simcore.fingerprint.code_sha` of the code that computed the row), then the
summary metrics flattened with dotted names (``latency_us.p99``, ``power_w.system``,
``layers.block``, ``mem_ops_per_s.block/``, ...), derived rates, ``sim.*``, and finally two JSON
columns: ``cdf`` (latency percentiles) and ``config`` (the full resolved configuration).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from policies.completion import select_policy_name
from simcore import fingerprint

#: columns that depend on the machine's speed, not on the simulation (excluded from identity checks)
TIMING_COLUMNS = ("sim.wall_s", "sim.real_time_factor", "sim.ios_per_wall_s")
#: columns that are always text, even when they look like numbers
TEXT_COLUMNS = ("sweep", "point", "completion", "config_sha", "code_sha", "config", "cdf")
#: summary entries not flattened: duplicates, per-CPU detail, time series
_SKIP = {
    "layers_ns_per_io",
    "layers_ns_per_io_per_cpu",
    "interrupts_per_s_per_cpu",
    "cstate_residency",
    "power_samples",
}


def completion_label(config) -> str:
    """The completion mode the Linux rules select for each job: ``interrupt``, ``classic``,
    ``hybrid`` (adaptive), ``hybrid-<N>us`` (fixed sleep) or a plug-in name; ``+``-joined.
    A storage-server run: its core-scheduling policy (``server.policy``)."""
    server = getattr(config, "server", None)
    if server is not None and hasattr(server, "policy"):
        return server.policy
    q = config.queue
    labels = []
    for job in config.jobs:
        name = select_policy_name(q, job.hipri, job.ioengine)
        if name == "classic-poll":
            name = "classic"
        elif name == "hybrid-poll":
            name = "hybrid" if q.io_poll_delay == 0 else f"hybrid-{q.io_poll_delay}us"
        if name not in labels:
            labels.append(name)
    return "+".join(labels)


def flatten(data: dict, prefix: str = "") -> dict[str, Any]:
    """Numeric and text leaves of a nested dict with dotted names (lists of text are ``+``-joined,
    booleans become 0/1, other lists are left out)."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            out.update(flatten(value, name + "."))
        elif isinstance(value, bool):
            out[name] = int(value)
        elif isinstance(value, (int, float, str)) or value is None:
            out[name] = value
        elif isinstance(value, (np.integer, np.floating)):
            out[name] = value.item()
        elif isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
            out[name] = "+".join(value)
    return out


def summary_columns(summary: dict) -> dict[str, Any]:
    """Flattened summary metrics plus mean C-state residency over CPUs and per-second rates."""
    out = flatten({k: v for k, v in summary.items() if k not in _SKIP})
    res = summary.get("cstate_residency") or {}
    if res:
        states: dict[str, list[float]] = {}
        for key, per_cpu in res.items():
            if not isinstance(per_cpu, dict):  # already a mean over CPUs (storage server): state -> fraction
                states.setdefault(key, []).append(per_cpu)
                continue
            for st, frac in per_cpu.items():
                states.setdefault(st, []).append(frac)
        for st, fracs in states.items():
            out[f"cstate_residency_mean.{st}"] = float(np.mean(fracs))
    seen: dict[str, int] = {}
    for entry in summary.get("per_job") or ():  # each job (tenant) apart: job.NAME.iops, job.NAME.latency_us.p99
        name = str(entry.get("name", "job"))
        k = seen[name] = seen.get(name, -1) + 1
        key = name if not k else f"{name}#{k}"  # (fio's clones of a job without group_reporting)
        out.update(flatten({f: v for f, v in entry.items() if f not in ("name", "ioengine")}, f"job.{key}."))
    iops = summary.get("iops", 0.0)
    for per_io, per_s in (
        ("context_switches_per_io", "context_switches_per_s"),
        ("interrupts_per_io", "interrupts_per_s"),
    ):
        if per_io in summary:
            out[per_s] = summary[per_io] * iops
    return out


def latency_cdf(jobs: list[dict]) -> dict[str, list[float]]:
    """Completion-latency percentiles (us) per op over all jobs (mixture of the jobs' CDFs
    weighted by IO count): ``{"pct": [...], "read_us": [...], "write_us": [...]}``."""
    out: dict[str, list[float]] = {}
    pct: list[float] | None = None
    for op in ("read", "write"):
        parts = []
        for job in jobs:
            lat = (job.get(op) or {}).get("clat_ns") or {}
            if lat.get("N") and lat.get("percentile"):
                items = sorted((float(p), float(v)) for p, v in lat["percentile"].items())
                parts.append((np.array([p for p, _ in items]), np.array([v for _, v in items]), lat["N"]))
        if not parts:
            continue
        if pct is None:
            pct = parts[0][0].tolist()
        q = np.asarray(pct)
        if len(parts) == 1:
            values = np.interp(q, parts[0][0], parts[0][1])
        else:
            grid = np.unique(np.concatenate([v for _, v, _ in parts]))
            total = sum(n for _, _, n in parts)
            mix = sum(n * np.interp(grid, v, p, left=0.0, right=100.0) for p, v, n in parts) / total
            values = np.interp(q, mix, grid)
        out[f"{op}_us"] = [round(float(v) / 1e3, 3) for v in values]
    if pct is not None:
        out["pct"] = pct
    return out


def task_code_sha(task) -> str:
    """The code fingerprint of this process for ``task`` (the simulator and the task's plug-ins)."""
    return fingerprint.code_sha(getattr(task.config, "plugins", ()))


def make_row(task, result: dict) -> dict[str, Any]:
    """The row of one finished task (see the module docstring for the columns)."""
    row: dict[str, Any] = {"sweep": task.sweep, "point": task.point}
    row.update(task.axes)
    row.update(
        {
            "replicate": task.replicate,
            "seed": task.seed,
            "completion": completion_label(task.config),
            "config_sha": task.config_sha,
            "code_sha": task_code_sha(task),  # of the process that ran it (a Dask worker may differ)
        }
    )
    for key, value in summary_columns(result["summary"]).items():
        row.setdefault(key, value)  # an axis column keeps its value (the server summary has e.g. "policy")
    row.update(flatten(result.get("sim", {}), "sim."))
    cdf = result.get("latency_cdf")  # storage-server runs compute theirs from the request records
    row["cdf"] = json.dumps(cdf if cdf is not None else latency_cdf(result.get("jobs", [])), separators=(",", ":"))
    row["config"] = task.config_json
    return row
