"""Parse fio job files (INI) into validated :class:`FioJob` descriptions.

fio behaviours mirrored: ``[global]`` sets defaults for the job sections that follow it (a
later ``[global]`` affects only later jobs); a job's own options override them and, within a
section, the last occurrence of an option wins; ``;`` and ``#`` start comments (anywhere on a line,
as fio strips them); fio's set-type options (``time_based``, ``group_reporting``, ``fixedbufs``,
...) may be given without a value (= 1) while plain booleans (``direct``) need one, as in fio 3.33;
``include`` lines, ``${VAR}`` expansion, reserved keywords and arithmetic are handled as fio does
(:mod:`.language`); ``stonewall``, ``wait_for``, ``new_group`` and ``exitall`` become job fields
(scenarios/run/assembly.py orders the jobs' starts); ``numjobs`` is kept, not expanded. All bad
input raises ConfigError naming the file, job, option and line. Units of the resulting fields are in
their names (``_ns``, ``_bytes``).
"""

from __future__ import annotations

import difflib
import errno
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Literal, Mapping

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from models.ioengines import (
    ASYNC_BUFFERED_ENGINES,
    BUFFERED_ENGINES,
    CPU_ENGINES,
    FILE_OP_ENGINES,
    FS_META_ENGINES,
    MAPPED_ENGINES,
    SYNC_ENGINES,
)
from models.ioengines.spdk import parse_transport_id
from models.ioengines.steadystate import CRITERIA
from models.os.fs.filesystem import is_device
from models.os.kernel_version import parse_version
from simcore.config import read_text_file
from simcore.errors import ConfigError

from . import engines as lib_engines
from . import options as opts
from .errors import non_fatal, parse_continue_on_error, parse_ignore_error
from .language import expand, platform_keywords, value_kind
from .protection import HANDLERS as PROTECTION_HANDLERS
from .protection import check_atomic
from .units import (
    SIZE_MAX_BYTES,
    TIME_MAX_NS,
    ascii_number_text,
    parse_bool,
    parse_bsrange,
    parse_bssplit,
    parse_cpu_list,
    parse_cpumask,
    parse_int,
    parse_size,
    parse_time_ns,
    split_rwt,
)
from .workload import (
    parse_file_service,
    parse_filesize,
    parse_percentage_random,
    parse_random_distribution,
    split_names,
)
from .zoned import HANDLERS as ZONED_HANDLERS
from .zoned import check_zoned, zone_count

__all__ = ["FioJob", "FioJobFile", "parse_fio_file", "parse_fio_text", "job_from_options", "apply_overrides"]

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


def _smallest_block(bs: int, split: tuple[tuple[int, float], ...], brange: tuple[int, int] | None) -> int:
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
    random_distribution: Literal["random", "zipf", "pareto", "normal", "zoned", "zoned_abs"] = "random"
    random_distribution_value: float | None = None
    random_distribution_center: float | None = Field(None, ge=0, le=1)
    zones_read: tuple[tuple[float, float], ...] = ()
    zones_write: tuple[tuple[float, float], ...] = ()
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
            _smallest_block(self.bs_read_bytes, self.bssplit_read, self.bsrange_read),
            _smallest_block(self.bs_write_bytes, self.bssplit_write, self.bsrange_write),
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
        ignore_error: scenarios/inputs/fio/errors.py); else the error ends the job."""
        return non_fatal(self.continue_on_error, self.ignore_error, op, err)

    @property
    def rwmixwrite(self) -> int:
        """Percent of writes in mixed IO (100 - rwmixread)."""
        return 100 - self.rwmixread


class FioJobFile(BaseModel):
    """A parsed job file: jobs in file order, and the union of their ignored options."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str
    jobs: tuple[FioJob, ...]
    ignored_options: tuple[str, ...] = ()


# ------------------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class _Item:
    """One ``key[=value]`` occurrence and where it came from (for error messages)."""

    key: str
    value: str | None
    spec: opts.OptionSpec
    where: str  # "t.fio line 7", "t.fio line 3 [global]", "override", ...
    error: ConfigError | None = None  # an option fio's catalogue lacks: raised once the job's engine is checked
    raw: str | None = None  # a numeric value whose ${VAR} expanded to nothing: its text (fio's parse fails)


#: the spec of an unknown option's item (its ``error`` says why)
_UNKNOWN = opts.OptionSpec("", "ignored")


_FIELD_OPTION = {
    "bs_read_bytes": "bs",
    "bs_write_bytes": "bs",
    "numjobs": "numjobs",
    "runtime_ns": "runtime",
    "ramp_time_ns": "ramp_time",
    "size_bytes": "size",
    "offset_bytes": "offset",
    "thinktime_ns": "thinktime",
    "iodepth": "iodepth",
}
_LIMIT_REASON = {
    "bs": f"the kernel's largest single transfer (MAX_RW_COUNT = {MAX_RW_BYTES} bytes = 2 GiB - 4 KiB)",
    "numjobs": f"fio's limit of {FIO_MAX_JOBS} jobs (its default --max-jobs)",
}
_JOB_FIELDS = {
    name: f.default for name, f in FioJob.model_fields.items() if name not in ("name", "ignored_options", "source")
}


def _unknown(key: str, context: str) -> ConfigError:
    if key.startswith(opts.STACKSIM_PREFIX):
        known = ", ".join(sorted(opts.STACKSIM_OPTIONS))
        return ConfigError(f"unknown stacksim option '{key}' {context}; known stacksim options: {known}")
    names = {n.lower(): n for n in (*opts.FIO_OPTIONS, *opts.STACKSIM_OPTIONS)}
    close = [names[m] for m in difflib.get_close_matches(key.lower(), names, n=3, cutoff=0.7)]
    hint = f". Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    return ConfigError(
        f"unknown fio option '{key}' {context}: fio {opts.FIO_VERSION}'s option "
        f"catalogue has no such option, fio would reject it too{hint}"
    )


def _item(
    key: str,
    value: str | None,
    *,
    section: str,
    where: str,
    keywords: Mapping[str, int] | None = None,
    env: Mapping[str, str] | None = None,
) -> _Item:
    what = "section [global]" if section == "global" else f"job '{section}'"
    if not key:
        raise ConfigError(f"missing option name before '=' in {what} ({where})")
    spec = opts.lookup(key)
    if spec is None:
        raise _unknown(key, f"in {what} ({where})")
    if value is not None and ("$" in value or "(" in value):
        entry = opts.CATALOGUE_NAMES.get(key)
        kind = value_kind(entry["type"] if entry else None)
        raw = value
        try:
            value = expand(
                value,
                option=key,
                kind=kind,
                keywords=platform_keywords(None) if keywords is None else keywords,
                env=env,
            )
        except ConfigError as exc:
            raise ConfigError(f"{exc} in {what} ({where})") from None
        if kind != "str" and not value.strip() and raw.strip():
            return _Item(key, value, spec, where, raw=raw)
    return _Item(key, value, spec, where)


def _empty_number(key: str, raw: str) -> str:
    """A numeric option whose ``${VAR}`` expanded to nothing: fio 3.41's fio_option_dup_subs
    substitutes the empty string for an unset variable (options.c), and an empty number fails to
    parse (parse.c: str_to_decimal and check_int return 1 on an empty string), so parse_option logs
    "fio: failed parsing KEY=RAW", the section is dropped and fio exits."""
    unset = ", ".join("${" + n + "}" for n in re.findall(r"\$\{([^}]*)\}", raw))
    return (
        f"option '{key}' needs a value: {unset} is not set in the environment, so it expands to the empty"
        f" string, which fio rejects too (fio: 'fio: failed parsing {key}={raw}')"
    )


def _strip_comment(line: str) -> str:
    cut = min((i for i in (line.find(";"), line.find("#")) if i >= 0), default=len(line))
    return line[:cut].strip()


#: Deepest nesting of ``include`` directives (an include cycle stops here with a message).
MAX_INCLUDE_DEPTH = 16


def _lines(text: str, path: str, depth: int = 0) -> Any:
    """``(line, where)`` for each non-empty line, ``include FILE`` lines replaced by the
    lines of FILE (relative paths: to the including file's directory, as fio resolves them)."""
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = _strip_comment(raw)
        if not line:
            continue
        where = f"{path} line {lineno}"
        parts = line.split(None, 1)
        if parts[0] == "include" and "=" not in line:
            if len(parts) < 2:
                raise ConfigError(f"'include' needs a file name ({where})")
            if depth >= MAX_INCLUDE_DEPTH:
                raise ConfigError(f"include nested deeper than {MAX_INCLUDE_DEPTH} files ({where}): an include cycle?")
            base = Path(path).parent if not path.startswith("<") else Path(".")
            target = Path(parts[1].strip())
            target = target if target.is_absolute() else base / target
            sub = read_text_file(target, what=f"included file (include at {where})")
            for item in _lines(sub, str(target), depth + 1):
                if item[0].startswith("["):
                    raise ConfigError(
                        f"included file {target} has a section header {item[0]} ({item[1]}); "
                        "fio does not allow [sections] in included files"
                    )
                yield item
            continue
        yield line, where


def parse_fio_text(
    text: str,
    *,
    path: str = "<string>",
    keywords: Mapping[str, int] | None = None,
    env: Mapping[str, str] | None = None,
) -> FioJobFile:
    """Parse fio job-file text; ``path`` is used in messages and ``FioJob.source``.

    ``keywords``: values of fio's reserved keywords (``$ncpus``: :func:`language.platform_keywords`);
    ``env``: the environment for ``${VAR}`` (default: the process environment, as fio).
    """
    global_items: list[_Item] = []
    jobs: list[tuple[str, list[_Item], list[_Item]]] = []  # name, inherited globals, own items
    current: list[_Item] | None = None
    section = ""
    for line, where in _lines(text, path):
        if line.startswith("["):
            section = line[1:-1].strip() if line.endswith("]") else ""
            if not section:
                raise ConfigError(f"malformed section header '{line}' ({where})")
            if section == "global":
                current = global_items
            else:
                current = []
                jobs.append((section, list(global_items), current))
            continue
        key, eq, value = line.partition("=")
        key = key.strip()
        if current is None:
            raise ConfigError(f"option '{key}' outside of any [section] ({where}); fio would reject it too")
        if section == "global":
            where += " [global]"
        try:
            item = _item(key, value.strip() if eq else None, section=section, where=where, keywords=keywords, env=env)
        except ConfigError as exc:
            if opts.lookup(key) is not None:
                raise
            item = _Item(key, None, _UNKNOWN, where, exc)  # an engine's option: its engine may be refused first
        current.append(item)
    if not jobs:
        unknown = next((it.error for it in global_items if it.error is not None), None)
        raise unknown or ConfigError(f"no job sections in {path} (only [global] or nothing); fio would run no job")
    built = [_build(name, [*inherited, *own], source=f"{path}:[{name}]") for name, inherited, own in jobs]
    _check_waits(built)
    ignored = sorted({n for job in built for n in job.ignored_options})
    return FioJobFile(path=path, jobs=tuple(built), ignored_options=tuple(ignored))


def _check_waits(jobs: list[FioJob]) -> None:
    """fio's wait_for rules: the waitee is an earlier job (no forward references), with a unique
    name, and not the job itself."""
    for i, job in enumerate(jobs):
        if job.wait_for is None:
            continue
        names = [j.name for j in jobs[:i]]
        if job.wait_for == job.name:
            raise ConfigError(f"{job.source}: option 'wait_for={job.wait_for}': a job cannot wait for itself")
        if job.wait_for not in names:
            later = any(j.name == job.wait_for for j in jobs[i + 1 :])
            raise ConfigError(
                f"{job.source}: option 'wait_for={job.wait_for}': "
                + (
                    "the waitee must be defined before the waiter (fio allows no forward references)"
                    if later
                    else f"no earlier job is named '{job.wait_for}' (jobs before it: {', '.join(names) or 'none'})"
                )
            )
        if names.count(job.wait_for) > 1:
            raise ConfigError(
                f"{job.source}: option 'wait_for={job.wait_for}': several jobs have that name; "
                "fio needs a unique waitee"
            )


def parse_fio_file(
    path: str | Path, *, keywords: Mapping[str, int] | None = None, env: Mapping[str, str] | None = None
) -> FioJobFile:
    """Read and parse a fio job file (see :func:`parse_fio_text`)."""
    return parse_fio_text(read_text_file(path, what="job file"), path=str(path), keywords=keywords, env=env)


def job_from_options(options: dict[str, str], *, name: str = "job", source: str = "<set>") -> FioJob:
    """Build one job from fio ``key: value`` options (e.g. ``--set`` style); ``None``/"" = no value."""
    items = [
        _item(k, None if v is None or str(v) == "" else str(v), section=name, where=source) for k, v in options.items()
    ]
    return _build(name, items, source=source)


def apply_overrides(job: FioJob, overrides: dict[str, str]) -> FioJob:
    """Return ``job`` with fio-key overrides (e.g. ``{"bs": "8k", "numjobs": "4"}``) applied on
    top of its resolved values, validated like a job file."""
    items = [
        _item(k, None if v is None or str(v) == "" else str(v), section=job.name, where="override")
        for k, v in overrides.items()
    ]
    base = job.model_dump(exclude={"name", "ignored_options", "source"})
    new = _build(job.name, items, source=job.source, base=base)
    ignored = tuple(sorted(set(job.ignored_options) | set(new.ignored_options)))
    return new.model_copy(update={"ignored_options": ignored})


# ------------------------------------------------------------------------------------------------
_Handler = Callable[[dict[str, Any], str | None, int], None]


def _set_rw(st: dict[str, Any], v: str | None, kb: int) -> None:
    val = (v or "").strip()  # case-sensitive, as in fio
    if not val:
        raise ConfigError("option 'rw' needs a value")
    val, sep, nr = val.partition(":")
    if val not in opts.RW_MODES + opts.TRIM_MODES:
        raise ConfigError(f"option 'rw': unknown value '{val}' (allowed: {', '.join(opts.RW_MODES + opts.TRIM_MODES)})")
    st["rw"] = val
    st["rw_modifier"] = 0
    if sep:
        if val.startswith("rand"):  # fio's str_rw_cb: atoi, IOs per new random offset
            st["rw_modifier"] = parse_int(nr, option="rw", minimum=1)
        else:  # a size added to each sequential offset: holes, or backwards when negative (fio's
            # str_rw_cb reads it with str_to_decimal into a signed ddir_seq_add; fio's examples/backwards-read.fio)
            text = nr.strip()
            size = parse_size(text.removeprefix("-"), option="rw", kb_base=kb, allow_zero=True)
            st["rw_modifier"] = -size if text.startswith("-") else size


def _set_startdelay(st: dict[str, Any], v: str | None, kb: int) -> None:
    """fio's ``irange(time)``: one time, or ``lo-hi`` (each thread draws uniformly in it)."""
    text = (v or "").strip()
    lo_s, sep, hi_s = text.partition("-") if not text.startswith("-") else (text, "", "")
    lo = parse_time_ns(lo_s, option="startdelay")
    hi = parse_time_ns(hi_s, option="startdelay") if sep else None
    if hi is not None and hi < lo:
        raise ConfigError(f"option 'startdelay={text}': the range ends before it starts")
    st["startdelay_ns"], st["startdelay_max_ns"] = lo, hi


def _set_ioengine(st: dict[str, Any], v: str | None, kb: int) -> None:
    val = (v or "").strip()
    if not val:
        raise ConfigError("option 'ioengine' needs a value")
    if not val.startswith("external:"):
        val = val.lower()  # fio loads engines case-insensitively
    if val not in opts.KNOWN_ENGINES and not val.startswith("external:"):
        close = difflib.get_close_matches(val, sorted(opts.KNOWN_ENGINES), n=1)
        hint = f"; did you mean '{close[0]}'?" if close else ""
        raise ConfigError(f"option 'ioengine': unknown ioengine '{val}', fio would not load it{hint}")
    val = lib_engines.ENGINE_ALIASES.get(val, val)
    st["engine_library"] = ""
    if val in ("xnvme", "libblkio"):  # the backend's engine is chosen by _resolve_library
        st["engine_library"] = val
        return
    if val not in opts.MODELLED_ENGINES:
        raise ConfigError(
            f"option 'ioengine': ioengine '{val}' is not modelled by stacksim: {lib_engines.refusal(val)} "
            f"(modelled: {', '.join(opts.MODELLED_ENGINES)}; xnvme and libblkio on an io_uring backend)"
        )
    st["ioengine"] = val


def _set_rwt(option: str, field_r: str, field_w: str, parse: Callable[[str, int], Any], default: Any) -> _Handler:
    """Handler for a ``read[,write[,trim]]`` option; the trim value is validated, then dropped."""

    def handler(st: dict[str, Any], v: str | None, kb: int) -> None:
        r, w, _ = (None if p is None else parse(p, kb) for p in split_rwt(v, option=option))
        st[field_r] = default if r is None else r
        st[field_w] = default if w is None else w

    return handler


def _set_bs(st: dict[str, Any], v: str | None, kb: int) -> None:
    """``bs=read[,write[,trim]]``: the three sizes (trims: fio's third value)."""
    r, w, t = (None if p is None else parse_size(p, option="bs", kb_base=kb) for p in split_rwt(v, option="bs"))
    st["bs_read_bytes"] = 4096 if r is None else r
    st["bs_write_bytes"] = 4096 if w is None else w
    st["bs_trim_bytes"] = 4096 if t is None else t


def _flow_weight(v: str | None) -> int:
    """``flow``: a weight (fio 3.41: the share of the flow's IOs); older fio's signed counter
    increments are refused with the new meaning."""
    w = parse_int((v or "").strip().lstrip("-") or None, option="flow", minimum=0)
    if (v or "").strip().startswith("-"):
        raise ConfigError(
            f"option 'flow={v.strip()}': a negative flow (older fio's counter steps) is not a weight; "
            "fio 3.41 takes weights >= 0 (e.g. flow=8 and flow=1 for a 8:1 ratio)"
        )
    return w


def _set_field(field: str, convert: Callable[[str | None, int], Any]) -> _Handler:
    def handler(st: dict[str, Any], v: str | None, kb: int) -> None:
        st[field] = convert(v, kb)

    return handler


def _numa_mem_policy(text: str | None) -> tuple[str, tuple[int, ...]] | None:
    """fio's ``numa_mem_policy=mode[:nodelist]`` (fio's options.c str_numa_mpol_cb): default and
    local need no list (None: the memory is local to the thread), prefer takes one node, bind and
    interleave a node list."""
    mode, _, nodes = (text or "default").strip().partition(":")
    mode = mode.strip().lower()
    if mode in ("default", "local"):
        if nodes.strip():
            raise ConfigError(f"option 'numa_mem_policy': mode '{mode}' takes no node list")
        return None
    if mode not in ("prefer", "bind", "interleave"):
        raise ConfigError(f"option 'numa_mem_policy': unknown mode '{mode}' (default, prefer, bind, interleave, local)")
    if not nodes.strip():
        raise ConfigError(f"option 'numa_mem_policy': mode '{mode}' needs a node list ({mode}:NODES)")
    parsed = parse_cpu_list(nodes, option="numa_mem_policy")
    if mode == "prefer" and len(parsed) != 1:
        raise ConfigError("option 'numa_mem_policy': prefer takes one node (prefer:N)")
    return mode, parsed


def _percent(option: str, text: str, lo_open: bool) -> float:
    try:
        pct = float(ascii_number_text(text[:-1], option))
    except ValueError:
        raise ConfigError(f"option '{option}': bad percentage '{text}' (expected e.g. 20%)") from None
    if not ((0 < pct) if lo_open else (0 <= pct)) or pct > 100 or (not lo_open and pct == 100):
        rng = "between 1 and 100" if lo_open else "from 0 to below 100"
        raise ConfigError(f"option '{option}': {text} is not a percentage {rng} (fio's range)")
    return pct


def _parse_steadystate(v: str | None) -> tuple[str, float, bool]:
    """fio's ``steadystate=criterion:limit[%]``."""
    text = (v or "").strip()
    crit, sep, lim = text.partition(":")
    if not sep or crit not in CRITERIA:
        raise ConfigError(
            f"option 'steadystate': '{text}' is not criterion:limit with a criterion of "
            f"{', '.join(CRITERIA)} (e.g. iops_slope:0.1%)"
        )
    pct = lim.strip().endswith("%")
    try:
        limit = float(ascii_number_text(lim.strip().rstrip("%"), "steadystate"))
    except ValueError:
        raise ConfigError(f"option 'steadystate': limit '{lim}' is not a number") from None
    if limit < 0:
        raise ConfigError(f"option 'steadystate': limit '{lim}' must not be negative")
    return crit, limit, pct


def _float_percent(option: str, v: str | None) -> float:
    try:
        pct = float(ascii_number_text((v or "").strip().rstrip("%"), option))
    except ValueError:
        raise ConfigError(f"option '{option}': '{v}' is not a number") from None
    if not 0 < pct <= 100:
        raise ConfigError(f"option '{option}': {pct:g} is not a percentage in (0, 100]")
    return pct


def _parse_cmdprio_bssplit(text: str, kb: int) -> tuple:
    """One direction of fio's cmdprio_bssplit: ``bs/percent[/class/level[/hint]]:...`` (fio's
    cmdprio.c); the hint is validated and dropped (no modelled scheduler reads it)."""
    out = []
    for entry in text.split(":"):
        fields = entry.strip().split("/")
        if len(fields) not in (2, 4, 5):
            raise ConfigError(
                f"option 'cmdprio_bssplit': bad entry '{entry}' (expected blocksize/percentage, "
                "blocksize/percentage/class/level or blocksize/percentage/class/level/hint)"
            )
        bs = parse_size(fields[0], option="cmdprio_bssplit", kb_base=kb)
        pct = parse_int(fields[1], option="cmdprio_bssplit", minimum=0, maximum=100)
        cls = level = None
        if len(fields) >= 4:
            cls = parse_int(fields[2], option="cmdprio_bssplit", minimum=0, maximum=3)
            level = parse_int(fields[3], option="cmdprio_bssplit", minimum=0, maximum=7)
        if len(fields) == 5:
            parse_int(fields[4], option="cmdprio_bssplit", minimum=0)
        out.append((bs, float(pct), cls, level))
    return tuple(out)


def _set_size(st: dict[str, Any], v: str | None, kb: int) -> None:
    """fio's size: bytes, or ``N%`` of the device (resolved against ``ssd.capacity_bytes`` once the
    platform is known: :func:`scenarios.config.host.resolve`)."""
    text = (v or "").strip()
    st["size_zones"] = zone_count(text, "size")
    if st["size_zones"] is not None:
        st["size_bytes"] = st["size_percent"] = None
    elif text.endswith("%"):
        st["size_percent"], st["size_bytes"] = _percent("size", text, True), None
    else:
        st["size_bytes"], st["size_percent"] = parse_size(v, option="size", kb_base=kb), None


def _set_offset(st: dict[str, Any], v: str | None, kb: int) -> None:
    """fio's offset: bytes, or ``N%`` of the device (aligned to the smallest block size)."""
    text = (v or "").strip()
    st["offset_zones"] = zone_count(text, "offset")
    if st["offset_zones"] is not None:
        st["offset_bytes"], st["offset_percent"] = 0, None
    elif text.endswith("%"):
        st["offset_percent"], st["offset_bytes"] = _percent("offset", text, False), 0
    else:
        st["offset_bytes"] = parse_size(v, option="offset", kb_base=kb, allow_zero=True)
        st["offset_percent"] = None


def _fadvise_hint(v: str | None) -> str:
    """fio's ``fadvise_hint``: a boolean (1: POSIX_FADV_SEQUENTIAL or _RANDOM by the job's pattern),
    or the advice itself."""
    text = (v or "1").strip().lower()
    if text in ("sequential", "random"):
        return text
    if text == "normal":
        return "0"
    return "1" if parse_bool(text, option="fadvise_hint") else "0"


def _sync_mode(v: str | None) -> str:
    """fio's ``sync``: none/0, sync/1 (O_SYNC), dsync (O_DSYNC) (filesetup.c: flags |= sync_io)."""
    text = (v or "").strip().lower()
    modes = {"none": "none", "0": "none", "sync": "sync", "1": "sync", "dsync": "dsync"}
    if text not in modes:
        raise ConfigError(f"option 'sync': {v!r} is not one of none, 0, sync, 1, dsync")
    return modes[text]


def _bool(option: str) -> Callable[[str | None, int], bool]:
    flag = opts.FIO_OPTIONS[option].kind == "flag"
    return lambda v, kb: parse_bool(v, option=option, flag=flag)


def _int(option: str, minimum: int, maximum: int | None = None) -> Callable[[str | None, int], int]:
    return lambda v, kb: parse_int(v, option=option, minimum=minimum, maximum=maximum)


def _fio_version(v: str | None) -> str:
    """``3.32`` or ``fio-3.32`` -> ``"3.32"``; a ConfigError naming the option otherwise."""
    text = (v or "").strip().lower().removeprefix("fio-")
    try:
        major, minor = parse_version(text, "option 'stacksim_fio_version'")
    except ValueError as e:
        raise ConfigError(str(e)) from None
    return f"{major}.{minor}"


def _choice(option: str) -> Callable[[str | None, int], str]:
    choices = opts.lookup(option).choices  # type: ignore[union-attr]

    def convert(v: str | None, kb: int) -> str:
        val = (v or "").strip().lower()
        if val not in choices:
            raise ConfigError(f"option '{option}': unknown value '{val}' (allowed: {', '.join(choices)})")
        return val

    return convert


def _verify_type(v: str | None) -> str:
    """fio's ``verify=``: a checksum type, or ``0``/``none`` (no verify: "none")."""
    val = _choice("verify")(v, 0)
    return "none" if val == "0" else val


def _rate(p: str, kb: int) -> int | None:
    return parse_int(p, option="rate_iops", minimum=0) or None  # 0 = no limit


_HANDLERS: dict[str, _Handler] = {
    "rw": _set_rw,
    "ioengine": _set_ioengine,
    "rwmixread": _set_field("rwmixread", _int("rwmixread", 0, 100)),
    "rwmixwrite": _set_field(
        "rwmixread", lambda v, kb: 100 - parse_int(v, option="rwmixwrite", minimum=0, maximum=100)
    ),
    "bs": _set_bs,
    "bssplit": _set_rwt("bssplit", "bssplit_read", "bssplit_write", lambda p, kb: parse_bssplit(p, kb_base=kb), ()),
    "blocksize_range": _set_rwt(
        "bsrange", "bsrange_read", "bsrange_write", lambda p, kb: parse_bsrange(p, kb_base=kb), None
    ),
    "numjobs": _set_field("numjobs", _int("numjobs", 1)),
    "iodepth": _set_field("iodepth", _int("iodepth", 1)),
    "iodepth_batch_submit": _set_field("iodepth_batch_submit", _int("iodepth_batch_submit", 0)),
    "iodepth_batch_complete_min": _set_field("iodepth_batch_complete_min", _int("iodepth_batch_complete_min", 0)),
    "iodepth_batch_complete_max": _set_field("iodepth_batch_complete_max", _int("iodepth_batch_complete_max", 0)),
    "direct": _set_field("direct", _bool("direct")),
    "buffered": _set_field("direct", lambda v, kb: not parse_bool(v, option="buffered")),
    "invalidate": _set_field("invalidate", _bool("invalidate")),
    "pre_read": _set_field("pre_read", _bool("pre_read")),
    "fadvise_hint": _set_field("fadvise_hint", lambda v, kb: _fadvise_hint(v)),
    "fsync": _set_field("fsync", _int("fsync", 0)),
    "sync": _set_field("sync", lambda v, kb: _sync_mode(v)),
    "end_fsync": _set_field("end_fsync", _bool("end_fsync")),
    "fsync_on_close": _set_field("end_fsync", _bool("fsync_on_close")),
    "fdatasync": _set_field("fsync", _int("fdatasync", 0)),
    "time_based": _set_field("time_based", _bool("time_based")),
    "runtime": _set_field("runtime_ns", lambda v, kb: parse_time_ns(v, option="runtime") or None),
    "ramp_time": _set_field("ramp_time_ns", lambda v, kb: parse_time_ns(v, option="ramp_time")),
    "thinktime": _set_field("thinktime_ns", lambda v, kb: parse_time_ns(v, option="thinktime", default_unit="us")),
    "size": lambda st, v, kb: _set_size(st, v, kb),
    "offset": lambda st, v, kb: _set_offset(st, v, kb),
    "io_size": _set_field("io_size_bytes", lambda v, kb: parse_size(v, option="io_size", kb_base=kb) or None),
    "fill_device": _set_field("fill_device", _bool("fill_device")),
    "cpus_allowed": _set_field("cpus_allowed", lambda v, kb: parse_cpu_list(v, option="cpus_allowed")),
    "cpumask": _set_field("cpus_allowed", lambda v, kb: parse_cpumask(v, option="cpumask")),
    "cpus_allowed_policy": _set_field("cpus_allowed_policy", _choice("cpus_allowed_policy")),
    "numa_cpu_nodes": _set_field(
        "numa_cpu_nodes",
        lambda v, kb: (-1,) if (v or "all").strip().lower() == "all" else parse_cpu_list(v, option="numa_cpu_nodes"),
    ),
    "numa_mem_policy": _set_field("numa_mem_policy", lambda v, kb: _numa_mem_policy(v)),
    "random_distribution": lambda st, v, kb: st.update(parse_random_distribution(v, kb)),
    "random_generator": _set_field("random_generator", _choice("random_generator")),
    "verify_async": _set_field("verify_async", _int("verify_async", 0)),
    "continue_on_error": _set_field("continue_on_error", lambda v, kb: parse_continue_on_error(v)),
    "ignore_error": _set_field("ignore_error", lambda v, kb: parse_ignore_error(v)),
    "percentage_random": lambda st, v, kb: st.update(parse_percentage_random(v)),
    "rate": _set_rwt(
        "rate",
        "rate_read_bps",
        "rate_write_bps",
        lambda p, kb: parse_size(p, option="rate", kb_base=kb, allow_zero=True) or None,
        None,
    ),
    "rate_process": _set_field("rate_process", _choice("rate_process")),
    "rate_min": _set_rwt(
        "rate_min",
        "rate_min_read_bps",
        "rate_min_write_bps",
        lambda p, kb: parse_size(p, option="rate_min", kb_base=kb, allow_zero=True) or None,
        None,
    ),
    "rate_iops_min": _set_rwt(
        "rate_iops_min",
        "rate_iops_min_read",
        "rate_iops_min_write",
        lambda p, kb: parse_int(p, option="rate_iops_min", minimum=0) or None,
        None,
    ),
    "rate_cycle": _set_field("rate_cycle_ms", _int("rate_cycle", 1)),
    "prio": _set_field("prio", _int("prio", 0, 7)),
    "prioclass": _set_field("prioclass", _int("prioclass", 0, 3)),
    "cmdprio_percentage": _set_rwt(
        "cmdprio_percentage",
        "cmdprio_percentage_read",
        "cmdprio_percentage_write",
        lambda p, kb: parse_int(p, option="cmdprio_percentage", minimum=0, maximum=100),
        0,
    ),
    "cmdprio_class": _set_rwt(
        "cmdprio_class",
        "cmdprio_class_read",
        "cmdprio_class_write",
        lambda p, kb: parse_int(p, option="cmdprio_class", minimum=1, maximum=3),
        1,
    ),
    "cmdprio": _set_rwt(
        "cmdprio",
        "cmdprio_read",
        "cmdprio_write",
        lambda p, kb: parse_int(p, option="cmdprio", minimum=0, maximum=7),
        0,
    ),
    "cmdprio_bssplit": _set_rwt(
        "cmdprio_bssplit",
        "cmdprio_bssplit_read",
        "cmdprio_bssplit_write",
        lambda p, kb: _parse_cmdprio_bssplit(p, kb),
        (),
    ),
    "latency_target": _set_field(
        "latency_target_ns", lambda v, kb: parse_time_ns(v, option="latency_target", default_unit="us")
    ),
    "latency_window": _set_field(
        "latency_window_ns", lambda v, kb: parse_time_ns(v, option="latency_window", default_unit="us")
    ),
    "latency_percentile": _set_field("latency_percentile", lambda v, kb: _float_percent("latency_percentile", v)),
    "latency_run": _set_field("latency_run", _bool("latency_run")),
    "steadystate": _set_field("steadystate", lambda v, kb: _parse_steadystate(v)),
    "steadystate_duration": _set_field("ss_dur_ns", lambda v, kb: parse_time_ns(v, option="steadystate_duration")),
    "steadystate_ramp_time": _set_field("ss_ramp_ns", lambda v, kb: parse_time_ns(v, option="steadystate_ramp_time")),
    "steadystate_check_interval": _set_field(
        "ss_interval_ns", lambda v, kb: parse_time_ns(v, option="steadystate_check_interval") or 1_000_000_000
    ),
    "number_ios": _set_field("number_ios", _int("number_ios", 0)),
    "loops": _set_field("loops", _int("loops", 1)),
    "startdelay": _set_startdelay,
    "offset_increment": _set_field(
        "offset_increment_bytes", lambda v, kb: parse_size(v, option="offset_increment", kb_base=kb, allow_zero=True)
    ),
    "rw_sequencer": _set_field("rw_sequencer", _choice("rw_sequencer")),
    "rate_iops": _set_rwt("rate_iops", "rate_iops_read", "rate_iops_write", _rate, None),
    "hipri": _set_field("hipri", _bool("hipri")),
    "stonewall": _set_field("stonewall", _bool("stonewall")),
    "new_group": _set_field("new_group", _bool("new_group")),
    "wait_for": _set_field("wait_for", lambda v, kb: (v or "").strip() or None),
    "exitall": _set_field("exitall", _bool("exitall")),
    "exitall_on_error": _set_field("exitall_on_error", _bool("exitall_on_error")),
    "exit_what": _set_field("exit_what", _choice("exit_what")),
    "io_submit_mode": _set_field("io_submit_mode", _choice("io_submit_mode")),
    "nice": _set_field("nice", lambda v, kb: parse_int((v or "").strip(), option="nice", minimum=-20, maximum=19)),
    "flow": _set_field("flow", lambda v, kb: _flow_weight(v)),
    "flow_id": _set_field("flow_id", _int("flow_id", 0)),
    "flow_sleep": _set_field("flow_sleep_ns", lambda v, kb: 1000 * parse_int(v, option="flow_sleep", minimum=0)),
    "filename": _set_field("filename", lambda v, kb: split_names(v, "filename")),
    "directory": _set_field("directory", lambda v, kb: split_names(v, "directory")),
    "filename_format": _set_field("filename_format", lambda v, kb: (v or "").strip() or "$jobname.$jobnum.$filenum"),
    "nrfiles": _set_field("nrfiles", _int("nrfiles", 1)),
    "filesize": _set_field("filesize_bytes", lambda v, kb: parse_filesize(v, kb)),
    "file_service_type": lambda st, v, kb: st.update(parse_file_service(v)),
    "sqthread_poll": _set_field("sqthread_poll", _bool("sqthread_poll")),
    "sqthread_poll_cpu": _set_field("sqthread_poll_cpu", _int("sqthread_poll_cpu", 0)),
    "registerfiles": _set_field("registerfiles", _bool("registerfiles")),
    "fixedbufs": _set_field("fixedbufs", _bool("fixedbufs")),
    "nowait": _set_field("nowait", _bool("nowait")),
    "cpuload": _set_field("cpuload", _int("cpuload", 0)),
    "cpuchunks": _set_field("cpuchunks_us", _int("cpuchunks", 1)),
    "stacksim_irq_hint": _set_field("stacksim_irq_hint", _choice("stacksim_irq_hint")),
    "stacksim_fio_version": _set_field("stacksim_fio_version", lambda v, kb: _fio_version(v)),
    "kb_base": lambda st, v, kb: None,  # read before the other options (see _build)
    "iodepth_low": _set_field("iodepth_low", _int("iodepth_low", 0)),
    "verify": _set_field("verify", lambda v, kb: _verify_type(v)),
    "do_verify": _set_field("do_verify", _bool("do_verify")),
    "verify_only": _set_field("verify_only", _bool("verify_only")),
    "verify_backlog": _set_field("verify_backlog", _int("verify_backlog", 0)),
    "verify_backlog_batch": _set_field("verify_backlog_batch", _int("verify_backlog_batch", 0)),
    "verify_interval": _set_field(
        "verify_interval_bytes", lambda v, kb: parse_size(v, option="verify_interval", kb_base=kb, allow_zero=True)
    ),
    "verify_pattern": _set_field("verify_pattern", lambda v, kb: (v or "").strip()),
    "xnvme_async": _set_field("engine_backend", _choice("xnvme_async")),
    "libblkio_driver": _set_field("engine_backend", lambda v, kb: (v or "").strip()),
    "libblkio_wait_mode": _set_field("libblkio_wait_mode", _choice("libblkio_wait_mode")),
    **ZONED_HANDLERS,
    **PROTECTION_HANDLERS,
}
_missing = {s.name for s in (*opts.FIO_OPTIONS.values(), *opts.STACKSIM_OPTIONS.values()) if s.status == "used"} - set(
    _HANDLERS
)
assert not _missing, f"used options without a handler: {_missing}"

# Non-default field values that need a given ioengine (fio ties these options to the engine).
_ENGINE_FIELDS = {
    f: opts.FIO_OPTIONS[f].engines
    for f in ("hipri", "sqthread_poll", "sqthread_poll_cpu", "registerfiles", "fixedbufs", "nowait")
}


def _normalise(item: _Item, kb: int) -> str:
    """Canonical text of a limited option's value, for comparison with its neutral values."""
    s, v = item.spec, item.value
    if s.kind in ("bool", "flag"):
        return "1" if parse_bool(v, option=item.key, flag=s.kind == "flag") else "0"
    if s.kind == "int":
        return str(parse_int(v, option=item.key))
    if s.kind == "size":
        return str(parse_size(v, option=item.key, kb_base=kb, allow_zero=True))
    if s.kind == "time":
        return str(parse_time_ns(v, option=item.key))
    if v is None or not v.strip():
        raise ConfigError(f"option '{item.key}' needs a value")
    return "".join(v.split()).lower()


def _build(name: str, items: list[_Item], *, source: str, base: dict[str, Any] | None = None) -> FioJob:
    """Apply ``items`` in order (last wins) on top of ``base`` (fio defaults) and validate."""
    job = f"job '{name}'"
    last: dict[str, _Item] = {}
    for it in items:
        last[it.spec.name] = it

    def fail(msg: str, it: _Item | None) -> ConfigError:
        return ConfigError(f"{it.where}, {job}: {msg}" if it else f"{job} ({source}): {msg}")

    _engine_first(last, fail)
    unknown = next((it.error for it in items if it.error is not None), None)
    if unknown is not None:
        raise unknown
    kb = _kb_base(last, fail)
    state: dict[str, Any] = dict(_JOB_FIELDS if base is None else base)
    ignored = _apply_items(items, last, state, kb, fail)
    _check_job(items, last, state, kb, fail)
    try:
        return FioJob(name=name, source=source, ignored_options=tuple(sorted(ignored)), **state)
    except ValidationError as exc:  # limits of the kernel and fio (MAX_RW_BYTES, FIO_MAX_JOBS, ...)
        err = exc.errors()[0]
        option = _FIELD_OPTION.get(str(err["loc"][0]) if err["loc"] else "", "")
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "less_than_equal" and option in _LIMIT_REASON:
            msg = f"{err['input']} is above {_LIMIT_REASON[option]}"
        elif err["type"] in ("less_than_equal", "greater_than", "greater_than_equal"):
            msg = f"{msg} (got {err['input']})"
        it = last.get(option) or last.get("ioengine") if option else None
        raise fail(f"option '{option}': {msg}" if option else msg, it) from None


def _engine_first(last: dict[str, _Item], fail) -> None:
    """A job on an engine stacksim does not run is refused for its engine first: its other options
    (the engine's own, of an older fio, or not modelled) are moot."""
    it = last.get("ioengine")
    if it is not None:
        try:
            _set_ioengine({}, it.value, 1024)
        except ConfigError as exc:
            raise fail(str(exc), it) from None


def _kb_base(last: dict[str, _Item], fail) -> int:
    """fio's ``kb_base`` (1024 unless the job says 1000)."""
    if "kb_base" not in last:
        return 1024
    it = last["kb_base"]
    try:
        kb = parse_int(it.value, option="kb_base")
    except ConfigError as exc:
        raise fail(str(exc), it) from None
    if kb not in (1000, 1024):
        raise fail(f"option 'kb_base': must be 1000 or 1024, got {kb}", it)
    return kb


def _apply_items(items: list[_Item], last: dict[str, _Item], state: dict[str, Any], kb: int, fail) -> set[str]:
    """Modelled options update ``state``; the others are checked (a value where fio needs one, a
    neutral value for options not modelled yet) and returned as the ignored ones."""
    ignored: set[str] = set()
    for it in items:
        try:
            if it.spec.status == "used":
                if it.value is None and it.spec.kind not in ("bool", "flag") and it.spec.name != "ignore_error":
                    raise ConfigError(f"option '{it.key}' needs a value")
                _HANDLERS[it.spec.name](state, it.value, kb)
                continue
            ignored.add(it.key)
            if it.spec.kind in ("bool", "flag"):
                parse_bool(it.value, option=it.key, flag=it.spec.kind == "flag")
            elif it.value is None and it.spec.name not in opts.OPTIONAL_VALUE:
                raise ConfigError(f"option '{it.key}' needs a value (fio would reject it too)")
            if it.spec.status == "limited" and last[it.spec.name] is it:
                value = _normalise(it, kb)
                if value not in it.spec.neutral:
                    ok = (
                        "; remove it"
                        if not it.spec.neutral
                        else "; stacksim accepts only " + " or ".join(f"{it.key}={n}" for n in it.spec.neutral)
                    )
                    given = it.key if it.value is None else f"{it.key}={it.value}"
                    raise ConfigError(
                        f"option '{given}' is accepted by fio but not modelled yet by stacksim: {it.spec.reason}{ok}"
                    )
        except ConfigError as exc:
            raise fail(_empty_number(it.key, it.raw) if it.raw is not None else str(exc), it) from None
    return ignored


def _check_rates(state: dict[str, Any], last: dict[str, _Item], fail) -> None:
    """fio's fixup_options: rate and rate_iops (and their minimums) are mutually exclusive per
    direction, and a minimum above the cap is an error."""
    for op in ("read", "write"):
        cap, cap_iops = state[f"rate_{op}_bps"], state[f"rate_iops_{op}"]
        low, low_iops = state[f"rate_min_{op}_bps"], state[f"rate_iops_min_{op}"]
        if (cap and cap_iops) or (low and low_iops):
            names = ("rate", "rate_iops") if cap and cap_iops else ("rate_min", "rate_iops_min")
            raise fail(
                f"options '{names[0]}' and '{names[1]}' both set {op}s: they are mutually exclusive "
                "(fio rejects the job too)",
                last.get(names[1]) or last.get(names[0]),
            )
        if (cap and low and cap < low) or (cap_iops and low_iops and cap_iops < low_iops):
            names = ("rate_min", "rate") if cap and low and cap < low else ("rate_iops_min", "rate_iops")
            raise fail(
                f"option '{names[0]}' for {op}s is above '{names[1]}': the minimum rate exceeds the rate "
                "(fio rejects the job too)",
                last.get(names[0]),
            )


#: engines that reach the device without a page cache whatever ``direct`` says: SPDK's plugin, fio's
#: null engine (no IO), NVMe passthrough on the character device (io_uring_cmd, fio's examples leave
#: direct unset)
NO_PAGE_CACHE_ENGINES = ("spdk", "null", "io_uring_cmd", *FS_META_ENGINES, *CPU_ENGINES)


def _check_buffered(state: dict[str, Any], last: dict[str, _Item], fail) -> None:
    """Buffered IO (direct=0) where the page cache is modelled; fsync/sync only there; mmap's limits."""
    engine = state["ioengine"]
    if not state["direct"] and engine not in BUFFERED_ENGINES and engine not in NO_PAGE_CACHE_ENGINES:
        # (SPDK's plugin has no page cache to bypass; the null engine does no IO)
        raise fail(
            f"buffered IO (direct=0, fio's default) with ioengine={engine} is not modelled: the page cache is"
            f" modelled for {', '.join(BUFFERED_ENGINES)}; set direct=1",
            last.get("direct") or last.get("buffered") or last.get("ioengine"),
        )
    if not state["direct"] and engine in ASYNC_BUFFERED_ENGINES:
        _check_buffered_uring(state, last, fail)
    if engine in MAPPED_ENGINES and (state["direct"] or state["sync"] != "none" or state["io_submit_mode"] != "inline"):
        what = "direct=1" if state["direct"] else "sync" if state["sync"] != "none" else "io_submit_mode=offload"
        raise fail(
            f"ioengine={engine} with {what} is not modelled (the mmap engine's IO is a copy through the page"
            " cache; for its msync use fsync=N or end_fsync)",
            last.get("direct") or last.get("sync") or last.get("io_submit_mode") or last.get("ioengine"),
        )
    if state["direct"] and (state["fsync"] or state["sync"] != "none"):
        raise fail(
            "fsync/fdatasync/sync with direct=1 is not modelled: the SSD's flush command and FUA writes are"
            " not; with direct=0 the page cache's writeback is",
            last.get("fsync") or last.get("fdatasync") or last.get("sync"),
        )
    if not state["direct"] and engine in BUFFERED_ENGINES and state["io_submit_mode"] == "offload":
        raise fail(
            "buffered IO (direct=0) with io_submit_mode=offload is not modelled; set direct=1",
            last.get("io_submit_mode"),
        )


def _check_buffered_uring(state: dict[str, Any], last: dict[str, _Item], fail) -> None:
    """io_uring on a buffered file: its asynchronous buffered reads, its writes (tried without
    blocking, else punted to io-wq workers) and its fsyncs (IORING_OP_FSYNC, run by io-wq) are
    modelled; O_SYNC files, SQPOLL and IOPOLL (which needs O_DIRECT) are not."""
    engine = state["ioengine"]
    writes = state["rw"] not in ("read", "randread")
    if writes and state["sync"] != "none":
        raise fail(
            f"sync={state['sync']} (O_SYNC / O_DSYNC files) with buffered IO (direct=0) and ioengine={engine} is"
            " not modelled; use psync, sync, pvsync2 or libaio, or fsync=N",
            last.get("sync"),
        )
    if state["sqthread_poll"] or state["hipri"]:
        what = "sqthread_poll" if state["sqthread_poll"] else "hipri"
        raise fail(
            f"buffered IO (direct=0) with ioengine={engine} and {what} is not modelled (IOPOLL needs O_DIRECT);"
            " set direct=1",
            last.get("sqthread_poll") or last.get("hipri") or last.get("direct"),
        )


def _check_job(items: list[_Item], last: dict[str, _Item], state: dict[str, Any], kb: int, fail) -> None:
    """The checks on the whole job: engine options against the engine, O_DIRECT (direct=1,
    512-byte multiples). (time_based without runtime is checked once ``--set`` is applied:
    scenarios.config.host.)"""
    _resolve_library(state, last, fail)
    engine = state["engine_library"] or state["ioengine"]  # the engine fio loads
    for it in items:
        engines = it.spec.engines
        if engines is not None and engine not in engines:
            raise fail(
                f"option '{it.key}' is an option of ioengine {'/'.join(sorted(engines))}, "
                f"not of ioengine={engine}; fio rejects it too: "
                f"'Bad option <{it.key}{'' if it.value is None else '=' + it.value}>'",
                it,
            )
    for field, engines in _ENGINE_FIELDS.items():
        if state[field] not in (False, None) and engine not in engines:
            raise fail(
                f"option '{field}' needs ioengine {'/'.join(sorted(engines))}, not ioengine={engine}",
                last.get("ioengine"),
            )
    engine = state["ioengine"]
    _check_buffered(state, last, fail)
    for field, option in (
        ("bs_read_bytes", "bs"),
        ("bs_write_bytes", "bs"),
        ("bs_trim_bytes", "bs"),
        ("offset_bytes", "offset"),
    ):
        # (io_uring_cmd: no O_DIRECT, the namespace's block size rules: scenarios/inputs/fio/protection.py)
        if state[field] % 512 and engine != "io_uring_cmd":
            hint = " (note: fio's default kb_base=1024 reads 'KiB' as 1000 bytes; write 'k')" if option == "bs" else ""
            raise fail(
                f"option '{option}': {state[field]} bytes is not a multiple of 512, which O_DIRECT requires{hint}",
                last.get(option),
            )
    _check_rates(state, last, fail)
    if state["fill_device"]:  # fio sets size to something really large: the device's rest (resolve)
        state["size_bytes"], state["size_percent"], state["size_zones"] = None, 100.0, None
    _check_files(state, last, fail)
    _check_meta_engines(state, last, fail)
    _check_verify(state, last, fail)
    check_zoned(state, last, fail)
    check_atomic(state, last, fail)
    if state["io_submit_mode"] == "offload":
        it = last.get("io_submit_mode")
        if engine not in SYNC_ENGINES and engine != "libaio":
            raise fail(
                f"option 'io_submit_mode=offload' with ioengine={engine} is not modelled (fio documents that "
                "offload cannot reliably be used with asynchronous engines); use psync, sync, pvsync2 or libaio",
                it,
            )
        if state["flow"]:
            raise fail("option 'flow' with io_submit_mode=offload is not modelled yet by stacksim", last.get("flow"))


def _check_meta_engines(state: dict[str, Any], last: dict[str, _Item], fail) -> None:
    """fio's cpuio needs cpuload (cpuio_init fails without it; its runtime is checked once --set is
    applied: scenarios.config.host); its ftruncate does writes only (others fail with EINVAL);
    falloc's directions are its three fallocate modes (no trimwrite pairs); the file engines work on
    files."""
    engine, rw = state["ioengine"], state["rw"]
    if engine == "cpuio":
        if not state["cpuload"]:
            raise fail(
                "ioengine=cpuio needs cpuload=PERCENT (fio: 'cpu thread needs rate (cpuload=)')", last["ioengine"]
            )
    elif engine == "ftruncate" and rw not in ("write", "randwrite"):
        raise fail(
            f"ioengine=ftruncate with rw={rw}: fio's ftruncate engine does writes only (ftruncate to the"
            " offset; its other directions fail with EINVAL)",
            last.get("rw") or last["ioengine"],
        )
    elif engine in FS_META_ENGINES and rw in ("trimwrite", "randtrimwrite"):
        raise fail(f"ioengine={engine} with rw={rw} is not modelled (use trim, write or read)", last.get("rw"))
    elif engine in FILE_OP_ENGINES and state["filename"] and all(is_device(n) for n in state["filename"]):
        raise fail(f"ioengine={engine} works on regular files only (fio: 'only files are supported')", last["filename"])


def _check_verify(state: dict[str, Any], last: dict[str, _Item], fail) -> None:
    """fio's verify on a modelled path: the submitting thread of a kernel engine (not fio's null
    engine, whose data is never written, nor SPDK's plugin or offload workers, not modelled here); a
    verify_interval within the smallest write (fio's fixup_options); no time_based verify_only (fio
    refuses it)."""
    if state["verify"] == "none":
        return
    it = last.get("verify")
    engine = state["ioengine"]
    no_data = ("null", "spdk", *FS_META_ENGINES, *CPU_ENGINES)
    if engine in no_data or state["io_submit_mode"] == "offload":
        what = f"ioengine={engine}" if engine in no_data else "io_submit_mode=offload"
        raise fail(f"option 'verify' with {what} is not modelled by stacksim: verify runs on the kernel engines", it)
    buffered_async = not state["direct"] and engine in ASYNC_BUFFERED_ENGINES and engine not in NO_PAGE_CACHE_ENGINES
    if engine in MAPPED_ENGINES or buffered_async:
        raise fail(
            f"option 'verify' with ioengine={engine} on buffered files is not modelled by stacksim (buffered"
            " verify runs on psync, sync, pvsync2 and libaio); set direct=1 or use one of those",
            it,
        )
    smallest = _smallest_block(state["bs_write_bytes"], state["bssplit_write"], state["bsrange_write"])
    if state["verify_interval_bytes"] > smallest:
        raise fail(
            f"option 'verify_interval': {state['verify_interval_bytes']} bytes is larger than the smallest write"
            f" ({smallest} bytes); fio needs the interval within the block (fio refuses it too)",
            last.get("verify_interval"),
        )
    if state["verify_only"] and state["time_based"]:
        raise fail("option 'verify_only' does not support time_based jobs (fio's HOWTO)", last.get("verify_only"))
    if state["verify_only"] and state["loops"] > 1:
        raise fail(
            "option 'verify_only' with loops > 1 is not modelled by stacksim (fio dry-runs and verifies each loop)",
            last.get("loops"),
        )


def _resolve_library(state: dict[str, Any], last: dict[str, _Item], fail) -> None:
    """ioengine=xnvme / libblkio: the modelled engine of the backend the job names
    (scenarios/inputs/fio/engines.py), or one message saying why the backend is refused."""
    library, backend = state["engine_library"], state["engine_backend"]
    it = last.get("ioengine")
    if not library:
        return
    if library == "xnvme":
        backend = backend or "emu"  # fio's xnvme engine: the default async interface
        engine = lib_engines.XNVME_ASYNC[backend]
        if engine is None:
            raise fail(
                f"ioengine=xnvme with xnvme_async={backend} is not modelled by stacksim: "
                f"{lib_engines.XNVME_REFUSED[backend]}; set xnvme_async=io_uring, io_uring_cmd or libaio",
                last.get("xnvme_async") or it,
            )
    else:
        if not backend:
            raise fail("ioengine=libblkio needs libblkio_driver (fio's engine refuses the job without it)", it)
        if backend not in lib_engines.LIBBLKIO_DRIVERS:
            raise fail(
                f"option 'libblkio_driver': libblkio has no driver '{backend}' "
                f"(drivers: {', '.join(lib_engines.LIBBLKIO_DRIVERS)})",
                last.get("libblkio_driver"),
            )
        engine = lib_engines.LIBBLKIO_DRIVERS[backend]
        if engine is None:
            raise fail(
                f"ioengine=libblkio with libblkio_driver={backend} is not modelled by stacksim: it reaches a"
                " virtio-blk device, not an NVMe SSD; use libblkio_driver=io_uring or nvme-io_uring",
                last.get("libblkio_driver"),
            )
        if state["libblkio_wait_mode"] == "eventfd":
            raise fail(
                "option 'libblkio_wait_mode=eventfd' is not modelled by stacksim: the wait in read() on the"
                " completion eventfd is another wake-up path; use block or loop",
                last.get("libblkio_wait_mode"),
            )
        if state["libblkio_wait_mode"] == "loop":  # blkioq_do_io(min_completions=0) in a busy loop
            state["iodepth_batch_complete_min"] = 0
    state["ioengine"] = engine
    state["engine_backend"] = backend


def _check_spdk_files(state: dict[str, Any], last: dict[str, _Item], fail) -> None:
    """SPDK's fio plugin opens each file as an NVMe transport ID (``trtype=PCIe
    traddr=0000.af.00.0 ns=1``), never a path: no directory, no file-system files."""
    if state["directory"]:
        raise fail(
            "option 'directory' with ioengine=spdk: the plugin's files are NVMe transport IDs "
            "(filename=trtype=PCIe traddr=0000.af.00.0 ns=1), not paths",
            last.get("directory"),
        )
    for name in state["filename"]:
        try:
            parse_transport_id(name)
        except ConfigError as exc:
            raise fail(f"option 'filename': {exc}", last.get("filename")) from None


#: engines whose trim is fio's do_io_u_trim: the BLKDISCARD ioctl (os/os-linux.h os_trim)
SYNC_TRIM_ENGINES = ("psync", "sync", "pvsync2", "libaio")


def _check_file_trims(state: dict[str, Any], last: dict[str, _Item], fail) -> None:
    """Trims on regular files: fio 3.41's sync engines and libaio trim with the BLKDISCARD ioctl on
    the file's descriptor, which a file system does not know (ext4_ioctl, xfs_file_ioctl: -ENOTTY),
    so the job's first trim fails (models.ioengines.sync_io: ``file_trims``); fio ends the job
    unless its continue_on_error / ignore_error go on after ENOTTY (each trim then fails: not
    modelled). io_uring's trim is an async discard command: not modelled on files."""
    engine = state["ioengine"]
    if engine not in SYNC_TRIM_ENGINES:
        raise fail(
            f"option 'rw={state['rw']}' on regular files with ioengine={engine} is not modelled by stacksim"
            f" (fio's {engine} trims with a block-device discard command); trim a block device (filename=/dev/...)",
            last.get("rw"),
        )
    if non_fatal(state["continue_on_error"], state["ignore_error"], "trim", errno.ENOTTY):
        raise fail(
            f"option 'rw={state['rw']}' on regular files with continue_on_error / ignore_error going on after"
            " ENOTTY is not modelled by stacksim (fio's BLKDISCARD on a file fails: every trim would fail)",
            last.get("ignore_error") or last.get("continue_on_error"),
        )


def _check_files(state: dict[str, Any], last: dict[str, _Item], fail) -> None:
    """A job's files are all block devices or all regular files; io_uring_cmd needs NVMe
    generic character devices (``/dev/ngXnY``), as fio's engine opens them; SPDK's plugin NVMe
    transport IDs."""
    names = state["filename"]
    if state["ioengine"] == "spdk":
        _check_spdk_files(state, last, fail)
        return
    devices = [is_device(n) for n in names]
    on_files = state["directory"] and not names or names and not all(devices)
    if "trim" in state["rw"] and on_files and state["ioengine"] != "falloc":
        _check_file_trims(state, last, fail)
    if any(devices) and not all(devices):
        raise fail(
            "option 'filename' mixes block devices and regular files in one job: not modelled "
            "yet by stacksim (the file-system cost is per job); split it into two jobs",
            last.get("filename"),
        )
    if state["ioengine"] != "io_uring_cmd" and any(n.startswith("/dev/ng") for n in names):
        raise fail(
            f"option 'filename': an NVMe generic character device (/dev/ngXnY) takes only io_uring_cmd "
            f"passthrough, not ioengine={state['ioengine']}; use the block device (/dev/nvmeXnY)",
            last.get("filename"),
        )
    if state["ioengine"] == "io_uring_cmd" and (state["directory"] and not names or names and not all(devices)):
        raise fail(
            "ioengine=io_uring_cmd needs an NVMe generic character device (filename=/dev/ngXnY), "
            "not a regular file; fio's engine would fail to open it",
            last.get("filename") or last.get("directory"),
        )
