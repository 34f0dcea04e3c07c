"""The NVMe host driver: one queue pair per CPU (plus a polled queue per CPU when polling is
enabled), SQ doorbell, interrupt handler and the poll function (drivers/nvme/host/pci.c).

Interrupt-driven queues have an MSI-X vector bound to their CPU; polled queues (created when the
queue's ``io_poll`` is on, as ``nvme.poll_queues`` does) have none, and their completions are found
only by blk_poll. The driver's side of each queue pair is an :class:`NvmeQueue` (``struct
nvme_queue``): the kernel passes it around (``Request.qp``, blk-mq's hardware contexts, polling);
the device's side is its :class:`~models.ssd.device.QueuePair`, which calls the driver back through
the callbacks the driver registers on it (``on_irq``: the vector fired; ``on_post``: an entry was
posted on a polled queue).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from models.os.blk import BlkMq
from models.os.cost import Cost
from models.os.request import Request
from models.os.sched import CpuRunner, IrqWork
from models.os.task import SLEEPING
from models.ssd.command import NvmeCommand
from models.ssd.device import NvmeDevice, QueuePair
from models.ssd.irq_generation import URGENT
from simcore.engine import Engine

if TYPE_CHECKING:
    from models.os.completion import CompletionPolicy


class NvmeQueue:
    """The driver's side of one NVMe queue pair (``struct nvme_queue``): the device's pair
    (``hw``: its SQ and CQ), the CPU it serves (blk-mq maps each CPU to its own hardware queues;
    an interrupt-driven pair's vector is bound to that CPU), the runners of other CPUs polling it
    now, and its interrupt handler object. Its ``device``, ``qid`` and ``depth`` are the pair's."""

    __slots__ = ("hw", "device", "qid", "depth", "cpu", "driver", "runners", "remote_pollers", "irq_work")

    def __init__(self, driver: NvmeDriver, hw: QueuePair, cpu: int):
        self.hw = hw
        self.device: NvmeDevice = hw.device
        self.qid = hw.qid
        self.depth = hw.depth
        self.cpu = cpu  # CPU whose vector this queue interrupts (or whose tasks poll it)
        self.driver = driver
        self.runners: list[CpuRunner] = driver._runners  # every CPU's runner (the host's list)
        self.remote_pollers: list[CpuRunner] = []  # runners of other CPUs polling this queue now (a task that moved)
        self.irq_work: NvmeIrq | None = None  # the reusable handler object of this queue's vector
        if hw.polled:
            hw.on_post = self.cqe_posted
        else:
            hw.on_irq = self.vector_fired

    def vector_fired(self, hw: QueuePair, urgent_only: bool = False) -> None:
        """The device raised the queue's MSI-X vector (its interrupt-generation policy decided).

        The vector's handler object is reused: a CPU runs its handlers one after another, and a
        handler's ``cost`` (which takes the CQ entries) and ``fire`` (which completes them) belong
        to the same run."""
        work: NvmeIrq | None
        if urgent_only:
            work = NvmeIrq(self.driver, self, True)
        else:
            work = self.irq_work
            if work is None:
                work = self.irq_work = NvmeIrq(self.driver, self, False)
        self.runners[self.cpu].raise_irq(work)

    def cqe_posted(self, hw: QueuePair, req: NvmeCommand) -> None:
        """The device posted an entry on this polled queue: its CPU's poller, and any other CPU's
        polling it, notice."""
        self.runners[self.cpu].cqe_posted(self)
        if self.remote_pollers:  # a task that moved polls its requests on its old CPU's queue
            for r in self.remote_pollers:
                r.cqe_posted(self)


class NvmeDriver:
    """Maps CPUs to queue pairs and handles submissions and completions for one host."""

    def __init__(self, host, devices, poll_queues: bool):
        self.host = host
        self.engine: Engine = host.engine
        self._runners: list[CpuRunner] = host.runners
        self.devices = devices
        k = host.kcosts
        self._k = k
        ncpu = len(host.runners)
        #: the driver's queues by (device index, CPU): interrupt-driven, and polled ones (with
        #: ``poll_queues``); ``queues``: all of them, in creation order
        self.irq_qps: dict[tuple[int, int], NvmeQueue] = {}
        self.poll_qps: dict[tuple[int, int], NvmeQueue] = {}
        self.queues: list[NvmeQueue] = []
        for dev in devices:
            for cpu in range(ncpu):
                qp = NvmeQueue(self, dev.add_queue_pair(polled=False, depth=host.queue.nr_requests), cpu)
                self.irq_qps[(dev.index, cpu)] = qp
                self.queues.append(qp)
                if poll_queues:
                    pq = NvmeQueue(self, dev.add_queue_pair(polled=True, depth=host.queue.nr_requests), cpu)
                    self.poll_qps[(dev.index, cpu)] = pq
                    self.queues.append(pq)
        self._reap_costs: dict[tuple[int, bool], Cost] = {}
        #: blk-mq (set by the host once it exists: :meth:`attach`) and the completion policies that
        #: keep statistics (the host adds them as it creates them)
        self._blk: BlkMq | None = None
        self.stat_policies: list[CompletionPolicy] = []
        self.completions_reaped_by_irq = 0
        self.cq_doorbells = 0  # CQ head doorbell writes by interrupt handlers

    def attach(self, blk: BlkMq) -> None:
        """The host's blk-mq, built after the driver, which completes every request."""
        self._blk = blk

    def queue_for(self, dev_index: int, cpu: int, hipri: bool) -> NvmeQueue:
        """The hardware queue a request from ``cpu`` goes to (a polled one for HIPRI when present)."""
        if hipri and self.poll_qps:
            return self.poll_qps[(dev_index, cpu)]
        return self.irq_qps[(dev_index, cpu)]

    def submit(self, req: Request) -> None:
        """Ring the SQ tail doorbell for ``req`` (its command is already in the SQ)."""
        req.t_dispatch = self.engine.now
        qp = req.qp
        assert qp is not None
        qp.device.submit(qp.hw, req)

    # ------------------------------------------------------------- completions
    def _reap_cost(self, n: int, irq: bool) -> Cost:
        key = (n, irq)
        cost = self._reap_costs.get(key)
        if cost is None:
            k = self._k
            parts = dict(driver=n * k.nvme_complete_cycles, block=n * k.blk_complete_cycles)
            if irq:
                parts["irq"] = k.irq_entry_cycles
            cost = self.host.costs.get("irq_reap" if irq else "poll_reap", **parts)
            self._reap_costs[key] = cost
        return cost

    def _complete(self, runner: CpuRunner, req: Request) -> None:
        """Complete ``req`` (blk_mq_complete_request -> bio end -> the submitter's completion:
        wake a blocked synchronous task, or the async engine's ``done_cb``), and the requests
        merged into it."""
        # blk-mq's completion: the tag freed, the elevator's completion hook, the completion
        # policies' statistics
        blk = self._blk
        assert blk is not None
        if blk.complete(req, runner) and blk.iosched_complete_cost is not None:
            qp = req.qp
            assert qp is not None
            self._runners[qp.cpu].add_carry(blk.iosched_complete_cost)
        for p in self.stat_policies:
            p.on_complete(req)
        self._finish(runner, req)
        merged = req.merged
        if merged:
            for child in merged:
                # the merged request was dispatched and serviced as part of its target
                child.t_dispatch, child.t_dev_start, child.t_dev_end, child.t_cqe = (
                    req.t_dispatch,
                    req.t_dev_start,
                    req.t_dev_end,
                    req.t_cqe,
                )
                child.device_service_ns = req.device_service_ns
                self._finish(runner, child)
                task = child.task
                if task is not None and child.done_cb is None and task.state != SLEEPING:
                    # completed with a request of maybe another CPU: a task polling its own queue
                    # for it notices at the end of its loop iteration
                    self._runners[task.cpu].spin_notify(child, at=runner.clock())

    def _finish(self, runner: CpuRunner, req: Request) -> None:
        req.done = True
        req.t_reaped = runner.clock()
        if req.parent is not None:  # a piece of a split IO: the IO completes with its last piece
            whole = self._piece_done(req)
            if whole is None:
                return
            req = whole
        cb = req.done_cb
        if cb is not None:
            cb(runner, req)
            return
        task = req.task
        if task is not None and task.state == SLEEPING and req.waiter_sleeping:
            req.waiter_sleeping = False
            runner.wake(task)

    @staticmethod
    def _piece_done(piece: Request) -> Request | None:
        """Count a finished piece; return its IO once every piece has finished (else None), with
        the IO's times taken from its pieces: the first dispatch and media start, the last media
        end, posting and reap, the sum of the media service times."""
        io = piece.parent
        assert io is not None
        io.splits_left -= 1
        if io.splits_left:
            return None
        ps = io.splits
        assert ps is not None
        io.t_dispatch = min(p.t_dispatch for p in ps)
        io.t_dev_start = min(p.t_dev_start for p in ps)
        io.t_dev_end = max(p.t_dev_end for p in ps)
        io.t_cqe = max(p.t_cqe for p in ps)
        io.t_reaped = max(p.t_reaped for p in ps)
        io.device_service_ns = sum(p.device_service_ns for p in ps)
        io.done = True
        for p in ps:  # the IO keeps its pieces; the pieces no longer need it (no reference cycle)
            p.parent = None
        return io

    def reap(self, runner: CpuRunner, qp: NvmeQueue):
        """nvme_poll / nvme_process_cq: reap every posted entry of ``qp``; its cost is carried
        into what the polling CPU runs next."""
        hw = qp.hw
        entries = hw.cq
        hw.cq = []
        cost = self._reap_cost(len(entries), irq=False)
        runner.add_carry(cost)  # reaping runs before the wake-ups it causes
        for req in entries:
            self._complete(runner, req)
        return None


class NvmeIrq(IrqWork):
    """nvme_irq on a queue's vector: reaps the entries present when the handler runs."""

    __slots__ = ("driver", "qp", "entries", "urgent_only")

    def __init__(self, driver: NvmeDriver, qp: NvmeQueue, urgent_only: bool = False):
        self.driver = driver
        self.qp = qp
        self.entries: list[Request] = []
        self.urgent_only = urgent_only
        self.kind = "nvme"

    def cost(self, runner) -> Cost:
        qp = self.qp.hw
        cq = qp.cq
        if self.urgent_only:
            # out-of-order Urgent (cinterrupts): reap only Urgent entries; the rest wait for an
            # interrupt of their own. The CQ head doorbell can only move over the contiguous reaped
            # range at the head: it is rung only if the oldest unreaped entry was reaped.
            entries = [r for r in cq if r.flags & URGENT]
            qp.cq = [r for r in cq if not r.flags & URGENT]
            if entries and cq[0] is entries[0]:
                self.driver.cq_doorbells += 1
        else:
            entries = cq
            qp.cq = []
            if entries:
                self.driver.cq_doorbells += 1
        self.entries = entries
        drv = self.driver
        n = len(entries)
        drv.completions_reaped_by_irq += n
        return drv._reap_costs.get((n, True)) or drv._reap_cost(n, True)

    def fire(self, runner) -> None:
        complete = self.driver._complete
        for req in self.entries:
            complete(runner, req)
