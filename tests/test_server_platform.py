"""Server platforms are ordinary platforms: one resolver (built-in names and platform files), one
power model (the C0 term of PowerConfig), one C0 account (the CPU package's)."""

from __future__ import annotations

import pytest

from models.platform import PlatformConfig
from models.platforms import PLATFORMS
from models.platforms_server import epyc9454p_16xpm1743
from scenarios.config.host import resolve
from scenarios.config.platform_file import platform_yaml
from scenarios.config.server import resolve_server
from scenarios.run.simulate import simulate

SHORT = {"workload.rate_iops": "160000", "workload.duration_s": "0.003", "workload.warmup_s": "0.001"}


def test_the_storage_node_is_a_builtin_platform_that_idles_in_c1():
    plat = PLATFORMS["epyc9454p-16xpm1743"]()
    assert isinstance(plat, PlatformConfig) and plat == epyc9454p_16xpm1743()
    assert plat.cpu.cpuidle_disable == ("C2",)
    assert plat.power.c0_core_w > 0 and plat.power.c0_core_ghz_w > 0


def test_a_server_runs_on_a_platform_file_with_the_same_result(tmp_path):
    path = tmp_path / "node.yaml"
    path.write_text(platform_yaml(epyc9454p_16xpm1743()))
    builtin = simulate(resolve_server("server-stable", SHORT))
    from_file = simulate(resolve_server("server-stable", SHORT, platform=str(path)))
    assert from_file["summary"] == builtin["summary"]


def test_the_c0_power_term_follows_executing_cores():
    """Others = base + coupling x CPU + (c0_core_w + c0_core_ghz_w x f) per physical core in C0: with
    SPDK's pollers every reserved physical core is in C0 at the top frequency all the time."""
    r = simulate(resolve_server("server-stable", SHORT))
    s = r.summary
    pw = epyc9454p_16xpm1743().power
    cores, ghz = s["active_physical_cores_mean"], s["active_freq_ghz_mean"]
    expect = (
        pw.platform_base_w
        + pw.platform_cpu_coupling * s["power_w"]["cpu"]
        + cores * (pw.c0_core_w + pw.c0_core_ghz_w * ghz)
    )
    assert s["power_w"]["other"] == pytest.approx(expect, rel=1e-9)
    assert cores == pytest.approx(24.0, rel=1e-9)  # 48 reserved logical cores = 24 physical, all polling


def test_the_c0_term_applies_to_host_runs_too():
    """The same PowerConfig term on an ordinary run: a polling thread keeps one physical core in C0."""
    base = {"runtime": "20ms", "ramp_time": "2ms", "hipri": 1, "queue.io_poll": 1}
    plain = simulate(resolve(scenario="default", sets=base))
    more = simulate(resolve(scenario="default", sets={**base, "power.c0_core_w": 10.0}))
    extra = more.summary["power_w"]["other"] - plain.summary["power_w"]["other"]
    busy_c0 = plain.summary["cstate_residency"]["cpu0"]
    c0_fraction = busy_c0["C0"] + busy_c0.get("POLL", 0.0)  # classic polling: cpu0 is always in C0
    assert extra == pytest.approx(10.0 * c0_fraction, rel=0.05)
    assert extra > 9.0
    assert more.summary["power_w"]["cpu"] == plain.summary["power_w"]["cpu"]
