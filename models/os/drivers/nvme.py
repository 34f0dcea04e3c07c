"""The NVMe host driver: the IO queue pairs of each device spread over the CPUs as Linux maps them
(one per CPU when the controller offers enough, otherwise each shared by a group of CPUs of one
NUMA node: :mod:`models.os.block.queue_map`), plus poll queues when polling is enabled, SQ doorbell,
interrupt handler and the poll function (drivers/nvme/host/pci.c).

On a machine of several sockets each device hangs off one node's PCIe root
(``PlatformConfig.ssd_nodes``): its SQs and CQs live in that node's memory (``dma_alloc_coherent``
allocates on the device's node), so a CPU of another node writing an SQ entry or reading CQ entries
reaches remote memory (``CpuConfig.remote_memory_extra_ns`` per cache line); a completion handled
on another socket than the submitter's pulls the request's cache lines across
(``KernelCosts.nvme_completion_lines`` x ``CpuConfig.cross_socket_line_transfer_cycles``); and data
DMA-ed to a buffer on another node than the device's crosses the interconnect, which delays the
completion entry (posted after the data) by ``remote_memory_extra_ns``. Same-socket transfers are
part of the calibrated per-IO costs and are not charged again.

Interrupt-driven queues have an MSI-X vector bound to their CPU; polled queues (created when the
queue's ``io_poll`` is on, as ``nvme.poll_queues`` does) have none, and their completions are found
only by blk_poll. The driver's side of each queue pair is an :class:`NvmeQueue` (``struct
nvme_queue``): the kernel passes it around (``Request.qp``, blk-mq's hardware contexts, polling);
the device's side is its :class:`~models.ssd.device.QueuePair`, which calls the driver back through
the callbacks the driver registers on it (``on_irq``: the vector fired; ``on_post``: an entry was
posted on a polled queue).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, cast

from models.os.block.blk_mq import BlkMq, BlkMqOps
from models.os.block.queue_map import VectorMatrix, group_cpus_evenly, queue_counts
from models.os.block.request import Request
from models.os.costs.bundle import Cost
from models.os.drivers.host import DriverHost
from models.os.interfaces import QueueView
from models.os.kernel_version import has
from models.os.sched.runner import CpuRunner, IrqWork
from models.os.sched.task import SLEEPING, WAKING, Task
from models.ssd.command import NvmeCommand, copy_device_record
from models.ssd.device import NvmeDevice, QueuePair
from models.ssd.irq_generation import URGENT
from simcore.engine import Engine
from simcore.errors import ConfigError

if TYPE_CHECKING:
    from models.os.block.completion import CompletionPolicy

#: requests whose tags blk_mq_flush_tag_batch frees with one sbitmap operation (block/blk-mq.c)
TAG_COMP_BATCH: Final = 32


class NvmeQueue(QueueView):
    """The driver's side of one NVMe queue pair (``struct nvme_queue``): the device's pair
    (``hw``: its SQ and CQ), the CPU it serves (blk-mq maps each CPU to its own hardware queues;
    an interrupt-driven pair's vector is bound to that CPU), the runners of other CPUs polling it
    now, and its interrupt handler object. Its ``device``, ``qid`` and ``depth`` are the pair's."""

    __slots__ = ("sq_lock", "driver", "runners", "irq_work")

    def __init__(self, driver: NvmeDriver, hw: QueuePair, cpu: int, cpus: tuple[int, ...] = ()):
        super().__init__(hw, cpu, cpus)  # the queue view (models.os.interfaces)
        #: the hook for ``nvmeq->sq_lock``: the spinlock model attaches its lock here for a shared
        #: queue (None: not modelled, a submission never waits for it)
        self.sq_lock: object | None = None
        self.driver = driver
        self.runners: list[CpuRunner] = driver._runners  # every CPU's runner (the host's list)
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
            elif work.pending:
                # the vector is already pending on its CPU (the local APIC's IRR holds one bit per
                # vector): this message merges into it, and its handler will reap this entry too
                return
            work.pending = True
        self.runners[self.cpu].raise_irq(work)

    def cqe_posted(self, hw: QueuePair, req: NvmeCommand) -> None:
        """The device posted an entry on this polled queue: its CPU's poller, and any other CPU's
        polling it, notice."""
        self.runners[self.cpu].cqe_posted(self)
        if self.remote_pollers:  # a task that moved polls its requests on its old CPU's queue
            for r in self.remote_pollers:
                cast(CpuRunner, r).cqe_posted(self)


class NvmeDriver(BlkMqOps):
    """Maps CPUs to queue pairs and handles submissions and completions for one host."""

    def __init__(self, host: DriverHost, devices: list[NvmeDevice], poll_queues: bool):
        self.host = host
        self.engine: Engine = host.engine
        self._runners: list[CpuRunner] = host.runners
        self.devices = devices
        k = host.kcosts
        self._k = k
        #: the driver's queues by (device index, CPU): interrupt-driven, and polled ones (with
        #: ``poll_queues``), a shared queue under each of its CPUs; ``queues``: every queue once,
        #: in creation order
        self.irq_qps: dict[tuple[int, int], NvmeQueue] = {}
        self.poll_qps: dict[tuple[int, int], NvmeQueue] = {}
        self.queues: list[NvmeQueue] = []
        matrix = VectorMatrix(len(host.runners))
        for dev in devices:
            self._map_device(dev, poll_queues, matrix)
        # the same as tables [device index][CPU] (queue_for, per IO: no tuple key built and hashed)
        ndev = max((d.index for d in devices), default=-1) + 1
        ncpu = len(host.runners)
        self._irq_table = [[self.irq_qps.get((d, c)) for c in range(ncpu)] for d in range(ndev)]
        self._poll_table = [[self.poll_qps.get((d, c)) for c in range(ncpu)] for d in range(ndev)]
        # the reaping bundle of n entries, by n, from an interrupt and from a poll (made at first use)
        self._reap_irq: list[Cost | None] = []
        self._reap_poll: list[Cost | None] = []
        # the same on several sockets: by n x 2 + irq, then by (cq_lines, req_lines) packed in one int
        self._numa_reap_costs: list[dict[int, Cost]] = []
        self._numa_setup(host)
        #: blk-mq (set by the host once it exists: :meth:`attach`) and the completion policies that
        #: keep statistics (the host adds them as it creates them)
        self._blk: BlkMq | None = None
        self.stat_policies: list[CompletionPolicy] = []
        self.completions_reaped_by_irq = 0
        self.cq_doorbells = 0  # CQ head doorbell writes by interrupt handlers
        #: batched request completion (io_comp_batch -> blk_mq_end_request_batch): the kernel has it
        #: (5.16) and no IO scheduler is attached (blk_mq_add_to_batch refuses RQF_SCHED_TAGS); set
        #: by :meth:`attach`
        self.batch_complete = False

    def _map_device(self, dev: NvmeDevice, poll_queues: bool, matrix: VectorMatrix) -> None:
        """Create ``dev``'s queues and map the CPUs to them (nvme_setup_io_queues,
        blk_mq_pci_map_queues, blk_mq_map_queues: :mod:`models.os.block.queue_map`)."""
        cfg = self.host.pkg.cfg
        ncpu = cfg.logical_cpus
        nirq, npoll = queue_counts(ncpu, ncpu if poll_queues else 0, dev.cfg.max_queue_pairs)
        if poll_queues and npoll == 0:
            raise ConfigError(
                f"queue.io_poll=1: ssd.max_queue_pairs={dev.cfg.max_queue_pairs} ({dev.cfg.model}) leaves no poll "
                "queue (the driver keeps one interrupt-driven queue and gives poll queues the rest)"
            )
        nodes = [cfg.node_cpus(n) for n in range(cfg.sockets)]
        sib = [c.core.cpus[1 - c.core.cpus.index(c)].id if len(c.core.cpus) > 1 else c.id for c in self.host.pkg.cpus]
        depth = self.host.queue.nr_requests
        for mask in group_cpus_evenly(nirq, nodes, sib):
            qp = NvmeQueue(self, dev.add_queue_pair(polled=False, depth=depth), matrix.assign(mask), mask)
            self.queues.append(qp)
            for cpu in mask:
                self.irq_qps[(dev.index, cpu)] = qp
        if npoll:
            for mask in group_cpus_evenly(npoll, nodes, sib):
                pq = NvmeQueue(self, dev.add_queue_pair(polled=True, depth=depth), mask[0], mask)
                self.queues.append(pq)
                for cpu in mask:
                    self.poll_qps[(dev.index, cpu)] = pq

    def _numa_setup(self, host: DriverHost) -> None:
        """The per-line costs of crossing sockets, in cycles at the top frequency (a remote DRAM
        line: ``remote_memory_extra_ns``), and each device's node; nothing is charged on one socket."""
        cfg = host.pkg.cfg
        #: more than one socket: the cross-node charges apply
        self.numa = cfg.sockets > 1
        self.node_of: list[int] = host.pkg.node_of
        self.dev_node: list[int] = [host.platform.ssd_node(d.index) for d in self.devices]
        self.remote_line_cycles = cfg.remote_memory_extra_ns * cfg.top_freq_ghz
        self.cross_line_cycles = cfg.cross_socket_line_transfer_cycles
        self.dma_extra_ns = cfg.remote_memory_extra_ns
        #: the memory policy of each job's IO buffers by job index, (mode, nodes) with mode
        #: ``prefer``, ``bind`` or ``interleave`` (fio's numa_mem_policy); a job not here has
        #: local memory (first touch: the node of the CPU that submits)
        self.mem_policy: dict[int, tuple[str, tuple[int, ...]]] = {}
        self._sq_costs: dict[float, Cost] = {}

    def attach(self, blk: BlkMq) -> None:
        """The host's blk-mq, built after the driver, which completes every request."""
        self._blk = blk
        self.batch_complete = has(self._k.release, "io_comp_batch") and not blk.elevator_attached

    def queue_for(self, dev_index: int, cpu: int, hipri: bool) -> NvmeQueue:
        """The hardware queue a request from ``cpu`` goes to (a polled one for HIPRI when present)."""
        qp = self._poll_table[dev_index][cpu] if hipri and self.poll_qps else self._irq_table[dev_index][cpu]
        if qp is None:
            raise KeyError((dev_index, cpu))  # (no queue maps this CPU: as the dicts would say)
        return qp

    def submit(self, req: Request) -> None:
        """Ring the SQ tail doorbell for ``req`` (its command is already in the SQ). A shared queue
        (``qp.shared``) is where nvme_queue_rq takes ``nvmeq->sq_lock`` (``qp.sq_lock``)."""
        req.t_dispatch = self.engine.now
        qp = req.qp
        assert qp is not None
        if self.numa:
            qp.device.submit(qp.hw, req, self._numa_submit(req, cast(NvmeQueue, qp)))
        else:
            qp.device.submit(qp.hw, req)

    def _numa_submit(self, req: Request, qp: NvmeQueue) -> float:
        """Cross-node costs of a submission: the SQ entry written into the device node's memory by a
        CPU of another node (one remote line, carried into the submitter's next work); returns the
        delay the data's DMA adds when the buffer is on another node than the device."""
        dnode = self.dev_node[qp.device.index]
        cpu = req.cpu
        if self.node_of[cpu] != dnode:
            cost = self._sq_costs.get(self.remote_line_cycles)
            if cost is None:
                cost = self._sq_costs[self.remote_line_cycles] = self.host.costs.get(
                    "numa_sq_remote", driver=self.remote_line_cycles
                )
            self._runners[cpu].add_carry(cost)
        return self.dma_extra_ns if self._buffer_node(req) != dnode else 0.0

    def _buffer_node(self, req: Request) -> int:
        """The node of ``req``'s buffer: local to its submitter; ``prefer``: that node; ``bind``: the
        submitter's node when it is in the set, else the set's first (MPOL_BIND allocates from the
        nearest allowed node); ``interleave``: the pages rotate over the nodes (by IO)."""
        local = self.node_of[req.cpu]
        pol = self.mem_policy.get(req.job)
        if pol is None:
            return local
        mode, nodes = pol
        if mode == "interleave":
            return nodes[req.id % len(nodes)]
        if mode == "bind" and local in nodes:
            return local
        return nodes[0]

    # ------------------------------------------------------------- completions
    def _reap_cost(self, n: int, irq: bool) -> Cost:
        table = self._reap_irq if irq else self._reap_poll
        if n >= len(table):
            table.extend([None] * (n + 1 - len(table)))
        cost = table[n]
        if cost is None:
            cost = table[n] = self._make_reap_cost(n, irq, 0, 0)
        return cost

    def _numa_reap_cost(self, n: int, irq: bool, cq_lines: int, req_lines: int) -> Cost:
        """:meth:`_reap_cost` on several sockets: ``cq_lines`` CQ lines read from another node's
        memory and ``req_lines`` request lines pulled from another socket."""
        i = 2 * n + (1 if irq else 0)
        tables = self._numa_reap_costs
        if i >= len(tables):
            tables.extend([{} for _ in range(i + 1 - len(tables))])
        table = tables[i]
        key = cq_lines << 31 | req_lines  # (a machine integer: both are below 2**31)
        cost = table.get(key)
        if cost is None:
            cost = table[key] = self._make_reap_cost(n, irq, cq_lines, req_lines)
        return cost

    def _make_reap_cost(self, n: int, irq: bool, cq_lines: int, req_lines: int) -> Cost:
        k = self._k
        # nvme_poll_cq reaps every entry, then one CQ head doorbell (nvme_ring_cq_doorbell)
        driver = n * (k.nvme_complete_cycles - k.nvme_cq_doorbell_cycles) + (k.nvme_cq_doorbell_cycles if n else 0)
        block = n * k.blk_complete_cycles
        if self.batch_complete and n > 1:
            # blk_mq_end_request_batch: one clock read, tags freed TAG_COMP_BATCH (32) at a time
            block -= (n - -(-n // TAG_COMP_BATCH)) * k.blk_complete_batch_cycles
        parts = dict(
            driver=driver + cq_lines * self.remote_line_cycles,
            block=block + req_lines * self.cross_line_cycles,
        )
        if irq:
            parts["irq"] = k.irq_entry_cycles
        return self.host.costs.get("irq_reap" if irq else "poll_reap", actions=None, user_space=False, **parts)

    def _cross_lines(self, runner: CpuRunner, qp: NvmeQueue, entries: list[Request]) -> tuple[int, int]:
        """(CQ lines read from the device node's memory by a CPU of another node: 16-byte entries,
        four a line; request lines pulled from another socket: ``nvme_completion_lines`` per entry
        submitted on another node than the reaping CPU's)."""
        node = self.node_of[runner.id]
        cq = (len(entries) + 3) // 4 if node != self.dev_node[qp.device.index] else 0
        node_of = self.node_of
        crossed = 0
        for r in entries:
            if node_of[r.cpu] != node:
                crossed += 1
        return cq, crossed * self._k.nvme_completion_lines

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
                copy_device_record(child, req)
                child.status = req.status
                self._finish(runner, child)
                task = child.task
                if task is not None and child.done_cb is None and task.state != SLEEPING and task.state != WAKING:
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
        task: Task | None = req.task  # (typed: the task's fields read natively)
        if task is None:
            return
        if task.state == SLEEPING and req.waiter_sleeping:
            req.waiter_sleeping = False
            runner.wake(task)
        elif task.cpu != runner.id:
            # completed on another CPU than the one its task runs on (an interrupt on the queue's
            # CPU, or another CPU's poller reaping the queue): a task polling for it there, as
            # runner.poll_for on an interrupt-driven queue after the task moved, notices at the end
            # of its loop iteration, as it sees the request's completion in memory
            self._runners[task.cpu].spin_notify(req, at=runner.clock())

    @staticmethod
    def _piece_done(piece: Request) -> Request | None:
        """Count a finished piece; return its IO once every piece has finished (else None), with
        the IO's times taken from its pieces: the first dispatch and media start, the last media
        end, posting and reap, the sum of the media service times."""
        io = piece.parent
        assert io is not None
        if piece.status:
            io.status = piece.status  # a failed piece fails its IO
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
        copy_device_record(io, max(ps, key=lambda p: p.t_cqe))  # (the piece it completed with)
        io.done = True
        for p in ps:  # the IO keeps its pieces; the pieces no longer need it (no reference cycle)
            p.parent = None
        return io

    def reap(self, runner: CpuRunner, qp: NvmeQueue) -> None:
        """nvme_poll / nvme_process_cq: reap every posted entry of ``qp``; its cost is carried
        into what the polling CPU runs next."""
        hw = qp.hw
        entries = hw.cq
        hw.cq = []
        if self.numa:
            cq_lines, req_lines = self._cross_lines(runner, qp, entries)
            cost = self._numa_reap_cost(len(entries), False, cq_lines, req_lines)
        else:
            cost = self._reap_cost(len(entries), irq=False)
        runner.add_carry(cost)  # reaping runs before the wake-ups it causes
        for req in entries:
            self._complete(runner, req)
        return None


class NvmeIrq(IrqWork):
    """nvme_irq on a queue's vector: reaps the entries present when the handler runs."""

    __slots__ = ("driver", "qp", "entries", "urgent_only", "pending")

    def __init__(self, driver: NvmeDriver, qp: NvmeQueue, urgent_only: bool = False):
        self.driver = driver
        self.qp = qp
        self.entries: list[Request] = []
        self.urgent_only = urgent_only
        self.pending = False  # raised on its CPU, its handler not started yet
        self.kind = "nvme"

    def cost(self, runner) -> Cost:
        self.pending = False  # the handler starts: a new message raises the vector again
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
        if drv.numa:
            cq_lines, req_lines = drv._cross_lines(runner, self.qp, entries)
            return drv._numa_reap_cost(n, True, cq_lines, req_lines)
        return drv._reap_cost(n, True)

    def fire(self, runner) -> None:
        driver = self.driver  # (a direct call each, not a bound method)
        for req in self.entries:
            driver._complete(runner, req)
