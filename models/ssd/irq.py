"""Configuration of device-side interrupt generation (``nvme.*``); the policy interface and the
request annotations it reads are :mod:`models.ssd.irq_generation`, re-exported here. Implementations
live in ``policies/interrupt_generation/`` and are registered there by name."""

from __future__ import annotations

from pydantic import Field

# the interface and the flags live in a module of their own (compiled with the hot path); importable
# from here as before
from models.ssd.irq_generation import BARRIER, URGENT, IrqGeneration  # noqa: F401
from simcore.config import Model


class IrqConfig(Model):
    """NVMe interrupt generation of the platform's devices (``--set nvme.KEY=VALUE``)."""

    irq: str = Field("none", description="policy: none | nvme | adaptive | cinterrupts (or a plug-in)")
    irq_thr: int = Field(
        32,
        ge=1,
        description="adaptive/cinterrupts: fire when this many completions are pending;"
        " nvme: Set Features 08h aggregation threshold, 0's based (fires at irq_thr + 1)",
    )
    irq_time_100us: int = Field(
        1, ge=0, le=255, description="nvme: aggregation time in 100 us units (0 = no time limit)"
    )
    irq_delta_us: float = Field(
        6.0, gt=0, description="adaptive/cinterrupts: fire when no completion arrived for Delta us"
    )
    irq_ooo: bool = Field(True, description="cinterrupts: out-of-order Urgent processing in the driver")
    irq_strict_barrier: bool = Field(
        False, description="cinterrupts: a Barrier also waits for every earlier request in its SQ"
    )
    irq_max_rate: float = Field(
        0.0, ge=0, description="cinterrupts storm protection: max interrupts/s per vector (0 = off)"
    )
    irq_ewma_lambda: float = Field(
        1 / 128, gt=0, le=1, description="storm protection: EWMA weight of the interrupt rate"
    )
    irq_vector_disable: bool = Field(False, description="Set Features 09h: coalescing disabled for the vectors")
