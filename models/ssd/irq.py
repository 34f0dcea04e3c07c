"""Interface of a device-side interrupt-generation policy, its configuration (``nvme.*``) and the
request annotations it reads. Implementations live in ``policies/interrupt_generation/`` and are
registered there by name."""

from __future__ import annotations

from pydantic import Field

from simcore.config import Model

URGENT = 1 << 1
"""``Request.flags`` bit: fire an interrupt as soon as this request completes (cinterrupts)."""
BARRIER = 1 << 2
"""``Request.flags`` bit: end of a batch: fire when this request (strict: and every earlier one in
its SQ) has completed (cinterrupts)."""


class IrqConfig(Model):
    """NVMe interrupt generation of the platform's devices (``--set nvme.KEY=VALUE``)."""

    irq: str = Field("none", description="policy: none | nvme | adaptive | cinterrupts (or a plug-in)")
    irq_thr: int = Field(32, ge=1, description="adaptive/cinterrupts: fire when this many completions are pending;"
                         " nvme: Set Features 08h aggregation threshold, 0's based (fires at irq_thr + 1)")
    irq_time_100us: int = Field(1, ge=0, le=255, description="nvme: aggregation time in 100 us units (0 = no time limit)")
    irq_delta_us: float = Field(6.0, gt=0, description="adaptive/cinterrupts: fire when no completion arrived for Delta us")
    irq_ooo: bool = Field(True, description="cinterrupts: out-of-order Urgent processing in the driver")
    irq_strict_barrier: bool = Field(False, description="cinterrupts: a Barrier also waits for every earlier request in its SQ")
    irq_max_rate: float = Field(0.0, ge=0, description="cinterrupts storm protection: max interrupts/s per vector (0 = off)")
    irq_ewma_lambda: float = Field(1 / 128, gt=0, le=1, description="storm protection: EWMA weight of the interrupt rate")
    irq_vector_disable: bool = Field(False, description="Set Features 09h: coalescing disabled for the vectors")


class IrqGeneration:
    """Decides when a completion queue's vector fires. The device calls ``on_completion(req)``
    after posting an entry and ``on_submit(req)`` when a command is fetched; the policy calls
    ``self.fire(urgent_only)`` (which raises the MSI-X via the driver) and may arm timers with
    ``self.engine.call_at``."""

    name = "abstract"

    def __init__(self, qp, cfg: IrqConfig, engine):
        self.qp = qp
        self.cfg = cfg
        self.engine = engine
        self.interrupts = 0
        self.completions = 0

    def on_submit(self, req) -> None:
        pass

    def on_completion(self, req) -> None:
        raise NotImplementedError

    def fire(self, urgent_only: bool = False) -> None:
        self.interrupts += 1
        self.qp.on_irq(self.qp, urgent_only)
