"""The host: wires CPU package, per-CPU runners, NVMe driver, blk-mq, devices and policies, in one
documented order (gem5-board style). Components reach each other through the host, never through
globals. The policies come in resolved (:class:`PolicySet`): the assembly (``scenarios.run.assembly``)
turns the configuration's names into classes through the registries in ``policies/``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

from models.cpu.core import Package
from models.cpu.cpufreq import CpufreqGovernor
from models.cpu.cpuidle import CpuidleGovernor
from models.os.block.blk_mq import BlkMq
from models.os.block.completion import CompletionPolicy, completion_params, completion_policy_name
from models.os.block.elevator import IoScheduler
from models.os.block.io_ledger import IoLedger
from models.os.block.queue import QueueConfig
from models.os.block.request import Request
from models.os.costs.bundle import Cost
from models.os.costs.tables import CostTable, KernelCosts
from models.os.drivers.nvme import NvmeDriver
from models.os.drivers.vfio import Vfio
from models.os.io_uring.sqpoll import SqThread
from models.os.mm.filemap import Filemap
from models.os.mm.pagecache import PageCache
from models.os.mm.writeback import Writeback
from models.os.sched.balance import LoadBalancer
from models.os.sched.runner import CpuRunner
from models.os.sched.task import Task
from models.platform import PlatformConfig
from models.ssd.device import NvmeDevice
from models.ssd.irq import IrqGeneration
from simcore.engine import Engine
from simcore.errors import ConfigError
from simcore.rng import RngStreams
from simcore.tracing import ChromeTracer


@dataclass(frozen=True)
class PolicySet:
    """The policy classes a host is built with (each is instantiated where its mechanism needs one:
    one cpuidle governor per CPU, one elevator per device, one interrupt generator per vector)."""

    cpufreq_governor: type[CpufreqGovernor]
    """``cpu.cpufreq_governor``: built once, before the CPU package."""
    cpuidle_governor: type[CpuidleGovernor]
    """``cpu.cpuidle_governor``: one per logical CPU."""
    io_scheduler: type[IoScheduler]
    """``queue.scheduler``: the elevator of each device."""
    irq_generation: type[IrqGeneration]
    """``nvme.irq``: the device-side interrupt generation of each interrupt-driven queue pair."""
    completion: Mapping[str, type[CompletionPolicy]]
    """completion policies by the names :func:`~models.os.block.completion.completion_policy_name` (and the
    IO engines) can ask for; instantiated on first use."""


class Host:
    """A Linux host: its CPU package with one scheduler runner per logical CPU, its SSDs with the
    NVMe driver and blk-mq above them, and the policies it was built with, wired in the order of
    ``__init__``. Every field is declared here; nothing else adds any (fio's run of its jobs is a
    :class:`models.ioengines.fio_run.FioRun` of its own, told of task exits through
    :attr:`on_task_exit`)."""

    platform: PlatformConfig
    """the machine's configuration (CPU, kernel costs, scheduler, SSDs, NVMe, power)"""
    queue: QueueConfig
    """the block queue's configuration (elevator, polled queues, completion)"""
    engine: Engine
    """the discrete-event engine every component schedules on (times in ns)"""
    rng: RngStreams
    """the run's named random streams (seeded by ``seed``)"""
    _completion_classes: Mapping[str, type[CompletionPolicy]]
    """the resolved completion policy classes by name (:meth:`policy` instantiates them)"""
    cpufreq: CpufreqGovernor
    """the cpufreq governor (one for the package)"""
    pkg: Package
    """the CPU package: cores, logical CPUs, frequency, power"""
    kcosts: KernelCosts
    """the kernel's cycle costs (``platform.kernel``)"""
    costs: CostTable
    """the cost bundles of kernel work (cycles and memory activity)"""
    timer_cost: Cost
    """an hrtimer interrupt: IRQ entry plus hrtimer_expire"""
    tick_cost: Cost
    """the scheduler tick: the timer interrupt plus update_process_times / scheduler_tick"""
    ipi_cost: Cost
    """a reschedule IPI on the receiving CPU (the waker already paid try_to_wake_up)"""
    runners: list[CpuRunner]
    """one runner (scheduler + executor) per logical CPU, by CPU id"""
    balancer: LoadBalancer
    """the scheduler-wide state: which tasks may move, migrations, domains, nohz balancing"""
    devices: list[NvmeDevice]
    """the SSDs, by index (``ssd{i}``)"""
    driver: NvmeDriver
    """the NVMe driver: queue pairs per CPU and device, interrupt handlers, polling"""
    blk: BlkMq
    """blk-mq: software and hardware queues, the elevator of each device, plugging, kblockd"""
    user_devices: Vfio
    """the devices bound to vfio-pci for a user-space driver (fio's SPDK engine), with their holders"""
    policies: dict[str, CompletionPolicy]
    """the completion policies instantiated so far, by name (:meth:`policy`)"""
    _stat_policies: list[CompletionPolicy]
    """the policies that keep statistics (the driver hands them completions)"""
    ledger: IoLedger
    """completed IOs: their count, the statistics sink, the kept records (see the properties)"""
    io_done: Callable[[Request], None]
    """an IO completed (``req.t_complete`` stamped by its engine): counted, handed to the run's
    statistics sink, kept when asked (the IO engines call it once per IO)"""
    all_tasks: list[Task]
    """every task created on the host (job threads, workers, kernel threads), in creation order"""
    sq_threads: list[SqThread]
    """the io_uring SQPOLL threads, one per SQPOLL ring, in creation order (:meth:`new_sq_thread`)"""
    filemap: Filemap | None
    """buffered IO's page cache and its paths (None: no job uses buffered IO; :meth:`enable_pagecache`)"""
    writeback: Writeback | None
    """dirty throttling and the flusher threads (None with :attr:`filemap`)"""
    on_task_exit: Callable[[float, Task], None] | None
    """told ``(t, task)`` when a job's task exits (:meth:`task_exited`): whoever runs the jobs
    registers here (``scenarios.run.assembly``: fio's run, :class:`models.ioengines.fio_run.FioRun`)"""

    def __init__(
        self,
        platform: PlatformConfig,
        queue: QueueConfig,
        seed: int,
        policies: PolicySet,
        tracer: ChromeTracer | None = None,
    ):
        self.platform = platform
        self.queue = queue
        self.engine = Engine(tracer)
        self.rng = RngStreams(seed)
        self._completion_classes = policies.completion
        # 1. the cpufreq governor (it picks the frequency the cores start at), CPU package, cost bundles
        self.cpufreq = policies.cpufreq_governor.from_config(self, platform.cpu.cpufreq)
        self.pkg = Package(platform.cpu, self.engine, self.cpufreq.initial_freq_ghz())
        self.kcosts = k = platform.kernel
        self.costs = CostTable(platform.cpu.activity, k)
        expire = {"hrtimer_expire": 1, "clockevent_program": 1}  # hrtimer_interrupt then programs the next expiry
        self.timer_cost = self.costs.get("timer_irq", irq=k.irq_entry_cycles, actions=expire)
        # the scheduler tick: the timer interrupt plus update_process_times / scheduler_tick
        self.tick_cost = self.costs.get("sched_tick", irq=k.irq_entry_cycles, actions={**expire, "sched_tick": 1})
        self.ipi_cost = self.costs.get("ipi", irq=k.ipi_cycles)  # the waker already paid try_to_wake_up
        # 2. one runner (scheduler + executor) per logical CPU
        idle_cls = policies.cpuidle_governor
        tick_period_ns = 1e9 / platform.sched.tick_hz
        self.balancer = LoadBalancer(self, platform.sched)
        self.runners = [
            CpuRunner(self, cpu, self._idle_governor(idle_cls, tick_period_ns), platform.sched, self.balancer)
            for cpu in self.pkg.cpus
        ]
        self.balancer.attach(self.runners, self.pkg)
        if platform.cpu.smt:  # each runner's speed follows its sibling's activity (continuous SMT contention)
            by_cpu = {r.cpu.id: r for r in self.runners}
            for core in self.pkg.cores:
                core.watch_smt([by_cpu[c.id] for c in core.cpus])
        hook = getattr(self.cpufreq, "on_enqueue", None)
        tick_hook = getattr(self.cpufreq, "on_tick", None)
        for r in self.runners:
            r.cpufreq_hook = hook
            r.cpufreq_tick_hook = tick_hook
        self.cpufreq.start()
        # 3. devices, driver queues, blk-mq
        self.devices = [
            NvmeDevice(
                platform.ssd, self.engine, self.rng.stream(f"ssd{i}.service"), i, platform.nvme, policies.irq_generation
            )
            for i in range(platform.ssd_count)
        ]
        self.driver = NvmeDriver(self, self.devices, poll_queues=queue.io_poll)
        self.blk = BlkMq(self, queue, policies.io_scheduler)
        self.driver.attach(self.blk)
        self.user_devices = Vfio(self.devices)
        for r in self.runners:  # the compiled hot path reads the driver here, not through the host
            r.driver = self.driver
        # 4. completion policies (instantiated on first use, shared by the queue's users; parameters checked now)
        self._check_completion_params(queue)
        self.policies = {}
        self._stat_policies = self.driver.stat_policies  # (the driver hands them completions)
        self.ledger = IoLedger()
        self.io_done = self.ledger.done
        self.all_tasks = []
        self.sq_threads = []
        self.on_task_exit = None
        self.filemap, self.writeback = None, None

    def _idle_governor(self, cls: type[CpuidleGovernor], tick_period_ns: float) -> CpuidleGovernor:
        """One logical CPU's cpuidle governor, following the platform's kernel release."""
        gov = cls(self.platform.cpu, tick_period_ns)
        gov.for_kernel(self.kcosts.release)
        return gov

    def enable_pagecache(self) -> None:
        """The page cache, its IO paths and one flusher thread per SSD, for buffered IO (a run
        without buffered IO has none: its tasks and events are unchanged)."""
        if self.filemap is None:
            cache = PageCache(self.platform.pagecache)
            self.filemap = Filemap(self, cache)
            self.writeback = Writeback(self, cache)

    @property
    def completed_ios(self) -> int:
        """IOs completed so far."""
        return self.ledger.count

    @property
    def next_io_id(self) -> int:
        """The id the next submitted IO gets: the number of IOs submitted so far."""
        return self.ledger.next_id

    @next_io_id.setter
    def next_io_id(self, value: int) -> None:
        self.ledger.next_id = value

    @property
    def io_sink(self) -> Callable[[Request], None] | None:
        """Called with each completed IO, or None (``scenarios.studies.trace_compare`` pairs them with the
        trace; the run statistics take them in blocks instead: ``IoLedger.collect_blocks``)."""
        return self.ledger.sink

    @io_sink.setter
    def io_sink(self, sink: Callable[[Request], None] | None) -> None:
        self.ledger.sink = sink

    @property
    def records(self) -> list[Request] | None:
        """Every completed IO (Request), only when asked (:meth:`keep_requests`: tests,
        debugging); a run's statistics take completed IOs in blocks (``IoLedger.collect_blocks``)."""
        return self.ledger.records

    def keep_requests(self) -> None:
        """Keep every completed request in ``records`` from now on (memory grows with the run)."""
        if self.ledger.records is None:
            self.ledger.records = []

    def task_exited(self, t: float, task: Task) -> None:
        """The scheduler's exit hook: a job's task (``task.job >= 0``) exited at ``t`` (ns); tells
        :attr:`on_task_exit`."""
        if self.on_task_exit is not None:
            self.on_task_exit(t, task)

    def _check_completion_params(self, queue: QueueConfig) -> None:
        """``queue.completion_params`` belong to the policy ``queue.completion`` names: validated
        by its ``Params`` (ConfigError naming the field); with ``auto`` they have no policy."""
        if queue.completion == "auto":
            if queue.completion_params:
                raise ConfigError(
                    "queue.completion_params: parameters of the completion policy queue.completion names;"
                    " with queue.completion=auto (the Linux rules) no policy takes any"
                )
            return
        cls = self._completion_classes.get(queue.completion)
        if cls is not None:
            completion_params(cls, queue)

    def policy(self, name: str) -> CompletionPolicy:
        p = self.policies.get(name)
        if p is None:
            cls = self._completion_classes.get(name)
            if cls is None:
                known = ", ".join(sorted(self._completion_classes))
                raise ConfigError(f"completion policy '{name}' was not resolved for this host (resolved: {known})")
            if cls.polled and not self.queue.io_poll:
                raise ConfigError(
                    f"completion policy '{name}' polls, but the queue has no polled queues: set queue.io_poll=1"
                )
            p = self.policies[name] = cls(self, self.queue)
            if type(p).on_complete is not CompletionPolicy.on_complete:
                self._stat_policies.append(p)  # only policies that keep statistics see completions
        return p

    def new_sq_thread(self, cpu: int | None) -> SqThread:
        """The SQPOLL thread of a new io_uring ring (each ring has its own: io_sq_offload_create),
        bound to ``cpu`` (IORING_SETUP_SQ_AFF) or, with None, unbound: placed by the scheduler when
        it starts (models.os.io_uring.sqpoll)."""
        if cpu is not None and cpu >= len(self.runners):
            raise ConfigError(f"sqthread_poll_cpu={cpu}: the platform has {len(self.runners)} CPUs")
        th = SqThread(self, cpu)
        self.sq_threads.append(th)
        return th

    def policy_name(self, hipri: bool, reaps_itself: bool = False) -> str:
        return completion_policy_name(self.queue, hipri, reaps_itself)

    def charge_running(self, now: float) -> None:
        """Charge the exec time of the tasks on a CPU up to ``now`` (ns), so that task counters
        read at ``now`` include it (a task's time is otherwise charged when it leaves the CPU)."""
        for r in self.runners:
            if r.current is not None:
                r.charge_runtime(r.current, now)

    def start(self) -> None:
        """Put CPUs without tasks into idle at t=0 (after jobs placed their tasks)."""
        for r in self.runners:
            if r.unused:
                self.engine.call_in(0.0, r.start_idle)
