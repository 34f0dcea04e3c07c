"""``nvme``: standard NVMe interrupt coalescing (Set Features 08h; 09h disables it per vector).

An interrupt fires when ``irq_thr + 1`` completions are pending (the threshold is 0's based) or
when ``irq_time_100us`` x 100 us have passed since the first pending completion, whichever comes
first; ``irq_time_100us = 0`` means no time limit, ``irq_vector_disable`` restores one interrupt
per completion.
"""

from models.ssd.irq import IrqGeneration
from policies.interrupt_generation.base import IRQ_GENERATION


@IRQ_GENERATION.register("nvme")
class NvmeCoalescing(IrqGeneration):
    def __init__(self, qp, cfg, engine):
        super().__init__(qp, cfg, engine)
        self.threshold = cfg.irq_thr + 1
        self.time_ns = cfg.irq_time_100us * 100_000.0
        self.pending = 0
        self._timer = None

    def on_completion(self, req) -> None:
        self.completions += 1
        if self.cfg.irq_vector_disable:
            self.fire()
            return
        self.pending += 1
        if self.pending >= self.threshold:
            self._fire_now()
        elif self.pending == 1 and self.time_ns > 0:
            self._timer = self.engine.call_in(self.time_ns, self._expired)

    def _expired(self) -> None:
        self._timer = None
        if self.pending:
            self._fire_now()

    def _fire_now(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self.pending = 0
        self.fire()
