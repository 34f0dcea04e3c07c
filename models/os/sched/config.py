"""The fair class's parameters of the per-CPU scheduler (models.os.sched.runner), as configuration
data, and the tunables' scaling by the host's CPU count (:func:`tunable_factor`)."""

from __future__ import annotations

from typing import Final, Literal

from pydantic import Field

from simcore.config import Model

__all__ = ["FairTunables", "SchedConfig", "tunable_factor"]

#: the normalized tunables (the values for one CPU), ns: 6.1 kernel/sched/fair.c
#: normalized_sysctl_sched_latency 6 ms, _min_granularity 0.75 ms, _wakeup_granularity 1 ms (CFS,
#: to 6.5); EEVDF's normalized_sysctl_sched_base_slice: 0.75 ms from 6.6 (recalled: upstream 6.6,
#: the tree is not read here), 0.70 ms in 6.12 kernel/sched/fair.c as read (Debian's 6.12.118:
#: "sched: Reduce the default slice to avoid tasks getting an extra tick", from stable 6.12.31 by
#: Debian's changelog)
NORMALIZED_LATENCY_NS: Final = 6_000_000.0
NORMALIZED_MIN_GRANULARITY_NS: Final = 750_000.0
NORMALIZED_WAKEUP_GRANULARITY_NS: Final = 1_000_000.0
NORMALIZED_BASE_SLICE_NS: Final = 750_000.0
NORMALIZED_BASE_SLICE_612_NS: Final = 700_000.0
#: the first release with the 0.70 ms base slice (the model's 6.12 is the tree read)
BASE_SLICE_700US: Final = (6, 12)


def tunable_factor(ncpus: int, scaling: str = "log") -> int:
    """get_update_sysctl_factor (6.12 kernel/sched/fair.c, the same in 6.1): the tunables are
    the normalized values times 1 + ilog2(min(ncpus, 8)) (SCHED_TUNABLESCALING_LOG, the default),
    min(ncpus, 8) (linear) or 1 (none); ``ncpus``: the online logical CPUs."""
    cpus = max(1, min(ncpus, 8))
    if scaling == "none":
        return 1
    if scaling == "linear":
        return cpus
    return 1 + cpus.bit_length() - 1


class FairTunables:
    """The fair class's tunables in force on a host of ``ncpus`` CPUs running ``release``: a field
    set in :class:`SchedConfig` is taken as written (a value written to the sysctl), an unset one
    is the normalized value times :func:`tunable_factor`."""

    __slots__ = ("factor", "latency_ns", "min_granularity_ns", "wakeup_granularity_ns", "base_slice_ns")

    def __init__(self, sched: SchedConfig, ncpus: int, release: tuple[int, int]):
        f = self.factor = tunable_factor(ncpus, sched.tunable_scaling)

        def pick(value: float | None, normalized: float) -> float:
            return float(value) if value is not None else normalized * f

        self.latency_ns = pick(sched.sched_latency_ns, NORMALIZED_LATENCY_NS)
        self.min_granularity_ns = pick(sched.min_granularity_ns, NORMALIZED_MIN_GRANULARITY_NS)
        self.wakeup_granularity_ns = pick(sched.wakeup_granularity_ns, NORMALIZED_WAKEUP_GRANULARITY_NS)
        base = NORMALIZED_BASE_SLICE_612_NS if release >= BASE_SLICE_700US else NORMALIZED_BASE_SLICE_NS
        self.base_slice_ns = pick(sched.base_slice_ns, base)


class SchedConfig(Model):
    """The fair class's parameters: CFS's (kernels before 6.6) and EEVDF's (6.6+), each unset one
    Linux's default scaled by the host's CPU count (:class:`FairTunables`: x4 from 8 CPUs on)."""

    sched_latency_ns: float | None = Field(
        None, gt=0, description="CFS targeted preemption latency (unset: 6 ms x the tunable factor)"
    )
    min_granularity_ns: float | None = Field(
        None, gt=0, description="CFS minimum time slice (unset: 0.75 ms x the tunable factor)"
    )
    wakeup_granularity_ns: float | None = Field(
        None, ge=0, description="CFS wakeup preemption granularity (unset: 1 ms x the tunable factor)"
    )
    base_slice_ns: float | None = Field(
        None,
        gt=0,
        description="EEVDF's request (sysctl_sched_base_slice, 6.6+; unset: 0.75 ms, 0.70 ms from 6.12, x the"
        " tunable factor)",
    )
    tunable_scaling: Literal["log", "linear", "none"] = Field(
        "log",
        description="sysctl_sched_tunable_scaling: the unset tunables times 1 + log2(min(CPUs, 8)) (log,"
        " the kernel's default), min(CPUs, 8) (linear) or 1 (none)",
    )
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
