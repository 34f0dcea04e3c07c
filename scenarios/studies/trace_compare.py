"""``stacksim validate --trace``: replay a trace with measured per-IO timing and compare, IO by IO
and as distributions, the simulated latency with the measured one.

    v = validate_trace("scenarios/data/traces/blkparse_qdc_sample.txt", platform="optane900p-e3-1230v5")
    v["classes"][0]["latency"]["error_pct"]["p99"]     # simulated p99 / measured p99 - 1, in %
    print(format_trace_validation(v))

The trace (:mod:`scenarios.inputs.traces.timed`) is replayed open loop at its recorded arrival times, as
``stacksim replay`` does (:class:`~models.ioengines.replay.TraceReplayer`, same settings and
``--set`` keys). Every replayed IO is paired with its trace record, and the two latencies go into
per-class accumulators: **classes** are direction x size class (the smallest power of two >= the
size, at least 4 KiB: ``read 4k`` holds reads up to 4 KiB, ``read 8k`` those in (4, 8] KiB, ...),
plus ``all``. Per class: mean (exact), p50/p90/p99/p99.9 (a percentile is reported only with at
least 1/(1-q) IOs: 100 for p99, 1000 for p99.9), their relative errors (simulated / measured - 1),
the two-sample Kolmogorov-Smirnov distance between the distributions (``scipy.stats.ks_2samp``),
and the per-IO error. Error over time: per second of trace time (per 10 ms to 1 s bins in a trace
shorter than 20 s, so that it still shows a shape), the mean simulated / mean measured latency of
the IOs that arrived in it.

What is compared (the model's stamps on each request, :class:`~models.os.block.request.Request`):

=============  ====================  ======================================================
measured       simulated             model stages
=============  ====================  ======================================================
blkparse Q->C  t_reaped - t_submit   submission (the trace's Q time) to the driver's completion
               (a trace of D and C events only: its latency is D->C, compared as below)
blkparse Q->D  t_dispatch - t_submit the submit call's kernel path, block layer, IO scheduler
blkparse D->C  t_reaped - t_dispatch doorbell, device (fetch, media, link, post), IRQ, driver
MSR, fio       t_complete - t_submit what ``stacksim replay`` reports: to the reap in user space
=============  ====================  ======================================================

Memory is bounded: the trace is streamed, the replayed requests are consumed as they complete
(none is kept), and the distributions are exact up to ``SAMPLE_CAP`` IOs per class and a uniform
reservoir sample (fixed seed) of that many beyond; means and counts stay exact.
"""

from __future__ import annotations

import gc
import heapq
import math
import time
import warnings
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from scenarios.inputs.traces.timed import TimedIO, TimedReader, open_timed
from scenarios.run.assembly import build_host
from scenarios.run.replay import ReplayConfig, resolve_replay
from scenarios.run.replay_modes import build_replay, choose_mode, mode_report
from simcore.errors import ConfigError
from simcore.numfmt import signed
from simcore.progress import RunProgress

__all__ = [
    "validate_trace",
    "replay_timed",
    "size_class",
    "class_label",
    "format_trace_validation",
    "SAMPLE_CAP",
    "QUANTILES",
    "exceeding",
]

SECTOR = 512
#: per class, IOs kept for the distributions (exact below, a reservoir sample above)
SAMPLE_CAP = 100_000
QUANTILES = (("p50", 50.0), ("p90", 90.0), ("p99", 99.0), ("p99.9", 99.9))
#: time resolution of each format's latencies (MSR: FILETIME ticks); simulated times are rounded to it
RESOLUTION_NS = {"blkparse": 1.0, "msr": 100.0, "fiolog": 1.0}
#: per-IO lists the models keep and nothing here reads (the replayer's issue lags, the queues' CQE
#: post times) are emptied, and cancelled hrtimers dropped from the CPUs' timer heaps (a CPU that
#: polls without going idle never pops them), and the young garbage collected (the engine turns the
#: cyclic collector off while it runs), every this many IOs, so that memory does not grow with the
#: trace
_TRIM = 65_536


def size_class(nbytes: int) -> int:
    """The size class of an IO: the smallest power of two >= ``nbytes``, at least 4 KiB."""
    return max(4096, 1 << (int(nbytes) - 1).bit_length())


def class_label(op: str, cls: int) -> str:
    return f"{op} {cls // 1024}k"


class _Pairing:
    """Trace records waiting for their replayed request, and requests waiting for completion."""

    def __init__(self) -> None:
        self.waiting: dict[tuple, deque] = {}  # (op, offset, bytes, device) -> deque of TimedIO
        self.by_id: dict[int, TimedIO] = {}

    def expect(self, t: TimedIO, dev: int) -> None:
        io = t.io
        key = (io.op, io.offset, -(-io.nbytes // SECTOR) * SECTOR, dev)
        q = self.waiting.get(key)
        if q is None:
            q = self.waiting[key] = deque()
        q.append(t)

    def submitted(self, reqs) -> None:
        for req in reqs:
            key = (req.op, req.offset, req.nbytes, req.qp.device.index)
            q = self.waiting[key]
            self.by_id[req.id] = q.popleft()
            if not q:
                del self.waiting[key]


def _records(reader: TimedReader, n_devices: int, device_of: dict[str, int]) -> Iterator:
    """Each timed IO as a :data:`~models.ioengines.replay_closed.ClosedRecord` (tagged with itself),
    volumes to devices as :func:`map_volumes` does."""
    for t in reader:
        vol = t.io.volume
        dev = device_of.get(vol)
        if dev is None:
            dev = device_of[vol] = len(device_of) % n_devices
        yield t.io, dev, t.stream, t.done_ns, t.cpu, t


# long: one replay with the trace's records paired to the requests, the run's bookkeeping in one place
def replay_timed(
    reader: TimedReader,
    cfg: ReplayConfig,
    consume: Callable[[TimedIO, Any], None],
    *,
    progress: bool = False,
    mode: str = "open",
    closed_streams: frozenset[str] = frozenset(),
) -> dict:
    """Replay ``reader``'s IOs on ``cfg``'s platform (its replay settings and seed), ``mode`` open
    (:class:`~models.ioengines.replay.TraceReplayer`), closed
    (:class:`~models.ioengines.replay_closed.ClosedReplayer`) or mixed (``closed_streams`` closed,
    the others open: :func:`~scenarios.run.replay_modes.build_replay`); call
    ``consume(timed_io, request)`` for each IO as it is reaped. Returns what was replayed."""
    host = build_host(cfg.platform, cfg.queue, cfg.seed)
    device_of: dict[str, int] = {}
    pairing = _Pairing()  # open: submissions paired with their records by op, offset, size and device
    by_id = pairing.by_id

    def submitted(req, t: TimedIO) -> None:  # closed: each request tagged with its record
        by_id[req.id] = t

    if mode != "closed":
        host.blk.plug_observer = pairing.submitted  # the open replay's submissions pass here before merging
    replayer, _job = build_replay(
        host,
        cfg.replay,
        _records(reader, len(host.devices), device_of),
        mode,
        closed_streams,
        reaped_ref=reader.format == "blkparse",  # blkparse's C is the driver's completion (t_reaped)
        on_open=lambda rec: pairing.expect(rec[5], rec[1]),
        on_submit=submitted,
    )
    open_part = mode_report(replayer, cfg.replay, cfg.queue)["open_part"]
    last = [0.0]
    ios = [0]

    def take(req) -> None:
        consume(by_id.pop(req.id), req)
        if req.t_complete > last[0]:
            last[0] = req.t_complete
        ios[0] += 1
        if len(open_part.lag) > _TRIM if mode == "open" else ios[0] % _TRIM == 0:
            if open_part is not None:
                del open_part.lag[:]
            for qp in queues:  # CQE post times, kept by the device for statistics nothing here reads
                del qp.hw.posted_times[:]
            for runner in host.runners:  # cancelled hrtimers leave a CPU's heap only when it goes idle
                timers = runner.timers
                timers[:] = [tm for tm in timers if tm.active]
                heapq.heapify(timers)
            gc.collect(0)  # the engine runs with the cyclic collector off: any cycle left is freed here

    queues = [*host.driver.irq_qps.values(), *host.driver.poll_qps.values()]
    host.io_sink = take  # each reaped request is handed on and not kept
    wall0 = time.perf_counter()
    replayer.start()
    if replayer.exhausted and replayer.trace_ios == 0:
        raise ConfigError(f"{reader.path}: no timed read/write IO ({reader.describe()})")
    host.start()
    with RunProgress(end_ns=None, ios=lambda: replayer.completed, enabled=progress, label="replaying").attached(
        host.engine
    ):
        host.engine.run(replayer.done_event)
    how = mode_report(replayer, cfg.replay, cfg.queue)
    return {
        "trace": str(reader.path),
        "format": reader.format,
        "lines_read": reader.lines_read,
        "trace_ios": replayer.trace_ios,
        "completed_ios": replayer.completed,
        "bad_lines": reader.bad_lines,
        "skipped": dict(reader.skipped),
        "out_of_order": reader.out_of_order,
        "volumes": {v: f"ssd{d}" for v, d in device_of.items()},
        "mode": how["mode"],
        "threads": how["threads"],
        "think": how["think"],
        "completion": how["completion"],
        "approx_arrivals": reader.approx_arrivals,
        "simulated_s": max(host.engine.now, last[0]) / 1e9,
        "wall_s": time.perf_counter() - wall0,
        "platform": cfg.platform.name,
        "seed": cfg.seed,
    }


class _Reservoir:
    """Uniform sample of at most ``cap`` rows of ``width`` floats (exact below ``cap``; Vitter's
    algorithm R, fixed seed), in a numpy array grown by doubling."""

    def __init__(self, cap: int, seed: int, width: int) -> None:
        self.cap = cap
        self.data = np.empty((min(cap, 1024), width))
        self.seen = 0
        self._rng = np.random.default_rng(seed)

    @property
    def rows(self) -> np.ndarray:
        return self.data[: min(self.seen, self.cap)]

    def add(self, row: tuple) -> None:
        i = self.seen
        self.seen += 1
        if i < self.cap:
            if i == len(self.data):
                grown = np.empty((min(2 * len(self.data), self.cap), self.data.shape[1]))
                grown[:i] = self.data
                self.data = grown
            self.data[i] = row
            return
        j = int(self._rng.integers(0, self.seen))
        if j < self.cap:
            self.data[j] = row


#: the columns kept per IO: measured and simulated latency, Q->D and D->C (nan when absent),
#: arrival time (s); simulated device service time and host path (for calibration)
_COLS = ("lat_m", "lat_s", "q2d_m", "q2d_s", "d2c_m", "d2c_s", "t_s")


class _Class:
    def __init__(self, label: str, op: str | None, size: int | None, seed: int, cap: int) -> None:
        self.label, self.op, self.size = label, op, size
        self.n = 0
        self.sums = np.zeros(len(_COLS) - 1)
        self.stage_n = 0
        self.sample = _Reservoir(cap, seed, len(_COLS))

    def add(self, row: tuple) -> None:
        self.n += 1
        if row[2] == row[2] or row[4] == row[4]:  # a stage was measured (not nan)
            self.stage_n += 1
        self.sums += np.nan_to_num(row[:-1])
        self.sample.add(row)


def _dist(measured: np.ndarray, simulated: np.ndarray, n: int, mean_m: float, mean_s: float) -> dict:
    """Statistics of one measured/simulated pair of distributions (values in us)."""
    from scipy.stats import ks_2samp

    out: dict[str, Any] = {"measured": {"mean": mean_m}, "simulated": {"mean": mean_s}, "error_pct": {}}
    for name, q in QUANTILES:
        if n * (1.0 - q / 100.0) < 1.0 - 1e-9:
            out["measured"][name] = out["simulated"][name] = None
            continue
        out["measured"][name] = float(np.percentile(measured, q))
        out["simulated"][name] = float(np.percentile(simulated, q))
    for name in ("mean",) + tuple(q[0] for q in QUANTILES):
        m, s = out["measured"][name], out["simulated"][name]
        out["error_pct"][name] = None if m is None or m <= 0 else (s / m - 1.0) * 100.0
    if len(measured) >= 2 and len(simulated) >= 2:
        with warnings.catch_warnings():  # exact p-value infeasible: scipy falls back to the asymptotic one
            warnings.simplefilter("ignore", RuntimeWarning)
            ks = ks_2samp(measured, simulated)
        out["ks"] = {"statistic": float(ks.statistic), "pvalue": float(ks.pvalue)}
    else:
        out["ks"] = {"statistic": None, "pvalue": None}
    io_err = (simulated / measured - 1.0) * 100.0
    out["io_error_pct"] = {
        "mean_abs": float(np.mean(np.abs(io_err))),
        "p50": float(np.percentile(io_err, 50)),
        "p90_abs": float(np.percentile(np.abs(io_err), 90)),
    }
    return out


class _Timeline:
    """Mean measured and simulated latency per time bin of arrival: bins of 1 s, or finer (down to
    10 ms) while the trace is short; at most ``MAX_BINS`` bins (coarser, x10, beyond)."""

    MAX_BINS = 4096

    def __init__(self) -> None:
        self.bin_s = 0.01
        self.bins: dict[int, list[float]] = {}

    def add(self, t_s: float, measured: float, simulated: float) -> None:
        k = int(t_s / self.bin_s)
        b = self.bins.get(k)
        if b is None:
            if len(self.bins) >= self.MAX_BINS:
                self._coarsen()
                return self.add(t_s, measured, simulated)
            b = self.bins[k] = [0, 0.0, 0.0]
        b[0] += 1
        b[1] += measured
        b[2] += simulated

    def _coarsen(self) -> None:
        old, self.bins = self.bins, {}
        factor = 10 if self.bin_s >= 1.0 else round(1.0 / self.bin_s) if self.bin_s >= 0.1 else 10
        self.bin_s = self.bin_s * factor
        for k, (n, m, s) in old.items():
            b = self.bins.setdefault(k // factor, [0, 0.0, 0.0])
            b[0] += n
            b[1] += m
            b[2] += s

    def result(self) -> dict:
        if self.bin_s < 1.0 and self.bins and (max(self.bins) + 1) * self.bin_s >= 20.0:
            while self.bin_s < 1.0:  # a trace of 20 s or more: per second
                self._coarsen()
        return {
            "bin_s": self.bin_s,
            "bins": [
                {
                    "t_s": k * self.bin_s,
                    "ios": int(n),
                    "measured_mean_us": m / n,
                    "simulated_mean_us": s / n,
                    "error_pct": (s / m - 1.0) * 100.0,
                }
                for k, (n, m, s) in sorted(self.bins.items())
            ],
        }


class TraceComparison:
    """Per-class accumulators of (measured, simulated) per IO; :meth:`consume` is the replay's
    callback, :meth:`result` the statistics."""

    def __init__(self, blkparse: bool, *, seed: int = 1, cap: int | None = None, resolution_ns: float = 1.0) -> None:
        self.blkparse = blkparse
        cap = SAMPLE_CAP if cap is None else cap
        self.resolution_ns = resolution_ns
        self.timeline = _Timeline()
        self.seed, self.cap = seed, cap
        self.classes: dict[tuple, _Class] = {}
        self.all = _Class("all", None, None, seed, cap)

    def _cls(self, op: str, size: int) -> _Class:
        c = self.classes.get((op, size))
        if c is None:
            c = self.classes[(op, size)] = _Class(
                class_label(op, size), op, size, self.seed + len(self.classes) + 1, self.cap
            )
        return c

    def consume(self, t: TimedIO, req) -> None:
        nan = math.nan
        res = self.resolution_ns  # simulated stamps as the tracer would have recorded them, from Q

        def q(x: float) -> float:
            return round(x / res) * res

        if self.blkparse:
            lat_s, q2d_s = q(req.t_reaped - req.t_submit), q(req.t_dispatch - req.t_submit)
            d2c_s = lat_s - q2d_s if t.d2c_ns is not None else nan
            if t.q2d_ns is None:
                q2d_s = nan
                if t.d2c_ns is not None:  # D and C only: the measured latency is D->C
                    lat_s = d2c_s
        else:
            lat_s, q2d_s, d2c_s = q(req.t_complete - req.t_submit), nan, nan
        arrival_s = t.io.t_ns / 1e9
        row = (
            t.lat_ns / 1e3,
            lat_s / 1e3,
            nan if t.q2d_ns is None else t.q2d_ns / 1e3,
            q2d_s / 1e3,
            nan if t.d2c_ns is None else t.d2c_ns / 1e3,
            d2c_s / 1e3,
            arrival_s,
        )
        self._cls(t.io.op, size_class(t.io.nbytes)).add(row)
        self.all.add(row)
        self.timeline.add(arrival_s, row[0], row[1])

    def _class_result(self, c: _Class) -> dict:
        rows = c.sample.rows
        means = c.sums / max(c.n, 1)
        out: dict[str, Any] = {
            "class": c.label,
            "op": c.op,
            "size_class_bytes": c.size,
            "ios": c.n,
            "sampled_ios": len(rows),
        }
        out["latency"] = _dist(rows[:, 0], rows[:, 1], c.n, means[0], means[1])
        for stage, i in (("q2d", 2), ("d2c", 4)):
            ok = ~np.isnan(rows[:, i])
            if ok.any() and c.stage_n == c.n:
                out[stage] = _dist(rows[ok, i], rows[ok, i + 1], c.n, means[i], means[i + 1])
        return out

    def result(self) -> dict:
        classes = [self._class_result(self.classes[k]) for k in sorted(self.classes, key=lambda k: (k[0], k[1]))]
        return {"classes": classes, "all": self._class_result(self.all), "over_time": self.timeline.result()}

    def samples(self, per_class: int = 2000) -> dict[str, dict[str, list[float]]]:
        """Up to ``per_class`` (measured, simulated) latencies per class (for the report's scatter
        and CDFs): an evenly spaced subset of each class's sample."""
        out = {}
        for c in [self.classes[k] for k in sorted(self.classes)]:
            rows = c.sample.rows
            idx = np.unique(np.linspace(0, len(rows) - 1, min(per_class, len(rows))).astype(int)) if len(rows) else []
            out[c.label] = {col: rows[idx, i].tolist() for i, col in enumerate(_COLS)}
        return out


def validate_trace(
    trace: str | list[str],
    fmt: str | None = None,
    *,
    platform: str | None = None,
    sets: dict | None = None,
    seed: int | None = None,
    skip_bad_lines: bool = False,
    progress: bool = False,
    keep_samples: int = 2000,
    mode: str = "auto",
) -> dict:
    """Replay a timed trace (``mode`` open, closed or auto: :func:`~scenarios.run.replay.choose_mode`)
    and compare (see the module docstring). The result (JSON-ready) has
    ``replay`` (what was replayed), ``classes`` (one entry per direction x size class), ``all``,
    ``over_time`` (per time bin), ``stages`` (the blkparse stages compared, if any) and ``samples``
    (``keep_samples`` IOs per class for plotting)."""
    reader = open_timed(trace, fmt, skip_bad_lines=skip_bad_lines)
    cfg = resolve_replay(str(reader.path), platform=platform, sets=sets, seed=seed)  # `stacksim replay`'s settings
    chosen, why, closed_streams = choose_mode(reader, mode)
    comp = TraceComparison(reader.format == "blkparse", seed=cfg.seed, resolution_ns=RESOLUTION_NS[reader.format])
    info = replay_timed(reader, cfg, comp.consume, progress=progress, mode=chosen, closed_streams=closed_streams)
    info["mode_reason"] = why
    out = {"replay": info, **comp.result()}
    out["stages"] = [s for s in ("q2d", "d2c") if s in out["all"]]
    out["samples"] = comp.samples(keep_samples)
    return out


def _gated(block: dict) -> Iterator[tuple[str, float]]:
    for name, err in block["error_pct"].items():
        if err is not None:
            yield name, err


def exceeding(v: dict, max_error_pct: float) -> list[str]:
    """Descriptions of the class statistics (mean and percentiles of latency, and of the blkparse
    stages) whose relative error exceeds ``max_error_pct``."""
    out = []
    for c in v["classes"] + [v["all"]]:
        for what in ("latency", "q2d", "d2c"):
            if what in c:
                out += [
                    f"{c['class']} {what} {name} {signed(err)}%"
                    for name, err in _gated(c[what])
                    if abs(err) > max_error_pct
                ]
    return out


def _fmt(x: float | None, spec: str = ".2f") -> str:
    return "-" if x is None else format(x, spec)


def _block_lines(title: str, rows: list[tuple[str, int, dict]]) -> list[str]:
    lines = [title, f"  {'class':10s} {'IOs':>8s}  {'stat':5s} {'measured':>10s} {'simulated':>10s} {'error':>9s}"]
    for label, n, b in rows:
        for i, stat in enumerate(("mean",) + tuple(q[0] for q in QUANTILES)):
            m, s, e = b["measured"][stat], b["simulated"][stat], b["error_pct"][stat]
            if m is None:
                continue
            head = f"  {label:10s} {n:8d}" if i == 0 else " " * 21
            lines.append(f"{head}  {stat:5s} {_fmt(m):>10s} {_fmt(s):>10s} {'-' if e is None else signed(e):>8s}%")
        ks = b["ks"]["statistic"]
        lines.append(
            " " * 21 + f"  KS distance {_fmt(ks, '.3f')} (p {_fmt(b['ks']['pvalue'], '.2g')}); per IO "
            f"mean |error| {b['io_error_pct']['mean_abs']:.2f}%"
        )
    return lines


def format_trace_validation(v: dict, max_error_pct: float | None = None) -> str:
    """The terminal summary: what was replayed, per class latency (us) statistics and errors,
    the blkparse stages, the error over time, and the verdict against ``max_error_pct``."""
    r = v["replay"]
    skipped = ", ".join(f"{n} {k}" for k, n in sorted(r["skipped"].items())) or "none"
    lines = [
        f"validate --trace {r['trace']} ({r['format']}) on {r['platform']} (seed {r['seed']}, {r['completion']}, "
        f"{r.get('mode', 'open')} replay, {r['threads']} submitter threads)",
        f"  {r['lines_read']} lines, {r['trace_ios']} IOs replayed and compared, {r['bad_lines']} bad lines "
        f"skipped; not compared: {skipped}",
    ]
    if r.get("approx_arrivals"):
        lines.append(
            "  note: the fio log has no issue times (log_issue_time=1): arrivals are completion - latency, "
            "known to fio's 1 ms only, so IOs were replayed up to 1 ms early and may overlap"
        )
    cls = [(c["class"], c["ios"], c["latency"]) for c in v["classes"]] + [("all", v["all"]["ios"], v["all"]["latency"])]
    what = ("D->C" if v["stages"] == ["d2c"] else "Q->C") if r["format"] == "blkparse" else "latency"
    lines += _block_lines(f"{what} us per class (simulated / measured - 1):", cls)
    for stage, name in (("q2d", "Q->D (block layer + IO scheduler)"), ("d2c", "D->C (driver + device)")):
        if stage in v["stages"]:
            rows = [(c["class"], c["ios"], c[stage]) for c in v["classes"] if stage in c]
            lines += _block_lines(f"{name} us per class:", rows + [("all", v["all"]["ios"], v["all"][stage])])
    tl = v["over_time"]
    if tl["bins"]:
        errs = [b["error_pct"] for b in tl["bins"]]
        worst = max(tl["bins"], key=lambda b: abs(b["error_pct"]))
        lines.append(
            f"error over time: {len(errs)} bins of {tl['bin_s']:g} s, mean-latency error from "
            f"{signed(min(errs))}% to {signed(max(errs))}% (worst: at {worst['t_s']:g} s, {worst['ios']} IOs)"
        )
    if max_error_pct is not None:
        over = exceeding(v, max_error_pct)
        lines.append(
            f"FAIL: {len(over)} statistics off by more than {max_error_pct:g}%: "
            + "; ".join(over[:8])
            + (" ..." if len(over) > 8 else "")
            if over
            else f"PASS: every statistic within {max_error_pct:g}%"
        )
    return "\n".join(lines)
