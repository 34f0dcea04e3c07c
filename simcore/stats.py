"""Statistics helpers: percentiles in fio's shape, warm-up snapshots, per-IO record tables."""

from __future__ import annotations

import math
import tempfile

import numpy as np

#: fio's default percentile list
FIO_PERCENTILES = (1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99)

#: the per-IO record (``result.records``, ``--records``) of host and server runs alike: the IO's id,
#: fio job, thread, the CPU that completed it, direction, bytes, and its times (ns): submitted by the
#: application (server: sent by the client), dispatched to the driver (server: NVMe submit), device
#: start and end, completion entry posted, reaped by the CPU, complete (server: response received);
#: then its byte offset and the index of its SSD (-1 where a run does not know them: a server's);
#: then a hybrid poll's sleep (NaN where the IO's task did not sleep on an hrtimer): the timer
#: armed and the task going to sleep, the timer's expiry, the task running again to poll; last,
#: where the device's time went (:class:`models.ssd.command.NvmeCommand`; NaN, -1 or "" where a run
#: does not know them): fetched, firmware done, ready for the media, data transfer done, media
#: stage ended; a flash read's die wait, suspend wait and array read time (tR), its page type; how
#: the command was served (``dev_path``: media, readahead, buffer, unit, other)
RECORD_FIELDS = (
    ("io", np.int64),
    ("job", np.int32),
    ("thread", np.int32),
    ("cpu", np.int32),
    ("op", "U5"),
    ("bytes", np.int64),
    ("t_submit_ns", np.float64),
    ("t_dispatch_ns", np.float64),
    ("t_dev_start_ns", np.float64),
    ("t_dev_end_ns", np.float64),
    ("t_cqe_ns", np.float64),
    ("t_reaped_ns", np.float64),
    ("t_complete_ns", np.float64),
    ("device_service_ns", np.float64),
    ("t_issued_ns", np.float64),
    ("offset", np.int64),
    ("device", np.int32),
    ("t_sleep_ns", np.float64),
    ("t_timer_ns", np.float64),
    ("t_woken_ns", np.float64),
    ("t_fetched_ns", np.float64),
    ("t_fw_ns", np.float64),
    ("t_stage_ns", np.float64),
    ("t_xfer_ns", np.float64),
    ("t_media_end_ns", np.float64),
    ("dev_wait_ns", np.float64),
    ("dev_suspend_ns", np.float64),
    ("dev_tr_ns", np.float64),
    ("dev_page_type", np.int32),
    ("dev_path", "U9"),
)

#: the device fields of the record and the NvmeCommand attributes they come from
DEVICE_RECORD_ATTRS = (
    ("t_fetched_ns", "t_fetched"),
    ("t_fw_ns", "t_fw"),
    ("t_stage_ns", "t_stage"),
    ("t_xfer_ns", "t_xfer"),
    ("t_media_end_ns", "t_media_end"),
    ("dev_wait_ns", "dev_wait_ns"),
    ("dev_suspend_ns", "dev_suspend_ns"),
    ("dev_tr_ns", "dev_tr_ns"),
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
        elif t == "U9":
            arr[name] = ""
        elif t != "U5":
            arr[name] = -1
    return arr


def records_table(reqs) -> np.ndarray:
    """One compact structured array row per completed host IO (:class:`models.os.block.request.Request`)."""
    cols = {
        "io": [r.id for r in reqs],
        "job": [r.job for r in reqs],
        "thread": [r.task.tid for r in reqs],
        "cpu": [r.cpu for r in reqs],
        "op": [r.op for r in reqs],
        "bytes": [r.own_bytes for r in reqs],
    }
    for name, attr in (
        ("t_submit_ns", "t_submit"),
        ("t_dispatch_ns", "t_dispatch"),
        ("t_dev_start_ns", "t_dev_start"),
        ("t_dev_end_ns", "t_dev_end"),
        ("t_cqe_ns", "t_cqe"),
        ("t_reaped_ns", "t_reaped"),
        ("t_complete_ns", "t_complete"),
        ("device_service_ns", "device_service_ns"),
    ):
        cols[name] = [getattr(r, attr) for r in reqs]
    # fio's issue time: the submitting call returned (asynchronous engines); a synchronous call
    # has no slat, its clat runs from the submission (fio's clat = lat)
    cols["t_issued_ns"] = [r.t_issued if r.t_issued > 0 else r.t_submit for r in reqs]
    cols["offset"] = [r.offset for r in reqs]
    cols["device"] = [-1 if r.qp is None else r.qp.device.index for r in reqs]
    for name, attr in (("t_sleep_ns", "t_sleep"), ("t_timer_ns", "t_timer"), ("t_woken_ns", "t_woken")):
        cols[name] = [getattr(r, attr) if r.slept else math.nan for r in reqs]
    for name, attr in DEVICE_RECORD_ATTRS:  # (unset: a request no device served)
        cols[name] = [getattr(r, attr, math.nan) for r in reqs]
    cols["dev_page_type"] = [getattr(r, "dev_page_type", -1) for r in reqs]
    cols["dev_path"] = [getattr(r, "dev_path", "") for r in reqs]
    return records_array(cols)


# ------------------------------------------------------------------------------------------------ streaming
#: fio's latency histogram (stat.h): values below 2 ** (PLAT_BITS + 1) ns have a bucket each; each
#: further power of two is cut into 2 ** PLAT_BITS buckets of equal width, so a bucket is at most
#: 1/64 of its lower bound wide and its midpoint is within 1/128 of any value in it
PLAT_BITS = 6
_PLAT_VAL = 1 << PLAT_BITS
_PLAT_EXACT = 2 * _PLAT_VAL  # 128: below this a bucket per ns
#: the bound on a histogram percentile: |estimate - exact order statistic| <= max(x * PLAT_REL_ERROR, 1 ns)
PLAT_REL_ERROR = 1.0 / (2 * _PLAT_VAL)


def plat_index(ns: np.ndarray) -> np.ndarray:
    """fio's bucket index (``plat_val_to_idx``) of latencies in ns (truncated to whole ns, as fio
    records them; negative values count as 0)."""
    v = np.maximum(np.asarray(ns, dtype=np.float64), 0.0).astype(np.int64)
    # the most significant bit of each value, from frexp's exponent: exact below 2**53, where the
    # float conversion is exact; beyond, two corrections keep 2**msb <= v < 2**(msb+1) where the
    # conversion may round (a latency of 104 days: checked, not expected)
    msb = np.frexp(v.astype(np.float64))[1].astype(np.int64)
    msb -= 1
    if v.size and int(v.max()) >= 1 << 53:
        msb += (v >> np.maximum(msb + 1, 0)) > 0
        msb -= (msb > 0) & ((v >> np.maximum(msb, 0)) == 0)
    err = msb - PLAT_BITS
    np.maximum(err, 0, out=err)
    return np.where(v >= _PLAT_EXACT, ((err + 1) << PLAT_BITS) + ((v >> err) & (_PLAT_VAL - 1)), v)


def plat_value(idx: int) -> float:
    """The value fio reports for bucket ``idx`` (``plat_idx_to_val``): the bucket itself below 128,
    else the middle of the bucket's range."""
    if idx < _PLAT_EXACT:
        return float(idx)
    err = (idx >> PLAT_BITS) - 1
    return float((1 << (err + PLAT_BITS)) + ((idx & (_PLAT_VAL - 1)) + 0.5) * (1 << err))


_SUM_BITS = 1074 + 53  # the unit of exact sums: below the smallest subnormal's mantissa bit


def _exact_sum(x: np.ndarray) -> int:
    """The exact sum of finite floats ``x``, as an integer count of 2**-_SUM_BITS (no rounding)."""
    m, e = np.frexp(x)
    mant = (m * float(1 << 53)).astype(np.int64)  # x = mant * 2**(e - 53), exactly
    if x.size and float(x.min()) > 0.0:  # (latencies: no zero, whose frexp exponent 0 is no exponent)
        e0 = int(e.min())
    else:
        nonzero = mant != 0
        if not nonzero.any():
            return 0
        e0 = int(e[nonzero].min())
    span = int(e.max()) - e0
    hi, lo = mant >> 26, mant & ((1 << 26) - 1)  # 27- and 26-bit halves: hi * 2**26 + lo == mant
    if 27 + span + int(x.size).bit_length() <= 62:
        # every value shifted to the smallest exponent present: the halves' sums cannot overflow
        shift = np.maximum(e - e0, 0).astype(np.int64)  # (zeros: any shift, they add nothing)
        part = (int((hi << shift).sum()) << 26) + int((lo << shift).sum())
        return part << (e0 - 53 + _SUM_BITS)
    total = 0
    e0 = int(e.min())
    for k in np.flatnonzero(np.bincount(e - e0)):  # the exponents present (np.unique: lazy imports)
        ex = e0 + int(k)
        sel = e == ex
        part = (int(hi[sel].sum()) << 26) + int(lo[sel].sum())  # block sums cannot overflow
        total += part << int(ex - 53 + _SUM_BITS)
    return total


class LatencyStats:
    """Streaming statistics of a series of latencies (ns), in memory independent of its length:
    exact count, sum (so mean), min and max; standard deviation (n-1) to float precision (Chan's
    pairwise update of per-block moments); percentiles from fio's log-linear histogram
    (:data:`PLAT_BITS`: within :data:`PLAT_REL_ERROR` of the exact order statistic, fio's rank rule).
    Feed it blocks (:meth:`add`); combine series with :meth:`merged`."""

    __slots__ = ("n", "total", "min", "max", "_mean", "_m2", "hist")

    def __init__(self):
        self.n = 0
        self.total = 0  # exact sum, units of 2**-_SUM_BITS ns
        self.min = math.inf
        self.max = -math.inf
        self._mean = 0.0
        self._m2 = 0.0
        self.hist = np.zeros(0, dtype=np.int64)

    @classmethod
    def of(cls, ns) -> "LatencyStats":
        s = cls()
        s.add(np.asarray(ns, dtype=np.float64))
        return s

    def add(self, x: np.ndarray) -> None:
        """Add a block of latencies (ns, float64)."""
        k = x.size
        if k == 0:
            return
        self.total += _exact_sum(x)
        self.min = min(self.min, float(x.min()))
        self.max = max(self.max, float(x.max()))
        bmean = float(x.mean())
        bm2 = float(np.square(x - bmean).sum())
        self._combine(k, bmean, bm2)
        counts = np.bincount(plat_index(x))
        if counts.size > self.hist.size:
            counts[: self.hist.size] += self.hist
            self.hist = counts
        else:
            self.hist[: counts.size] += counts

    def _combine(self, k: int, bmean: float, bm2: float) -> None:
        n = self.n + k
        d = bmean - self._mean
        self._m2 += bm2 + d * d * self.n * k / n
        self._mean += d * k / n
        self.n = n

    def merged(self, *others: "LatencyStats") -> "LatencyStats":
        """One series made of this one and ``others``."""
        out = LatencyStats()
        for s in (self, *others):
            if s.n == 0:
                continue
            out.total += s.total
            out.min = min(out.min, s.min)
            out.max = max(out.max, s.max)
            out._combine(s.n, s._mean, s._m2)
            if s.hist.size > out.hist.size:
                h = s.hist.copy()
                h[: out.hist.size] += out.hist
                out.hist = h
            else:
                out.hist[: s.hist.size] += s.hist
        return out

    @property
    def mean(self) -> float:
        """The exact mean, correctly rounded (0.0 without samples)."""
        return self.total / (self.n << _SUM_BITS) if self.n else 0.0

    @property
    def stddev(self) -> float:
        """Sample standard deviation (n-1; 0.0 below two samples)."""
        return math.sqrt(max(self._m2, 0.0) / (self.n - 1)) if self.n > 1 else 0.0

    def percentiles(self, pcts) -> list[float]:
        """fio's percentiles (ns): for each p, the value of the first bucket whose cumulative count
        reaches p/100 of the samples (``calc_clat_percentiles``), clamped to [min, max]; empty
        without samples."""
        if self.n == 0:
            return []
        cum = np.cumsum(self.hist)
        out = []
        for p in pcts:
            i = int(np.searchsorted(cum, p / 100.0 * self.n, side="left"))
            # clamped to [min, max], where the exact order statistic lies (fio does not clamp)
            out.append(min(max(plat_value(min(i, cum.size - 1)), self.min), self.max))
        return out

    def summary_us(self) -> dict:
        """Summary latency in us: mean, p50, p90, p99, p99_9, max."""
        if self.n == 0:
            return {k: 0.0 for k in ("mean", "p50", "p90", "p99", "p99_9", "max")}
        p50, p90, p99, p999 = self.percentiles((50, 90, 99, 99.9))
        return {
            "mean": self.mean / 1e3,
            "p50": p50 / 1e3,
            "p90": p90 / 1e3,
            "p99": p99 / 1e3,
            "p99_9": p999 / 1e3,
            "max": self.max / 1e3,
        }


class RecordChunks:
    """Per-IO records (:data:`RECORD_FIELDS` rows) collected in chunks while a run goes: in memory,
    or with ``spool=True`` in an anonymous temporary file, so that memory does not grow with the
    run (``stacksim run --records``). Call it with each chunk (a :func:`records_array`)."""

    def __init__(self, spool: bool = False):
        self.n = 0
        self._dtype = np.dtype([(name, t) for name, t in RECORD_FIELDS])
        self._mem: list[np.ndarray] = []
        self._file = tempfile.TemporaryFile() if spool else None

    def __call__(self, chunk: np.ndarray) -> None:
        if chunk.size == 0:
            return
        self.n += chunk.size
        if self._file is None:
            self._mem.append(chunk)
        else:
            self._file.write(np.ascontiguousarray(chunk, dtype=self._dtype).tobytes())

    def __len__(self) -> int:
        return self.n

    def chunks(self, rows: int = 65536):
        """The records in order, ``rows`` at a time at most (in-memory chunks as they came)."""
        if self._file is None:
            yield from self._mem
            return
        self._file.flush()
        self._file.seek(0)
        while True:
            buf = self._file.read(rows * self._dtype.itemsize)
            if not buf:
                return
            yield np.frombuffer(buf, dtype=self._dtype)

    def to_array(self) -> np.ndarray:
        """Every record in one structured array."""
        parts = list(self.chunks())
        return np.concatenate(parts) if parts else records_array({})

    def close(self) -> None:
        if self._file is not None:
            self._file.close()


def record_sink(records) -> RecordChunks | None:
    """The sink of a run's per-IO records for ``simulate(records=...)``: the given
    :class:`RecordChunks`, a new in-memory one for True, None for False."""
    if isinstance(records, RecordChunks):
        return records
    return RecordChunks() if records else None


def records_result(records, sink: RecordChunks | None):
    """``result.records``: the caller's :class:`RecordChunks`, else an array (None without records)."""
    if isinstance(records, RecordChunks) or sink is None:
        return sink
    return sink.to_array()
