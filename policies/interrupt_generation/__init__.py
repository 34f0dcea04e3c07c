"""Device-side interrupt generation per completion queue / MSI-X vector.

``none`` (one interrupt per completion, the Linux default), ``nvme`` (standard coalescing, Set
Features 08h), ``adaptive`` (burst detection with Delta and thr) and ``cinterrupts`` (calibrated
interrupts: Urgent/Barrier annotations, out-of-order Urgent, storm protection). Chosen with
``--set nvme.irq=NAME`` and parameters under ``nvme.irq_*``.
"""

from policies.interrupt_generation import adaptive, cinterrupts, none, nvme_coalescing  # noqa: F401
from policies.interrupt_generation.base import BARRIER, IRQ_GENERATION, URGENT, IrqConfig, IrqGeneration

__all__ = ["IRQ_GENERATION", "IrqGeneration", "IrqConfig", "URGENT", "BARRIER"]
