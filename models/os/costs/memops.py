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
  (models.os.costs.tables.ACTIONS), so the operations follow what the kernel executed: a wake-up placed
  on another CPU adds its scan and migration, a direct task-to-task switch has no idle-loop
  entry, whatever the actions' cycle constants absorbed.
- **Per cycle** (:data:`SOURCE_CELLS`) for the work that is the same few code paths per IO (fio,
  the syscall, the file system, blk-mq, the driver, the interrupt entry, the poll loop):
  operations per cycle of each source (``kernel.mem_ops_per_cycle``).

Both are platform parameters fitted by ``scenarios/studies/calibrate_memops.py``
(``stacksim calibrate --study memops``), except the actions of :data:`DERIVED_OPS`: their operations
per execution are derived from the data their code reads and writes (Linux 5.15 sources, field by
field: :data:`DERIVATION`), so that what the calibration's two columns do not exercise (the hrtimer
code of hybrid polling's sleeps, remote wake-ups, the scans of a busy package) is not a prior's
guess. The sub-actions (models.os.costs.tables.SUB_ACTIONS: no cycles of their own) count the parts of the
scheduler's work whose number per event differs between paths: the levels a switch walks, the
groups psi_task_switch changes, the groups re-weighted at an enqueue or dequeue, a remote wake-up's
wake list and IPI, a clock event programmed.
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

#: kernel action (models.os.costs.tables.ACTIONS) -> cells its code touches (5.x code paths)
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
    "hrtimer_program": ("hrtimer", "ktime_get", "time_rest", "sched_rest"),  # hrtimer_start_range_ns
    "hrtimer_expire": ("hrtimer", "ktime_get", "time_rest", "other"),  # hrtimer_interrupt, __run_hrtimer
    # sub-actions (models.os.costs.tables.SUB_ACTIONS)
    "psi_switch": ("sched_rest",),
    "update_curr": ("sched_rest",),
    "entity_enqueue": ("sched_rest",),
    "entity_dequeue": ("sched_rest",),
    "select_idle_sibling": ("sched_rest",),
    "cfs_group_update": ("sched_rest",),
    "ttwu_queue": ("sched_rest", "other"),
    "ttwu_pending": ("sched_rest", "other"),
    "clockevent_program": ("hrtimer", "ktime_get", "time_rest"),
}

#: sub-actions that execute the code of another action (the same function): their operations per
#: execution are that action's
MEMOPS_AS = {"pelt_switch": "pelt_update"}

#: The operations of the derived actions, field by field: action -> rows of (cell, function, loads,
#: stores, the data). Loads and stores of the structures' fields that the code reads and writes
#: (Linux 5.15, x86_64, CONFIG_FAIR_GROUP_SCHED, CONFIG_PSI, high-resolution timers, TSC-deadline
#: APIC timer), not the stack traffic of calls and spills. Estimates by reading the sources; each
#: row names the fields.
DERIVATION: dict[str, tuple[tuple[str, str, int, int, str], ...]] = {
    # select_idle_core / __select_idle_cpu on one more CPU (kernel/sched/fair.c): cpumask_next_wrap over
    # the scan mask, available_idle_cpu -> idle_cpu (rq->curr, rq->idle, rq->nr_running,
    # rq->ttwu_pending: a busy CPU fails at the first), sched_idle_cpu (rq->nr_running,
    # rq->cfs.idle_h_nr_running), the CPU cleared from the per-CPU scan mask
    "idle_scan": (
        ("sched_rest", "for_each_cpu_wrap", 1, 0, "the scan mask's word"),
        ("sched_rest", "available_idle_cpu", 3, 0, "the per-CPU offset, rq->curr, rq->idle"),
        ("sched_rest", "sched_idle_cpu", 2, 0, "rq->nr_running, rq->cfs.idle_h_nr_running"),
        ("sched_rest", "select_idle_core", 1, 1, "__cpumask_clear_cpu on the scan mask"),
    ),
    # hybrid polling's sleep (block/blk-mq.c blk_mq_poll_hybrid_sleep), or the tick's sched_timer at a
    # NOHZ stop or restart: the timer set up and started, and its later cancel (kernel/time/hrtimer.c)
    "hrtimer_program": (
        ("hrtimer", "__hrtimer_init", 0, 8, "memset of struct hrtimer (64 bytes)"),
        (
            "hrtimer",
            "__hrtimer_init",
            2,
            4,
            "hrtimer_bases (this CPU), the clock base; ->base, is_soft, is_hard, RB_CLEAR_NODE",
        ),
        ("hrtimer", "__hrtimer_init_sleeper", 0, 2, "->function = hrtimer_wakeup, sleeper->task = current"),
        ("hrtimer", "hrtimer_start_expires", 2, 0, "_softexpires, node.expires"),
        ("hrtimer", "lock_hrtimer_base", 3, 2, "timer->base (twice), cpu_base->lock (acquire and release)"),
        ("hrtimer", "__hrtimer_start_range_ns", 2, 2, "remove_hrtimer's timer->state; _softexpires, node.expires"),
        (
            "ktime_get",
            "ktime_get",
            8,
            0,
            "HRTIMER_MODE_REL: tk_core's seq (twice), tkr_mono cycle_last, mask, mult, shift, xtime_nsec, base",
        ),
        (
            "sched_rest",
            "get_nohz_timer_target",
            3,
            0,
            "switch_hrtimer_base: this CPU busy: rq->curr, rq->idle, the housekeeping mask",
        ),
        ("hrtimer", "switch_hrtimer_base", 2, 0, "the target's hrtimer_bases, clock base"),
        ("hrtimer", "enqueue_hrtimer", 1, 2, "cpu_base->active_bases |= bit, timer->state = ENQUEUED"),
        (
            "hrtimer",
            "timerqueue_add",
            4,
            0,
            "rb-tree descent, ~2 levels (the tick and the CPU's other sleepers): child pointer and expires",
        ),
        (
            "hrtimer",
            "timerqueue_add",
            2,
            6,
            "rb_link_node (parent_color, left, right, the link), rb_insert_color_cached (colour, leftmost)",
        ),
        (
            "hrtimer",
            "hrtimer_try_to_cancel",
            6,
            0,
            "after the wake-up, hrtimer_active: timer->base, base->seq (twice), timer->state, base->running",
        ),
    ),
    # the timer interrupt (kernel/time/hrtimer.c hrtimer_interrupt, one timer run; the clock event's
    # reprogramming is clockevent_program, the woken task's try_to_wake_up is the wakeup action)
    "hrtimer_expire": (
        ("other", "local_apic_timer_interrupt", 3, 1, "lapic_events, ->event_handler, irq_stat.apic_timer_irqs"),
        (
            "hrtimer",
            "hrtimer_interrupt",
            3,
            4,
            "cpu_base, hres_active, nr_events++, dev->next_event, in_hrtirq, expires_next",
        ),
        ("hrtimer", "hrtimer_interrupt", 1, 2, "cpu_base->lock (acquire and release)"),
        (
            "time_rest",
            "ktime_get_update_offsets_now",
            12,
            0,
            "tk_core's seq (twice), tkr_mono (cycle_last, mask,"
            " mult, shift, xtime_nsec, base), offs_real, offs_boot, offs_tai, clock_was_set_seq",
        ),
        ("hrtimer", "hrtimer_update_base", 1, 1, "base->clock_was_set_seq"),
        (
            "hrtimer",
            "__hrtimer_run_queues",
            5,
            0,
            "active_bases, the base's offset, rb_leftmost, softexpires; again for the next timer",
        ),
        (
            "hrtimer",
            "__run_hrtimer",
            4,
            6,
            "base->running (set, cleared), base->seq barriers (twice), timer->state, ->function",
        ),
        (
            "hrtimer",
            "timerqueue_del",
            5,
            5,
            "rb_erase_cached of the leftmost node: rb_next, the parent's link,"
            " the colour fix-up, rb_leftmost, RB_CLEAR_NODE",
        ),
        ("hrtimer", "hrtimer_wakeup", 1, 1, "sleeper->task (read, cleared)"),
        (
            "hrtimer",
            "hrtimer_update_next_event",
            4,
            2,
            "__hrtimer_get_next_event: the base's leftmost, expires, offset; cpu_base->next_timer, expires_next",
        ),
        ("hrtimer", "hrtimer_interrupt", 0, 2, "in_hrtirq = 0, hang_detected = 0"),
    ),
    # psi_task_switch -> psi_group_change for one group (kernel/sched/psi.c), TSK_ONCPU of the next task
    "psi_switch": (
        ("sched_rest", "iterate_groups", 2, 0, "the cgroup's parent, cgroup->psi"),
        ("sched_rest", "psi_task_switch", 2, 0, "group->pcpu, this CPU's tasks[NR_ONCPU] (the common-group test)"),
        ("sched_rest", "psi_group_change", 2, 2, "write_seqcount_begin/end on groupc->seq"),
        ("sched_rest", "record_times", 4, 3, "state_start, state_mask, times[] of the states held (~2)"),
        (
            "sched_rest",
            "psi_group_change",
            5,
            2,
            "tasks[NR_ONCPU]++, test_state over tasks[] (iowait, running, memstall), state_mask",
        ),
        (
            "sched_rest",
            "psi_group_change",
            3,
            0,
            "cpu_curr(cpu)->in_memstall, group->poll_states, avgs_work's pending bit",
        ),
    ),
    # update_curr on one cfs_rq (kernel/sched/fair.c): a group entity's runtime and vruntime, the
    # queue's min_vruntime (CONFIG_CFS_BANDWIDTH's account_cfs_rq_runtime: a static key, off)
    "update_curr": (
        (
            "sched_rest",
            "update_curr",
            5,
            1,
            "cfs_rq->curr, cfs_rq->rq, rq->clock_task, curr->exec_start, ->my_q; exec_start = now",
        ),
        ("sched_rest", "update_curr", 4, 2, "sum_exec_runtime, load.weight and inv_weight (calc_delta_fair), vruntime"),
        (
            "sched_rest",
            "update_min_vruntime",
            6,
            1,
            "cfs_rq->curr, its on_rq and vruntime, rb_leftmost and its vruntime, min_vruntime",
        ),
    ),
    # enqueue_entity of a group entity into its parent cfs_rq (its level's first entity on this CPU),
    # beyond its PELT update and re-weight (pelt_update, cfs_group_update)
    "entity_enqueue": (
        (
            "sched_rest",
            "enqueue_entity",
            3,
            1,
            "update_curr's early exit (no current entity), se_update_runnable (my_q->h_nr_running, runnable_weight)",
        ),
        ("sched_rest", "account_entity_enqueue", 3, 3, "cfs_rq->load (weight, inv_weight), nr_running"),
        ("sched_rest", "place_entity", 3, 1, "min_vruntime, the sleeper credit, se->vruntime"),
        (
            "sched_rest",
            "__enqueue_entity",
            3,
            7,
            "rb-tree of one or two entities: descent, rb_link_node, colour, rb_leftmost; se->on_rq",
        ),
        (
            "sched_rest",
            "list_add_leaf_cfs_rq",
            4,
            3,
            "the first entity of the cfs_rq on this CPU: on_list, rq->tmp_alone_branch, the leaf list links",
        ),
        ("sched_rest", "enqueue_task_fair", 2, 2, "cfs_rq->h_nr_running, idle_h_nr_running"),
    ),
    # dequeue_entity of a group entity, its level's last on this CPU and its current one (its
    # update_curr is counted as update_curr; PELT and re-weight as above)
    "entity_dequeue": (
        ("sched_rest", "clear_buddies", 4, 0, "cfs_rq->last, next, skip against the entity"),
        ("sched_rest", "account_entity_dequeue", 3, 3, "cfs_rq->load (weight, inv_weight), nr_running"),
        ("sched_rest", "dequeue_entity", 0, 1, "se->on_rq"),
        ("sched_rest", "update_min_vruntime", 5, 1, "cfs_rq->curr, rb_leftmost, min_vruntime"),
        ("sched_rest", "dequeue_task_fair", 2, 2, "cfs_rq->h_nr_running, idle_h_nr_running"),
    ),
    # select_idle_sibling for a woken task whose CPU is busy (kernel/sched/fair.c, SIS_PROP of 5.15)
    "select_idle_sibling": (
        (
            "sched_rest",
            "select_idle_sibling",
            4,
            1,
            "current's flags and nr_cpus_allowed (per-CPU kthread test), p->recent_used_cpu (read, set to prev)",
        ),
        (
            "sched_rest",
            "select_idle_sibling",
            5,
            0,
            "recent_used_cpu: both CPUs' sd_llc_id, its rq->curr and rq->idle, p->cpus_ptr",
        ),
        ("sched_rest", "test_idle_cores", 2, 0, "sd_llc_shared, its has_idle_cores"),
        (
            "sched_rest",
            "select_idle_smt",
            5,
            0,
            "the SMT mask, p->cpus_ptr, the domain span, the sibling's rq->curr and rq->idle",
        ),
        ("sched_rest", "select_idle_cpu", 4, 1, "sd_llc, the per-CPU select_idle_mask = domain span & p->cpus_ptr"),
        (
            "sched_rest",
            "select_idle_cpu",
            5,
            0,
            "SIS_PROP: this rq's wake_stamp and wake_avg_idle, the LLC domain's avg_scan_cost and span_weight",
        ),
        (
            "sched_rest",
            "cpu_clock",
            8,
            0,
            "twice: sched_clock_cpu's per-CPU sched_clock_data and the TSC conversion (cyc2ns)",
        ),
        ("sched_rest", "select_idle_cpu", 1, 1, "update_avg of avg_scan_cost"),
    ),
    # update_cfs_group -> calc_group_shares, reweight_entity for one group entity (kernel/sched/fair.c)
    "cfs_group_update": (
        ("sched_rest", "update_cfs_group", 2, 0, "se->my_q, gcfs_rq->throttle_count"),
        (
            "sched_rest",
            "calc_group_shares",
            6,
            0,
            "cfs_rq->tg, tg->shares, cfs_rq->load.weight, avg.load_avg,"
            " tg->load_avg (the group's line shared by every CPU), tg_load_avg_contrib",
        ),
        (
            "sched_rest",
            "reweight_entity",
            3,
            2,
            "se->load.weight, se->on_rq, cfs_rq->curr; update_load_sub on cfs_rq->load",
        ),
        ("sched_rest", "dequeue_load_avg", 4, 2, "cfs_rq->avg.load_avg and load_sum less the entity's"),
        (
            "sched_rest",
            "reweight_entity",
            2,
            3,
            "update_load_set (weight, inv_weight), se->avg.load_avg from load_sum and period_contrib",
        ),
        ("sched_rest", "enqueue_load_avg", 4, 2, "cfs_rq->avg.load_avg and load_sum plus the entity's"),
        ("sched_rest", "reweight_entity", 1, 1, "update_load_add on cfs_rq->load"),
    ),
    # ttwu_queue_wakelist on the waker (kernel/sched/core.c, kernel/smp.c, arch/x86 x2APIC)
    "ttwu_queue": (
        ("sched_rest", "ttwu_queue_cond", 4, 0, "cpu_active mask, sd_llc_id of both CPUs, the target's rq"),
        (
            "sched_rest",
            "__ttwu_queue_wakelist",
            0,
            3,
            "p->sched_remote_wakeup, rq->ttwu_pending = 1, wake_entry's flags",
        ),
        (
            "other",
            "__smp_call_single_queue",
            2,
            2,
            "llist_add of p->wake_entry: its next, the target's call_single_queue head (cmpxchg)",
        ),
        (
            "other",
            "send_call_function_single_ipi",
            4,
            0,
            "set_nr_if_polling: rq->idle, its thread_info flags;"
            " x86_cpu_to_apicid, the APIC ops (the ICR write is an MSR write, not a store)",
        ),
    ),
    # the IPI's flush_smp_call_function_queue -> sched_ttwu_pending on the target (kernel/smp.c,
    # kernel/sched/core.c); the enqueue itself and its accounting are the wakeup's and PELT's / PSI's
    "ttwu_pending": (
        (
            "other",
            "flush_smp_call_function_queue",
            4,
            3,
            "llist_del_all (xchg) of call_single_queue, llist_reverse_order, the entry's flags and next",
        ),
        ("sched_rest", "sched_ttwu_pending", 3, 1, "this rq, the task's wake_cpu check, rq->ttwu_pending = 0"),
    ),
    # clockevents_program_event for the earliest timer (kernel/time/tick-oneshot.c, clockevents.c); the
    # TSC-deadline write (lapic_next_deadline) is an MSR write. When a started timer becomes the first:
    # hrtimer_reprogram's checks and cpu_base->expires_next, next_timer (at the interrupt's end,
    # hrtimer_interrupt's own stores of them are in hrtimer_expire)
    "clockevent_program": (
        (
            "hrtimer",
            "hrtimer_reprogram",
            4,
            2,
            "timer->base->cpu_base, expires_next, in_hrtirq, hang_detected; next_timer, expires_next",
        ),
        ("time_rest", "tick_program_event", 2, 0, "tick_cpu_device.evtdev, its state (oneshot-stopped)"),
        (
            "time_rest",
            "clockevents_program_event",
            6,
            1,
            "dev->next_event, state, features, max_delta_ns, min_delta_ns, mult, shift",
        ),
        ("ktime_get", "ktime_get", 8, 0, "delta to now: tk_core's seq (twice), tkr_mono"),
        ("other", "lapic_next_deadline", 1, 0, "->set_next_event"),
    ),
}


def _derived(rows: tuple[tuple[str, str, int, int, str], ...]) -> dict[str, float]:
    out: dict[str, float] = {}
    for cell, _function, loads, stores, _data in rows:
        out[cell] = out.get(cell, 0.0) + loads + stores
    return out


#: memory operations per execution of the derived actions, by cell (summed from :data:`DERIVATION`);
#: a platform's ``kernel.mem_ops_per_action`` may override them
DERIVED_OPS = {action: _derived(rows) for action, rows in DERIVATION.items()}

#: the actions whose operations ``stacksim calibrate --study memops`` fits
FITTED_ACTIONS = tuple(a for a in ACTION_CELLS if a not in DERIVED_OPS)

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
    kernel actions per second x their operations per action per cell (``per_action``, over the
    derived ones, :data:`DERIVED_OPS`; a sub-action of :data:`MEMOPS_AS` as its action)."""
    cell_rates = {c: 0.0 for c in CELLS}
    for source, cyc in cycles_per_s.items():
        for cell, ops in intensity.get(source, {}).items():
            cell_rates[cell] += ops * cyc
    table = {**DERIVED_OPS, **(per_action or {})}
    for action, n in (actions_per_s or {}).items():
        for cell, ops in table.get(MEMOPS_AS.get(action, action), {}).items():
            cell_rates[cell] += ops * n
    out = {k: 0.0 for k in KEYS}
    for cell, rate in cell_rates.items():
        for key in CELLS[cell]:
            out[key] += rate
    out["total"] = out["block/"] + out["drivers/nvme/host/"] + out["kernel/sched/"] + out["kernel/time/"] + out["other"]
    return out
