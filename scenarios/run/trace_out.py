"""A run's per-IO records as the traces other tools write: blkparse text, fio latency logs and MSR
Cambridge CSV (``stacksim run --records FILE --records-format blkparse|fiolog|msr``), so that a
simulated run can be put beside a real ``blktrace`` or ``fio`` run with the usual tools, and read back
by stacksim's own readers (:mod:`scenarios.inputs.traces`; ``stacksim validate --trace``).

What each format holds (times from the records, :data:`simcore.stats.RECORD_FIELDS`; a run's clock
starts at 0):

* **blkparse** (``blkparse -i DEV`` default output, ``%D %2c %8s %5T.%9t %5p %2a %3d``): per IO a
  ``Q`` at the application's submission (``t_submit_ns``: the time stacksim's ``validate --trace``
  compares a Q with), a ``D`` at the dispatch to the driver (``t_dispatch_ns``: the doorbell) and a
  ``C`` at the driver's completion (``t_reaped_ns``), time-sorted. Device ``259,N`` (the NVMe block
  major, N the SSD's index), the submitting CPU, a sequence number, pid ``1000 + thread`` (Q and D;
  the C's pid is 0, the interrupted idle task's), RWBS ``R``/``W`` (a trim ``D``), ``sector +
  sectors`` in 512 B units, ``[fio]`` (``[0]`` on C).
* **fiolog** (fio's ``write_lat_log`` with ``log_offset=1`` and ``log_issue_time=1``): ``time (ms),
  latency (ns), direction (0 read, 1 write, 2 trim), block size, offset, priority (0), issue time
  (ns)``, in completion order; the time is the completion (``t_complete_ns``) in whole ms, the
  latency ``t_complete_ns - t_submit_ns`` (fio's lat), the issue time ``t_submit_ns``. fio writes one
  log per job (``per_job_logs=1``): a run of several threads writes one file per thread,
  ``NAME.1.log``, ``NAME.2.log``, ... for ``NAME.log`` (threads in order of their ids).
* **msr** (MSR Cambridge's CSV): ``timestamp (100 ns ticks), hostname, disk number, Read|Write,
  offset, size, response time (100 ns ticks)`` in issue order; the timestamp is ``t_submit_ns``, the
  response time ``t_complete_ns - t_submit_ns`` (at least one tick), the hostname ``t`` + the
  thread (one submitter per host and disk, as the closed replay reads it), the disk the SSD's index.
  Trims are left out (the format has none).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from simcore.errors import ConfigError

__all__ = ["TRACE_FORMATS", "blkparse_lines", "fio_log_lines", "msr_lines", "per_thread_paths", "trace_lines"]

TRACE_FORMATS = ("blkparse", "fiolog", "msr")
SECTOR = 512
#: the block major of NVMe namespaces (Linux's BLOCK_EXT_MAJOR): a namespace is 259,N
NVME_MAJOR = 259
PID_BASE = 1000
_DDIR = {"read": 0, "write": 1, "trim": 2}


def _ns(x) -> np.ndarray:
    return np.rint(np.asarray(x, dtype=np.float64)).astype(np.int64)


def _check_offsets(rec: np.ndarray, fmt: str) -> None:
    if len(rec) and (rec["offset"] < 0).any():
        raise ConfigError(f"--records-format {fmt}: these records have no byte offsets (a server run's)")


def blkparse_lines(rec: np.ndarray) -> list[str]:
    """blkparse's default text for the records: Q, D and C per IO, time-sorted."""
    _check_offsets(rec, "blkparse")
    n = len(rec)
    t = np.concatenate([_ns(rec["t_submit_ns"]), _ns(rec["t_dispatch_ns"]), _ns(rec["t_reaped_ns"])])
    kind = np.repeat(np.arange(3), n)
    idx = np.tile(np.arange(n), 3)
    order = np.lexsort((kind, t))
    ops = rec["op"].tolist()
    sectors = (rec["offset"] // SECTOR).tolist()
    counts = (-(-rec["bytes"] // SECTOR)).tolist()
    cpus = rec["cpu"].tolist()
    pids = (rec["thread"] + PID_BASE).tolist()
    devs = rec["device"].tolist()
    tl, kl, il = t[order].tolist(), kind[order].tolist(), idx[order].tolist()
    out = []
    for seq, (ti, k, i) in enumerate(zip(tl, kl, il), start=1):
        rwbs = "R" if ops[i] == "read" else "W" if ops[i] == "write" else "D"
        action, pid, comm = ("Q", pids[i], "fio") if k == 0 else ("D", pids[i], "fio") if k == 1 else ("C", 0, "0")
        dev = f"{NVME_MAJOR},{devs[i]}"
        out.append(
            f"{dev:>8s} {cpus[i]:2d} {seq:8d} {ti // 10**9:5d}.{ti % 10**9:09d} {pid:5d}  {action} "
            f"{rwbs:>3s} {sectors[i]} + {counts[i]} [{comm}]"
        )
    return out


def fio_log_lines(rec: np.ndarray) -> list[str]:
    """fio latency-log lines (``log_offset=1``, ``log_issue_time=1``) in completion order."""
    _check_offsets(rec, "fiolog")
    sub, done = _ns(rec["t_submit_ns"]), _ns(rec["t_complete_ns"])
    order = np.argsort(done, kind="stable")
    lat = np.maximum(done - sub, 1)
    cols = zip(
        (done[order] // 10**6).tolist(),
        lat[order].tolist(),
        [_DDIR[o] for o in rec["op"][order].tolist()],
        rec["bytes"][order].tolist(),
        rec["offset"][order].tolist(),
        sub[order].tolist(),
    )
    return [f"{ms}, {la}, {d}, {bs}, {off}, 0, {issue}" for ms, la, d, bs, off, issue in cols]


def msr_lines(rec: np.ndarray) -> list[str]:
    """MSR Cambridge CSV lines in issue order (trims left out)."""
    _check_offsets(rec, "msr")
    rec = rec[rec["op"] != "trim"]
    sub = _ns(rec["t_submit_ns"])
    order = np.argsort(sub, kind="stable")
    ticks = (sub // 100)[order].tolist()
    resp = np.maximum(np.rint((rec["t_complete_ns"] - rec["t_submit_ns"]) / 100.0), 1).astype(np.int64)[order]
    cols = zip(
        ticks,
        rec["thread"][order].tolist(),
        rec["device"][order].tolist(),
        rec["op"][order].tolist(),
        rec["offset"][order].tolist(),
        rec["bytes"][order].tolist(),
        resp.tolist(),
    )
    return [
        f"{tk},t{th},{dev},{'Read' if op == 'read' else 'Write'},{off},{nb},{rt}"
        for tk, th, dev, op, off, nb, rt in cols
    ]


def per_thread_paths(path: str | Path, threads: list[int]) -> list[Path]:
    """fio's per-job log names for ``path``: itself for one thread, else ``NAME.1.log``, ... in order."""
    p = Path(path)
    if len(threads) <= 1:
        return [p]
    return [p.with_name(f"{p.stem}.{i}{p.suffix}") for i in range(1, len(threads) + 1)]


def trace_lines(rec: np.ndarray, fmt: str) -> list[str]:
    """The records as ``fmt`` (one of :data:`TRACE_FORMATS`) text lines."""
    return {"blkparse": blkparse_lines, "fiolog": fio_log_lines, "msr": msr_lines}[fmt](rec)
