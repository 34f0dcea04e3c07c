"""Statistics helpers: percentiles in fio's shape, warm-up snapshots, per-IO record tables."""

from __future__ import annotations

import numpy as np

#: fio's default percentile list
FIO_PERCENTILES = (1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99)

#: the per-IO record (``result.records``, ``--records``) of host and server runs alike: the IO's id,
#: fio job, thread, the CPU that completed it, direction, bytes, and its times (ns): submitted by the
#: application (server: sent by the client), dispatched to the driver (server: NVMe submit), device
#: start and end, completion entry posted, reaped by the CPU, complete (server: response received)
RECORD_FIELDS = (
    ("io", np.int64), ("job", np.int32), ("thread", np.int32), ("cpu", np.int32), ("op", "U5"), ("bytes", np.int64),
    ("t_submit_ns", np.float64), ("t_dispatch_ns", np.float64), ("t_dev_start_ns", np.float64), ("t_dev_end_ns", np.float64),
    ("t_cqe_ns", np.float64), ("t_reaped_ns", np.float64), ("t_complete_ns", np.float64), ("device_service_ns", np.float64),
)


def records_array(columns: dict) -> np.ndarray:
    """The one per-IO record format (:data:`RECORD_FIELDS`) from equal-length columns by field
    name; a field not given is -1 (integers) or NaN (times)."""
    n = len(next(iter(columns.values()))) if columns else 0
    arr = np.empty(n, dtype=[(name, t) for name, t in RECORD_FIELDS])
    for name, t in RECORD_FIELDS:
        if name in columns:
            arr[name] = columns[name]
        elif t is np.float64:
            arr[name] = np.nan
        elif t != "U5":
            arr[name] = -1
    return arr


def records_table(reqs) -> np.ndarray:
    """One compact structured array row per completed host IO (:class:`models.os.request.Request`)."""
    cols = {"io": [r.id for r in reqs], "job": [r.job for r in reqs], "thread": [r.task.tid for r in reqs],
            "cpu": [r.cpu for r in reqs], "op": [r.op for r in reqs], "bytes": [r.own_bytes for r in reqs]}
    for name, attr in (("t_submit_ns", "t_submit"), ("t_dispatch_ns", "t_dispatch"), ("t_dev_start_ns", "t_dev_start"),
                       ("t_dev_end_ns", "t_dev_end"), ("t_cqe_ns", "t_cqe"), ("t_reaped_ns", "t_reaped"),
                       ("t_complete_ns", "t_complete"), ("device_service_ns", "device_service_ns")):
        cols[name] = [getattr(r, attr) for r in reqs]
    return records_array(cols)


def latency_summary_us(lat_ns: np.ndarray) -> dict:
    """Summary latency in us: mean, p50, p90, p99, p99_9, max."""
    if lat_ns.size == 0:
        return {k: 0.0 for k in ("mean", "p50", "p90", "p99", "p99_9", "max")}
    p50, p90, p99, p999 = np.percentile(lat_ns, [50, 90, 99, 99.9])
    return {
        "mean": float(lat_ns.mean()) / 1e3,
        "p50": float(p50) / 1e3,
        "p90": float(p90) / 1e3,
        "p99": float(p99) / 1e3,
        "p99_9": float(p999) / 1e3,
        "max": float(lat_ns.max()) / 1e3,
    }
