"""The kernel's version and the IO-path features it gates (``kernel.version`` of a platform).

Each feature is present from the release that introduced it. Sources: the trees read were Linux
5.15.100 and 6.6.9 (the features marked "5.15 / 6.6" are absent from the first and present in the
second by the source), and for the direct-IO plugs Debian's 5.10.223, 6.1.192 and 6.12.117; where
the release inside that range is not read in a tree it is named from the kernel's release history
and marked so.
"""

from __future__ import annotations

from typing import Final

#: feature -> (major, minor) of the first release that has it
FEATURES: Final[dict[str, tuple[int, int]]] = {
    # io_uring_setup(2), liburing man page: "io_uring_setup() first appeared in Linux 5.1"
    "io_uring": (5, 1),
    # blk_mq_submit_bio takes a request from plug->cached_rq; blk_mq_get_new_requests allocates
    # plug->nr_ios tags with one blk_mq_get_tags (absent in 5.15.100, present in 6.6.9; 5.16 from
    # the release history, not read in a tree)
    "plug_rq_cache": (5, 16),
    # struct io_comp_batch, blk_mq_add_to_batch, blk_mq_end_request_batch, nvme_pci_complete_batch
    # (absent in 5.15.100, present in 6.6.9; 5.16 from the release history)
    "io_comp_batch": (5, 16),
    # mq_ops->queue_rqs / nvme_queue_rqs: a plug list issued with one sq_lock and one doorbell
    # (absent in 5.15.100, present in 6.6.9; 5.17 from the release history)
    "queue_rqs": (5, 17),
    # IORING_SETUP_DEFER_TASKRUN (liburing io_uring_setup(2): "available since 6.1")
    "defer_taskrun": (6, 1),
    # io_uring's plug threshold: 6.6.9 io_submit_state_start sets need_plug = max_ios > 2; 5.15.100
    # io_init_req plugs when ios_left > 1. The release of the change between them is not read in a
    # tree: 6.0 here (an estimate)
    "uring_plug_over_two": (6, 0),
    # FMODE_BUF_WASYNC: io_uring's buffered writes tried with IOCB_NOWAIT in the submitter ("io_uring:
    # add support for async buffered writes", XFS and block devices, 6.0; from the release history,
    # not read in a tree); before it every buffered write to a file or block device goes to io-wq
    "uring_buffered_write_nowait": (6, 0),
    # block/fops.c __blkdev_direct_IO_async: one asynchronous direct IO of up to BIO_MAX_VECS pages is
    # a single bio submitted without a plug (present in 6.1.192; 5.10.223's fs/block_dev.c sends every
    # asynchronous kiocb through __blkdev_direct_IO, which plugs unless IOCB_HIPRI; 5.16 from the
    # release history, not read in a tree)
    "bdev_dio_async_unplugged": (5, 16),
    # blkdev_write_iter without its blk_start_plug .. blk_finish_plug around the whole write (the plug
    # is there in 5.10.223 and 6.1.192, gone in 6.12.117; 6.6, where block-device writes moved to
    # iomap (blkdev_buffered_write), is an estimate: the release in between is not read in a tree)
    "bdev_write_unplugged": (6, 6),
    # RWF_ATOMIC and statx's STATX_WRITE_ATOMIC (fio's HOWTO, atomic: "supported from the 6.11 Linux
    # kernel"; the queue limits atomic_write_unit_min/max_bytes and the NVMe driver's AWUPF/NAWUPF came
    # with it, from the release history)
    "rwf_atomic": (6, 11),
    # the fair class (models.os.sched.cfs): EEVDF replaced CFS's vruntime pick, sleeper credit and
    # wake-up granularity in 6.6 ("sched/fair: Implement an EEVDF-like scheduling policy", with
    # PLACE_LAG, PLACE_DEADLINE_INITIAL and RUN_TO_PARITY, "sched/eevdf: Curb wakeup-preemption";
    # from the release history: 6.1 kernel/sched/fair.c is CFS, linux-6.12's EEVDF)
    "eevdf": (6, 6),
    # 6.12 kernel/sched/features.h DELAY_DEQUEUE and DELAY_ZERO ("sched/fair: Implement
    # delayed dequeue"), PREEMPT_SHORT ("sched/eevdf: Allow shorter slices to wakeup-preempt"),
    # PLACE_REL_DEADLINE and sched_attr.sched_runtime as a fair task's request: 6.12 from the release
    # history (none of them is in the EEVDF of 6.6-6.11 as recalled; no tree between is read)
    "delay_dequeue": (6, 12),
    "preempt_short": (6, 12),
    "place_rel_deadline": (6, 12),
}

#: fio's io_uring engine asks for SINGLE_ISSUER | DEFER_TASKRUN (and COOP_TASKRUN) from fio-3.33
#: (fio commits 4d22c103, e453f369, 07f78c37: ``git describe --contains`` -> fio-3.33~55); older fio
#: sets none of them
FIO_DEFER_TASKRUN: Final = (3, 33)


def parse_version(text: str, what: str = "version") -> tuple[int, int]:
    """``"6.6"`` or ``"6.6.9"`` -> ``(6, 6)``; ValueError naming ``what`` otherwise."""
    parts = str(text).strip().split(".")
    if len(parts) not in (2, 3) or not all(p.isdigit() for p in parts):
        raise ValueError(f"{what} must be MAJOR.MINOR (e.g. 6.6), got {text!r}")
    return int(parts[0]), int(parts[1])


def has(version: tuple[int, int], feature: str) -> bool:
    """Whether a kernel of ``version`` has ``feature`` (:data:`FEATURES`)."""
    return version >= FEATURES[feature]


def uring_plug_min(version: tuple[int, int]) -> int:
    """Requests one io_uring_enter must submit for the kernel to plug them: 3 (more than 2, 6.6),
    2 (more than 1, 5.15)."""
    return 3 if has(version, "uring_plug_over_two") else 2


def defer_taskrun(kernel: tuple[int, int], fio: tuple[int, int]) -> bool:
    """Whether fio's io_uring ring runs with DEFER_TASKRUN: fio >= 3.33 asks for it, the kernel
    has it from 6.1 (older kernels refuse the flag and fio retries without it)."""
    return fio >= FIO_DEFER_TASKRUN and has(kernel, "defer_taskrun")
