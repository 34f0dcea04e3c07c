"""simcore.grid.CountGrid: a cache keyed by three counts behaves as a dict keyed by the triple."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simcore.grid import GRID_SPAN, CountGrid

_COUNT = st.one_of(st.integers(0, 40), st.integers(GRID_SPAN - 2, GRID_SPAN + 3), st.integers(0, 10**12))


@settings(max_examples=80, deadline=None)
@given(ops=st.lists(st.tuples(st.booleans(), _COUNT, _COUNT, _COUNT, st.integers()), max_size=60))
def test_count_grid_is_a_dict_of_triples(ops):
    grid, ref = CountGrid(), {}
    for put, i, j, k, v in ops:
        if put:
            grid.put(i, j, k, v)
            ref[(i, j, k)] = v
        assert grid.get(i, j, k) == ref.get((i, j, k))
    for i, j, k in ref:
        assert grid.get(i, j, k) == ref[(i, j, k)]


def test_count_grid_rejects_negative_keys():
    grid = CountGrid()
    grid.put(0, 0, 0, "first")
    with pytest.raises(ValueError, match="counts"):
        grid.put(1, -1, 0, "x")
    assert grid.get(0, 0, -1) is None and grid.get(-1, 0, 0) is None
