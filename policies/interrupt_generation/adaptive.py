"""``adaptive``: device-side burst detection (Tai et al., calibrated interrupts, section 4).

After each completion the deadline is pushed out to now + Delta; the vector fires when no
completion has arrived for Delta (the end of a burst) or when ``thr`` completions are pending.
The request that ends a burst waits Delta: the unavoidable cost of the scheme.
"""

from models.ssd.irq import IrqGeneration
from policies.interrupt_generation.base import IRQ_GENERATION


@IRQ_GENERATION.register("adaptive")
class AdaptiveCoalescing(IrqGeneration):
    def __init__(self, qp, cfg, engine):
        super().__init__(qp, cfg, engine)
        self.delta_ns = cfg.irq_delta_us * 1000.0
        self.thr = cfg.irq_thr
        self.pending = 0
        self._deadline = 0.0
        self._timer = None

    def on_completion(self, req) -> None:
        self.completions += 1
        self.add_untagged()

    def add_untagged(self) -> None:
        self.pending += 1
        if self.pending >= self.thr:
            self.flush()
            return
        self._deadline = self.engine.now + self.delta_ns
        if self._timer is None:
            self._timer = self.engine.call_at(self._deadline, self._check)

    def _check(self) -> None:
        self._timer = None
        if not self.pending:
            return
        now = self.engine.now
        if now >= self._deadline:
            self.flush()
        else:  # pushed out by later completions: one timer per burst, re-armed lazily
            self._timer = self.engine.call_at(self._deadline, self._check)

    def flush(self, urgent_only: bool = False) -> None:
        """Fire for everything pending."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self.pending = 0
        self.fire(urgent_only)
