"""models.ssd.transfer_path.TransferPath: a transfer starts in the first gap long enough at or after its
data is ready, whatever the path keeps (merged intervals, the gap-free last run, pruning)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models.ssd.transfer_path import TransferPath
from simcore.engine import Engine


def first_fit(busy: list[tuple[float, float]], t: float, dur: float) -> float:
    """The reference: every reservation ever made, scanned in time order."""
    start = t
    for a, b in sorted(busy):
        if b <= start:
            continue
        if start + dur <= a:
            break
        start = max(start, b)
    busy.append((start, start + dur))
    return start


_TIME = st.one_of(st.integers(0, 60).map(float), st.floats(0.0, 60.0))
_DUR = st.one_of(st.integers(1, 12).map(float), st.floats(0.01, 12.0))


@settings(max_examples=200, deadline=None)
@given(steps=st.lists(st.tuples(st.integers(0, 3).map(float), _TIME, _DUR), min_size=1, max_size=120))
def test_reserve_is_first_fit_and_keeps_apart_intervals(steps):
    eng = Engine()
    path, busy = TransferPath(eng), []
    for advance, ready_in, dur in steps:
        eng.now += advance  # (the clock only moves forward; data is ready now or later)
        t = eng.now + ready_in
        assert path.reserve(t, dur) == first_fit(busy, t, dur)
        starts, ends = path.starts, path.ends
        assert all(a < b for a, b in zip(starts, ends))
        assert all(b < a for b, a in zip(ends, starts[1:]))  # apart: touching ones are merged
        assert path.busy_until() == max(b for _, b in busy)


def test_back_to_back_transfers_are_one_interval():
    eng = Engine()
    path = TransferPath(eng)
    for k in range(100):
        assert path.reserve(0.0, 2.0) == 2.0 * k
    assert path.starts == [0.0] and path.ends == [200.0]
    assert path.reserve(1.0, 1.0) == 200.0  # no gap before the end of the run


def test_a_transfer_of_no_time_is_refused():
    with pytest.raises(ValueError, match="takes time"):
        TransferPath(Engine()).reserve(5.0, 0.0)
