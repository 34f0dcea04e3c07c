"""fio's job options and how stacksim treats each of them.

fio's option catalogue is data: ``catalogue.json`` (every option and alias of fio's HOWTO, with
its type, default and ioengines, and the fio version it mirrors: :data:`FIO_VERSION`), generated
by ``tools/gen_fio_catalogue.py``. This module gives every catalogue option exactly one status
(checked at import: a catalogue option without a status, or a status for a name fio lacks, is an
error):

* ``used``    -- modelled: consumed by the simulator (table below);
* ``ignored`` -- accepted, has no effect on the simulation (names, logging, reporting, data
  content, file layout, ...); reported in ``FioJob.ignored_options``;
* ``limited`` -- accepted only with a value that leaves the simulated workload unchanged
  (``neutral``, e.g. ``verify=0``, ``zonemode=none``; none for some options); any other value
  is refused with "not modelled yet" and the option's ``reason``. Accepted values are reported
  like ignored options.

A name fio's catalogue lacks is "unknown" (with a did-you-mean suggestion). ioengine options
(``engines`` from the catalogue) are, like fio ("Bad option"), refused when the job uses
another ioengine.

USED options (→ ``FioJob`` field; units):

=============================================  ===========================  ===========================================
fio option (aliases)                           FioJob field                 value / unit
=============================================  ===========================  ===========================================
rw (readwrite)                                 rw                           read write randread randwrite rw readwrite
                                                                            randrw trim randtrim trimwrite randtrimwrite
rwmixread, rwmixwrite                          rwmixread                    percent of reads, 0..100 (default 50)
bs (blocksize)                                 bs_read/_write/_trim_bytes   size, ``read[,write[,trim]]`` (default 4k)
bssplit                                        bssplit_read/_write          SIZE/PERCENT:..., per direction;
                                                                            overrides bs
blocksize_range (bsrange)                      bsrange_read/_write          MIN-MAX, per direction; overrides bs
numjobs                                        numjobs                      >= 1 (not expanded by the parser)
ioengine                                       ioengine, engine_library     psync sync pvsync2 libaio io_uring
                                                                            io_uring_cmd null spdk; xnvme, libblkio
                                                                            on a modelled backend (engines.py)
xnvme_async, libblkio_driver                   engine_backend               the library's backend / driver
libblkio_wait_mode                             libblkio_wait_mode           block | loop (eventfd refused)
iodepth                                        iodepth                      >= 1
iodepth_batch_submit (iodepth_batch)           iodepth_batch_submit         0 or > iodepth => iodepth
iodepth_batch_complete_min (..._complete)      iodepth_batch_complete_min   >= 0 (0 = poll without waiting)
iodepth_batch_complete_max                     iodepth_batch_complete_max   default = complete_min, <= iodepth
direct, buffered (= not direct)                direct                       bool; direct=0: the page cache (psync, sync,
                                                                             pvsync2, libaio)
invalidate, pre_read, fadvise_hint             invalidate, pre_read, ...    buffered IO: cache at open, readahead hints
runtime (timeout)                              runtime_ns                   time, default unit s; 0 = none
ramp_time                                      ramp_time_ns                 time, default unit s
time_based                                     time_based                   bool; needs runtime
size                                           size_bytes                   size
offset                                         offset_bytes                 size
cpus_allowed, cpumask                          cpus_allowed                 ``0-3,6`` / bit mask
cpus_allowed_policy                            cpus_allowed_policy          shared | split
rate_iops                                      rate_iops_read/_write        IO/s, ``read[,write[,trim]]``; 0 = none
rate                                           rate_read_bps/_write_bps     bytes/s, ``read[,write[,trim]]``; 0 = none
rate_process                                   rate_process                 linear | poisson
rate_min, rate_iops_min                        rate_min_*_bps, rate_iops_*  bytes/s, IO/s per direction;
                                                                            a miss ends the job
rate_cycle                                     rate_cycle_ms                ms (default 1000)
number_ios, loops                              number_ios, loops            IOs per thread (0 = no limit), repetitions
startdelay                                     startdelay_ns(_max)          time or range ``a-b``, default unit s
offset_increment                               offset_increment_bytes       size; clone k starts at offset + k x it
rw ``:<n>`` modifier, rw_sequencer             rw_modifier, rw_sequencer    random: new offset every n IOs;
                                                                            sequential: n-byte holes
prio, prioclass                                prio, prioclass              level 0..7, class 0..3 (ionice)
cmdprio_percentage, cmdprio_class, cmdprio     cmdprio_*_read/_write        percent / class 1..3 / level,
                                                                            ``read[,write]``
random_distribution                            random_distribution(_value,  random zipf:θ pareto:h normal:dev[:center];
                                               _center), zones_read/_write  zoned / zoned_abs ACCESS%/RANGE:...;
random_sequence_stride                         random_sequence(_stride)     sequence:I,J,... block indices; bool
random_generator                               random_generator             tausworthe tausworthe64 lfsr
percentage_random                              percentage_random_read/_write percent, ``read[,write[,trim]]``
thinktime                                      thinktime_ns                 time, default unit us
hipri                                          hipri                        bool (pvsync2, io_uring)
sqthread_poll, sqthread_poll_cpu               sqthread_poll(_cpu)          bool / CPU number (io_uring)
registerfiles, fixedbufs                       registerfiles, fixedbufs     bool (io_uring)
nowait                                         nowait                       bool (io_uring, libaio, pvsync2)
zonemode, zonesize, zonerange, zoneskip,       zonemode, zone*_bytes        none strided zbd; sizes (``Nz`` sizes and
zonecapacity                                                                offsets count zones)
max_open_zones, job_max_open_zones             max_open_zones, ...          zones (0: the device's / no limit)
zone_reset_threshold, zone_reset_frequency     zone_reset_*                 fractions 0..1
ignore_zone_limits, read_beyond_wp             same                         bool
fdp, dataplacement, fdp_pli (plids),           fdp, fdp_pli,                bool / none fdp / placement ID indices /
fdp_pli_select (plid_select)                   fdp_pli_select               roundrobin random
filename, directory                            filename, directory          ``a:b`` lists;
                                                                            ``/dev/`` names are raw devices
filename_format, nrfiles                       filename_format, nrfiles     generated names ($jobname.$jobnum.$filenum),
                                                                            files per thread
filesize                                       filesize_bytes               size or range ``LO-HI`` per file
file_service_type                              file_service_type(_value)    roundrobin random sequential [:N];
                                                                            zipf pareto normal [:skew]
stonewall (wait_for_previous), wait_for        stonewall, wait_for          start after the jobs before it /
                                                                            the named job
new_group                                      new_group                    a new reporting group (JSON groupid)
exitall, exitall_on_error, exit_what           exitall(_on_error), exit_what a finished thread ends its group /
                                                                            all / the running jobs
flow, flow_id, flow_sleep                      flow, flow_id, flow_sleep_ns weight >= 0, id, us: jobs' IO counts
                                                                            in the ratio of their weights
io_submit_mode                                 io_submit_mode               inline | offload (iodepth workers;
                                                                            synchronous engines)
nice                                           nice                         -20..19: the threads' CFS load weight
kb_base                                        (size parsing)               1024 (default) | 1000
verify, do_verify, verify_only                 verify, do_verify,           checksum type (VERIFY_TYPES), bools
                                               verify_only
verify_backlog, verify_backlog_batch           verify_backlog(_batch)       blocks; 0 = verify after the writes
verify_interval, verify_pattern                verify_interval_bytes,       size (0: the block size), a pattern
                                               verify_pattern               (fills writes instead of random data)
iodepth_low                                    iodepth_low                  0 or > iodepth: iodepth; a full queue
                                                                            is reaped down to it (wait_for_completions)
ioscheduler                                    ioscheduler                  a registered IO scheduler: the job's
                                                                            devices switch to it (its defaults)
=============================================  ===========================  ===========================================

stacksim-specific options (fio rejects them, so a file using them runs only in stacksim) are
kept in :data:`STACKSIM_OPTIONS`; they are all prefixed ``stacksim_``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from typing import Literal

from models.ioengines import MODELLED_ENGINES

from . import engines as lib_engines

Status = Literal["used", "ignored", "limited"]
Kind = Literal["flag", "bool", "int", "size", "time", "str"]  # flag: fio set-type, value optional


@dataclass(frozen=True, slots=True)
class OptionSpec:
    """One fio option. ``name`` is the canonical name here; aliases map to the same spec.

    ``engines``: the ioengines the option belongs to (fio's catalogue), ``None`` for a general
    option; ``reason``: why a ``limited`` option's other values are not modelled yet.
    """

    name: str
    status: Status
    kind: Kind = "str"
    neutral: tuple[str, ...] = ()  # limited: normalised values stacksim accepts
    engines: frozenset[str] | None = None  # ioengine option: valid only with these engines
    choices: tuple[str, ...] = ()  # allowed values (lower-case), when fixed
    help: str = ""
    reason: str = ""


def _load_catalogue() -> dict:
    with resources.files("scenarios.data").joinpath("fio_catalogue.json").open(encoding="utf-8") as f:
        return json.load(f)


CATALOGUE: dict = _load_catalogue()
"""fio's option catalogue (``catalogue.json``): ``fio_version``, ``ioengines``, ``options``, ``profiles``."""
FIO_VERSION: str = CATALOGUE["fio_version"]
#: option name or alias -> its catalogue entry (name, aliases, type, default, engines, section)
CATALOGUE_NAMES: dict[str, dict] = {n: e for e in CATALOGUE["options"] for n in (e["name"], *e["aliases"])}

FIO_OPTIONS: dict[str, OptionSpec] = {}
"""Every fio option name and alias -> its spec."""

#: ioengines fio documents (catalogue) plus the modelled ones
#: (and fio 3.33's engines later releases dropped, and the engines known under a second name)
KNOWN_ENGINES = (
    frozenset(MODELLED_ENGINES)
    | frozenset(CATALOGUE["ioengines"])
    | frozenset(lib_engines.OLDER_ENGINES)
    | frozenset(lib_engines.ENGINE_ALIASES)
)
RW_MODES = ("read", "write", "randread", "randwrite", "rw", "readwrite", "randrw")
TRIM_MODES = ("trim", "randtrim", "trimwrite", "randtrimwrite")


def _add(
    status: Status,
    kind: Kind,
    names: str,
    *,
    neutral: tuple[str, ...] = (),
    choices: tuple[str, ...] = (),
    help: str = "",
    reason: str = "",
    table: dict[str, OptionSpec] | None = None,
    general: bool = False,
) -> None:
    """Register options; ``names`` is whitespace separated, each ``canonical`` (aliases and
    engines come from fio's catalogue) or, for stacksim's own options, ``name``. ``general``: an
    option the HOWTO documents among an engine's but fio's options.c defines in its general table
    (so fio parses it with any engine; the engine that cannot serve it fails later, at set-up)."""
    for canonical in names.split():
        if table is None:
            entry = CATALOGUE_NAMES.get(canonical)
            if entry is None:
                raise AssertionError(f"{canonical!r} is not in fio's catalogue (catalogue.json)")
            aliases = [n for n in (entry["name"], *entry["aliases"]) if n != canonical]
            engines = frozenset(entry["engines"]) if entry["engines"] and not general else None
        else:
            aliases, engines = [], None
        spec = OptionSpec(canonical, status, kind, neutral, engines, choices, help, reason)
        target = FIO_OPTIONS if table is None else table
        for name in (canonical, *aliases):
            if name in target:
                raise AssertionError(f"fio option {name!r} registered twice")
            target[name] = spec


# --- used by the simulator -------------------------------------------------------------------
_add("used", "str", "rw", choices=RW_MODES + TRIM_MODES, help="IO pattern")
_add("used", "int", "rwmixread rwmixwrite", help="percentage of reads / writes in mixed IO")
_add("used", "size", "bs", help="block size, read[,write[,trim]]")
_add("used", "str", "bssplit", help="mixed block sizes SIZE/PERCENT:..., read[,write[,trim]]")
_add("used", "str", "blocksize_range", help="block sizes uniform in MIN-MAX, read[,write[,trim]]")
_add(
    "used",
    "int",
    "numjobs iodepth iodepth_batch_submit iodepth_batch_complete_min iodepth_batch_complete_max iodepth_low",
)
_add("used", "str", "ioengine", help="IO engine")
_add("used", "bool", "direct buffered")
_add("used", "bool", "invalidate pre_read", help="buffered IO: drop the file's cached pages at open / read it in first")
_add("used", "int", "fsync fdatasync", help="buffered IO: fsync / fdatasync after every N writes")
_add("used", "bool", "end_fsync fsync_on_close", help="buffered IO: fsync the files when the job's IO ends")
_add("used", "str", "fadvise_hint", help="buffered IO: 1 (by the job's pattern), 0, sequential, random")
_add("used", "flag", "time_based")
_add("used", "time", "runtime ramp_time", help="default unit: seconds")
_add("used", "time", "thinktime", help="default unit: microseconds")
_add("used", "size", "size offset")
_add("used", "str", "cpus_allowed cpumask")
_add(
    "used",
    "str",
    "numa_cpu_nodes",
    help="NUMA nodes whose CPUs the job may run on (node list or 'all'; node n is socket n"
    " of the platform: cpu.sockets)",
)
_add(
    "used",
    "str",
    "numa_mem_policy",
    help="where the job's IO buffers are (default, local, prefer:N, bind:LIST, interleave:LIST):"
    " the data's DMA crosses sockets when they are on another node than the device",
)
_add("used", "str", "cpus_allowed_policy", choices=("shared", "split"))
_add(
    "used",
    "str",
    "random_distribution",
    help="random offsets: random, zipf:theta, pareto:h, normal:dev, "
    "zoned:A/R:..., zoned_abs:A/SIZE:... (optional :center for zipf/pareto/normal), sequence:I,J,...",
)
_add(
    "used",
    "bool",
    "random_sequence_stride",
    help="random_distribution=sequence: each repetition of the sequence one sequence length further on",
)
_add("used", "str", "random_generator", choices=("tausworthe", "lfsr", "tausworthe64"))
_add("used", "str", "percentage_random", help="percent of random IOs in a random job, read[,write[,trim]]")
_add("used", "str", "rate", help="bandwidth cap, bytes/s, read[,write[,trim]]")
_add("used", "str", "rate_process", choices=("linear", "poisson"))
_add(
    "used",
    "str",
    "rate_min rate_iops_min",
    help="minimum bytes/s / IO/s, read[,write[,trim]]: a job under it after fio's 2 s settle period ends with an error",
)
_add("used", "int", "rate_cycle", help="ms over which rate_min / rate_iops_min are averaged")
_add("used", "int", "prio prioclass", help="the job's IO priority level 0..7 / class 0..3 (ionice)")
_add(
    "used",
    "str",
    "cmdprio_percentage cmdprio_class cmdprio",
    help="per-command IO priority of a share of the IOs, read[,write]",
)
_add(
    "used",
    "time",
    "latency_target latency_window",
    help="fio's depth search: the highest queue depth whose"
    " windows keep latency_percentile % of the IOs under the target (default unit: us)",
)
_add("used", "str", "latency_percentile", help="percent of a window's IOs that must meet latency_target (default 100)")
_add("used", "bool", "latency_run", help="keep adjusting the depth instead of ending once it has settled")
_add(
    "used",
    "str",
    "cmdprio_bssplit",
    help="per-command IO priority of a share of the IOs of each block size: "
    "bs/percent[/class/level[/hint]]:..., read[,write] (hints are accepted and not modelled)",
)
_add("used", "int", "number_ios loops", help="stop after N IOs (per thread) / repeat the job N times")
_add("used", "str", "startdelay", help="delay of the job's start, time or range (default unit s)")
_add("used", "size", "offset_increment", help="offset of clone k = offset + k x offset_increment")
_add("used", "str", "rw_sequencer", choices=("sequential", "identical"))
_add("used", "str", "rate_iops", help="IO/s, read[,write[,trim]]")
_add("used", "int", "kb_base", choices=("1000", "1024"))
_add("used", "flag", "hipri")
_add("used", "flag", "sqthread_poll registerfiles fixedbufs")
_add("used", "int", "sqthread_poll_cpu")
_add("used", "flag", "stonewall", help="start after every job before it has finished; a new reporting group")
_add("used", "flag", "new_group", help="start a new reporting group")
_add("used", "str", "wait_for", help="start after every thread of the named (earlier) job has finished")
_add(
    "used",
    "flag",
    "exitall exitall_on_error",
    help="when a thread of the job finishes (with an error), end "
    "the others (exit_what: its group, all, or the running ones)",
)
_add(
    "used",
    "int",
    "flow flow_id flow_sleep",
    help="token-based flow control between jobs: weight, flow id, and "
    "the sleep (us) of a held-back thread (0: it spins)",
)
_add(
    "used",
    "str",
    "io_submit_mode",
    choices=("inline", "offload"),
    help="offload: the job thread hands its IOs to iodepth submit workers (synchronous engines)",
)
_add("used", "int", "nice", help="the job's nice value (-20..19): its CFS load weight")
_add("used", "str", "exit_what", choices=("group", "all", "stonewall"), help="what exitall ends")
_add(
    "used",
    "str",
    "filename directory",
    help="the job's files (a:b:c); /dev/ names are raw devices, others "
    "regular files on the simulated file system (models/os/fs/filesystem.py)",
)
_add("used", "str", "filename_format", help="generated file names ($jobname, $jobnum, $filenum)")
_add("used", "int", "nrfiles", help="files per job thread (without filename=)")
_add("used", "str", "filesize", help="each file's size, or a range LO-HI")
_add(
    "used",
    "str",
    "file_service_type",
    help="the file of each IO: roundrobin, random, sequential [:N IOs], zipf, pareto, normal [:skew]",
)
_add("used", "bool", "nowait")
# zoned block devices (fio's zonemode, zbd.c) and NVMe flexible data placement (dataplacement.c)
_add(
    "used",
    "str",
    "zonemode",
    choices=("none", "strided", "zbd"),
    help="none; strided (zonesize bytes per zonerange, then skip zoneskip); zbd (a zoned device:"
    " writes at the write pointers, zone resets)",
)
_add("used", "size", "zonesize zonerange zoneskip zonecapacity", help="zone geometry of zonemode (bytes)")
_add(
    "used",
    "int",
    "max_open_zones job_max_open_zones",
    help="zones written at once by all jobs (default: the device's limit) / by one job (0: no limit)",
)
_add(
    "used",
    "str",
    "zone_reset_threshold zone_reset_frequency",
    help="zonemode=zbd: once the zones hold threshold x size of data, reset the written zone every"
    " 1/frequency writes (fractions 0..1)",
)
_add("used", "bool", "ignore_zone_limits read_beyond_wp")
# (fdp, dataplacement, plids and plid_select are in options.c's general table, fio 3.41: parsed with
# any engine; dp_init then needs the engine's fdp_fetch_ruhs: scenarios/inputs/fio/zoned.py)
_add("used", "bool", "fdp", help="NVMe flexible data placement: writes carry a placement handle", general=True)
_add("used", "str", "dataplacement", choices=("none", "fdp", "streams"), general=True)
_add("used", "str", "fdp_pli", help="placement ID indices the job's writes cycle through (default: all)", general=True)
_add("used", "str", "fdp_pli_select", choices=("roundrobin", "random", "scheme"), general=True)
_add(
    "used",
    "str",
    "xnvme_async",
    choices=("emu", "thrpool", "io_uring", "io_uring_cmd", "libaio", "posix", "vfio", "nil"),
    help="xNVMe's asynchronous backend: io_uring, io_uring_cmd and libaio run as those engines",
)
_add(
    "used",
    "str",
    "libblkio_driver",
    help="libblkio's driver: io_uring runs as io_uring, nvme-io_uring as io_uring_cmd",
)
_add(
    "used",
    "str",
    "libblkio_wait_mode",
    choices=("block", "eventfd", "loop"),
    help="block: wait in blkioq_do_io; loop: busy-poll it (iodepth_batch_complete_min=0); eventfd: not modelled",
)

#: fio's verify=TYPE values (options.c); "0" and "none": no verification
VERIFY_TYPES = (
    "md5",
    "crc64",
    "crc32c",
    "crc32c-intel",
    "crc32",
    "crc16",
    "crc7",
    "xxhash",
    "sha512",
    "sha256",
    "sha1",
    "sha3-224",
    "sha3-256",
    "sha3-384",
    "sha3-512",
    "meta",
    "pattern",
    "pattern_hdr",
    "null",
)
_add(
    "used",
    "str",
    "verify",
    choices=("0", "none", *VERIFY_TYPES),
    help="check written data: a header and checksum per block on writes, read back and checked"
    " (models/ioengines/verify.py); the data is not simulated, so a verify passes by construction",
)
_add("used", "bool", "do_verify", help="run the verify phase after the writes (default 1)")
_add("used", "flag", "verify_only", help="no writes: the verify phase reads what the writes would have written")
_add("used", "int", "verify_backlog verify_backlog_batch", help="verify every N written blocks, M at a time")
_add("used", "size", "verify_interval", help="the checksummed chunk (a header each); default the block size")
_add("used", "str", "verify_pattern", help="fill write buffers with this pattern (instead of random data)")

# --- accepted only with a neutral value; other values: "not modelled yet" + reason ------------
_NOFS = (
    "stacksim's file system is a fixed layout of files fio made before the job (models/os/fs/filesystem.py): "
    "no growth, no filling, no locks"
)
# (atomic is in options.c's general table; init.c then refuses an engine without FIO_ATOMICWRITES)
_add(
    "used",
    "bool",
    "atomic",
    help="RWF_ATOMIC writes (Linux 6.11; a power of two within the device's atomic write unit)",
    general=True,
)
_add("limited", "bool", "file_append", neutral=("0",), reason=_NOFS)
_add(
    "used",
    "bool",
    "fill_device",
    help="size = the device's capacity past the offset (fio writes until ENOSPC; a file fills an empty"
    " file system's space, its metadata not counted)",
)
_add(
    "limited",
    "bool",
    "bs_is_seq_rand",
    neutral=("0",),
    reason="block sizes chosen by sequential/random rather than by read/write are not modelled",
)
_add("limited", "bool", "sprandom", neutral=("0",), reason="SPRandom preconditioning offsets are not modelled")
_add("used", "str", "continue_on_error", help="error classes a job goes on after (scenarios/inputs/fio/errors.py)")
_add("used", "str", "ignore_error", help="per class, the errors continue_on_error goes on after")
_add("ignored", "str", "error_dump")
_add("used", "int", "verify_async", help="fio's verify threads per job thread (models/ioengines/verify.py)")
_add(
    "limited",
    "str",
    "verify_mode",
    neutral=("read",),
    reason="NVMe Compare commands (the device compares the data) are not modelled; verify reads and checks",
)
_add("limited", "flag", "blocksize_unaligned", neutral=("0",), reason="O_DIRECT needs aligned block sizes")
_add(
    "limited",
    "int",
    "write_barrier",
    neutral=("0",),
    reason="barrier writes (flush commands) are not modelled",
)
_add(
    "limited",
    "int",
    "trim_percentage",
    neutral=("0",),
    reason="trims of verified blocks (verify's trim phase) are not modelled; use rw=trim/randtrim/trimwrite",
)
_add("limited", "int", "thinkcycles", neutral=("0",), reason="busy-looping CPU cycles between IOs is not modelled")
_add("limited", "int", "thinktime_blocks", neutral=("1",), reason="thinktime after a batch of IOs is not modelled")
_add(
    "limited",
    "time",
    "thinktime_spin thinktime_iotime",
    neutral=("0",),
    reason="spinning / IO-time-bounded thinktime is not modelled",
)
_add("limited", "size", "ramp_size", neutral=("0",), reason="a ramp measured in bytes is not modelled (use ramp_time)")
_add(
    "used",
    "str",
    "ioscheduler",
    help="switch the job's devices to this IO scheduler before the run (fio writes queue/scheduler):"
    " it replaces the platform's queue.scheduler, its tunables at their defaults (scenarios/run/iosched_switch.py)",
)
_add("used", "str", "sync", help="buffered IO: O_SYNC (sync, 1) or O_DSYNC (dsync) writes; none, 0: neither")
_add(
    "limited",
    "str",
    "thinktime_blocks_type",
    neutral=("complete",),
    reason="issue-counted thinktime blocks are not modelled",
)
_add("limited", "str", "lockfile", neutral=("none",), reason=_NOFS)
_add("used", "size", "io_size", help="the IO amount (default: size); the IO stays within size, wrapping")
_add(
    "limited",
    "str",
    "opendir",
    reason="the files under an existing directory are not known to the "
    "simulation; name them with filename=, or let fio make them (directory=, nrfiles=, size=)",
)
_add("limited", "str", "sync_file_range", reason="sync_file_range(2) calls are not modelled")
_add("limited", "str", "read_iolog", reason="iolog replay is not modelled here (use stacksim replay for traces)")
_add(
    "used",
    "str",
    "steadystate",
    help="criterion:limit[%] (iops, iops_slope, bw, bw_slope, lat, lat_slope): end the"
    " job once its rolling window of measurements is steady",
)
_add(
    "used",
    "time",
    "steadystate_duration steadystate_ramp_time steadystate_check_interval",
    help="the rolling window, the wait before collecting and the measurement period (default unit: s)",
)
_add("limited", "str", "profile", reason="fio's built-in profiles (act, tiobench) are not modelled")
_add("limited", "flag", "userspace_reap", neutral=("0",), reason="user-space reaping of the AIO ring is not modelled")
_add("limited", "int", "force_async", neutral=("0",), reason="forced async (IOSQE_ASYNC) punting is not modelled")
_add("limited", "int", "hipri_percentage", neutral=("100",), reason="a mix of polled and interrupt IOs is not modelled")

# --- ignored: no effect on the simulated IO path -----------------------------------------------
_add("ignored", "flag", "group_reporting thread norandommap zero_buffers refill_buffers")
_add(
    "ignored",
    "bool",
    "randrepeat allrandrepeat softrandommap overwrite "
    "scramble_buffers create_serialize create_fsync "
    "create_on_open create_only allow_file_create allow_mounted_write unlink "
    "unlink_each_loop unique_filename dedupe_global verify_fatal verify_dump "
    "verify_state_save verify_state_load experimental_verify trim_verify_zero per_job_logs "
    "log_offset log_prio log_issue_time log_store_compressed log_alternate_epoch log_unix_epoch "
    "block_error_percentiles disable_lat disable_clat disable_slat disable_bw_measurement "
    "slat_percentiles clat_percentiles lat_percentiles gtod_reduce stats disk_util "
    "rate_ignore_thinktime replay_no_stall serialize_overlap "
    "cgroup_nodelete",
)
_add(
    "ignored",
    "str",
    "name description randseed "
    "fallocate write_hint offset_align blockalign "
    "buffer_compress_percentage buffer_compress_chunk buffer_pattern dedupe_percentage dedupe_mode "
    "dedupe_working_set_percentage iomem iomem_align hugepage-size lockmem "
    "openfiles priohint uid gid cgroup cgroup_weight "
    "unit_base gtod_cpu clocksource job_start_clock_id unified_rw_reporting write_bw_log "
    "write_lat_log write_hist_log write_iops_log log_entries log_avg_msec log_hist_msec "
    "log_hist_coarseness log_max_value log_compression log_compression_cpus "
    "log_alternate_epoch_clock_id bwavgtime iopsavgtime percentile_list significant_figures "
    "max_latency "
    "exec_prerun exec_postrun write_iolog "
    "read_iolog_chunked replay_redirect replay_align replay_scale replay_time_scale replay_skip "
    "merge_blktrace_file merge_blktrace_scalars merge_blktrace_iters verify_offset "
    "verify_async_cpus "
    "trim_backlog trim_backlog_batch "
    ""
    "num_range spr_num_regions spr_op spr_cs "
    "comm filetype end_syncfs verify_bytchk verify_header_seed verify_pattern_interval "
    "verify_policy verify_write_sequence write_zone_remainders recover_zbd_write_error rocm_io",
)

# ioengine-specific options (ignored: either no effect, or the engine itself is not modelled)
_add("ignored", "str", "cmdprio_hint")
_add("ignored", "str", "nonvectored")
_add("ignored", "str", "uncached")
_add("ignored", "str", "cdb_len dp_scheme")
_add(
    "limited",
    "str",
    "cmd_type",
    neutral=("nvme",),
    reason="io_uring_cmd's bsg commands are SCSI passthrough, which reaches SCSI devices; stacksim models NVMe",
)
_add(
    "used",
    "str",
    "write_mode",
    help="io_uring_cmd's write command: write, uncor (Write Uncorrectable), zeroes (Write Zeroes), verify,"
    " zone_append, or a mix mode/pct:mode/pct",
)
_add(
    "limited",
    "str",
    "read_mode",
    neutral=("read",),
    reason="io_uring_cmd's SCSI Pre-Fetch reads (cmd_type=bsg) are not modelled",
)
_add("ignored", "str", "libaio_vectored")
_add("ignored", "str", "http_object_mode http_s3_security_token rbd_encryption_format rbd_encryption_passphrase")
_add(
    "used",
    "str",
    "md_per_io_size pi_act pi_chk apptag apptag_mask",
    help="NVMe end-to-end protection information (io_uring_cmd): separate metadata buffer bytes per IO,"
    " PRACT, the PRCHK checks (GUARD,APPTAG,REFTAG), the application tag and mask",
)
_add("ignored", "str", "readfua writefua sg_write_mode stream_id")
_add("ignored", "str", "hostname port")
_add("ignored", "str", "interface ttl nodelay protocol window_size mss")
_add("ignored", "flag", "listen pingpong")
_add("ignored", "str", "verb bindname")
_add("used", "int", "cpuload", help="cpuio: percent of one CPU to burn (mandatory with ioengine=cpuio)")
_add("used", "int", "cpuchunks", help="cpuio: the length of each burn, us (default 50000)")
_add(
    "ignored",
    "str",
    "cpumode",
    choices=("noop", "qsort"),
    help="cpuio: the burn loop's instructions (noop, qsort): the same CPU time; its power difference is not modelled",
)
_add(
    "limited",
    "bool",
    "exit_on_io_done",
    neutral=("0",),
    reason="cpuio jobs that end when the IO jobs end are not modelled (a cpuio job runs for its runtime)",
)
_add("ignored", "str", "donorname inplace")
_add("ignored", "str", "clustername clientname busy_poll")
_add("ignored", "str", "rbdname")
_add("ignored", "str", "touch_objects conf")
_add("ignored", "str", "pool")
_add("ignored", "str", "chunk_size")
_add("ignored", "str", "cont object_class svcl")
_add("ignored", "str", "namenode hdfsdirectory single_instance hdfs_use_direct")
_add(
    "ignored",
    "str",
    "http_host http_user http_pass http_s3_key http_s3_keyid http_s3_region "
    "http_swift_auth_token http_s3_sse_customer_key http_s3_sse_customer_algorithm "
    "http_s3_storage_class http_mode http_verbose https",
)
_add("ignored", "str", "volume brick single-instance")
_add("ignored", "str", "thp")
_add("ignored", "str", "skip_bad")
_add("ignored", "str", "uri")
_add("ignored", "str", "nfs_url")
_add("ignored", "str", "program arguments grace_time std_redirect")
_add("ignored", "str", "stat_type")
_add("ignored", "str", "gpu_dev_ids cuda_io")
_add("ignored", "str", "no_completion_thread")
_add("ignored", "str", "xnvme_sync xnvme_admin xnvme_dev_nsid xnvme_dev_subnqn xnvme_mem xnvme_iovec")
_add(
    "ignored",
    "str",
    "libblkio_path libblkio_pre_connect_props libblkio_num_entries "
    "libblkio_queue_size libblkio_pre_start_props libblkio_vectored libblkio_write_zeroes_on_trim "
    "libblkio_force_enable_completion_eventfd",
)


# Non-flag options that fio 3.33 also accepts without a value.
OPTIONAL_VALUE = frozenset(
    {
        "write_bw_log",
        "write_lat_log",
        "write_hist_log",
        "write_iops_log",
        "ignore_error",
        "log_compression_cpus",
        "numa_cpu_nodes",
        "numa_mem_policy",
        "replay_skip",
        "verify_async_cpus",
    }
)

# --- stacksim-specific job options (not fio options: fio rejects them) ------------------------
STACKSIM_PREFIX = "stacksim_"
STACKSIM_OPTIONS: dict[str, OptionSpec] = {}
"""stacksim-only job options. Add new ones here (prefix ``stacksim_``) and handle them in handlers.py."""

_add(
    "used",
    "str",
    "stacksim_irq_hint",
    choices=("default", "urgent", "barrier", "untagged"),
    help="completion-interrupt hint: urgent (RWF_URGENT), barrier (RWF_BARRIER), untagged, or default (no flag)",
    table=STACKSIM_OPTIONS,
)
_add(
    "used",
    "str",
    "stacksim_fio_version",
    help="the fio release that runs the job, MAJOR.MINOR (default 3.42): io_uring rings ask for"
    " DEFER_TASKRUN from fio 3.33 (fio-3.32 does not)",
    table=STACKSIM_OPTIONS,
)

# --- the options of fio's built-in profiles (act, tiobench) ------------------------------------
#: profile option name -> the profiles that define it (``threads``: tiobench's thread count, ...)
PROFILE_OPTIONS: dict[str, tuple[str, ...]] = {}
for _profile, _entries in sorted(CATALOGUE["profiles"].items()):
    for _e in _entries:
        PROFILE_OPTIONS[_e["name"]] = (*PROFILE_OPTIONS.get(_e["name"], ()), _profile)


def _add_profile_options() -> None:
    """fio accepts a profile's options in any job, with or without ``profile=``: each profile
    registers its options into the one option table at start-up (fio's profile.c
    ``register_profile`` -> ``add_profile_options`` -> options.c ``add_option``), and the parser
    matches names exactly (parse.c ``o_match``: the name or its alias, no prefixes). So
    ``threads=1`` (tiobench's thread count) is accepted and, without ``profile=tiobench``, sets
    only the unused profile's variable: no effect on the job. A name that is also a general option
    (``size``) is the general option, found first."""
    for name, profiles in PROFILE_OPTIONS.items():
        if name in FIO_OPTIONS:
            continue
        entry = next(e for p in profiles for e in CATALOGUE["profiles"][p] if e["name"] == name)
        kind: Kind = "flag" if entry["type"] == "flag" else "str"
        FIO_OPTIONS[name] = OptionSpec(
            name,
            "ignored",
            kind,
            help=f"an option of fio's {'/'.join(profiles)} profile: no effect on a job without profile=",
        )


_add_profile_options()

_unclassified = set(CATALOGUE_NAMES) - set(FIO_OPTIONS)
if _unclassified:
    raise AssertionError(f"fio catalogue options without a stacksim status: {sorted(_unclassified)}")


def lookup(name: str) -> OptionSpec | None:
    """Return the spec of a fio or stacksim option name (exact, case-sensitive as in fio)."""
    return FIO_OPTIONS.get(name) or STACKSIM_OPTIONS.get(name)


def used_options() -> list[str]:
    """Names (with aliases) of the options the simulator consumes."""
    table = FIO_OPTIONS | STACKSIM_OPTIONS
    return sorted(n for n, s in table.items() if s.status == "used")
