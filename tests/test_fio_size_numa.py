"""fio's size=N% (a share of the device's capacity) and numa_cpu_nodes (issue 18)."""

from __future__ import annotations

import pytest

from scenarios.config.host import resolve
from simcore.errors import ConfigError


def _job(text: str, **sets):
    cfg = resolve(scenario="default", sets={**{k: v for k, v in sets.items()}, **_opts(text)})
    return cfg, cfg.jobs[0]


def _opts(text: str) -> dict:
    return dict(kv.split("=", 1) for kv in text.split())


def test_size_percent_is_a_share_of_the_devices_capacity_in_whole_blocks():
    cfg, job = _job("size=10% bs=4k")
    cap = cfg.platform.ssd.capacity_bytes
    assert cap == 280_000_000_000  # the 900P of the default platform (product specification)
    assert job.size_bytes == int(cap * 0.10) // 4096 * 4096
    cfg, job = _job("size=100% bs=64k")
    assert job.size_bytes == cap // 65536 * 65536


@pytest.mark.parametrize(
    "text, words",
    [
        ("size=0%", "between 1 and 100"),
        ("size=150%", "between 1 and 100"),
        ("size=abc%", "bad percentage"),
    ],
)
def test_bad_size_percentages_are_refused(text, words):
    with pytest.raises(ConfigError, match=words):
        _job(text)


def test_size_percent_needs_a_capacity():
    with pytest.raises(ConfigError, match="capacity"):
        _job("size=10%", **{"ssd.capacity_bytes": "null"})


def test_size_percent_bounds_a_size_based_run():
    """Without time_based the job ends after size bytes (here 0.001% of 280 GB = 2.8 MB: 683 4 KiB IOs)."""
    from scenarios.run.simulate import simulate

    cfg = resolve(scenario="default", sets={"size": "0.001%", "time_based": "0", "runtime": "10s", "ramp_time": "0"})
    s = simulate(cfg)["summary"]
    assert s["ios"] == cfg.jobs[0].size_bytes // 4096


def test_numa_cpu_nodes_keeps_the_job_on_node_zero_and_refuses_other_nodes():
    cfg, job = _job("numa_cpu_nodes=0")
    assert job.cpus_allowed == tuple(range(cfg.platform.cpu.logical_cpus))
    cfg, job = _job("numa_cpu_nodes=all cpus_allowed=2-3")
    assert job.cpus_allowed == (2, 3)  # inside the node: the job's own list stays
    with pytest.raises(ConfigError, match="one NUMA node"):
        _job("numa_cpu_nodes=0-1")


def test_offset_percent_is_a_share_of_the_capacity_aligned_to_the_block_size():
    cfg, job = _job("offset=50% size=1g bs=4k")
    cap = cfg.platform.ssd.capacity_bytes
    assert job.offset_bytes == int(cap * 0.5) // 4096 * 4096 and job.size_bytes == 1 << 30
    with pytest.raises(ConfigError, match="from 0 to below 100"):
        _job("offset=100%")
