"""models/cpu/power_limit.py: the package power limit (RAPL PL1 / AMD PPT) caps frequency."""

from __future__ import annotations

import pytest

from scenarios.config.host import resolve
from scenarios.config.server import resolve_server
from scenarios.run.assembly import build_run
from scenarios.run.simulate import simulate


def test_ceiling_caps_requests_and_releases_them():
    host, _fio, _ramp, _end = build_run(resolve(sets={"runtime": "1ms"}))
    pkg = host.pkg
    core = pkg.cores[0]
    top = pkg.cfg.top_freq_ghz
    pkg.set_ceiling(0.0, 2.0, pkg.sockets[0])
    assert core.target_ghz == 2.0 and core.requested_ghz == top
    core.request_freq(0.0, 1.5)  # below the ceiling: granted
    assert core.target_ghz == 1.5
    core.request_freq(0.0, 3.0)
    assert core.target_ghz == 2.0  # capped
    pkg.set_ceiling(0.0, top, pkg.sockets[0])
    assert core.target_ghz == 3.0  # the request comes back when the cap lifts
    host.engine.run(1e6)
    assert core.freq_ghz == 3.0  # after the P-state transition latency


def test_default_host_is_far_below_its_tdp():
    s = simulate(resolve(sets={"runtime": "20ms"}))["summary"]
    assert s["cpu_power_limit"] == {
        "limit_w": 80.0,
        "throttled_fraction": 0.0,
        "ceiling_ghz_mean": 3.8,
        "adjustments": 0,
    }


def test_a_low_limit_drives_the_cores_to_the_minimum_frequency():
    names = [c.name for c in resolve(sets={}).platform.cpu.cstates]
    sets = {
        "runtime": "30ms",
        "ramp_time": "50ms",
        "cpu.power_limit_w": "15",
        "cpu.power_limit_window_ms": "2",
        "cpu.cpuidle_disable": "[" + ",".join(names[1:]) + "]",
    }  # idle=poll: ~50 W unthrottled
    s = simulate(resolve(sets=sets))["summary"]
    pl = s["cpu_power_limit"]
    assert pl["throttled_fraction"] == 1.0 and pl["ceiling_ghz_mean"] == pytest.approx(0.8)
    # the same idle=poll (its spinning siblings slow the IO thread's CPU alike) at powersave's 0.8 GHz;
    # the limit takes 30 steps of 0.1 GHz, 1 per ms, to get there
    slow = simulate(
        resolve(
            sets={
                "runtime": "30ms",
                "ramp_time": "50ms",
                "cpu.cpufreq_governor": "powersave",
                "cpu.cpuidle_disable": sets["cpu.cpuidle_disable"],
            }
        )
    )
    assert s["latency_us"]["mean"] == pytest.approx(slow["summary"]["latency_us"]["mean"], rel=0.01)


def test_server_linux_policy_at_peak_load_is_held_at_its_ppt():
    """The kernel target at 10M IOPS would draw ~390 W on the EPYC 9454P; PPT (290 W) lowers the
    frequency ceiling until the package stays at the limit."""
    cfg = resolve_server(
        "server-stable",
        {
            "server.policy": "linux",
            "workload.rate_iops": "10240000",
            "workload.duration_s": "0.04",
            "workload.warmup_s": "0.02",
        },
    )
    s = simulate(cfg)["summary"]
    pl = s["cpu_power_limit"]
    assert pl["limit_w"] == 290.0 and pl["throttled_fraction"] == 1.0
    assert 1.5 < pl["ceiling_ghz_mean"] < 3.0
    assert s["power_w"]["cpu"] == pytest.approx(290.0, rel=0.03)


def test_each_package_is_held_to_its_own_limit():
    """RAPL's PL1 is per package: on two sockets with every busy thread on socket 0, only socket 0's
    limiter lowers its ceiling; socket 1 (idle, far below the limit) keeps its top frequency."""
    cfg = resolve(
        scenario="cheops23-depth",
        sets={
            "runtime": "30ms",
            "ramp_time": "5ms",
            "numjobs": "10",
            "numa_cpu_nodes": "0",
            "cpu.power_limit_w": "50",
            "cpu.power_limit_window_ms": "1",
        },
    )
    s = simulate(cfg)["summary"]
    pl = s["cpu_power_limit"]
    busy, idle = pl["per_package"]
    assert pl["limit_w"] == 50.0
    assert busy["throttled_fraction"] > 0.5 and busy["ceiling_ghz_mean"] < cfg.platform.cpu.top_freq_ghz
    assert idle["throttled_fraction"] == 0.0 and idle["adjustments"] == 0
    assert s["power_w"]["cpu_socket0"] == pytest.approx(50.0, rel=0.1)
