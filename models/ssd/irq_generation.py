"""Interface of a device-side interrupt-generation policy and the request annotations it reads.
Implementations live in ``policies/interrupt_generation/`` and are registered there by name; the
configuration they read is :class:`models.ssd.irq.IrqConfig` (``nvme.*``)."""

from __future__ import annotations

from typing import Any, ClassVar, Final

from mypy_extensions import mypyc_attr

URGENT: Final = 1 << 1
"""``Request.flags`` bit: fire an interrupt as soon as this request completes (cinterrupts)."""
BARRIER: Final = 1 << 2
"""``Request.flags`` bit: end of a batch: fire when this request (strict: and every earlier one in
its SQ) has completed (cinterrupts)."""


@mypyc_attr(allow_interpreted_subclasses=True)  # policies outside the compiled modules extend it
class IrqGeneration:
    """Decides when a completion queue's vector fires. The device calls ``on_completion(req)``
    after posting an entry and ``on_submit(req)`` when a command is fetched; the policy calls
    ``self.fire(urgent_only)`` (which raises the MSI-X via the driver) and may arm timers with
    ``self.engine.call_at``."""

    name: ClassVar[str] = "abstract"

    def __init__(self, qp: Any, cfg: Any, engine: Any) -> None:
        self.qp = qp  # models.ssd.device.QueuePair (or what stands in for it: its on_irq is called)
        self.cfg = cfg  # models.ssd.irq.IrqConfig
        self.engine = engine  # simcore.engine.Engine
        self.interrupts = 0
        self.completions = 0

    def on_submit(self, req: Any) -> None:
        pass

    def on_completion(self, req: Any) -> None:
        raise NotImplementedError

    def fire(self, urgent_only: bool = False) -> None:
        self.interrupts += 1
        qp = self.qp
        qp.on_irq(qp, urgent_only)
