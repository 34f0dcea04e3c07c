"""The CFS parameters of the per-CPU scheduler (models.os.sched.runner), as configuration data."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from simcore.config import Model

__all__ = ["SchedConfig"]


class SchedConfig(Model):
    """CFS parameters (Linux defaults scaled for 8 CPUs: factor 1 + log2(8) = 4)."""

    sched_latency_ns: float = Field(24_000_000, gt=0, description="targeted preemption latency (6 ms x 4)")
    min_granularity_ns: float = Field(3_000_000, gt=0, description="minimum time slice (0.75 ms x 4)")
    wakeup_granularity_ns: float = Field(4_000_000, ge=0, description="wakeup preemption granularity (1 ms x 4)")
    tick_hz: int = Field(
        250, gt=0, le=1000, description="scheduler tick rate (CONFIG_HZ; Kconfig.hz offers 100 to 1000)"
    )
    tick: bool = Field(
        True,
        description="periodic scheduler tick interrupts (NOHZ idle: stopped while a CPU idles"
        " longer than a tick); false leaves only the slice checks",
    )
    irq_time_accounting: bool = Field(
        False,
        description="CONFIG_IRQ_TIME_ACCOUNTING with irqtime enabled (kernel/sched/cputime.c"
        " irqtime_account_irq): hard-IRQ and softirq time is kept apart and the run queue's clock_task"
        " excludes it, so a task's sum_exec_runtime, vruntime and getrusage utime+stime leave out the"
        " interrupts that hit it. false (the Kconfig default, no IRQ time accounting): the interrupted"
        " task is charged, its ticks in IRQ context count as system time (account_system_time) and"
        " utime+stime add up to its whole time on the CPU, interrupts included. Default false: the"
        " CHEOPS'23 host's fio thread read usr+sys 100% at depth 128 with the devices' interrupts on"
        " its own CPU, which only the charged mode gives",
    )
    placement: Literal["cfs", "pinned"] = Field(
        "cfs",
        description="cfs: fio threads without a CPU list (or with a shared"
        " one) are placed by the scheduler at every wake-up and pulled by new-idle"
        " balancing (models.os.sched.placement, models.os.sched.balance); pinned: each"
        " stays on the CPU it was started on",
    )
    migration_cost_ns: float = Field(
        500_000,
        ge=0,
        description="sysctl_sched_migration_cost (0.5 ms): a task that ran"
        " more recently is cache-hot and not pulled by load balancing; a CPU whose average"
        " idle period is shorter skips new-idle balancing",
    )
    periodic_balance: bool = Field(
        True,
        description="periodic load balancing at the tick and nohz idle balancing"
        " (rebalance_domains, nohz_balancer_kick; models.os.sched.balance)",
    )
    balance_busy_factor: int = Field(
        16,
        ge=1,
        le=1024,
        description="sd->busy_factor: a busy CPU balances its domains this"
        " many times less often than the domain's interval (its CPU count in ms);"
        " kernel/sched/topology.c sd_init: 16 since Linux 5.12, 32 before",
    )
