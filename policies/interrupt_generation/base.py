"""The registry of device-side interrupt-generation policies. The interface (:class:`IrqGeneration`),
its configuration (:class:`IrqConfig`) and the request flags live next to the device's queue pairs
in :mod:`models.ssd.irq` and are re-exported here for plug-ins."""

from __future__ import annotations

from models.ssd.irq import BARRIER, URGENT, IrqConfig, IrqGeneration
from simcore.plugins import Registry

IRQ_GENERATION = Registry("interrupt generation policy")

__all__ = ["IRQ_GENERATION", "BARRIER", "URGENT", "IrqConfig", "IrqGeneration"]
