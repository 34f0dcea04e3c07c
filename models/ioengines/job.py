"""fio's job, as the job threads read it: :class:`FioJob`, one job section after ``[global]``
inheritance, validated (the kernel's and fio's limits, fio's fix-ups of its batch options).

The fio parser (``scenarios/inputs/fio/``) builds it from a job file, ``--set`` options or a
scenario's ``jobs``; the IO engines (:mod:`models.ioengines`) and fio's run of its jobs
(:mod:`.fio_run`) read only it (the kernel reads none of it: an engine hands the kernel what it
needs in the kernel's terms). Its fields are typed, so a model that reads a field the job does not
have, or reads one as the wrong type, fails the type check (``tests/test_typed_models.py``).
Units are in the fields' names (``_ns``, ``_bytes``); times are integer nanoseconds, sizes integer
bytes, rates IO/s or bytes/s (``None``: unlimited).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from models.ioengines import ASYNC_BUFFERED_ENGINES, BUFFERED_ENGINES, CPU_ENGINES, FS_META_ENGINES, SYNC_ENGINES
from models.ioengines.td_error import non_fatal

__all__ = [
    "ENGINE_MAX_DEPTH",
    "FIO_MAX_JOBS",
    "MAX_RW_BYTES",
    "SIZE_MAX_BYTES",
    "TIME_MAX_NS",
    "Engine",
    "FioJob",
    "IrqHint",
    "RwMode",
    "smallest_block",
]

#: fio keeps sizes and offsets in unsigned 64-bit integers (``unsigned long long``).
SIZE_MAX_BYTES = 2**64 - 1
#: Longest time a job option may give: the simulated clock counts nanoseconds in a float, exact to
#: the nanosecond up to 2**53 ns (about 104 days).
TIME_MAX_NS = 2**53
#: Largest transfer of one read/write/io_uring/libaio request: Linux's MAX_RW_COUNT
#: (INT_MAX & PAGE_MASK = 2 GiB - 4 KiB; rw_verify_area() truncates longer requests, read(2)).
MAX_RW_BYTES = 0x7FFFF000
#: fio's default --max-jobs (FIO_MAX_JOBS): no more threads/processes than this in one run.
FIO_MAX_JOBS = 4096
#: Deepest queue one job may ask of an engine, the kernel's limit: io_uring_setup() refuses more
#: than IORING_MAX_ENTRIES = 32768 entries; io_setup() more than fs.aio-max-nr (default 65536).
ENGINE_MAX_DEPTH = {"io_uring": 32768, "io_uring_cmd": 32768, "libaio": 65536}
_ENGINE_DEPTH_LIMIT = {
    "io_uring": "io_uring's IORING_MAX_ENTRIES",
    "io_uring_cmd": "io_uring's IORING_MAX_ENTRIES",
    "libaio": "the default fs.aio-max-nr",
}

RwMode = Literal[
    "read",
    "write",
    "randread",
    "randwrite",
    "rw",
    "readwrite",
    "randrw",
    "trim",
    "randtrim",
    "trimwrite",
    "randtrimwrite",
]
Engine = Literal[
    "psync",
    "sync",
    "pvsync2",
    "mmap",
    "libaio",
    "io_uring",
    "io_uring_cmd",
    "null",
    "spdk",
    "falloc",
    "ftruncate",
    "filecreate",
    "filestat",
    "filedelete",
    "dircreate",
    "dirstat",
    "dirdelete",
    "cpuio",
]
IrqHint = Literal["default", "urgent", "barrier", "untagged"]


def smallest_block(bs: int, split: tuple[tuple[int, float], ...], brange: tuple[int, int] | None) -> int:
    """The smallest block size of one direction: its bssplit's, else its bsrange's, else bs."""
    return min(s for s, _p in split) if split else brange[0] if brange else bs


class FioJob(BaseModel):
    """One fio job section after ``[global]`` inheritance (``numjobs`` not expanded).

    Times are integer nanoseconds, sizes integer bytes, rates IO/s (``None`` = unlimited).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    rw: RwMode = "read"
    rwmixread: int = Field(50, ge=0, le=100)  # percent of reads for rw/readwrite/randrw
    bs_read_bytes: int = Field(4096, gt=0, le=MAX_RW_BYTES)
    bs_write_bytes: int = Field(4096, gt=0, le=MAX_RW_BYTES)
    bs_trim_bytes: int = Field(4096, gt=0, le=SIZE_MAX_BYTES)  # a discard is not bounded by MAX_RW_COUNT
    # mixed block sizes (bssplit: (bytes, percent) entries; bsrange: (min, max)); empty/None: bs
    bssplit_read: tuple[tuple[int, float], ...] = ()
    bssplit_write: tuple[tuple[int, float], ...] = ()
    bsrange_read: tuple[int, int] | None = None
    bsrange_write: tuple[int, int] | None = None
    numjobs: int = Field(1, ge=1, le=FIO_MAX_JOBS)
    ioengine: Engine = "psync"
    # the library fio's engine goes through (xnvme, libblkio: scenarios/inputs/fio/engines.py) and its
    # backend; ``ioengine`` is then the modelled engine of that backend
    engine_library: Literal["", "xnvme", "libblkio"] = ""
    engine_backend: str = ""
    libblkio_wait_mode: Literal["block", "eventfd", "loop"] = "block"
    iodepth: int = Field(1, ge=1)
    iodepth_batch_submit: int = Field(1, ge=1)  # fio: 0 or > iodepth means iodepth
    iodepth_batch_complete_min: int = Field(1, ge=0)  # 0: reap without waiting
    iodepth_batch_complete_max: int = Field(0, ge=0)  # fio default: = complete_min; <= iodepth
    iodepth_low: int = Field(0, ge=0)  # fio: 0 or > iodepth means iodepth (the model applies it)
    hipri: bool = False
    direct: bool = False
    invalidate: bool = True  # fio's invalidate: drop the file's cached pages at open (buffered IO)
    pre_read: bool = False  # fio's pre_read: read the file into the page cache first (clears invalidate)
    fadvise_hint: Literal["0", "1", "sequential", "random"] = "1"  # 1: by the job's pattern
    sync: Literal["none", "sync", "dsync"] = "none"  # fio's sync: O_SYNC / O_DSYNC at open
    #: fio's ioscheduler: the IO scheduler fio switches the job's devices to before the run
    #: (backend.c switch_ioscheduler writes it to queue/scheduler); None: the platform's
    ioscheduler: str | None = None
    end_fsync: bool = False  # fio's end_fsync / fsync_on_close: the files synced when the IO ends
    fsync: int = Field(0, ge=0)  # fio's fsync / fdatasync: a sync of the file after every N writes (0: none)
    runtime_ns: int | None = Field(None, gt=0, le=TIME_MAX_NS)
    ramp_time_ns: int = Field(0, ge=0, le=TIME_MAX_NS)
    time_based: bool = False
    size_bytes: int | None = Field(None, gt=0, le=SIZE_MAX_BYTES)
    io_size_bytes: int | None = Field(None, gt=0, le=SIZE_MAX_BYTES)  # fio's io_size: the IO amount (None: size)
    fill_device: bool = False  # fio's fill_device: size is what the device has past the offset (ENOSPC ends it)
    size_percent: float | None = Field(None, gt=0, le=100)  # size=N%: a share of the device's capacity
    offset_percent: float | None = Field(None, ge=0, lt=100)  # offset=N%: likewise
    offset_bytes: int = Field(0, ge=0, le=SIZE_MAX_BYTES)
    cpus_allowed: tuple[int, ...] | None = None
    numa_cpu_nodes: tuple[int, ...] | None = None  # None: not set; resolved against the platform's nodes
    # numa_mem_policy as (mode, nodes): None for default/local (first touch: the thread's own node)
    numa_mem_policy: tuple[Literal["prefer", "bind", "interleave"], tuple[int, ...]] | None = None
    cpus_allowed_policy: Literal["shared", "split"] = "shared"
    rate_iops_read: int | None = Field(None, gt=0)
    rate_iops_write: int | None = Field(None, gt=0)
    rate_read_bps: int | None = Field(None, gt=0)  # fio's rate: bytes/s per direction (wins over rate_iops)
    rate_write_bps: int | None = Field(None, gt=0)
    rate_process: Literal["linear", "poisson"] = "linear"
    # fio's rate_min (bytes/s) / rate_iops_min: a job under it after fio's 2 s settle period ends
    # with an error; checked every rate_cycle ms
    rate_min_read_bps: int | None = Field(None, gt=0)
    rate_min_write_bps: int | None = Field(None, gt=0)
    rate_iops_min_read: int | None = Field(None, gt=0)
    rate_iops_min_write: int | None = Field(None, gt=0)
    rate_cycle_ms: int = Field(1000, gt=0)
    number_ios: int = Field(0, ge=0)  # per thread; 0: no limit
    loops: int = Field(1, ge=1)
    startdelay_ns: int = Field(0, ge=0, le=TIME_MAX_NS)
    startdelay_max_ns: int | None = Field(None, ge=0, le=TIME_MAX_NS)  # a range: uniform per thread
    offset_increment_bytes: int = Field(0, ge=0, le=SIZE_MAX_BYTES)
    # rw=...:<n>: random jobs take a new random offset every n IOs (the others per rw_sequencer);
    # sequential jobs skip n bytes after each IO, or step back -n bytes when n < 0 (0: no modifier)
    rw_modifier: int = Field(0, ge=-SIZE_MAX_BYTES, le=SIZE_MAX_BYTES)
    rw_sequencer: Literal["sequential", "identical"] = "sequential"
    # IO priorities (ionice classes: 1 RT, 2 BE, 3 IDLE; levels 0 highest .. 7): the job's
    # (None: not set) and, for cmdprio_percentage of the IOs, the per-command ones
    prio: int | None = Field(None, ge=0, le=7)
    prioclass: int | None = Field(None, ge=0, le=3)
    cmdprio_percentage_read: int = Field(0, ge=0, le=100)
    cmdprio_percentage_write: int = Field(0, ge=0, le=100)
    cmdprio_class_read: int = Field(1, ge=1, le=3)
    cmdprio_class_write: int = Field(1, ge=1, le=3)
    cmdprio_read: int = Field(0, ge=0, le=7)
    # cmdprio_bssplit per direction: (block size bytes, percent, class or None, level or None)
    cmdprio_bssplit_read: tuple[tuple[int, float, int | None, int | None], ...] = ()
    cmdprio_bssplit_write: tuple[tuple[int, float, int | None, int | None], ...] = ()
    cmdprio_write: int = Field(0, ge=0, le=7)
    thinktime_ns: int = Field(0, ge=0, le=TIME_MAX_NS)
    latency_target_ns: int = Field(0, ge=0, le=TIME_MAX_NS)  # 0: no depth search
    latency_window_ns: int = Field(0, ge=0, le=TIME_MAX_NS)
    latency_percentile: float = Field(100.0, gt=0, le=100)
    latency_run: bool = False
    # fio's steadystate: (criterion, limit, limit is a percent), or None; its window, ramp and period
    steadystate: tuple[str, float, bool] | None = None
    ss_dur_ns: int = Field(0, ge=0, le=TIME_MAX_NS)  # 0: no steady-state check
    ss_ramp_ns: int = Field(0, ge=0, le=TIME_MAX_NS)
    ss_interval_ns: int = Field(1_000_000_000, gt=0, le=TIME_MAX_NS)
    # random offsets (models/ioengines/offsets.py): distribution, its value (zipf theta, pareto h,
    # normal deviation in %) and center; zones (access %, range % or bytes) per direction
    random_distribution: Literal["random", "zipf", "pareto", "normal", "zoned", "zoned_abs", "sequence"] = "random"
    random_distribution_value: float | None = None
    random_distribution_center: float | None = Field(None, ge=0, le=1)
    zones_read: tuple[tuple[float, float], ...] = ()
    zones_write: tuple[tuple[float, float], ...] = ()
    # sequence: the block indices taken in turn, repeated; random_sequence_stride: each repetition
    # one sequence length further on (fio's "strided block group")
    random_sequence: tuple[int, ...] = ()
    random_sequence_stride: bool = False
    random_generator: Literal["tausworthe", "lfsr", "tausworthe64"] = "tausworthe"
    verify_async: int = Field(0, ge=0)  # fio's verify_async: verify threads per job thread
    continue_on_error: str = "none"  # fio's continue_on_error (scenarios/inputs/fio/errors.py)
    ignore_error: tuple[tuple[int, ...] | None, tuple[int, ...] | None, tuple[int, ...] | None] = (None, None, None)
    percentage_random_read: int = Field(100, ge=0, le=100)
    percentage_random_write: int = Field(100, ge=0, le=100)
    # fio's files (models/ioengines/files.py, models/os/fs/filesystem.py); no filename and no
    # directory: the raw device
    filename: tuple[str, ...] = ()
    directory: tuple[str, ...] = ()
    filename_format: str = "$jobname.$jobnum.$filenum"
    nrfiles: int = Field(1, ge=1)
    filesize_bytes: tuple[int, int] | None = None  # (lo, hi): each file drawn in it
    file_service_type: Literal["roundrobin", "random", "sequential", "zipf", "pareto", "normal"] = "roundrobin"
    file_service_value: float | None = None  # IOs per turn (roundrobin/random/sequential) or the skew
    # fio's job synchronization: start after the earlier jobs (stonewall) or the named one
    # (wait_for); reporting groups; exitall ends the job's group / all / the running jobs
    stonewall: bool = False
    new_group: bool = False
    wait_for: str | None = None
    exitall: bool = False
    exitall_on_error: bool = False
    exit_what: Literal["group", "all", "stonewall"] = "group"
    io_submit_mode: Literal["inline", "offload"] = "inline"  # offload: models/ioengines/offload.py
    nice: int = Field(0, ge=-20, le=19)  # the threads' nice value (CFS load weight)
    # fio's flow control (models/ioengines/flow.py): weight (0: none), flow id, held-back sleep
    flow: int = Field(0, ge=0)
    flow_id: int = 0
    flow_sleep_ns: int = Field(0, ge=0, le=TIME_MAX_NS)
    sqthread_poll: bool = False
    sqthread_poll_cpu: int | None = Field(None, ge=0)
    registerfiles: bool = False
    fixedbufs: bool = False
    nowait: bool = False
    # fio's verify (models/ioengines/verify.py): the checksum type ("none": no verify), the verify
    # phase after the writes, verify_only's phantom writes, the interleaved backlog (blocks; 0: none),
    # the checksummed chunk (0: the block size), and the pattern that fills writes ("": random data)
    verify: str = "none"
    do_verify: bool = True
    verify_only: bool = False
    verify_backlog: int = Field(0, ge=0)
    verify_backlog_batch: int = Field(0, ge=0)  # 0: verify_backlog
    verify_interval_bytes: int = Field(0, ge=0, le=SIZE_MAX_BYTES)
    verify_pattern: str = ""
    # zoned block devices (fio's zonemode; models/ioengines/zbd.py) and flexible data placement
    zonemode: Literal["none", "strided", "zbd"] = "none"
    zonesize_bytes: int = Field(0, ge=0, le=SIZE_MAX_BYTES)  # 0: the device's zone size (zbd)
    zonerange_bytes: int = Field(0, ge=0, le=SIZE_MAX_BYTES)
    zoneskip_bytes: int = Field(0, ge=0, le=SIZE_MAX_BYTES)
    zonecapacity_bytes: int = Field(0, ge=0, le=SIZE_MAX_BYTES)
    size_zones: int | None = Field(None, ge=1)  # size=Nz: N zones (resolved against the zone size)
    offset_zones: int | None = Field(None, ge=0)  # offset=Nz
    max_open_zones: int = Field(0, ge=0)  # 0: the device's limit
    job_max_open_zones: int = Field(0, ge=0)  # 0: no limit
    zone_reset_threshold: float = Field(0.0, ge=0, le=1)
    zone_reset_frequency: float = Field(0.0, ge=0, le=1)
    ignore_zone_limits: bool = False
    read_beyond_wp: bool = False
    fdp: bool = False
    fdp_pli: tuple[int, ...] = ()  # placement ID indices (empty: all the device's)
    fdp_pli_select: Literal["roundrobin", "random"] = "roundrobin"
    # io_uring_cmd's write_mode (scenarios/inputs/fio/write_mode.py): (mode, percent) pairs; (): Write
    write_mode: tuple[tuple[Literal["write", "uncor", "zeroes", "verify", "zone_append"], float], ...] = ()
    # NVMe protection information of io_uring_cmd (scenarios/inputs/fio/protection.py): the separate
    # metadata buffer per IO, PRACT, the PRCHK checks, the application tag and its mask; RWF_ATOMIC
    md_per_io_size_bytes: int = Field(0, ge=0, le=SIZE_MAX_BYTES)
    pi_act: bool = True
    pi_chk: tuple[Literal["GUARD", "APPTAG", "REFTAG"], ...] = ()
    apptag: int = Field(0x1234, ge=0, le=0xFFFF)
    apptag_mask: int = Field(0xFFFF, ge=0, le=0xFFFF)
    atomic: bool = False
    cpuload: int = Field(0, ge=0)  # cpuio: percent of a CPU (0: not set; fio clamps above 100)
    cpuchunks_us: int = Field(50_000, gt=0)  # cpuio: each burn's length (fio's cpucycle)
    stacksim_irq_hint: IrqHint = "default"
    stacksim_fio_version: str = "3.42"  # fio's release (models.os.kernel_version.FIO_DEFER_TASKRUN)
    ignored_options: tuple[str, ...] = ()  # option names (as written) accepted without effect
    source: str = "<set>"  # "file.fio:[jobname]"

    @model_validator(mode="before")
    @classmethod
    def _fio_batch_rules(cls, data: Any) -> Any:
        """Apply fio's fixups: batch_submit 0/>iodepth -> iodepth; complete_max defaults to
        complete_min and is clamped to iodepth; complete_min is clamped to iodepth (fio clamps it
        to the in-flight count when reaping, which never exceeds iodepth)."""
        if not isinstance(data, dict):
            return data
        d = dict(data)
        depth = d.get("iodepth", 1)
        if not isinstance(depth, int) or depth < 1:
            return d  # field validation reports it
        submit = d.get("iodepth_batch_submit", 1)
        if isinstance(submit, int) and (submit == 0 or submit > depth):
            d["iodepth_batch_submit"] = depth
        cmin = d.get("iodepth_batch_complete_min", 1)
        if isinstance(cmin, int):
            cmin = d["iodepth_batch_complete_min"] = min(cmin, depth)
            cmax = d.get("iodepth_batch_complete_max", 0)
            if isinstance(cmax, int):
                d["iodepth_batch_complete_max"] = max(min(cmax, depth), cmin)
        return d

    @model_validator(mode="after")
    def _cmdprio_exclusive(self) -> "FioJob":
        """fio: cmdprio_bssplit is mutually exclusive with cmdprio_percentage."""
        if (self.cmdprio_bssplit_read or self.cmdprio_bssplit_write) and (
            self.cmdprio_percentage_read or self.cmdprio_percentage_write
        ):
            raise ValueError("cmdprio_bssplit and cmdprio_percentage are mutually exclusive (fio refuses both)")
        return self

    @model_validator(mode="after")
    def _kernel_limits(self) -> "FioJob":
        """Block sizes within one request's limit (MAX_RW_BYTES), an offset range within 64 bits,
        and an iodepth the engine's kernel interface accepts (ENGINE_MAX_DEPTH)."""
        sizes = [s for s, _p in (*self.bssplit_read, *self.bssplit_write)]
        sizes += [s for r in (self.bsrange_read, self.bsrange_write) if r for s in r]
        if any(s > MAX_RW_BYTES for s in sizes):
            raise ValueError(
                f"block size {max(sizes)} bytes is above the kernel's largest single transfer "
                f"(MAX_RW_COUNT = {MAX_RW_BYTES} bytes)"
            )
        if self.offset_bytes + (self.size_bytes or 0) > SIZE_MAX_BYTES:
            raise ValueError(f"offset + size = {self.offset_bytes + (self.size_bytes or 0)} bytes is beyond 64 bits")
        limit = ENGINE_MAX_DEPTH.get(self.ioengine)
        if limit is not None and self.iodepth > limit:
            raise ValueError(
                f"iodepth={self.iodepth} is above what ioengine={self.ioengine} can have in flight "
                f"({limit}, {_ENGINE_DEPTH_LIMIT[self.ioengine]}); fio would fail to set up the queue"
            )
        return self

    @model_validator(mode="after")
    def _size_holds_a_block(self) -> "FioJob":
        """A region smaller than the smallest block size holds no IO: fio refuses such a job."""
        if self.size_bytes is None:
            return self
        smallest = min(
            smallest_block(self.bs_read_bytes, self.bssplit_read, self.bsrange_read),
            smallest_block(self.bs_write_bytes, self.bssplit_write, self.bsrange_write),
        )
        if self.size_bytes < smallest:
            raise ValueError(
                f"size ({self.size_bytes} bytes) is smaller than the block size ({smallest} bytes): "
                "no IO fits in it (fio refuses the job too)"
            )
        return self

    @property
    def queue_depth(self) -> int:
        """IOs one job keeps in flight: fio's synchronous engines ignore iodepth (always 1), unless
        the submission is offloaded to iodepth workers; a buffered libaio job runs each IO inside
        io_submit (1)."""
        if self.ioengine in BUFFERED_ENGINES and self.ioengine not in ASYNC_BUFFERED_ENGINES and not self.direct:
            return 1
        if self.ioengine in FS_META_ENGINES or self.ioengine in CPU_ENGINES:
            return 1  # (fio's FIO_SYNCIO engines)
        return 1 if self.ioengine in SYNC_ENGINES and self.io_submit_mode == "inline" else self.iodepth

    def continues_after(self, op: str, err: int) -> bool:
        """fio goes on after error ``err`` on an IO of direction ``op`` (continue_on_error,
        ignore_error: :mod:`models.ioengines.td_error`); else the error ends the job."""
        return non_fatal(self.continue_on_error, self.ignore_error, op, err)

    @property
    def rwmixwrite(self) -> int:
        """Percent of writes in mixed IO (100 - rwmixread)."""
        return 100 - self.rwmixread
