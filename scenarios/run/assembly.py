"""Assembly of a system from its configuration: a host with fio's run of its job threads (:func:`build_run`), a
storage server with its client (:func:`build_server`). The configuration's policy names become
classes (through the registries in ``policies/``, after any ``--plugin`` module has registered its
own) and are handed to the models.

The models never look a name up themselves; an unknown name is a ConfigError here, before anything
is built.
"""

from __future__ import annotations

from models.host import Host, PolicySet
from models.ioengines import (
    ASYNC_BUFFERED_ENGINES,
    BUFFERED_ENGINES,
    FS_META_ENGINES,
    MAPPED_ENGINES,
    MODELLED_ENGINES,
    SYNC_ENGINES,
    select_policy_name,
)
from models.ioengines.async_io import AsyncThread
from models.ioengines.buffered_io import BufferedThread
from models.ioengines.buffered_uring import BufferedUringThread
from models.ioengines.cpuio import CpuioThread
from models.ioengines.fdp import FdpPlacement
from models.ioengines.files import FileService, thread_files
from models.ioengines.fio_run import FioRun
from models.ioengines.flow import Flow, FlowMember
from models.ioengines.fsmeta import FsMetaThread
from models.ioengines.job_control import waits_of
from models.ioengines.mmap_io import MmapThread
from models.ioengines.null_io import NullThread
from models.ioengines.offload import OffloadThread
from models.ioengines.pi import PiPlan
from models.ioengines.spdk import SpdkThread, map_devices, parse_transport_id
from models.ioengines.steadystate import SteadyState
from models.ioengines.sync_io import SyncThread
from models.ioengines.verify import VerifyAsyncThread, VerifyBufferedThread, VerifySyncThread
from models.ioengines.write_mode import WriteModes
from models.ioengines.zbd import Strided, ZbdFile, ZbdJob
from models.os.block.queue import QueueConfig
from models.os.block.zoned import report_zones
from models.os.fs.filesystem import FileLayout
from models.platform import PlatformConfig
from models.server.target import Server
from models.ssd.namespaces import extent_of
from policies.completion import COMPLETION_POLICIES
from policies.core_scheduling import CORE_SCHEDULING
from policies.cpu_idle import CPUIDLE_GOVERNORS
from policies.cpu_power import CPUFREQ_GOVERNORS
from policies.interrupt_generation import IRQ_GENERATION
from policies.io_scheduler import IO_SCHEDULERS
from scenarios.config.server_workloads import TraceFeed, arrival_batches
from scenarios.run.iosched_switch import check_scheduled_devices, switched_queue
from simcore.errors import ConfigError
from simcore.plugins import load_plugin
from simcore.rng import RngStreams

#: one engine of each kind the completion rule distinguishes (synchronous; libaio; io_uring)
_RULE_ENGINES = ("pvsync2", "libaio", "io_uring")


def resolve_policies(platform: PlatformConfig, queue: QueueConfig) -> PolicySet:
    """The policy classes named by ``platform`` (``cpu.cpufreq_governor``, ``cpu.cpuidle_governor``,
    ``nvme.irq``) and ``queue`` (``scheduler``, the completion rule)."""
    names = {select_policy_name(queue, hipri, engine) for hipri in (False, True) for engine in _RULE_ENGINES}
    return PolicySet(
        cpufreq_governor=CPUFREQ_GOVERNORS.get(platform.cpu.cpufreq_governor),
        cpuidle_governor=CPUIDLE_GOVERNORS.get(platform.cpu.cpuidle_governor),
        io_scheduler=IO_SCHEDULERS.get(queue.scheduler),
        irq_generation=IRQ_GENERATION.get(platform.nvme.irq),
        completion={name: COMPLETION_POLICIES.get(name) for name in sorted(names)},
    )


def build_host(
    platform: PlatformConfig, queue: QueueConfig, seed: int, tracer=None, *, keep_requests: bool = False
) -> Host:
    """A :class:`Host` with the policies its configuration names; ``keep_requests``: keep every
    completed request in ``host.records`` (tests, debugging: memory grows with the run)."""
    host = Host(platform, queue, seed, resolve_policies(platform, queue), tracer)
    if keep_requests:
        host.keep_requests()
    return host


def place_thread(job, allowed: list[int], thread_index: int, placed: dict[int, int], core_of: list) -> int:
    """The CPU a fio thread starts on (``thread_index``: fio's thread_number - 1, over all jobs);
    unless pinned, the scheduler may move it later (models.os.sched.placement):

    * no ``cpus_allowed``/``cpumask``: round-robin over all CPUs (stacksim's placement);
    * ``cpus_allowed_policy=split``: fio's fio_cpus_split -- the (thread_number - 1) mod n-th CPU of
      the set, one CPU per thread, round-robin when there are more threads than CPUs;
    * ``shared`` (fio's default): fio sets the whole set as the affinity and the kernel places the
      new task; modelled as its fork balancing (select_task_rq_fair -> find_idlest_group /
      find_idlest_group_cpu): the physical core of the set with the fewest fio threads, then its
      CPU with the fewest, the lowest number on a tie.
    """
    if job.cpus_allowed and job.cpus_allowed_policy == "shared":
        core_load: dict = {}
        for c, n in placed.items():
            core_load[core_of[c]] = core_load.get(core_of[c], 0) + n
        return min(allowed, key=lambda c: (core_load.get(core_of[c], 0), placed.get(c, 0), c))
    return allowed[thread_index % len(allowed)]


def _window(jobs) -> tuple[float, float]:
    """The run's measured window: from the latest end of the ramp (``startdelay`` + ``ramp_time``:
    fio starts a job's threads after its startdelay and ramps from there) of the jobs that start at
    once to the latest end a job can have (jobs that wait start when what they wait for may have
    ended; a size-bounded job gets 10 s of simulated time at most). (A startdelay range: its lower
    end, the earliest a thread of the job starts.)"""
    waits = waits_of(jobs)
    ramp = max(j.startdelay_ns + j.ramp_time_ns for j, w in zip(jobs, waits) if not w)
    if not any(waits):
        end = max(_start_max(j) + j.ramp_time_ns + (j.runtime_ns or 0) for j in jobs)
        return ramp, (ramp + 10e9 if end <= ramp else end)  # size-bounded jobs: at most 10 s
    bound: list[float] = []  # the latest a job can end: its runtime (at most 10 s) after the latest start
    for j, w in zip(jobs, waits):  # plus 1 s for its last IOs (the run ends when the last thread exits)
        bound.append(
            max((bound[k] for k in w), default=0.0) + _start_max(j) + j.ramp_time_ns + (j.runtime_ns or 10e9) + 1e9
        )
    return ramp, max(bound)


def _start_max(job) -> int:
    """The latest start of a job's threads (fio's startdelay, or the top of its range)."""
    return job.startdelay_ns if job.startdelay_max_ns is None else job.startdelay_max_ns


def _start_delay(job, gen) -> float:
    """fio's startdelay: the value, or a uniform draw in the range for each thread."""
    if job.startdelay_max_ns is None:
        return float(job.startdelay_ns)
    return float(job.startdelay_ns + int(gen.integers(0, job.startdelay_max_ns - job.startdelay_ns + 1)))


def _mem_policies(jobs) -> dict:
    """fio's ``numa_mem_policy`` of the jobs that set one, by job index (the driver's ``mem_policy``)."""
    return {ji: j.numa_mem_policy for ji, j in enumerate(jobs) if j.numa_mem_policy is not None}


def build_run(cfg, tracer=None, *, keep_requests: bool = False) -> tuple[Host, FioRun, float, float]:
    """The host of a :class:`scenarios.config.host.RunConfig` with its job threads placed and started
    (plug-ins loaded first); returns (host, fio, ramp_ns, end_ns): ``fio`` is fio's run of the job
    threads (job control, steady-state checks, registered for the host's task exits); the measured
    window starts at the latest ``ramp_time``, ends with the longest job (size-bounded: 10 s after the ramp)."""
    for p in cfg.plugins:
        load_plugin(p)
    host = build_host(cfg.platform, switched_queue(cfg.queue, cfg.jobs), cfg.seed, tracer, keep_requests=keep_requests)
    ncpu = len(host.runners)
    ramp, end = _window(cfg.jobs)
    rr = 0
    placed: dict[int, int] = {}  # fio threads per CPU so far
    core_of = [id(cpu.core) for cpu in host.pkg.cpus]  # logical CPU -> its physical core
    threads: list = []
    files = _thread_files(cfg, host)
    host.driver.mem_policy.update(_mem_policies(cfg.jobs))  # where each job's IO buffers are (the DMA's node)
    spdk_devs = map_devices(cfg.jobs, len(host.devices))  # SPDK's controllers: PCI address -> SSD
    flows: dict = {}  # fio's flow_id -> the flow its jobs share
    for ji, job in enumerate(cfg.jobs):
        if job.ioengine not in MODELLED_ENGINES:
            raise ConfigError(
                f"job '{job.name}': ioengine={job.ioengine} is not modelled (modelled: {', '.join(MODELLED_ENGINES)})"
            )
        thread_cls = _thread_class(job)
        allowed = list(job.cpus_allowed) if job.cpus_allowed else list(range(ncpu))
        for clone in range(job.numjobs):
            cpu = place_thread(job, allowed, rr, placed, core_of)
            placed[cpu] = placed.get(cpu, 0) + 1
            rr += 1
            delay = _start_delay(job, host.rng.stream(f"job{ji}.{clone}.startdelay"))
            th = thread_cls(host, job, ji, clone, cpu, end, host.rng.stream(f"job{ji}.{clone}"))
            th.start_delay_ns = delay
            if (ji, clone) in files:
                regions, service = files[(ji, clone)]
                th.use_files(regions, service, clone)
            if isinstance(th, SpdkThread):
                _open_spdk_devices(th, job, ji, clone, spdk_devs, host)
            if job.io_submit_mode == "offload":
                rr = _offload_workers(th, job, allowed, cpu, rr, placed, core_of, cfg.platform.sched.placement == "cfs")
            if job.flow:
                th.use_flow(FlowMember(flows.setdefault(job.flow_id, Flow()), job.flow, job.flow_sleep_ns))
            if cfg.platform.sched.placement == "cfs" and not (job.cpus_allowed and job.cpus_allowed_policy == "split"):
                th.allow_cpus(allowed)  # fio pins only with cpus_allowed_policy=split: the kernel places it
            threads.append(th)
    _zones_and_placement(threads, host)
    steady = _steady_state_checks(cfg, host, threads)

    def start_thread(th, now: float) -> None:
        """fio starts a thread: its startdelay, ramp_time and runtime count from ``now``."""
        job = th.job
        th.end_ns = now + th.start_delay_ns + job.ramp_time_ns + job.runtime_ns if job.runtime_ns else end
        if th.start_delay_ns:
            host.engine.call_in(th.start_delay_ns, th.start)
        else:
            th.start()

    _check_bound_devices(threads, host)
    check_scheduled_devices(threads, cfg.jobs, cfg.queue, host.queue)  # (fio's ioscheduler switch)
    fio = FioRun(host.engine, cfg.jobs, threads, steady, start_thread)
    host.on_task_exit = fio.task_exited  # each job's end (its runtime in the JSON), waits, exitall
    fio.start()
    for sq in host.sq_threads:
        sq.start()
    host.start()
    return host, fio, float(ramp), float(end)


def _zones_and_placement(threads: list, host: Host) -> None:
    """fio's zonemode and fdp of the job threads: zbd jobs on one device share fio's view of its
    zones (read from the device's zone report when fio opens it, models.os.block.zoned); strided jobs get
    their windows; fdp jobs their placement handles (the job's fdp_pli, else all the device's)."""
    files: dict[int, ZbdFile] = {}
    for th in threads:
        job = th.job
        if job.zonemode == "zbd":
            report = report_zones(host, th.dev)
            if report is None:
                raise ConfigError(f"job '{job.name}': zonemode=zbd needs a zoned device; SSD {th.dev} is not one")
            info = files.get(th.dev)
            if info is None:
                info = files[th.dev] = ZbdFile(report, job.max_open_zones)
            min_bs = min(job.bs_read_bytes, job.bs_write_bytes)
            th.use_zones(zbd=ZbdJob(info, job, th.offsets.base_offset, th.offsets.span, th.offsets.random, min_bs))
        elif job.zonemode == "strided":
            th.use_zones(strided=Strided(job, th.offsets.base_offset, th.offsets.span))
        if job.fdp:
            handles = job.fdp_pli or tuple(range(host.devices[th.dev].cfg.ftl.placement_handles))
            th.use_fdp(FdpPlacement(handles, job.fdp_pli_select, host.rng.stream(f"job{th.job_idx}.{th.task.tid}.fdp")))
        if job.write_mode and job.ioengine == "io_uring_cmd":
            th.use_write_mode(WriteModes(job.write_mode, host.rng.stream(f"job{th.job_idx}.{th.task.tid}.wmode")))
        ns = host.devices[th.dev].cfg.namespace
        if ns.metadata_bytes and job.ioengine == "io_uring_cmd":
            th.use_pi(_pi_plan(job, ns, host.kcosts))


def _pi_plan(job, ns, k) -> PiPlan:
    """fio's io_uring_cmd on a namespace with metadata: the metadata and protection information
    of its commands and fio's work on the tuples (models.ioengines.pi)."""
    return PiPlan(
        lba_bytes=ns.lba_data_bytes,
        metadata_bytes=ns.metadata_bytes,
        extended=ns.extended_lba,
        pi_type=ns.pi_type,
        tuple_bytes=ns.pi_tuple_bytes,
        pi_act=job.pi_act,
        checks=job.pi_chk,
        crc_cycles_per_byte=k.pi_crc16_cycles_per_byte if ns.pi_guard_bits == 16 else k.pi_crc64_cycles_per_byte,
        tuple_cycles=k.pi_tuple_cycles,
    )


def _thread_class(job) -> type:
    """The class of a job's fio threads: its engine's (and io_submit_mode's); buffered IO's for a
    buffered job (libaio's buffered IO runs inside io_submit: synchronous); with fio's verify when
    the job has it (the parser admits verify on the inline kernel engines, buffered on the
    synchronous ones and libaio)."""
    verify = job.verify != "none"
    if job.ioengine in MAPPED_ENGINES:
        return MmapThread
    if not job.direct and job.ioengine in ASYNC_BUFFERED_ENGINES:
        return BufferedUringThread
    if not job.direct and job.ioengine in BUFFERED_ENGINES:
        return VerifyBufferedThread if verify else BufferedThread
    if job.io_submit_mode != "inline":  # (the parser admits the synchronous engines and libaio)
        return OffloadThread
    if job.ioengine in SYNC_ENGINES:
        return VerifySyncThread if verify else SyncThread
    if job.ioengine in FS_META_ENGINES:
        return FsMetaThread
    cls = {"null": NullThread, "spdk": SpdkThread, "cpuio": CpuioThread}.get(job.ioengine)
    if cls is not None:
        return cls
    return VerifyAsyncThread if verify else AsyncThread


def _open_spdk_devices(th: SpdkThread, job, ji: int, clone: int, spdk_devs: dict[str, int], host: Host) -> None:
    """An SPDK thread's controllers: its files' (transport IDs), or without ``filename`` the SSD a
    job without files gets (the thread's default device)."""
    ids = [parse_transport_id(e) for e in job.filename]
    devs = [spdk_devs[addr] for addr, _ns in ids] or [th.dev]
    service = FileService(
        job.file_service_type, job.file_service_value, len(devs), host.rng.stream(f"job{ji}.{clone}.file_service")
    )
    ssd = host.platform.ssd
    nsids = [ssd.nsid if ns is None else ns for _addr, ns in ids] or [ssd.nsid]
    extents = [
        None if ns == 1 else extent_of(ssd, ns, f"job '{job.name}' (ioengine=spdk): file '{e}'")
        for ns, e in zip(nsids, job.filename or ["(no filename: ssd.nsid)"])
    ]
    th.open_devices(devs, service, clone, extents)


def _check_bound_devices(threads: list, host: Host) -> None:
    """No kernel job uses an SSD bound to vfio-pci for an SPDK job (the kernel's nvme driver no
    longer has it: its block device is gone)."""
    for th in threads:
        if isinstance(th, SpdkThread):
            continue
        for dev in th.devices_used():
            owner = host.user_devices.owner_of(dev)
            if owner is not None:
                raise ConfigError(
                    f"job '{th.job.name}' (ioengine={th.job.ioengine}) uses SSD {dev}, which {owner} "
                    "(ioengine=spdk) took from the kernel's nvme driver; give the kernel job other SSDs "
                    "(filename=/dev/nvmeXn1, ssd_count)"
                )


def _offload_workers(th, job, allowed: list[int], cpu: int, rr: int, placed: dict, core_of: list, cfs: bool) -> int:
    """fio's submit workers of an offload job thread (``iodepth`` of them), placed like threads
    with the job thread's CPU set (they inherit it: its own CPU under ``cpus_allowed_policy=split``);
    returns the next thread index."""
    cpus_w = [cpu] if job.cpus_allowed and job.cpus_allowed_policy == "split" else allowed
    cpus = []
    for _ in range(job.iodepth):
        c = place_thread(job, cpus_w, rr, placed, core_of)
        placed[c] = placed.get(c, 0) + 1
        rr += 1
        cpus.append(c)
    for w in th.add_workers(cpus):
        if cfs and len(cpus_w) > 1:
            w.allow_cpus(cpus_w)
    return rr


def _thread_files(cfg, host: Host) -> dict:
    """The files of every thread of a job that names files: {(job, clone): (regions, service)},
    laid out together on the SSDs (models.os.fs.filesystem)."""
    layout = FileLayout(cfg.platform.ssd.capacity_bytes, len(host.devices), cfg.platform.ssd)
    named = {}
    for ji, job in enumerate(cfg.jobs):
        if job.ioengine == "spdk":
            continue  # the plugin's files are controllers (_open_spdk_devices)
        for clone in range(job.numjobs):
            paths = thread_files(job, clone, host.rng.stream(f"job{ji}.{clone}.files"))
            if paths is None:
                break
            for path, size in paths:
                layout.reserve(path, size)
            named[(ji, clone)] = [p for p, _s in paths]
    if not named:
        return {}
    try:
        layout.place()
    except ConfigError as exc:
        raise ConfigError(f"job files: {exc}") from None
    out = {}
    for (ji, clone), paths in named.items():
        job = cfg.jobs[ji]
        service = FileService(
            job.file_service_type, job.file_service_value, len(paths), host.rng.stream(f"job{ji}.{clone}.file_service")
        )
        out[(ji, clone)] = ([layout.region(p) for p in paths], service)
    return out


def _steady_state_checks(cfg, host: Host, threads: list) -> list[tuple[int, list, SteadyState]]:
    """fio's steadystate checks of the job ``threads``: one per job with group_reporting (its
    threads together), else one per thread; [(job index, threads, check)]."""
    out = []
    for ji, job in enumerate(cfg.jobs):
        if job.steadystate is None or not job.ss_dur_ns:
            continue
        job_threads = [th for th in threads if th.job_idx == ji]
        groups = [job_threads] if "group_reporting" in job.ignored_options else [[th] for th in job_threads]
        crit, limit, pct = job.steadystate
        for ths in groups:
            for th in ths:
                th.steady = True
            start = min(th.start_delay_ns for th in ths)
            out.append(
                (
                    ji,
                    ths,
                    SteadyState(
                        host.engine, ths, crit, limit, pct, job.ss_dur_ns, job.ss_ramp_ns, job.ss_interval_ns, start
                    ),
                )
            )
    return out


def build_server(cfg, tracer=None):
    """The storage server of a :class:`scenarios.config.server.ServerRunConfig`: its core-scheduling
    policy (``server.policy``, parameters validated by the policy's ``Params``), the cpuidle governor
    of its reactors (``cpu.cpuidle_governor``) and its client (the workload's arrival batches, or
    the trace feed) are resolved here and handed to :class:`models.server.target.Server`."""
    policy_cls = CORE_SCHEDULING.get(cfg.server.policy)
    params = policy_cls.params_from(cfg.policy, where=f"policy {cfg.server.policy}")
    idle_cls = CPUIDLE_GOVERNORS.get(cfg.platform.cpu.cpuidle_governor)
    wl = cfg.workload
    n_ssds = cfg.platform.ssd_count
    # the client's stream by its own name: the same draws as any other construction order
    arrivals_rng = RngStreams(cfg.seed).stream("client.arrivals")
    client = TraceFeed(wl, n_ssds, arrivals_rng) if wl.kind == "trace" else arrival_batches(wl, arrivals_rng, n_ssds)
    srv = Server(cfg, policy_cls, params, idle_cls, client, tracer)
    if srv.trace is not None and srv.arrivals_done:
        f = srv.trace
        raise ConfigError(
            f"{wl.trace}: no read/write IO in the window ({f.reader.describe()}; dropped: {f.drops or 'none'})"
        )
    return srv
