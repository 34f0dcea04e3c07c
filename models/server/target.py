"""The storage-server runtime: reactors, lightweight threads, client requests and power states.

One reactor per reserved logical core runs a ring of lightweight threads; each thread owns some
client connections (network RX queues) and one NVMe queue pair per SSD, and polls them once per
reactor loop. A reactor is modelled **analytically** rather than loop by loop:

- Work is committed FIFO. An item (a request received, an NVMe completion) that becomes visible at
  ``t`` on an idle polling reactor is noticed at the next loop boundary ``t0 + k L`` (``t0``: when
  the reactor became idle, ``L``: loop length = reactor + per-thread poll cycles / frequency); on a
  busy reactor it starts when the committed work ends. Its duration is its cycles / frequency,
  x ``smt_slowdown`` while the SMT sibling is in C0, x the scheduler's overhead factor.
- Idle polling is never simulated: it is the time between committed work, by interval arithmetic.
- A request costs three events: arrival at the target (receive processing is committed at once),
  the end of receive processing (NVMe doorbell, :meth:`NvmeDevice.submit`), the CQE post (the
  device's event; completion processing is committed and the client-side latency recorded at
  once). Interrupt-driven and hybrid-sleeping reactors add one event per busy period (idle entry);
  a write larger than the in-capsule size adds one (its data pulled by an RDMA READ).
- Every request carries its own direction and size (``FabricsCommand.op``, ``nbytes``): fixed per run
  for the stable and burst workloads, the trace's for trace replay, where the run ends when every
  trace IO of the window has completed (:attr:`Server.drained`).

Power goes through the foundation's CPU model: every change of a logical CPU's state is a call
to :meth:`LogicalCpu.set_busy` / :meth:`set_idle` at the simulated time it happens (an engine
event when it lies in the future), frequency changes go through
:meth:`PhysicalCore.request_freq`. The only exception is a hybrid-polling reactor's sleep stretch:
the Package sees the sleep state for the whole stretch, and its short wake-and-poll windows
(C0 for a few % of the time) are added as an energy correction computed with the same power
functions (``CpuConfig.busy_power_w``, the state's ``power_w``).

Policies (``policies/core_scheduling``) decide placement, sleep, wake-up and frequency through
:meth:`Server.place`, :meth:`Server.move`, :meth:`Server.sleep`, :meth:`Server.request_freq` and
:class:`Ticker` (periodic decisions that go dormant while nothing can change).

:class:`Server` is assembled here (the CPU package, SSDs, reactors, threads, accounts, the client);
its behaviour is in its base classes, one module each: :mod:`models.server.requests` (the request
path and saturated reactors), :mod:`models.server.timing` (when work starts and ends on a reactor,
busy periods and idle behaviour), :mod:`models.server.mechanisms` (the mechanisms for policies),
:mod:`models.server.power_states` (power states, the timeline's state spans, energy, snapshots).
The reactor's and thread's state, the command and the state constants are in
:mod:`models.server.reactor`.
"""

from __future__ import annotations

from array import array
from functools import partial

from models.cpu.core import Package
from models.cpu.cpuidle import CpuidleGovernor
from models.server.client import ClosedLoopClient
from models.server.core_scheduling import CoreSchedulingPolicy
from models.server.mechanisms import PolicyMechanisms
from models.server.power_states import STATE_TID, PowerStates
from models.server.reactor import (  # noqa: F401  (the reactor's names, importable from here too)
    ASLEEP,
    AWAKE,
    HYBRID,
    IRQ,
    LOOP_EPS_NS,
    POLL,
    WAKING,
    FabricsCommand,
    LThread,
    Reactor,
    Ticker,
)
from models.server.requests import NET_BASE_BYTES, RequestPath
from models.server.timing import ReactorTiming
from models.ssd.device import NvmeDevice
from simcore.config import Model
from simcore.engine import Engine
from simcore.errors import ConfigError
from simcore.rng import BatchedDraws, RngStreams

__all__ = ["Server", "STATE_TID", "NET_BASE_BYTES"]


class Server(RequestPath, PolicyMechanisms, ReactorTiming, PowerStates):
    """One storage server run: wires CPU package, SSDs, reactors, threads, client and policy."""

    def __init__(
        self,
        cfg,
        policy_cls: type[CoreSchedulingPolicy],
        params: Model,
        idle_governor_cls: type[CpuidleGovernor],
        client,
        tracer=None,
    ):
        """``cfg``: the run configuration (:class:`scenarios.config.server.ServerRunConfig`: platform,
        ``server``, ``workload``, ``seed``); ``policy_cls`` with its validated ``params`` and the
        cpuidle governor class come resolved from the assembly (:func:`scenarios.run.assembly.build_server`);
        ``client``: the arrival batches (an iterator), or for a trace workload the trace feed (its
        ``batches``, counters and ``describe()``)."""
        self.cfg = cfg
        self.engine = Engine(tracer)
        #: optional timeline (simcore.tracing.ChromeTracer); every use is behind ``is not None``
        self.tracer = tracer
        self.rng = RngStreams(cfg.seed)
        self._setup_cpus(policy_cls, params, idle_governor_cls)
        # SSDs
        plat = cfg.platform
        self.devices = [
            NvmeDevice(plat.ssd, self.engine, self.rng.stream(f"ssd{i}.service"), i) for i in range(plat.ssd_count)
        ]
        self._setup_reactors()
        self._setup_threads()
        self._setup_accounts()
        # every logical CPU starts idle in the OS idle state; the policy sets its reactors
        for cpu in self.cpus:
            self._apply(cpu.id, -1 - self.os_idle)
        self.policy.setup()
        self._setup_client(client)

    def _setup_cpus(self, policy_cls, params, idle_governor_cls) -> None:
        """The reserved cores, the policy (it decides which CPUs are reactors, how many threads, the
        starting clock), the CPU package and the per-state constants of the reactors."""
        cfg = self.cfg
        scfg = cfg.server
        ccfg = cfg.platform.cpu
        half = scfg.cores // 2 if ccfg.smt else scfg.cores
        if half > ccfg.total_cores:
            raise ConfigError(f"server.cores={scfg.cores}: the platform has {ccfg.logical_cpus} logical cores")
        n = ccfg.total_cores
        self.reserved = sorted(list(range(half)) + ([i + n for i in range(half)] if ccfg.smt else []))
        self.policy = policy_cls(self, params)
        #: the cpuidle governor class (``cpu.cpuidle_governor``) of reactors that idle in C-states
        #: between interrupts, and the tick period it assumes (the server models no tick)
        self.idle_governor_cls = idle_governor_cls
        self.tick_period_ns = 1e9 / cfg.platform.sched.tick_hz
        # the CPU package (every logical CPU is put in a state by __init__)
        self.pkg = Package(ccfg, self.engine, self.policy.initial_freq_ghz())
        self.ccfg = ccfg
        self.cpus = self.pkg.cpus
        names = [s.name for s in ccfg.cstates]
        self.cstate_index = {n: i for i, n in enumerate(names)}
        #: the state of the OS idle loop: the deepest one cpuidle may pick (``cpu.cpuidle_disable``)
        self.os_idle = max((i for i, n in enumerate(names) if n not in ccfg.cpuidle_disable), default=0)
        self.c1 = next(i for i, s in enumerate(ccfg.cstates) if not s.polling)
        self.exit_ns = [s.wake_latency_ns for s in ccfg.cstates]
        self.act_poll = ccfg.activity["poll"]
        self.act_kernel = ccfg.activity["kernel"]
        self.act_proc = self.act_poll if scfg.processing_activity is None else scfg.processing_activity
        self.smt = ccfg.smt_slowdown
        self.move_ns = scfg.thread_move_ns
        self.h_hi = scfg.commit_horizon_us * 1e3
        self.h_lo = self.h_hi / 3.0
        self.batch = scfg.poll_batch

    def _setup_reactors(self) -> None:
        """One reactor per CPU the policy names, with its SMT sibling's reactor."""
        cpus = sorted(self.policy.reactor_cpus())
        rx, cq = self.policy.item_cycles()
        base_loop = self.cfg.server.reactor_loop_cycles
        self.reactors = [Reactor(i, self.cpus[c], rx, cq, base_loop) for i, c in enumerate(cpus)]
        self.reactor_of_cpu = {r.cpu_id: r for r in self.reactors}
        for r in self.reactors:
            sib = self.pkg.sibling_of(r.cpu)
            r.sib = self.reactor_of_cpu.get(sib.id) if sib is not None else None
            r.act = self.act_proc
        by_core: dict = {}
        for r in self.reactors:
            by_core.setdefault(r.pcore.index, []).append(r)
        for rs in by_core.values():  # a P-state change stops the core's clock (ReactorTiming.pstate_stalled)
            rs[0].pcore.listeners.append(partial(self.pstate_stalled, rs))

    def _setup_threads(self) -> None:
        """Lightweight threads and their NVMe queue pairs (one per SSD); connections round-robin."""
        scfg = self.cfg.server
        poll_cycles = scfg.thread_poll_cycles + scfg.qpair_poll_cycles * len(self.devices)
        nthreads = self.policy.thread_count()
        self.threads = [LThread(i, poll_cycles) for i in range(nthreads)]
        for th in self.threads:
            for d in self.devices:
                try:
                    qp = d.add_queue_pair(polled=True, depth=d.cfg.max_queue_depth)
                except ValueError as err:
                    raise ConfigError(f"{nthreads} threads need {nthreads} queue pairs per SSD: {err}") from None
                qp.on_post = self._on_cqe
                qp.posted_times = None  # no inter-arrival statistics on a server
                th.qps.append(qp)
        self.conn_thread = [self.threads[c % nthreads] for c in range(self.cfg.workload.connections)]

    def _setup_accounts(self) -> None:
        """C0 and energy accounts, the timeline's state, the network constants and the counters."""
        wl = self.cfg.workload
        # C0 time (for "others" power and active-core metrics): the package integrates it
        # (Package.c0_acc: physical C0 ns, physical C0 GHz*ns, logical C0 ns, logical GHz*ns); hybrid
        # sleep stretches add their wake/poll windows to it and their energy to corr_j
        self.corr_j = 0.0
        if self.tracer is not None:
            self._tr_state: list = [None] * len(self.cpus)  # (since ns, label) of each CPU's power state
            self._tr_submit_cpu: dict[int, int] = {}  # request id -> CPU that rang its doorbell
        # data on the network: reads carry bytes beyond NET_BASE_BYTES in the response, writes over
        # the in-capsule size are pulled by an RDMA READ (round trip + transfer) before the submit
        self.ns_per_byte = 8.0 / wl.network_gbps
        self.rtt_ns = wl.network_rtt_us * 1e3
        self.in_capsule = self.cfg.server.in_capsule_bytes
        self.half_rtt = wl.network_rtt_us * 500.0
        self.resp_ns = self.half_rtt + (self._resp_extra(wl.op, wl.bs) if wl.kind != "trace" else 0.0)
        # the client's random block addresses (its own stream: the arrivals do not depend on it),
        # uniform over 2^30 blocks of the request size
        self._offset_draw = BatchedDraws(self.rng.stream("client.offsets"), lambda g, n: g.integers(0, 2**30, n)).next
        self.rec_arr = array("d")
        self.rec_done = array("d")
        #: the completed requests themselves, when the run keeps per-IO records (:meth:`keep_records`)
        self.records: list[FabricsCommand] | None = None
        self.n_offered = 0
        self.migrations = 0
        self.wake_log: list[tuple[float, float, float]] = []  # (post, installed, cstate exit ns)
        self.on_arrival = getattr(self.policy, "on_arrival", None)
        self.track_touched = False
        # threads that committed work (insertion-ordered: iteration order never depends on object
        # addresses, so a run is the same in any process); policies iterate and clear() it
        self.touched: dict = {}
        self.op = wl.op
        self.bs = wl.bs
        self.trace = None  # the trace feed (trace replay)

    def _setup_client(self, client) -> None:
        """The client's arrivals (a trace feed for trace replay); the first one is scheduled. A
        closed-loop client (``workload.client: closed``) sends its first commands instead."""
        wl = self.cfg.workload
        self.arrivals_done = False
        self.client = None
        if wl.kind != "trace" and wl.client == "closed":
            if wl.op == "write" and wl.bs > self.in_capsule:
                self._submit = self._submit_pull
            phases = wl.phases()
            self.client = ClosedLoopClient(
                self.engine,
                self._arrive_closed,
                connections=wl.connections,
                iodepth=wl.iodepth,
                think_ns=wl.think_time_us * 1e3,
                half_rtt_ns=self.half_rtt,
                phases=phases,
                end_ns=wl.end_ns,
                ssds=wl.target_ssds(len(self.devices)),
            )
            self._at = []
            self.client.start()
            return
        if wl.kind == "trace":
            self._setup_trace(client)
        else:
            self._agen = client
            if wl.op == "write" and wl.bs > self.in_capsule:
                self._submit = self._submit_pull
        self._at: list = []
        self._ac: list = []
        self._as: list = []
        self._ai = -1
        self._next_arrival()

    def _setup_trace(self, feed) -> None:
        """Trace replay: stream the trace's arrivals, record each request's id, op and size, and
        end the run (:attr:`drained`) when the last one completes."""
        self.trace = feed
        self._agen = feed.batches
        self._aop: list = []
        self._anb: list = []
        self._aoff: list = []
        self.rec_id = array("q")
        self.rec_nb = array("q")
        self.rec_wr = array("b")
        self.n_done = 0
        self.drained = self.engine.env.event()
        self._arrive = self._arrive_trace
        self._complete = self._complete_trace
        self._submit = self._submit_pull
