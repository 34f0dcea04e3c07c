"""The direct-IO paths' own plugs: whether the file system or block-device code between a system
call and blk-mq holds a request in a plug of its own, and when that plug is flushed. This decides
who dispatches a request when an IO scheduler is attached (:mod:`models.os.block.blk_mq`):

- **no plug** (:data:`PLUG_NONE`): the request reaches ``blk_mq_submit_bio`` with no plug; with a
  scheduler it is inserted and the hardware queue is run asynchronously by the CPU's kblockd worker
  (5.10 ``blk_mq_sched_insert_request(rq, false, true, true)``; 6.12 ``blk_mq_insert_request`` +
  ``blk_mq_run_hw_queue(hctx, true)``); with ``none`` it is issued directly;
- **flushed at its end** (:data:`PLUG_FINISH`): ``blk_finish_plug`` -> ``blk_mq_flush_plug_list(plug,
  false)`` inserts the plug's requests and runs the queue synchronously, in the submitting task;
- **flushed when the submitter sleeps in it** (:data:`PLUG_SCHEDULE`): the task waits for its IO
  inside the plug (``submit_bio_wait``), so ``schedule()`` flushes it (``sched_submit_work`` /
  ``io_schedule_prepare`` -> ``blk_flush_plug(plug, true)``) and the queue is run asynchronously,
  by kblockd, **with or without a scheduler** (``blk_mq_sched_insert_requests`` /
  ``blk_mq_insert_requests`` with ``run_queue_async``).

Which path plugs (read in Debian's 5.10.223 ``fs/block_dev.c``, 6.1.192 and 6.12.117
``block/fops.c``, ``block/blk-lib.c``, ``fs/iomap/direct-io.c``):

- a file's direct IO (``iomap_dio_rw``, ext4 and XFS): a plug around the submission in every
  release read; a synchronous IO waits after ``blk_finish_plug``: flushed at its end;
- a block device's asynchronous direct IO (libaio, io_uring): before 5.16 every kiocb goes through
  ``__blkdev_direct_IO``, which plugs unless ``IOCB_HIPRI`` (polled); from 5.16 an IO of up to
  ``BIO_MAX_VECS`` pages is ``__blkdev_direct_IO_async``, one bio without a plug;
- a block device's synchronous direct IO of up to ``BIO_MAX_VECS`` pages
  (``__blkdev_direct_IO_simple``): no plug of its own; a larger one (``__blkdev_direct_IO``) plugs
  and waits after the flush;
- a block device's write (``blkdev_write_iter``) runs inside a plug until 6.6 (an estimate, see
  ``bdev_write_unplugged`` in :mod:`models.os.kernel_version`): a synchronous write sleeps inside
  it (flushed when it sleeps), an asynchronous one returns through its end;
- a discard (``BLKDISCARD`` -> ``blkdev_issue_discard``): ``submit_bio_wait`` inside a plug, in every
  release read: flushed when it sleeps.

Not modelled: a synchronous polled write (``RWF_HIPRI``) inside 5.x's write plug, whose poll finds
no command until the plug is flushed: it is taken as dispatched at once (:data:`PLUG_NONE`); an
asynchronous IO over ``BIO_MAX_VECS`` pages on 5.16 and later (plugged by ``__blkdev_direct_IO``)
is taken as a single-bio one.
"""

from __future__ import annotations

from models.os.block.blk_mq import BIO_MAX_BYTES, PLUG_FINISH, PLUG_NONE, PLUG_SCHEDULE
from models.os.kernel_version import has

__all__ = ["BIO_MAX_BYTES", "PLUG_FINISH", "PLUG_NONE", "PLUG_SCHEDULE", "own_plug"]


def own_plug(kver: tuple[int, int], *, op: str, file: bool, sync: bool, sleeps: bool, hipri: bool, nbytes: int) -> int:
    """The plug the direct-IO path of one IO holds (see the module's text): ``kver`` the kernel's
    (major, minor); ``op`` read/write/trim; ``file`` a regular file (iomap) rather than the block
    device; ``sync`` a synchronous system call (pread/pwrite, preadv2/pwritev2, the ioctls);
    ``sleeps`` its wait sleeps (an interrupt completion, not a poll); ``hipri`` RWF_HIPRI /
    IORING_SETUP_IOPOLL; ``nbytes`` the IO's size (0: not known, a single bio)."""
    if op == "trim":  # blkdev_issue_discard: submit_bio_wait inside the plug
        return PLUG_SCHEDULE if sleeps else PLUG_NONE
    if file:
        return PLUG_FINISH
    if op == "write" and not has(kver, "bdev_write_unplugged"):
        if not sync:
            return PLUG_FINISH
        return PLUG_SCHEDULE if sleeps else PLUG_NONE
    if nbytes > BIO_MAX_BYTES:  # __blkdev_direct_IO: several bios under one plug
        return PLUG_NONE if hipri and not has(kver, "bdev_dio_async_unplugged") else PLUG_FINISH
    if not sync and not hipri and not has(kver, "bdev_dio_async_unplugged"):
        return PLUG_FINISH
    return PLUG_NONE
