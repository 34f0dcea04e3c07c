"""CPU cost of each modelled kernel action, in cycles, and the stack layer it is charged to; the
instructions each retires (cycles / its layer's warm CPI, :data:`WARM_CPI`).

A :class:`Cost` is a bundle of per-layer cycles that one uninterrupted stretch of code executes
(for example "hard IRQ entry + CQ reap + request completion + wakeup"). Bundles are built once per
run; on the hot path the CPU only adds ``cycles / GHz`` to the clock and increments the bundle's
use count, and per-layer totals are recovered at the end as count x cycles.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import Field, field_validator, model_validator

# the stack layers and the bundle executed on the hot path (models.os.costs.bundle, compiled: simcore.compiled)
from models.os.costs.bundle import LAYER_INDEX, LAYERS, USER, Cost  # noqa: F401
from models.os.costs.memops import ACTION_CELLS, CELLS, SOURCE_CELLS
from models.os.kernel_version import parse_version
from simcore.config import Model

#: Kernel actions counted one by one (each execution of the code path is one action): the
#: scheduler's and the timer code's work. name -> (the :class:`KernelCosts` field of its cycles, its
#: layer). Bundles name the actions they execute (``CostTable.get(..., actions={...})``); the run
#: counts them, and memory operations are charged per action (models.os.costs.memops), so they do not
#: scale with whatever a cycle constant absorbed.
ACTIONS = {
    "switch": ("ctx_switch_cycles", "scheduler"),  # __schedule: pick next, rq clock, context_switch
    "kthread_switch": ("kthread_switch_cycles", "scheduler"),  # the same, to or from a kernel thread
    "wakeup": ("wakeup_cycles", "scheduler"),  # try_to_wake_up: rq lock, select CPU, activate, preempt check
    "pelt_update": ("pelt_level_cycles", "scheduler"),  # update_load_avg at one level (root rq or a cgroup)
    "psi_change": ("psi_level_cycles", "scheduler"),  # psi_group_change at one level (system or a cgroup)
    "idle_scan": ("idle_scan_cycles", "scheduler"),  # select_idle_sibling / balance: one more CPU examined
    "migrate": ("migrate_cycles", "scheduler"),  # set_task_cpu: detach/attach load averages, remote rq lock
    "newidle_balance": ("newidle_balance_cycles", "scheduler"),  # a CPU about to idle pulls work
    "load_balance": ("load_balance_cycles", "scheduler"),  # a periodic or nohz balance pass over one domain
    "idle_entry": ("idle_entry_cycles", "scheduler"),  # do_idle entry + cpuidle governor selection
    "idle_exit": ("idle_exit_cycles", "scheduler"),  # idle loop exit after a wake-up
    "sched_tick": ("sched_tick_cycles", "scheduler"),  # update_process_times / scheduler_tick
    "hrtimer_program": ("hrtimer_start_cycles", "timer"),  # hrtimer_start / tick (re)programming + clock reads
    "hrtimer_expire": ("hrtimer_expire_cycles", "timer"),  # hrtimer_interrupt + the expired timer's callback
}
#: Kernel actions with no cycles of their own: parts of the code of an action or cost above, counted
#: one by one because the memory operations they execute differ with the event (models.os.costs.memops:
#: their operations are derived from the data they touch). name -> (the :class:`KernelCosts` field
#: whose cycles include them, the layer of those cycles). The run counts them with the actions; the
#: summary reports them with the memory operations (``kernel_sub_actions_per_io``).
SUB_ACTIONS = {
    # set_next_entity / put_prev_entity's update_load_avg at each level a switch walks (pick_next_task_fair)
    "pelt_switch": ("ctx_switch_cycles", "scheduler"),
    # psi_task_switch: psi_group_change for the next task's TSK_ONCPU at each group up to the common one
    "psi_switch": ("ctx_switch_cycles", "scheduler"),
    # update_curr at each level pick_next_task_fair walks down with its current entity still queued, and
    # at each group entity dequeued (it is its level's current one)
    "update_curr": ("ctx_switch_cycles", "scheduler"),
    # enqueue_entity / dequeue_entity of a group entity: a cgroup level queued or dequeued with the task
    "entity_enqueue": ("wakeup_cycles", "scheduler"),
    "entity_dequeue": ("pelt_level_cycles", "scheduler"),
    # select_idle_sibling past a busy target: recent_used_cpu, test_idle_cores, select_idle_smt,
    # select_idle_cpu's mask and scan-cost bookkeeping (the CPUs examined are idle_scan)
    "select_idle_sibling": ("idle_scan_cycles", "scheduler"),
    # update_cfs_group -> reweight_entity: a group entity's share at an enqueue or dequeue, per cgroup level
    "cfs_group_update": ("pelt_level_cycles", "scheduler"),
    "ttwu_queue": ("wakeup_cycles", "scheduler"),  # a remote wake-up's wake list entry and IPI, on the waker
    "ttwu_pending": ("ipi_cycles", "irq"),  # the IPI's flush_smp_call_function_queue -> sched_ttwu_pending
    # hrtimer_reprogram -> tick_program_event -> clockevents_program_event: the armed timer is the first,
    # or hrtimer_interrupt programs the next expiry
    "clockevent_program": ("hrtimer_start_cycles", "timer"),
}
ACTION_INDEX = {name: i for i, name in enumerate((*ACTIONS, *SUB_ACTIONS))}

#: Warm cycles per instruction by kind of code (``KernelCosts.cpi_by_layer``'s defaults). Estimates
#: for a 4-wide out-of-order x86 core (Broadwell to Zen 4: at most 4 instructions retired per cycle,
#: so CPI >= 0.25), from what each kind of code executes, not fitted to any measurement:
#: - user (fio's per-IO bookkeeping: random offsets, timestamps, its own accounting): ordinary
#:   L1-resident integer code, IPC ~1.7 -> 0.6;
#: - syscall (entry/exit with KPTI and retpolines): serialising instructions (SWAPGS, SYSRET, a CR3
#:   write, speculation-control MSR writes) and indirect-branch thunks, IPC ~0.7 -> 1.5;
#: - fs, block, iosched (VFS/iomap direct IO, blk-mq, a scheduler's lists): branchy pointer-chasing
#:   kernel C over hot structures, IPC ~1.4 -> 0.7 (0.8 for the schedulers' lock and list work);
#: - driver (NVMe command build and doorbell, CQE reap): an uncached MMIO doorbell store and the CQE
#:   line written by the device's DMA (a miss), IPC ~1 -> 1.0;
#: - irq (vectoring, the x2APIC EOI MSR write, IRET): serialising, IPC ~0.7 -> 1.5;
#: - scheduler (schedule(), PELT/PSI, wake-ups, the idle loop): XSAVE/XRSTOR, the switch of stacks
#:   and address spaces, data-dependent branches, IPC ~1 -> 1.0; timer (hrtimer programming: the
#:   TSC-deadline MSR write, RDTSC): 1.2;
#: - polling (blk_poll -> nvme_poll, io_uring's IOPOLL loop, a user-space ring spin): a small
#:   L1-resident loop of loads, compares and predicted branches, IPC ~3.3 -> 0.3.
#: - pagecache (filemap_read, write_begin/end, readahead): xarray walks and folio flags, ~0.7, plus
#:   the copy to or from user space (rep movsb: few instructions, many cycles) -> 1.0 (estimate);
#: - writeback (write_cache_pages, bio building, end_page_writeback): list and tag walks -> 0.8.
#: (The cpuidle POLL state's PAUSE loop has its own rate: cpu.pause_cycles.)
WARM_CPI = {
    "user": 0.6,
    "syscall": 1.5,
    "fs": 0.7,
    "block": 0.7,
    "iosched": 0.8,
    "driver": 1.0,
    "irq": 1.5,
    "scheduler": 1.0,
    "timer": 1.2,
    "polling": 0.3,
    "pagecache": 1.0,
    "writeback": 0.8,
}


class KernelCosts(Model):
    """Cycles per kernel action. The defaults are order-of-magnitude figures for a ~3.4 GHz Skylake
    core with KPTI and retpolines (the Xeon E3-1230 v5 of Harris & Altiparmak, HotStorage 2022): a
    system call's round trip ~0.23 us and a switch between threads ~1 us, the quantities lmbench's
    ``lat_syscall`` and ``lat_ctx`` (McVoy & Staelin, USENIX ATC 1996) and Linux's ``perf bench
    sched pipe`` (tools/perf/bench/sched-pipe.c) measure; each field says what it covers, estimates
    marked. The calibrated platforms refit the ones their studies constrain (models/platforms.py,
    ``stacksim calibrate``)."""

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
    irq_entry_cycles: float = Field(
        1000, ge=0, description="hard-IRQ vector entry/exit, irq_enter/exit, handler dispatch"
    )
    ctx_switch_cycles: float = Field(
        3000, ge=0, description="one schedule(): pick next, load/PSI accounting, context switch (~1 us)"
    )
    kthread_switch_cycles: float = Field(
        2000,
        ge=0,
        description="one schedule() between a task and a kernel thread"
        " (kworker, io_uring SQ thread) without idling: no address-space switch (the"
        " kernel thread borrows the previous mm, lazy TLB), so no CR3 write and KPTI"
        " flush (estimate; a thread switch is ~1 us against ~2-2.5 us between"
        " processes, pipe ping-pong)",
    )
    wakeup_cycles: float = Field(
        400,
        ge=0,
        description="try_to_wake_up: lock the task's runqueue, select its CPU, activate it,"
        " check preemption (its load and pressure accounting: enqueue_accounting_cycles)",
    )
    cgroup_depth: int = Field(
        3,
        ge=0,
        le=64,
        description="cgroup levels between a task and the root, each with its own load averages, group"
        " entity and pressure-stall state. Default: a process of a systemd login session, which"
        " systemd-logind places in session-N.scope under user-UID.slice under user.slice (systemd.special(7),"
        " systemd.slice(5)); a system service is 2 deep (system.slice / NAME.service), a container more",
    )
    pelt_level_cycles: float = Field(
        150,
        ge=0,
        description="PELT at an enqueue or dequeue, per level (the root runqueue and each"
        " cgroup's): update_load_avg and the group entity's propagation (estimate, ~40 ns)",
    )
    psi_level_cycles: float = Field(
        100,
        ge=0,
        description="psi_task_change at a task's sleep or wake-up, per level (the system"
        " and each cgroup): psi_group_change's per-CPU state and time accounting (estimate)",
    )
    idle_scan_cycles: float = Field(
        100,
        ge=0,
        description="select_idle_sibling: examining one more CPU's runqueue and"
        " idle state for a woken task (a remote cache line, ~30 ns; estimate)",
    )
    migrate_cycles: float = Field(
        1500,
        ge=0,
        description="moving a task to another CPU's runqueue: set_task_cpu,"
        " detach/attach of its PELT load averages, remote runqueue lock (~0.4 us; estimate)",
    )
    newidle_balance_cycles: float = Field(
        1000,
        ge=0,
        description="newidle_balance on a CPU about to go idle: update"
        " blocked averages, walk the domain (plus idle_scan_cycles per CPU examined;"
        " estimate)",
    )
    load_balance_cycles: float = Field(
        1000,
        ge=0,
        description="one load_balance pass over a scheduling domain at the"
        " tick or for a nohz idle CPU: update the group statistics, find the busiest"
        " group and queue (plus idle_scan_cycles per other CPU of the domain; estimate,"
        " as newidle_balance_cycles)",
    )
    kworker_run_cycles: float = Field(
        500,
        ge=0,
        description="a kworker executing one work item: process_one_work and"
        " blk_mq_run_work_fn around the hardware queue run (estimate, ~0.15 us)",
    )
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
    ipi_cycles: float = Field(800, ge=0, description="receiving a reschedule/function-call IPI on the target CPU")
    ipi_latency_ns: float = Field(500, ge=0, description="IPI send to handler entry on a remote CPU, ns")
    hrtimer_start_cycles: float = Field(600, ge=0, description="hrtimer_start + clock reads when arming a sleep timer")
    hrtimer_expire_cycles: float = Field(
        900, ge=0, description="local APIC timer interrupt: hrtimer_interrupt and the expired timer's callback"
    )
    sched_tick_cycles: float = Field(
        1000,
        ge=0,
        description="the scheduler tick's own work on top of the timer interrupt:"
        " update_process_times, scheduler_tick, run_local_timers (estimate, ~0.3 us)",
    )
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
    # -- fio's SPDK engine (models/ioengines/spdk.py): SPDK's user-space NVMe driver in fio's thread.
    # SPDK reports 10.39M 4 KiB reads per second from one thread of its perf tool (spdk.io news,
    # 2019-05-06, "10.39M Storage I/O Per Second From One Thread", Xeon Platinum 8280): ~260-390
    # cycles per IO at 2.7-4.0 GHz for the whole loop (submit, completion, the tool's own work, doorbells
    # batched). The split below is an estimate within that total.
    spdk_submit_cycles: float = Field(
        180,
        ge=0,
        description="the plugin's queue() (spdk_fio_queue -> spdk_nvme_ns_cmd_read/write): a request"
        " and a tracker from the qpair's free lists, the command, its PRP from the buffer fio allocated in"
        " registered hugepage memory (spdk_vtophys), the 64-byte SQ entry; not the doorbell (estimate,"
        " within SPDK's ~10M IOPS per core)",
    )
    spdk_complete_cycles: float = Field(
        120,
        ge=0,
        description="one completion in spdk_nvme_qpair_process_completions: the CQE (its phase bit"
        " flipped), its tracker, the request's callback (spdk_fio_completion_cb hands the io_u to fio's"
        " event list), the request freed (estimate, within SPDK's ~10M IOPS per core)",
    )
    spdk_qpair_poll_cycles: float = Field(
        16,
        ge=0,
        description="spdk_nvme_qpair_process_completions on a qpair with nothing posted: the phase"
        " bit of its CQ head entry, a cached line while the device has not written it (estimate, the"
        " storage-server model's qpair_poll_cycles)",
    )
    spdk_getevents_cycles: float = Field(
        40,
        ge=0,
        description="one call of the plugin's getevents (spdk_fio_getevents): its loop set-up and the"
        " qpair rotation (estimate)",
    )
    mmio_write_cycles: float = Field(
        100,
        ge=0,
        description="core time of one write to a device register through a user-space mapping of"
        " its BAR (an NVMe SQ tail or CQ head doorbell): an uncached store that drains the store buffer"
        " before it and is posted on PCIe (estimate, a physical parameter of the platform; the kernel's"
        " doorbells are inside nvme_submit_cycles and nvme_complete_cycles)",
    )
    # -- fio's verify (models/ioengines/verify.py): fio's own user-space work on the data of an IO. The
    # rates are for fio's implementations (fio's crc/ directory: plain C, except crc32c's SSE4.2
    # instruction), per byte on a warm core, the data in the cache hierarchy after its DMA.
    verify_checksum_cycles_per_byte: dict[str, float] = Field(
        {
            "crc32c": 0.375,
            "crc32c-intel": 0.375,
            "crc64": 7.0,
            "crc32": 7.0,
            "crc16": 7.0,
            "crc7": 7.0,
            "xxhash": 0.5,
            "md5": 6.0,
            "sha1": 6.0,
            "sha256": 20.0,
            "sha512": 13.0,
            "sha3-224": 11.8,
            "sha3-256": 12.5,
            "sha3-384": 16.3,
            "sha3-512": 23.6,
            "pattern": 0.1,
            "pattern_hdr": 0.1,
            "meta": 0.0,
            "null": 0.0,
        },
        description="fio verify=TYPE: cycles per byte to compute (writes) or check (reads) the block's"
        " checksum. crc32c: fio's crc32c-intel.c runs the SSE4.2 crc32q instruction over 8 bytes at a time"
        " in one dependency chain, latency 3 cycles (Agner Fog's instruction tables, Skylake to Zen) -> 3/8"
        " (derived; ~9 GB/s at 3.4 GHz). crc64, crc32, crc16, crc7: byte-at-a-time table look-ups"
        " (Sarwate), ~7 cycles per byte (recalled: Kounavis and Berry, 'A Systematic Approach to Building"
        " High Performance Software-based CRC Generators', ISCC 2005). xxhash: XXH32, 5.4 GB/s at 2.7 GHz"
        " (recalled: the xxHash README's benchmark) -> 0.5. md5 (plain C of RFC 1321, 64 steps per 64-byte"
        " block), sha1, sha256, sha512: estimates from the rounds per block of plain C (~0.55 GB/s for md5"
        " at 3.4 GHz). sha3-*: one Keccak-f[1600] permutation (estimate ~1,700 cycles in C) per rate of"
        " 144/136/104/72 bytes. pattern, pattern_hdr: a compare with the pattern, memcmp-like (estimate)."
        " meta, null: no checksum of the data (the header only)",
    )
    verify_fill_cycles_per_byte: float = Field(
        0.6,
        ge=0,
        description="fio with verify refills each write buffer with new random data (fill_random_buf:"
        " one 64-bit multiplicative hash step, __hash_u64, and a store per 8 bytes in one dependency"
        " chain: ~5 cycles per 8 bytes; estimate); with verify_pattern the pattern is copied instead"
        " (verify_pattern_fill_cycles_per_byte)",
    )
    verify_pattern_fill_cycles_per_byte: float = Field(
        0.1, ge=0, description="fio copying verify_pattern into a write buffer: memcpy-like (estimate)"
    )
    verify_header_cycles: float = Field(
        150,
        ge=0,
        description="fio's verify header of each verify_interval of a block (struct verify_header: magic,"
        " length, offset, write sequence, time, seed, its own crc32c): built on a write, checked on a"
        " read (estimate: ~40 fields and a crc32c over 40 bytes)",
    )
    verify_async_queue_cycles: float = Field(
        1500,
        ge=0,
        description="fio's hand-off of a completed read to its verify_async threads (verify.c"
        " verify_async_init's list: the io_u put on td->verify_list under verify_lock, then"
        " pthread_cond_signal, a futex wake system call when a thread waits): charged to the job"
        " thread (estimate, ~0.4 us: a lock, a list add and a futex(FUTEX_WAKE) round trip)",
    )
    pi_crc16_cycles_per_byte: float = Field(
        7.0,
        ge=0,
        description="fio generating or checking an NVMe protection information guard of 16 bits"
        " (io_uring_cmd, pi_act=0, pi_chk with GUARD): fio_crc_t10dif, cycles per byte. Without ISA-L"
        " (Debian's fio package does not link it) fio's crc/crct10dif_common.c runs a byte-at-a-time"
        " table look-up (Sarwate), ~7 cycles per byte as verify's crc16 (recalled: Kounavis and Berry,"
        " ISCC 2005); with ISA-L's folding CRC it would be ~0.1",
    )
    pi_crc64_cycles_per_byte: float = Field(
        7.0,
        ge=0,
        description="the same for a 64-bit guard: fio_crc64_nvme, without ISA-L a byte-at-a-time table"
        " look-up over crc64nvmetable (crc/crc64.c), ~7 cycles per byte (as above)",
    )
    pi_tuple_cycles: float = Field(
        30,
        ge=0,
        description="fio's work per block's protection information tuple besides the guard's CRC: the"
        " application and reference tags stored (a write) or compared with the escapes and masks (a"
        " read), big-endian swaps, the next block's pointers (estimate: ~10 loads, stores and branches)",
    )
    fsync_clean_cycles: float = Field(
        1500,
        ge=0,
        description="fsync(2) of a file with no dirty pages, after the syscall entry (vfs_fsync_range ->"
        " blkdev_fsync or the file system's fsync: the mapping's write-and-wait finds nothing, and"
        " blkdev_issue_flush's empty flush bio ends at once on a queue without a volatile write cache,"
        " as submit_bio_noacct clears REQ_PREFLUSH there): fio's sync before its verify phase (estimate)",
    )
    invalidate_cache_cycles: float = Field(
        1500,
        ge=0,
        description="fio's file_invalidate_cache on a file with nothing cached, after the syscall entry:"
        " ioctl(BLKFLSBUF) on a block device (sync_blockdev + invalidate_bdev) or"
        " posix_fadvise(POSIX_FADV_DONTNEED) on a file (invalidate_mapping_pages over an empty mapping)"
        " (estimate)",
    )
    timer_slack_ns: float = Field(50_000, ge=0, description="timer slack of ordinary tasks' sleeps (nanosleep), ns")
    sq_thread_idle_ns: float = Field(
        1e9, ge=0, description="io_uring SQPOLL thread idle time before it sleeps (kernel default 1 s), ns"
    )
    iosched_cycles: dict[str, float] = Field(
        default_factory=dict,
        description="CPU cycles per request of each IO scheduler (insert + dispatch + completion), overriding the"
        " scheduler's documented default; split in the scheduler's own proportions",
    )
    iosched_cycles_scale: float = Field(
        1.0,
        gt=0,
        le=100,
        description="the IO schedulers' documented per-request costs"
        " (measured on a 2.4 GHz laptop core) take this many times their cycles on"
        " this platform; iosched_cycles overrides a scheduler's total outright",
    )
    mem_ops_per_cycle: dict[str, dict[str, float]] = Field(
        default_factory=dict,
        description="memory operations (loads + stores) per cycle of each source of CPU work not counted as"
        " kernel actions, by cell (models.os.costs.memops.SOURCE_CELLS); empty (and no mem_ops_per_action) ="
        " not reported",
    )
    mem_ops_per_action: dict[str, dict[str, float]] = Field(
        default_factory=dict,
        description="memory operations (loads + stores) per execution of each kernel action (a switch, a wake-up,"
        " a PELT update, an hrtimer programming, ...), by cell (models.os.costs.memops.ACTION_CELLS)",
    )
    cold_switch_refill_cycles: float = Field(
        2500,
        ge=0,
        description="cache warmth: a user task switched in after"
        " another user task ran on the CPU (or first on this CPU) refetches the"
        " L1/L2 lines and TLB entries of its IO path that the other evicted"
        " (KPTI without PCID flushes the TLB at every switch); estimate: ~16 KiB"
        " from L2/LLC at ~4 misses in flight plus ~30 page walks (~0.7 us)",
    )
    cold_switch_evict_cycles: float = Field(
        16_000,
        gt=0,
        description="cache warmth, how long ago: cycles of other tasks' work on a CPU that displace a"
        " task's whole working set from the core's L1 (the switch refill scales with the other work"
        " since the task left the CPU, up to this); estimate: 64 KiB of L1 (32 KiB instruction + 32 KiB"
        " data) refilled by straight-line kernel and user code touching ~4 B of new lines per cycle"
        " (one ~4-byte instruction per cycle at CPI ~1, its data alongside)",
    )
    cold_idle_refill_cycles: float = Field(
        3000,
        ge=0,
        description="cache warmth: the task that runs after its CPU"
        " idled in a state that flushes the core caches (flushes_core_caches)"
        " refetches its IO path's working set from the LLC; estimate: ~20 KiB at"
        " ~40 cycles a line, ~4 in flight (~0.9 us)",
    )
    cpi_by_layer: dict[str, float] = Field(
        default_factory=lambda: dict(WARM_CPI),
        description="cycles per instruction of each stack layer's code on a warm core (its lines in L1/L2,"
        " its branches predicted): a bundle's instructions are its cycles / this. Layers left out keep"
        " the default (WARM_CPI, estimates with their reasoning); the 'cache' layer (refetch stalls)"
        " retires no instructions",
    )
    poll_idle_loop_instructions: float = Field(
        7,
        gt=0,
        description="instructions of one iteration of the cpuidle POLL state's loop (poll_idle,"
        " drivers/cpuidle/poll_state.c: cpu_relax = PAUSE, the loop counter's increment, compare and"
        " branch, need_resched's load, test and branch); it runs at one iteration per PAUSE"
        " (cpu.pause_cycles)",
    )
    idle_entry_cycles: float = Field(
        1200, ge=0, description="idle loop + cpuidle governor selection when a CPU goes idle"
    )
    idle_exit_cycles: float = Field(
        600, ge=0, description="idle loop exit work after a wake-up (tick restart, accounting)"
    )

    @field_validator("cpi_by_layer")
    @classmethod
    def _known_layers(cls, v: dict):
        for layer, cpi in v.items():
            if layer not in WARM_CPI:
                raise ValueError(f"unknown layer {layer!r} (known: {', '.join(WARM_CPI)})")
            if not (0.25 <= cpi < float("inf")):
                raise ValueError(f"{layer}: cycles per instruction must be >= 0.25 (4 retired per cycle), got {cpi}")
        return {**WARM_CPI, **v}

    @field_validator("verify_checksum_cycles_per_byte")
    @classmethod
    def _known_checksums(cls, v: dict):
        """Every fio verify type keeps a rate: a partial table overrides only the types it names."""
        defaults = cls.model_fields["verify_checksum_cycles_per_byte"].default
        for name, rate in v.items():
            if name not in defaults:
                raise ValueError(f"unknown fio verify type {name!r} (known: {', '.join(defaults)})")
            if not (0.0 <= rate < float("inf")):
                raise ValueError(f"{name}: cycles per byte must be >= 0, got {rate}")
        return {**defaults, **v}

    def layer_cpi(self) -> tuple[float, ...]:
        """Warm cycles per instruction by :data:`LAYERS` (0 for the ``cache`` layer: no instructions)."""
        return tuple(self.cpi_by_layer.get(name, 0.0) for name in LAYERS)

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

    @model_validator(mode="after")
    def _parts_within(self):
        if self.nvme_sq_doorbell_cycles + self.nvme_sq_lock_cycles > self.nvme_submit_cycles:
            raise ValueError("nvme_sq_doorbell_cycles + nvme_sq_lock_cycles are parts of nvme_submit_cycles")
        for part, whole in (
            ("blk_tag_batch_cycles", "blk_submit_cycles"),
            ("nvme_cq_doorbell_cycles", "nvme_complete_cycles"),
            ("blk_complete_batch_cycles", "blk_complete_cycles"),
            ("uring_cq_flush_cycles", "aio_reap_cycles"),
        ):
            if getattr(self, part) > getattr(self, whole):
                raise ValueError(f"{part} ({getattr(self, part):g}) is a part of {whole} ({getattr(self, whole):g})")
        return self

    @property
    def release(self) -> tuple[int, int]:
        """``version`` as ``(major, minor)``."""
        return parse_version(self.version)

    @field_validator("mem_ops_per_cycle", "mem_ops_per_action")
    @classmethod
    def _known_cells(cls, v: dict, info):
        allowed = SOURCE_CELLS if info.field_name == "mem_ops_per_cycle" else ACTION_CELLS
        what = "source" if info.field_name == "mem_ops_per_cycle" else "kernel action"
        for name, cells in v.items():
            if name not in allowed:
                raise ValueError(f"unknown {what} {name!r} (known: {', '.join(allowed)})")
            for cell, ops in cells.items():
                if cell not in CELLS:
                    raise ValueError(f"{name}: unknown cell {cell!r} (known: {', '.join(CELLS)})")
                if not ops >= 0:
                    raise ValueError(f"{name}.{cell}: memory operations must be >= 0, got {ops}")
        return v

    # -- scheduler paths, summed in one place for every model that charges them (the Linux host's
    # runner, models/os/sched/runner.py, and the storage server's kernel target and hybrid sleeps)
    def accounting_cycles(self) -> float:
        """Load tracking and pressure-stall accounting of one enqueue (a wake-up) or one dequeue (a
        task going to sleep): PELT and PSI at the root and at each cgroup level (cycles)."""
        return (self.cgroup_depth + 1) * (self.pelt_level_cycles + self.psi_level_cycles)

    def accounting_actions(self) -> dict[str, int]:
        """The actions of :meth:`accounting_cycles`: one PELT update and one PSI change per level,
        and each cgroup level's group entity re-weighted (update_cfs_group, part of its PELT work)."""
        levels = self.cgroup_depth + 1
        return {"pelt_update": levels, "psi_change": levels, "cfs_group_update": self.cgroup_depth}

    def action_cycles(self, actions: dict[str, float]) -> dict[str, float]:
        """Cycles by layer of executing ``actions`` ({action: times}, :data:`ACTIONS`)."""
        out: dict[str, float] = {}
        for name, times in actions.items():
            if name in SUB_ACTIONS:
                continue  # their cycles are the enclosing action's
            field, layer = ACTIONS[name]
            out[layer] = out.get(layer, 0.0) + times * getattr(self, field)
        return out

    def switch_to_idle_cycles(self) -> float:
        """A task blocks and its CPU goes idle: schedule() + the idle loop's entry (cycles)."""
        return self.ctx_switch_cycles + self.idle_entry_cycles

    def switch_from_idle_cycles(self) -> float:
        """An idle CPU runs a woken task: the idle loop's exit + schedule() (cycles)."""
        return self.ctx_switch_cycles + self.idle_exit_cycles

    def nanosleep_entry_cycles(self) -> float:
        """A timed sleep from user space up to idle: syscall entry, hrtimer arm, switch to idle (cycles)."""
        return (
            self.syscall_entry_cycles
            + self.hrtimer_start_cycles
            + self.accounting_cycles()
            + self.ctx_switch_cycles
            + self.idle_entry_cycles
        )

    def nanosleep_wakeup_cycles(self) -> float:
        """Its wake-up back to user space: timer interrupt and expiry, wake-up, switch in from idle,
        syscall exit (cycles)."""
        return (
            self.irq_entry_cycles
            + self.hrtimer_expire_cycles
            + self.wakeup_cycles
            + self.accounting_cycles()
            + self.ctx_switch_cycles
            + self.syscall_exit_cycles
            + self.idle_exit_cycles
        )

    def irq_wakeup_cycles(self) -> float:
        """An interrupt wakes a sleeping task, which is switched in: IRQ entry, wake-up with its enqueue
        accounting, schedule() (cycles)."""
        return self.irq_entry_cycles + self.wakeup_cycles + self.accounting_cycles() + self.ctx_switch_cycles


class CostTable:
    """Registry of the cost bundles of one run (gives each an index for per-CPU use counts).
    ``kcosts`` prices the kernel actions bundles name."""

    def __init__(self, activity: dict[str, float], kcosts: KernelCosts | None = None):
        self.bundles: list[Cost] = []
        self._by_key: dict = {}
        self._by_call: dict = {}  # (name, parts as passed, actions as passed) -> the bundle
        self._act_user = activity["user"]
        self._act_kernel = activity["kernel"]
        self._kcosts = kcosts if kcosts is not None else KernelCosts()
        self._cpi = self._kcosts.layer_cpi()

    def get(
        self, name: str, actions: Mapping[str, float] | None = None, user_space: bool = False, **parts: float
    ) -> Cost:
        """The bundle named ``name`` with these parts (cycles by layer) and kernel ``actions``
        ({action: times}, priced by the table's :class:`KernelCosts` and added to their layers);
        ``user_space``: every layer of it runs in user mode (a user-space driver); created once,
        then reused."""
        # the call as written (a call site passes its keywords in the same order every time): no
        # sorting on the engines' per-IO look-ups; the canonical key below on the first call
        fast = (name, tuple(parts.items()), tuple(actions.items()) if actions else (), user_space)
        cost = self._by_call.get(fast)
        if cost is not None:
            return cost
        acts = tuple(sorted((ACTION_INDEX[a], n) for a, n in (actions or {}).items() if n))
        key = (name, tuple(sorted(parts.items())), acts, user_space)
        cost = self._by_key.get(key)
        if cost is None:
            if actions:
                parts = dict(parts)
                for layer, cyc in self._kcosts.action_cycles(actions).items():
                    parts[layer] = parts.get(layer, 0.0) + cyc
            cost = Cost(name, len(self.bundles), parts, self._act_user, self._act_kernel, acts, user_space, self._cpi)
            self.bundles.append(cost)
            self._by_key[key] = cost
        self._by_call[fast] = cost
        return cost
