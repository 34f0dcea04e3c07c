"""``none``: one interrupt per completion (Linux and devices' default)."""

from models.ssd.irq import IrqGeneration
from policies.interrupt_generation.base import IRQ_GENERATION


@IRQ_GENERATION.register("none")
class NoCoalescing(IrqGeneration):
    def on_completion(self, req) -> None:
        self.completions += 1
        self.interrupts += 1
        qp = self.qp
        qp.on_irq(qp, False)  # fire(), inlined: this runs once per IO
