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
"""

from __future__ import annotations

from array import array
from math import ceil

from models.cpu.core import Package
from models.cpu.cpuidle import NO_TIMER_NS, CpuidleGovernor
from models.cpu.power_limit import limit_reading
from models.server.client import ClosedLoopClient
from models.server.core_scheduling import CoreSchedulingPolicy
from models.server.reactor import (  # noqa: F401
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
from models.ssd.device import NvmeDevice
from models.ssd.energy import ssd_reading
from simcore.config import Model
from simcore.engine import Engine
from simcore.errors import ConfigError
from simcore.rng import BatchedDraws, RngStreams
from simcore.tracing import CPU_PID

#: timeline track of logical CPU i's power state: thread STATE_TID + i of the "CPUs" process
STATE_TID = 10_000
#: the workload's ``network_rtt_us`` is the round trip of a request with this much data; more adds
#: transfer time
NET_BASE_BYTES = 4096


class Server:
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

    def _resp_extra(self, op: str, nbytes: int) -> float:
        """Network time of a response's data beyond the calibrated 4 KiB (reads only)."""
        return (nbytes - NET_BASE_BYTES) * self.ns_per_byte if op == "read" and nbytes > NET_BASE_BYTES else 0.0

    # ---------------------------------------------------------------- power states
    def _apply(self, cpu_id: int, value: float) -> None:
        """Logical CPU ``cpu_id`` changes state now: ``value >= 0`` busy at that activity, else idle
        in C-state ``-1 - value``."""
        now = self.engine.now
        cpu = self.cpus[cpu_id]
        if value >= 0:
            cpu.set_busy(now, value)
        else:
            cpu.set_idle(now, -1 - int(value))
        if self.tracer is not None:
            self._trace_state(cpu_id, now, value)

    def _state_label(self, value: float) -> str:
        if value < 0:
            return self.ccfg.cstates[-1 - int(value)].name
        if value == self.act_poll:
            return "C0 polling"
        return "C0 kernel" if value == self.act_kernel else "C0 processing"

    def _trace_state(self, cpu_id: int, now: float, value) -> None:
        """Close ``cpu_id``'s current power-state span at ``now``; open the next (``value`` None: none)."""
        label = None if value is None else self._state_label(value)
        prev = self._tr_state[cpu_id]
        if prev is not None:
            if prev[1] == label:
                return  # the same state goes on
            if now > prev[0] and self.tracer.wants(prev[0], now):
                self.tracer.name_track(CPU_PID, STATE_TID + cpu_id, f"cpu{cpu_id} power state")
                self.tracer.span(CPU_PID, STATE_TID + cpu_id, prev[1], prev[0], now - prev[0], "power state")
        self._tr_state[cpu_id] = None if label is None else (now, label)

    def trace_finish(self, now: float) -> None:
        """Close the open power-state spans of the timeline at ``now`` (the end of the run)."""
        if self.tracer is not None:
            for i in range(len(self.cpus)):
                self._trace_state(i, now, None)

    def set_state(self, cpu_id: int, t: float, value: float) -> None:
        """:meth:`_apply` at time ``t`` (>= now): directly, or as an engine event."""
        if t <= self.engine.now:
            self._apply(cpu_id, value)
        else:
            self.engine.call_at(t, self._apply, cpu_id, value)

    def settle(self, now: float) -> None:
        """Integrate every energy and C0 account up to ``now``."""
        self.pkg.settle(now)
        self.pkg.settle_c0(now)

    def cpu_energy_j(self) -> float:
        return self.pkg.energy_j() + self.corr_j

    def _hyb_correction(self, r: Reactor, c0_ns: float) -> None:
        """Energy of ``c0_ns`` of wake/poll windows inside a hybrid sleep stretch (the Package holds
        the sleep state for the whole stretch)."""
        if c0_ns <= 0:
            return
        core = r.pcore
        cfg = self.ccfg
        f = core.freq_ghz
        a = self.act_poll
        pkg = self.pkg
        if core.c0n:  # the sibling is running: only the second thread's share
            dw = cfg.busy_power_w(f, a * (1.0 + cfg.smt_second_thread_activity)) - cfg.busy_power_w(f, a)
        else:
            dw = cfg.busy_power_w(f, a) - cfg.cstates[r.cpu.cstate].power_w
            pkg.c0_core_ns += c0_ns
            pkg.c0_core_ghz_ns += c0_ns * f
        pkg.c0_cpu_ns += c0_ns
        pkg.c0_cpu_ghz_ns += c0_ns * f
        self.corr_j += dw * c0_ns * 1e-9

    # ---------------------------------------------------------------- reactor timing
    def loop_ns(self, r: Reactor) -> float:
        """Length of one empty loop iteration of ``r`` now."""
        return r.loop_cycles * r.infl * (self.smt if self._sib_c0(r, self.engine.now) else 1.0) / r.pcore.freq_ghz

    def event_ring_time(self, r: Reactor, t: float) -> float:
        """When polling reactor ``r`` runs an event posted to its ring at ``t``: SPDK's reactor loop
        drains the event ring at the top of every iteration (``_reactor_run``:
        ``event_queue_run_batch`` before the threads' pollers). An idle reactor reaches it at its
        next empty-loop boundary; a busy one after its current iteration, at most one poller batch
        of each of its threads (``server.poll_batch`` requests) later. Other modes: at once."""
        if r.state != AWAKE or r.idle_mode != POLL:
            return t
        if r.free_at > t:
            return min(r.free_at, t + self.batch * self.item_ns(r) * max(len(r.threads), 1))
        s = self._loop_boundary(r, t)
        return s if s > t else t

    def item_ns(self, r: Reactor) -> float:
        """A saturated reactor's time per request (receive and completion averaged), ns."""
        return (r.rx_cycles + r.cq_cycles) / 2.0 * r.infl * self.smt / r.pcore.freq_ghz

    def _loop_boundary(self, r: Reactor, t: float) -> float:
        """The first empty-loop boundary of idle polling reactor ``r`` at or after ``t`` (its loops
        run back to back from the end of its last work, or from its mode's start)."""
        t0 = r.t_mode if r.t_mode > r.free_at else r.free_at
        if t <= t0:
            return t0
        L = r.loop_cycles * r.infl * (self.smt if self._sib_c0(r, t) else 1.0) / r.pcore.freq_ghz
        return t0 + ceil((t - t0) / L - LOOP_EPS_NS) * L if L > 0 else t

    @staticmethod
    def _sib_c0(r: Reactor, t: float) -> bool:
        sib = r.sib
        return sib is not None and sib.state == AWAKE and (sib.idle_mode == POLL or sib.free_at > t)

    def _commit(self, r: Reactor, th: LThread, t: float, cycles: float, what: str) -> float:
        """Commit ``cycles`` of thread ``th``'s work (``what``: for the timeline), visible at ``t``
        (= now), to ``r``; returns its end."""
        fa = r.free_at
        if fa > t:
            s = fa
        else:
            s = self._idle_start(r, t)
            r.period_start = s
        f = r.pcore.freq_ghz
        sib = r.sib
        if sib is not None and sib.state == AWAKE and (sib.idle_mode == POLL or sib.free_at > s):
            e = s + cycles * r.infl * self.smt / f
        else:
            e = s + cycles * r.infl / f
        d = e - s
        r.free_at = e
        r.busy += d
        th.busy += d
        if self.tracer is not None:
            self.tracer.span(CPU_PID, r.cpu_id, f"thread {th.idx}: {what}", s, d, "work")
        if self.track_touched:
            self.touched[th] = None
        if fa <= t and r.period_ev is None and (r.idle_mode != POLL or self.act_proc != self.act_poll):
            self._arm_period_end(r)
        return e

    def _idle_start(self, r: Reactor, t: float) -> float:
        """When an idle awake reactor starts an item visible at ``t`` (and its power-state change)."""
        mode = r.idle_mode
        if mode == POLL:
            s = self._loop_boundary(r, t)
            if self.act_proc != self.act_poll:
                self.set_state(r.cpu_id, s, self.act_proc)
            return s
        if mode == IRQ:
            if not r.idle:  # still in the idle-entry path: the interrupt is taken at once
                return t
            r.idle = False
            r.idle_gov.reflect(t - r.idle_from)
            r.wakes += 1
            self._apply(r.cpu_id, self.act_kernel)  # C0 from the interrupt (the exit latency runs in C0)
            return t + self.exit_ns[r.idle_state] + r.exit_cycles / r.pcore.freq_ghz
        # HYBRID
        if not r.in_stretch:  # in the first poll after the last work
            t1 = (r.t_mode if r.t_mode > r.free_at else r.free_at) + self.loop_ns(r)
            return t1 if t1 > t else t
        t0, L, P = r.st_t0, r.st_L, r.st_P
        k = ceil((t - t0 - L) / P - LOOP_EPS_NS)
        if k < 1:
            k = 1
        s = t0 + L + k * P
        resume = s - L - r.st_W
        c0 = (k - 1) * (r.st_W + L + r.st_E)
        if resume < t:
            c0 += t - resume
            resume = t
        self._hyb_correction(r, c0)
        r.in_stretch = False
        r.wakes += 1
        self.set_state(r.cpu_id, resume, self.act_poll)
        return s

    def _arm_period_end(self, r: Reactor) -> None:
        mode = r.idle_mode
        lag = r.entry_ns if mode == IRQ else (self.loop_ns(r) if mode == HYBRID else 0.0)
        r.period_ev = self.engine.call_at(r.free_at + lag, self._period_end, r)

    def _period_end(self, r: Reactor) -> None:
        """A busy period may have ended: enter the reactor's idle behaviour (or re-arm)."""
        now = self.engine.now
        mode = r.idle_mode
        lag = r.entry_ns if mode == IRQ else (self.loop_ns(r) if mode == HYBRID else 0.0)
        if r.free_at + lag > now + LOOP_EPS_NS:
            r.period_ev = self.engine.call_at(r.free_at + lag, self._period_end, r)
            return
        r.period_ev = None
        if r.state != AWAKE:
            return
        if mode == POLL:
            self._apply(r.cpu_id, self.act_poll)
        elif mode == IRQ:
            st = r.idle_gov.select(NO_TIMER_NS, 0)
            r.idle = True
            r.idle_state = st
            r.idle_from = now
            self._apply(r.cpu_id, -1 - st)
        else:
            self._begin_stretch(r, now, lag)

    def _begin_stretch(self, r: Reactor, now: float, L: float) -> None:
        """A hybrid-polling reactor found nothing in a poll: sleep, wake, poll, ... until work."""
        f = r.pcore.freq_ghz
        sleep = r.hyb_sleep(r)
        k = self.cfg.platform.kernel
        if r.hyb_kind == "kernel":  # nanosleep: syscall + hrtimer + switch out / timer IRQ + wakeup + switch in
            E = k.nanosleep_entry_cycles() / f
            W = k.nanosleep_wakeup_cycles() / f
        else:  # user-level timed wait (MWAITX): no kernel path
            E = W = 0.0
        st = r.sleep_cstate
        X = self.exit_ns[st]
        r.in_stretch = True
        r.st_t0 = now - L
        r.st_L = L
        r.st_E = E
        r.st_W = W
        r.st_P = L + E + sleep + X + W
        self._hyb_correction(r, E)
        self._apply(r.cpu_id, -1 - st)

    # ---------------------------------------------------------------- mechanisms for policies
    def place(self, th: LThread, r: Reactor) -> None:
        """Initial placement (at setup)."""
        if th.reactor is not None:
            th.reactor.threads.remove(th)
            th.reactor.loop_cycles -= th.poll_cycles
        th.reactor = r
        r.threads.append(th)
        r.loop_cycles += th.poll_cycles

    def set_mode(
        self, r: Reactor, idle_mode: int, hyb_kind: str = "kernel", hyb_sleep=None, cstate: int | None = None
    ) -> None:
        """Make ``r`` an awake reactor with the given idle behaviour (at setup, or when it has no work)."""
        r.idle_mode = idle_mode
        r.hyb_kind = hyb_kind
        if hyb_sleep is not None:
            r.hyb_sleep = hyb_sleep
        if cstate is not None:
            r.sleep_cstate = cstate
        r.state = AWAKE
        now = self.engine.now
        r.t_mode = now
        if idle_mode == IRQ:
            st = r.idle_gov.select(NO_TIMER_NS, 0)
            r.idle, r.idle_state, r.idle_from = True, st, now
            self._apply(r.cpu_id, -1 - st)
        else:
            self._apply(r.cpu_id, self.act_poll)

    def move(self, th: LThread, dest: Reactor, delay_ns: float = 0.0) -> bool:
        """Move ``th`` to ``dest`` through dest's event queue: it leaves its ring now, is posted after
        ``delay_ns`` + the move cost, and is installed when ``dest`` next checks its events (next loop
        boundary; after the wake-up if ``dest`` sleeps). Work arriving meanwhile waits for it."""
        src = th.reactor
        if src is dest or src is None:
            return False
        now = self.engine.now
        src.threads.remove(th)
        src.loop_cycles -= th.poll_cycles
        if th.queued:
            src.backlog.remove(th)
            th.queued = False
        if src.free_at <= now:
            src.t_mode = now
        th.reactor = None
        th.moves += 1
        if self.tracer is not None:
            self.tracer.instant(CPU_PID, src.cpu_id, f"thread {th.idx} -> cpu{dest.cpu_id}", now)
        t_post = now + delay_ns + self.move_ns
        t_inst = self._install_time(dest, t_post)
        dest.incoming += 1
        self.engine.call_at(t_inst, self._install, th, dest)
        self.migrations += 1
        return True

    def _install_time(self, r: Reactor, t: float) -> float:
        st = r.state
        if st == ASLEEP:
            if r.sleep_ev is not None:
                r.sleep_ev.cancel()
                r.sleep_ev = None
            x = self.exit_ns[r.sleep_cstate]
            r.state = WAKING
            r.wake_end = t + (r.wake_ns if r.wake_ns > x else x)
            r.wakes += 1
            self.set_state(r.cpu_id, t + x, self.act_poll)
            self.wake_log.append((t, r.wake_end, x))
            return r.wake_end
        if st == WAKING:
            return r.wake_end if r.wake_end > t else t
        if r.sleep_ev is not None:  # about to sleep: stays awake
            r.sleep_ev.cancel()
            r.sleep_ev = None
        if r.free_at > t:
            return r.free_at
        if r.idle_mode == HYBRID:
            if not r.in_stretch:
                t1 = (r.t_mode if r.t_mode > r.free_at else r.free_at) + self.loop_ns(r)
                return t1 if t1 > t else t
            k = ceil((t - r.st_t0 - r.st_L) / r.st_P - LOOP_EPS_NS)
            return r.st_t0 + r.st_L + max(k, 1) * r.st_P
        t0 = r.t_mode if r.t_mode > r.free_at else r.free_at
        L = self.loop_ns(r)
        if t <= t0 or L <= 0:
            return t0 if t0 > t else t
        return t0 + ceil((t - t0) / L - LOOP_EPS_NS) * L

    def _install(self, th: LThread, r: Reactor) -> None:
        now = self.engine.now
        r.incoming -= 1
        if r.state == WAKING:
            r.state = AWAKE
            r.t_mode = now
        elif r.free_at <= now and not r.in_stretch:
            r.t_mode = now
        th.reactor = r
        r.threads.append(th)
        r.loop_cycles += th.poll_cycles
        limit = now + self.h_hi
        while (th.pending or th.pending_cq) and r.free_at < limit:
            self._take_batch(r, th, now, limit, self.batch)
        if th.pending or th.pending_cq:
            self._backlog(r, th, now)
        hook = getattr(self.policy, "on_install", None)
        if hook is not None:
            hook(th, r)

    def sleep(self, r: Reactor, cstate: int, wake_ns: float = 0.0) -> bool:
        """Put ``r`` (no threads) to sleep in ``cstate`` once its committed work is done; waking it
        will take ``max(wake_ns, exit latency)``."""
        if r.threads or r.incoming:
            return False
        r.sleep_cstate = cstate
        r.wake_ns = wake_ns
        if r.state != AWAKE or r.sleep_ev is not None:
            return False
        now = self.engine.now
        if r.free_at > now:
            r.sleep_ev = self.engine.call_at(r.free_at, self._do_sleep, r)
        else:
            self._do_sleep(r)
        return True

    def _do_sleep(self, r: Reactor) -> None:
        r.sleep_ev = None
        if r.threads or r.incoming or r.state != AWAKE:
            return
        now = self.engine.now
        if r.free_at > now:
            r.sleep_ev = self.engine.call_at(r.free_at, self._do_sleep, r)
            return
        r.state = ASLEEP
        r.in_stretch = False
        r.idle = False
        self._apply(r.cpu_id, -1 - r.sleep_cstate)

    def request_freq(self, core_index: int, ghz: float) -> bool:
        """Ask physical core ``core_index`` (both siblings) for ``ghz`` (P-state transition latency
        applies); True when that is a change of its target."""
        core = self.pkg.cores[core_index]
        cfg = self.ccfg
        ghz = min(max(ghz, cfg.min_freq_ghz), cfg.top_freq_ghz)
        if ghz != core.target_ghz:
            core.request_freq(self.engine.now, ghz)
            return True
        return False

    # ---------------------------------------------------------------- the request path
    def _next_arrival(self) -> None:
        i = self._ai + 1
        if i >= len(self._at):
            batch = next(self._agen, None)
            if batch is None:
                self._at = []
                self.arrivals_done = True
                if self.trace is not None and self.n_done == self.n_offered and self.n_offered:
                    self.drained.succeed()
                return
            if len(batch) == 3:
                self._at, self._ac, self._as = batch
            else:
                self._at, self._ac, self._as, self._aop, self._anb, self._aoff = batch
            i = 0
        self._ai = i
        self.engine.call_at(self._at[i], self._arrive)

    def _arrive(self) -> None:
        i = self._ai
        now = self._at[i]
        th = self.conn_thread[self._ac[i]]
        ssd = self._as[i]
        self._next_arrival()
        req = FabricsCommand()
        req.id = self.n_offered
        self.n_offered += 1
        req.thread = th
        req.ssd = ssd
        req.op = self.op
        req.nbytes = self.bs
        req.offset = self._offset_draw() * self.bs
        req.t_arr = now
        self._admit(req, th, now)

    def _arrive_closed(self, conn: int) -> None:
        """A closed-loop client's command of connection ``conn`` reaches the target."""
        now = self.engine.now
        th = self.conn_thread[conn]
        req = FabricsCommand()
        req.id = self.n_offered
        self.n_offered += 1
        req.thread = th
        req.ssd = self.client.conn_ssd[conn]
        req.op = self.op
        req.nbytes = self.bs
        req.offset = self._offset_draw() * self.bs
        req.t_arr = now
        req.conn = conn
        self._admit(req, th, now)

    def _admit(self, req: FabricsCommand, th, now: float) -> None:
        """A request reached its thread's RX queue: processed at once by its reactor, or queued."""
        th.arrivals += 1
        if self.on_arrival is not None:
            self.on_arrival(th, now)
        r = th.reactor
        if r is None:
            th.pending.append(req)
        elif th.pending or r.free_at - now > self.h_hi:
            th.pending.append(req)
            self._backlog(r, th, now)
        else:
            e = self._commit(r, th, now, r.rx_cycles, "receive")
            self.engine.call_at(e, self._submit, req)

    def _arrive_trace(self) -> None:
        """:meth:`_arrive` with the request's own op and size (trace replay)."""
        i = self._ai
        now = self._at[i]
        th = self.conn_thread[self._ac[i]]
        req = FabricsCommand()
        req.id = self.n_offered
        self.n_offered += 1  # before the next arrival is fetched (the end-of-trace check counts it)
        req.thread = th
        req.ssd = self._as[i]
        req.op = self._aop[i]
        req.nbytes = self._anb[i]
        req.offset = self._aoff[i]
        req.t_arr = now
        self._next_arrival()
        self._admit(req, th, now)

    def _submit(self, req: FabricsCommand) -> None:
        req.t_submit = self.engine.now
        if self.tracer is not None:
            r = req.thread.reactor
            if r is not None:
                self._tr_submit_cpu[req.id] = r.cpu_id
        self.devices[req.ssd].submit(req.thread.qps[req.ssd], req)

    def _submit_pull(self, req: FabricsCommand) -> None:
        """:meth:`_submit` after the data of a write over the in-capsule size has been pulled from the
        client (RDMA READ: a round trip plus the transfer)."""
        if req.op == "write" and req.nbytes > self.in_capsule:
            self.engine.call_at(
                self.engine.now + self.rtt_ns + req.nbytes * self.ns_per_byte, Server._submit, self, req
            )
        else:
            Server._submit(self, req)

    def _on_cqe(self, qp, req: FabricsCommand) -> None:
        qp.cq.clear()
        th = req.thread
        r = th.reactor
        now = self.engine.now
        if r is None:
            th.pending_cq.append(req)
        elif th.pending_cq or r.free_at - now > self.h_hi:
            th.pending_cq.append(req)
            self._backlog(r, th, now)
        else:
            self._complete(r, th, now, req)

    def _complete(self, r: Reactor, th: LThread, now: float, req: FabricsCommand) -> None:
        """Commit a completion's processing; the client gets the response half an RTT after it ends."""
        x = now - req.t_submit
        r.svc = x if r.svc == 0.0 else r.svc + (x - r.svc) * 0.0625
        e = self._commit(r, th, now, r.cq_cycles, "complete")
        self.rec_arr.append(req.t_arr)
        self.rec_done.append(e + self.resp_ns)
        if self.client is not None:
            self.client.response(req.conn, e + self.resp_ns)
        if self.records is not None:
            self._record(req, r, now, e + self.resp_ns)
        if self.tracer is not None:
            self._trace_request(r, req, e)

    def _complete_trace(self, r: Reactor, th: LThread, now: float, req: FabricsCommand) -> None:
        """:meth:`_complete` recording the request's id, op and size; the last completion of the
        trace triggers :attr:`drained`."""
        x = now - req.t_submit
        r.svc = x if r.svc == 0.0 else r.svc + (x - r.svc) * 0.0625
        e = self._commit(r, th, now, r.cq_cycles, "complete")
        if self.tracer is not None:
            self._trace_request(r, req, e)
        nb = req.nbytes
        read = req.op == "read"
        done = e + self.half_rtt + (self._resp_extra("read", nb) if read else 0.0)
        self.rec_arr.append(req.t_arr)
        self.rec_done.append(done)
        if self.records is not None:
            self._record(req, r, now, done)
        self.rec_id.append(req.id)
        self.rec_nb.append(nb)
        self.rec_wr.append(0 if read else 1)
        self.n_done += 1
        if self.arrivals_done and self.n_done == self.n_offered:
            self.drained.succeed()

    def keep_records(self) -> None:
        """Keep every completed request (for ``result.records``), from now on."""
        self.records = []

    def _record(self, req: FabricsCommand, r: Reactor, now: float, done: float) -> None:
        """Keep a completed request: the CPU that processed its completion, when (ns), and when the
        client got the response (ns)."""
        req.cpu = r.cpu_id
        req.t_reaped = now
        req.t_complete = done
        self.records.append(req)

    def _trace_request(self, r: Reactor, req: FabricsCommand, done: float) -> None:
        """Timeline: the request's device service and a flow doorbell -> device -> completion."""
        cpu0 = self._tr_submit_cpu.pop(req.id, r.cpu_id)
        self.tracer.request(req, req.thread.qps[req.ssd], req.t_arr, done, ((cpu0, req.t_submit), (r.cpu_id, done)))

    # ---------------------------------------------------------------- saturated reactors
    def _backlog(self, r: Reactor, th: LThread, now: float) -> None:
        if not th.queued:
            th.queued = True
            r.backlog.append(th)
        if r.refill_ev is None:
            t = r.free_at - self.h_lo
            r.refill_ev = self.engine.call_at(t if t > now else now, self._refill, r)

    def _refill(self, r: Reactor) -> None:
        """A saturated reactor takes waiting items round-robin over its threads: per turn at most
        ``poll_batch`` completions (NVMe poller) then ``poll_batch`` received requests (RDMA
        poller), as a loop iteration does, up to the commit horizon."""
        r.refill_ev = None
        now = self.engine.now
        limit = now + self.h_hi
        bl = r.backlog
        batch = self.batch
        while bl and r.free_at < limit:
            th = bl.popleft()
            if th.reactor is not r:
                th.queued = False
                continue
            self._take_batch(r, th, now, limit, batch)
            if th.pending or th.pending_cq:
                bl.append(th)
            else:
                th.queued = False
        if bl:
            t = r.free_at - self.h_lo
            r.refill_ev = self.engine.call_at(t if t > now else now, self._refill, r)

    def _take_batch(self, r: Reactor, th: LThread, now: float, limit: float, batch: int) -> None:
        cq = th.pending_cq
        k = 0
        while cq and k < batch and r.free_at < limit:
            self._complete(r, th, now, cq.popleft())
            k += 1
        rx = th.pending
        k = 0
        call_at = self.engine.call_at
        while rx and k < batch and r.free_at < limit:
            req = rx.popleft()
            e = self._commit(r, th, now, r.rx_cycles, "receive")
            call_at(e, self._submit, req)
            k += 1

    # ---------------------------------------------------------------- snapshots
    def snapshot(self) -> dict:
        """Cumulative counters at the current time (statistics are differences of snapshots)."""
        now = self.engine.now
        self.settle(now)
        busy = sum(c.busy_ns for c in self.cpus)
        ncs = len(self.ccfg.cstates)
        cst = [sum(c.cstate_ns[j] for c in self.cpus) for j in range(ncs)]
        return {
            "t": now,
            "cpu_j": self.cpu_energy_j(),
            "ssd_busy": [ssd_reading(d, now) for d in self.devices],
            "acc": self.pkg.c0_acc,
            "migrations": self.migrations,
            "decisions": len(getattr(self.policy, "burst_decisions", ())),
            "reactor_busy": sum(r.executed_busy(now) for r in self.reactors),
            "c0_busy_ns": busy,
            "cstate_ns": cst,
            "freq_transitions": sum(c.transitions for c in self.pkg.cores),
            "power_limit": limit_reading(self.pkg, now),
            "wakes": sum(r.wakes for r in self.reactors),
            "offered": self.n_offered,
        }
