"""The kernel context an asynchronous fio engine opens for its thread, as fio 3.41 does through
liburing and libaio (engines/io_uring.c ``fio_ioring_queue_init``: io_uring_setup with the flags
the job asks for; engines/libaio.c ``fio_libaio_init``: io_queue_init):

* ``io_uring`` / ``io_uring_cmd``: an io_uring ring (:class:`models.os.io_uring.ring.IoRing`) with
  IOPOLL (``hipri``), SQPOLL (``sqthread_poll``), registered files (``registerfiles``) and fixed
  buffers (``fixedbufs``), and IORING_SETUP_DEFER_TASKRUN when fio asks for it (fio 3.33 and later
  do, retrying without it: the kernel grants it from 6.1, not with SQPOLL); a kernel without
  io_uring (before 5.1) refuses the ring;
* ``libaio``: an aio context (:class:`models.os.fs.aio.AsyncContext`).

The context holds the kernel's rules the thread then follows (DEFER_TASKRUN, the plug threshold, how
CQEs become visible, io_uring_enter's own work): docs/async-io.md, "The kernel's contexts".
"""

from __future__ import annotations

from models.ioengines.job import FioJob
from models.os.block.blk_mq import PLUG_FINISH, PLUG_NONE
from models.os.costs.tables import KernelCosts
from models.os.fs.aio import AsyncContext
from models.os.fs.direct_io import own_plug
from models.os.io_uring.ring import IoRing
from models.os.kernel_version import FIO_DEFER_TASKRUN, has, parse_version
from simcore.errors import ConfigError

#: the engines whose context is an io_uring ring
URING_ENGINES = ("io_uring", "io_uring_cmd")


def open_context(job: FioJob, k: KernelCosts, passthru: bool, iopoll: bool, sqpoll: bool) -> AsyncContext:
    """The context of one thread of ``job`` on a kernel with costs ``k`` (its release gates it)."""
    if job.ioengine not in URING_ENGINES:
        return AsyncContext(k)
    if not has(k.release, "io_uring"):
        raise ConfigError(
            f"job '{job.name}': ioengine={job.ioengine} needs a newer kernel than the platform's"
            f" kernel.version {k.version} (set e.g. kernel.version=6.6)"
        )
    return IoRing(
        k,
        k.release,
        passthru=passthru,
        iopoll=iopoll,
        sqpoll=sqpoll,
        wants_defer_taskrun=parse_version(job.stacksim_fio_version) >= FIO_DEFER_TASKRUN,
        registered_files=bool(job.registerfiles),
        fixed_buffers=bool(job.fixedbufs),
    )


def batch_plug(job: FioJob, kver: tuple[int, int], file: bool, iopoll: bool, passthru: bool) -> int:
    """The plug each asynchronous IO of ``job`` sits in on its way to blk-mq beside the submitting
    call's own (models.os.fs.direct_io: a file's iomap plug, 5.x's __blkdev_direct_IO plug of every
    asynchronous kiocb, a write inside blkdev_write_iter's plug): ``PLUG_FINISH`` when it holds every
    read and write the job issues, else ``PLUG_NONE`` (a job whose reads and writes differ, e.g.
    random reads and writes to a 6.1 block device, is taken as unplugged: an approximation). NVMe
    passthrough has no direct-IO path."""
    rw = job.rw
    ops = []
    if rw in ("read", "randread", "rw", "readwrite", "randrw"):
        ops.append("read")
    if rw in ("write", "randwrite", "rw", "readwrite", "randrw", "trimwrite", "randtrimwrite"):
        ops.append("write")
    plugs = {own_plug(kver, op=op, file=file, sync=False, sleeps=True, hipri=iopoll, nbytes=0) for op in ops}
    return PLUG_FINISH if plugs == {PLUG_FINISH} and not passthru else PLUG_NONE
