"""fio's synchronous engines (psync = pread/pwrite, pvsync2 = preadv2/pwritev2 with RWF_HIPRI when
``hipri``): one thread per job clone, one outstanding IO per thread.

Each IO is one chain of CPU segments on the thread's CPU:
  [previous IO's dio completion + syscall exit] + [fio user work] + [syscall entry + fs + blk-mq +
  NVMe submit]  -> doorbell -> completion policy (sleep / poll / hybrid) -> task running again.
fio's timestamps: ``t_submit`` is taken after its user work, just before the syscall; completion
is seen at syscall return (clat = lat for sync engines).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Final

from mypy_extensions import mypyc_attr

from models.ioengines.host import EngineHost
from models.ioengines.job import FioJob
from models.ioengines.offsets import OffsetPicker
from models.ioengines.rate import EIO, MinRate, RatePacer
from models.ioengines.zbd import ZONE_OPS as _ZBD_ZONE_OPS
from models.os.block.annotations import sync_flags
from models.os.block.blk_mq import BIO_MAX_BYTES, PLUG_MIN_REQUESTS, PLUG_NONE, BlkMq
from models.os.block.io_ledger import IoLedger
from models.os.block.request import Request
from models.os.costs.bundle import Cost
from models.os.drivers.nvme import NvmeDriver, NvmeQueue
from models.os.fs.direct_io import own_plug
from models.os.sched.runner import CpuRunner
from models.os.sched.task import Task, nice_vscale
from simcore.rng import BatchedDraws

if TYPE_CHECKING:
    from models.ioengines.files import FileService
    from models.os.block.completion import CompletionPolicy

#: the zone operations (a module constant: compiled code reads it from a C static, not the
#: module's dictionary, per IO)
ZONE_OPS: Final = _ZBD_ZONE_OPS


def size_picker(split: tuple, rng: tuple | None):
    """fio's choice of a block size from ``bssplit`` entries ((bytes, percent), ...) or a
    ``bsrange`` (min, max): a function of one uniform draw returning (bytes, alignment), or None
    for a fixed ``bs``. bssplit picks the first entry whose cumulative percentage exceeds
    100 x u; bsrange takes min + u x max rounded down to a multiple of min (fio's get_next_buflen
    with bs_unaligned=0: 4k-16k gives 4, 8, 12 and 16 KiB, a quarter each), capped at the largest
    multiple of min within max (fio draws again instead)."""
    if split:
        sizes = [s for s, _p in split]
        cum = []
        total = 0.0
        for _s, p in split:
            total += p
            cum.append(total)
        align = min(sizes)
        last = sizes[-1]

        def pick_split(u: float) -> tuple[int, int]:
            x = u * 100.0
            for s, c in zip(sizes, cum):
                if x < c:
                    return s, align
            return last, align

        return pick_split
    if rng is not None:
        lo, hi = rng
        top = hi - hi % lo

        def pick_range(u: float) -> tuple[int, int]:
            b = lo + int(u * hi)
            b -= b % lo
            return (b if b <= top else top), lo

        return pick_range
    return None


class FileState:
    """One file's position in a thread striping over several files (:meth:`SyncThread.use_files`):
    its region, sequential position, random picker and device. A compiled class of typed fields,
    not a dict: a thread over several SSDs switches files on every IO."""

    def __init__(self, th: SyncThread) -> None:
        self.base_offset = th.base_offset
        self.span = th.span
        self.nblocks = th._nblocks
        self.next_offset = th.next_offset
        self.offsets = th._offsets
        self.seq_left = th._seq_left
        self.last_start = th._last_start
        self.dev = th.dev


@mypyc_attr(allow_interpreted_subclasses=True)  # the async, offload engines extend it (compiled: simcore.compiled)
class SyncThread:
    """One fio thread issuing blocking direct IOs."""

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
        rw = job.rw
        self._setup_ops(host, job)
        self.random: bool = rw.startswith("rand")
        self._draw: Callable[[], float] = BatchedDraws(stream, lambda g, n: g.random(n)).next  # uniform [0, 1)
        # fio's loops: the size-bounded job runs size x loops bytes (time_based: until runtime)
        amount = job.io_size_bytes or job.size_bytes  # fio's io_size: the IO amount, within size
        self.size_limit: int | None = amount * job.loops if not job.time_based and amount else None
        self.base_offset: int = job.offset_bytes + clone * job.offset_increment_bytes  # fio's offset_increment
        self.max_ios: int = job.number_ios  # 0: no limit
        self.issued_ios = 0
        # completions counted for fio's steadystate check (models.ioengines.steadystate), when set
        self.steady = False
        self.done_ios = 0
        self.done_bytes = 0
        self.done_lat_ns = 0.0
        self._setup_offsets(host, job, job_idx, clone)
        self._setup_ioprio(job, host.rng.stream(f"job{job_idx}.{clone}.prio"))
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
        #: the plug a small read's direct-IO path holds it in (models.os.fs.direct_io; -1: not known yet)
        self._plug_read = -1
        #: the asynchronous engines' (models.ioengines.async_io): the plug each IO's direct-IO path
        #: holds it in, the same for all the job's IOs (-1: not known yet)
        self._batch_plug = -1
        self._flow: Any = None  # fio's flow control (models.ioengines.flow): this thread's FlowMember
        self._flow_sleep_ns = 0.0
        #: fio's zonemode (models.ioengines.zbd): zbd's zone logic or strided's window (None: none),
        #: the IOs a zbd write became (resets, finishes, the write), a counted zbd trim's bytes
        self._zbd: Any = None
        self._strided: Any = None
        self._zoned = False
        self._zbd_ios: list = []
        self._zbd_trim_bytes = 0
        self._fdp: Any = None  # fio's fdp=1: the next write's placement handle (None: no placement)

    def _setup_offsets(self, host: EngineHost, job: FioJob, job_idx: int, clone: int) -> None:
        """Where the IOs go: the job's span (bytes), block sizes per direction (fixed, or fio's bssplit /
        bsrange pickers), the next sequential offset and fio's ``rw`` modifier (holes, IOs per random
        offset), and the random offset picker."""
        self.span: int = job.size_bytes or (1 << 30)
        self._bs: dict[str, int] = {"read": job.bs_read_bytes, "write": job.bs_write_bytes, "trim": job.bs_trim_bytes}
        self._nblocks: dict[str, int] = {
            op: self.span // bs if bs else 0 for op, bs in self._bs.items()
        }  # random offsets: block index range
        # mixed block sizes (fio bssplit / bsrange): a size picker per direction, None for a fixed bs
        self._pick_bs: dict[str, Any] = {
            "read": size_picker(job.bssplit_read, job.bsrange_read),
            "write": size_picker(job.bssplit_write, job.bsrange_write),
            "trim": None,
        }
        self.issued_bytes = 0
        self.next_offset = self.base_offset
        self._hole: int = job.rw_modifier if not self.random else 0  # rw=read:<n>: bytes skipped after each IO
        self._seq_nr: int = job.rw_modifier if self.random else 0  # rw=randread:<n>: IOs per random offset
        self._seq_left = self._seq_nr
        self._last_start: Any = None
        self._region_end = False  # a sequential job with holes reached the end of its region
        self._offsets = self._offset_picker(host, job, job_idx, clone) if self.random else None

    def _bind_hot_path(self, host: EngineHost) -> None:
        """The host's parts the hot path calls, typed (compiled code reads them without look-ups),
        the callbacks it passes per IO, bound once, and the submit-bundle memo (also for engines
        that do not run ``SyncThread.__init__``: the offload worker)."""
        self._ledger: IoLedger = host.ledger
        self._blk: BlkMq = host.blk
        self._driver: NvmeDriver = host.driver
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
        self.read_frac: float = (
            1.0 if rw in ("read", "randread") else job.rwmixread / 100.0 if rw in ("rw", "readwrite", "randrw") else 0.0
        )
        self._wop: str = "trim" if rw in ("trim", "randtrim") else "write"  # the op of a non-read IO
        #: trimwrite: each block is trimmed, then written (_next_io_trimwrite)
        self._trimwrite: bool = rw in ("trimwrite", "randtrimwrite")
        self._tw_write: Any = None  # the write that follows a trim at the same offset
        self._multi_files = False  # several files: _next_io_files picks each IO's (use_files)

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
        """The plug this thread's synchronous direct IO of ``op`` and ``nbytes`` sits in on its way
        to blk-mq (models.os.fs.direct_io: the file's or block device's path in this kernel; its
        wait sleeps unless the completion polls)."""
        policy = self.policy.get(op) or self.policy["read"]
        plug = own_plug(
            self.k.release,
            op=op,
            file=self._file_io,
            sync=True,
            sleeps=not policy.polled,
            hipri=self.hipri,
            nbytes=nbytes,
        )
        if op == "read" and nbytes <= BIO_MAX_BYTES:
            self._plug_read = plug
        return plug

    def _submit_cost(self, op: str, nbytes: int, with_completion: bool):
        key = (op, nbytes, with_completion)
        cost = self._costs.get(key)
        if cost is None and op == "trim":
            return self._trim_cost(nbytes, with_completion)
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

    def _trim_cost(self, nbytes: int, with_completion: bool, op: str = "trim"):
        """A trim: fio's BLKDISCARD ioctl (its user work, the syscall, the discard setup, blk-mq
        and the NVMe Dataset Management command), after the previous IO's return when there is one.
        A zone reset or finish (``op``): the BLKRESETZONE / BLKFINISHZONE ioctl, priced as the
        discard ioctl (blkdev_zone_mgmt builds and waits for one bio as blk_ioctl_discard does: an
        estimate) with the Zone Management Send command for the DSM one."""
        k = self.k
        parts = dict(
            user=k.user_io_cycles,
            syscall=k.syscall_entry_cycles,
            block=k.discard_ioctl_cycles,
            driver=k.nvme_dsm_cycles,
        )
        for layer, cyc in self.per_request_parts(own_plug=self.dio_plug(op, nbytes)).items():
            parts[layer] = parts.get(layer, 0.0) + cyc
        if with_completion:
            parts["fs"] = k.fs_complete_cycles
            parts["syscall"] += k.syscall_exit_cycles
        cost = self._costs[(op, nbytes, with_completion)] = self.host.costs.get(
            f"{op}_{'complete_' if with_completion else ''}submit", actions=None, user_space=False, **parts
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
        k = self.k
        _op, bs, off = self._next_io(None)
        self.failed = True
        self.task.error = 25  # ENOTTY
        self.error_msg = (
            f"{self.job.name}: io_u error on file {self.file_trims_name}: Inappropriate ioctl for device:"
            f" trim offset={off}, buflen={bs}"
        )
        cost = self.host.costs.get(
            "trim_ioctl_enotty",
            user=k.user_io_cycles,
            syscall=k.syscall_entry_cycles + k.syscall_exit_cycles,
            fs=k.ioctl_enotty_cycles,
        )
        self.runner.run(cost, self._issue_first)

    # -- placement (models.os.sched.placement) -----------------------------------------------------
    def allow_cpus(self, cpus) -> None:
        """Let the kernel move the thread among ``cpus`` (fio set no CPU list, or a shared one)."""
        self.task.affinity = frozenset(cpus)
        self.task.owner = self
        self.host.balancer.movable_tasks = True

    def can_migrate(self) -> bool:
        """A synchronous thread may move: with no IO in flight, or a polled one (its poll loop
        goes on from the new CPU on the queue it submitted to, as blk_poll polls the cookie's
        hardware queue from any CPU). A thread asleep on an interrupt-driven IO is not queued,
        so only its wake-up (after the completion) can place it elsewhere."""
        req = self.req
        return req is None or req.done or self.policy[req.op].polled

    def migrated(self, runner) -> None:
        """The task now runs on ``runner``'s CPU: the next IO goes to that CPU's hardware queue."""
        self.runner = runner
        self._qps.clear()

    def _setup_ioprio(self, job: FioJob, gen) -> None:
        """fio's IO priorities: ``prio``/``prioclass`` set the thread's (ioprio_set, class BE when
        only ``prio`` is given, as fio's ioprio_value); with ``cmdprio_percentage`` that share of the
        IOs (one uniform draw per IO, per direction) carries ``cmdprio_class``/``cmdprio`` in the
        command itself (io_uring sqe->ioprio, libaio IOCB_FLAG_IOPRIO)."""
        if job.prio is not None or job.prioclass is not None:
            self.task.ioprio = ((job.prioclass or 2) << 13) | (job.prio or 0)
        pct = {"read": job.cmdprio_percentage_read, "write": job.cmdprio_percentage_write}
        self._cmdprio: Any = None
        value = {
            "read": (job.cmdprio_class_read << 13) | job.cmdprio_read,
            "write": (job.cmdprio_class_write << 13) | job.cmdprio_write,
        }
        if any(pct.values()):
            draw = BatchedDraws(gen, lambda g, n: g.random(n), batch=1024).next
            self._cmdprio = lambda op, bs: value[op] if draw() * 100.0 < pct[op] else 0
        elif job.cmdprio_bssplit_read or job.cmdprio_bssplit_write:
            # cmdprio_bssplit (fio's cmdprio.c): the entry of the IO's block size gives the share of
            # IOs with a priority and, in its long form, the class and level; other sizes get none
            table = {
                op: {
                    bs: (p, value[op] if cls is None or level is None else (cls << 13) | level)
                    for bs, p, cls, level in split
                }
                for op, split in (("read", job.cmdprio_bssplit_read), ("write", job.cmdprio_bssplit_write))
            }
            draw = BatchedDraws(gen, lambda g, n: g.random(n), batch=1024).next

            def by_size(op: str, bs: int) -> int:
                entry = table[op].get(bs)
                return entry[1] if entry is not None and draw() * 100.0 < entry[0] else 0

            self._cmdprio = by_size

    def _offset_picker(
        self, host: EngineHost, job: FioJob, job_idx: int, clone: int, stream: str = "offset"
    ) -> OffsetPicker | None:
        """The picker of non-uniform random offsets (None for fio's default: uniform tausworthe,
        100% random), in blocks of the job's smallest block size, from the clone's own stream
        (``stream``: its name; each of a job's files has its own)."""
        if (
            job.random_distribution == "random"
            and job.random_generator != "lfsr"
            and job.rw_modifier <= 1
            and job.percentage_random_read >= 100
            and job.percentage_random_write >= 100
        ):
            return None
        unit = min(
            min((s for s, _p in split), default=bs) if split else rng[0] if rng else bs
            for bs, split, rng in (
                (job.bs_read_bytes, job.bssplit_read, job.bsrange_read),
                (job.bs_write_bytes, job.bssplit_write, job.bsrange_write),
            )
        )
        self._unit = unit
        return OffsetPicker(job, max(1, self.span // unit), unit, host.rng.stream(f"job{job_idx}.{clone}.{stream}"))

    # -- fio's files (models.ioengines.files, models.os.fs.filesystem) ---------------------------
    def use_files(self, regions, service: FileService, clone: int) -> None:
        """IO to the job's files: each has its own region (from the file's start, past the job's
        offset), sequential position and random picker; ``service`` picks the file of each IO.
        Regular files add the file system's extent lookup to every IO."""
        host, job = self.host, self.job
        offset = self.base_offset
        states: list[FileState] = []
        for i, reg in enumerate(regions):
            self.dev = reg.dev
            self.base_offset = reg.start_bytes + offset
            if reg.size_bytes is not None:
                self.span = reg.size_bytes - offset
            elif not job.size_bytes:
                self._device_span(reg.name, offset, host.platform.ssd.capacity_bytes)
            self._nblocks = {op: self.span // bs if bs else 0 for op, bs in self._bs.items()}
            self.next_offset = self.base_offset
            if self._offsets is not None:
                self._offsets = self._offset_picker(
                    host, job, self.job_idx, clone, "offset" if i == 0 else f"f{i}.offset"
                )
            states.append(FileState(self))
        self._fs_file_cycles = self.k.fs_file_extent_cycles if regions[0].is_file else 0.0
        self._file_io = regions[0].is_file
        self._plug_read = self._batch_plug = -1
        if regions[0].is_file and "trim" in job.rw and job.ioengine != "falloc":
            self.file_trims = True  # fio's BLKDISCARD on a regular file: the first trim fails (ENOTTY)
            self.file_trims_name = regions[0].name
        if not job.time_based:
            total = job.io_size_bytes or job.size_bytes or sum(st.span for st in states)
            self.size_limit = total * job.loops
        self._files: list[FileState] = states
        self._file_issued: list[int] = [0] * len(states)  # bytes issued to each file in this pass (sequential)
        self._service: FileService = service
        self._file_cur: int = service.first() if len(states) > 1 else 0
        self._file_next: int = self._file_cur
        self._load_file_state(states[self._file_cur])
        self._qps = {}
        self._multi_files = len(states) > 1

    def _device_span(self, path: str, offset: int, capacity: int | None) -> None:
        """A block device named without ``size``: fio's size is the device's from the clone's start
        offset (filesetup.c setup_files: ``io_size = real_file_size - file_offset``); a start past the
        device's end fails the clone's setup ("you need to specify valid offset=", err_offset), too
        little room for one block too ("blocksize is larger than data set range"): fio reaps that
        clone without IO and runs the others."""
        if capacity is None:
            return
        room = capacity - offset
        bs = max(self._bs.values())
        if room >= bs:
            self.span = room
            return
        self.failed = True
        self.task.error = 22  # EINVAL (fio's td_verror of the setup)
        why = "you need to specify valid offset=" if room < 0 else "blocksize is larger than data set range"
        self.error_msg = f"{self.job.name}: {why} ({path}: offset {offset} of {capacity} bytes)"
        self.span = bs

    def devices_used(self) -> set[int]:
        """The SSDs (indices) this thread's IOs go to: its files', or its one device."""
        files = getattr(self, "_files", None)
        return {st.dev for st in files} if files else {self.dev}

    def _save_file_state(self, st: FileState) -> None:
        """The current file's position into its state (each field by name: no getattr per IO)."""
        st.base_offset = self.base_offset
        st.span = self.span
        st.nblocks = self._nblocks
        st.next_offset = self.next_offset
        st.offsets = self._offsets
        st.seq_left = self._seq_left
        st.last_start = self._last_start
        st.dev = self.dev

    def _load_file_state(self, st: FileState) -> None:
        """Make ``st`` (a file's state, :meth:`_save_file_state`) the current file's."""
        self.base_offset = st.base_offset
        self.span = st.span
        self._nblocks = st.nblocks
        self.next_offset = st.next_offset
        self._offsets = st.offsets
        self._seq_left = st.seq_left
        self._last_start = st.last_start
        self.dev = st.dev

    def _next_io_files(self, op: str | None = None) -> tuple[str, int, int]:
        """The next IO of a thread with several files: from the file fio's file service chose after
        the previous IO (the switch happens here, so the previous IO kept its file's device)."""
        nxt = self._file_next
        if nxt != self._file_cur:
            states = self._files
            st = states[self._file_cur]
            self._save_file_state(st)
            self._load_file_state(states[nxt])
            self._file_cur = nxt
            if self.dev != st.dev:
                self._qps = {}
        io = self._next_io_trimwrite(op) if self._trimwrite else self._next_plain(op)
        if self._tw_write is not None:
            return io  # trimwrite: the block's write follows its trim on the same file
        cur = self._file_cur
        issued = self._file_issued
        issued[cur] += io[1]
        done = issued[cur] >= self.span
        if done:
            issued[cur] = 0
        self._file_next = self._service.step(cur, done)
        return io

    def _draw_op(self) -> str:
        return "read" if self._draw() < self.read_frac else self._wop

    def _next_io_trimwrite(self, op: str | None = None) -> tuple[str, int, int]:
        """fio's trimwrite / randtrimwrite: each block is trimmed, then written (the write's size)."""
        w = self._tw_write
        if w is not None:
            self._tw_write = None
            return w
        _op, bs, off = self._next_plain("trim")
        self._tw_write = ("write", self._bs["write"], off)
        return "trim", bs, off

    def _next_io(self, op: str | None = None) -> tuple[str, int, int]:
        """The next IO: (direction, bytes, byte offset); ``op``: its direction, if already drawn."""
        if self._zoned:
            return self._next_io_zoned(op)
        if self._multi_files:
            return self._next_io_files(op)
        if self._trimwrite:
            return self._next_io_trimwrite(op)
        return self._next_plain(op)

    # -- fio's zonemode (models.ioengines.zbd) -----------------------------------------------
    def use_zones(self, zbd: Any = None, strided: Any = None) -> None:
        """Work on zones: ``zbd`` (a :class:`~models.ioengines.zbd.ZbdJob`: the job's range in whole
        zones, its IOs moved to write pointers) or ``strided`` (a window that moves on)."""
        self._zbd, self._strided, self._zoned = zbd, strided, True
        base, span = (zbd.base, zbd.span) if zbd is not None else strided.window()
        self._set_window(base, span)
        if zbd is not None:
            self.policy.setdefault("trim", self.host.policy(self.host.policy_name(False)))  # the ioctls

    def use_fdp(self, handles: tuple[int, ...], select: str, stream) -> None:
        """fio's fdp=1 (dataplacement.c): each write names a placement handle of ``handles`` (the
        job's fdp_pli, else every one the device has), in turn (roundrobin) or drawn at random."""
        if select == "random":
            draw = BatchedDraws(stream, lambda g, n: g.random(n)).next
            self._fdp = lambda: handles[int(draw() * len(handles))]
            return
        state = [0]

        def roundrobin() -> int:
            i = state[0]
            state[0] = i + 1 if i + 1 < len(handles) else 0
            return handles[i]

        self._fdp = roundrobin

    def _set_window(self, base: int, span: int) -> None:
        self.base_offset = self.next_offset = base
        self.span = span
        self._nblocks = {op: span // bs if bs else 0 for op, bs in self._bs.items()}

    def _next_io_zoned(self, op: str | None) -> tuple[str, int, int]:
        """The next IO of a zonemode job: strided moves its window on after zonesize bytes; zbd
        moves each IO to a valid place (reads below, writes at a write pointer, trims to zone
        resets) and queues the zone resets and finishes a write needs before it."""
        zbd = self._zbd
        if zbd is None:
            io = self._next_plain(op)
            window = self._strided.issued(io[1])
            if window is not None:
                self._set_window(*window)
            return io
        pending = self._zbd_ios
        if pending:
            return pending.pop(0)
        op, bs, off = self._next_plain(op)
        if op == "write":
            ios = zbd.write(off, bs)
            io = ios[-1]
            self.next_offset = io[2] + io[1]
            pending.extend(ios[1:])
            return ios[0]
        if op == "trim":
            self._zbd_trim_bytes = bs
            zone = zbd.trim(off)
            if zone is None:
                return "zbd_eof", 0, 0  # no zone holds data to trim: fio's io_u_eof
            return "zone_reset", bs, zone  # a counted trim (its bytes: fio's trim stats)
        where = zbd.read(off, bs)
        if where is None:
            return "zbd_eof", 0, 0  # no zone holds data: fio's io_u_eof ends the job
        self.next_offset = where + bs
        return op, bs, where

    def _zone_request(self, op: str, nbytes: int, off: int) -> Request:
        """A zone reset or finish: the BLKRESETZONE / BLKFINISHZONE ioctl's request (no data; a
        trim of zonemode=zbd, ``nbytes`` > 0, is one of fio's IOs, the others are not)."""
        counted = nbytes > 0
        rid = self._ledger.new_id() if counted else -1
        req = Request(rid, self.task, self.job_idx, op, 0, off, self.runner.id, False)
        req.qp = self._driver.queue_for(self.dev, self.runner.id, False)
        req.flags = self.req_flags
        return req

    def _zone_done(self, req: Request, t: float) -> None:
        """A zone ioctl returned at ``t``: a zbd trim is counted as fio's trim; an error fails the job."""
        if req.status:
            self._io_error(req)
        if req.id >= 0:
            req.op, req.nbytes = "trim", self._zbd_trim_bytes
            self._io_completed(req, t)

    def _io_error(self, req) -> None:
        """The device failed ``req`` (a zone rule): fio logs the io_u error and ends the job (EIO),
        unless the job's continue_on_error / ignore_error go on after it (fio's error count)."""
        if self.job.continues_after(req.op, EIO):
            self.io_errors += 1
            return
        if not self.failed:
            self.failed = True
            self.task.error = EIO
            self.error_msg = (
                f"{self.job.name}: io_u error: Input/output error: {req.op} offset={req.offset},"
                f" buflen={req.nbytes} (NVMe status {req.status:#x})"
            )

    def _issue_zone_op(self, op: str, nbytes: int, off: int, t0: float, with_completion: bool) -> None:
        """A zone ioctl from the job thread (after the previous IO's return): the thread sleeps in
        it until its interrupt; ``zbd_eof`` ends the job."""
        if op == "zbd_eof":
            self._region_end = True
            self._exit(with_completion)
            return
        if nbytes:  # a zbd trim: one of the job's IOs
            self.issued_ios += 1
            self.issued_bytes += nbytes
        req = self._zone_request(op, nbytes, off)
        req.t_submit = t0 + self._user_io_cycles / self.runner.freq
        self.req = req
        self.runner.run(self._trim_cost(0, with_completion, op), self._zone_doorbell)

    def _zone_doorbell(self) -> None:
        req = self.req
        assert req is not None
        self._blk.issue(req, self.runner)
        self.policy["trim"].wait(self.runner, self.task, req, self._zone_returned)

    def _zone_returned(self) -> None:
        req = self.req
        assert req is not None
        k = self.k
        runner = self.runner
        cost = self.host.costs.get("zone_ioctl_return", fs=k.fs_complete_cycles, syscall=k.syscall_exit_cycles)
        self._zone_done(req, runner.clock() + cost.cycles / runner.freq)
        runner.run(cost, self._after_flow)  # (the next IO, as after a flow hold)

    def _next_plain(self, op: str | None = None) -> tuple[str, int, int]:
        draw = self._draw
        if op is None:
            op = "read" if draw() < self.read_frac else self._wop
        if self._offsets is not None:
            return self._next_picked(op)
        pick = self._pick_bs[op]
        u: float
        if pick is None:
            bs = self._bs[op]
            if self.random:
                u = draw()
                off = int(u * self._nblocks[op]) * bs + self.base_offset
        else:
            bs, align = pick(draw())
            if self.random:  # fio's blockalign: the smallest size of the mix
                u = draw()
                off = int(u * max(1, (self.span - bs) // align + 1)) * align + self.base_offset
        if not self.random:
            if self._hole:
                return op, bs, self._next_with_hole(bs)
            off = self.next_offset
            self.next_offset += bs
            if self.next_offset + bs > self.base_offset + self.span:
                self.next_offset = self.base_offset
        return op, bs, off

    def _next_with_hole(self, bs: int) -> int:
        """fio's get_next_seq_offset with ``rw=read:<n>``: n bytes skipped after each IO (not before
        the first); at the end of the region a time_based job starts over, another one ends."""
        if self._hole < 0:
            return self._next_backwards(bs)
        base = self.base_offset
        off = self.next_offset + (self._hole if self.next_offset != base else 0)
        if off + bs > base + self.span:
            off = base
            if not self.job.time_based:
                self._region_end = True
        self.next_offset = off + bs
        end = self.next_offset + self._hole
        if not self.job.time_based and end + bs > base + self.span:
            self._region_end = True  # the next IO would cross the end: this one is the last
        return off

    def _next_backwards(self, bs: int) -> int:
        """fio's get_next_seq_offset with a negative ``rw=read:-<n>`` (fio's examples/backwards-read.fio):
        the first IO at the region's start, each later one n bytes before the end of the last (n > bs:
        backwards); an offset before the region's start wraps to n bytes before its end (fio's unsigned
        position past the file's end: ``pos = io_size + ddir_seq_add``). The job never reaches an end
        of its own: its size (bytes done) or runtime ends it, as in fio."""
        base, span = self.base_offset, self.span
        rel = self.next_offset - base
        if rel:
            rel += self._hole
            if rel < 0:
                rel = span + self._hole
        if rel < 0 or rel + bs > span:  # n < bs steps forward: at the end, as a job with holes
            rel = 0
            if not self.job.time_based:
                self._region_end = True
        self.next_offset = base + rel + bs
        return base + rel

    def _next_picked(self, op: str):
        """An IO of a random job with a non-default distribution, generator or percentage_random:
        random IOs from the picker, the others sequential from where the last IO ended."""
        pick = self._pick_bs[op]
        bs = self._bs[op] if pick is None else pick(self._draw())[0]
        base = self.base_offset
        picker = self._offsets
        hit = True
        if self._seq_nr > 1:  # fio's ddir_seq_nr: a new random offset every n IOs
            self._seq_left -= 1
            hit = self._seq_left == 0
            if hit:
                self._seq_left = self._seq_nr
        pop = "write" if op == "trim" else op  # trims follow the write settings (fio's per-direction values)
        assert picker is not None  # (only random jobs with a picker come here)
        if hit and picker.is_random(pop):
            unit = self._unit
            off = base + min(picker.block(pop) * unit, max(0, self.span - bs) // unit * unit)
        elif not hit and self.job.rw_sequencer == "identical":
            off = base if self._last_start is None else self._last_start
        else:
            off = self.next_offset
            if off + bs > base + self.span:
                off = base
        self._last_start = off
        self.next_offset = off + bs
        return op, bs, off

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
            or self._region_end
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
    def use_flow(self, member, sleep_ns: float) -> None:
        """Take part in a flow (fio's ``flow``/``flow_id``): ``member`` is this thread's share,
        ``sleep_ns`` fio's ``flow_sleep`` (0: a held-back thread spins)."""
        self._flow = member
        self._flow_sleep_ns = float(sleep_ns)

    def _flow_held(self, with_completion: bool) -> None:
        """The flow holds the next IO back: after the previous IO's return, spin in fio's loop
        until the flow lets it go, or (``flow_sleep``) sleep and check again."""
        if self._flow_sleep_ns:
            self._pause(self._flow_sleep_ns, with_completion)
            return
        k = self.k
        runner = self.runner
        flow = self._flow

        def spin():
            if flow.may_go():
                self._issue(with_completion=False)
                return
            flow.hold(lambda: self.runner.spin_notify(flow))  # (its CPU now: it may have moved)
            runner.spin(flow, self._after_flow)

        if with_completion:
            runner.run(self.host.costs.get("sync_return", fs=k.fs_complete_cycles, syscall=k.syscall_exit_cycles), spin)
        else:
            spin()

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
