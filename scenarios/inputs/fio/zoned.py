"""fio's options for zoned block devices (``zonemode`` and its zone options, zbd.c) and NVMe
flexible data placement (``fdp``/``dataplacement``, ``fdp_pli``, ``fdp_pli_select``,
dataplacement.c): their handlers and the rules fio checks on a job.

Rules as fio 3.42 documents and checks them (HOWTO.rst; zbd.c; options.c):

* ``zonemode=zbd``: "zonerange and zonesize must be identical"; ``zoneskip`` is for strided mode
  (0 in zbd mode); ``zonecapacity`` only for emulated zones (a real zoned device reports its own);
* ``zone_reset_threshold`` and ``zone_reset_frequency`` are fractions 0..1 (fio's
  ``FIO_OPT_FLOAT_LIST`` with minfp 0, maxfp 1);
* ``max_open_zones`` at most ``ZBD_MAX_WRITE_ZONES`` (4096, zbd_types.h);
* ``fdp=1`` is ``dataplacement=fdp``; ``dataplacement=streams`` is NVMe streams (not modelled);
  ``fdp_pli`` lists placement ID indices (``plids``), at most :data:`FIO_MAX_DP_IDS` of them;
  ``fdp_pli_select=scheme`` needs a ``dp_scheme`` file (not modelled).

The checks against the device (a zoned device, its zone size, its limits, its placement handles)
need the platform: :func:`scenarios.config.resolve.resolve_run`.
"""

from __future__ import annotations

from typing import Any, Callable

from models.os.fs.filesystem import is_device
from simcore.errors import ConfigError

from .units import parse_bool, parse_int, parse_size

#: fio's ZBD_MAX_WRITE_ZONES (zbd_types.h): the most zones fio tracks as write targets
ZBD_MAX_WRITE_ZONES = 4096
#: the most placement IDs one job may list (fio 3.41's FIO_MAX_DP_IDS, dataplacement.h: 128)
FIO_MAX_DP_IDS = 128
#: the engines that can fetch a device's reclaim unit handles (fio's ``fdp_fetch_ruhs`` op, 3.41)
FDP_ENGINES = ("io_uring_cmd", "xnvme")

_Handler = Callable[[dict[str, Any], str | None, int], None]


def _fraction(option: str) -> _Handler:
    def handler(st: dict[str, Any], v: str | None, kb: int) -> None:
        text = (v or "").strip()
        try:
            val = float(text)
        except ValueError:
            raise ConfigError(f"option '{option}': '{text}' is not a number (a fraction from 0 to 1)") from None
        if not 0.0 <= val <= 1.0:
            raise ConfigError(f"option '{option}': {val:g} is outside 0..1 (fio's range for it)")
        st[option] = val

    return handler


def _size(option: str) -> _Handler:
    def handler(st: dict[str, Any], v: str | None, kb: int) -> None:
        st[f"{option}_bytes"] = parse_size(v, option=option, kb_base=kb, allow_zero=True)

    return handler


def _int(option: str, maximum: int) -> _Handler:
    def handler(st: dict[str, Any], v: str | None, kb: int) -> None:
        st[option] = parse_int(v, option=option, minimum=0, maximum=maximum)

    return handler


def _bool(option: str) -> _Handler:
    def handler(st: dict[str, Any], v: str | None, kb: int) -> None:
        st[option] = parse_bool(v, option=option)

    return handler


def _zonemode(st: dict[str, Any], v: str | None, kb: int) -> None:
    val = (v or "").strip().lower()
    if val not in ("none", "strided", "zbd"):
        raise ConfigError(f"option 'zonemode': unknown value '{val}' (allowed: none, strided, zbd)")
    st["zonemode"] = val


def _dataplacement(st: dict[str, Any], v: str | None, kb: int) -> None:
    val = (v or "").strip().lower()
    if val == "streams":
        raise ConfigError(
            "option 'dataplacement=streams' is accepted by fio but not modelled yet by stacksim: NVMe"
            " streams directives are not modelled (dataplacement=fdp is)"
        )
    if val not in ("none", "fdp"):
        raise ConfigError(f"option 'dataplacement': unknown value '{val}' (allowed: none, fdp, streams)")
    st["fdp"] = val == "fdp"


def _fdp(st: dict[str, Any], v: str | None, kb: int) -> None:
    st["fdp"] = parse_bool(v, option="fdp")


def _fdp_pli(st: dict[str, Any], v: str | None, kb: int) -> None:
    """``fdp_pli=1,3`` or ``0-3``: placement ID indices (fio's str_fdp_pli_cb: comma-separated
    values and ranges)."""
    text = (v or "").strip()
    out: list[int] = []
    for part in text.split(","):
        lo_s, sep, hi_s = part.strip().partition("-")
        lo = parse_int(lo_s, option="fdp_pli", minimum=0)
        hi = parse_int(hi_s, option="fdp_pli", minimum=0) if sep else lo
        if hi < lo:
            raise ConfigError(f"option 'fdp_pli': range '{part.strip()}' ends before it starts")
        out.extend(range(lo, hi + 1))
        if len(out) > FIO_MAX_DP_IDS:
            raise ConfigError(
                f"option 'fdp_pli': more than {FIO_MAX_DP_IDS} placement IDs (fio: only 128 IDs supported)"
            )
    st["fdp_pli"] = tuple(out)


def _fdp_pli_select(st: dict[str, Any], v: str | None, kb: int) -> None:
    val = (v or "").strip().lower()
    if val == "scheme":
        raise ConfigError(
            "option 'fdp_pli_select=scheme' is accepted by fio but not modelled yet by stacksim: placement"
            " by a dp_scheme file of offset ranges is not modelled (roundrobin and random are)"
        )
    if val not in ("roundrobin", "random"):
        raise ConfigError(f"option 'fdp_pli_select': unknown value '{val}' (allowed: roundrobin, random, scheme)")
    st["fdp_pli_select"] = val


HANDLERS: dict[str, _Handler] = {
    "zonemode": _zonemode,
    "zonesize": _size("zonesize"),
    "zonerange": _size("zonerange"),
    "zoneskip": _size("zoneskip"),
    "zonecapacity": _size("zonecapacity"),
    "max_open_zones": _int("max_open_zones", ZBD_MAX_WRITE_ZONES),
    "job_max_open_zones": _int("job_max_open_zones", ZBD_MAX_WRITE_ZONES),
    "zone_reset_threshold": _fraction("zone_reset_threshold"),
    "zone_reset_frequency": _fraction("zone_reset_frequency"),
    "ignore_zone_limits": _bool("ignore_zone_limits"),
    "read_beyond_wp": _bool("read_beyond_wp"),
    "fdp": _fdp,
    "dataplacement": _dataplacement,
    "fdp_pli": _fdp_pli,
    "fdp_pli_select": _fdp_pli_select,
}


def zone_count(text: str, option: str) -> int | None:
    """fio's ``Nz`` sizes and offsets (a count of zones; zonemode=zbd): N, or None for a plain size."""
    t = text.strip().lower()
    if not t.endswith("z") or not t[:-1].strip().isdigit():
        return None
    return parse_int(t[:-1], option=option, minimum=0)


def check_zoned(state: dict[str, Any], last: dict, fail) -> None:
    """fio's checks of a job's zone and placement options that need no device (see the module)."""
    mode = state["zonemode"]
    if mode == "none":
        for opt in ("zonesize", "zonerange", "zoneskip", "zonecapacity"):
            if state[f"{opt}_bytes"]:
                raise fail(f"option '{opt}' needs zonemode=strided or zonemode=zbd (fio's zonemode is none)", last[opt])
        if state["size_zones"] is not None or state["offset_zones"] is not None:
            raise fail("sizes in zones ('z' suffix) need zonemode=zbd", last.get("size") or last.get("offset"))
    elif len(state["filename"]) > 1 or state["nrfiles"] > 1 or state["directory"]:
        raise fail(
            f"zonemode={mode} with several files or a directory in one job is not modelled yet by stacksim",
            last.get("filename") or last.get("nrfiles") or last.get("directory"),
        )
    if mode == "zbd":
        _check_zbd(state, last, fail)
    if mode == "strided" and not state["zonesize_bytes"]:
        raise fail("zonemode=strided needs zonesize > 0 (the bytes to transfer in each zone)", last.get("zonemode"))
    buffered = (not state["direct"] and state["ioengine"] != "io_uring_cmd") or state["ioengine"] == "mmap"
    if mode == "zbd" and buffered and state["rw"] not in ("read", "randread"):
        raise fail(
            "zonemode=zbd writes need direct=1: the page cache would write the zones back out of order"
            " (fio refuses it too: 'Using direct I/O is mandatory for writing to ZBD drives')",
            last.get("direct") or last.get("zonemode"),
        )
    if (state["fdp_pli"] or last.get("fdp_pli_select")) and not state["fdp"]:
        raise fail("options 'fdp_pli' / 'fdp_pli_select' need fdp=1", last.get("fdp_pli") or last.get("fdp_pli_select"))


def _check_zbd(state: dict[str, Any], last: dict, fail) -> None:
    """zonemode=zbd: what fio refuses, and what is not modelled (other engines, emulated zones)."""
    if state["ioengine"] in ("spdk", "null"):
        raise fail(
            f"zonemode=zbd with ioengine={state['ioengine']} is not modelled yet by stacksim", last.get("zonemode")
        )
    if state["rw"] in ("trimwrite", "randtrimwrite") or state["io_submit_mode"] == "offload":
        raise fail(
            "zonemode=zbd with trimwrite or io_submit_mode=offload is not modelled yet by stacksim",
            last.get("rw") if "trim" in state["rw"] else last.get("io_submit_mode"),
        )
    if state["filename"] and not all(is_device(n) for n in state["filename"]):
        raise fail(
            "zonemode=zbd on a regular file (fio emulates zones there) is not modelled yet by stacksim;"
            " name the zoned block device (filename=/dev/nvmeXnY)",
            last.get("filename"),
        )
    if state["zoneskip_bytes"]:
        raise fail("option 'zoneskip' is for zonemode=strided; fio's zonemode=zbd ignores it: set 0", last["zoneskip"])
    if state["zonerange_bytes"] and state["zonerange_bytes"] != state["zonesize_bytes"]:
        raise fail("with zonemode=zbd, zonerange and zonesize must be identical (fio's HOWTO)", last.get("zonerange"))
    if state["zonecapacity_bytes"]:
        raise fail(
            "option 'zonecapacity' is for emulated zones; a zoned device reports its own zone capacity",
            last["zonecapacity"],
        )
    if state["max_open_zones"] and state["job_max_open_zones"] > state["max_open_zones"]:
        raise fail("job_max_open_zones exceeds max_open_zones", last.get("job_max_open_zones"))


def _device_zone_limit(zc) -> int:
    """The write-zone limit fio reads from a zoned device: its max_active_zones when it has one (then
    it bounds the open and closed zones together), else max_open_zones; 0: none."""
    return zc.max_active_zones or zc.max_open_zones or 0


def _check_fdp_engine(job, where: str) -> None:
    """fio parses fdp=1 with any engine (options.c's general table); when it sets the file up,
    dp_init asks the engine for the device's reclaim unit handles, and an engine without the
    ``fdp_fetch_ruhs`` op fails the job (dataplacement.c fdp_ruh_info)."""
    engine = job.engine_library or job.ioengine
    if engine not in FDP_ENGINES:
        raise ConfigError(
            f"{where}: fdp=1 needs ioengine io_uring_cmd or xnvme (the engines that read the device's reclaim"
            f" unit handles); fio refuses it too: 'engine ({engine}) lacks fetch ruhs'"
        )


def resolve_zoned(job, ssd) -> Any:
    """A job's zone and placement options against the device ``ssd`` (a DeviceConfig): the checks
    fio makes when it opens the device, and ``Nz`` sizes in bytes. Returns the job (updated)."""
    where = f"job '{job.name}'"
    cap = ssd.capacity_bytes
    zc = ssd.zoned
    update: dict[str, Any] = {}
    if job.zonemode == "zbd":
        if zc is None:
            raise ConfigError(
                f"{where}: zonemode=zbd needs a zoned device, and {ssd.model} is a conventional namespace"
                " (ssd.zoned is not set; e.g. --platform zn540-e5-2660v4). fio would emulate zones on it;"
                " stacksim models zonemode=zbd on zoned namespaces only"
            )
        if job.zonesize_bytes > cap:
            raise ConfigError(f"{where}: zonesize={job.zonesize_bytes} bytes is larger than the device ({cap} bytes)")
        if job.zonesize_bytes and job.zonesize_bytes != zc.zone_size_bytes:
            raise ConfigError(
                f"{where}: job parameter zonesize {job.zonesize_bytes} does not match the zone size of"
                f" {ssd.model} ({zc.zone_size_bytes} bytes); fio refuses it too"
            )
        limit = _device_zone_limit(zc)
        if limit and job.max_open_zones > limit and not job.ignore_zone_limits:
            raise ConfigError(
                f"{where}: max_open_zones={job.max_open_zones} is larger than the device's limit ({limit},"
                f" {ssd.model}); fio refuses it unless ignore_zone_limits=1"
            )
        zone = zc.zone_size_bytes
        if "trim" in job.rw and job.bs_trim_bytes != zone:
            raise ConfigError(
                f"{where}: zonemode=zbd: trim block size {job.bs_trim_bytes} is not the zone size {zone}"
                f" ({ssd.model}); fio refuses it too (zbd_verify_bs: a trim resets one whole zone)"
            )
    else:
        if job.zonesize_bytes and cap is not None and job.zonesize_bytes > cap:
            raise ConfigError(f"{where}: zonesize={job.zonesize_bytes} bytes is larger than the device ({cap} bytes)")
        zone = job.zonesize_bytes
    if job.size_zones is not None:
        update.update(size_zones=None, size_bytes=job.size_zones * zone)
    if job.offset_zones is not None:
        update.update(offset_zones=None, offset_bytes=job.offset_zones * zone)
    if job.fdp:
        _check_fdp_engine(job, where)
        if (not job.direct and job.ioengine != "io_uring_cmd") or job.ioengine == "mmap":
            raise ConfigError(
                f"{where}: fdp=1 needs direct=1: buffered writes reach the device through writeback, without"
                " the job's placement handles"
            )
        handles = ssd.ftl.placement_handles
        if not ssd.ftl.enabled or handles < 2:
            raise ConfigError(
                f"{where}: fdp=1 needs a device with flexible data placement: ssd.ftl.enabled=1 and"
                f" ssd.ftl.placement_handles > 1 ({ssd.model} has {handles} reclaim unit handle(s)"
                f"{'' if ssd.ftl.enabled else ', no FTL model'})"
            )
        bad = [i for i in job.fdp_pli if i >= handles]
        if bad:
            raise ConfigError(
                f"{where}: fdp_pli index {bad[0]} is out of range: {ssd.model} has {handles} placement IDs"
                f" (indices 0-{handles - 1})"
            )
    return job.model_copy(update=update) if update else job
