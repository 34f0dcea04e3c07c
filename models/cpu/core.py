"""Logical CPUs, physical cores and the package: state, residency and exactly integrated power.

A logical CPU is either *busy* (C0, running some kind of work with a dynamic-power activity
factor) or *idle* in one of the configured C-states (a POLL state spins in C0). A physical core's
power follows its siblings: busy if either is busy (SMT adds a fraction of the second thread's
activity), otherwise the power of the shallower sibling's state. The uncore draws its active power
unless every logical CPU sits in a ``package_deep`` state. Energy is integrated exactly at every
state change (piecewise-constant power), so it needs no sampling.

A machine of several sockets (``CpuConfig.sockets``) is one :class:`Package` object holding a
:class:`Socket` per package: each socket has its own cores and its own uncore (LLC, memory
controller, UPI), which powers down only when every logical CPU *of that socket* is deep; energy
and power are read per socket (:meth:`Package.socket_energy_j`) or summed. A cache line moved
between two CPUs costs :meth:`Package.line_transfer_cycles`: nothing on one CPU or its SMT sibling
(they share L1 and L2), a core-to-core transfer inside a socket, more across sockets.

The package also integrates *C0 time*: a logical CPU is in C0 while busy or spinning in a POLL
state, a physical core while either sibling is. :attr:`Package.c0_acc` holds physical-core C0 ns,
physical-core C0 GHz x ns, logical-CPU C0 ns and logical-CPU C0 GHz x ns (:meth:`Package.settle_c0`
brings them to now); the platform power that
follows executing cores (``PowerConfig.c0_core_w``, ``c0_core_ghz_w``) and the active-core
metrics of the storage server are read from it.
"""

from __future__ import annotations

from typing import Any

from mypy_extensions import trait

from models.cpu.config import CpuConfig
from models.cpu.power_limit import PowerLimiter


class Package:
    """The CPU package: physical cores, logical CPUs, uncore power."""

    def __init__(self, cfg: CpuConfig, engine=None, freq_ghz: float | None = None):
        self.cfg = cfg
        #: the simulation engine (cores schedule their P-state transitions on it)
        self.engine = engine
        #: frequency every core starts at (the cpufreq governor's choice; default the top frequency)
        self.freq_ghz = freq_ghz or cfg.top_freq_ghz
        #: one per package, node n holding cores n*physical_cores .. (n+1)*physical_cores-1
        self.sockets = [Socket(self, n) for n in range(cfg.sockets)]
        self.cores = [PhysicalCore(self, i, self.sockets[i // cfg.physical_cores]) for i in range(cfg.total_cores)]
        n_threads = 2 if cfg.smt else 1
        # Linux numbering: cpu i and cpu i + ncores are siblings on Intel and AMD servers, and the
        # first threads of socket 0's cores come first (node 1 = CPUs 10-19 on a 2 x 10-core Xeon).
        self.cpus: list[LogicalCpu] = []
        for t in range(n_threads):
            for c in self.cores:
                self.cpus.append(LogicalCpu(len(self.cpus), c))
        for sock in self.sockets:
            sock.cores = [c for c in self.cores if c.socket is sock]
            sock.awake_cpus = sum(len(c.cpus) for c in sock.cores)
            sock.active_cores = sum(1 for c in sock.cores if c.n_on > 0)
            sock.setup_turbo(engine)
        for c in self.cores:
            c.finish_setup()
        #: the NUMA node of each logical CPU, by CPU id
        self.node_of: list[int] = [cpu.core.socket.index for cpu in self.cpus]
        self._line_same = cfg.line_transfer_cycles
        #: the same-socket transfer as a time (ns; 0: given in cycles)
        self._line_same_ns = cfg.line_transfer_ns or 0.0
        self._line_remote = cfg.cross_socket_line_transfer_cycles
        #: the power limit of each package (RAPL PL1 is per package: each socket's firmware caps its
        #: own cores' frequency from its own power), or None without a limit
        self.limiter: Any = None
        if cfg.power_limit_w is not None and engine is not None:
            self.limiter = [PowerLimiter(self, engine, sock) for sock in self.sockets]
        #: cumulative C0 time, integrated up to each core's last C0 change (:meth:`settle_c0` brings
        #: it to now): physical-core ns, physical-core GHz x ns, logical-CPU ns, logical-CPU GHz x ns
        #: (native floats: a list's items would be boxed anew at every change; :attr:`c0_acc`)
        self.c0_core_ns = 0.0
        self.c0_core_ghz_ns = 0.0
        self.c0_cpu_ns = 0.0
        self.c0_cpu_ghz_ns = 0.0

    @property
    def c0_acc(self) -> list[float]:
        """The C0 accounts as [physical-core ns, physical-core GHz x ns, logical-CPU ns,
        logical-CPU GHz x ns] (a copy)."""
        return [self.c0_core_ns, self.c0_core_ghz_ns, self.c0_cpu_ns, self.c0_cpu_ghz_ns]

    def set_ceiling(self, now: float, ghz: float, sock: "Socket") -> None:
        """The power limit's frequency ceiling of package ``sock`` changes: each of its cores moves
        to min(request, power ceiling, turbo limit)."""
        sock.power_ceiling_ghz = ghz
        self.refresh_ceiling(now, sock)

    def refresh_ceiling(self, now: float, sock: "Socket") -> None:
        """Package ``sock``'s ceiling is min(its power limit's ceiling, its active-core turbo limit):
        when it changes, each of its cores moves to min(request, ceiling)."""
        ghz = min(sock.power_ceiling_ghz, sock.turbo_ghz)
        if ghz == sock.ceiling_ghz:
            return
        sock.ceiling_ghz = ghz
        for c in sock.cores:
            c._retarget(now)

    def sibling_of(self, cpu: "LogicalCpu") -> "LogicalCpu | None":
        sib = cpu.core.cpus
        return next((c for c in sib if c is not cpu), None)

    def line_transfer_cycles(self, cpu_a: int, cpu_b: int) -> float:
        """Cycles to move a modified cache line last written by logical CPU ``cpu_a`` to ``cpu_b``:
        0 on the same CPU, ``cfg.smt_line_transfer_cycles`` between SMT siblings (one core's L1/L2),
        ``cfg.line_transfer_cycles`` between cores of one socket (through the shared LLC; with
        ``cfg.line_transfer_ns``, that time at ``cpu_b``'s frequency now),
        ``cfg.cross_socket_line_transfer_cycles`` between sockets (a snoop over QPI/UPI)."""
        if cpu_a == cpu_b:
            return 0.0
        a = self.cpus[cpu_a].core
        b = self.cpus[cpu_b].core
        if a is b:
            return self.cfg.smt_line_transfer_cycles
        if a.socket is b.socket:
            if self._line_same_ns:
                return self._line_same_ns * b.freq_ghz
            return self._line_same
        return self._line_remote

    @property
    def uncore_energy_j(self) -> float:
        """Uncore energy of every socket, J (integrated up to the last :meth:`settle`)."""
        return sum(s.uncore_energy_j for s in self.sockets)

    @property
    def uncore_power_w(self) -> float:
        """Instantaneous uncore power of every socket, W."""
        return sum(s.uncore_power_w for s in self.sockets)

    def socket_energy_at(self, node: int, now: float) -> float:
        """Energy of socket ``node`` up to ``now``, J, read without settling any account (the power
        limit reads it every control period: settling would split the integrals and so change
        their rounding with the limiter's schedule)."""
        sock = self.sockets[node]
        return sum(c.energy_at(now) for c in sock.cores) + sock.uncore_energy_at(now)

    def socket_energy_j(self, node: int) -> float:
        """Energy of socket ``node`` (its cores and its uncore), J, up to the last :meth:`settle`."""
        sock = self.sockets[node]
        return sum(c.energy_j for c in self.cores if c.socket is sock) + sock.uncore_energy_j

    def settle(self, now: float) -> None:
        """Integrate every energy account up to ``now``."""
        for c in self.cores:
            c.settle(now)
        for sock in self.sockets:
            sock.settle(now)
        for cpu in self.cpus:
            cpu.settle(now)

    def settle_c0(self, now: float) -> None:
        """Integrate the C0 accounts (:attr:`c0_acc`) up to ``now``. Separate from :meth:`settle`,
        which the power limit calls every control period: the C0 accounts are read only where a
        summary or power reading needs them, and integrating them in fewer, longer pieces keeps
        their rounding independent of who else settles the package."""
        for c in self.cores:
            c.c0_settle(now)

    def energy_j(self) -> float:
        return sum(c.energy_j for c in self.cores) + self.uncore_energy_j

    def power_w(self) -> float:
        """Instantaneous power of every package, W."""
        return sum(c.power_w for c in self.cores) + self.uncore_power_w


class Socket:
    """One package of a multi-socket machine (a NUMA node): its uncore (LLC, memory controller,
    UPI links) draws its active power unless every logical CPU of this socket sits in a
    ``package_deep`` state (package C-states are per package)."""

    __slots__ = (
        "pkg",
        "index",
        "cores",
        "awake_cpus",
        "uncore_energy_j",
        "uncore_power_w",
        "ceiling_ghz",
        "power_ceiling_ghz",
        "turbo_ghz",
        "active_cores",
        "turbo_changes",
        "_t",
        "_idle_w",
        "_active_w",
        "_bins",
        "_turbo_pending",
        "_win_t",
        "_win_acc",
        "_n_t",
        "_turbo_period_ns",
    )

    def __init__(self, pkg: Package, index: int):
        self.pkg = pkg
        self.index = index
        self.cores: list[PhysicalCore] = []  # this package's cores (set once they exist)
        top = pkg.cfg.top_freq_ghz
        #: the frequency ceiling of this package's cores: min(power_ceiling_ghz, turbo_ghz)
        self.ceiling_ghz = top
        #: the power limit's ceiling (top frequency while the limits do not bind)
        self.power_ceiling_ghz = top
        #: the active-core turbo limit in force (MSR_TURBO_RATIO_LIMIT by active cores)
        self.turbo_ghz = top
        #: cores of this package with a sibling outside the core-off states (C3 and deeper)
        self.active_cores = 0
        self.turbo_changes = 0
        self._bins: list[float] | None = None
        self._turbo_pending = False
        self._win_t = self._win_acc = self._n_t = 0.0  # the evaluation window: start, integral, last change
        self._turbo_period_ns = pkg.cfg.power_limit_control_us * 1e3
        self.awake_cpus = 0  # this socket's CPUs not in a package_deep state (set once they exist)
        self._idle_w = pkg.cfg.uncore_idle_w
        self._active_w = pkg.cfg.uncore_active_w
        self.uncore_energy_j = 0.0
        self.uncore_power_w = self._active_w
        self._t = 0.0

    def setup_turbo(self, engine) -> None:
        """Arm the active-core turbo limit: only when the limit depends on the number of active
        cores (and there is an engine to re-evaluate it on)."""
        bins = self.pkg.cfg.turbo_limits_ghz()
        if engine is not None and min(bins) < max(bins):
            self._bins = bins
            if bins[self.active_cores] != self.turbo_ghz:  # (every CPU boots in state 0, active)
                self._arm(0.0)

    def active_changed(self, now: float, delta: int) -> None:
        """A core of this package becomes active (``+1``) or inactive (``-1``). When the turbo
        limit for the cores active now differs from the one in force, the firmware re-evaluates it
        one control period later, from the mean number of cores active over that period (a core
        that wakes for a few microseconds does not move the package's clock)."""
        n = self.active_cores
        bins = self._bins
        if bins is not None and self._turbo_pending:
            self._win_acc += n * (now - self._n_t)
        self._n_t = now
        n += delta
        self.active_cores = n
        if bins is not None and not self._turbo_pending and bins[n] != self.turbo_ghz:
            self._arm(now)

    def _arm(self, now: float) -> None:
        self._turbo_pending = True
        self._win_t = now
        self._win_acc = 0.0
        self.pkg.engine.call_in(self._turbo_period_ns, self._turbo_eval)

    def _turbo_eval(self) -> None:
        bins = self._bins
        assert bins is not None
        now = self.pkg.engine.now
        n = self.active_cores
        acc = self._win_acc + n * (now - self._n_t)
        self._n_t = now
        span = now - self._win_t
        mean = int(acc / span + 0.5) if span > 0 else n
        self._turbo_pending = False
        ghz = bins[min(max(mean, 0), len(bins) - 1)]
        if ghz != self.turbo_ghz:
            self.turbo_ghz = ghz
            self.turbo_changes += 1
            self.pkg.refresh_ceiling(now, self)
        if bins[n] != ghz:  # the count moved on during the window: evaluate the next one too
            self._arm(now)

    def uncore_energy_at(self, now: float) -> float:
        """Uncore energy up to ``now``, J, without settling."""
        return self.uncore_energy_j + self.uncore_power_w * (now - self._t) * 1e-9

    def _awake_changed(self, now: float, delta: int) -> None:
        before = self.awake_cpus
        self.awake_cpus += delta
        if (before == 0) != (self.awake_cpus == 0):
            self.uncore_energy_j += self.uncore_power_w * (now - self._t) * 1e-9
            self._t = now
            self.uncore_power_w = self._idle_w if self.awake_cpus == 0 else self._active_w

    def settle(self, now: float) -> None:
        self.uncore_energy_j += self.uncore_power_w * (now - self._t) * 1e-9
        self._t = now


@trait
class SmtWatcher:
    """The OS side of one logical CPU of an SMT core (its runner, models.os): told when the
    sibling's executing activity changes (a method of a native trait: compiled, a direct call with
    native floats, nothing boxed)."""

    def sibling_activity_changed(self, now: float, activity: float) -> None:
        """The sibling's executing activity is ``activity`` from ``now`` (ns)."""
        raise NotImplementedError


class PhysicalCore:
    """One physical core: 1 or 2 logical CPUs sharing power state and frequency."""

    __slots__ = (
        "pkg",
        "index",
        "socket",
        "cpus",
        "energy_j",
        "power_w",
        "_t",
        "_cfg",
        "freq_ghz",
        "target_ghz",
        "requested_ghz",
        "_leak_w",
        "_dyn_w",
        "listeners",
        "transitions",
        "stall_until",
        "stall_ns",
        "_pending",
        "_ghz_ns",
        "_ghz_t",
        "_leak_ns",
        "_dyn_ns",
        "c0n",
        "n_on",
        "_c0_t",
        "smt_watchers",
        "_smt_seen0",
        "_smt_seen1",
        "_smt2",
    )

    def __init__(self, pkg: Package, index: int, socket: Socket):
        self.pkg = pkg
        self.index = index
        self.socket = socket
        self.cpus: list[LogicalCpu] = []
        self.energy_j = 0.0
        self.power_w = 0.0
        self._t = 0.0
        self._cfg = pkg.cfg
        self.listeners: list = []  # called with the new frequency (the OS runners of the siblings)
        #: per logical CPU (in ``cpus`` order), the watcher told whenever the other sibling's
        #: executing activity changes (0.0: it executes nothing); set by the OS layer on SMT cores
        #: (:meth:`watch_smt`)
        self.smt_watchers: list[SmtWatcher] | None = None
        self._smt2: float = pkg.cfg.smt_second_thread_activity  # (the hot path's copy)
        self._smt_seen0 = self._smt_seen1 = 0.0  # what each watcher was told last
        self.transitions = 0
        #: the end of the stall of the last P-state change (ns; the core executes nothing before it)
        #: and the stalls' total so far, ns
        self.stall_until = 0.0
        self.stall_ns = 0.0
        self._pending: Any = None
        self.freq_ghz = self.target_ghz = self.requested_ghz = 0.0
        self._ghz_ns = 0.0  # integral of the frequency over time (GHz x ns), up to _ghz_t
        self._ghz_t = 0.0
        # integrals of the busy leakage and dynamic coefficients over time (W x ns), up to _ghz_t
        self._leak_ns = self._dyn_ns = 0.0
        self.c0n = 0  # siblings in C0 (busy or in a POLL state)
        self.n_on = 0  # siblings outside the core-off states (the core counts as active for turbo)
        self._c0_t = 0.0  # C0 time integrated into pkg.c0_acc up to here
        self._set_freq_factors(pkg.freq_ghz)

    def _set_freq_factors(self, freq_ghz: float) -> None:
        cfg = self._cfg
        self.freq_ghz = freq_ghz
        # busy power = leak + dyn * activity at this frequency (precomputed for the hot path)
        self._leak_w = cfg.busy_power_w(freq_ghz, 0.0)
        self._dyn_w = cfg.busy_power_w(freq_ghz, 1.0) - self._leak_w

    def request_freq(self, now: float, freq_ghz: float) -> None:
        """Ask for a P-state change (both siblings share it). The core keeps running at the old
        frequency for ``pstate_transition_ns`` (the request's wait and the voltage ramp), then
        switches, and its clock stops for ``pstate_stall_ns`` (the PLL relocks): neither sibling
        executes meanwhile (``stall_until``; the listeners push the work under way). Work already
        under way keeps the speed it started with. A request for the frequency the core has or is
        moving to costs nothing; one landing back where the core was changes nothing (no stall).
        A request made while a transition is under way does not restart it: the transition lands
        on the latest request (the hardware acts on the requested-performance register when its
        transition completes; restarting would freeze a core whose governor re-requests faster
        than the transition), so requests coalesce into one stall per transition. A
        power-limit ceiling caps the request (``target_ghz``) while it lasts; ``requested_ghz``
        remembers what was asked."""
        cfg = self._cfg
        self.requested_ghz = min(max(freq_ghz, cfg.min_freq_ghz), cfg.top_freq_ghz)
        self._retarget(now)

    def _retarget(self, now: float) -> None:
        freq_ghz = min(self.requested_ghz, self.socket.ceiling_ghz)
        if freq_ghz == self.target_ghz:
            return
        self.target_ghz = freq_ghz
        if self._pending is None:
            self._pending = self.pkg.engine.call_in(self._cfg.pstate_transition_ns, self._apply_freq)

    def _apply_freq(self) -> None:
        self._pending = None
        freq_ghz = self.target_ghz
        if freq_ghz == self.freq_ghz:
            return  # asked back to where it was while the transition ran
        now = self.pkg.engine.now
        self.c0_settle(now)  # C0 time so far ran at the old frequency
        self.energy_j += self.power_w * (now - self._t) * 1e-9
        self._t = now
        self._ghz_ns = self.ghz_ns_at(now)
        self._leak_ns, self._dyn_ns = self.curve_ns_at(now)
        self._ghz_t = now
        self._set_freq_factors(freq_ghz)
        self.transitions += 1
        stall = self._cfg.pstate_stall_ns
        if stall > 0.0:
            # the clock stops while the PLL relocks: the siblings' runners (listeners) push the
            # work under way, and work that would start before the end waits for it
            self.stall_until = now + stall
            self.stall_ns += stall
        self.update(now)
        for fn in self.listeners:
            fn(freq_ghz)

    def curve_ns_at(self, now: float) -> tuple[float, float]:
        """Integrals over time of the busy power's leakage and dynamic coefficients at the core's
        frequency (W x ns) up to ``now``: a busy core's energy over an interval is their
        difference weighted by its activity, whatever the frequency did meanwhile (the power
        limit's prediction uses them)."""
        dt = now - self._ghz_t
        return (self._leak_ns + self._leak_w * dt, self._dyn_ns + self._dyn_w * dt)

    def energy_at(self, now: float) -> float:
        """Energy up to ``now``, J, without settling (the power limit's reading)."""
        return self.energy_j + self.power_w * (now - self._t) * 1e-9

    def on_changed(self, now: float, delta: int) -> None:
        """A sibling leaves (``+1``) or enters (``-1``) a core-off state (one that flushes the
        core's caches: C3 and deeper, CC6): the core is active while either sibling is out of one."""
        before = self.n_on
        self.n_on = before + delta
        if (before == 0) != (self.n_on == 0):
            self.socket.active_changed(now, 1 if delta > 0 else -1)

    def ghz_ns_at(self, now: float) -> float:
        """Integral of the core's frequency up to ``now`` (GHz x ns): its mean frequency over an
        interval is the difference of two readings over the interval's length."""
        return self._ghz_ns + self.freq_ghz * (now - self._ghz_t)

    def finish_setup(self) -> None:
        self.target_ghz = self.requested_ghz = self.freq_ghz
        self.update(self._t)

    def update(self, now: float) -> None:
        """Integrate energy up to ``now`` and take the power of the siblings' current states
        (this runs at every state change)."""
        self.energy_j += self.power_w * (now - self._t) * 1e-9
        self._t = now
        a1 = a2 = -1.0
        shallow = -1.0
        for cpu in self.cpus:
            if cpu.busy or cpu.spinning:
                a = cpu.activity
                if a > a1:
                    a1, a2 = a, a1
                elif a > a2:
                    a2 = a
            else:
                p = cpu.cstate_power
                if p > shallow:
                    shallow = p
        if a1 >= 0:
            if a2 >= 0:
                a1 += self._smt2 * a2
            self.power_w = self._leak_w + self._dyn_w * a1
        else:
            self.power_w = shallow if shallow > 0 else 0.0
        watchers = self.smt_watchers
        if watchers is not None:  # _notify_smt, inlined (every state change of an SMT core)
            c0, c1 = self.cpus
            if c0.busy:
                a = c1.activity if (c1.busy or c1.spinning) else 0.0
                if a != self._smt_seen0:
                    self._smt_seen0 = a
                    watchers[0].sibling_activity_changed(now, a)
            if c1.busy:
                a = c0.activity if (c0.busy or c0.spinning) else 0.0
                if a != self._smt_seen1:
                    self._smt_seen1 = a
                    watchers[1].sibling_activity_changed(now, a)

    def watch_smt(self, watchers: list[SmtWatcher]) -> None:
        """Call ``watchers[i].sibling_activity_changed(now, activity)`` when the executing
        activity of CPU ``i``'s sibling (busy: its work's activity; spinning in a POLL state: the
        spin activity; else 0) differs from what ``watchers[i]`` last got, at every state change
        while CPU ``i`` is busy: a CPU that executes nothing is not told, and learns the current
        value as it becomes busy (its own ``set_busy``), before it times its work."""
        self.smt_watchers = watchers
        self._smt_seen0 = self._smt_seen1 = 0.0  # the watchers start with no contention (factor 1)

    def settle(self, now: float) -> None:
        self.update(now)

    def c0_settle(self, now: float) -> None:
        """Integrate this core's C0 time up to ``now`` into :attr:`Package.c0_acc`."""
        n = self.c0n
        if n:
            dt = now - self._c0_t
            f = self.freq_ghz
            pkg = self.pkg
            pkg.c0_core_ns += dt
            pkg.c0_core_ghz_ns += dt * f
            pkg.c0_cpu_ns += n * dt
            pkg.c0_cpu_ghz_ns += n * dt * f
        self._c0_t = now

    def c0_change(self, now: float, delta: int) -> None:
        """A sibling enters (``+1``) or leaves (``-1``) C0 at ``now``."""
        self.c0_settle(now)
        self.c0n += delta


class LogicalCpu:
    """One logical CPU's power/residency state. The OS layer (models.os) drives it."""

    __slots__ = (
        "id",
        "core",
        "busy",
        "spinning",
        "activity",
        "cstate",
        "busy_ns",
        "cstate_ns",
        "cstate_entries",
        "_t",
        "_deep",
        "_off",
        "cstate_power",
        "c0",
        "_cs_power",
        "_cs_polling",
        "_cs_deep",
        "_cs_off",
        "_spin_act",
    )

    def __init__(self, cpu_id: int, core: PhysicalCore):
        self.id = cpu_id
        self.core = core
        core.cpus.append(self)
        self.busy = False  # boots in state 0 until the OS runs work or picks an idle state at t=0
        cstates = core._cfg.cstates
        # each C-state's power, POLL flag and package-deep flag, the spin activity: the hot path's
        # copies of the configuration (read at every idle entry)
        self._cs_power: list[float] = [st.power_w for st in cstates]
        self._cs_polling: list[bool] = [st.polling for st in cstates]
        self._cs_deep: list[bool] = [st.package_deep for st in cstates]
        #: the states that switch the core off for the turbo count (C3 and deeper flush its caches)
        self._cs_off: list[bool] = [st.flushes_core_caches for st in cstates]
        self._spin_act: float = core._cfg.activity["spin"]
        self.spinning: bool = cstates[0].polling
        self.activity: float = self._spin_act
        self.cstate = 0
        self.cstate_power = 0.0
        self.busy_ns = 0.0
        self.cstate_ns: list[float] = [0.0] * len(core._cfg.cstates)
        self.cstate_entries: list[int] = [0] * len(core._cfg.cstates)
        self._t = 0.0
        self._deep = False
        self._off = self._cs_off[0]
        if not self._off:
            core.n_on += 1
        #: in C0 (busy or spinning in a POLL state); boots in state 0
        self.c0 = self.spinning
        if self.c0:
            core.c0n += 1

    def _account(self, now: float) -> None:
        dt = now - self._t
        if self.busy:
            self.busy_ns += dt
        else:
            ns = self.cstate_ns  # (compiled: unboxed arithmetic, not +=)
            ns[self.cstate] = ns[self.cstate] + dt
        self._t = now

    def set_busy(self, now: float, activity: float) -> None:
        """Run work of the given activity factor from ``now``."""
        busy = self.busy
        if busy and activity == self.activity:
            return
        # residency accounting, inlined (hot path)
        dt = now - self._t
        if busy:
            self.busy_ns += dt
        else:
            ns = self.cstate_ns  # (compiled: unboxed arithmetic, not +=)
            ns[self.cstate] = ns[self.cstate] + dt
            if self._deep:
                self._deep = False
                self.core.socket._awake_changed(now, +1)
            if self._off:
                self._off = False
                self.core.on_changed(now, 1)
        self._t = now
        self.busy = True
        self.spinning = False
        self.activity = activity
        self.core.update(now)
        if not self.c0:
            self.c0 = True
            self.core.c0_change(now, 1)

    def set_idle(self, now: float, cstate: int) -> None:
        """Enter idle state ``cstate`` at ``now``."""
        dt = now - self._t  # _account, inlined
        if self.busy:
            self.busy_ns += dt
        else:
            ns = self.cstate_ns  # (compiled: unboxed arithmetic, not +=)
            ns[self.cstate] = ns[self.cstate] + dt
        self._t = now
        polling = self._cs_polling[cstate]
        self.busy = False
        self.cstate = cstate
        self.cstate_power = self._cs_power[cstate]
        entries = self.cstate_entries
        entries[cstate] = entries[cstate] + 1
        self.spinning = polling
        if polling:
            self.activity = self._spin_act
        deep = self._cs_deep[cstate]
        if deep != self._deep:
            self._deep = deep
            self.core.socket._awake_changed(now, -1 if deep else +1)
        off = self._cs_off[cstate]
        if off != self._off:
            self._off = off
            self.core.on_changed(now, -1 if off else 1)
        self.core.update(now)
        if polling != self.c0:
            self.c0 = polling
            self.core.c0_change(now, 1 if polling else -1)

    def settle(self, now: float) -> None:
        self._account(now)

    def cstate_ns_at(self, now: float, state: int) -> float:
        """Cumulative time in idle state ``state`` up to ``now``, ns, without changing any state."""
        return self.cstate_ns[state] + (now - self._t if not self.busy and self.cstate == state else 0.0)

    def busy_ns_at(self, now: float) -> float:
        """Cumulative busy (C0, running work) time up to ``now``, ns, without changing any state."""
        return self.busy_ns + (now - self._t if self.busy else 0.0)
