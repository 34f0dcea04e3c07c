"""NUMA (issue 30, item 4) and the NVMe queue mapping (item 5): sockets with their own CPUs and
uncore, cross-socket line and memory costs that appear only when crossing, Linux's spreading of a
device's queues and vectors over the CPUs by node, and fio's numa_cpu_nodes / numa_mem_policy."""

from __future__ import annotations

import pytest

from models.cpu.core import Package
from models.cpu.presets import xeon_e5_2660_v4
from models.os.block.queue_map import VectorMatrix, group_cpus_evenly, queue_counts
from scenarios.config.host import resolve
from scenarios.run.assembly import build_host
from scenarios.run.simulate import simulate
from simcore.errors import ConfigError

TWO_SOCKETS = {"cpu.sockets": "2", "cpu.physical_cores": "10", "cpu.smt": "false", "kernel.version": "5.15"}
PLAT = "optane-p4800x-e5-2660v4"  # (its study ran Linux 5.0: TWO_SOCKETS sets a kernel with io_uring)


def _cfg(**sets):
    base = {"runtime": "4ms", "ramp_time": "0", "ioengine": "io_uring", "iodepth": "1", **TWO_SOCKETS}
    return resolve(scenario="default", platform=PLAT, sets={**base, **sets})


def _cpu(**kw):
    return xeon_e5_2660_v4().model_copy(update=kw)


# ------------------------------------------------------------------ sockets and the package
def test_two_sockets_number_cpus_as_linux_does_and_node_one_is_cpus_10_to_19():
    cfg = _cpu(sockets=2, physical_cores=10, smt=False)
    assert cfg.logical_cpus == 20
    assert cfg.node_cpus(1) == tuple(range(10, 20))
    smt = _cpu(sockets=2, physical_cores=10, smt=True)
    # the first threads of both sockets, then their siblings: cpu 25 is core 5's sibling, node 0
    assert smt.node_cpus(0) == (*range(0, 10), *range(20, 30))
    pkg = Package(smt)
    assert pkg.sibling_of(pkg.cpus[5]).id == 25
    assert [pkg.node_of[c] for c in (0, 9, 10, 19, 20, 30)] == [0, 0, 1, 1, 0, 1]


def test_line_transfer_costs_least_on_one_core_and_most_across_sockets():
    cfg = _cpu(sockets=2, physical_cores=10, smt=True)
    pkg = Package(cfg)
    assert pkg.line_transfer_cycles(3, 3) == 0.0
    # SMT siblings share L1 and L2: about one L2 access, no transfer
    assert pkg.line_transfer_cycles(3, 23) == cfg.smt_line_transfer_cycles < cfg.line_transfer_cycles
    assert pkg.line_transfer_cycles(3, 4) == cfg.line_transfer_cycles
    assert pkg.line_transfer_cycles(3, 13) == cfg.cross_socket_line_transfer_cycles
    assert cfg.cross_socket_line_transfer_cycles > cfg.line_transfer_cycles


def test_each_socket_has_its_own_uncore_that_sleeps_only_when_its_own_cpus_are_deep():
    cfg = _cpu(sockets=2, physical_cores=2, smt=False)
    pkg = Package(cfg)
    deep = next(i for i, st in enumerate(cfg.cstates) if st.package_deep)
    for cpu in pkg.cpus[:2]:  # socket 0's CPUs go deep, socket 1's stay busy
        cpu.set_idle(0.0, deep)
    for cpu in pkg.cpus[2:]:
        cpu.set_busy(0.0, 1.0)
    assert pkg.sockets[0].uncore_power_w == cfg.uncore_idle_w
    assert pkg.sockets[1].uncore_power_w == cfg.uncore_active_w
    pkg.settle(1e9)
    assert pkg.socket_energy_j(1) > pkg.socket_energy_j(0)
    assert pkg.uncore_energy_j == pytest.approx(cfg.uncore_idle_w + cfg.uncore_active_w)


def test_bad_socket_and_node_settings_are_refused():
    with pytest.raises(ConfigError, match="sockets"):
        resolve(scenario="default", platform=PLAT, sets={"cpu.sockets": "0"})
    with pytest.raises(ConfigError, match="ssd_nodes"):
        _cfg(ssd_nodes="2")
    with pytest.raises(ConfigError, match="ssd_nodes"):
        resolve(scenario="default", platform=PLAT, sets={**TWO_SOCKETS, "ssd_count": "3", "ssd_nodes": "0,1"})


# ------------------------------------------------------------------ queue mapping
def test_queue_counts_serve_poll_queues_first_but_keep_one_interrupt_queue():
    assert queue_counts(28, 0, 64) == (28, 0)
    assert queue_counts(28, 28, 32) == (4, 28)
    assert queue_counts(40, 0, 32) == (32, 0)
    assert queue_counts(8, 8, 1) == (1, 0)


def test_fewer_groups_than_cpus_share_queues_inside_a_node_with_siblings_together():
    nodes = [tuple(range(0, 10)), tuple(range(10, 20))]
    sib = list(range(20))
    groups = group_cpus_evenly(8, nodes, sib)
    assert len(groups) == 8 and sorted(c for g in groups for c in g) == list(range(20))
    for g in groups:  # no group spans two nodes
        assert len({c // 10 for c in g}) == 1
    assert [len(g) for g in groups] == [3, 3, 2, 2, 3, 3, 2, 2]  # 4 groups per node, the first larger
    # with SMT (cpu c and c + 4 siblings on a 4-core socket), a group of two is a core's two threads
    groups = group_cpus_evenly(4, [tuple(range(8))], [4, 5, 6, 7, 0, 1, 2, 3])
    assert groups == [(0, 4), (1, 5), (2, 6), (3, 7)]
    # fewer groups than nodes: whole nodes per group
    assert group_cpus_evenly(1, nodes, sib) == [tuple(range(20))]


def test_nodes_get_groups_in_proportion_to_their_cpus():
    groups = group_cpus_evenly(6, [tuple(range(4)), tuple(range(4, 12))], list(range(12)))
    assert sum(1 for g in groups if g[0] < 4) == 2 and sum(1 for g in groups if g[0] >= 4) == 4


def test_shared_vectors_of_several_devices_spread_over_their_mask():
    m = VectorMatrix(4)
    assert [m.assign((0, 1)) for _ in range(3)] == [0, 1, 0]


def test_the_driver_shares_queues_when_the_device_has_fewer_than_cpus():
    cfg = _cfg(ssd_count="2")  # 20 CPUs, P4800X: 32 queue pairs
    host = build_host(cfg.platform, cfg.queue, 1)
    assert cfg.platform.ssd.max_queue_pairs == 32
    drv = host.driver
    assert len({id(q) for q in drv.irq_qps.values()}) == 2 * 20 and not any(q.shared for q in drv.queues)
    cfg = _cfg(**{"ssd.max_queue_pairs": "8", "ssd_count": "2"})
    host = build_host(cfg.platform, cfg.queue, 1)
    drv = host.driver
    qs = [q for q in drv.queues if q.device.index == 0]
    assert len(qs) == 8 and all(q.shared for q in qs)
    for q in qs:
        assert len({host.pkg.node_of[c] for c in q.cpus}) == 1  # a queue's CPUs are on one node
        assert all(drv.queue_for(0, c, False) is q for c in q.cpus)
        assert q.cpu in q.cpus  # its vector fires on one CPU of its mask
    # the second device's vectors land on other CPUs of the same masks
    q1 = drv.queue_for(1, 0, False)
    assert q1.cpus == drv.queue_for(0, 0, False).cpus and q1.cpu != drv.queue_for(0, 0, False).cpu


# ------------------------------------------------------------------ cross-socket costs
def _run(**sets):
    return simulate(_cfg(**sets))["summary"]


def test_cross_socket_costs_appear_only_when_crossing():
    local = _run(cpus_allowed="12", ssd_nodes="1")
    remote = _run(cpus_allowed="2", ssd_nodes="1")
    same_far = _run(cpus_allowed="2", ssd_nodes="0")
    assert local["latency_us"]["mean"] == same_far["latency_us"]["mean"]  # both local: identical
    assert remote["latency_us"]["mean"] > local["latency_us"]["mean"]
    by_layer = remote["layers_ns_per_io"]
    assert by_layer["driver"] > local["layers_ns_per_io"]["driver"]


def test_a_buffer_on_the_other_node_delays_the_completion_by_the_remote_dma():
    # a device without service-time spread: the two runs differ by the delay alone, not by draws
    fixed = {"ssd.read.sd_ns": "0"}
    local = _run(cpus_allowed="2", **fixed)
    far = _run(cpus_allowed="2", numa_mem_policy="bind:1", **fixed)
    cfg = _cfg()
    extra_us = cfg.platform.cpu.remote_memory_extra_ns / 1e3
    assert 0.5 * extra_us < far["latency_us"]["mean"] - local["latency_us"]["mean"] < 2.0 * extra_us
    assert far["layers_ns_per_io"]["driver"] == pytest.approx(local["layers_ns_per_io"]["driver"], rel=5e-3)


def test_numa_cpu_nodes_places_the_job_on_the_nodes_cpus():
    cfg = _cfg(numa_cpu_nodes="1")
    assert cfg.jobs[0].cpus_allowed == tuple(range(10, 20))
    cfg = _cfg(numa_cpu_nodes="1", cpus_allowed="5,12,13")
    assert cfg.jobs[0].cpus_allowed == (12, 13)
    with pytest.raises(ConfigError, match="numa_cpu_nodes names node 2"):
        _cfg(numa_cpu_nodes="2")
    with pytest.raises(ConfigError, match="numa_mem_policy"):
        _cfg(numa_mem_policy="bind:3")
    with pytest.raises(ConfigError, match="numa_mem_policy"):
        _cfg(numa_mem_policy="prefer:0-1")


def test_power_is_reported_per_socket_and_the_idle_socket_draws_less():
    s = _run(cpus_allowed="12", ssd_nodes="1")  # the job and its device on node 1; node 0 idles
    p = s["power_w"]
    assert p["cpu_socket1"] > p["cpu_socket0"] > 0
    assert p["cpu_socket0"] + p["cpu_socket1"] == pytest.approx(p["cpu"])
    one = simulate(resolve(scenario="default", sets={"runtime": "2ms", "ramp_time": "0"}))["summary"]["power_w"]
    assert not any(k.startswith("cpu_socket") for k in one)  # one socket: the package is the CPU


def test_a_wake_up_from_another_cpu_fetches_a_line_each_way():
    """A shared queue's vector fires on one CPU of its mask: a depth-1 thread on another CPU of the
    mask is woken from that CPU, and the wake-up crosses through memory (the waker writes the
    target's run queue, the target reads the wake entry): one line transfer on each side per IO,
    none when the thread runs on the vector's own CPU."""
    sets = {"ssd.max_queue_pairs": "8"}
    cfg = _cfg(**sets)
    drv = build_host(cfg.platform, cfg.queue, 1).driver
    q = drv.queue_for(0, 0, False)
    other = next(c for c in q.cpus if c != q.cpu)
    on_vector = _run(cpus_allowed=str(q.cpu), **sets)
    woken_remotely = _run(cpus_allowed=str(other), **sets)
    line_ns = cfg.platform.cpu.line_transfer_cycles / cfg.platform.cpu.top_freq_ghz
    extra = woken_remotely["layers_ns_per_io"]["cache"] - on_vector["layers_ns_per_io"].get("cache", 0.0)
    assert extra == pytest.approx(2 * line_ns, rel=0.1)
