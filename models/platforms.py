"""Built-in platforms. Each names its sources and how its parameters were obtained.

``optane900p-e3-1230v5``: the Dell R230 of Harris & Altiparmak (HotStorage 2022,
poll_vs_interrupt_energy.yaml): Xeon E3-1230 v5 (SMT on, C-states on, menu governor), Optane 900P,
Linux 5.15, ext4, scheduler none. The kernel-cost and device-service parameters marked "fitted"
come from ``stacksim calibrate --study poll-energy`` (scipy least squares on the simulator's
own outputs against the 1-thread 4 KiB figures: mean latency and IOPS of classic polling, hybrid
polling and interrupts); the others are the reference order-of-magnitude defaults.
"""

from __future__ import annotations

from models.cpu.config import CpuConfig
from models.cpu.presets import CPU_CATALOGUE, xeon_e3_1230_v5, xeon_e5_2660_v4, xeon_silver_4210r
from models.os.block.queue import QueueConfig
from models.os.costs.tables import KernelCosts
from models.platform import PlatformConfig, PowerConfig
from models.platforms_server import epyc9454p_16xpm1743
from models.ssd.irq import IrqConfig
from models.ssd.presets import (
    SSD_CATALOGUE,
    optane_900p,
    optane_p4800x,
    optane_p4801x,
    p3700,
    samsung_980pro,
    zn540,
)
from simcore.config import validate
from simcore.errors import ConfigError
from simcore.sources import sourced_rows, unknown_name

#: Output of ``stacksim calibrate --study poll-energy`` (re-run it to refresh; it prints this dict).
POLL_ENERGY_FIT = {
    "ssd.read.base_ns": 4562.1,
    "kernel.user_io_cycles": 963.1,
    "kernel.ctx_switch_cycles": 4414.9,
    # not fitted: 1,500 cycles per interrupt handled (calibrated_interrupts.yaml, constant across
    # devices: entry, handler, exit) = entry/exit 500 + CQ reap 300 + request completion 300
    # + waking the blocked task 400
    "kernel.irq_entry_cycles": 500.0,
}


#: Output of ``stacksim calibrate --study memops``: memory operations by cell (models/os/costs/memops.py) per
#: cycle of each source of CPU work not counted as kernel actions, and per execution of each kernel
#: action, fitted to table 2 (interrupt and classic-polling columns); the actions of
#: models.os.costs.memops.DERIVED_OPS keep their derived operations.
MEM_OPS = {
    "per_cycle": {
        "user": {"other": 0.12407},
        "syscall": {"other": 0.11356},
        "fs": {"other": 0.2373},
        "block": {"blk_mq": 0.16351, "block_rest": 0.23121},
        "iosched": {"block_rest": 0.062},
        "driver": {"nvme": 0.08766},
        "irq": {"other": 0.03121, "ktime_get": 0.01209},
        "polling": {
            "blk_poll": 0.00899,
            "blk_mq": 0.00244,
            "block_rest": 0.00984,
            "nvme": 0.00669,
            "ktime_get": 0.00057,
            "time_rest": 0.00032,
            "sched_rest": 0.00167,
            "other": 0.05537,
        },
        "idle_spin": {"other": 0.08857},
    },
    "per_action": {
        "switch": {"__schedule": 11.2, "sched_rest": 180.36, "other": 97.67},
        "kthread_switch": {"__schedule": 41.33, "sched_rest": 41.33, "other": 41.33},
        "wakeup": {"sched_rest": 13.22, "other": 12.46},
        "pelt_update": {"load_avg": 1.97},
        "psi_change": {"psi": 2.37, "sched_rest": 3.51},
        "migrate": {"sched_rest": 46.6, "load_avg": 46.4},
        "newidle_balance": {"sched_rest": 62.0},
        "load_balance": {"sched_rest": 62.05},
        "idle_entry": {"sched_rest": 20.45, "time_rest": 68.11, "ktime_get": 5.22, "other": 18.73},
        "idle_exit": {"sched_rest": 9.76, "time_rest": 21.68, "ktime_get": 5.96, "other": 9.33},
        "sched_tick": {"sched_rest": 15.5, "load_avg": 10.61, "time_rest": 15.62, "other": 15.52},
    },
}


def optane900p_e3_1230v5(fit: dict | None = None) -> PlatformConfig:
    fit = POLL_ENERGY_FIT if fit is None else fit
    kernel = KernelCosts(
        version="5.15",  # the study's kernel
        mem_ops_per_cycle=MEM_OPS["per_cycle"],
        mem_ops_per_action=MEM_OPS["per_action"],
        **{k.split(".", 1)[1]: v for k, v in fit.items() if k.startswith("kernel.")},
    )
    ssd = optane_900p()
    if "ssd.read.base_ns" in fit:
        ssd = ssd.model_copy(update={"read": ssd.read.model_copy(update={"base_ns": fit["ssd.read.base_ns"]})})
    return PlatformConfig(
        name="optane900p-e3-1230v5",
        description="Dell R230: Xeon E3-1230 v5 (4C/8T, SMT, C-states on) + Optane 900P, Linux 5.15"
        " (poll-vs-interrupt energy study)",
        cpu=xeon_e3_1230_v5(),
        ssd=ssd,
        kernel=kernel,
        memory_bytes=64 << 30,  # poll_vs_interrupt_energy: 64 GB
        # R230: 64 GB DDR4 (4 DIMMs ~ 3 W each at low load); board + PSU loss + fans ~ 20 W at idle
        # (estimates, the study publishes no idle breakdown: a small single-socket server idles at a few
        # tens of W at the wall).
        power=PowerConfig(dram_w=12.0, platform_base_w=20.0, platform_cpu_coupling=0.1),
        calibration=(
            "fitted by stacksim calibrate --study poll-energy to poll_vs_interrupt_energy.yaml table1"
            " (1 thread, 4 KiB): " + ", ".join(f"{k}={v:g}" for k, v in fit.items())
        ),
    )


#: Output of ``stacksim calibrate --study io-schedulers`` (re-run it to refresh; it prints this dict).
IO_SCHED_FIT = {
    "ssd.read.base_ns": 4140.3,
    "ssd.write.base_ns": 8454.4,
    "kernel.iosched_cycles_scale": 1.657,
}


def optane_p4801x_e3_1230(fit: dict | None = None) -> PlatformConfig:
    """The R230 of Whitaker et al. (HotStorage 2023, io_schedulers_ull.yaml): Xeon E3-1230 (v5
    class) + Optane DC P4801X, Linux 5.18. Host kernel costs are those fitted on the same machine
    class for the poll study; the P4801X service times and the per-request CPU cost of each IO
    scheduler are fitted by ``stacksim calibrate --study io-schedulers`` to the study's io_uring
    default-settings QD1 median latencies (table 1)."""
    fit = IO_SCHED_FIT if fit is None else fit
    base = optane900p_e3_1230v5()
    ssd = optane_p4801x()
    ssd = ssd.model_copy(
        update={
            "read": ssd.read.model_copy(update={"base_ns": fit["ssd.read.base_ns"]}),
            "write": ssd.write.model_copy(update={"base_ns": fit["ssd.write.base_ns"]}),
        }
    )
    iosched = {k.rsplit(".", 1)[1]: v for k, v in fit.items() if k.startswith("kernel.iosched_cycles.")}
    return base.model_copy(
        update={
            "name": "optane-p4801x-e3-1230",
            "description": "Dell R230: Xeon E3-1230 + Optane DC P4801X, Linux 5.18 (IO schedulers on ULL disks study)",
            "ssd": ssd,
            "memory_bytes": 64 << 30,  # io_schedulers_ull: 64 GB
            "kernel": base.kernel.model_copy(
                update={
                    "version": "5.18",  # the study's kernel
                    "iosched_cycles": iosched,
                    **{
                        k.split(".", 1)[1]: v
                        for k, v in fit.items()
                        if k.startswith("kernel.") and not k.startswith("kernel.iosched_cycles.")
                    },
                }
            ),
            "calibration": "fitted by stacksim calibrate --study io-schedulers to io_schedulers_ull.yaml table1"
            " (io_uring, QD1, 4 KiB): " + ", ".join(f"{k}={v:g}" for k, v in fit.items()),
        }
    )


#: Output of ``stacksim calibrate --study cinterrupts`` (re-run it to refresh; it prints this dict).
CINTERRUPTS_FIT = {
    "optane.read.base_ns": 2892.6,
    "optane.read.sd_ns": 1228.6,
    "p3700.read.base_ns": 71678.3,
    "p3700.read.sd_ns": 28491.5,
    "kernel.ctx_switch_cycles": 1532.2,
}


def _r730(ssd, name: str, desc: str, fit: dict, key: str, delta_us: float, thr: int) -> PlatformConfig:
    """Dell R730 of Tai et al. (calibrated_interrupts.yaml): Xeon E5-2660 v4 with C-states, Turbo
    Boost and SMT disabled, performance governor (2.0 GHz), one NVMe queue pair per core, Linux
    5.0.8. With C-states off in the BIOS only the POLL loop and HLT (C1) remain."""
    base_cpu = xeon_e5_2660_v4()
    cpu = base_cpu.model_copy(update={"smt": False, "turbo": False, "cstates": base_cpu.cstates[:2]})
    kernel = optane900p_e3_1230v5().kernel.model_copy(
        update={"version": "5.0", "ctx_switch_cycles": fit["kernel.ctx_switch_cycles"]}  # the study's Linux 5.0.8
    )
    base_ns = fit[f"{key}.read.base_ns"]
    update: dict = {"read": ssd.read.model_copy(update={"base_ns": base_ns, "sd_ns": fit[f"{key}.read.sd_ns"]})}
    if ssd.datapath is None:
        # NAND: internal parallelism from Little's law on the datasheet's saturation IOPS (P3700 450K
        # 4 KiB random reads) and the fitted media time. (The P4800X keeps its preset's four die
        # ranks; its 2.4 GB/s data path sets its ceiling.)
        update["parallel_units"] = max(1, round(450e3 * base_ns * 1e-9))
        # the fitted service-time distribution, not the NAND media: the study fits the read spread
        # it measured (sd ~29 us), more than the P3700 media's MLC page types give (+-12.5 us)
        update["media"] = None
    ssd = ssd.model_copy(update=update)
    return PlatformConfig(
        name=name,
        description=desc,
        cpu=cpu,
        ssd=ssd,
        kernel=kernel,
        memory_bytes=128 << 30,  # calibrated_interrupts: 128 GB
        # R730: 128 GB DDR4 (8 DIMMs), two sockets (the second idles); board, fans, PSU loss
        power=PowerConfig(dram_w=24.0, platform_base_w=70.0, platform_cpu_coupling=0.1),
        nvme=IrqConfig(irq_delta_us=delta_us, irq_thr=thr),
        calibration="fitted by stacksim calibrate --study cinterrupts to calibrated_interrupts.yaml"
        " (sync 4 KiB read latency mean and sd with interrupts and with polling, both devices): "
        + ", ".join(f"{k}={v:g}" for k, v in fit.items()),
    )


def optane_p4800x_e5_2660v4(fit: dict | None = None) -> PlatformConfig:
    return _r730(
        optane_p4800x(),
        "optane-p4800x-e5-2660v4",
        "Dell R730: Xeon E5-2660 v4 (C-states, turbo, SMT off) +"
        " Optane DC P4800X, Linux 5.0 (calibrated interrupts study)",
        fit or CINTERRUPTS_FIT,
        "optane",
        6.0,
        32,
    )


def p3700_e5_2660v4(fit: dict | None = None) -> PlatformConfig:
    return _r730(
        p3700(),
        "p3700-e5-2660v4",
        "Dell R730: Xeon E5-2660 v4 (C-states, turbo, SMT off) + Intel DC P3700"
        " (NAND), Linux 5.0 (calibrated interrupts study)",
        fit or CINTERRUPTS_FIT,
        "p3700",
        15.0,
        32,
    )


#: ``cheops23-optane``'s calibration (``stacksim calibrate --study cheops23``, which re-runs it):
#: the P4800X's read time on this host from SPDK's QD1 latency (6.89 us) and one doorbell MMIO write
#: from SPDK's CPU-bound depth 16 (1.04M IOPS); the kernel's block-device direct-IO step and its
#: cycles per instruction from libaio's CPU-bound depth 8 (294K IOPS, 11.3K instructions per IO:
#: the IO path alone, no sleep or wake-up); the return from a system call from SQPOLL's CPU-bound
#: depth 64 (568K IOPS: its SQ thread runs the kernel's path with no system call, so libaio's
#: cost beyond it is fio's and the system calls'). An exact fit (five observations, five parameters)
CHEOPS23_FIT = {
    "ssd.read.base_ns": 4114.0,
    "kernel.mmio_write_cycles": 347.0,
    "kernel.fs_submit_cycles": 343.0,
    "kernel.cpi_by_layer.fs": 0.2636,
    "kernel.aio_issue_cycles": 1301.0,
    "kernel.io_uring_enter_cycles": 981.6,
    "kernel.ctx_switch_cycles": 2858.0,
}


#: the CHEOPS'23 host's kernel: not stated (estimate: 5.15, Ubuntu 22.04's, the distribution current
#: with fio-3.32 in 2022; the study's points do not depend on it: at fio's defaults there is nothing
#: for 5.16's batched completion or 6.1's DEFER_TASKRUN to batch, and fio 3.32 predates the latter)
CHEOPS23_KERNEL = "5.15"


def _cheops23_kernel(base: KernelCosts, fit: dict) -> KernelCosts:
    """``base``'s kernel costs with the CHEOPS'23 host's calibrated ones (``fit``) and its kernel."""
    return base.model_copy(
        update={
            "mmio_write_cycles": fit["kernel.mmio_write_cycles"],
            "fs_submit_cycles": fit["kernel.fs_submit_cycles"],
            "aio_issue_cycles": fit["kernel.aio_issue_cycles"],
            "io_uring_enter_cycles": fit["kernel.io_uring_enter_cycles"],
            "ctx_switch_cycles": fit["kernel.ctx_switch_cycles"],
            "cpi_by_layer": {**base.cpi_by_layer, "fs": fit["kernel.cpi_by_layer.fs"]},
            "version": CHEOPS23_KERNEL,
        }
    )


#: C1's real exit on the CHEOPS'23 host, ns. Estimate: intel_idle declares 2 us for C1 (MWAIT 0x00)
#: on every Intel part, a worst case for PM QoS; in C1 the core's clock is only gated (caches,
#: voltage and PLL stay up). A thread asleep in C1 is measured to wake in ~1.1 us end to end (the
#: waker's signal to the wakee running: the interrupt, the wake-up and the switch included;
#: Schöne et al.'s idle-state wake-up measurements), of which the software path takes most at
#: 2.4 GHz: a few hundred ns remain for the core.
CHEOPS23_C1_WAKE_NS = 500.0


def _cheops23_cpu() -> CpuConfig:
    """Two Silver 4210R-class packages at the measured 2.41 GHz, SMT and turbo off, C1 waking in
    :data:`CHEOPS23_C1_WAKE_NS`."""
    cpu = xeon_silver_4210r(sockets=2, smt=False, turbo=False, base_freq_ghz=2.41)
    c1 = cpu.cstates[1].model_copy(update={"wake_ns": CHEOPS23_C1_WAKE_NS})
    return cpu.model_copy(update={"cstates": (cpu.cstates[0], c1, *cpu.cstates[2:])})


def cheops23_optane(fit: dict | None = None) -> PlatformConfig:
    """The host of the CHEOPS'23 measurements (Ren and Trivedi, "Performance Characterization of
    Modern Storage Stacks: POSIX I/O, libaio, SPDK, and io_uring", doi:10.1145/3578353.3589545;
    the measurements ship in scenarios/data/measurements/cheops23 with their MIT licence). Seven
    physical parameters are fitted to six of those measurements (:data:`CHEOPS23_FIT`); the other
    ten points are the check. ``fit``: other values of those parameters (the calibration study).

    What the artifact states: 2 sockets x 10 cores, logical CPUs 0-19; a steady 2.41 GHz (system-wide
    cycles of one busy polling CPU over 5 s); Intel Optane SSDs, seven in the multi-device runs
    (``/dev/nvme0n1`` .. ``nvme7n1`` without ``nvme5n1``), whose QD1 SPDK latency (6.9 us) and
    per-device ceiling (~590K IOPS) fit the P4800X class; fio-3.32.
    Estimates, with the reasoning:
    - the CPU model is not stated: 10 cores at a 2.4 GHz base (turbo off) are a Xeon E5-2640 v4
      (Broadwell-EP) or a Silver 4210R (Cascade Lake-SP). The counters tell them apart: at depth 1,
      psync's CPU counts cycles all the time (its idle is the POLL loop: its thread waits in IO wait)
      while libaio's and io_uring's halt in C1 for a quarter of it, yet all three retire about the
      same instructions per IO (22.1K, 22.8K, 23.7K). So the POLL loop retires few: ~0.6K per IO at
      Cascade Lake's 140-cycle ``pause``, against ~8K at Broadwell's ~10 (which would put psync
      ~8K above the others): a Silver 4210R, with its generation's C-states and ``pause``;
    - SMT off: CPUs 0-19 are all the scripts use and name node 1 as CPUs 10-19, which numbers one
      logical CPU per core; two sockets of 10 cores (``cpu.sockets=2``), node n = CPUs 10n..10n+9;
    - every SSD on node 1 (``ssd_nodes``): the artifact does not say where the devices are, but the
      study pins its counter runs to node 1, CPUs and memory (``numactl -N 1 -m 1``), which one does
      to keep the IO path on the devices' socket;
    - turbo off and a fixed frequency: the measured clock is steady at the base within 0.5%;
    - eight P4800X devices, so that the job files' ``/dev/nvme7n1`` is a device of its own;
    - the kernel's cycle costs are the R230 platform's (``optane900p-e3-1230v5``: a Skylake core,
      the Cascade Lake core's own micro-architecture, on Linux 5.15, with its context switch fitted
      on that machine), not the R730's (Broadwell-EP on Linux 5.0);
    - the calibration (:data:`CHEOPS23_FIT`, ``stacksim calibrate --study cheops23``, whose module
      says which point isolates each parameter): the device's read time and a doorbell write from
      SPDK's points, the block-device direct-IO step from SQPOLL's depth 64 (its SQ thread runs the
      kernel path alone), its CPI and io_submit's work from libaio's depth 8, io_uring_enter's from
      io_uring's depth 8, the context switch from libaio's depth-1 latency. The rest are predictions;
    - power: a 2-socket 1U/2U server's DRAM and board (estimates as for the R730).
    """
    fit = {**CHEOPS23_FIT, **(fit or {})}
    cpu = _cheops23_cpu()
    r730 = optane_p4800x_e5_2660v4()
    ssd = r730.ssd.model_copy(update={"read": r730.ssd.read.model_copy(update={"base_ns": fit["ssd.read.base_ns"]})})
    kernel = _cheops23_kernel(optane900p_e3_1230v5().kernel, fit)
    return PlatformConfig(
        name="cheops23-optane",
        description="CHEOPS'23 host: 2 x 10-core Xeon (Silver 4210R-class, 2.41 GHz fixed, SMT off) +"
        " 8 x Optane P4800X (the engines study's host: device, doorbell and block-device path from three"
        " points, the rest predicted)",
        cpu=cpu,
        ssd=ssd,
        ssd_count=8,
        ssd_nodes=(1,),
        kernel=kernel,
        memory_bytes=192 << 30,  # estimate: 6 channels x 16 GB per socket
        power=PowerConfig(dram_w=28.0, platform_base_w=70.0, platform_cpu_coupling=0.1),
        nvme=r730.nvme,
        calibration="five physical parameters from four points (stacksim calibrate --study cheops23): the"
        " device and a doorbell from SPDK's two, the block-device direct-IO step from libaio's CPU-bound"
        " depth 8, a system call's return from SQPOLL's depth 64: "
        + ", ".join(f"{k}={v:g}" for k, v in fit.items())
        + "; the kernel's other cycle costs"
        " from optane900p-e3-1230v5, the P4800X's other service times from optane-p4800x-e5-2660v4",
    )


#: the ICPE'24 host's kernel: Linux 6.3.8 (the artifact's README), with block/fops.c patched so that
#: every scheduler's requests are dispatched in the submitting context (``queue.sched_dispatch``)
ICPE24_KERNEL = "6.3"


def icpe24_980pro() -> PlatformConfig:
    """The host of the ICPE'24 IO-scheduler measurements (Ren, Doekemeijer, Tehrany, Trivedi, "BFQ,
    Multiqueue-Deadline, or Kyber? Performance Characterization of Linux Storage Schedulers in the
    NVMe Era", ICPE'24; the development subset ships in scenarios/data/measurements/icpe24 with its
    MIT licence). Nothing here is fitted to those measurements: ``validate --suite icpe24`` is the
    check.

    What the artifact states: a single-socket server with a 10-core CPU (model not stated) and eight
    Samsung 980 PRO 1 TB SSDs, preconditioned; Linux 6.3.8 with a patched ``block/fops.c``
    (``force_sync_submission=2``) so that requests of every scheduler are dispatched synchronously
    in the submitting context; fio 3.35, io_uring with ``registerfiles`` and ``fixedbufs``,
    interrupt completions. The SPDK runs' setup log names the host's PCI functions: ten Samsung
    controllers ``144d:a80a`` (the 980 PRO; eight on the data buses 0x17-0x1a and 0x65-0x68) and
    Intel ``8086:2021`` bound to ioatdma, which pci.ids names "Sky Lake-E CBDMA Registers": the
    uncore DMA engine of Skylake-SP and Cascade Lake-SP Xeons (Broadwell-EP's is ``8086:6f20``).
    Estimates, with the reasoning:
    - the CPU is a Xeon Silver 4210R (Cascade Lake-SP, 10 cores, 2.4 GHz base): of the catalogue's
      10-core parts, the E5-2640 v4 is Broadwell-EP, whose CBDMA the host does not have; the 4210R is
      the one of the CBDMA's generations (Skylake-SP/Cascade Lake-SP). Its idle states, turbo ratios
      and power are the preset's;
    - SMT off (``cpu.smt``): the artifact says 10 cores and the fig-7 runs call them 10 (not
      pinned, "10 cores" in the directory name). Taken as 10 logical CPUs;
    - the clock is the preset's (turbo and the default governor): the artifact does not say it was
      fixed. (The same authors' CHEOPS'23 host ran at a steady base clock with turbo off; nothing says
      this one did);
    - the kernel's cycle costs are the ``cheops23-optane`` platform's: the same CPU class (a
      Cascade Lake-SP Silver at 2.4 GHz), the same authors' fio and io_uring runs, and those costs are
      calibrated on it (the doorbell, the block-device direct-IO step and its CPI, io_uring_enter, the
      context switch; the rest from ``optane900p-e3-1230v5``, a Skylake core on 5.15). They were
      calibrated on 5.15: what 6.3 changes on the path is what ``kernel.version`` gates (the plug's
      request cache, batched completions, ``queue_rqs``, DEFER_TASKRUN with fio 3.35), not the costs;
      C1's real exit is the CHEOPS'23 host's (:data:`CHEOPS23_C1_WAKE_NS`, itself an estimate);
    - the SSDs: the ``samsung-980pro`` preset (its data sheet's 1M random-read IOPS are a fresh
      device's; the study's were filled), eight of them so that ``/dev/nvme5n1``, the device the runs
      name, is a device of its own. Filled as the artifact states: the flash translation layer and
      its garbage collection on (``ssd.ftl.enabled``), preconditioned full; its geometry and spare
      space are :class:`~models.ssd.config.FtlConfig`'s defaults (estimates: a consumer drive's 7%).
      Reads do not depend on it; writes do;
    - power: one socket's DRAM (six channels, one DIMM each, at :data:`DRAM_W_PER_CHANNEL`) and board
      (:data:`PLATFORM_W_PER_SOCKET`), as a composed platform's; installed memory unknown.
    """
    cheops = cheops23_optane()
    cpu = xeon_silver_4210r(sockets=1, smt=False)
    c1 = cpu.cstates[1].model_copy(update={"wake_ns": CHEOPS23_C1_WAKE_NS})
    cpu = cpu.model_copy(update={"cstates": (cpu.cstates[0], c1, *cpu.cstates[2:])})
    ssd = samsung_980pro()
    return PlatformConfig(
        name="icpe24-980pro",
        description="ICPE'24 host: 1 x 10-core Xeon (Silver 4210R-class, SMT off) + 8 x Samsung 980 PRO,"
        " Linux 6.3 patched to dispatch every scheduler's requests in the submitter (the IO-scheduler"
        " study's host; nothing fitted to its measurements)",
        cpu=cpu,
        ssd=ssd.model_copy(update={"ftl": ssd.ftl.model_copy(update={"enabled": True, "precondition": "full"})}),
        ssd_count=8,
        kernel=cheops.kernel.model_copy(update={"version": ICPE24_KERNEL}),
        queue=QueueConfig(sched_dispatch="direct"),
        power=PowerConfig(
            dram_w=DRAM_W_PER_CHANNEL * 6, platform_base_w=PLATFORM_W_PER_SOCKET, platform_cpu_coupling=0.1
        ),
        calibration="none for this host: the kernel's cycle costs are cheops23-optane's (calibrated on a"
        " Cascade Lake-SP Silver by calibrate --study cheops23), the CPU and SSD are their presets",
    )


def zn540_e5_2660v4() -> PlatformConfig:
    """The R730 host of ``p3700-e5-2660v4`` with a WD Ultrastar DC ZN540 zoned namespace SSD in
    place of the P3700 (models.ssd.presets.zn540): for fio's zonemode=zbd jobs."""
    base = p3700_e5_2660v4()
    return base.model_copy(
        update={
            "name": "zn540-e5-2660v4",
            "description": "Dell R730: Xeon E5-2660 v4 + WD Ultrastar DC ZN540 (ZNS: 904 zones of 2 GiB,"
            " 14 active), Linux 5.15 (ZNS needs 5.9+); the host's costs from p3700-e5-2660v4",
            "ssd": zn540(),
            # NVMe ZNS needs Linux 5.9+ (ZNS-Study's README); 5.15 as the other platforms' studies
            "kernel": base.kernel.model_copy(update={"version": "5.15"}),
            "calibration": "the host from p3700-e5-2660v4; the ZN540's zone figures from Doekemeijer et al."
            " (CLUSTER 2023), the rest estimates (models.ssd.presets.zn540)",
        }
    )


PLATFORMS = {
    "optane900p-e3-1230v5": optane900p_e3_1230v5,
    "optane-p4801x-e3-1230": optane_p4801x_e3_1230,
    "optane-p4800x-e5-2660v4": optane_p4800x_e5_2660v4,
    "p3700-e5-2660v4": p3700_e5_2660v4,
    "cheops23-optane": cheops23_optane,
    "zn540-e5-2660v4": zn540_e5_2660v4,
    "icpe24-980pro": icpe24_980pro,
}


def _epyc9454p_16xpm1743():
    return epyc9454p_16xpm1743()


PLATFORMS["epyc9454p-16xpm1743"] = _epyc9454p_16xpm1743


# ---------------------------------------------------------------------------------------------------
# Platforms composed from the preset catalogue (``stacksim platform new``)

#: DRAM power per memory channel (one DIMM each), W. Estimate: the R230 platform's 4 DIMMs at 12 W
#: and the R730's 8 at 24 W: ~3 W per DIMM at low load
DRAM_W_PER_CHANNEL = 3.0
#: board, fans, PSU loss and NIC per socket, W. Estimate: the R730 platform's 70 W for two sockets
#: (the 1-socket R230's 20 W is a small 1U box)
PLATFORM_W_PER_SOCKET = 35.0
#: most SSDs a platform holds (PlatformConfig.ssd_count)
MAX_SSDS = PlatformConfig.model_fields["ssd_count"].metadata[-1].le


def compose_platform(
    cpu: str, sockets: int, ssd: str, ssds: int, kernel: str | None = None
) -> tuple[PlatformConfig, dict[str, str]]:
    """A platform of ``sockets`` x CPU preset ``cpu`` and ``ssds`` x SSD preset ``ssd`` (catalogue
    names), Linux ``kernel`` (MAJOR.MINOR; None: KernelCosts' default), and the source of every value
    (dotted platform paths -> source). What no preset says is an estimate: the kernel's cycle costs
    (:class:`~models.os.costs.tables.KernelCosts`' defaults, uncalibrated), DRAM and board power
    (:data:`DRAM_W_PER_CHANNEL`, :data:`PLATFORM_W_PER_SOCKET`), the SSDs spread evenly over the
    sockets. Unknown names and counts out of range are a :class:`ConfigError` naming the option."""
    if cpu not in CPU_CATALOGUE:
        raise unknown_name(cpu, CPU_CATALOGUE, "CPU preset", "--cpu")
    if ssd not in SSD_CATALOGUE:
        raise unknown_name(ssd, SSD_CATALOGUE, "SSD preset", "--ssd")
    cpu_preset, ssd_preset = CPU_CATALOGUE[cpu], SSD_CATALOGUE[ssd]
    most = cpu_preset.fact("max_sockets", 1)
    if not 1 <= sockets <= most:
        made = "a single-socket part" if most == 1 else f"made for 1 to {most} sockets"
        raise ConfigError(f"--sockets {sockets}: {cpu} is {made}")
    if not 1 <= ssds <= MAX_SSDS:
        raise ConfigError(f"--ssds {ssds}: expected 1 to {MAX_SSDS} SSDs")
    kernel_costs = KernelCosts() if kernel is None else validate(KernelCosts, {"version": kernel}, where="--kernel")
    channels = cpu_preset.fact("memory_channels", 2)
    nodes = tuple(i * sockets // ssds for i in range(ssds)) if sockets > 1 else ()
    platform = PlatformConfig(
        name=f"{cpu}-x{sockets}-{ssd}-x{ssds}",
        description=f"{sockets} x {cpu} + {ssds} x {ssd}, Linux {kernel_costs.version} (composed from the preset"
        " catalogue: datasheet values and estimates, uncalibrated)",
        cpu=cpu_preset.make(sockets=sockets),
        ssd=ssd_preset.make(),
        ssd_count=ssds,
        ssd_nodes=nodes,
        kernel=kernel_costs,
        power=PowerConfig(
            dram_w=DRAM_W_PER_CHANNEL * channels * sockets,
            platform_base_w=PLATFORM_W_PER_SOCKET * sockets,
            platform_cpu_coupling=0.1,
        ),
        calibration="none: composed by stacksim platform new from the preset catalogue (docs/presets.md)",
    )
    return platform, _composed_sources(cpu, ssd, sockets, channels, kernel)


def _composed_sources(cpu: str, ssd: str, sockets: int, channels: int, kernel: str | None) -> dict[str, str]:
    """The sources of a composed platform's values (:func:`compose_platform`)."""
    cpu_preset, ssd_preset = CPU_CATALOGUE[cpu], SSD_CATALOGUE[ssd]
    # in the order of the configurations' fields
    sources = {f"cpu.{k}": s for k, _, s in sourced_rows(cpu_preset.make(), cpu_preset.sources)}
    sources.update({f"ssd.{k}": s for k, _, s in sourced_rows(ssd_preset.make(), ssd_preset.sources)})
    sources.update(
        {
            "cpu.sockets": f"given (--sockets); {cpu} supports up to {cpu_preset.fact('max_sockets', 1)}"
            f" ({cpu_preset.facts['max_sockets'][1] if 'max_sockets' in cpu_preset.facts else 'estimate'})",
            "ssd_count": "given (--ssds)",
            "ssd_nodes": "estimate: the SSDs spread evenly over the sockets' root ports (set ssd_nodes to yours)",
            "kernel.version": "given (--kernel)" if kernel else "estimate: KernelCosts' default release",
            "kernel": "estimate: KernelCosts' default cycle costs (order-of-magnitude figures for a ~3.4 GHz"
            " Skylake; calibrate them: docs/calibration.md)",
            "power.dram_w": f"estimate: {DRAM_W_PER_CHANNEL:g} W per DIMM x {channels} memory channels per socket"
            f" ({cpu_preset.facts['memory_channels'][1] if 'memory_channels' in cpu_preset.facts else 'estimate'})"
            f" x {sockets} socket(s)",
            "power.platform_base_w": f"estimate: {PLATFORM_W_PER_SOCKET:g} W of board, fans and PSU loss per"
            " socket (the R730 platform's 70 W for two)",
            "power.platform_cpu_coupling": "estimate: 0.1 W per CPU watt, as the built-in platforms",
            "memory_bytes": "unknown: set memory_bytes for fio's $mb_memory",
        }
    )
    return sources
