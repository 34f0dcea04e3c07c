"""fio's ioengines that stacksim does not model itself: the libraries that reach an NVMe device
through a kernel path stacksim models (``xnvme``, ``libblkio``), and why each other engine is
refused.

``xnvme`` (fio's engines/xnvme.c over the xNVMe library) and ``libblkio`` (engines/libblkio.c over
libblkio) are front ends: the IO goes through the backend the job names. A backend that is a
modelled kernel interface runs as that engine (the library's own user-space work per IO is not
modelled apart from fio's: an estimate that it is small next to the system call, as both libraries
only fill the SQE the engine would fill):

* xnvme ``xnvme_async=io_uring`` -> ``io_uring`` on the block device (/dev/nvmeXnY);
  ``xnvme_async=io_uring_cmd`` -> ``io_uring_cmd`` on the generic character device (/dev/ngXnY);
  ``xnvme_async=libaio`` -> ``libaio``. fio's ``hipri`` and ``sqthread_poll`` become the ring's
  IORING_SETUP_IOPOLL and IORING_SETUP_SQPOLL (fio's xnvme engine sets xNVMe's ``poll_io`` and
  ``poll_sq`` from them). xNVMe's default ``emu`` (and ``thrpool``) emulate asynchronous IO with
  threads over the synchronous NVMe ioctl, ``posix`` is POSIX AIO, ``vfio`` and ``nil`` have no
  kernel path: refused.
* libblkio ``libblkio_driver=io_uring`` -> ``io_uring`` (a block device or a file);
  ``libblkio_driver=nvme-io_uring`` -> ``io_uring_cmd`` (NVMe passthrough on /dev/ngXnY). fio's
  ``hipri`` asks for poll queues (IOPOLL). ``libblkio_wait_mode=block`` (fio's default) waits in
  ``blkioq_do_io`` with a minimum of completions, as io_uring_enter does; ``loop`` calls it without
  waiting in a busy loop: fio's ``iodepth_batch_complete_min=0``; ``eventfd`` waits in read() on
  the completion eventfd, a wake-up path that is not modelled: refused. The virtio-blk drivers reach
  virtio devices, not an NVMe SSD: refused.
"""

from __future__ import annotations

#: xNVMe's asynchronous backends (fio's HOWTO, xnvme_async) -> the modelled engine, or None
XNVME_ASYNC: dict[str, str | None] = {
    "io_uring": "io_uring",
    "io_uring_cmd": "io_uring_cmd",
    "libaio": "libaio",
    "emu": None,
    "thrpool": None,
    "posix": None,
    "vfio": None,
    "nil": None,
}
XNVME_REFUSED = {
    "emu": "xNVMe's default 'emu' backend emulates asynchronous IO with one thread over the synchronous"
    " NVMe ioctl (NVME_IOCTL_IO64_CMD), which is not modelled",
    "thrpool": "'thrpool' emulates asynchronous IO with a pool of user-space threads over the synchronous"
    " NVMe ioctl, which is not modelled",
    "posix": "'posix' is glibc's POSIX AIO (user-space helper threads doing pread/pwrite), not modelled",
    "vfio": "'vfio' is libvfn's user-space driver on a vfio-bound device, not modelled (fio's spdk engine is)",
    "nil": "'nil' transfers no data and reaches no device",
}
#: libblkio's drivers -> the modelled engine, or None
LIBBLKIO_DRIVERS: dict[str, str | None] = {
    "io_uring": "io_uring",
    "nvme-io_uring": "io_uring_cmd",
    "virtio-blk-vfio-pci": None,
    "virtio-blk-vhost-user": None,
    "virtio-blk-vhost-vdpa": None,
}
LIBBLKIO_WAIT_MODES = ("block", "eventfd", "loop")

_NET = "it does its IO over the network (the network and the remote side are not modelled)"
_STORE = "it reaches a distributed file system or object store over the network, not a local NVMe SSD"
_PMEM = "it works on memory-mapped persistent memory (DAX), not an NVMe SSD"
#: why each fio engine stacksim does not run is refused (engines not listed: "not modelled")
ENGINE_REFUSALS: dict[str, str] = {
    "sg": "it sends SCSI commands through SG_IO; Linux's NVMe driver has had no SCSI translation since"
    " 4.13 (drivers/nvme/host/scsi.c was removed), so an NVMe namespace accepts no SG_IO and this path"
    " reaches SCSI disks only; stacksim models NVMe SSDs (use io_uring_cmd for NVMe passthrough)",
    "libzbc": "it drives SCSI/ATA zoned disks (SMR hard drives) through libzbc's passthrough, not NVMe",
    "libiscsi": "it is a user-space iSCSI initiator: " + _NET[3:],
    "nbd": "it is a network block device client: " + _NET[3:],
    "net": _NET,
    "netsplice": _NET,
    "rdma": _NET,
    "http": _STORE,
    "nfs": _STORE,
    "rados": _STORE,
    "rbd": _STORE,
    "dfs": _STORE,
    "gfapi": _STORE,
    "gfapi_async": _STORE,
    "libhdfs": _STORE,
    "ime_aio": _STORE,
    "ime_psync": _STORE,
    "ime_psyncv": _STORE,
    "libcufile": "it moves data between the SSD and GPU memory (GPUDirect Storage); GPUs are not modelled",
    "libhipfile": "it moves data between the SSD and GPU memory (ROCm hipFile); GPUs are not modelled",
    "dev-dax": _PMEM,
    "libpmem": _PMEM,
    "mtd": "it drives raw flash (MTD) devices, not an NVMe SSD",
    "exec": "it runs another program",
    "e4defrag": "it moves a file's extents with EXT4_IOC_MOVE_EXT: data reads and writes inside the file"
    " system (ext4's move_extent), which are not modelled",
    "page_fault": "its IO is page faults on a mapping, which are not modelled",
    "splice": "splice(2) moves data through a pipe and the page cache, which is not modelled yet",
    "posixaio": "glibc's POSIX AIO runs the IO on user-space helper threads, which are not modelled",
    "solarisaio": "it is Solaris's asynchronous IO (stacksim models Linux)",
    "windowsaio": "it is Windows' asynchronous IO (stacksim models Linux)",
}


#: engines of fio 3.33 (Debian's fio 3.33 builds them; its examples/ use them) that fio's later releases
#: dropped, so the option catalogue (fio 3.41's) lacks them: refused for their own reason
OLDER_ENGINES: dict[str, str] = {
    "pmemblk": "it works on persistent memory through PMDK's libpmemblk (DAX), not an NVMe SSD",
    "librpma_apm_client": "it does its IO over RDMA to a remote persistent memory (librpma): " + _NET[3:],
    "librpma_apm_server": "it does its IO over RDMA to a remote persistent memory (librpma): " + _NET[3:],
    "librpma_gpspm_client": "it does its IO over RDMA to a remote persistent memory (librpma): " + _NET[3:],
    "librpma_gpspm_server": "it does its IO over RDMA to a remote persistent memory (librpma): " + _NET[3:],
}
ENGINE_REFUSALS.update(OLDER_ENGINES)
#: engines that are another modelled engine under a second name: fio's ``cpp_null`` (engines/cpp_null.cpp,
#: fio's examples/cpp_null.fio) is the null engine's code compiled as C++ to check that engines build as
#: C++: the same queue/commit/getevents hooks, so the same costs
ENGINE_ALIASES: dict[str, str] = {"cpp_null": "null"}


def refusal(engine: str) -> str:
    """Why ``engine`` (known to fio, not modelled) is refused, for the error message."""
    if engine.startswith("external:"):
        return "an external engine is a plug-in stacksim cannot load"
    return ENGINE_REFUSALS.get(engine, "it is not modelled yet")
