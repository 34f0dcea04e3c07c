"""Memory operations (loads + stores) by kernel source directory and function group.

The poll-vs-interrupt study attributes VTune load/store counts to ``block/`` (with ``blk_poll`` and
``blk_mq_*``), ``drivers/nvme/host/``, ``kernel/sched/`` (with ``__schedule``, ``psi_task_change``,
``update_load_avg``), ``kernel/time/`` (with ``ktime_get`` and ``*hrtimer*``) and ``other``. The
model gives every source of CPU work a memory-operation intensity (operations per cycle) split
over the exclusive *cells* its code can touch (:data:`SOURCE_CELLS`: the poll loop touches
``blk_poll``, the NVMe poll function, the direct-IO wait loop around it and clock reads; a context switch touches ``__schedule``,
PSI, load tracking, the rest of ``kernel/sched/`` and timekeeping; ...). Rates per second follow
from the run's cycles per source, so each configuration's memory operations come from what its
mechanisms executed. Intensities are platform parameters (``kernel.mem_ops_per_cycle``), fitted by
``scenarios/calibrate_memops.py`` (``stacksim calibrate --study memops``).
"""

from __future__ import annotations

#: published keys, in the study's order; the function groups are parts of their directories
KEYS = ("block/", "blk_poll", "blk_mq_*", "drivers/nvme/host/", "kernel/sched/", "__schedule", "psi_task_change",
        "update_load_avg", "kernel/time/", "ktime_get", "*hrtimer*", "other")

#: exclusive cells -> the published keys they count towards
CELLS = {
    "blk_poll": ("block/", "blk_poll"),
    "blk_mq": ("block/", "blk_mq_*"),
    "block_rest": ("block/",),
    "nvme": ("drivers/nvme/host/",),
    "__schedule": ("kernel/sched/", "__schedule"),
    "psi": ("kernel/sched/", "psi_task_change"),
    "load_avg": ("kernel/sched/", "update_load_avg"),
    "sched_rest": ("kernel/sched/",),
    "ktime_get": ("kernel/time/", "ktime_get"),
    "hrtimer": ("kernel/time/", "*hrtimer*"),
    "time_rest": ("kernel/time/",),
    "other": ("other",),
}

#: source of CPU work (stack layers + the cpuidle POLL spin) -> cells its code can touch
SOURCE_CELLS = {
    "user": ("other",),
    "syscall": ("other",),
    "fs": ("other",),
    "block": ("blk_mq", "block_rest"),
    "iosched": ("block_rest",),
    "driver": ("nvme",),
    "irq": ("other", "ktime_get"),
    "scheduler": ("__schedule", "psi", "load_avg", "sched_rest", "ktime_get", "time_rest", "other"),
    "timer": ("hrtimer", "ktime_get", "time_rest"),
    # the dio poll loop (fs/block_dev.c: other) around blk_poll -> blk_mq_poll -> nvme_poll, with need_resched /
    # task-state checks (kernel/sched/) and clock reads (kernel/time/)
    "polling": ("blk_poll", "blk_mq", "block_rest", "nvme", "ktime_get", "time_rest", "sched_rest", "other"),
    "smt_contention": (),
    "idle_spin": ("other",),
}


def rates_per_s(intensity: dict[str, dict[str, float]], cycles_per_s: dict[str, float]) -> dict[str, float]:
    """Memory operations per second by published key (+ ``total``), from cycles per second of each
    source and the intensities (operations per cycle per cell)."""
    cell_rates = {c: 0.0 for c in CELLS}
    for source, cyc in cycles_per_s.items():
        for cell, ops in intensity.get(source, {}).items():
            cell_rates[cell] += ops * cyc
    out = {k: 0.0 for k in KEYS}
    for cell, rate in cell_rates.items():
        for key in CELLS[cell]:
            out[key] += rate
    out["total"] = out["block/"] + out["drivers/nvme/host/"] + out["kernel/sched/"] + out["kernel/time/"] + out["other"]
    return out
