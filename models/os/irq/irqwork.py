"""What a hard IRQ (or IPI) runs on a CPU: its handler's cost and its effect.

The runner's IRQ entry and exit (the handler's time, nested interrupts, the C-state exit of an IRQ
that finds the CPU idle) is :mod:`models.os.irq.entry`; the NVMe completion interrupt is
``models.os.drivers.nvme.NvmeIrq``.
"""

from __future__ import annotations

from models.os.costs.bundle import Cost


class IrqWork:
    """A hard-IRQ (or IPI) to run on a CPU. ``cost(runner)`` is evaluated when the handler starts
    (so it sees the CQ as it is then) and returns a Cost; ``fire(runner)`` applies the handler's
    effects when it ends."""

    __slots__ = ("kind",)

    kind: str

    def cost(self, runner) -> Cost:
        raise NotImplementedError

    def fire(self, runner) -> None:
        raise NotImplementedError


class FixedIrq(IrqWork):
    """An interrupt of constant cost whose effect is a callback ``fire(runner)``."""

    __slots__ = ("_cost", "_fire")

    def __init__(self, cost: Cost, fire, kind: str):
        self._cost = cost
        self._fire = fire
        self.kind = kind

    def cost(self, runner) -> Cost:
        return self._cost

    def fire(self, runner) -> None:
        self._fire(runner)


def no_effect(runner) -> None:
    """The effect of an IPI that only wakes its CPU (it runs what became runnable there)."""
