"""CPU cost of each modelled kernel action, in cycles, and the stack layer it is charged to; the
instructions each retires (cycles / its layer's warm CPI, :data:`WARM_CPI`).

A :class:`Cost` is a bundle of per-layer cycles that one uninterrupted stretch of code executes
(for example "hard IRQ entry + CQ reap + request completion + wakeup"). Bundles are built once per
run; on the hot path the CPU only adds ``cycles / GHz`` to the clock and increments the bundle's
use count, and per-layer totals are recovered at the end as count x cycles.

:class:`KernelCosts` (a platform's ``kernel`` settings) takes most of its fields from groups by
layer, one base class each: :mod:`models.os.costs.io_path` (system calls, the file system, blk-mq,
NVMe, io_uring and libaio, polling), :mod:`models.os.costs.scheduling` (IRQ entry, the scheduler,
IPIs, timers), :mod:`models.os.costs.user_space` (fio's SPDK engine, verify, protection
information); its own are the run-wide ones (timer slack, the IO schedulers' scale, memory
operations, cache warmth, warm CPI, the idle loop).
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import Field, field_validator, model_validator

# the stack layers and the bundle executed on the hot path (models.os.costs.bundle, compiled: simcore.compiled)
from models.os.costs.bundle import LAYER_INDEX, LAYERS, USER, Cost  # noqa: F401
from models.os.costs.io_path import AsyncPollCosts, BlockNvmeCosts, SyscallFsCosts, UringCmdCosts
from models.os.costs.memops import ACTION_CELLS, CELLS, SOURCE_CELLS
from models.os.costs.scheduling import IpiTimerCosts, SchedCosts
from models.os.costs.user_space import SpdkCosts, VerifyPiCosts

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


# pydantic lists the fields of base classes by the reversed MRO, the last base's first: the groups
# are listed last to first so that model_fields, the JSON schema and every dump keep the order of the
# fields (the kernel's release first; tests/test_kernel_costs_order.py pins it), then KernelCosts' own.
class KernelCosts(
    VerifyPiCosts,
    SpdkCosts,
    AsyncPollCosts,
    IpiTimerCosts,
    UringCmdCosts,
    SchedCosts,
    BlockNvmeCosts,
    SyscallFsCosts,
):
    """Cycles per kernel action. The defaults are order-of-magnitude figures for a ~3.4 GHz Skylake
    core with KPTI and retpolines (the Xeon E3-1230 v5 of Harris & Altiparmak, HotStorage 2022): a
    system call's round trip ~0.23 us and a switch between threads ~1 us, the quantities lmbench's
    ``lat_syscall`` and ``lat_ctx`` (McVoy & Staelin, USENIX ATC 1996) and Linux's ``perf bench
    sched pipe`` (tools/perf/bench/sched-pipe.c) measure; each field says what it covers, estimates
    marked. The calibrated platforms refit the ones their studies constrain (models/platforms.py,
    ``stacksim calibrate``)."""

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

    def layer_cpi(self) -> tuple[float, ...]:
        """Warm cycles per instruction by :data:`LAYERS` (0 for the ``cache`` layer: no instructions)."""
        return tuple(self.cpi_by_layer.get(name, 0.0) for name in LAYERS)

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
