"""What the scheduler, the IRQ entry and the hrtimers read of the host (:class:`SchedHost`).

The host (``models/host.py``'s ``Host``) is assembled above the kernel, so the kernel cannot import
it; each level of the kernel's tree declares what it reads of it, as a ``typing.Protocol`` of
read-only properties typed by classes at or below that level, and the levels above widen it:

============================================  =================================================
view                                          read by
============================================  =================================================
:class:`SchedHost` (here)                     the runner chain (``execution`` .. ``placement``,
                                              ``irq/entry``, ``time/hrtimer``), the balancer, the
                                              stopper
:class:`models.os.block.host.BlockHost`       blk-mq, kblockd, the elevators, the completion
                                              policies, the zone report
:class:`models.os.drivers.host.DriverHost`    the NVMe driver
:class:`models.os.mm.host.MmHost`             the page cache's paths, writeback, kswapd
:class:`models.os.io_uring.host.UringHost`    the SQPOLL threads
:class:`models.ioengines.host.EngineHost`     fio's engines and the trace replayers (user space)
============================================  =================================================

``Host`` matches every one of them structurally (it inherits none: mypy checks each where the host
hands itself to a part, ``tests/test_typed_models.py``), so renaming a field of the host, or of a
part it holds, is a type error in every model that reads it.

A view is not a compiled class: compiled code reads a view's property as a Python attribute look-up
(as it reads any attribute of the interpreted ``Host``), then checks the value's declared type
once, and calls a compiled class's methods on it natively. The hot path reads the host's parts once,
at set-up, into attributes of their own classes (``Execution.engine``, ``BlkMq._runners``, ...).
"""

from __future__ import annotations

from typing import Protocol

from models.cpu.core import Package
from models.os.costs.bundle import Cost
from models.os.costs.tables import CostTable, KernelCosts
from models.os.sched.task import Task
from simcore.engine import Engine

__all__ = ["SchedHost"]


class SchedHost(Protocol):
    """What a CPU's runner, the load balancer and the stopper read of the host."""

    @property
    def engine(self) -> Engine:
        """the discrete-event engine (times in ns)"""

    @property
    def pkg(self) -> Package:
        """the CPU package: cores, logical CPUs, their nodes and cache-line distances"""

    @property
    def kcosts(self) -> KernelCosts:
        """the kernel's cycle costs"""

    @property
    def costs(self) -> CostTable:
        """the run's cost bundles"""

    @property
    def timer_cost(self) -> Cost:
        """an hrtimer interrupt"""

    @property
    def tick_cost(self) -> Cost:
        """the scheduler tick"""

    @property
    def ipi_cost(self) -> Cost:
        """a reschedule IPI on the receiving CPU"""

    @property
    def all_tasks(self) -> list[Task]:
        """every task of the host, by thread id (kernel threads are added to it)"""

    def task_exited(self, t: float, task: Task) -> None:
        """The scheduler's exit hook: ``task`` exited at ``t`` (ns)."""
