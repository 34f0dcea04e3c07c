"""Memory operations (loads + stores) by kernel source directory and function group.

The poll-vs-interrupt study attributes VTune load/store counts to ``block/`` (with ``blk_poll`` and
``blk_mq_*``), ``drivers/nvme/host/``, ``kernel/sched/`` (with ``__schedule``, ``psi_task_change``,
``update_load_avg``), ``kernel/time/`` (with ``ktime_get`` and ``*hrtimer*``) and ``other``. The
model splits each source of work over the exclusive *cells* its code can touch, in two ways:

- **Per kernel action** (:data:`ACTION_CELLS`) for the scheduler's and the timer code's work: a
  context switch touches ``__schedule``, the rest of ``kernel/sched/`` and ``other`` (the arch
  switch); one PELT update touches ``update_load_avg``; one PSI change ``psi_task_change``; an
  hrtimer (re)programming ``*hrtimer*`` and the clock; ... Each action has a number of memory
  operations per execution (``kernel.mem_ops_per_action``), and the run counts the actions
  (models.os.costs.ACTIONS), so the operations follow what the kernel executed: a wake-up placed
  on another CPU adds its scan and migration, a direct task-to-task switch has no idle-loop
  entry, whatever the actions' cycle constants absorbed.
- **Per cycle** (:data:`SOURCE_CELLS`) for the work that is the same few code paths per IO (fio,
  the syscall, the file system, blk-mq, the driver, the interrupt entry, the poll loop):
  operations per cycle of each source (``kernel.mem_ops_per_cycle``).

Both are platform parameters fitted by ``scenarios/studies/calibrate_memops.py``
(``stacksim calibrate --study memops``).
"""

from __future__ import annotations

#: published keys, in the study's order; the function groups are parts of their directories
KEYS = (
    "block/",
    "blk_poll",
    "blk_mq_*",
    "drivers/nvme/host/",
    "kernel/sched/",
    "__schedule",
    "psi_task_change",
    "update_load_avg",
    "kernel/time/",
    "ktime_get",
    "*hrtimer*",
    "other",
)

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

#: kernel action (models.os.costs.ACTIONS) -> cells its code touches (5.x code paths)
ACTION_CELLS = {
    # __schedule -> pick_next_task_fair, update_rq_clock (kernel/sched/), context_switch's switch_mm and
    # __switch_to (arch/x86: other)
    "switch": ("__schedule", "sched_rest", "other"),
    "kthread_switch": ("__schedule", "sched_rest", "other"),
    # try_to_wake_up -> select_task_rq, ttwu_do_activate, check_preempt (kernel/sched/); rq and pi locks
    # (kernel/locking: other)
    "wakeup": ("sched_rest", "other"),
    "pelt_update": ("load_avg",),  # update_load_avg at one level
    "psi_change": ("psi", "sched_rest"),  # psi_task_change -> psi_group_change at one level (+ its clock read)
    "idle_scan": ("sched_rest",),  # available_idle_cpu / idle_cpu of one more CPU
    "migrate": ("sched_rest", "load_avg"),  # set_task_cpu: migrate_task_rq_fair (detach/attach averages)
    "newidle_balance": ("sched_rest",),  # newidle_balance: update_blocked_averages, domain walk
    "load_balance": ("sched_rest",),  # load_balance: update_sd_lb_stats, find_busiest_queue
    # do_idle + tick_nohz_idle_enter (kernel/time/, clock reads) + the cpuidle governor (drivers/cpuidle: other)
    "idle_entry": ("sched_rest", "time_rest", "ktime_get", "other"),
    "idle_exit": ("sched_rest", "time_rest", "ktime_get", "other"),  # tick_nohz_idle_exit, the idle loop's exit
    # update_process_times -> account_process_tick, scheduler_tick -> task_tick_fair -> update_load_avg,
    # run_local_timers (kernel/time/), rcu and friends (other)
    "sched_tick": ("sched_rest", "load_avg", "time_rest", "other"),
    "hrtimer_program": ("hrtimer", "ktime_get", "time_rest"),  # hrtimer_start_range_ns, clockevents program
    "hrtimer_expire": ("hrtimer", "ktime_get", "time_rest"),  # hrtimer_interrupt, __run_hrtimer
}

#: source of CPU work (stack layers + the cpuidle POLL spin) -> cells its code can touch, for the
#: cycles not counted as kernel actions (the scheduler's and timer layers' work is all actions)
SOURCE_CELLS = {
    "user": ("other",),
    "syscall": ("other",),
    "fs": ("other",),
    "block": ("blk_mq", "block_rest"),
    "iosched": ("block_rest",),
    "driver": ("nvme",),
    "irq": ("other", "ktime_get"),
    # the dio poll loop (fs/block_dev.c: other) around blk_poll -> blk_mq_poll -> nvme_poll, with need_resched /
    # task-state checks (kernel/sched/) and clock reads (kernel/time/)
    "polling": ("blk_poll", "blk_mq", "block_rest", "nvme", "ktime_get", "time_rest", "sched_rest", "other"),
    "smt_contention": (),
    "cache": (),  # refill stalls: cycles without retired loads or stores
    "idle_spin": ("other",),
}


def rates_per_s(
    intensity: dict[str, dict[str, float]],
    cycles_per_s: dict[str, float],
    per_action: dict[str, dict[str, float]] | None = None,
    actions_per_s: dict[str, float] | None = None,
) -> dict[str, float]:
    """Memory operations per second by published key (+ ``total``): the cycles per second of each
    source not counted as actions x the intensities (operations per cycle per cell), plus the
    kernel actions per second x their operations per action per cell."""
    cell_rates = {c: 0.0 for c in CELLS}
    for source, cyc in cycles_per_s.items():
        for cell, ops in intensity.get(source, {}).items():
            cell_rates[cell] += ops * cyc
    for action, n in (actions_per_s or {}).items():
        for cell, ops in (per_action or {}).get(action, {}).items():
            cell_rates[cell] += ops * n
    out = {k: 0.0 for k in KEYS}
    for cell, rate in cell_rates.items():
        for key in CELLS[cell]:
            out[key] += rate
    out["total"] = out["block/"] + out["drivers/nvme/host/"] + out["kernel/sched/"] + out["kernel/time/"] + out["other"]
    return out
