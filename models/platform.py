"""A platform: the CPU package, kernel costs, scheduler settings, SSDs and the rest of the box."""

from __future__ import annotations

from pydantic import Field

from models.cpu.config import CpuConfig
from models.os.costs import KernelCosts
from models.os.queue import QueueConfig
from models.os.sched_config import SchedConfig
from models.ssd.config import DeviceConfig
from models.ssd.irq import IrqConfig
from simcore.config import Model


class PowerConfig(Model):
    """Non-CPU, non-SSD power (mechanisms.md section 10)."""

    dram_w: float = Field(ge=0, description="DRAM power (background + refresh at this load), W")
    platform_base_w: float = Field(ge=0, description="rest of the platform (board, PSU loss, fans at minimum, NIC), W")
    platform_cpu_coupling: float = Field(
        0.0,
        ge=0,
        description="extra platform watts per watt of CPU package power (fans, regulators follow CPU activity)",
    )
    c0_core_w: float = Field(
        0.0,
        ge=0,
        description="platform W per physical core in C0 (busy or polling): its paths to"
        " memory, fabric and NIC kept out of low-power states",
    )
    c0_core_ghz_w: float = Field(
        0.0,
        ge=0,
        description="platform W per physical core in C0 per GHz of its clock (memory,"
        " fabric and NIC traffic, which scales with the instruction rate)",
    )
    meter_hz: float = Field(
        1.0,
        gt=0,
        le=1000.0,
        description="sampling rate of the simulated wall-power meter (the studies' meters:"
        " 1 Hz; at most 1 kHz, the ~1 ms update period of RAPL energy counters)",
    )


class PlatformConfig(Model):
    name: str
    description: str = ""
    cpu: CpuConfig
    ssd: DeviceConfig
    ssd_count: int = Field(1, ge=1, le=1024, description="SSDs (a 1U EDSFF server holds 32, a JBOF up to ~100)")
    memory_bytes: int | None = Field(
        None,
        gt=0,
        description="installed DRAM, bytes (the study's machine description);"
        " fio's $mb_memory (None: unknown, $mb_memory refused)",
    )
    kernel: KernelCosts = KernelCosts()
    sched: SchedConfig = SchedConfig()
    power: PowerConfig
    queue: QueueConfig = QueueConfig()
    nvme: IrqConfig = IrqConfig()
    calibration: str = Field("", description="how the parameters were obtained")
