"""fio's NVMe end-to-end protection information options (io_uring_cmd's ``md_per_io_size``,
``pi_act``, ``pi_chk``, ``apptag``, ``apptag_mask``; engines/io_uring.c and engines/nvme.c of fio
3.41) and its atomic writes (``atomic``, RWF_ATOMIC): their handlers and the checks fio and the
kernel make against the namespace.

What fio does with protection information on a namespace formatted with metadata
(``fio_nvme_get_info``, ``verify_params``, ``fio_nvme_pi_fill``, ``fio_nvme_pi_verify``):

* it reads the format (data size, metadata size ``ms``, extended LBA or separate buffer, the PI
  type and guard); with ``pi_act=1`` (the default) and ``ms`` equal to the tuple's size it uses
  neither a metadata buffer nor extended blocks (the controller inserts and strips the tuple:
  PRACT), so ``ms`` counts as 0;
* the block size must be a multiple of the block as it travels (data + metadata for an extended
  LBA: "block size must be a multiple of 4160 (LBA data size + Metadata size)"); with a separate
  buffer, ``md_per_io_size`` must hold the metadata of the largest block ("md_per_io_size should be
  at least N bytes");
* with ``pi_act=0`` fio generates each block's tuple on a write (the guard, a CRC over the block's
  data and the metadata before the tuple, when ``pi_chk`` has GUARD; the tags) and checks it on a
  read's completion; ``pi_chk`` sets the command's PRCHK bits, ``pi_act`` its PRACT bit;
* verify with an extended LBA and protection information is refused.

Atomic writes: fio sets RWF_ATOMIC on each write of an engine that can (pvsync2, libaio, io_uring:
FIO_ATOMICWRITES; init.c: "fio: engine does not support atomic writes" otherwise; a job without
writes drops it). The kernel accepts it from 6.11 (fio's HOWTO: "supported from the 6.11 Linux
kernel"; older kernels reject the unknown flag, kiocb_set_rw_flags: EOPNOTSUPP) on O_DIRECT writes
whose size is a power of two within the device's atomic write unit and whose offset is aligned to
it (blkdev_atomic_write_valid, generic_atomic_write_valid; EINVAL otherwise) [recalled, 6.11].
"""

from __future__ import annotations

from typing import Any, Callable

from models.os.block.request import PI_CHECKS
from models.os.kernel_version import has, parse_version
from simcore.errors import ConfigError

from .units import parse_bool, parse_int, parse_size

#: the engines that set RWF_ATOMIC (fio's FIO_ATOMICWRITES flag, 3.41)
ATOMIC_ENGINES = ("pvsync2", "libaio", "io_uring")

_Handler = Callable[[dict[str, Any], str | None, int], None]


def _number(text: str | None, option: str) -> int:
    """fio's integer options take C literals (strtoull base 0): ``0x0888`` or ``2184``."""
    t = (text or "").strip().lower()
    if t.startswith("0x"):
        try:
            return int(t, 16)
        except ValueError:
            raise ConfigError(f"option '{option}': expected an integer, got '{text}'") from None
    return parse_int(t, option=option, minimum=0)


def _tag(option: str) -> _Handler:
    def handler(st: dict[str, Any], v: str | None, kb: int) -> None:
        val = _number(v, option)
        if val > 0xFFFF:
            raise ConfigError(f"option '{option}': {val:#x} does not fit the 16-bit application tag")
        st[option] = val

    return handler


def _md_per_io_size(st: dict[str, Any], v: str | None, kb: int) -> None:
    st["md_per_io_size_bytes"] = parse_size(v, option="md_per_io_size", kb_base=kb, allow_zero=True)


def _pi_act(st: dict[str, Any], v: str | None, kb: int) -> None:
    st["pi_act"] = bool(parse_int(v, option="pi_act", minimum=0, maximum=1))


def _pi_chk(st: dict[str, Any], v: str | None, kb: int) -> None:
    """``GUARD,REFTAG,APPTAG``: fio looks each name up in the text (parse_prchk_flags: strstr)."""
    text = (v or "").strip()
    st["pi_chk"] = tuple(name for name in PI_CHECKS if name in text)


def _atomic(st: dict[str, Any], v: str | None, kb: int) -> None:
    st["atomic"] = parse_bool(v, option="atomic")


HANDLERS: dict[str, _Handler] = {
    "md_per_io_size": _md_per_io_size,
    "pi_act": _pi_act,
    "pi_chk": _pi_chk,
    "apptag": _tag("apptag"),
    "apptag_mask": _tag("apptag_mask"),
    "atomic": _atomic,
}


def check_atomic(state: dict[str, Any], last: dict, fail) -> None:
    """fio's init.c check of ``atomic=1``: an engine that sets RWF_ATOMIC; O_DIRECT writes."""
    if not state["atomic"]:
        return
    engine = state["engine_library"] or state["ioengine"]
    if engine not in ATOMIC_ENGINES:
        raise fail(
            f"atomic=1 needs ioengine {'/'.join(ATOMIC_ENGINES)} (RWF_ATOMIC); fio refuses it too: 'fio: engine"
            " does not support atomic writes'",
            last.get("atomic"),
        )
    if not state["direct"] and state["rw"] not in ("read", "randread"):
        raise fail(
            "atomic=1 with buffered IO (direct=0) is not modelled: Linux 6.11 accepts RWF_ATOMIC on O_DIRECT"
            " writes (set direct=1)",
            last.get("atomic"),
        )


def _writes(job) -> bool:
    return job.rw not in ("read", "randread", "trim", "randtrim")


def _pow2_floor(n: int) -> int:
    return 1 << (n.bit_length() - 1)


def _check_atomic_device(job, plat, where: str) -> None:
    """RWF_ATOMIC against the kernel and the device: Linux 6.11, writes of a power of two bytes
    within [one logical block, the atomic write unit rounded down to a power of two]."""
    version = parse_version(plat.kernel.version, "kernel.version")
    if not has(version, "rwf_atomic"):
        raise ConfigError(
            f"{where}: atomic=1 (RWF_ATOMIC) needs Linux 6.11 or later, and kernel.version is"
            f" {plat.kernel.version}: the kernel rejects the flag (EOPNOTSUPP) and fio's writes fail"
        )
    ns = plat.ssd.namespace
    unit_max = _pow2_floor(ns.atomic_write_unit_bytes or ns.lba_data_bytes)
    sizes = {job.bs_write_bytes}
    if job.bsrange_write is not None:
        sizes.update(job.bsrange_write)
    sizes.update(bs for bs, _pct in job.bssplit_write)
    for bs in sorted(sizes):
        if bs > unit_max or bs < ns.lba_data_bytes or bs & (bs - 1):
            raise ConfigError(
                f"{where}: atomic=1 with {bs}-byte writes: {plat.ssd.model}'s atomic write unit is"
                f" {ns.lba_data_bytes}..{unit_max} bytes (ssd.namespace.atomic_write_unit_bytes, rounded down"
                " to a power of two), so the kernel fails each write with EINVAL (an atomic write is a power"
                " of two within the unit)"
            )


def _pi_format(job, ns) -> tuple[int, int]:
    """fio's view of the format (fio_nvme_get_info): (the block as it travels, metadata bytes);
    with pi_act=1 and metadata the tuple's size, no metadata."""
    ms = ns.metadata_bytes
    if ns.pi_type and job.pi_act and ms == ns.pi_tuple_bytes:
        ms = 0
    unit = ns.lba_data_bytes + ms if ms and ns.extended_lba else ns.lba_data_bytes
    return unit, ms


def _check_passthru_format(job, ns, where: str) -> None:
    """fio's verify_params and fio_ioring_open_nvme against the namespace's format."""
    unit, ms = _pi_format(job, ns)
    sizes = {"read": job.bs_read_bytes, "write": job.bs_write_bytes, "trim": job.bs_trim_bytes}
    for ddir, bs in sizes.items():
        if bs % unit:
            if ms and ns.extended_lba:
                hint = f" (did you mean {unit * (bs // ns.lba_data_bytes)}?)" if not bs % ns.lba_data_bytes else ""
                raise ConfigError(
                    f"{where}: block size {bs} must be a multiple of {unit} (LBA data size + Metadata size){hint};"
                    " fio refuses it too"
                )
            raise ConfigError(
                f"{where}: block size {bs} must be a multiple of LBA data size ({unit}); fio refuses it too"
            )
        need = bs // ns.lba_data_bytes * ms
        if ms and not ns.extended_lba and ddir != "trim" and job.md_per_io_size_bytes < need:
            raise ConfigError(f"{where}: md_per_io_size should be at least {need} bytes; fio refuses it too")
    if job.offset_bytes % unit:
        raise ConfigError(f"{where}: offset {job.offset_bytes} is not a multiple of the {unit}-byte block")
    if ms and ns.pi_type and ns.extended_lba and job.verify != "none":
        raise ConfigError(
            f"{where}: for extended LBA, verify cannot be used when E2E data protection is enabled (fio refuses it)"
        )


def resolve_protection(job, plat) -> Any:
    """A job's atomic writes and protection information against the platform (its kernel, its
    device's namespace): the checks fio and the kernel make when the file is opened and written."""
    where = f"job '{job.name}'"
    ns = plat.ssd.namespace
    if job.atomic and _writes(job):
        _check_atomic_device(job, plat, where)
    if job.ioengine == "io_uring_cmd":
        _check_passthru_format(job, ns, where)
    elif ns.metadata_bytes and job.ioengine not in ("cpuio", "null"):  # (no device IO)
        raise ConfigError(
            f"{where}: ioengine={job.engine_library or job.ioengine} on a namespace with metadata"
            f" ({ns.metadata_bytes} bytes per block) is not modelled: through the block device Linux"
            " generates and checks the protection information itself (blk-integrity) or hides a format it"
            " cannot serve; use ioengine=io_uring_cmd (NVMe passthrough)"
        )
    return job
