"""fio's synchronous engines (psync = pread/pwrite, pvsync2 = preadv2/pwritev2 with RWF_HIPRI when
``hipri``): one thread per job clone, one outstanding IO per thread.

Each IO is one chain of CPU segments on the thread's CPU:
  [previous IO's dio completion + syscall exit] + [fio user work] + [syscall entry + fs + blk-mq +
  NVMe submit]  -> doorbell -> completion policy (sleep / poll / hybrid) -> task running again.
fio's timestamps: ``t_submit`` is taken after its user work, just before the syscall; completion
is seen at syscall return (clat = lat for sync engines).

The thread holds the engine's loop (the calls, their bundles, the waits); what fio's features decide
is in the parts it holds (docs/architecture.md, "A fio job thread is composed of parts"): where each
IO goes (``offsets``: models.ioengines.io_offsets; ``files``: models.ioengines.files; the zones:
models.ioengines.zbd), the trim and zone ioctls (models.ioengines.trims), rate and flow
(models.ioengines.rate, .flow), IO priorities (models.ioengines.ioprio) and FDP (.fdp). The
thread's device ``dev`` and hardware queues ``_qps`` stay its own native fields (every engine
reads them per IO); a file switch sets them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Final

from mypy_extensions import mypyc_attr

from models.ioengines.files import JobFiles
from models.ioengines.host import EngineHost
from models.ioengines.io_offsets import IoOffsets, needs_picker
from models.ioengines.ioprio import CmdPrio, thread_ioprio
from models.ioengines.job import FioJob
from models.ioengines.kernel_context import batch_plug
from models.ioengines.rate import EIO, MinRate, RatePacer
from models.ioengines.td_error import device_error
from models.ioengines.trims import TrimIoctls
from models.ioengines.zbd import ZONE_OPS as _ZBD_ZONE_OPS
from models.ioengines.zbd import JobZones, Strided, ZbdJob
from models.os.block.annotations import sync_flags
from models.os.block.blk_mq import BIO_MAX_BYTES, PLUG_MIN_REQUESTS, PLUG_NONE, BlkMq
from models.os.block.io_ledger import IoLedger
from models.os.block.request import Request
from models.os.costs.bundle import Cost
from models.os.drivers.nvme import NvmeDriver, NvmeQueue
from models.os.fs.direct_io import own_plug
from models.os.fs.filesystem import namespace_extent
from models.os.sched.runner import CpuRunner
from models.os.sched.task import Task, nice_vscale
from simcore.rng import BatchedDraws

if TYPE_CHECKING:
    from models.ioengines.fdp import FdpPlacement
    from models.ioengines.files import FileService
    from models.ioengines.flow import FlowMember
    from models.os.block.completion import CompletionPolicy

#: the zone operations (a module constant: compiled code reads it from a C static, not the
#: module's dictionary, per IO)
ZONE_OPS: Final = _ZBD_ZONE_OPS


@mypyc_attr(allow_interpreted_subclasses=True)  # the async, offload engines extend it (compiled: simcore.compiled)
class SyncThread:
    """One fio thread issuing blocking direct IOs (see the module docstring for its parts)."""

    def __init__(self, host: EngineHost, job: FioJob, job_idx: int, clone: int, cpu: int, end_ns: float, stream):
        self.host = host
        self._bind_hot_path(host)
        self.job = job
        self.job_idx = job_idx
        self.end_ns: float = end_ns
        self.start_delay_ns = 0.0  # fio's startdelay (drawn and set by the assembly)
        k = host.kcosts
        self.k = k
        self.task = Task(len(host.all_tasks), f"{job.name}/{clone}", cpu, job=job_idx)
        self.task.vscale = nice_vscale(job.nice)  # fio's nice: the thread's CFS load weight
        host.all_tasks.append(self.task)
        self.runner: CpuRunner = host.runners[cpu]
        self.placed_cpu = cpu  # where it was started (the scheduler may move it: task.cpu)
        self.hipri: bool = job.hipri
        self._setup_ops(host, job)
        draw: Callable[[], float] = BatchedDraws(stream, lambda g, n: g.random(n)).next  # uniform [0, 1)
        # fio's loops: the size-bounded job runs size x loops bytes (time_based: until runtime)
        amount = job.io_size_bytes or job.size_bytes  # fio's io_size: the IO amount, within size
        self.size_limit: int | None = amount * job.loops if not job.time_based and amount else None
        self.max_ios: int = job.number_ios  # 0: no limit
        self.issued_ios = 0
        # completions counted for fio's steadystate check (models.ioengines.steadystate), when set
        self.steady = False
        self.done_ios = 0
        self.done_bytes = 0
        self.done_lat_ns = 0.0
        self.issued_bytes = 0
        self._setup_offsets(host, job, job_idx, clone, draw)
        # fio's IO priorities (models.ioengines.ioprio): the thread's, and its commands' own
        prio = thread_ioprio(job)
        if prio is not None:
            self.task.ioprio = prio
        gen = host.rng.stream(f"job{job_idx}.{clone}.prio")
        self._cmdprio: Any = CmdPrio(job, gen).value if CmdPrio.wanted(job) else None
        self.req: Request | None = None
        self._costs: dict[tuple, Cost] = {}
        self.dev: int = self.task.tid % len(host.devices)  # threads spread over the SSDs
        self.req_flags: int = sync_flags(job.stacksim_irq_hint, job.nowait)
        self.pacer = RatePacer(job, host.rng.stream(f"job{job_idx}.{clone}.rate"))
        self._pending_op: Any = None  # the direction drawn for an IO held back by the rate
        self.min_rate = MinRate(job)
        self._min_rate_on: bool = self.min_rate.active  # (fixed by the job: read per IO)
        self.failed = False  # fio ended the job with an error (rate_min not met)
        self.io_errors = 0  # errors fio went on after (continue_on_error: its total_err_count)
        self.file_trims = False  # trims on a regular file (_fail_first_trim)
        self.file_trims_name = ""
        self.error_msg = ""
        self._paused = False
        self._paces: bool = bool(self.pacer.active or job.thinktime_ns)  # fio pauses between IOs at all
        self._complete_cycles: float = self.k.fs_complete_cycles + self.k.syscall_exit_cycles
        self._user_io_cycles: float = self.k.user_io_cycles
        self._qps: dict[str, NvmeQueue] = {}
        self._fs_file_cycles = 0.0  # the file system's extent lookup per IO (file jobs: use_files)
        self._file_io = False  # the IOs go to regular files (iomap's direct IO), not the block device
        self._plug_read = -1  # the plug a small read's direct-IO path holds it in (models.os.fs.direct_io; -1: unknown)
        #: its kiocbs are synchronous (pread/pwrite...); False: io_submit's (a libaio offload worker)
        self._sync_kiocb = True
        #: the asynchronous engines' (models.ioengines.async_io): the plug each IO's direct-IO path
        #: holds it in, the same for all the job's IOs (-1: not known yet)
        self._batch_plug = -1
        self._flow: Any = None  # fio's flow control (models.ioengines.flow): this thread's FlowMember
        self._zones: JobZones | None = None  # fio's zonemode (models.ioengines.zbd; None: none)
        self._fdp: Any = None  # fio's fdp=1: the next write's placement handle (models.ioengines.fdp)
        self._wmode: Any = None  # io_uring_cmd's write_mode: the next write's opcode (models.ioengines.write_mode)

    def _setup_offsets(
        self, host: EngineHost, job: FioJob, job_idx: int, clone: int, draw: Callable[[], float]
    ) -> None:
        """Where the IOs go: the offsets part (fio's get_next_offset: models.ioengines.io_offsets),
        from the clone's start (fio's offset_increment), with the job's files once it has them."""
        base = job.offset_bytes + clone * job.offset_increment_bytes
        ssd = host.platform.ssd
        if ssd.nsid != 1 and not job.filename and job.ioengine != "spdk":  # (spdk: its files' regions)
            base += namespace_extent(ssd, ssd.nsid, f"job '{job.name}' (no filename): ssd.nsid")[0]
        offs = self.offsets = IoOffsets(job, base, job.rw.startswith("rand"), draw)
        if offs.random and needs_picker(job):
            offs.use_picker(host.rng.stream(f"job{job_idx}.{clone}.offset"))
        #: the job's files (models.ioengines.files; None: the raw device ``dev``)
        self.files: JobFiles | None = None
        self._route()

    def _bind_hot_path(self, host: EngineHost) -> None:
        """The host's parts the hot path calls, typed (compiled code reads them without look-ups),
        the callbacks it passes per IO, bound once, and the submit-bundle memo (also for engines
        that do not run ``SyncThread.__init__``: the offload worker)."""
        self._ledger: IoLedger = host.ledger
        self._blk: BlkMq = host.blk
        self._driver: NvmeDriver = host.driver
        self._trims = TrimIoctls(self)  # trims and zone ioctls (models.ioengines.trims)
        self._doorbell_cb = self._doorbell
        self._completed_cb = self._completed  # (passed to the completion policy per IO)
        # the last IO's submit-with-completion bundle, by direction and size (the usual next one)
        self._memo_op = ""
        self._memo_bs = 0
        self._memo_cost: Cost | None = None

    def _setup_ops(self, host: EngineHost, job: FioJob) -> None:
        """The directions of the job's IOs: the share of reads, the other op (write or trim), the
        completion policy of each (a trim is fio's BLKDISCARD ioctl: submit_bio_wait sleeps until
        the interrupt, never polls), and trimwrite's trim-then-write pairs."""
        rw = job.rw
        self.policy: dict[str, CompletionPolicy] = {
            op: host.policy(host.policy_name(job.hipri)) for op in ("read", "write")
        }
        if "trim" in rw:
            self.policy["trim"] = host.policy(host.policy_name(False))
        #: trimwrite: each block is trimmed, then written (IoOffsets.next_trimwrite)
        self._trimwrite: bool = rw in ("trimwrite", "randtrimwrite")
        self._multi_files = False  # several files: _next_io_files picks each IO's (use_files)
        self._zoned = False  # zonemode: _next_io_zoned (use_zones)

    def _route(self) -> None:
        """How :meth:`_next_io` finds the next IO: ``_plain`` (the offsets part alone) unless the job
        has zones, several files or trimwrite (one flag read per IO in the common case)."""
        self._plain = not (self._zoned or self._multi_files or self._trimwrite)

    # -- cost bundles ------------------------------------------------------------------------
    def per_request_parts(self, nsubmit: int = 1, plug_min: int = PLUG_MIN_REQUESTS, own_plug: int = PLUG_NONE) -> dict:
        """The submitting context's work for one request after the plug (split pieces count,
        merged bios do not) when ``nsubmit`` IOs are submitted together (``own_plug``: the plug
        the direct-IO path holds it in): blk-mq request setup and dispatch, the IO scheduler's
        insert (+ dispatch), the NVMe command, unless the CPU's kblockd worker dispatches
        (models.os.block.blk_mq)."""
        k = self.k
        if getattr(self, "passthru", False):  # passthrough bypasses the IO scheduler and dispatches at once
            return dict(block=k.blk_submit_cycles, driver=k.nvme_submit_cycles)
        return self.host.blk.submitter_parts(nsubmit, k.blk_submit_cycles, k.nvme_submit_cycles, plug_min, own_plug)

    def dio_plug(self, op: str, nbytes: int) -> int:
        """The plug this thread's direct IO of ``op`` and ``nbytes`` sits in on its way to blk-mq
        (models.os.fs.direct_io: the file's or block device's path in this kernel): a synchronous
        kiocb's wait sleeps unless the completion polls; an asynchronous one (io_submit) is never
        polled."""
        sync = self._sync_kiocb
        policy = self.policy.get(op) or self.policy["read"]
        plug = own_plug(
            self.k.release,
            op=op,
            file=self._file_io,
            sync=sync,
            sleeps=not policy.polled if sync else True,
            hipri=self.hipri and sync,
            nbytes=nbytes,
        )
        if op == "read" and nbytes <= BIO_MAX_BYTES:
            self._plug_read = plug
        return plug

    def dio_batch_plug(self) -> int:
        """The plug each of the thread's asynchronous IOs (models.ioengines.async_io) sits in on the
        direct-IO path beside the submitting call's own (:func:`models.ioengines.kernel_context.
        batch_plug`), found once the job has its files."""
        plug = self._batch_plug
        if plug < 0:
            iopoll, passthru = getattr(self, "iopoll", False), getattr(self, "passthru", False)
            plug = self._batch_plug = batch_plug(self.job, self.k.release, self._file_io, iopoll, passthru)
        return plug

    def batch_request_parts(self, nsubmit: int, plug_min: int) -> dict:
        """:meth:`per_request_parts` of a submitting call's requests, in :meth:`dio_batch_plug`."""
        return self.per_request_parts(nsubmit, plug_min, self.dio_batch_plug())

    def _submit_cost(self, op: str, nbytes: int, with_completion: bool):
        key = (op, nbytes, with_completion)
        cost = self._costs.get(key)
        if cost is None and op == "trim":
            return self._trims.cost(nbytes, with_completion)
        if cost is None:
            k = self.k
            pages = max(1, -(-nbytes // 4096))
            nreq = self.host.blk.requests_for(nbytes)  # one request per piece after a split
            parts = dict(
                user=k.user_io_cycles,
                syscall=k.syscall_entry_cycles,
                fs=k.fs_submit_cycles + k.fs_per_page_cycles * pages + self._fs_file_cycles,
            )
            for layer, cyc in self.per_request_parts(own_plug=self.dio_plug(op, nbytes)).items():
                parts[layer] = cyc * nreq
            if with_completion:
                parts["fs"] += k.fs_complete_cycles
                parts["syscall"] += k.syscall_exit_cycles
            cost = self._costs[key] = self.host.costs.get(
                f"sync_{'complete_' if with_completion else ''}submit", actions=None, user_space=False, **parts
            )
        return cost

    # -- program -----------------------------------------------------------------------------
    def start(self) -> None:
        self.task.resume = self._fail_first_trim if self.file_trims else self._issue_first
        self.runner.add_task(self.task)

    def _fail_first_trim(self) -> None:
        """fio's trim on a regular file (do_io_u_trim -> os_trim): the BLKDISCARD ioctl on the
        file's descriptor, which the file system does not know (ext4_ioctl / xfs_file_ioctl return
        -ENOTTY before any work): the job's first IO is a trim, it fails, and fio ends the job
        (the parser refuses the continue_on_error settings that would go on)."""
        _op, bs, off = self._next_io(None)
        self.failed = True
        self.task.error = 25  # ENOTTY
        self.error_msg = (
            f"{self.job.name}: io_u error on file {self.file_trims_name}: Inappropriate ioctl for device:"
            f" trim offset={off}, buflen={bs}"
        )
        self.runner.run(self._trims.enotty_cost(), self._issue_first)

    # -- placement (models.os.sched.placement) -----------------------------------------------------
    def allow_cpus(self, cpus) -> None:
        """Let the kernel move the thread among ``cpus`` (fio set no CPU list, or a shared one)."""
        self.task.affinity = frozenset(cpus)
        self.task.owner = self
        self.host.balancer.movable_tasks = True

    def can_migrate(self) -> bool:
        """A synchronous thread may move: with no IO in flight, or a polled one (its poll loop
        goes on from the new CPU on the queue it submitted to, as blk_poll polls the cookie's
        hardware queue from any CPU), or an interrupt-driven one it is not asleep on (a policy's
        poll with a budget, ``runner.poll_for``, preempted: it polls on from the new CPU and the
        interrupt, on the queue's CPU, completes the request). A thread asleep on an
        interrupt-driven IO is not queued, so only its wake-up (after the completion) can place
        it elsewhere."""
        req = self.req
        return req is None or req.done or self.policy[req.op].polled or not req.waiter_sleeping

    def migrated(self, runner) -> None:
        """The task now runs on ``runner``'s CPU: the next IO goes to that CPU's hardware queue."""
        self.runner = runner
        self._qps.clear()

    # -- fio's files (models.ioengines.files, models.os.fs.filesystem) ---------------------------
    def use_files(self, regions, service: FileService, clone: int) -> None:
        """IO to the job's files (:class:`~models.ioengines.files.JobFiles`): each has its own
        region, sequential position and random picker; ``service`` picks the file of each IO.
        Regular files add the file system's extent lookup to every IO."""
        host, job = self.host, self.job
        files = JobFiles(
            self.offsets,
            regions,
            service,
            job,
            host.platform.ssd.capacity_bytes,
            lambda name: host.rng.stream(f"job{self.job_idx}.{clone}.{name}"),
        )
        if files.error:
            self.failed = True
            self.task.error = 22  # EINVAL (fio's td_verror of the setup)
            self.error_msg = files.error
        self.dev = files.states[files.cur].dev
        self._fs_file_cycles = self.k.fs_file_extent_cycles if regions[0].is_file else 0.0
        self._file_io = regions[0].is_file
        self._plug_read = self._batch_plug = -1
        if regions[0].is_file and "trim" in job.rw and job.ioengine != "falloc":
            self.file_trims = True  # fio's BLKDISCARD on a regular file: the first trim fails (ENOTTY)
            self.file_trims_name = regions[0].name
        if not job.time_based:
            total = job.io_size_bytes or job.size_bytes or files.total_span()
            self.size_limit = total * job.loops
        self.files = files
        self._qps = {}
        self._multi_files = len(files.states) > 1
        self._route()

    def devices_used(self) -> set[int]:
        """The SSDs (indices) this thread's IOs go to: its files', or its one device."""
        files = self.files
        return files.devices() if files is not None else {self.dev}

    def _next_io_files(self, op: str | None = None) -> tuple[str, int, int]:
        """The next IO of a thread with several files: from the file fio's file service chose after
        the previous IO."""
        files = self.files
        assert files is not None
        offs = self.offsets
        dev = files.select(offs, self.dev)
        if dev != self.dev:
            self.dev = dev
            self._qps = {}
        io = offs.next_trimwrite() if self._trimwrite else offs.next(op)
        if offs.tw_write is not None:
            return io  # trimwrite: the block's write follows its trim on the same file
        files.issued_to(io[1], offs.span)
        return io

    def _draw_op(self) -> str:
        return self.offsets.draw_op()

    def _next_io(self, op: str | None = None) -> tuple[str, int, int]:
        """The next IO: (direction, bytes, byte offset); ``op``: its direction, if already drawn."""
        if self._plain:
            return self.offsets.next(op)
        if self._zoned:
            return self._next_io_zoned(op)
        if self._multi_files:
            return self._next_io_files(op)
        return self.offsets.next_trimwrite()

    # -- fio's zonemode (models.ioengines.zbd) -----------------------------------------------
    def use_zones(self, zbd: ZbdJob | None = None, strided: Strided | None = None) -> None:
        """Work on zones (:class:`~models.ioengines.zbd.JobZones`): ``zbd`` (the job's range in whole
        zones, its IOs moved to write pointers) or ``strided`` (a window that moves on)."""
        self._zones = JobZones(self.offsets, zbd, strided)
        self._zoned = True
        self._route()
        if zbd is not None:
            self.policy.setdefault("trim", self.host.policy(self.host.policy_name(False)))  # the ioctls

    def use_fdp(self, fdp: FdpPlacement) -> None:
        """fio's fdp=1 (:mod:`models.ioengines.fdp`): each write names a placement handle."""
        self._fdp = fdp.next

    def use_write_mode(self, modes: Any) -> None:
        """io_uring_cmd's write_mode (a :class:`models.ioengines.write_mode.WriteModes`): each
        write's NVM command (its asynchronous threads send it)."""
        self._wmode = modes.next

    def _next_io_zoned(self, op: str | None) -> tuple[str, int, int]:
        zones = self._zones
        assert zones is not None
        return zones.next(op)

    def _zone_done(self, req: Request, t: float) -> None:
        """A zone ioctl returned at ``t``: a zbd trim is counted as fio's trim; an error fails the job."""
        if req.status:
            self._io_error(req)
        if req.id >= 0:
            zones = self._zones
            assert zones is not None
            req.op, req.nbytes = "trim", zones.trim_bytes
            self._io_completed(req, t)

    def _io_error(self, req) -> None:
        """The device failed ``req`` (a zone rule, an uncorrectable block): fio logs the io_u error
        and ends the job, unless the job's continue_on_error / ignore_error go on after it (fio's
        error count). The error is the command's NVMe status through io_uring_cmd, else the errno
        the kernel makes of it (:func:`models.ioengines.td_error.device_error`)."""
        err, text = device_error(req.status, getattr(self, "passthru", False))
        if self.job.continues_after(req.op, err):
            self.io_errors += 1
            return
        if not self.failed:
            self.failed = True
            self.task.error = err
            self.error_msg = (
                f"{self.job.name}: io_u error on file {self.file_trims_name}: {text}: {req.op}"
                f" offset={req.offset}, buflen={req.nbytes}"
            )

    def _issue_zone_op(self, op: str, nbytes: int, off: int, t0: float, with_completion: bool) -> None:
        """A zone ioctl from the job thread (after the previous IO's return): the thread sleeps in
        it until its interrupt; ``zbd_eof`` ends the job."""
        if op == "zbd_eof":
            self.offsets.region_end = True
            self._exit(with_completion)
            return
        if nbytes:  # a zbd trim: one of the job's IOs
            self.issued_ios += 1
            self.issued_bytes += nbytes
        trims = self._trims
        req = trims.zone_request(op, nbytes, off)
        req.t_submit = t0 + self._user_io_cycles / self.runner.freq
        self.req = req
        trims.run(req, trims.cost(0, with_completion, op), "zone_ioctl_return", self._zone_returned)

    def _zone_returned(self, req: Request, t: float, cost: Cost) -> None:
        self._zone_done(req, t)
        self.runner.run(cost, self._after_flow)  # (the next IO, as after a flow hold)

    def _count_done(self, req) -> None:
        self.done_ios += 1
        self.done_bytes += req.nbytes
        self.done_lat_ns += req.t_complete - req.t_submit

    def _finished(self, now: float) -> bool:
        """fio's end of a job: runtime, size (x loops), number_ios, or a sequential job with holes
        at the end of its region."""
        return (
            now >= self.end_ns
            or (self.size_limit is not None and self.issued_bytes >= self.size_limit)
            or (self.max_ios and self.issued_ios >= self.max_ios)
            or self.offsets.region_end
            or self.failed
        )

    def _io_completed(self, req, t: float) -> None:
        """fio has ``req`` back at ``t``: stamp it, hand it to the run's statistics, then fio's
        minimum-rate and steady-state counters. (``_issue`` and the reaping loops inline this.)"""
        req.t_complete = t
        self._ledger.done(req)
        if self._min_rate_on:
            self._check_min_rate(req, t)
        if self.steady:
            self._count_done(req)

    def _check_min_rate(self, req, now: float) -> None:
        """fio's check_min_rate after a completion: a miss ends the job with EIO."""
        msg = self.min_rate.completed(req.op, req.nbytes, now)
        if msg:
            self.failed = True
            self.task.error = EIO
            self.error_msg = f"{self.job.name}: {msg}"  # fio's log_err

    def _issue_first(self) -> None:
        self.min_rate.start_ns = self.host.engine.now
        if self._flow is not None:
            self._flow.join()
        self._issue(with_completion=False)

    def _issue(self, with_completion: bool) -> None:
        runner = self.runner
        now = runner.clock()
        prev = self.req
        t0 = now
        if with_completion:
            t0 = now + self._complete_cycles / runner.freq
            assert prev is not None
            prev.t_complete = t0
            self._ledger.done(prev)
            if self._min_rate_on:
                self._check_min_rate(prev, t0)
            if self.steady:
                self._count_done(prev)
            if prev.status:
                self._io_error(prev)
        if self._finished(t0):
            self._exit(with_completion)
            return
        op = None
        if self._paces:
            op = self._pending_op or self._draw_op()
            wait = self.job.thinktime_ns if with_completion else 0.0
            if self.pacer.active:
                op, due = self.pacer.choose(op, t0)
                wait = max(wait, due - t0)
            if wait > 0:
                self._pending_op = op
                self._pause(wait, with_completion)
                return
            self._pending_op = None
        if self._flow is not None and not self._flow.take():
            self._pending_op = op
            self._flow_held(with_completion)
            return
        op, bs, off = self._next_io(op)
        if op in ZONE_OPS:
            self._issue_zone_op(op, bs, off, t0, with_completion)
            return
        if self._paces:  # (an inactive pacer ignores it)
            self.pacer.issued(op, bs)
        self.issued_bytes += bs
        self.issued_ios += 1
        req = Request(self._ledger.new_id(), self.task, self.job_idx, op, bs, off, runner.id, self.hipri)
        req.flags = self.req_flags
        if self._cmdprio is not None and op != "trim":
            req.ioprio = self._cmdprio(op, bs)
        qp = self._qps.get(op)
        if qp is None:  # the thread's hardware queue for this direction (fixed CPU and SSD)
            qp = self._qps[op] = self._driver.queue_for(self.dev, runner.id, self.policy[op].polled)
        req.qp = qp
        req.t_submit = t0 + self._user_io_cycles / runner.freq
        self.req = req
        memo = self._memo_cost
        if with_completion and memo is not None and bs == self._memo_bs and op == self._memo_op:
            cost = memo
        else:
            cost = self._costs.get((op, bs, with_completion)) or self._submit_cost(op, bs, with_completion)
            if with_completion:
                self._memo_op, self._memo_bs, self._memo_cost = op, bs, cost
        runner.run(cost, self._doorbell_cb)

    def _exit(self, with_completion: bool) -> None:
        """fio's thread ends (after the previous IO's return path, when there is one)."""
        runner = self.runner
        self.req = None
        if self._flow is not None:
            self._flow.leave()
        if with_completion:
            runner.run(
                self.host.costs.get("sync_exit", fs=self.k.fs_complete_cycles, syscall=self.k.syscall_exit_cycles),
                runner.exit_task,
            )
        else:
            runner.exit_task()

    # -- fio's flow control -------------------------------------------------------------------
    def use_flow(self, member: FlowMember) -> None:
        """Take part in a flow (fio's ``flow``/``flow_id``): ``member`` is this thread's share."""
        self._flow = member

    def _flow_held(self, with_completion: bool) -> None:
        """The flow holds the next IO back: after the previous IO's return, spin in fio's loop
        until the flow lets it go, or (``flow_sleep``) sleep and check again."""
        flow = self._flow
        if flow.sleep_ns:
            self._pause(flow.sleep_ns, with_completion)
            return
        k = self.k
        runner = self.runner

        def spin():
            if flow.may_go():
                self._issue(with_completion=False)
                return
            flow.spin(runner, self._runner_now, self._after_flow)

        if with_completion:
            runner.run(self.host.costs.get("sync_return", fs=k.fs_complete_cycles, syscall=k.syscall_exit_cycles), spin)
        else:
            spin()

    def _runner_now(self) -> CpuRunner:
        return self.runner

    def _after_flow(self) -> None:
        self._issue(with_completion=False)

    # -- fio thinktime and rate ----------------------------------------------------------------
    def _pause(self, wait: float, with_completion: bool) -> None:
        """Finish the previous IO's return path, then nanosleep (hrtimer with the 50 us timer slack)."""
        slack = self.k.timer_slack_ns
        self._nanosleep(with_completion, lambda: wait + slack, self._after_pause)

    def _nanosleep(self, with_completion: bool, delay_ns, then) -> None:
        """nanosleep after the previous IO's return path (when there is one): the call's entry and
        exit, an hrtimer armed for ``delay_ns()`` ns (evaluated as the call sleeps) that wakes the
        task, then ``then()``."""
        k = self.k
        runner = self.runner
        parts = dict(syscall=k.syscall_entry_cycles + k.syscall_exit_cycles)
        if with_completion:
            parts["fs"] = k.fs_complete_cycles
            parts["syscall"] += k.syscall_exit_cycles
        task = self.task

        def fire(r):
            r.wake(task)

        def sleep():
            runner.start_timer(delay_ns(), fire)
            runner.sleep(then, iowait=False)

        runner.run(
            self.host.costs.get(
                "nanosleep" + ("_after_io" if with_completion else ""),
                actions={"hrtimer_program": 1},
                user_space=False,
                **parts,
            ),
            sleep,
        )

    def _after_pause(self) -> None:
        self._paused = True
        self._issue(with_completion=False)

    def _doorbell(self) -> None:
        req = self.req
        assert req is not None
        plug = self._plug_read
        if plug < 0 or req.op != "read" or req.nbytes > BIO_MAX_BYTES:
            plug = self.dio_plug(req.op, req.nbytes)
        self._blk.issue(req, self.runner, plug)
        self.policy[req.op].wait(self.runner, self.task, req, self._completed_cb)

    def _completed(self) -> None:
        self._issue(True)
