"""A platform: the CPU package, kernel costs, scheduler settings, SSDs and the rest of the box."""

from __future__ import annotations

from typing import Any

from pydantic import Field, field_validator, model_validator

from models.cpu.config import CpuConfig
from models.os.block.queue import QueueConfig
from models.os.costs.tables import KernelCosts
from models.os.mm.pagecache_config import PAGECACHE_DEFAULT_BYTES, PageCacheConfig
from models.os.sched.config import SchedConfig
from models.ssd.config import DeviceConfig
from models.ssd.irq import IrqConfig
from simcore.config import Model


class PowerConfig(Model):
    """Non-CPU, non-SSD power: DRAM and the rest of the platform, which follows CPU activity (SANDMAN,
    Zhou et al., SOSP 2025, Table 1: "others" 204 W idle, 398 W under light load with its cores
    polling)."""

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
    estimated: str = Field(
        "",
        description="the machine the CPU and box power figures are estimates for, and from what, when they"
        " are estimates of its class rather than a preset's or a calibrated platform's ('4-vCPU guest:"
        " ...'; stacksim probe sets it, stacksim run prints 'power: estimates for a ...' under its power"
        " line); empty: they are not",
    )


class PlatformConfig(Model):
    name: str
    description: str = ""
    cpu: CpuConfig
    ssd: DeviceConfig
    ssd_count: int = Field(1, ge=1, le=1024, description="SSDs (a 1U EDSFF server holds 32, a JBOF up to ~100)")
    ssd_nodes: tuple[int, ...] = Field(
        (),
        description="the NUMA node (socket) whose PCIe root each SSD hangs off, by SSD index"
        " (/sys/class/nvme/nvmeN/device/numa_node); empty: every SSD on node 0; one value: every SSD"
        " on that node; otherwise one per SSD",
    )
    memory_bytes: int | None = Field(
        None,
        gt=0,
        description="installed DRAM, bytes (the study's machine description);"
        " fio's $mb_memory (None: unknown, $mb_memory refused)",
    )
    kernel: KernelCosts = KernelCosts()
    pagecache: PageCacheConfig = PageCacheConfig()
    sched: SchedConfig = SchedConfig()
    power: PowerConfig
    queue: QueueConfig = QueueConfig()
    nvme: IrqConfig = IrqConfig()
    calibration: str = Field("", description="how the parameters were obtained")

    @field_validator("ssd_nodes", mode="before")
    @classmethod
    def _nodes_from_text(cls, v):
        """``--set ssd_nodes=1`` (every SSD on node 1) or ``ssd_nodes=0,0,1,1``."""
        if isinstance(v, int) and not isinstance(v, bool):
            return (v,)
        if isinstance(v, str):
            try:
                return tuple(int(x) for x in v.split(",") if x.strip())
            except ValueError:
                raise ValueError(f"ssd_nodes={v!r}: expected node numbers, e.g. 0,0,1,1") from None
        return v

    @model_validator(mode="before")
    @classmethod
    def _pagecache_memory(cls, data: Any) -> Any:
        """Unless set, the page cache's memory is half the installed DRAM when the platform states
        it, at most :data:`PAGECACHE_DEFAULT_BYTES` (a lightly used machine's free and file pages)."""
        if not isinstance(data, dict) or not data.get("memory_bytes"):
            return data
        try:
            installed = int(data["memory_bytes"])
        except (TypeError, ValueError):
            return data  # (the field's own validation says what is wrong)
        pc = data.get("pagecache")
        given = pc.model_fields_set if isinstance(pc, PageCacheConfig) else set(pc or {})
        if "memory_bytes" in given:
            return data
        mem = max(1, min(PAGECACHE_DEFAULT_BYTES, installed // 2))
        if isinstance(pc, PageCacheConfig):
            return {**data, "pagecache": pc.model_copy(update={"memory_bytes": mem})}
        return {**data, "pagecache": {**(pc or {}), "memory_bytes": mem}}

    @model_validator(mode="after")
    def _check_ssd_nodes(self) -> "PlatformConfig":
        if self.memory_bytes is not None and self.pagecache.memory_bytes > self.memory_bytes:
            raise ValueError(
                f"pagecache.memory_bytes={self.pagecache.memory_bytes} exceeds the installed memory_bytes="
                f"{self.memory_bytes}"
            )
        nodes = self.ssd_nodes
        if len(nodes) > 1 and len(nodes) != self.ssd_count:
            raise ValueError(
                f"ssd_nodes has {len(nodes)} entries for ssd_count={self.ssd_count}: give one node per SSD,"
                " one node for all, or none (node 0)"
            )
        for n in nodes:
            if not 0 <= n < self.cpu.sockets:
                raise ValueError(f"ssd_nodes names node {n}; the platform has {self.cpu.sockets} socket(s)")
        return self

    def ssd_node(self, index: int) -> int:
        """The NUMA node of SSD ``index``."""
        nodes = self.ssd_nodes
        if not nodes:
            return 0
        return nodes[0] if len(nodes) == 1 else nodes[index]
