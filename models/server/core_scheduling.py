"""The core-scheduling policy interface of the storage server.

A policy decides which logical cores run reactors, where lightweight threads live, what an idle
reactor does (poll, hybrid-sleep, sleep, interrupts) and at which frequency cores run. It acts only
through the server's mechanisms (:class:`models.server.target.Server`); the policy classes live in
:mod:`policies.core_scheduling`, registered on ``CORE_SCHEDULING``:

=================================== =============================================================
``server.reactors`` / ``threads``   reactors (sorted by logical CPU id; ``reactors[0]`` is the
                                    main core) and lightweight threads
``server.place(th, r)``             initial placement (in ``setup``)
``server.set_mode(r, POLL|HYBRID|IRQ, ...)``  make ``r`` an awake reactor with that idle behaviour
``server.move(th, r, delay_ns)``    move a thread through ``r``'s event queue (cost, wake-up)
``server.sleep(r, cstate, wake_ns)`` put an empty reactor to sleep
``server.request_freq(core, ghz)``  P-state request (transition latency applies)
``Ticker(server.engine, period, fn)`` periodic decisions; ``fn`` returns False to go dormant
``r.executed_busy(now)``, ``th.busy``, ``th.arrivals``  cumulative load counters
=================================== =============================================================

Optional hooks: ``on_arrival(thread, now)`` (every request reaching a thread's RX queue; keep it
cheap), ``on_install(thread, reactor)``; ``burst_decisions`` (list of times a burst was acted on)
and ``summary()`` feed the run's metrics. Parameters are a pydantic ``Params`` model (defaults from
sandman_polling_server.yaml); ``--set policy.NAME=VALUE`` sets them.

A new policy is one module::

    from policies.core_scheduling import CORE_SCHEDULING, CoreSchedulingPolicy
    from models.server.reactor import POLL

    @CORE_SCHEDULING.register("half-cores")
    class HalfCores(CoreSchedulingPolicy):
        def setup(self):
            s = self.server
            half = s.reactors[: len(s.reactors) // 2]
            for i, th in enumerate(s.threads):
                s.place(th, half[i % len(half)])
            for r in s.reactors:
                s.set_mode(r, POLL) if r.threads else s.sleep(r, s.c1)

then ``stacksim run --plugin half_cores.py --scenario server-stable --set server.policy=half-cores``.
"""

from __future__ import annotations

from pydantic import Field

from simcore.config import Model
from simcore.errors import ConfigError
from simcore.plugins import Parametrised


class CoreSchedulingPolicy(Parametrised):
    """Base class: SPDK-style defaults (reserved cores, ``server.threads`` threads, SPDK cycles)."""

    def __init__(self, server, params: Model):
        self.server = server
        self.p = params

    # --- what the server asks before wiring
    def reactor_cpus(self) -> list[int]:
        """Logical CPUs that run a reactor (default: the reserved ones)."""
        return list(self.server.reserved)

    def thread_count(self) -> int:
        return self.server.cfg.server.threads

    def item_cycles(self) -> tuple[float, float]:
        """Cycles per request on receive and on completion."""
        s = self.server.cfg.server
        return s.rx_cycles, s.cq_cycles

    def initial_freq_ghz(self) -> float | None:
        """Frequency every core starts at (None: the platform's cpufreq governor choice)."""
        return None

    # --- behaviour
    def setup(self) -> None:
        raise NotImplementedError

    def summary(self) -> dict:
        return {}


def round_robin(server, reactors=None) -> None:
    """Thread i on reactor i mod n (SPDK's initial poll-group placement)."""
    rs = reactors or server.reactors
    for i, th in enumerate(server.threads):
        server.place(th, rs[i % len(rs)])


def scheduler_overhead(server, period_ns: float) -> None:
    """Charge a periodic scheduler: every awake reactor fills its statistics (``stats_fill_ns``) and
    the main core runs the algorithm (``scheduler_run_ns``) once per period. Modelled as a slow-down
    of the reactors' work and loops by period / (period - overhead)."""
    sc = server.cfg.server
    for r in server.reactors:
        over = sc.stats_fill_ns + (sc.scheduler_run_ns if r is server.reactors[0] else 0.0)
        if over >= period_ns:
            raise ConfigError(f"scheduling period {period_ns:g} ns is shorter than its own overhead {over:g} ns")
        r.infl = period_ns / (period_ns - over)


def dpdk_freq_table(ccfg) -> list[float]:
    """The frequencies the DPDK power library steps through, GHz, highest first (its index 0).

    DPDK builds the table from the cpufreq driver's CPPC values (``power_cppc_cpufreq.c``
    ``power_get_available_freqs``, DPDK 22.11; the ``amd-pstate`` driver of 23.11 builds it the
    same way): the turbo entry (``scaling_max_freq``) when turbo is on, then the nominal (base)
    frequency and every ``BUS_FREQ`` (100 MHz, the platform's ``pstate_step_ghz``) below it down
    to ``scaling_min_freq``, in kHz integer arithmetic (the division truncates, so the lowest
    entry can sit above the minimum: 0.45 GHz for a 2.75 GHz base and a 0.4 GHz minimum).
    ``rte_power_freq_up``/``down`` move one entry; ``freq_max``/``min`` go to either end."""
    base = round(ccfg.base_freq_ghz * 1e6)
    lo = round(ccfg.min_freq_ghz * 1e6)
    step = round(ccfg.pstate_step_ghz * 1e6)
    table = [(base - k * step) / 1e6 for k in range((base - lo) // step + 1)]
    if ccfg.turbo and ccfg.max_freq_ghz > ccfg.base_freq_ghz:
        table.insert(0, ccfg.top_freq_ghz)
    return table


class DpdkFreqWrites(Model):
    """What one frequency change costs a DPDK-governed server (the power library's
    ``rte_power_set_freq`` and its driver), shared by the policies that make them."""

    freq_request_ns: float = Field(
        3000.0,
        ge=0,
        description="one frequency request from user space: write(2) to"
        " scaling_setspeed, the userspace governor's store, the driver's P-state"
        " request (estimate: a system call plus an MSR/CPPC write), ns",
    )
    target_ipi_cycles: float = Field(
        1100.0,
        ge=0,
        description="the request register's write on the target CPU, there (amd-pstate's"
        " wrmsrl_on_cpu: a function-call IPI, ~800 cycles as kernel.ipi_cycles, plus the WRMSR;"
        " estimate), cycles",
    )


def reactors_by_core(server) -> dict:
    """Physical core index -> its reactors (one, or two SMT siblings), in reactor order."""
    by_core: dict = {}
    for r in server.reactors:
        by_core.setdefault(r.pcore.index, []).append(r)
    return by_core


def request_core_freqs(server, by_core: dict, changed, ghz_of) -> int:
    """Ask each physical core of the reactors ``changed`` (indices) for the highest of its
    reactors' ``ghz_of(reactor)`` (the power library's SMT rule: a core runs at its faster
    thread's request); returns how many requests changed a core's target."""
    requests = 0
    for c in sorted({server.reactors[i].pcore.index for i in changed}):
        if server.request_freq(c, max(ghz_of(r) for r in by_core[c])):
            requests += 1
    return requests


def slow_reactors(server, span_ns: float, main_ns: float, each_ns: float, changed, ipi_cycles: float) -> None:
    """A policy's periodic work as its reactors' slow-down over ``span_ns``: ``main_ns`` on the
    main reactor, ``each_ns`` on every other, and the request register's write (``ipi_cycles``)
    on each reactor in ``changed`` (indices); at most 90% of the span."""
    rs = server.reactors
    hit = set(changed)
    for r in rs:
        over = main_ns if r is rs[0] else each_ns
        if r.idx in hit:
            over += ipi_cycles / r.pcore.freq_ghz
        r.infl = span_ns / (span_ns - min(over, 0.9 * span_ns))
