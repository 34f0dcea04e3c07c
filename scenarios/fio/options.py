"""Catalogue of fio 3.x job options and how stacksim treats each of them.

Every option name (and alias) fio 3.x accepts in a job file is listed (checked against
``fio --parse-only`` of fio 3.33; a few names are from later 3.x releases, e.g. the FDP,
``pi_*``, ``priohint`` and ``log_issue_time`` options), with one status:

* ``used``    -- consumed by the simulator (table below);
* ``ignored`` -- accepted, has no effect on the simulation (names, logging, reporting, data
  content, file layout, ...); reported in ``FioJob.ignored_options``;
* ``limited`` -- accepted only with a value that does not change what fio does (``neutral``,
  e.g. ``verify=0``, ``zonemode=none``); any other value is a ConfigError saying stacksim
  does not support it. Accepted values are reported like ignored options.

Options marked with ``engines`` are fio ioengine options: like fio ("Bad option"), stacksim
rejects them when the job uses another ioengine.

USED options (→ ``FioJob`` field; units):

=============================================  ===========================  ===========================================
fio option (aliases)                           FioJob field                 value / unit
=============================================  ===========================  ===========================================
rw (readwrite)                                 rw                           read write randread randwrite rw readwrite randrw
rwmixread, rwmixwrite                          rwmixread                    percent of reads, 0..100 (default 50)
bs (blocksize)                                 bs_read_bytes/bs_write_bytes size, ``read[,write[,trim]]`` (default 4k)
bssplit                                        bssplit_read/_write          SIZE/PERCENT:..., per direction; overrides bs
blocksize_range (bsrange)                      bsrange_read/_write          MIN-MAX, per direction; overrides bs
numjobs                                        numjobs                      >= 1 (not expanded by the parser)
ioengine                                       ioengine                     psync sync pvsync2 libaio io_uring
iodepth                                        iodepth                      >= 1
iodepth_batch_submit (iodepth_batch)           iodepth_batch_submit         0 or > iodepth => iodepth
iodepth_batch_complete_min (..._complete)      iodepth_batch_complete_min   >= 0 (0 = poll without waiting)
iodepth_batch_complete_max                     iodepth_batch_complete_max   default = complete_min, <= iodepth
direct, buffered (= not direct)                direct                       bool; stacksim requires direct=1
runtime (timeout)                              runtime_ns                   time, default unit s; 0 = none
ramp_time                                      ramp_time_ns                 time, default unit s
time_based                                     time_based                   bool; needs runtime
size                                           size_bytes                   size
offset                                         offset_bytes                 size
cpus_allowed, cpumask                          cpus_allowed                 ``0-3,6`` / bit mask
cpus_allowed_policy                            cpus_allowed_policy          shared | split
rate_iops                                      rate_iops_read/_write        IO/s, ``read[,write[,trim]]``; 0 = none
thinktime                                      thinktime_ns                 time, default unit us
hipri                                          hipri                        bool (pvsync2, io_uring)
sqthread_poll, sqthread_poll_cpu               sqthread_poll(_cpu)          bool / CPU number (io_uring)
registerfiles, fixedbufs                       registerfiles, fixedbufs     bool (io_uring)
nowait                                         nowait                       bool (io_uring, libaio, pvsync2)
kb_base                                        (size parsing)               1024 (default) | 1000
iodepth_low                                    (checked)                    must be 0 or equal iodepth
=============================================  ===========================  ===========================================

stacksim-specific options (fio rejects them, so a file using them runs only in stacksim) are
kept in :data:`STACKSIM_OPTIONS`; they are all prefixed ``stacksim_``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from models.ioengines import MODELLED_ENGINES

Status = Literal["used", "ignored", "limited"]
Kind = Literal["flag", "bool", "int", "size", "time", "str"]  # flag: fio set-type, value optional


@dataclass(frozen=True, slots=True)
class OptionSpec:
    """One fio option. ``name`` is the canonical fio name; aliases map to the same spec."""

    name: str
    status: Status
    kind: Kind = "str"
    neutral: tuple[str, ...] = ()  # limited: normalised values stacksim accepts
    engines: frozenset[str] | None = None  # ioengine option: valid only with these engines
    choices: tuple[str, ...] = ()  # allowed values (lower-case), when fixed
    help: str = ""


FIO_OPTIONS: dict[str, OptionSpec] = {}
"""Every fio option name and alias -> its spec."""

KNOWN_ENGINES = frozenset(MODELLED_ENGINES) | {
    "vsync", "pvsync", "io_uring_cmd", "posixaio", "solarisaio", "windowsaio", "mmap", "splice",
    "sg", "null", "net", "netsplice", "cpuio", "rdma", "e4defrag", "falloc", "ftruncate",
    "filecreate", "filestat", "filedelete", "dircreate", "dirstat", "dirdelete", "exec", "guasi",
    "rbd", "rados", "http", "gfapi", "gfapi_async", "libhdfs", "mtd", "dev-dax", "pmemblk",
    "libpmem", "libcufile", "nbd", "nfs", "ime_psync", "ime_psyncv", "ime_aio", "libiscsi",
    "libzbc", "dfs", "xnvme", "libblkio", "librpma_apm_client", "librpma_apm_server",
    "librpma_gpspm_client", "librpma_gpspm_server",
}
RW_MODES = ("read", "write", "randread", "randwrite", "rw", "readwrite", "randrw")
TRIM_MODES = ("trim", "randtrim", "trimwrite", "randtrimwrite")

IO_URING = ("io_uring", "io_uring_cmd")
CMDPRIO = ("libaio", *IO_URING)


def _add(status: Status, kind: Kind, names: str, *, neutral: tuple[str, ...] = (),
         engines: tuple[str, ...] | None = None, choices: tuple[str, ...] = (), help: str = "",
         table: dict[str, OptionSpec] = FIO_OPTIONS) -> None:
    """Register options; ``names`` is whitespace separated, each ``canonical|alias|...``."""
    for token in names.split():
        canonical, *aliases = token.split("|")
        spec = OptionSpec(canonical, status, kind, neutral,
                          frozenset(engines) if engines else None, choices, help)
        for name in (canonical, *aliases):
            if name in table:
                raise AssertionError(f"fio option {name!r} registered twice")
            table[name] = spec


# --- used by the simulator -------------------------------------------------------------------
_add("used", "str", "rw|readwrite", choices=RW_MODES + TRIM_MODES, help="IO pattern")
_add("used", "int", "rwmixread rwmixwrite", help="percentage of reads / writes in mixed IO")
_add("used", "size", "bs|blocksize", help="block size, read[,write[,trim]]")
_add("used", "str", "bssplit", help="mixed block sizes SIZE/PERCENT:..., read[,write[,trim]]")
_add("used", "str", "blocksize_range|bsrange", help="block sizes uniform in MIN-MAX, read[,write[,trim]]")
_add("used", "int", "numjobs iodepth iodepth_batch_submit|iodepth_batch "
     "iodepth_batch_complete_min|iodepth_batch_complete iodepth_batch_complete_max iodepth_low")
_add("used", "str", "ioengine", help="IO engine")
_add("used", "bool", "direct buffered")
_add("used", "flag", "time_based")
_add("used", "time", "runtime|timeout ramp_time", help="default unit: seconds")
_add("used", "time", "thinktime", help="default unit: microseconds")
_add("used", "size", "size offset")
_add("used", "str", "cpus_allowed cpumask")
_add("used", "str", "cpus_allowed_policy", choices=("shared", "split"))
_add("used", "str", "rate_iops", help="IO/s, read[,write[,trim]]")
_add("used", "int", "kb_base", choices=("1000", "1024"))
_add("used", "flag", "hipri", engines=("pvsync2", *IO_URING, "sg"))
_add("used", "flag", "sqthread_poll registerfiles fixedbufs", engines=IO_URING)
_add("used", "int", "sqthread_poll_cpu", engines=IO_URING)
_add("used", "bool", "nowait", engines=(*IO_URING, "libaio", "pvsync2"))

# --- accepted only with a neutral value ---------------------------------------------------------
_add("limited", "str", "verify", neutral=("0", "none"), help="data verification")
_add("limited", "bool", "atomic file_append fill_device|fill_fs bs_is_seq_rand fdp", neutral=("0",))
_add("limited", "flag", "verify_only blocksize_unaligned|bs_unaligned", neutral=("0",))
_add("limited", "int", "fsync fdatasync write_barrier number_ios trim_percentage flow", neutral=("0",))
_add("limited", "int", "loops thinktime_blocks", neutral=("1",))
_add("limited", "time", "startdelay thinktime_spin thinktime_iotime latency_target", neutral=("0",))
_add("limited", "size", "offset_increment zonerange zonesize zoneskip zonecapacity", neutral=("0",))
_add("limited", "str", "zonemode ioscheduler", neutral=("none",))
_add("limited", "str", "dataplacement", neutral=("none",))
_add("limited", "str", "sync", neutral=("0", "none"), help="O_SYNC/O_DSYNC writes")
_add("limited", "str", "rate", neutral=("0", "0,0", "0,0,0"), help="bandwidth cap; use rate_iops")
_add("limited", "str", "rate_process", neutral=("linear",))
_add("limited", "str", "io_submit_mode", neutral=("inline",))
_add("limited", "str", "thinktime_blocks_type", neutral=("complete",))
_add("limited", "str", "random_distribution", neutral=("random",))
_add("limited", "str", "lockfile", neutral=("none",))
_add("limited", "str", "percentage_random io_size|io_limit filesize "
     "sync_file_range read_iolog numa_cpu_nodes steadystate|ss profile")  # no neutral value
_add("limited", "int", "cmdprio_percentage", neutral=("0",), engines=CMDPRIO)
_add("limited", "str", "cmdprio_bssplit", engines=CMDPRIO)
_add("limited", "flag", "userspace_reap", neutral=("0",), engines=("libaio",))
_add("limited", "int", "force_async", neutral=("0",), engines=IO_URING)
_add("limited", "int", "hipri_percentage", neutral=("100",), engines=("pvsync2",))

# --- ignored: no effect on the simulated IO path -----------------------------------------------
_add("ignored", "flag", "group_reporting new_group stonewall|wait_for_previous exitall "
     "exitall_on_error thread norandommap zero_buffers refill_buffers")
_add("ignored", "bool",
     "randrepeat allrandrepeat softrandommap overwrite end_fsync fsync_on_close "
     "invalidate scramble_buffers create_serialize create_fsync "
     "create_on_open create_only allow_file_create allow_mounted_write pre_read unlink "
     "unlink_each_loop unique_filename dedupe_global do_verify verify_fatal verify_dump "
     "verify_state_save verify_state_load experimental_verify trim_verify_zero per_job_logs "
     "log_offset log_prio log_issue_time log_store_compressed log_alternate_epoch|log_unix_epoch "
     "block_error_percentiles disable_lat disable_clat disable_slat disable_bw_measurement|disable_bw "
     "slat_percentiles clat_percentiles lat_percentiles gtod_reduce stats disk_util "
     "rate_ignore_thinktime replay_no_stall serialize_overlap read_beyond_wp ignore_zone_limits "
     "cgroup_nodelete")
_add("ignored", "str",
     "name description directory filename filename_format opendir file_service_type randseed "
     "random_generator fallocate fadvise_hint write_hint offset_align blockalign|ba "
     "buffer_compress_percentage buffer_compress_chunk buffer_pattern dedupe_percentage dedupe_mode "
     "dedupe_working_set_percentage iomem|mem iomem_align|mem_align hugepage-size lockmem "
     "nrfiles openfiles wait_for exit_what nice prio prioclass priohint uid gid cgroup cgroup_weight "
     "unit_base gtod_cpu clocksource job_start_clock_id unified_rw_reporting write_bw_log "
     "write_lat_log write_hist_log write_iops_log log_entries log_avg_msec log_hist_msec "
     "log_hist_coarseness log_max_value|log_window_value log_compression log_compression_cpus "
     "log_alternate_epoch_clock_id bwavgtime iopsavgtime percentile_list significant_figures "
     "rate_min rate_iops_min rate_cycle max_latency latency_window latency_percentile latency_run "
     "continue_on_error ignore_error error_dump exec_prerun exec_postrun write_iolog "
     "read_iolog_chunked replay_redirect replay_align replay_scale replay_time_scale replay_skip "
     "merge_blktrace_file merge_blktrace_scalars merge_blktrace_iters verify_offset verify_interval "
     "verify_pattern verify_async verify_async_cpus verify_backlog verify_backlog_batch "
     "trim_backlog trim_backlog_batch rw_sequencer numa_mem_policy flow_id flow_sleep "
     "steadystate_duration|ss_dur steadystate_ramp_time|ss_ramp steadystate_check_interval "
     "max_open_zones job_max_open_zones zone_reset_threshold zone_reset_frequency "
     "fdp_pli|plids fdp_pli_select|plid_select num_range")

# ioengine-specific options (ignored: either no effect, or the engine itself is not modelled)
_add("ignored", "str", "cmdprio_class cmdprio cmdprio_hint", engines=CMDPRIO)
_add("ignored", "str", "nonvectored", engines=IO_URING)
_add("ignored", "str", "uncached", engines=(*IO_URING, "pvsync2"))
_add("ignored", "str", "cmd_type", engines=IO_URING)
_add("ignored", "str", "md_per_io_size pi_act pi_chk apptag apptag_mask", engines=("io_uring_cmd",))
_add("ignored", "str", "readfua writefua sg_write_mode stream_id", engines=("sg",))
_add("ignored", "str", "hostname port", engines=("net", "netsplice", "rdma", "libhdfs"))
_add("ignored", "str", "interface ttl nodelay protocol|proto window_size mss", engines=("net", "netsplice"))
_add("ignored", "flag", "listen pingpong", engines=("net", "netsplice"))
_add("ignored", "str", "verb bindname", engines=("rdma",))
_add("ignored", "str", "cpuload cpumode cpuchunks exit_on_io_done", engines=("cpuio",))
_add("ignored", "str", "donorname inplace", engines=("e4defrag",))
_add("ignored", "str", "clustername clientname busy_poll", engines=("rbd", "rados"))
_add("ignored", "str", "rbdname", engines=("rbd",))
_add("ignored", "str", "touch_objects conf", engines=("rados",))
_add("ignored", "str", "pool", engines=("rbd", "rados", "dfs"))
_add("ignored", "str", "chunk_size", engines=("libhdfs", "dfs"))
_add("ignored", "str", "cont object_class svcl", engines=("dfs",))
_add("ignored", "str", "namenode hdfsdirectory single_instance hdfs_use_direct", engines=("libhdfs",))
_add("ignored", "str", "http_host http_user http_pass http_s3_key http_s3_keyid http_s3_region "
     "http_swift_auth_token http_s3_sse_customer_key http_s3_sse_customer_algorithm "
     "http_s3_storage_class http_mode http_verbose https", engines=("http",))
_add("ignored", "str", "volume brick single-instance", engines=("gfapi", "gfapi_async"))
_add("ignored", "str", "thp", engines=("mmap",))
_add("ignored", "str", "skip_bad", engines=("mtd",))
_add("ignored", "str", "uri", engines=("nbd",))
_add("ignored", "str", "nfs_url", engines=("nfs",))
_add("ignored", "str", "program arguments grace_time std_redirect", engines=("exec",))
_add("ignored", "str", "stat_type", engines=("filestat",))
_add("ignored", "str", "gpu_dev_ids cuda_io", engines=("libcufile",))
_add("ignored", "str", "no_completion_thread", engines=("windowsaio",))
_add("ignored", "str", "xnvme_async xnvme_sync xnvme_admin xnvme_dev_nsid xnvme_dev_subnqn xnvme_mem "
     "xnvme_iovec", engines=("xnvme",))
_add("ignored", "str", "libblkio_driver libblkio_path libblkio_pre_connect_props libblkio_num_entries "
     "libblkio_queue_size libblkio_pre_start_props libblkio_vectored libblkio_write_zeroes_on_trim "
     "libblkio_wait_mode libblkio_force_enable_completion_eventfd", engines=("libblkio",))


# Non-flag options that fio 3.33 also accepts without a value.
OPTIONAL_VALUE = frozenset({
    "write_bw_log", "write_lat_log", "write_hist_log", "write_iops_log", "ignore_error",
    "log_compression_cpus", "numa_cpu_nodes", "numa_mem_policy", "replay_skip", "verify_async_cpus",
})

# --- stacksim-specific job options (not fio options: fio rejects them) ------------------------
STACKSIM_PREFIX = "stacksim_"
STACKSIM_OPTIONS: dict[str, OptionSpec] = {}
"""stacksim-only job options. Add new ones here (prefix ``stacksim_``) and handle them in parser.py."""

_add("used", "str", "stacksim_irq_hint", choices=("default", "urgent", "barrier", "untagged"),
     help="completion-interrupt hint: urgent (RWF_URGENT), barrier (RWF_BARRIER), untagged, "
          "or default (no flag)", table=STACKSIM_OPTIONS)


def lookup(name: str) -> OptionSpec | None:
    """Return the spec of a fio or stacksim option name (exact, case-sensitive as in fio)."""
    return FIO_OPTIONS.get(name) or STACKSIM_OPTIONS.get(name)


def used_options() -> list[str]:
    """Names (with aliases) of the options the simulator consumes."""
    table = FIO_OPTIONS | STACKSIM_OPTIONS
    return sorted(n for n, s in table.items() if s.status == "used")
