"""The option table: how each fio option stacksim models sets the job's fields (:data:`HANDLERS`,
one handler per catalogue option of status ``used``: :mod:`.options`), with fio's conversions of
its values (sizes with ``kb_base``, times, ranges, percentages, fio's lists), and the fields that
tie a job to an engine (:data:`ENGINE_FIELDS`). A handler takes the job's fields so far, the
option's value (None: given without one) and the job's ``kb_base``, and raises ConfigError naming
the option (the builder, :mod:`.build`, adds the file, line and job)."""

from __future__ import annotations

import difflib
from typing import Any, Callable

from models.ioengines.steadystate import CRITERIA
from models.os.kernel_version import parse_version
from simcore.errors import ConfigError

from . import engines as lib_engines
from . import options as opts
from .errors import parse_continue_on_error, parse_ignore_error
from .protection import HANDLERS as PROTECTION_HANDLERS
from .units import (
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
from .write_mode import HANDLERS as WRITE_MODE_HANDLERS
from .zoned import HANDLERS as ZONED_HANDLERS
from .zoned import zone_count

__all__ = ["ENGINE_FIELDS", "HANDLERS", "Handler", "set_ioengine"]

Handler = Callable[[dict[str, Any], str | None, int], None]


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


def set_ioengine(st: dict[str, Any], v: str | None, kb: int) -> None:
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


def _set_rwt(option: str, field_r: str, field_w: str, parse: Callable[[str, int], Any], default: Any) -> Handler:
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


def _set_field(field: str, convert: Callable[[str | None, int], Any]) -> Handler:
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


def _ioscheduler(v: str | None) -> str:
    """fio's ``ioscheduler``: a scheduler name as fio writes it to queue/scheduler (case kept, as
    sysfs matches it); whether it exists is known only once the plug-ins are loaded (the run)."""
    text = (v or "").strip()
    if not text or any(c.isspace() for c in text):
        raise ConfigError(f"option 'ioscheduler': {v!r} is not a scheduler name (none, mq-deadline, kyber, bfq, ...)")
    return text


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


HANDLERS: dict[str, Handler] = {
    "rw": _set_rw,
    "ioengine": set_ioengine,
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
    "ioscheduler": _set_field("ioscheduler", lambda v, kb: _ioscheduler(v)),
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
    "random_sequence_stride": _set_field("random_sequence_stride", _bool("random_sequence_stride")),
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
    **WRITE_MODE_HANDLERS,
}
_missing = {s.name for s in (*opts.FIO_OPTIONS.values(), *opts.STACKSIM_OPTIONS.values()) if s.status == "used"} - set(
    HANDLERS
)
assert not _missing, f"used options without a handler: {_missing}"

# Non-default field values that need a given ioengine (fio ties these options to the engine).
ENGINE_FIELDS = {
    f: opts.FIO_OPTIONS[f].engines
    for f in ("hipri", "sqthread_poll", "sqthread_poll_cpu", "registerfiles", "fixedbufs", "nowait")
}
