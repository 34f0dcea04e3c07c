"""User-space IO engines: the fio job threads that submit IOs and wait for or reap their
completions (synchronous ``psync``/``sync``/``pvsync2`` in :mod:`.sync_io`, on buffered files in
:mod:`.buffered_io`, fio's ``mmap`` in :mod:`.mmap_io`, io_uring's buffered reads and writes in
:mod:`.buffered_uring` with its io-wq workers in :mod:`.iowq`, asynchronous ``libaio``
and ``io_uring`` in :mod:`.async_io`, fio's kernel-less ``null`` in :mod:`.null_io`, SPDK's fio plugin
on its user-space driver in :mod:`.spdk`, the file-system metadata engines in :mod:`.fsmeta`, ``cpuio``
in :mod:`.cpuio`), and the trace
replayer (:mod:`.replay`). They run on the
host's CPUs as tasks of :mod:`models.os.sched.runner` and issue requests into :mod:`models.os.block.blk_mq`.
fio's engine names stop here: the kernel sees what an engine does in its own terms
(:func:`select_policy_name`)."""

from __future__ import annotations

from models.os.block.completion import completion_policy_name

#: engines whose call waits for the IO (one IO in flight per thread; fio's iodepth does not apply)
SYNC_ENGINES = ("psync", "sync", "pvsync2", "mmap")
#: engines with no direct-IO path of their own: fio's mmap copies through a shared file mapping
#: (models.ioengines.mmap_io), always through the page cache
MAPPED_ENGINES = ("mmap",)
#: engines whose buffered IO (direct=0) goes through the modelled page cache (models.ioengines.buffered_io;
#: libaio on a buffered file runs synchronously inside io_submit, as Linux does)
BUFFERED_ENGINES = ("psync", "sync", "pvsync2", "mmap", "libaio", "io_uring")
#: of those, the engines whose buffered IO is asynchronous (io_uring's buffered reads, and writes tried
#: without blocking or punted to io-wq: models.ioengines.buffered_uring, models.os.io_uring.iowq)
ASYNC_BUFFERED_ENGINES = ("io_uring",)
#: engines on a user-space driver (fio's external SPDK plugin, :mod:`.spdk`): no kernel on the IO
#: path, so no kernel completion policy either
USERSPACE_ENGINES = ("spdk",)
#: engines that submit and reap separately (their completions are reaped by the engine, not waited
#: for by a sleeping task)
ASYNC_ENGINES = ("libaio", "io_uring", "io_uring_cmd", "null", *USERSPACE_ENGINES)
#: fio's file-system metadata engines (:mod:`.fsmeta`): each IO is one system call on a file
#: (fallocate, ftruncate, open(O_CREAT), stat, unlink) or directory (mkdir, stat, rmdir), no data IO
FS_META_ENGINES = ("falloc", "ftruncate", "filecreate", "filestat", "filedelete", "dircreate", "dirstat", "dirdelete")
#: of those, the engines that make one call per file or directory (fio's engines/fileoperations.c)
FILE_OP_ENGINES = ("filecreate", "filestat", "filedelete", "dircreate", "dirstat", "dirdelete")
#: fio's cpuio (:mod:`.cpuio`): burns CPU in user space, no IO
CPU_ENGINES = ("cpuio",)
#: every modelled fio ioengine
MODELLED_ENGINES = SYNC_ENGINES + ASYNC_ENGINES + FS_META_ENGINES + CPU_ENGINES
#: engines whose hipri polls for completions: an io_uring set up with IORING_SETUP_IOPOLL (libaio
#: drops it: aio_prep_rw clears IOCB_HIPRI, nobody polls an aio context; fs/aio.c, 5.x)
IOPOLL_ENGINES = ("io_uring", "io_uring_cmd")


def select_policy_name(queue, hipri: bool, ioengine: str = "pvsync2") -> str:
    """The completion policy of a fio job's IOs: its engine and ``hipri`` in the kernel's terms
    (an asynchronous engine reaps its completions itself; its hipri is HIPRI only with IOPOLL),
    decided by the kernel's rule :func:`models.os.block.completion.completion_policy_name`."""
    if ioengine in ASYNC_ENGINES:
        return completion_policy_name(queue, hipri and ioengine in IOPOLL_ENGINES, reaps_itself=True)
    return completion_policy_name(queue, hipri)
