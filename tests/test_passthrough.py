"""io_uring_cmd NVMe passthrough on the character device (issue 18): no file system, no IO
scheduler, its own completion path; hipri polls."""

from __future__ import annotations

import pytest

from scenarios.config.host import resolve
from scenarios.run.simulate import simulate


def _run(engine: str, **sets):
    cfg = resolve(
        platform="optane-p4801x-e3-1230",
        scenario="default",
        sets={"ioengine": engine, "iodepth": "1", "runtime": "30ms", "ramp_time": "5ms", **sets},
    )
    return cfg, simulate(cfg, keep_model=True)


def test_passthrough_skips_the_file_system_and_the_scheduler():
    """With mq-deadline attached, io_uring pays the file system and the scheduler (dispatched by the
    kblockd worker); io_uring_cmd pays neither: its own command setup, a direct dispatch, no
    kworker, and it is faster."""
    cfg, blk = _run("io_uring", **{"queue.scheduler": "mq-deadline"})
    _, cmd = _run("io_uring_cmd", **{"queue.scheduler": "mq-deadline"})
    sb, sc = blk["summary"], cmd["summary"]
    assert sb["layers"]["fs"] > 0 and sb["layers"]["iosched"] > 0
    assert sc["layers"]["fs"] == 0 and sc["layers"]["iosched"] == 0
    assert cmd.model.blk.kblockd == {} and cmd.model.blk.lock_rounds == 0
    assert blk.model.blk.kblockd  # the block path's unplugged QD1 goes through kblockd
    assert sc["latency_us"]["p50"] < sb["latency_us"]["p50"]
    k = cfg.platform.kernel
    # the driver layer carries the passthrough setup and completion in place of the fs work
    assert sc["layers"]["driver"] - sb["layers"]["driver"] == pytest.approx(
        (k.uring_cmd_cycles + k.uring_cmd_done_cycles) / sc["freq_ghz_mean"]["core0"], rel=0.02
    )


def test_passthrough_with_hipri_polls():
    _, r = _run("io_uring_cmd", hipri="1", **{"queue.io_poll": "1"})
    s = r["summary"]
    assert set(s["interrupts"]) <= {"tick"} and s["layers"]["polling"] > 0
    assert s["ios"] > 0
