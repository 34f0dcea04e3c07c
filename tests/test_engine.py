"""simcore: clock, callbacks, RNG streams, units."""

import numpy as np
import pytest

from simcore.engine import Engine
from simcore.rng import BatchedDraws, RngStreams
from simcore import units


def test_callbacks_run_in_time_then_fifo_order():
    eng = Engine()
    log = []
    eng.call_in(10, log.append, ("b", 10))
    eng.call_in(5, log.append, ("a", 5))
    eng.call_in(10, log.append, ("c", 10))
    eng.call_at(7, lambda: log.append(("x", eng.now)))
    eng.run(100)
    assert log == [("a", 5), ("x", 7), ("b", 10), ("c", 10)]
    assert eng.events_processed == 4


def test_cancel_and_negative_delay():
    eng = Engine()
    log = []
    c = eng.call_in(3, log.append, 1)
    c.cancel()
    eng.run(10)
    assert log == []
    with pytest.raises(ValueError, match="negative delay"):
        eng.call_in(-1, log.append, 2)


def test_rng_streams_are_independent_and_reproducible():
    a = RngStreams(42)
    b = RngStreams(42)
    x1 = a.stream("ssd0.service").random(5)
    # asking for another stream first must not shift the draws of this one
    b.stream("job0.0").random(100)
    x2 = b.stream("ssd0.service").random(5)
    assert np.array_equal(x1, x2)
    assert not np.array_equal(RngStreams(43).stream("ssd0.service").random(5), x1)
    with pytest.raises(ValueError):
        RngStreams(-1)


def test_batched_draws_do_not_depend_on_batch_size():
    g1 = RngStreams(1).stream("s")
    g2 = RngStreams(1).stream("s")
    d1 = BatchedDraws(g1, lambda g, n: g.random(n), batch=7)
    d2 = BatchedDraws(g2, lambda g, n: g.random(n), batch=7)
    assert [d1.next() for _ in range(20)] == [d2.next() for _ in range(20)]


def test_units():
    assert units.cycles_to_ns(3400, 3.4) == pytest.approx(1000.0)
    assert units.ns_to_cycles(1000, 3.4) == pytest.approx(3400.0)
    assert units.us(2.5) == 2500.0
    assert units.ms(1) == 1e6
    assert units.s(1) == 1e9
    assert units.energy_j(10.0, 1e9) == pytest.approx(10.0)
