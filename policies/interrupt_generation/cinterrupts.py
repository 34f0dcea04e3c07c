"""``cinterrupts``: calibrated interrupts (Tai, Smolyar, Wei & Tsafrir, ACM TOS 2022).

* an **Urgent** completion fires at once; with out-of-order processing (``irq_ooo``) that interrupt
  is marked Urgent-only and the driver reaps just the Urgent entries, leaving the others for an
  interrupt of their own;
* a **Barrier** completion fires at once (relaxed) or once every earlier request submitted to its
  SQ has completed (``irq_strict_barrier``), flushing everything pending;
* **untagged** completions follow the adaptive rule (Delta, thr) and ride along on other interrupts;
* **storm protection**: an EWMA (lambda = ``irq_ewma_lambda``, 1/128) of the vector's interrupt
  rate; while it exceeds ``irq_max_rate``, Urgent completions are coalesced like untagged ones and
  thr/Delta are scaled up by the excess, so the long-run rate stays under the maximum.
"""

from __future__ import annotations

from models.ssd.irq import BARRIER, URGENT
from policies.interrupt_generation.adaptive import AdaptiveCoalescing
from policies.interrupt_generation.base import IRQ_GENERATION


@IRQ_GENERATION.register("cinterrupts")
class CalibratedInterrupts(AdaptiveCoalescing):
    def __init__(self, qp, cfg, engine):
        super().__init__(qp, cfg, engine)
        self.base_delta_ns = self.delta_ns
        self.base_thr = self.thr
        self.outstanding: set[int] = set()  # SQ sequence numbers of commands not yet completed
        self.waiting_barriers: list[int] = []
        self._last_irq = None
        self._ewma_gap_ns = None
        self.throttled = 0
        self.urgent_irqs = 0

    def on_submit(self, req) -> None:
        self.outstanding.add(req.sq_seq)

    def on_completion(self, req) -> None:
        self.completions += 1
        self.outstanding.discard(req.sq_seq)
        flags = req.flags
        if flags & URGENT and not self._storm():
            self.urgent_irqs += 1
            if self.cfg.irq_ooo:
                self.fire(urgent_only=True)  # the pending untagged entries keep waiting
            else:
                self.flush()
            return
        if flags & BARRIER and not flags & URGENT:
            if self.cfg.irq_strict_barrier:
                self.waiting_barriers.append(req.sq_seq)
                self._release_barriers()
                if self.waiting_barriers:
                    self.add_untagged()
                return
            self.flush()
            return
        if flags & URGENT:
            self.throttled += 1
        self.add_untagged()
        self._release_barriers()

    def _release_barriers(self) -> None:
        if not self.waiting_barriers:
            return
        oldest = min(self.outstanding) if self.outstanding else None
        ready = [b for b in self.waiting_barriers if oldest is None or oldest > b]
        if ready:
            self.waiting_barriers = [b for b in self.waiting_barriers if b not in ready]
            self.flush()

    # -- storm protection ----------------------------------------------------------------------
    def _storm(self) -> bool:
        return bool(self.cfg.irq_max_rate) and self.rate_per_s() > self.cfg.irq_max_rate

    def rate_per_s(self) -> float:
        return 1e9 / self._ewma_gap_ns if self._ewma_gap_ns else 0.0

    def fire(self, urgent_only: bool = False) -> None:
        now = self.engine.now
        if self._last_irq is not None:
            gap = now - self._last_irq
            lam = self.cfg.irq_ewma_lambda
            self._ewma_gap_ns = gap if self._ewma_gap_ns is None else (1 - lam) * self._ewma_gap_ns + lam * gap
        self._last_irq = now
        if self.cfg.irq_max_rate:
            excess = self.rate_per_s() / self.cfg.irq_max_rate
            scale = max(1.0, excess)
            self.delta_ns = self.base_delta_ns * scale
            self.thr = max(1, int(round(self.base_thr * scale)))
        super().fire(urgent_only)
