"""``none``: one interrupt per completion (Linux and devices' default)."""

from __future__ import annotations

from typing import Any

from mypy_extensions import mypyc_attr

from models.ssd.irq_generation import IrqGeneration
from policies.interrupt_generation.base import IRQ_GENERATION


@mypyc_attr(allow_interpreted_subclasses=True)  # plug-ins may extend it
class NoCoalescing(IrqGeneration):
    def on_completion(self, req: Any) -> None:
        self.completions += 1
        self.interrupts += 1
        qp = self.qp
        qp.on_irq(qp, False)  # fire(), inlined: this runs once per IO


# registered by a call, not a class decorator: the module is compiled with the hot path
# (simcore/compiled.py), and mypyc compiles a decorated class as a plain Python class
IRQ_GENERATION.register("none")(NoCoalescing)
