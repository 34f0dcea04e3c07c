"""Streaming statistics of a host run's IOs: everything the summary and the fio-shaped output need,
accumulated as IOs complete, in memory that does not grow with the run.

:class:`IoStats` takes the host's completed IOs (:meth:`models.host.Host.io_done`) in blocks of
:data:`BLOCK`, buffered by the host's compiled ledger (no Python call per IO), and folds them into
counters per fio ``jobs[]`` entry and direction (:class:`DirStats`: count, bytes,
``slat``/``clat``/``lat`` as :class:`~simcore.stats.LatencyStats`, fio's 500 ms bandwidth and IOPS
windows), per entry (queue depth levels, clat buckets) and per SSD (:class:`DiskStats`: fio's
``disk_util``). Only the IOs of the measured window count (submitted at or after ``t0``, complete at
or before ``t1``), as before. The timeline tracer and the per-IO records (``records``: a callable
given each block's rows, :func:`simcore.stats.records_table`) see the blocks too, so nothing keeps
the requests themselves.

``disk_util``'s ``util`` (the union of the commands' spans from doorbell to reap) is computed
exactly as from all spans sorted at the end: a span is folded once no IO still to complete can
start before it. IOs are numbered in creation order, so every IO not yet complete was created at
or after the time :attr:`host.next_io_id <models.host.Host.next_io_id>` was at most the lowest such
number; marks of (``next_io_id``, time) taken at each block give that time.
"""

from __future__ import annotations

import bisect
import math
from collections import deque

import numpy as np

from models.host import Host
from models.ioengines import ASYNC_ENGINES
from models.ioengines.job_control import JobControl
from models.os.request import Request
from simcore.stats import LatencyStats, records_table

__all__ = ["IoStats", "DirStats", "EntryStats", "DiskStats", "BLOCK", "SAMPLE_WINDOW_NS"]

#: completed IOs buffered before they are folded into the statistics
BLOCK = 4096
SAMPLE_WINDOW_NS = 500_000_000  # fio's bwavgtime / iopsavgtime default (500 ms)
DIRS = ("read", "write", "trim")
#: fio's latency_ns / latency_us / latency_ms bucket labels (upper bounds)
LAT_EDGES = (2, 4, 10, 20, 50, 100, 250, 500, 750, 1000)
LAT_MS_EDGES = (*LAT_EDGES, 2000)
#: every bucket's lower bound in ns: ns, us, ms groups one after the other (the first of each from 0)
_LAT_BOUNDS = np.array(
    [
        *(e for e in (0, *LAT_EDGES[:-1])),
        *(1000 * e for e in (1, *LAT_EDGES[:-1])),
        *(1_000_000 * e for e in (1, *LAT_MS_EDGES)),
    ],
    dtype=np.float64,
)
DEPTHS = (1, 2, 4, 8, 16, 32, 64)  # iodepth_level keys "1" ... "32", ">=64"


def _grow_add(acc: np.ndarray, counts: np.ndarray) -> np.ndarray:
    if counts.size > acc.size:
        counts = counts.astype(acc.dtype)
        counts[: acc.size] += acc
        return counts
    acc[: counts.size] += counts
    return acc


class DirStats:
    """One direction of one ``jobs[]`` entry: IOs, bytes, latencies (sync engines: no slat, clat is
    lat) and the IOs and bytes completed in each 500 ms window from ``t0``."""

    __slots__ = ("n", "nbytes", "lat", "slat", "clat", "win_ios", "win_bytes")

    def __init__(self, is_async: bool):
        self.n = 0
        self.nbytes = 0
        self.lat = LatencyStats()
        self.slat = LatencyStats()
        self.clat = LatencyStats() if is_async else self.lat
        self.win_ios = np.zeros(0, dtype=np.int64)
        self.win_bytes = np.zeros(0, dtype=np.float64)

    def add(self, reqs: list, is_async: bool, t0: float) -> np.ndarray:
        """Fold completed requests in; returns their clat (ns)."""
        n = len(reqs)
        sub = np.fromiter((r.t_submit for r in reqs), float, n)
        done = np.fromiter((r.t_complete for r in reqs), float, n)
        own = [r.own_bytes for r in reqs]
        self.n += n
        self.nbytes += sum(own)
        lat = done - sub
        self.lat.add(lat)
        if is_async:
            issued = np.fromiter((r.t_issued for r in reqs), float, n)
            self.slat.add(issued - sub)
            clat = done - issued
            self.clat.add(clat)
        else:
            clat = lat
        idx = ((done - t0) // SAMPLE_WINDOW_NS).astype(np.int64)
        self.win_ios = _grow_add(self.win_ios, np.bincount(idx))
        self.win_bytes = _grow_add(self.win_bytes, np.bincount(idx, weights=np.asarray(own, dtype=float)))
        return clat


class EntryStats:
    """One fio ``jobs[]`` entry (a job section, or one clone of it): its directions, the queue
    depth of its IOs at submission and its clat buckets."""

    __slots__ = ("job", "task", "is_async", "dirs", "depths", "lat_buckets")

    def __init__(self, job: int, task, is_async: bool):
        self.job = job
        self.task = task  # the clone's task, or None for a whole section
        self.is_async = is_async
        self.dirs = {op: DirStats(is_async) for op in DIRS}
        self.depths = np.zeros(len(DEPTHS), dtype=np.int64)
        self.lat_buckets = np.zeros(_LAT_BOUNDS.size, dtype=np.int64)

    def add(self, op: str, reqs: list, t0: float) -> None:
        clat = self.dirs[op].add(reqs, self.is_async, t0)
        depth = np.fromiter((r.depth for r in reqs), np.int64, len(reqs))
        lvl = np.clip(np.searchsorted(np.asarray(DEPTHS), depth, side="right") - 1, 0, len(DEPTHS) - 1)
        self.depths += np.bincount(lvl, minlength=len(DEPTHS))
        b = np.maximum(np.searchsorted(_LAT_BOUNDS, np.floor(clat), side="right") - 1, 0)
        self.lat_buckets += np.bincount(b, minlength=_LAT_BOUNDS.size)

    @property
    def n(self) -> int:
        return sum(d.n for d in self.dirs.values())


class DiskStats:
    """One SSD's share of fio's ``disk_util``: commands, sectors, merges and ticks (ns) per
    direction, and the busy time (union of the spans doorbell -> reap, clipped to the window)."""

    __slots__ = ("ios", "sectors", "merges", "ticks", "spans", "cur", "busy_ns", "last_start", "late")

    def __init__(self):
        # discards as /proc/diskstats counts them apart (fio's disk_util shows reads and writes)
        self.ios: dict[str, int] = {"read": 0, "write": 0, "trim": 0}
        self.sectors: dict[str, int] = {"read": 0, "write": 0, "trim": 0}
        self.merges: dict[str, int] = {"read": 0, "write": 0, "trim": 0}
        self.ticks: dict[str, float] = {"read": 0.0, "write": 0.0, "trim": 0.0}
        self.spans: list[tuple[float, float]] = []  # not folded yet
        self.cur: list[float] | None = None  # the open interval of the union
        self.busy_ns = 0.0
        self.last_start = -math.inf
        self.late = 0  # spans that arrived after spans starting later were folded (none expected)

    def fold(self, upto: float, t0: float, t1: float) -> None:
        """Fold the spans that start before ``upto`` into the union, in sorted order."""
        sp = self.spans
        if not sp:
            return
        sp.sort()
        k = len(sp) if upto == math.inf else bisect.bisect_left(sp, (upto, -math.inf))
        cur = self.cur
        for a, b in sp[:k]:
            if a < self.last_start:
                self.late += 1
            self.last_start = a
            a, b = max(a, t0), min(b, t1)
            if b <= a:
                continue
            if cur is None or a > cur[1]:
                if cur is not None:
                    self.busy_ns += cur[1] - cur[0]
                cur = [a, b]
            else:
                cur[1] = max(cur[1], b)
        self.cur = cur
        del sp[:k]

    def busy(self) -> float:
        """The busy time so far (spans folded), ns."""
        return self.busy_ns + (self.cur[1] - self.cur[0] if self.cur is not None else 0.0)


class IoStats:
    """The statistics of one host run (see the module's text); the host's ledger hands it the
    completed IOs in blocks (``IoLedger.collect_blocks``). :meth:`finish` folds what is buffered
    (call it before reading)."""

    def __init__(
        self,
        host: Host,
        jobs,
        t0: float,
        t1: float = math.inf,
        *,
        tracer=None,
        records=None,
        control: JobControl | None = None,
    ):
        self.host = host
        self.jobs = jobs
        self.t0 = t0
        #: fio's job control when jobs start later (stonewall, wait_for): each job is measured
        #: from its own start + ramp_time
        self.control = control
        self.t1 = t1
        self.tracer = tracer
        self.records = records
        self._grouped = ["group_reporting" in j.ignored_options or j.numjobs == 1 for j in jobs]
        self._async = [j.ioengine in ASYNC_ENGINES for j in jobs]
        self.entries: dict = {}  # job index or (job index, tid) -> EntryStats
        self.disks: dict[int, DiskStats] = {d.index: DiskStats() for d in host.devices}
        self.t_complete_max = -math.inf
        self._ledger = host.ledger
        self._low = 0  # the lowest IO number not complete yet
        self._done: set[int] = set()  # IO numbers complete above _low
        self._marks: deque = deque()  # (next_io_id, time) at each block
        self._merged: set[int] = set()  # requests merged into measured commands, not seen yet
        host.ledger.collect_blocks(self._fold, BLOCK)

    def flush(self) -> None:
        """Fold the buffered IOs into the statistics."""
        self._fold(self._ledger.take_block())

    def _fold(self, reqs: list[Request]) -> None:
        """Fold a block of completed IOs (in completion order) into the statistics."""
        if not reqs:
            return
        if self.tracer is not None:
            for r in reqs:
                self.tracer.io(r, r.cpu)
        self._track(reqs)
        self.t_complete_max = max(self.t_complete_max, max(r.t_complete for r in reqs))
        t0, t1 = self.t0, self.t1
        if self.control is None:
            t0s = None
            meas = [r for r in reqs if r.t_submit >= t0 and r.t_complete <= t1]
        else:
            t0s = [self.control.measure_from_ns(j, t0) for j in range(len(self.jobs))]
            meas = [r for r in reqs if r.t_submit >= t0s[r.job] and r.t_complete <= t1]
        if meas:
            self._disk(meas)
            if self.records is not None:
                self.records(records_table(meas))
            groups: dict = {}
            for r in meas:
                key = r.job if self._grouped[r.job] else (r.job, r.task.io_tid)
                groups.setdefault((key, r.op), []).append(r)
            for (key, op), rs in groups.items():
                e = self.entries.get(key)
                if e is None:
                    e = self.entries[key] = EntryStats(
                        rs[0].job, None if isinstance(key, int) else rs[0].task, self._async[rs[0].job]
                    )
                e.add(op, rs, t0 if t0s is None else t0s[rs[0].job])
        upto = self._watermark()
        for d in self.disks.values():
            d.fold(upto, t0, t1)

    def finish(self) -> "IoStats":
        """Fold everything (the run is over)."""
        self.flush()
        for d in self.disks.values():
            d.fold(math.inf, self.t0, self.t1)
        return self

    # -- disk_util ----------------------------------------------------------------------------
    def _disk(self, meas: list[Request]) -> None:
        merged = self._merged
        cmds: list[Request] = []  # the commands of the measured IOs (an IO split: its pieces)
        for r in meas:
            if r.splits:
                cmds.extend(r.splits)
            else:
                cmds.append(r)
        for c in cmds:
            if c.merged:
                merged.update(m.id for m in c.merged)
        disks = self.disks
        for c in cmds:
            qp = c.qp
            if qp is None:
                continue  # a user-space driver's command (ioengine=spdk): the kernel's disk statistics never see it
            d = disks[qp.device.index]
            op = c.op
            if c.id in merged:
                merged.discard(c.id)
                d.merges[op] += 1
                continue
            d.ios[op] += 1
            d.sectors[op] += c.nbytes // 512  # a command's bytes include the bios merged into it
            d.ticks[op] += c.t_reaped - c.t_dispatch
            d.spans.append((c.t_dispatch, c.t_reaped))

    def _track(self, reqs: list[Request]) -> None:
        done = self._done
        done.update(r.id for r in reqs)
        low = self._low
        while low in done:
            done.remove(low)
            low += 1
        self._low = low
        self._marks.append((self.host.next_io_id, self.host.engine.now))

    def _watermark(self) -> float:
        """No IO still to complete started (so dispatched a command) before this time."""
        marks, low = self._marks, self._low
        while len(marks) > 1 and marks[1][0] <= low:
            marks.popleft()
        return marks[0][1] if marks and marks[0][0] <= low else -math.inf

    # -- reading ------------------------------------------------------------------------------
    def latency(self, job: int | None = None) -> LatencyStats:
        """Latency (submit -> complete) of every measured IO, or of job ``job``'s."""
        parts = [d.lat for e in self.entries.values() if job is None or e.job == job for d in e.dirs.values()]
        return LatencyStats().merged(*parts)

    def ios(self, job: int | None = None) -> int:
        return sum(e.n for e in self.entries.values() if job is None or e.job == job)

    def nbytes(self) -> int:
        return sum(d.nbytes for e in self.entries.values() for d in e.dirs.values())
