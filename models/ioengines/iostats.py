"""Streaming statistics of a host run's IOs: everything the summary and the fio-shaped output need,
accumulated as IOs complete, in memory that does not grow with the run.

:class:`IoStats` takes the host's completed IOs (:meth:`models.host.Host.io_done`) in blocks of
:data:`BLOCK`, buffered by the host's compiled ledger (no Python call per IO), and folds them into
counters per fio ``jobs[]`` entry and direction (:class:`DirStats`: count, bytes,
``slat``/``clat``/``lat`` as :class:`~simcore.stats.LatencyStats`, fio's 500 ms bandwidth and IOPS
windows), per entry (queue depth levels, clat buckets) and per SSD (:class:`DiskStats`: fio's
``disk_util``). Only the IOs that complete in the measured window ``[t0, t1]`` count, with their
whole latency (fio resets its statistics when ``ramp_time`` ends and accounts each IO at its
completion: fio 3.x ``stat.c`` ``reset_io_stats``, ``io_u.c`` ``io_completed``). Counting only
IOs submitted after ``t0`` would drop the IOs in flight when the window opens, a bias of
-depth / (IOPS x window) on the IOPS (-17% for 8 x 128 IOs in flight over a 20 ms window). The
timeline tracer and the per-IO records (``records``: a callable given each block's rows,
:func:`simcore.stats.records_table`) see the blocks too, so nothing keeps the requests themselves.

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
from collections.abc import Sequence

import numpy as np

from models.ioengines import ASYNC_ENGINES
from models.ioengines.host import EngineHost
from models.ioengines.job import FioJob
from models.ioengines.job_control import JobControl
from models.os.block.io_ledger import IoLedger
from models.os.block.request import Request
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


def _floats(xs: list) -> np.ndarray:
    """``xs`` (floats or ints) as a float64 array (fromiter: a third faster than np.array, which
    first discovers the list's shape and type)."""
    return np.fromiter(xs, dtype=np.float64, count=len(xs))


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

    def add(self, reqs: list[Request], is_async: bool, t0: float) -> np.ndarray:
        """Fold completed requests in; returns their clat (ns)."""
        n = len(reqs)
        subs: list[float] = []
        dones: list[float] = []
        issues: list[float] = []
        own: list[int] = []
        for r in reqs:  # (typed: native reads of the compiled requests, no generator)
            subs.append(r.t_submit)
            dones.append(r.t_complete)
            own.append(r.own_bytes)
            if is_async:
                issues.append(r.t_issued)
        sub = _floats(subs)
        done = _floats(dones)
        self.n += n
        self.nbytes += sum(own)
        lat = done - sub
        self.lat.add(lat)
        if is_async:
            issued = _floats(issues)
            # fio takes slat when the IO is queued, only once the ramp is over (io_u_queued:
            # ramp_time_over): an IO in flight at t0 has a clat and a lat but no slat
            queued = sub >= t0
            self.slat.add((issued - sub)[queued])
            clat = done - issued
            self.clat.add(clat)
        else:
            clat = lat
        idx = ((done - t0) // SAMPLE_WINDOW_NS).astype(np.int64)
        self.win_ios = _grow_add(self.win_ios, np.bincount(idx))
        self.win_bytes = _grow_add(self.win_bytes, np.bincount(idx, weights=_floats(own)))
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

    def add(self, op: str, reqs: list[Request], t0: float) -> None:
        clat = self.dirs[op].add(reqs, self.is_async, t0)
        depths: list[int] = []
        for r in reqs:
            depths.append(r.depth)
        depth = np.fromiter(depths, dtype=np.int64, count=len(depths))
        lvl = np.clip(np.searchsorted(np.asarray(DEPTHS), depth, side="right") - 1, 0, len(DEPTHS) - 1)
        self.depths += np.bincount(lvl, minlength=len(DEPTHS))
        b = np.maximum(np.searchsorted(_LAT_BOUNDS, np.floor(clat), side="right") - 1, 0)
        self.lat_buckets += np.bincount(b, minlength=_LAT_BOUNDS.size)

    @property
    def n(self) -> int:
        return sum(d.n for d in self.dirs.values())


#: a direction's index in :class:`DiskStats`' counters
_OPS = ("read", "write", "trim")


def _op_index(op: str) -> int:
    return 0 if op == "read" else 1 if op == "write" else 2


class _DiskDir:
    """One direction's counters of a :class:`DiskStats` (native fields: no dict step per command)."""

    __slots__ = ("ios", "sectors", "merges", "ticks")

    def __init__(self) -> None:
        self.ios = 0
        self.sectors = 0
        self.merges = 0
        self.ticks = 0.0


def _ascending(xs: list[float]) -> bool:
    for i in range(1, len(xs)):
        if xs[i] < xs[i - 1]:
            return False
    return True


class DiskStats:
    """One SSD's share of fio's ``disk_util``: commands, sectors, merges and ticks (ns) per
    direction (``ios``, ``sectors``, ``merges``, ``ticks``: dicts by direction), and the busy time
    (union of the spans doorbell -> reap, clipped to the window)."""

    __slots__ = ("dirs", "span_a", "span_b", "cur", "busy_ns", "last_start", "late")

    def __init__(self):
        # discards as /proc/diskstats counts them apart (fio's disk_util shows reads and writes)
        self.dirs = [_DiskDir() for _ in _OPS]
        self.span_a: list[float] = []  # the spans not folded yet: starts, and ends
        self.span_b: list[float] = []
        self.cur: list[float] | None = None  # the open interval of the union
        self.busy_ns = 0.0
        self.last_start = -math.inf
        self.late = 0  # spans that arrived after spans starting later were folded (none expected)

    @property
    def ios(self) -> dict[str, int]:
        return {op: d.ios for op, d in zip(_OPS, self.dirs)}

    @property
    def sectors(self) -> dict[str, int]:
        return {op: d.sectors for op, d in zip(_OPS, self.dirs)}

    @property
    def merges(self) -> dict[str, int]:
        return {op: d.merges for op, d in zip(_OPS, self.dirs)}

    @property
    def ticks(self) -> dict[str, float]:
        return {op: d.ticks for op, d in zip(_OPS, self.dirs)}

    def add(self, c: Request) -> None:
        """A measured command (not merged into another): counted, its span kept for the union."""
        d = self.dirs[_op_index(c.op)]
        d.ios += 1
        d.sectors += c.nbytes // 512  # a command's bytes include the bios merged into it
        d.ticks += c.t_reaped - c.t_dispatch
        self.span_a.append(c.t_dispatch)
        self.span_b.append(c.t_reaped)

    def fold(self, upto: float, t0: float, t1: float) -> None:
        """Fold the spans that start before ``upto`` into the union, in the order of their starts
        (spans that start together: any order gives the same union)."""
        starts, ends = self.span_a, self.span_b
        if not starts:
            return
        if not _ascending(starts):  # (in completion order: nearly sorted)
            order = sorted(range(len(starts)), key=starts.__getitem__)  # (float keys: compared natively)
            starts = [starts[i] for i in order]
            ends = [ends[i] for i in order]
        k = len(starts) if upto == math.inf else bisect.bisect_left(starts, upto)
        # the open interval as two native floats in the loop (a list of two would box each end)
        has_cur = self.cur is not None
        cur_a, cur_b = (self.cur[0], self.cur[1]) if self.cur is not None else (0.0, 0.0)
        last, late, busy = self.last_start, self.late, self.busy_ns
        for j in range(k):
            a = starts[j]
            b = ends[j]
            if a < last:
                late += 1
            last = a
            if t0 > a:  # (max(a, t0), min(b, t1))
                a = t0
            if t1 < b:
                b = t1
            if b <= a:
                continue
            if not has_cur or a > cur_b:
                if has_cur:
                    busy += cur_b - cur_a
                cur_a = a
                cur_b = b
                has_cur = True
            elif b > cur_b:
                cur_b = b
        self.cur = [cur_a, cur_b] if has_cur else None
        self.last_start, self.late, self.busy_ns = last, late, busy
        self.span_a, self.span_b = starts[k:], ends[k:]

    def busy(self) -> float:
        """The busy time so far (spans folded), ns."""
        return self.busy_ns + (self.cur[1] - self.cur[0] if self.cur is not None else 0.0)


class IoStats:
    """The statistics of one host run (see the module's text); the host's ledger hands it the
    completed IOs in blocks (``IoLedger.collect_blocks``). :meth:`finish` folds what is buffered
    (call it before reading). ``host``: the run's host, user space's view of it
    (:class:`models.ioengines.host.EngineHost`: its devices, ledger, ``next_io_id`` and engine are
    read); ``jobs``: fio's jobs of the run."""

    def __init__(
        self,
        host: EngineHost,
        jobs: Sequence[FioJob],
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
        self._ledger: IoLedger = host.ledger
        self._low = 0  # the lowest IO number not complete yet
        self._done: set[int] = set()  # IO numbers complete above _low
        self._marks: deque = deque()  # (next_io_id, time) at each block
        self._merged: set[int] = set()  # requests merged into measured commands, not seen yet
        self._ledger.collect_blocks(self._fold, BLOCK)

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
        latest = self.t_complete_max
        for r in reqs:
            if r.t_complete > latest:
                latest = r.t_complete
        self.t_complete_max = latest
        t0, t1 = self.t0, self.t1
        meas: list[Request] = []
        t0s: list[float] | None = None
        if self.control is None:
            for r in reqs:
                if t0 <= r.t_complete <= t1:
                    meas.append(r)
        else:
            t0s = [self.control.measure_from_ns(j, t0) for j in range(len(self.jobs))]
            for r in reqs:
                if t0s[r.job] <= r.t_complete <= t1:
                    meas.append(r)
        if meas:
            self._disk(meas)
            if self.records is not None:
                self.records(records_table(meas))
            for (key, op), rs in self._groups(meas).items():
                e = self.entries.get(key)
                if e is None:
                    e = self.entries[key] = EntryStats(
                        rs[0].job, None if isinstance(key, int) else rs[0].task, self._async[rs[0].job]
                    )
                e.add(op, rs, t0 if t0s is None else t0s[rs[0].job])
        upto = self._watermark()
        for d in self.disks.values():
            d.fold(upto, t0, t1)

    def _groups(self, meas: list[Request]) -> dict[tuple[object, str], list[Request]]:
        """The measured IOs by ``jobs[]`` entry (the job, or (job, thread) without group
        reporting) and direction, in order of first appearance (a run of IOs of one group: one
        dict step)."""
        groups: dict[tuple[object, str], list[Request]] = {}
        grouped = self._grouped
        last: list[Request] = []
        last_key: object = None
        last_op = ""
        for r in meas:
            job = r.job
            key: object = job if grouped[job] else (job, r.task.io_tid)
            op = r.op
            if op != last_op or key != last_key:
                last = groups.setdefault((key, op), [])
                last_key, last_op = key, op
            last.append(r)
        return groups

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
            splits = r.splits
            if splits:
                cmds.extend(splits)
            else:
                cmds.append(r)
        for c in cmds:
            into = c.merged
            if into:
                for m in into:
                    merged.add(m.id)
        disks = self.disks
        for c in cmds:
            qp = c.qp
            if qp is None:
                continue  # a user-space driver's command (ioengine=spdk): the kernel's disk statistics never see it
            d = disks[qp.device.index]
            if merged and c.id in merged:
                merged.discard(c.id)
                d.dirs[_op_index(c.op)].merges += 1
                continue
            d.add(c)

    def _track(self, reqs: list[Request]) -> None:
        done = self._done
        low = self._low
        for r in reqs:
            rid = r.id
            if rid != low:
                done.add(rid)
                continue
            low += 1  # (in order: no set step)
            while done and low in done:
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
