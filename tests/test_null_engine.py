"""fio's null engine (models/ioengines/null_io.py): fio's own per-IO work and nothing else (issue 18)."""

from __future__ import annotations

import pytest

from scenarios.config.host import resolve
from scenarios.run.simulate import simulate


def _run(**sets):
    cfg = resolve(scenario="default", sets={"ioengine": "null", "runtime": "20ms", "ramp_time": "2ms", **sets})
    return cfg, simulate(cfg)["summary"]


def test_null_engine_costs_fios_user_work_only():
    cfg, s = _run(iodepth="1")
    k = cfg.platform.kernel
    for layer in ("syscall", "fs", "block", "iosched", "driver", "polling"):
        assert s["layers"][layer] == 0, layer  # nothing enters the kernel's IO path
    assert s["device_commands_per_io"] == 0
    assert set(s["interrupts"]) <= {"tick"}  # the busy CPU's scheduler tick only
    ghz = s["freq_ghz_mean"]["core0"]
    per_io_ns = (k.user_io_cycles + k.user_complete_cycles) / ghz
    assert s["layers"]["user"] == pytest.approx(per_io_ns, rel=1e-4)
    assert s["iops"] == pytest.approx(1e9 / per_io_ns, rel=0.01)  # one CPU, back to back
    # latency: from the IO's issue to its completion, i.e. fio's completion work
    assert s["latency_us"]["mean"] == pytest.approx(k.user_complete_cycles / ghz / 1e3, rel=0.02)


def test_null_engine_scales_with_the_clock_and_keeps_its_depth():
    _, fast = _run(iodepth="1")
    _, slow = _run(iodepth="1", **{"cpu.cpufreq_governor": "powersave"})
    assert slow["iops"] < 0.8 * fast["iops"]  # CPU work only: the clock sets the rate
    _, deep = _run(iodepth="8", iodepth_batch_submit="8", iodepth_batch_complete_min="8")
    assert deep["ios"] > 0 and deep["device_commands_per_io"] == 0
