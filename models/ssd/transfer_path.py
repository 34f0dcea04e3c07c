"""A transfer path of the device (a media data path, a NAND channel, the PCIe link): one transfer
at a time at its rate, transfers placed in the order their data is ready, each in the first gap long
enough at or after its ready time (so a later-ready short transfer can fill a gap before an earlier
long one ends). Used by :mod:`models.ssd.device` and :mod:`models.ssd.media`."""

from __future__ import annotations

from typing import Final

from mypy_extensions import i64

from simcore.engine import Engine

#: the fewest reservations a path holds before it drops those that are over (TransferPath.prune_at)
PRUNE_FROM: Final = 64


def _first_after(xs: list[float], x: float) -> int:
    """``bisect.bisect_right(xs, x)`` for a sorted list of floats: the first index whose value is
    greater than ``x`` (compiled, each probe compares two native floats; bisect's C function
    compares Python objects)."""
    lo: i64 = 0
    hi: i64 = len(xs)
    while lo < hi:
        mid: i64 = (lo + hi) >> 1
        if x < xs[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


class TransferPath:
    """A data path that carries one transfer at a time: the PCIe link, a media data path.

    Busy intervals (start, end) are kept in time order, apart (a reservation that touches one
    extends it: back-to-back transfers, a saturated path's, are one interval); a transfer takes
    the first gap long enough at or after the time its data is ready, so transfers are served in
    the order their data becomes ready (a read whose media access finished early does not wait
    behind a slower one submitted before it). Times in ns."""

    __slots__ = ("engine", "starts", "ends", "tail_start", "prune_at")

    def __init__(self, engine: Engine):
        self.engine = engine
        self.starts: list[float] = []
        self.ends: list[float] = []
        #: where the last run of back-to-back reservations begins (ns; at or after the start of the
        #: last interval): from here to ``ends[-1]`` the path has no gap, so a transfer ready in that
        #: span goes after the last one (no scan of the intervals per transfer)
        self.tail_start = 0.0
        #: prune when more intervals than this are held: twice what the last prune left (at least
        #: PRUNE_FROM), so that a path with hundreds apart prunes once per as many new ones (the
        #: searches skip those that are over, by time)
        self.prune_at = PRUNE_FROM

    def reserve(self, t: float, dur: float) -> float:
        """Reserve ``dur`` ns (> 0: a transfer moves bytes) at the earliest time >= ``t`` the path
        is free; returns the start."""
        if not dur > 0.0:  # (busy intervals are merged where they touch: a zero-length one has no place)
            raise ValueError(f"a transfer takes time: dur = {dur} ns")
        starts, ends = self.starts, self.ends
        last = ends[-1] if ends else -1.0  # (times are >= 0)
        if last <= t:  # the path is free from t on: the common case
            if ends and last <= self.engine.now:  # every reservation is over: start afresh
                if len(ends) == 1:  # (in place: no new lists)
                    starts[0] = t
                    ends[0] = t + dur
                else:
                    self.starts = [t]
                    self.ends = [t + dur]
                self.tail_start = t
                return t
            if last < t:
                self.tail_start = t  # after a gap: a new last run
                starts.append(t)
                ends.append(t + dur)
            else:
                ends[-1] = t + dur  # back to back with the last one: the same busy interval
            return t
        if t >= self.tail_start:  # inside the last run, which has no gap: after its end
            start = ends[-1]
            ends[-1] = start + dur
            return start
        if len(ends) > self.prune_at:  # (the search below skips the reservations that are over)
            self._prune()
            starts, ends = self.starts, self.ends
        i = _first_after(ends, t)  # first reservation still busy after t
        start = t
        n = len(starts)
        tail = self.tail_start
        while i < n:
            s = starts[i]  # (each list item read once: compiled, a read unboxes a float)
            if start + dur <= s:
                break
            if s >= tail:  # the last run: no gap in it
                start = ends[-1]
                i = n
                break
            e = ends[i]
            if e > start:
                start = e
            i += 1
        if i == n and (n == 0 or start > ends[n - 1]):
            self.tail_start = start  # appended after a gap: a new last run
        self._place(i, start, start + dur)
        return start

    def _place(self, i: int, start: float, end: float) -> None:
        """Keep ``[start, end)`` as busy, before the interval at index ``i`` (it fits in the gap
        there): merged with the interval before or after it where it touches them."""
        starts, ends = self.starts, self.ends
        n = len(starts)
        if i > 0 and ends[i - 1] == start:
            if i < n and starts[i] == end:  # it closes the gap: the two become one
                ends[i - 1] = ends[i]
                del starts[i]
                del ends[i]
            else:
                ends[i - 1] = end
        elif i < n and starts[i] == end:
            starts[i] = start
        else:
            starts.insert(i, start)
            ends.insert(i, end)

    def _prune(self) -> None:
        """Drop the reservations that are over (ends are in time order)."""
        k = _first_after(self.ends, self.engine.now)
        if k:
            del self.starts[:k], self.ends[:k]
        self.prune_at = max(PRUNE_FROM, 2 * len(self.ends))

    def busy_until(self) -> float:
        """When the last reservation ends (0: none), ns."""
        return self.ends[-1] if self.ends else 0.0
