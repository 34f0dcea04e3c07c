"""The checks on a whole job, once its options are applied: options of another engine, the library
engines' backends (xnvme, libblkio: :mod:`.engines`), buffered IO where the page cache is modelled,
O_DIRECT's alignment, rates, files (block devices, regular files, NVMe generic character devices,
SPDK's transport IDs), the metadata engines, verify, zones (:mod:`.zoned`) and atomic writes
(:mod:`.protection`). Each raises ``fail(message, item)`` (:data:`.items.Fail`) on what fio, or the
model, refuses; a few settle fields (``fill_device``'s size, the library engine's modelled engine)."""

from __future__ import annotations

import errno
from typing import Any

from models.ioengines import (
    ASYNC_BUFFERED_ENGINES,
    BUFFERED_ENGINES,
    CPU_ENGINES,
    FILE_OP_ENGINES,
    FS_META_ENGINES,
    MAPPED_ENGINES,
    SYNC_ENGINES,
)
from models.ioengines.job import smallest_block
from models.ioengines.spdk import parse_transport_id
from models.ioengines.td_error import non_fatal
from models.os.fs.filesystem import is_device
from simcore.errors import ConfigError

from . import engines as lib_engines
from .handlers import ENGINE_FIELDS
from .items import Fail, Item
from .protection import check_atomic
from .write_mode import check_write_mode
from .zoned import check_zoned

__all__ = ["NO_PAGE_CACHE_ENGINES", "SYNC_TRIM_ENGINES", "check_job"]


def _check_rates(state: dict[str, Any], last: dict[str, Item], fail: Fail) -> None:
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


def _check_buffered(state: dict[str, Any], last: dict[str, Item], fail: Fail) -> None:
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


def _check_buffered_uring(state: dict[str, Any], last: dict[str, Item], fail: Fail) -> None:
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


def check_job(items: list[Item], last: dict[str, Item], state: dict[str, Any], kb: int, fail: Fail) -> None:
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
    for field, engines in ENGINE_FIELDS.items():
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
    check_write_mode(state, last, fail)
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


def _check_meta_engines(state: dict[str, Any], last: dict[str, Item], fail: Fail) -> None:
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


def _check_verify(state: dict[str, Any], last: dict[str, Item], fail: Fail) -> None:
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
    smallest = smallest_block(state["bs_write_bytes"], state["bssplit_write"], state["bsrange_write"])
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


def _resolve_library(state: dict[str, Any], last: dict[str, Item], fail: Fail) -> None:
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


def _check_spdk_files(state: dict[str, Any], last: dict[str, Item], fail: Fail) -> None:
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


def _check_file_trims(state: dict[str, Any], last: dict[str, Item], fail: Fail) -> None:
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


def _check_files(state: dict[str, Any], last: dict[str, Item], fail: Fail) -> None:
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
