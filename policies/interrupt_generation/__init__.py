"""Device-side interrupt generation per completion queue / MSI-X vector.

``none`` (one interrupt per completion, the Linux default), ``nvme`` (standard coalescing, Set
Features 08h), ``adaptive`` (burst detection with Delta and thr) and ``cinterrupts`` (calibrated
interrupts: Urgent/Barrier annotations, out-of-order Urgent, storm protection). Chosen with
``--set nvme.irq=NAME`` and parameters under ``nvme.irq_*``.
"""

from policies.interrupt_generation.base import IRQ_GENERATION, IrqGeneration, IrqConfig, URGENT, BARRIER
from policies.interrupt_generation import none, nvme_coalescing, adaptive, cinterrupts  # noqa: F401

__all__ = ["IRQ_GENERATION", "IrqGeneration", "IrqConfig", "URGENT", "BARRIER"]
