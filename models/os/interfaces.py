"""The kernel's header: what one part of the kernel needs of another, declared below both.

The kernel's parts call each other both ways: a CPU's runner calls the load balancer at an idle
entry and the balancer moves the runners' tasks; a CPU's poll loop reaps the driver's queues and
the driver wakes tasks on the runners; blk-mq dispatches to the driver and the driver completes
through blk-mq. So that imports run one way only (the layers of ``models.os``, setup.cfg's
``[importlinter:contract:kernel-tree]``), the lower part names the upper one by what it needs of
it, declared here, and the upper part implements it:

==============================  ===================================  ===============================
declared here                   implemented by                       needed by
==============================  ===================================  ===============================
:class:`RunQueue` (a runner)    the runner of each logical CPU       a task asleep in IO wait
                                (:mod:`models.os.sched.execution`)   (its ``rq->nr_iowait``)
:class:`Balancer`               :class:`~models.os.sched.balance.    a CPU's idle entry, tick and
                                LoadBalancer`                        task moves
:class:`QueueView`              :class:`~models.os.drivers.nvme.     a CPU's poll loop, a request,
                                NvmeQueue`                           blk-mq's hardware contexts
:class:`BlockDriver`            :class:`~models.os.drivers.nvme.     a CPU's poll loop (blk-mq's
                                NvmeDriver`                          submitter: ``BlkMqOps``)
==============================  ===================================  ===============================

Each is a plain native class, not a ``typing.Protocol``: compiled with mypyc (simcore/compiled.py)
an attribute of one is read at a fixed offset and a method called through the class's vtable,
exactly as on the class that implements it, where a Protocol-typed value is an untyped Python
object (its every attribute looked up by name, its calls made through the generic call protocol):
on the hot path that costs ~100 instructions per use, a few percent of an IO. The runner chain's
own levels name the levels above them through the hooks :class:`~models.os.sched.execution.
Execution` declares; its argument types here are ``Any`` where the implementation narrows them to
the class the caller passes (a runner, a queue: mypyc checks the type at the call, one compare).
"""

from __future__ import annotations

from typing import Any

from models.ssd.device import NvmeDevice, QueuePair
from simcore.engine import Handler

__all__ = ["Balancer", "BlockDriver", "QueueView", "RunQueue"]


class RunQueue(Handler):
    """What a task needs of the runqueue of the CPU it sleeps on: its count of tasks asleep in IO
    wait (``rq->nr_iowait``, kernel/sched/core.c: incremented in ``__schedule`` for a task that
    sleeps with ``in_iowait``, decremented at its wake-up on whichever CPU it wakes: the cpuidle
    governor weighs it, menu's performance multiplier). The per-CPU runner is one."""

    #: tasks of this runqueue asleep in IO wait
    iowaiters: int


class Balancer:
    """What a CPU's runner needs of the scheduler-wide load balancer (kernel/sched/fair.c)."""

    def __init__(self, migration_cost_ns: float) -> None:
        self.movable_tasks = False
        self.migration_cost_ns = migration_cost_ns
        self.migrations = 0

    #: some task may move (its affinity allows another CPU and its engine thread may migrate)
    movable_tasks: bool
    #: ``sysctl_sched_migration_cost``, ns: a task that ran this recently is cache-hot
    migration_cost_ns: float
    #: task migrations so far (set_task_cpu to another CPU)
    migrations: int

    def newidle_balance(self, this: Any, now: float) -> bool:
        """``this`` CPU is about to go idle: pull a queued task to it; True if one was pulled."""
        raise NotImplementedError

    def sched_softirq(self, by: Any) -> None:
        """SCHED_SOFTIRQ on CPU ``by`` (raised by its tick): periodic and nohz balancing."""
        raise NotImplementedError


class QueueView:
    """What the CPUs and blk-mq read of a driver's hardware queue (``struct nvme_queue``): the
    device's queue pair (``hw``: its SQ and CQ), the device, the CPU the queue serves and the CPUs
    blk-mq maps to it, and the runners of other CPUs polling it now (a task that moved)."""

    __slots__ = ("hw", "device", "qid", "depth", "cpu", "cpus", "shared", "remote_pollers")

    def __init__(self, hw: QueuePair, cpu: int, cpus: tuple[int, ...]) -> None:
        self.hw = hw
        self.device: NvmeDevice = hw.device
        self.qid = hw.qid
        self.depth = hw.depth
        self.cpu = cpu  # CPU whose vector this queue interrupts (or whose tasks poll it)
        #: the CPUs blk-mq maps to this queue (its vector's affinity mask)
        self.cpus: tuple[int, ...] = cpus or (cpu,)
        #: several CPUs submit to this queue: nvme_queue_rq's ``spin_lock(&nvmeq->sq_lock)`` around
        #: the SQ entry copy and the doorbell can contend
        self.shared = len(self.cpus) > 1
        #: runners of other CPUs polling this queue now (a task that moved)
        self.remote_pollers: list[Any] = []


class BlockDriver:
    """What a CPU's poll loop needs of the block driver whose queue it polls (``blk_mq_ops.poll``);
    blk-mq's own needs of it, a submitter (``queue_rq``), are :class:`models.os.block.blk_mq.BlkMqOps`,
    a subclass."""

    __slots__ = ()

    def reap(self, runner: Any, qp: Any) -> None:
        """Reap every posted entry of queue ``qp`` on ``runner``'s CPU (a poll loop's hit)."""
        raise NotImplementedError
