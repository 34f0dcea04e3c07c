"""CPU cost of each modelled kernel action, in cycles, and the stack layer it is charged to.

A :class:`Cost` is a bundle of per-layer cycles that one uninterrupted stretch of code executes
(for example "hard IRQ entry + CQ reap + request completion + wakeup"). Bundles are built once per
run; on the hot path the CPU only adds ``cycles / GHz`` to the clock and increments the bundle's
use count, and per-layer totals are recovered at the end as count x cycles.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import Field, field_validator

# the stack layers and the bundle executed on the hot path (models.os.cost, compiled: simcore.compiled)
from models.os.cost import LAYER_INDEX, LAYERS, USER, Cost  # noqa: F401
from models.os.memops import ACTION_CELLS, CELLS, SOURCE_CELLS
from simcore.config import Model

#: Kernel actions counted one by one (each execution of the code path is one action): the
#: scheduler's and the timer code's work. name -> (the :class:`KernelCosts` field of its cycles, its
#: layer). Bundles name the actions they execute (``CostTable.get(..., actions={...})``); the run
#: counts them, and memory operations are charged per action (models.os.memops), so they do not
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
ACTION_INDEX = {name: i for i, name in enumerate(ACTIONS)}


class KernelCosts(Model):
    """Cycles per kernel action (defaults: order-of-magnitude figures of mechanisms.md, Appendix A
    'CPU costs', for a ~3.4 GHz Skylake with KPTI + retpolines; platforms calibrate them)."""

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
    blk_complete_cycles: float = Field(300, ge=0, description="blk-mq request completion and freeing")
    nvme_submit_cycles: float = Field(
        700, ge=0, description="NVMe command build, PRP setup, SQ tail doorbell MMIO write"
    )
    nvme_complete_cycles: float = Field(300, ge=0, description="reap one CQ entry, CQ head doorbell")
    blk_tag_hold_cycles: float = Field(
        40,
        ge=0,
        description="of blk_submit_cycles and blk_complete_cycles: the tag sbitmap word's atomic update"
        " (__sbitmap_queue_get at allocation, sbitmap_queue_clear at free), during which the word's"
        " cache line is exclusively this CPU's; estimate: one locked read-modify-write, ~20-50 cycles",
    )
    nvme_sq_lock_cycles: float = Field(
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
        description="cgroup levels between a task and the root (a systemd login session:"
        " user.slice / user-N.slice / session-N.scope), each with its own load averages and"
        " pressure-stall state",
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
    io_uring_issue_cycles: float = Field(
        350, ge=0, description="io_uring: per-SQE issue work (io_submit_sqes, io_read prep)"
    )
    fget_cycles: float = Field(150, ge=0, description="io_uring without registered files: fget/fput of the file per IO")
    sqe_write_cycles: float = Field(
        60, ge=0, description="io_uring SQPOLL: writing one SQE into the shared ring in user space"
    )
    user_complete_cycles: float = Field(
        300, ge=0, description="fio's user-space work per completed IO of an async engine"
    )
    spin_iteration_cycles: float = Field(100, ge=1, description="one iteration of a user-space CQ-ring spin loop")
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
        " kernel actions, by cell (models.os.memops.SOURCE_CELLS); empty (and no mem_ops_per_action) = not reported",
    )
    mem_ops_per_action: dict[str, dict[str, float]] = Field(
        default_factory=dict,
        description="memory operations (loads + stores) per execution of each kernel action (a switch, a wake-up,"
        " a PELT update, an hrtimer programming, ...), by cell (models.os.memops.ACTION_CELLS)",
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
    cold_idle_refill_cycles: float = Field(
        3000,
        ge=0,
        description="cache warmth: the task that runs after its CPU"
        " idled in a state that flushes the core caches (flushes_core_caches)"
        " refetches its IO path's working set from the LLC; estimate: ~20 KiB at"
        " ~40 cycles a line, ~4 in flight (~0.9 us)",
    )
    idle_entry_cycles: float = Field(
        1200, ge=0, description="idle loop + cpuidle governor selection when a CPU goes idle"
    )
    idle_exit_cycles: float = Field(
        600, ge=0, description="idle loop exit work after a wake-up (tick restart, accounting)"
    )

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
    # runner, models/os/sched.py, and the storage server's kernel target and hybrid sleeps)
    def accounting_cycles(self) -> float:
        """Load tracking and pressure-stall accounting of one enqueue (a wake-up) or one dequeue (a
        task going to sleep): PELT and PSI at the root and at each cgroup level (cycles)."""
        return (self.cgroup_depth + 1) * (self.pelt_level_cycles + self.psi_level_cycles)

    def accounting_actions(self) -> dict[str, int]:
        """The actions of :meth:`accounting_cycles`: one PELT update and one PSI change per level."""
        return {"pelt_update": self.cgroup_depth + 1, "psi_change": self.cgroup_depth + 1}

    def action_cycles(self, actions: dict[str, float]) -> dict[str, float]:
        """Cycles by layer of executing ``actions`` ({action: times}, :data:`ACTIONS`)."""
        out: dict[str, float] = {}
        for name, times in actions.items():
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

    def get(self, name: str, actions: Mapping[str, float] | None = None, **parts: float) -> Cost:
        """The bundle named ``name`` with these parts (cycles by layer) and kernel ``actions``
        ({action: times}, priced by the table's :class:`KernelCosts` and added to their layers);
        created once, then reused."""
        # the call as written (a call site passes its keywords in the same order every time): no
        # sorting on the engines' per-IO look-ups; the canonical key below on the first call
        fast = (name, tuple(parts.items()), tuple(actions.items()) if actions else ())
        cost = self._by_call.get(fast)
        if cost is not None:
            return cost
        acts = tuple(sorted((ACTION_INDEX[a], n) for a, n in (actions or {}).items() if n))
        key = (name, tuple(sorted(parts.items())), acts)
        cost = self._by_key.get(key)
        if cost is None:
            if actions:
                parts = dict(parts)
                for layer, cyc in self._kcosts.action_cycles(actions).items():
                    parts[layer] = parts.get(layer, 0.0) + cyc
            cost = Cost(name, len(self.bundles), parts, self._act_user, self._act_kernel, acts)
            self.bundles.append(cost)
            self._by_key[key] = cost
        self._by_call[fast] = cost
        return cost
