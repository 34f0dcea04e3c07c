"""``linux``: the kernel NVMe-oF target (nvmet-rdma): interrupt driven, idle cores in C-states.

Every connection is bound to a CPU (its RDMA completion vector), and that CPU's NVMe queue takes
the request to the SSD and receives its completion interrupt. Up to every logical core serves
requests. Per request a CPU runs, at kernel activity:

- receive: hard IRQ + waking the completion worker + a context switch + the same protocol work as
  SPDK's receive (``server.rx_cycles``) + blk-mq submit + NVMe submit;
- completion: hard IRQ + NVMe CQ reap + blk-mq completion + the protocol's response
  (``server.cq_cycles``);

with the platform's ``KernelCosts``. Between requests the CPU goes idle (``idle_entry_cycles``), the
platform's cpuidle governor (``cpu.cpuidle_governor``, menu by default; its idle history primed with
tick-long periods as after a quiet boot) picks a state no deeper than the platform's OS idle limit,
and the next interrupt pays that state's exit latency plus ``idle_exit_cycles``.
"""

from __future__ import annotations

from pydantic import Field

from models.server.reactor import IRQ
from policies.core_scheduling.base import CORE_SCHEDULING, CoreSchedulingPolicy
from simcore.config import Model
from simcore.errors import ConfigError


@CORE_SCHEDULING.register("linux")
class LinuxKernelTarget(CoreSchedulingPolicy):
    class Params(Model):
        cores: int | None = Field(None, ge=1, description="logical cores serving requests (None: all)")

    def reactor_cpus(self) -> list[int]:
        n = len(self.server.cpus)
        k = self.p.cores or n
        if k > n:
            raise ConfigError(f"policy linux: cores={k} but the platform has {n} logical cores")
        return list(range(k))

    def thread_count(self) -> int:
        return len(self.reactor_cpus())

    def item_cycles(self) -> tuple[float, float]:
        s = self.server.cfg.server
        k = self.server.cfg.platform.kernel
        rx = s.rx_cycles + k.irq_wakeup_cycles() + k.blk_submit_cycles + k.nvme_submit_cycles
        cq = s.cq_cycles + k.irq_entry_cycles + k.nvme_complete_cycles + k.blk_complete_cycles
        return rx, cq

    def setup(self) -> None:
        s = self.server
        k = s.cfg.platform.kernel
        limited = s.ccfg.model_copy(update={"cstates": s.ccfg.cstates[: s.os_idle + 1]})
        for th, r in zip(s.threads, s.reactors):
            s.place(th, r)
            r.idle_gov = s.idle_governor_cls(limited, s.tick_period_ns)
            # the CPUs come from a long idle (boot): their recent idle periods were tick-long, not 0
            r.idle_gov.prime(s.tick_period_ns)
            r.entry_ns = k.idle_entry_cycles / r.pcore.freq_ghz
            r.exit_cycles = k.idle_exit_cycles
            r.act = s.act_kernel
            s.set_mode(r, IRQ)
