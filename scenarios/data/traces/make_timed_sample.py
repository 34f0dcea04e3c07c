"""Generate the synthetic timed sample trace ``scenarios/data/traces/blkparse_qdc_sample.txt``.

    python -m scenarios.data.traces.make_timed_sample [OUT_FILE]   # default: beside this module

The sample is **synthetic**: no real machine was traced. It is what stacksim itself predicts for
this documented model, written as blkparse text with Q, D and C events, so that ``stacksim
validate --trace`` and ``stacksim calibrate --trace`` have a small example whose answer is known:

* platform ``optane900p-e3-1230v5``, one io_uring submitter per logical CPU polling for its
  completions (``REPLAY_SETS``: ``replay.hipri=1``, ``queue.io_poll=1``; seed 1), with its SSD's
  media service replaced by ``DEVICE_SETS``, a
  flash-like device: reads 12 us + 90 ns per KiB beyond 4 KiB, writes 15 us + 120 ns per KiB,
  lognormal spread of 15% (reads) and 20% (writes) of the 4 KiB time;
* ``N_IOS`` IOs with Poisson arrivals at ``RATE_IOPS`` (numpy seed ``SEED``); 60% reads of 4, 16
  or 64 KiB (weights 0.5/0.3/0.2), 40% writes of 4 or 16 KiB (0.6/0.4); random 4 KiB-aligned
  offsets within 64 GiB; one device ``259,0``.

Each IO's Q is its arrival, its D is Q plus the model's submit-to-dispatch time and its C is Q
plus the model's submit-to-driver-completion time (the stamps ``validate --trace`` compares, see
:mod:`scenarios.studies.trace_compare`). Replaying the sample on the same model therefore reproduces it
(zero error), and ``calibrate --trace`` recovers ``DEVICE_SETS`` (``tests/test_trace_validate.py``).
The same IOs can be written as an fio latency log (:func:`write_fio_lat_log`).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from models.ioengines.trace_io import TraceIO
from scenarios.inputs.traces.timed import TimedIO
from scenarios.run.replay import resolve_replay
from scenarios.studies.trace_compare import replay_timed

SAMPLE = Path(__file__).resolve().parent / "blkparse_qdc_sample.txt"
PLATFORM = "optane900p-e3-1230v5"
DEVICE_SETS = {
    "ssd.read.base_ns": 12_000.0,
    "ssd.read.per_kib_ns": 90.0,
    "ssd.read.sd_ns": 1_800.0,
    "ssd.write.base_ns": 15_000.0,
    "ssd.write.per_kib_ns": 120.0,
    "ssd.write.sd_ns": 3_000.0,
}
REPLAY_SETS = {"replay.hipri": 1, "queue.io_poll": 1}
N_IOS = 1000
RATE_IOPS = 2000.0
SEED = 20261124
DEVICE = "259,0"


def synth_ios(n: int = N_IOS, rate_iops: float = RATE_IOPS, seed: int = SEED) -> list[TraceIO]:
    """The sample's IOs (arrival ns from 0, op, offset, size)."""
    rng = np.random.default_rng(seed)
    t = np.concatenate([[0.0], np.cumsum(rng.exponential(1e9 / rate_iops, n - 1))]).round().astype(np.int64)
    reads = rng.random(n) < 0.6
    rsize = rng.choice([4096, 16384, 65536], size=n, p=[0.5, 0.3, 0.2])
    wsize = rng.choice([4096, 16384], size=n, p=[0.6, 0.4])
    offsets = rng.integers(0, 64 * 2**30 // 4096, size=n) * 4096
    return [
        TraceIO(
            int(t[i]),
            "read" if reads[i] else "write",
            int(offsets[i]),
            int(rsize[i] if reads[i] else wsize[i]),
            DEVICE,
            i + 1,
        )
        for i in range(n)
    ]


class _Synthetic:
    """A :class:`~scenarios.inputs.traces.timed.TimedReader` stand-in over in-memory IOs."""

    format = "synthetic"
    lines_read = bad_lines = out_of_order = 0
    approx_arrivals = False

    def __init__(self, ios: list[TraceIO]) -> None:
        self.ios = ios
        self.path = Path("<synthetic>")
        self.skipped: dict[str, int] = {}

    def __iter__(self):
        return (TimedIO(io, 1.0) for io in self.ios)

    def describe(self) -> str:
        return f"{len(self.ios)} synthetic IOs"


def simulate_ios(ios: list[TraceIO], platform: str = PLATFORM, sets: dict | None = None, seed: int = 1) -> list[dict]:
    """Replay ``ios`` and return, per IO in arrival order, its arrival and the model's stamps
    relative to submission (ns): ``q2d`` (dispatch), ``q2c`` (driver completion), ``lat``
    (reaped in user space)."""
    sets = {**REPLAY_SETS, **(DEVICE_SETS if sets is None else sets)}
    cfg = resolve_replay("<synthetic>", platform=platform, sets=sets, seed=seed)
    out: dict[int, dict] = {}

    def consume(t: TimedIO, req) -> None:
        out[t.io.line] = {
            "io": t.io,
            "q2d": req.t_dispatch - req.t_submit,
            "q2c": req.t_reaped - req.t_submit,
            "lat": req.t_complete - req.t_submit,
        }

    replay_timed(_Synthetic(ios), cfg, consume)
    return [out[k] for k in sorted(out)]


def blkparse_lines(rows: list[dict], base_ns: int = 0) -> list[str]:
    """blkparse default-format Q, D and C lines for ``rows`` (:func:`simulate_ios`), time-sorted."""
    events = []
    for r in rows:
        io = r["io"]
        q = base_ns + io.t_ns
        rwbs = "R" if io.op == "read" else "W"
        sec = f"{io.offset // 512} + {io.nbytes // 512}"
        events.append((q, 0, f"Q {rwbs:>3s} {sec} [fio]", 4242))
        events.append((q + round(r["q2d"]), 1, f"D {rwbs:>3s} {sec} [fio]", 4242))
        events.append((q + round(r["q2c"]), 2, f"C {rwbs:>3s} {sec} [0]", 0))
    events.sort()
    return [
        f"{DEVICE:>8s} {1:2d} {i + 1:8d} {t // 10**9:5d}.{t % 10**9:09d} {pid:5d}  {text}"
        for i, (t, _, text, pid) in enumerate(events)
    ]


def fio_lat_log_lines(rows: list[dict], field: str = "lat", issue_time: bool = True) -> list[str]:
    """fio latency-log lines (``log_offset=1``; with ``issue_time`` the issue time column of
    ``log_issue_time=1``), in completion order; the latency is ``rows[i][field]``."""
    entries = []
    for r in rows:
        io = r["io"]
        lat = round(r[field])
        done = io.t_ns + lat
        cols = [str(done // 10**6), str(lat), "0" if io.op == "read" else "1", str(io.nbytes), str(io.offset), "0"]
        if issue_time:
            cols.append(str(io.t_ns))
        entries.append((done, ", ".join(cols)))
    entries.sort()
    return [e[1] for e in entries]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    out = Path(argv[0]) if argv else SAMPLE
    rows = simulate_ios(synth_ios())
    out.write_text("\n".join(blkparse_lines(rows, base_ns=1_000_000)) + "\n", encoding="utf-8")
    print(f"wrote {out}: {len(rows)} IOs, {3 * len(rows)} events")
    return 0


if __name__ == "__main__":
    sys.exit(main())
