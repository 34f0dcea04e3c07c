"""blk-mq splits IOs larger than max_sectors_kb: one request and device command per piece."""

from __future__ import annotations

import pytest

from scenarios.config.host import resolve
from scenarios.run.assembly import build_run
from scenarios.run.simulate import simulate


def run_host(**sets):
    cfg = resolve(sets={"runtime": "20ms", "ramp_time": "0", **{k.replace("__", "."): v for k, v in sets.items()}})
    host, _fio, _ramp, end = build_run(cfg, keep_requests=True)
    host.engine.run(end)
    return host


@pytest.mark.parametrize(
    "sets",
    [
        {"bs": "1m"},
        {"bs": "1m", "queue__io_poll": "1", "hipri": "1"},
        {"bs": "1m", "queue__io_poll": "1", "hipri": "1", "queue__io_poll_delay": "0"},
        {"bs": "1m", "ioengine": "io_uring", "iodepth": "4"},
        {"bs": "1m", "rw": "randwrite", "queue__scheduler": "mq-deadline"},
    ],
)
def test_a_large_io_becomes_pieces_that_complete_it_once(sets):
    host = run_host(**sets)
    recs = host.records
    assert recs and len({r.id for r in recs}) == len(recs)
    dev = host.devices[0]
    in_flight = sum(qp.inflight for qp in dev.qps)
    # 8 pieces of 128 KiB per IO; IOs still in flight at the end account for the rest
    assert dev.commands - in_flight >= 8 * len(recs) and dev.bytes == 128 * 1024 * dev.commands
    for r in recs:
        assert r.done and len(r.splits) == 8 and all(p.done for p in r.splits)
        assert r.t_submit <= r.t_dispatch <= r.t_dev_start < r.t_dev_end <= r.t_cqe <= r.t_reaped <= r.t_complete
        assert r.t_dev_end == max(p.t_dev_end for p in r.splits)
        assert sum(p.nbytes for p in r.splits) == r.nbytes
        assert [p.offset for p in r.splits] == [r.offset + i * 128 * 1024 for i in range(8)]


def test_each_piece_pays_block_and_driver_work_and_its_interrupt():
    big = simulate(resolve(sets={"runtime": "50ms", "bs": "1m"}))["summary"]
    one = simulate(resolve(sets={"runtime": "50ms", "bs": "1m", "queue.max_sectors_kb": "1024"}))["summary"]
    # (IOs in flight at the window edges add a little)
    assert big["device_commands_per_io"] == pytest.approx(8, abs=0.2)
    assert one["device_commands_per_io"] == pytest.approx(1, abs=0.05)
    per_io = {name: s["interrupts"]["nvme"] / s["ios"] for name, s in (("big", big), ("one", one))}
    assert per_io["big"] == pytest.approx(8, abs=0.2) and per_io["one"] == pytest.approx(1, abs=0.05)
    assert big["layers"]["block"] > 6 * one["layers"]["block"]
    assert big["layers"]["driver"] > 6 * one["layers"]["driver"]


def test_max_sectors_kb_sets_the_piece_size():
    host = run_host(bs="128k", queue__max_sectors_kb="32")
    assert all(len(r.splits) == 4 and {p.nbytes for p in r.splits} == {32 * 1024} for r in host.records)
    assert run_host(bs="128k").records[0].splits is None  # at the limit: not split
