"""The kernel's IO path costs: system calls, the file system, blk-mq, the NVMe driver, io_uring and
libaio, polling.

Each class is a group of :class:`~models.os.costs.tables.KernelCosts`' fields (a platform's
``kernel`` settings), each field's default sourced in its description; KernelCosts combines the
groups as its base classes in the order of its fields (tests/test_kernel_costs_order.py).
"""

from __future__ import annotations

from pydantic import Field, field_validator

from models.os.kernel_version import parse_version
from simcore.config import Model


class SyscallFsCosts(Model):
    """The kernel's release, fio's per-IO user-space work, the system call's entry and exit, the file
    system's direct-IO work and its metadata calls (fallocate, truncate, create, stat, unlink, mkdir,
    rmdir), trims and their ioctls."""

    version: str = Field(
        "6.6",
        description="the kernel release, MAJOR.MINOR (e.g. 5.15, 6.6): gates the IO-path features that"
        " came with a release (models.os.kernel_version: io_uring 5.1, the plug's request cache and"
        " batched completion 5.16, queue_rqs 5.17, DEFER_TASKRUN 6.1)",
    )
    user_io_cycles: float = Field(800, ge=0, description="fio's user-space work per IO (issue, timestamps, accounting)")
    syscall_entry_cycles: float = Field(400, ge=0, description="user->kernel entry incl. mitigations (~0.12 us)")
    syscall_exit_cycles: float = Field(400, ge=0, description="kernel->user exit incl. mitigations")
    fs_submit_cycles: float = Field(2000, ge=0, description="VFS + ext4 iomap direct-IO setup, bio build (0.5-1 us)")
    fs_per_page_cycles: float = Field(
        120, ge=0, description="pinning one 4 KiB user page (get_user_pages) and adding it to the bio"
    )
    fs_file_extent_cycles: float = Field(
        1000,
        ge=0,
        description="a file job's extra direct-IO work over the block"
        " device's: iomap_begin's extent lookup (ext4_map_blocks' extent-status tree,"
        " xfs_bmapi_read's in-core B-tree) under the inode's shared lock (estimate, ~0.3 us:"
        " the whole file-system + direct-IO step is 0.5-1 us)",
    )
    discard_ioctl_cycles: float = Field(
        1500,
        ge=0,
        description="a trim (fio's BLKDISCARD ioctl on the block device):"
        " blk_ioctl_discard's checks, truncate_inode_pages_range over an empty page-cache"
        " range, __blkdev_issue_discard's bio, submit_bio_wait's completion setup (estimate)",
    )
    fs_fallocate_cycles: float = Field(
        10_000,
        ge=0,
        description="one fallocate(2) that allocates (mode 0 or FALLOC_FL_KEEP_SIZE) on ext4: vfs_fallocate,"
        " ext4_fallocate's inode lock and jbd2 handle, ext4_map_blocks(EXT4_GET_BLOCKS_CREATE_UNWRIT_EXT):"
        " mballoc's buddy search and the unwritten extent's insertion, the inode's times (estimate, ~3 us:"
        " a journalled extent update is a few microseconds; no device IO until the journal commits)",
    )
    fs_punch_hole_cycles: float = Field(
        10_000,
        ge=0,
        description="one fallocate(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE) on ext4: ext4_punch_hole's"
        " locks and jbd2 handle, truncate_pagecache_range over the range, ext4_ext_remove_space freeing the"
        " blocks (estimate, ~3 us, as an allocating fallocate)",
    )
    fs_truncate_cycles: float = Field(
        6_000,
        ge=0,
        description="one ftruncate(2) on ext4: do_truncate -> ext4_setattr's jbd2 handle and orphan-list"
        " update, truncate_pagecache, ext4_truncate freeing the extents past the new size (estimate,"
        " ~2 us; a grow only updates i_size)",
    )
    fs_create_cycles: float = Field(
        30_000,
        ge=0,
        description="open(O_CREAT) of a new file and its close on ext4: path walk, d_alloc, ext4_create"
        " (inode bitmap search, inode init, ext4_add_entry in the directory block, two jbd2 handles,"
        " security hooks), the struct file and fd, then __fput (estimate, ~9 us: single-threaded"
        " creates of empty files on ext4 run at about 100K/s)",
    )
    fs_open_cycles: float = Field(
        5_000,
        ge=0,
        description="open(2) of an existing file and its close: path walk (RCU, dcache hit), the struct"
        " file and fd install, ext4_file_open, then __fput (estimate, ~1.5 us)",
    )
    fs_stat_cycles: float = Field(
        1_700,
        ge=0,
        description="one stat(2) of a cached file: path walk (RCU, dcache hit), vfs_getattr ->"
        " ext4_getattr, cp_new_stat's copy to user space (estimate, ~0.5 us, lmbench's stat latency on"
        " a current x86 core)",
    )
    fs_unlink_cycles: float = Field(
        25_000,
        ge=0,
        description="unlink(2) of a small file on ext4: path walk, ext4_unlink's directory-entry removal"
        " and orphan handling, the last iput's ext4_evict_inode (its extent freed, the inode bitmap) under"
        " jbd2 handles (estimate, ~7 us, about a create's work undone)",
    )
    fs_mkdir_cycles: float = Field(
        40_000,
        ge=0,
        description="mkdir(2) of a new directory on ext4: do_mkdirat's path walk to the parent and"
        " filename_create's d_alloc under the parent's inode lock, ext4_mkdir: a create's inode"
        " allocation and ext4_add_entry plus ext4_init_new_dir, which allocates the directory's first"
        " block (mballoc) and writes its '.' and '..' entries in the buffer cache, and the parent's link"
        " count, all under one jbd2 handle (estimate, ~12 us: a file create's ~9 us, fs_create_cycles,"
        " plus one block allocation and its buffer, as fallocate's ~3 us; no device IO until the journal"
        " commits)",
    )
    fs_rmdir_cycles: float = Field(
        30_000,
        ge=0,
        description="rmdir(2) of an empty directory on ext4: do_rmdir's path walk to the parent and"
        " lookup, ext4_rmdir: ext4_empty_dir reads the directory's cached block, ext4_delete_entry,"
        " the parent's link count, the orphan list, then the last iput's ext4_evict_inode frees the"
        " directory's block and its inode under jbd2 handles (estimate, ~9 us: an unlink's ~7 us,"
        " fs_unlink_cycles, plus the empty-directory check and one more block freed)",
    )
    ioctl_enotty_cycles: float = Field(
        300,
        ge=0,
        description="an ioctl the file's file system does not know (fio's BLKDISCARD on a regular file):"
        " do_vfs_ioctl's generic commands, security_file_ioctl, vfs_ioctl -> ext4_ioctl's switch returning"
        " -ENOTTY, no work done (estimate, ~0.1 us: a few branches and the LSM hook)",
    )
    nvme_dsm_cycles: float = Field(
        600,
        ge=0,
        description="nvme_setup_discard: the Dataset Management range list"
        " (kmalloc, one 16-byte range, its PRP) and its kfree at completion (estimate)",
    )
    fs_complete_cycles: float = Field(
        600, ge=0, description="direct-IO completion in the submitting task (bio end, dio done)"
    )

    @field_validator("version", mode="before")
    @classmethod
    def _version_text(cls, v):
        # a YAML number (version: 6.6) is taken as written; quote a release like "6.10"
        return repr(v) if isinstance(v, float) else str(v) if isinstance(v, int) else v

    @field_validator("version")
    @classmethod
    def _version(cls, v: str) -> str:
        major, minor = parse_version(v, "kernel.version")
        if not (3, 0) <= (major, minor) < (100, 0):
            raise ValueError(f"kernel.version {v!r}: expected a Linux release such as 5.15 or 6.6")
        return f"{major}.{minor}"

    @property
    def release(self) -> tuple[int, int]:
        """``version`` as ``(major, minor)``."""
        return parse_version(self.version)


class BlockNvmeCosts(Model):
    """blk-mq's submission and completion (with their batched parts), the NVMe driver's command,
    doorbells and CQ reap, the cache lines a completion moves, the lock and tag hold times."""

    blk_submit_cycles: float = Field(
        900, ge=0, description="blk-mq: plug, tag allocation, request init, dispatch to hctx"
    )
    blk_tag_batch_cycles: float = Field(
        100,
        ge=0,
        description="the part of blk_submit_cycles a plugged request shares with the plug's previous"
        " request to the same device (kernel >= 5.16): blk_mq_get_new_requests allocates plug->nr_ios"
        " requests with one blk_mq_get_tags and one percpu_ref_get_many and caches them in the plug"
        " (estimate: an sbitmap operation and an atomic, ~100 cycles)",
    )
    blk_complete_cycles: float = Field(300, ge=0, description="blk-mq request completion and freeing")
    blk_complete_batch_cycles: float = Field(
        100,
        ge=0,
        description="the part of blk_complete_cycles paid once per batch when completions are batched"
        " (io_comp_batch, kernel >= 5.16, scheduler none): blk_mq_end_request_batch reads the clock once"
        " and frees the tags of up to TAG_COMP_BATCH = 32 requests with one sbitmap operation"
        " (blk_mq_flush_tag_batch) and one percpu_ref_put_many (estimate: a clock read and two atomics,"
        " ~100 cycles)",
    )
    nvme_submit_cycles: float = Field(
        700, ge=0, description="NVMe command build, PRP setup, SQ tail doorbell MMIO write"
    )
    nvme_sq_doorbell_cycles: float = Field(
        100,
        ge=0,
        description="the part of nvme_submit_cycles paid once per hardware queue of a plugged batch:"
        " nvme_queue_rq writes the SQ tail doorbell only for the batch's last request (bd->last,"
        " nvme_write_sq_db; commit_rqs, Linux 5.0) (estimate: one posted MMIO write, ~100 cycles)",
    )
    nvme_sq_lock_cycles: float = Field(
        50,
        ge=0,
        description="the part of nvme_submit_cycles that nvme_queue_rqs pays once per run of a plug's"
        " requests on one queue (kernel >= 5.17, no IO scheduler, one device in the plug): the"
        " uncontended sq_lock (one locked cmpxchg and a release store; estimate)",
    )
    nvme_complete_cycles: float = Field(300, ge=0, description="reap one CQ entry, CQ head doorbell")
    nvme_cq_doorbell_cycles: float = Field(
        100,
        ge=0,
        description="the part of nvme_complete_cycles paid once per nvme_irq / nvme_poll call that found"
        " entries, not per entry: nvme_poll_cq reaps every posted CQE, then nvme_ring_cq_doorbell writes"
        " the CQ head once (one posted MMIO write; estimate ~100 cycles)",
    )
    nvme_completion_lines: int = Field(
        6,
        ge=0,
        description="cache lines of a request that its completion touches and its submitter wrote last"
        " (struct request's state, tag and times, the nvme_iod, the bio, the caller's kiocb): moved"
        " across sockets when the completion runs on another node than the submitter's. Estimate: struct"
        " request spans ~5 lines on x86_64 (pahole, 5.x-6.x), with the iod, bio and kiocb about 6 are"
        " written on both sides",
    )
    blk_tag_hold_cycles: float = Field(
        40,
        ge=0,
        description="of blk_submit_cycles and blk_complete_cycles: the tag sbitmap word's atomic update"
        " (__sbitmap_queue_get at allocation, sbitmap_queue_clear at free), during which the word's"
        " cache line is exclusively this CPU's; estimate: one locked read-modify-write, ~20-50 cycles",
    )
    nvme_sq_lock_hold_cycles: float = Field(
        150,
        ge=0,
        description="of nvme_submit_cycles: the time nvme_queue_rq holds nvmeq->sq_lock (nvme_sq_copy_cmd's"
        " 64-byte copy into the SQ, the tail update and nvme_write_sq_db's posted MMIO write);"
        " estimate, the command's preparation (DMA mapping, PRPs) runs before the lock",
    )


class UringCmdCosts(Model):
    """io_uring_cmd NVMe passthrough's submission and completion."""

    uring_cmd_cycles: float = Field(
        900,
        ge=0,
        description="io_uring_cmd NVMe passthrough: nvme_uring_cmd_io copying"
        " the command from the SQE, mapping the user buffer (blk_rq_map_user) and"
        " allocating the request, in place of the file system's work (estimate)",
    )
    uring_cmd_done_cycles: float = Field(
        300,
        ge=0,
        description="io_uring_cmd completion: nvme_uring_cmd_end_io and"
        " io_uring_cmd_done run as task work in the submitter (estimate)",
    )


class AsyncPollCosts(Model):
    """Polled completion (blk_poll, hybrid polling), libaio's and io_uring's submission and reap
    work, SQPOLL's user-space SQE writes, fio's per-completion work and its ring spin."""

    poll_iteration_cycles: float = Field(
        150, ge=1, description="one blk_poll -> nvme_poll iteration checking the CQ phase bit"
    )
    hybrid_stats_cycles: float = Field(
        200, ge=0, description="hybrid polling: per-request bucket statistics and sleep computation"
    )
    aio_issue_cycles: float = Field(
        600, ge=0, description="libaio: io_submit per-iocb work (copy iocb, aio_read setup)"
    )
    aio_reap_cycles: float = Field(
        250, ge=0, description="libaio / io_uring: per-event reap work in the getevents call (copy event to user)"
    )
    uring_cq_flush_cycles: float = Field(
        100,
        ge=0,
        description="io_uring: the part of aio_reap_cycles paid once per batch of completions posted"
        " together, not per event: __io_submit_flush_completions takes the CQ lock once, fills every"
        " CQE, commits the CQ tail once and wakes once (__io_cq_unlock_post), for all the requests one"
        " task-work run completed (estimate: a lock pair, a release store and a wake check)",
    )
    io_uring_issue_cycles: float = Field(
        350, ge=0, description="io_uring: per-SQE issue work (io_submit_sqes, io_read prep)"
    )
    io_uring_enter_cycles: float = Field(
        300,
        ge=0,
        description="io_uring_enter's own work per call, beyond the system call's entry and exit and the"
        " per-SQE issue: the ring's fdget (fio registers no ring fd), percpu_ref on the ring, uring_lock"
        " around io_submit_sqes and its submit state, the task-work and CQ checks of GETEVENTS"
        " (estimate: a mutex pair, two atomics and the state set-up, ~300 cycles; an SQPOLL thread,"
        " which never enters, does not pay it)",
    )
    fget_cycles: float = Field(150, ge=0, description="io_uring without registered files: fget/fput of the file per IO")
    sqe_write_cycles: float = Field(
        60, ge=0, description="io_uring SQPOLL: writing one SQE into the shared ring in user space"
    )
    user_complete_cycles: float = Field(
        300, ge=0, description="fio's user-space work per completed IO of an async engine"
    )
    spin_iteration_cycles: float = Field(100, ge=1, description="one iteration of a user-space CQ-ring spin loop")
