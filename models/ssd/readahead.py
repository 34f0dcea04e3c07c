"""The controller's read-ahead of sequential streams (:class:`~models.ssd.controller_config.ReadAheadConfig`).

Per namespace, a few stream slots. A read that starts where a stream's last read ended continues
it; once a stream has ``trigger_reads`` contiguous reads, the controller prefetches the next
``window_bytes`` into its DRAM in chunks, each a media read the device places on one of its units,
consecutive chunks on consecutive units (the ``fetch`` callback: the device's own media timeline,
so prefetches occupy the units as host reads do). A later read wholly inside a stream's prefetched range is a hit: it
is served once its chunks are in DRAM (it waits for a chunk still being read) and tops the window
up by as many chunks as it consumed. A read that matches no stream takes the oldest slot (round
robin) for a new stream. Everything is computed when the read arrives: no events of its own.
"""

from __future__ import annotations

from typing import Callable

from models.ssd.controller_config import ReadAheadConfig

#: consumed chunks kept at the front of a stream's lists before they are dropped at once
COMPACT_AT = 32


class Stream:
    """One detected (or candidate) stream: where its next read should start, how many contiguous
    reads it has had, and its prefetched chunks (contiguous from ``lo`` to ``pf_end``: chunk i ends
    at ``ends[i]``, its data is in DRAM at ``ready[i]``; the first ``head`` of them are consumed)."""

    __slots__ = ("next_off", "run", "lo", "pf_end", "ends", "ready", "head")

    def __init__(self) -> None:
        self.next_off = -1
        self.run = 0
        self.lo = 0
        self.pf_end = 0  # lo == pf_end: nothing prefetched
        self.ends: list[int] = []
        self.ready: list[float] = []
        self.head = 0

    def drop(self) -> None:
        """Forget the prefetched data (a write over it, or a restart)."""
        self.ends = []
        self.ready = []
        self.head = 0
        self.lo = self.pf_end = 0


class ReadAhead:
    """The read-ahead of one namespace; ``fetch(offset, nbytes, t)`` reads a chunk from the media
    no earlier than ``t`` and returns when its data is in DRAM, ns. Counters are monotonic."""

    def __init__(self, cfg: ReadAheadConfig, fetch: Callable[[int, int, float], float]) -> None:
        self.cfg = cfg
        self.fetch = fetch
        self.streams = [Stream() for _ in range(cfg.streams)]
        self._victim = 0
        self._trigger = cfg.trigger_reads
        self._chunk = cfg.chunk_bytes
        self._window = cfg.window_bytes
        self.hits = 0  # reads served from the prefetched data
        self.waits = 0  # hits that arrived before their chunk's media read had finished
        self.prefetch_reads = 0  # chunks read from the media ahead of the host
        self.prefetch_bytes = 0

    def read(self, offset: int, nbytes: int, t: float) -> float:
        """A host read of ``nbytes`` at ``offset`` fetched at ``t``: when its data is in DRAM (a
        hit, ns), or -1 when it must be read from the media (it may still start a stream's prefetch)."""
        end = offset + nbytes
        for s in self.streams:
            if s.lo <= offset and end <= s.pf_end:
                return self._hit(s, offset, end, t)
            if offset == s.next_off:
                s.run += 1
                s.next_off = end
                if s.run >= self._trigger:  # a stream: prefetch from where this read ends
                    s.drop()
                    s.lo = s.pf_end = end
                    self._top_up(s, end, nbytes, t)
                return -1.0
        s = self.streams[self._victim]
        self._victim = self._victim + 1 if self._victim + 1 < len(self.streams) else 0
        s.drop()
        s.next_off = end
        s.run = 1
        return -1.0

    def _hit(self, s: Stream, offset: int, end: int, t: float) -> float:
        ends = s.ends
        h0 = h = s.head
        while ends[h] <= offset:  # chunks wholly before the read are consumed
            h += 1
        if h > h0:
            s.lo = ends[h - 1]  # where the first chunk not consumed starts
        ready = s.ready
        when = 0.0
        i = h
        n = len(ends)
        while i < n:
            r = ready[i]
            if r > when:
                when = r
            if ends[i] >= end:
                break
            i += 1
        if h >= COMPACT_AT:
            del ends[:h]
            del ready[:h]
            h = 0
        s.head = h
        s.run += 1
        if end > s.next_off:
            s.next_off = end
        self.hits += 1
        if when > t:
            self.waits += 1
        self._top_up(s, end, end - offset, t)
        return when

    def _top_up(self, s: Stream, end: int, nbytes: int, t: float) -> None:
        """Prefetch until the stream's window reaches ``window_bytes`` past ``end``, in chunks of
        ``chunk_bytes`` (or of the stream's read size, when larger)."""
        size = nbytes if nbytes > self._chunk else self._chunk
        goal = end + self._window
        while s.pf_end < goal:
            off = s.pf_end
            s.ready.append(self.fetch(off, size, t))
            s.pf_end = off + size
            s.ends.append(s.pf_end)
            self.prefetch_reads += 1
            self.prefetch_bytes += size

    def invalidate(self, offset: int, nbytes: int) -> None:
        """A write, trim or zone action over ``[offset, offset + nbytes)``: streams whose prefetched
        data overlaps it drop that data (their next read restarts the prefetch)."""
        end = offset + nbytes
        for s in self.streams:
            if s.pf_end > s.lo and offset < s.pf_end and end > s.lo:
                s.drop()
