"""The kernel's scheduling costs: hard-IRQ entry, context switches, wake-ups, load and pressure
accounting, load balancing, kworkers, IPIs, hrtimers and the tick.

Each class is a group of :class:`~models.os.costs.tables.KernelCosts`' fields (a platform's
``kernel`` settings), each field's default sourced in its description; KernelCosts combines the
groups as its base classes in the order of its fields (tests/test_kernel_costs_order.py).
"""

from __future__ import annotations

from pydantic import Field

from simcore.config import Model


class SchedCosts(Model):
    """Hard-IRQ entry, the scheduler's switches and wake-ups, its load and pressure accounting per
    cgroup level, idle-CPU scans, migrations and load balancing, a kworker's work item."""

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


class IpiTimerCosts(Model):
    """IPIs, hrtimer programming and expiry, the scheduler tick."""

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
