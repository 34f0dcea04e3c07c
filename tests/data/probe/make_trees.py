"""Write the saved machine trees that tests/test_probe.py probes (``python tests/data/probe/make_trees.py``).

Each tree holds the files ``stacksim probe`` reads, laid out as the kernel documents them:
Documentation/ABI/stable/sysfs-devices-system-cpu and testing/sysfs-devices-system-cpu (cpuN/topology/
physical_package_id, core_id, thread_siblings_list; cpuN/cpufreq/*; cpuN/cpuidle/stateK/name, latency
and residency in us, disable; cpuidle/current_driver, current_governor; intel_pstate/no_turbo),
testing/sysfs-devices-node (nodeN/cpulist), testing/sysfs-class-powercap (intel-rapl:N/name, enabled,
constraint_K_name, constraint_K_power_limit_uw, constraint_K_time_window_us), testing/sysfs-class-nvme
and stable/sysfs-block (nvmeX/model, transport, device/numa_node, current_link_speed and width; the
namespace's size in 512-byte sectors, queue/*, mq/N/nr_tags), and proc(5) for /proc/cpuinfo,
/proc/meminfo, /proc/cmdline and /proc/sys/kernel/osrelease. The machines are written by hand, not
captured: their values follow the public specifications of the parts (Intel's intel_idle tables for
the C-states) and are synthetic where a real machine would vary (memory, serial-free model strings).

- ``xeon2s``: two Xeon Silver 4210R (10 cores, SMT: Linux numbers first threads 0-19 by socket, their
  siblings 20-39), intel_pstate in active mode (powersave), intel_idle's Cascade Lake table, RAPL PL1
  100 W per package, one Optane P4800X (reported by part number, INTEL SSDPE21K375GA) on node 1 with 32
  hardware queues, Linux 5.15.
- ``desktop``: a Core i9-12900K (8 P-cores with SMT numbered in pairs, 8 E-cores), Alder Lake's
  C-states with C10 disabled, two Samsung 980 PRO (one on a PCIe 3.0 link), nvme poll_queues=2 so the
  queues have io_poll on, Linux 6.8.
- ``vm``: a 4-vCPU guest (QEMU's "Intel Xeon Processor (Cascadelake)", ``hypervisor`` among its
  flags), no cpufreq, no cpuidle, one virtio disk, Linux 5.15.
"""

from __future__ import annotations

import shutil
from pathlib import Path

HERE = Path(__file__).resolve().parent
CPU = "sys/devices/system/cpu"
#: a few of /proc/cpuinfo's flags (arch/x86/include/asm/cpufeatures.h names); a guest adds ``hypervisor``
FLAGS = "fpu vme de pse tsc msr pae mce cx8 apic sep mtrr pge mca cmov pat pse36 clflush mmx fxsr sse sse2"


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text + "\n")


def cpuinfo(
    cpus: list[tuple[int, int, int]], name: str, model: int, mhz: float, siblings: int, cores: int, flags: str = FLAGS
) -> str:
    """/proc/cpuinfo: one block per (cpu, package, core_id)."""
    blocks = []
    for cpu, pkg, core in cpus:
        blocks.append(
            f"processor\t: {cpu}\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: {model}\n"
            f"model name\t: {name}\ncpu MHz\t\t: {mhz:.3f}\nphysical id\t: {pkg}\nsiblings\t: {siblings}\n"
            f"core id\t\t: {core}\ncpu cores\t: {cores}\nflags\t\t: {flags}\n"
        )
    return "\n".join(blocks)


def topology(cpus: list[tuple[int, int, int]], siblings: dict[int, str]) -> dict[str, str]:
    out = {}
    for cpu, pkg, core in cpus:
        t = f"{CPU}/cpu{cpu}/topology"
        out[f"{t}/physical_package_id"] = str(pkg)
        out[f"{t}/core_id"] = str(core)
        out[f"{t}/thread_siblings_list"] = siblings[cpu]
    return out


def cpuidle(driver: str, governor: str, states: list[tuple[str, int, int, int]]) -> dict[str, str]:
    out = {f"{CPU}/cpuidle/current_driver": driver, f"{CPU}/cpuidle/current_governor": governor}
    for k, (name, lat, res, disable) in enumerate(states):
        d = f"{CPU}/cpu0/cpuidle/state{k}"
        out.update(
            {f"{d}/name": name, f"{d}/latency": str(lat), f"{d}/residency": str(res), f"{d}/disable": str(disable)}
        )
    return out


def cpufreq(driver: str, governor: str, lo: int, hi: int, base: int, latency: int) -> dict[str, str]:
    d = f"{CPU}/cpu0/cpufreq"
    return {
        f"{d}/scaling_driver": driver,
        f"{d}/scaling_governor": governor,
        f"{d}/cpuinfo_min_freq": str(lo),
        f"{d}/cpuinfo_max_freq": str(hi),
        f"{d}/scaling_max_freq": str(hi),
        f"{d}/base_frequency": str(base),
        f"{d}/cpuinfo_transition_latency": str(latency),
        f"{CPU}/intel_pstate/no_turbo": "0",
    }


def rapl(package: int, pl1_w: int, window_us: int, pl2_w: int) -> dict[str, str]:
    d = f"sys/class/powercap/intel-rapl:{package}"
    return {
        f"{d}/name": f"package-{package}",
        f"{d}/enabled": "1",
        f"{d}/constraint_0_name": "long_term",
        f"{d}/constraint_0_power_limit_uw": str(pl1_w * 1_000_000),
        f"{d}/constraint_0_time_window_us": str(window_us),
        f"{d}/constraint_1_name": "short_term",
        f"{d}/constraint_1_power_limit_uw": str(pl2_w * 1_000_000),
        f"{d}/constraint_1_time_window_us": "2440",
        # the DRAM sub-zone: not a package limit (the probe skips it)
        f"{d}:0/name": "dram",
        f"{d}:0/constraint_0_name": "long_term",
    }


def nvme(
    ctrl: int, model: str, node: int, gt_s: str, sectors: int, queues: int, queue: dict[str, str]
) -> dict[str, str]:
    c, ns = f"sys/class/nvme/nvme{ctrl}", f"nvme{ctrl}n1"
    out = {
        f"{c}/model": model,
        f"{c}/transport": "pcie",
        f"{c}/device/numa_node": str(node),
        f"{c}/device/current_link_speed": f"{gt_s} GT/s PCIe",
        f"{c}/device/current_link_width": "4",
        # the namespace is a child of its controller's device: /sys/class/nvme/nvmeX/nvmeXn1 is
        # /sys/block/nvmeXn1 (the probe reads it through /sys/block)
        f"{c}/{ns}/dev": f"259:{ctrl}",
        f"sys/block/{ns}/size": str(sectors),
    }
    out.update({f"sys/block/{ns}/queue/{k}": v for k, v in queue.items()})
    out.update({f"sys/block/{ns}/mq/{q}/nr_tags": "1023" for q in range(queues)})
    return out


def xeon2s() -> dict[str, str]:
    core_ids = [0, 1, 2, 3, 4, 8, 9, 10, 11, 12]  # a 10-core die numbers its cores with gaps
    cpus = [(c, c // 10 % 2, core_ids[c % 10]) for c in range(40)]
    sib = {c: f"{c % 20},{c % 20 + 20}" for c in range(40)}
    files = {
        "proc/cpuinfo": cpuinfo(cpus, "Intel(R) Xeon(R) Silver 4210R CPU @ 2.40GHz", 85, 2400.0, 20, 10),
        "proc/meminfo": (
            "MemTotal:       196438880 kB\nMemFree:        150000000 kB\nActive(file):    20000000 kB\n"
            "Inactive(file):  18000000 kB"
        ),
        "proc/cmdline": "BOOT_IMAGE=/vmlinuz-5.15.0-91-generic root=/dev/sda2 ro",
        "proc/sys/kernel/osrelease": "5.15.0-91-generic",
        f"{CPU}/online": "0-39",
        "sys/devices/system/node/node0/cpulist": "0-9,20-29",
        "sys/devices/system/node/node1/cpulist": "10-19,30-39",
        "sys/module/nvme/parameters/poll_queues": "0",
    }
    files.update(topology(cpus, sib))
    files.update(cpufreq("intel_pstate", "powersave", 1_000_000, 3_200_000, 2_400_000, 0))
    # drivers/idle/intel_idle.c skx_cstates (Skylake-SP and Cascade Lake-SP)
    files.update(
        cpuidle("intel_idle", "menu", [("POLL", 0, 0, 0), ("C1", 2, 2, 0), ("C1E", 10, 20, 0), ("C6", 133, 600, 0)])
    )
    files.update(rapl(0, 100, 999424, 120))
    files.update(rapl(1, 100, 999424, 120))
    queue = {
        "scheduler": "[none] mq-deadline",
        "nr_requests": "1023",
        "max_sectors_kb": "128",
        "io_poll": "0",
        "io_poll_delay": "-1",
        "write_cache": "write through",
        "nomerges": "0",
    }
    # 375 GB = 732,585,168 sectors of 512 bytes; the P4800X offers 32 I/O queues
    files.update(nvme(0, "INTEL SSDPE21K375GA", 1, "8.0", 732_585_168, 32, queue))
    return files


def desktop() -> dict[str, str]:
    # P-cores: cpu 2k and 2k+1 are the two threads of core_id 4k; E-cores: cpu 16-23, one thread each
    cpus = [(c, 0, 4 * (c // 2)) for c in range(16)] + [(c, 0, 32 + (c - 16)) for c in range(16, 24)]
    sib = {c: (f"{c - c % 2}-{c - c % 2 + 1}" if c < 16 else str(c)) for c in range(24)}
    files = {
        "proc/cpuinfo": cpuinfo(cpus, "12th Gen Intel(R) Core(TM) i9-12900K", 151, 3200.0, 24, 16),
        "proc/meminfo": "MemTotal:       65704104 kB",
        "proc/cmdline": "BOOT_IMAGE=/boot/vmlinuz-6.8.0-45-generic root=UUID=0 ro quiet splash",
        "proc/sys/kernel/osrelease": "6.8.0-45-generic",
        f"{CPU}/online": "0-23",
        "sys/devices/system/node/node0/cpulist": "0-23",
        "sys/module/nvme/parameters/poll_queues": "2",
    }
    files.update(topology(cpus, sib))
    files.update(cpufreq("intel_pstate", "performance", 800_000, 5_200_000, 3_200_000, 0))
    # drivers/idle/intel_idle.c adl_cstates (C1 hidden: C1E promotion on), C10 disabled by the user
    states = [("POLL", 0, 0, 0), ("C1E", 2, 4, 0), ("C6", 220, 600, 0), ("C8", 280, 800, 0), ("C10", 680, 2000, 1)]
    files.update(cpuidle("intel_idle", "menu", states))
    files.update(rapl(0, 125, 27983872, 241))
    queue = {
        "scheduler": "[none] mq-deadline kyber bfq",
        "nr_requests": "1023",
        "max_sectors_kb": "128",
        "io_poll": "1",
        "io_poll_delay": "-1",
        "write_cache": "write back",
        "nomerges": "0",
    }
    # 1 TB = 1,953,525,168 sectors; 24 interrupt-driven queues (one per CPU) and the 2 poll queues
    files.update(nvme(0, "Samsung SSD 980 PRO 1TB", -1, "16.0", 1_953_525_168, 26, queue))
    files.update(nvme(1, "Samsung SSD 980 PRO 1TB", -1, "8.0", 1_953_525_168, 26, queue))
    return files


def vm() -> dict[str, str]:
    cpus = [(c, 0, c) for c in range(4)]
    files = {
        "proc/cpuinfo": cpuinfo(cpus, "Intel Xeon Processor (Cascadelake)", 85, 2593.906, 4, 4, FLAGS + " hypervisor"),
        "proc/meminfo": "MemTotal:        8130940 kB",
        "proc/cmdline": "BOOT_IMAGE=/vmlinuz-5.15.0-91-generic root=/dev/vda1 ro console=ttyS0",
        "proc/sys/kernel/osrelease": "5.15.0-91-generic",
        f"{CPU}/online": "0-3",
        "sys/devices/system/node/node0/cpulist": "0-3",
        "sys/block/vda/queue/scheduler": "[mq-deadline] none",
    }
    files.update(topology(cpus, {c: str(c) for c in range(4)}))
    return files


def main() -> None:
    for name, make in (("xeon2s", xeon2s), ("desktop", desktop), ("vm", vm)):
        root = HERE / name
        shutil.rmtree(root, ignore_errors=True)
        write(root, make())


if __name__ == "__main__":
    main()
