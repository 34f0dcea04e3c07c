"""simcore: clock, callbacks, RNG streams, units."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from simcore import units
from simcore.engine import Engine, Handler
from simcore.rng import BatchedDraws, RngStreams


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


class _Segments(Handler):
    """A handler whose events are logged; its first event rearms its own Call for a second one."""

    def __init__(self, eng: Engine, log: list):
        self.eng, self.log, self.call = eng, log, None

    def on_event(self) -> None:
        self.log.append(("event", self.eng.now))
        if len(self.log) == 1:
            self.call.release()
            again = self.eng.rearm(self.call, self, self.eng.now + 5.0)
            self.log.append(again is self.call)


def test_a_released_call_is_queued_again_and_a_cancelled_one_never():
    """Engine.rearm: a Call released by its handler's event is reused (same object, new time);
    a cancelled Call (still queued) or None gets a new one; a cancelled handler Call never runs."""
    eng = Engine()
    log: list = []
    h = _Segments(eng, log)
    h.call = eng.rearm(None, h, 10.0)
    eng.run()
    assert log == [("event", 10.0), True, ("event", 15.0)]
    c = eng.call_handler_in(1.0, h)
    c.cancel()
    other = eng.rearm(c, h, eng.now + 2.0)
    assert other is not c
    eng.run()
    assert log[-1] == ("event", 17.0) and len(log) == 4
    with pytest.raises(ValueError, match="negative delay"):
        eng.call_handler_in(-1.0, h)


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


def test_callbacks_and_simpy_processes_share_one_clock():
    eng = Engine()
    log = []
    done = eng.env.event()

    def proc():
        yield eng.env.timeout(5)
        log.append(("proc", eng.now))
        eng.call_in(1, lambda: log.append(("call from proc", eng.now)))
        yield eng.env.timeout(5)
        done.succeed("finished")

    eng.process(proc())
    # the process's first timeout is scheduled when it starts (in run), after this call: the call
    # runs first at t=5 (same-time events in scheduling order, as in simpy)
    eng.call_in(5, lambda: log.append(("call", eng.now)))
    assert eng.run(done) == "finished"
    assert log == [("call", 5), ("proc", 5), ("call from proc", 6)]
    assert eng.now == 10
    eng.call_in(3, log.append, "late")
    eng.run(20)  # a time limit ends at that time
    assert eng.now == 20 and log[-1] == "late"
    with pytest.raises(ValueError):
        eng.run(20)


def test_run_restores_the_garbage_collector_even_on_error():
    import gc

    eng = Engine()
    eng.call_in(1, lambda: 1 / 0)
    assert gc.isenabled()
    with pytest.raises(ZeroDivisionError):
        eng.run(10)
    assert gc.isenabled()


@pytest.mark.parametrize(
    "sets",
    [
        {},
        {"queue.io_poll": "1", "queue.io_poll_delay": "0", "hipri": "1", "numjobs": "4"},
        # a fixed hybrid sleep: every IO arms and cancels or fires an hrtimer at once (adaptive hybrid
        # polling sleeps only after its first 100 ms statistics window)
        {"queue.io_poll": "1", "queue.io_poll_delay": "3", "hipri": "1", "numjobs": "4"},
        {"ioengine": "io_uring", "iodepth": "8", "queue.scheduler": "mq-deadline"},
        {"numjobs": "4", "rw": "randrw", "queue.scheduler": "bfq", "nvme.irq": "cinterrupts"},
        {"bs": "512k", "ioengine": "libaio", "iodepth": "4"},  # IOs split at max_sectors_kb into pieces
    ],
)
def test_models_leave_no_reference_cycles(sets):
    """Engine.run pauses the cyclic collector, which is safe only while the models free everything
    by reference counting: a reference cycle per IO would grow memory for the whole run."""
    import gc

    from scenarios.config.host import resolve
    from scenarios.run.assembly import build_run

    host, _fio, _ramp, end = build_run(resolve(sets={**sets, "runtime": "20ms", "ramp_time": "0"}), keep_requests=True)
    gc.collect()
    host.engine.run(end)
    assert len(host.records) > (50 if "bs" in sets else 1000)  # 512 KiB at 2.4 GB/s: ~90 in 20 ms
    assert gc.collect() == 0


def _cycles_found_per_run(monkeypatch) -> list:
    """Patch Engine.run to collect garbage before and after each run; the list of objects the
    collector found after each run (reference cycles the run left behind) fills as runs go."""
    import gc

    import simcore.engine as engine_mod

    found = []
    run = engine_mod.Engine.run

    def checked_run(self, until=None):
        gc.collect()
        out = run(self, until)
        found.append(gc.collect())
        return out

    monkeypatch.setattr(engine_mod.Engine, "run", checked_run)
    return found


def test_server_model_leaves_no_reference_cycles(monkeypatch):
    from scenarios.config.server import resolve_server
    from scenarios.run.simulate import simulate

    cfg = resolve_server(
        "server-stable",
        {
            "server.policy": "sandman",
            "workload.rate_iops": "320000",
            "workload.duration_s": "0.004",
            "workload.warmup_s": "0.001",
        },
    )
    found = _cycles_found_per_run(monkeypatch)
    simulate(cfg)
    assert found and found == [0] * len(found)


def test_trace_replay_leaves_no_reference_cycles(monkeypatch):
    """A replay's threads sleep on hrtimers until their next IO is due: a fired or cancelled timer
    must not stay alive in a cycle (memory would grow with the trace while the collector is off)."""
    from scenarios.run.replay import resolve_replay
    from scenarios.run.simulate import simulate

    found = _cycles_found_per_run(monkeypatch)
    r = simulate(resolve_replay("scenarios/data/traces/msr_sample.csv", "msr"))
    assert r.summary["completed_ios"] == 300 and r.records is None  # no per-IO rows unless asked
    assert found == [0]


@given(ops=st.lists(st.one_of(st.tuples(st.integers(0, 20), st.integers(0, 1)), st.none()), max_size=200))
def test_typed_heap_pops_as_heapq(ops):
    """The compiled engine's own heap (simcore.engine._push/_pop) pops Calls in heapq's order:
    pushes (time, priority) and pops (None) in any mix."""
    import heapq

    from simcore.engine import Call, _pop, _push

    ours: list = []
    ref: list = []
    got, want = [], []
    for eid, op in enumerate(ops):
        if op is None:
            if ref:
                got.append(_pop(ours).eid)
                want.append(heapq.heappop(ref).eid)
            continue
        call = Call(print, (), float(op[0]), op[1])
        call.eid = eid
        _push(ours, call)
        heapq.heappush(ref, call)
    got += [_pop(ours).eid for _ in range(len(ours))]
    want += [heapq.heappop(ref).eid for _ in range(len(ref))]
    assert got == want


def test_next_event_slot_keeps_the_order():
    """Calls queued in any order run in (time, priority, scheduling) order, whether they went to
    the engine's next-event slot or to the heap."""
    eng = Engine()
    ran = []
    times = [5.0, 3.0, 3.0, 9.0, 1.0, 1.0, 7.0, 3.0]
    for i, t in enumerate(times):
        eng.call_at(t, ran.append, i)
    # a callback that queues an earlier-than-everything call and a later one while running
    eng.call_at(2.0, lambda: (eng.call_in(0.5, ran.append, "a"), eng.call_in(0.0, ran.append, "b")))
    eng.run()
    assert ran == [4, 5, "b", "a", 1, 2, 7, 0, 6, 3]


def test_bulk_events_keep_the_one_order_of_time_then_scheduling():
    """Engine.schedule_bulk queues in a heap of its own (a device's completions): events of both
    heaps still run by time, then in scheduling order, whichever heap holds them (the order one
    heap gives), also when a bulk event is earlier than the pending next event."""
    import random

    from simcore.engine import Call

    eng = Engine()
    log = []
    rng = random.Random(5)
    expected = []
    for i in range(2000):
        t = float(rng.randint(0, 300))
        c = Call(log.append, (i,), t)
        (eng.schedule_bulk if rng.random() < 0.5 else eng.schedule)(c)
        expected.append((t, i))
    eng.run()
    assert log == [i for _t, i in sorted(expected)]
    assert eng.events_processed == 2000
