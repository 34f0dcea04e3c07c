"""Configuration of a CPU package: cores, SMT, C-states, P-states and power coefficients.

Units: time in ns, frequency in GHz, voltage in V, power in W (per physical core unless named
otherwise). Presets with cited values are in :mod:`models.cpu.presets`.
"""

from __future__ import annotations

import math
from typing import Optional, Union

from pydantic import Field, model_validator

from simcore.config import Model


class CStateConfig(Model):
    """One idle state as cpuidle exposes it (``/sys/devices/system/cpu/cpu*/cpuidle/state*``)."""

    name: str
    exit_latency_ns: float = Field(
        ge=0,
        description="worst-case wake-up latency the driver declares, ns (cpuidle 'latency'): what the"
        " governors and PM QoS compare against, and the wake-up time unless wake_ns says otherwise",
    )
    wake_ns: Optional[float] = Field(
        None,
        ge=0,
        description="the time the core takes to resume from this state, ns, when it is shorter than the"
        " declared worst case (exit_latency_ns, the default): the C-state exit an interrupt or a wake-up"
        " waits for. intel_idle's tables are worst cases for PM QoS; a measured typical exit goes here",
    )
    target_residency_ns: float = Field(ge=0, description="minimum idle time that makes entering worthwhile, ns")
    power_w: float = Field(ge=0, description="power of one physical core resident in this state, W")
    polling: bool = Field(False, description="a POLL pseudo-state: the core spins in C0 (power = busy power)")
    package_deep: bool = Field(
        False, description="allows the package (uncore) to power down when every core is this deep"
    )
    flushes_core_caches: bool = Field(
        False,
        description="the core's L1/L2 are flushed in this state (Intel C3 and deeper,"
        " AMD CC6): the task that runs after it refetches its working set"
        " (kernel.cold_idle_refill_cycles)",
    )

    @property
    def wake_latency_ns(self) -> float:
        """The wake-up time from this state, ns: ``wake_ns`` if stated, else the declared worst case."""
        return self.exit_latency_ns if self.wake_ns is None else self.wake_ns

    @model_validator(mode="after")
    def _wake_within_declared(self):
        if self.wake_ns is not None and self.wake_ns > self.exit_latency_ns:
            raise ValueError(
                f"wake_ns {self.wake_ns:g} is longer than exit_latency_ns {self.exit_latency_ns:g} (the declared"
                " worst case)"
            )
        return self

    def brief(self) -> str:
        """``C6 133/600 us``: name, exit latency / target residency."""
        return f"{self.name} {self.exit_latency_ns / 1e3:g}/{self.target_residency_ns / 1e3:g} us"


class CpuConfig(Model):
    """The CPU packages of a machine: ``sockets`` identical packages (NUMA nodes), each with its
    own cores, last-level cache, memory controller and uncore power."""

    model: str = Field(description="marketing name, e.g. 'Intel Xeon E3-1230 v5'")
    physical_cores: int = Field(
        ge=1,
        le=8192,
        description="cores of each package (socket); with SMT at most 4096 in all (Linux's largest NR_CPUS"
        " is 8192 logical CPUs)",
    )
    sockets: int = Field(
        1,
        ge=1,
        le=64,
        description="packages (sockets), one NUMA node each: node n holds cores n*physical_cores .. "
        "(n+1)*physical_cores-1 and, as Linux numbers a two-socket Intel server, logical CPUs "
        "n*physical_cores .. (n+1)*physical_cores-1 (their SMT siblings follow all first threads)",
    )
    line_transfer_cycles: float = Field(
        100.0,
        ge=0,
        description="moving a modified cache line from another core of the same socket (a lock or a"
        " request's lines handed from one CPU to another), cycles. Estimate: Intel MLC's L2-to-L2"
        " modified intervention on a 10-core Broadwell-EP (Xeon E5-2660 v4) is 40.3-42.3 ns (John"
        " McCalpin, Intel forum 'Core-to-Core Communication Latency in Skylake/Kaby Lake'), ~100"
        " cycles at 2.4 GHz; Intel's Nehalem-era optimization guide gives ~75 cycles",
    )
    line_transfer_ns: Optional[float] = Field(
        None,
        gt=0,
        description="the same as line_transfer_cycles as a time, ns, when set (it replaces it): the"
        " transfer runs in the uncore (ring or mesh), at its clock, whatever the cores' frequency",
    )
    cross_socket_line_transfer_cycles: float = Field(
        300.0,
        ge=0,
        description="moving a modified cache line from a core of another socket (over QPI/UPI), cycles."
        " Estimate: remote-socket modified-line (HITM) latencies of ~110-140 ns are reported by Intel"
        " MLC (--c2c_latency) on two-socket Broadwell-EP and Skylake-SP servers [recalled, not re-read:"
        " Velten et al., ICPE 2022, and Chips and Cheese's core-to-core data give figures of this"
        " order]: ~125 ns x 2.4 GHz = 300 cycles; measure yours with mlc --c2c_latency",
    )
    remote_memory_extra_ns: float = Field(
        50.0,
        ge=0,
        description="extra latency of a DRAM access (or a device's DMA) to the other socket's memory"
        " over the local one, ns. Estimate: Intel MLC idle latencies of ~85-90 ns local and ~130-140 ns"
        " remote on two-socket Broadwell-EP and Skylake-SP [recalled, not re-read]; measure yours with"
        " mlc --latency_matrix",
    )
    smt: bool = Field(True, description="SMT (Hyper-Threading) enabled: two logical CPUs per core")
    base_freq_ghz: float = Field(gt=0)
    max_freq_ghz: float = Field(gt=0, description="highest frequency the governor may pick (turbo if enabled)")
    min_freq_ghz: float = Field(gt=0)
    turbo: bool = Field(True, description="turbo enabled; off caps the frequency at base_freq_ghz")
    voltage_at_min_v: float = Field(0.7, gt=0, description="core voltage at min_freq_ghz, V")
    voltage_at_max_v: float = Field(1.2, gt=0, description="core voltage at max_freq_ghz, V")
    pstate_transition_ns: float = Field(
        ge=0, description="time to move between P-states (PLL relock + voltage ramp), ns"
    )
    pstate_stall_ns: float = Field(
        10_000.0,
        ge=0,
        description="time the core executes nothing when a P-state change takes effect (its clock stops"
        " while the PLL relocks to the new ratio; the voltage ramp before it runs at the old clock), ns."
        " Recalled, not re-read: ~10 us of halted core at each frequency change, measured on Skylake-SP"
        " (T. Downs, 'Gathering Intel on Intel AVX-512 Transitions', 2020); Hackenberg et al. (Haswell-EP,"
        " IPDPSW 2015) report 21-524 us from request to new clock, mostly the wait for the power unit's"
        " ~500 us update grid, not a stall. Estimate on AMD (no figure found): the same",
    )
    pstate_step_ghz: float = Field(
        0.1,
        gt=0,
        description="frequency granularity of the P-states a governor can pick, GHz (100 MHz bus-ratio steps)",
    )
    cpufreq_governor: str = Field(
        "performance",
        description="cpufreq governor (policies/cpu_power): performance, powersave, ondemand, schedutil,"
        " or a plug-in's name",
    )
    cpufreq: dict[str, Union[int, float, str, bool]] = Field(
        default_factory=dict,
        description="the governor's tunables by sysfs name (/sys/devices/system/cpu/cpufreq/<governor>/*),"
        " e.g. up_threshold, sampling_rate, rate_limit_us",
    )
    cstates: tuple[CStateConfig, ...] = Field(description="idle states, shallowest first; the first may be POLL")
    all_core_turbo_ghz: Optional[float] = Field(
        None,
        gt=0,
        description="highest turbo frequency with every core of the package active, GHz (the last entry of"
        " MSR_TURBO_RATIO_LIMIT); with fewer active cores the limit is interpolated linearly from"
        " max_freq_ghz (one core) down to it, rounded down to the P-state grid (an estimate of the bins"
        " between), unless turbo_ratio_limits_ghz lists them; None: max_freq_ghz whatever the number of"
        " active cores",
    )
    turbo_ratio_limits_ghz: dict[int, float] = Field(
        default_factory=dict,
        description="turbo ratio limits by active cores (MSR_TURBO_RATIO_LIMIT's buckets): {N: GHz} is the"
        " highest frequency while at most N cores of the package are active; more active cores than the"
        " largest N take all_core_turbo_ghz (else the last bucket's). A core is active unless every"
        " sibling sits in a state that flushes its caches (C3 and deeper, AMD CC6). Empty: from"
        " all_core_turbo_ghz",
    )
    power_limit_w: Optional[float] = Field(
        None,
        gt=0,
        description="sustained package power limit (Intel RAPL PL1, MSR_PKG_POWER_LIMIT bits 14:0; AMD PPT), W;"
        " None: no package limits at all (pl2_w, tdc_a and edc_a need it)",
    )
    power_limit_window_ms: float = Field(
        1000.0,
        gt=0,
        description="PL1's time window Tau, ms: the time constant of the exponentially weighted running average"
        " that must stay under power_limit_w (MSR_PKG_POWER_LIMIT bits 23:17; powercap's long_term"
        " constraint_*_time_window_us)",
    )
    pl2_w: Optional[float] = Field(
        None,
        gt=0,
        description="short-term package power limit (RAPL PL2, MSR_PKG_POWER_LIMIT bits 46:32; powercap's"
        " short_term constraint), W, at least power_limit_w: while PL1's average is below PL1 the package"
        " may draw up to this, on average over pl2_window_ms; None: no short-term limit (the package may"
        " draw its maximum power until PL1's average reaches PL1)",
    )
    pl2_window_ms: float = Field(
        10.0,
        gt=0,
        description="PL2's time window, ms (MSR_PKG_POWER_LIMIT bits 55:49); normally much shorter than"
        " power_limit_window_ms",
    )
    power_limit_initial_avg_w: Optional[float] = Field(
        None,
        ge=0,
        description="the limits' running averages at t = 0, W: the package's power before the run. None: an"
        " idle package (every core in its deepest enabled idle state, the uncore in a package C-state if"
        " that state allows it)",
    )
    tdc_a: Optional[float] = Field(
        None,
        gt=0,
        description="AMD TDC (thermal design current), A: the cores' sustained current limit, on average over"
        " tdc_window_ms; current = a core's power / its voltage at its operating point (the VDDCR_CPU rail:"
        " the uncore / IO die is not on it); None: no limit",
    )
    tdc_window_ms: float = Field(
        1000.0, gt=0, description="the averaging time constant of the TDC limit, ms (estimate: thermal, ~1 s)"
    )
    edc_a: Optional[float] = Field(
        None,
        gt=0,
        description="AMD EDC (electrical design current), A: the cores' peak current limit, enforced over each"
        " control period (power_limit_control_us); at least tdc_a; None: no limit",
    )
    power_limit_control_us: float = Field(
        1000.0,
        gt=0,
        description="how often the firmware (Intel's PCU, AMD's SMU) evaluates its limits and the active-core"
        " turbo limit and sets the frequency ceiling, us",
    )
    cpuidle_governor: str = Field(
        "menu", description="cpuidle governor (policies/cpu_idle): menu, teo, or a plug-in's name"
    )
    cpuidle_disable: tuple[str, ...] = Field(
        (),
        description="names of idle states disabled on every CPU (cpuidle stateN/disable = 1); disabling all but"
        " POLL is idle=poll, disabling POLL makes the shallowest hardware state the fallback",
    )
    cpu_latency_qos_us: Optional[int] = Field(
        None,
        ge=0,
        le=2_000_000_000,
        description="the CPU latency PM QoS limit, us: what a process holding /dev/cpu_dma_latency open (or a"
        " driver's cpu_latency_qos_add_request) asks for (Linux 6.1 kernel/power/qos.c cpu_latency_qos_limit;"
        " drivers/cpuidle/governor.c cpuidle_governor_latency_req turns it into ns). Every idle governor"
        " then skips the states whose exit latency exceeds it (menu.c and teo.c in 6.1); 0 keeps the CPU in"
        " state 0 (POLL). None: no request, PM_QOS_CPU_LATENCY_DEFAULT_VALUE (2000 s, include/linux/pm_qos.h):"
        " no limit",
    )
    core_leakage_w: float = Field(
        ge=0, description="static power of a powered (C0/POLL) physical core at max voltage, W"
    )
    core_dynamic_w: float = Field(
        ge=0, description="dynamic power of a physical core at max frequency, activity 1.0, W"
    )
    smt_slowdown: float = Field(
        1.5,
        ge=1.0,
        description="time factor of work on a logical CPU while its sibling is busy too (SMT gives ~1.3x"
        " aggregate throughput, so each thread runs at ~0.65 of its solo speed)",
    )
    smt_line_transfer_cycles: float = Field(
        14.0,
        ge=0,
        description="the same between the two SMT siblings of one core, cycles: they share the core's L1/L2,"
        " so the line does not move; estimate: about one L2 access (14 cycles on Cascade Lake, AnandTech's"
        " EPYC Rome review)",
    )
    smt_second_thread_activity: float = Field(
        0.3,
        ge=0,
        le=1,
        description="extra dynamic activity when the second sibling is busy too (fraction of one thread)",
    )
    uncore_active_w: float = Field(
        ge=0, description="uncore (LLC, ring, IO, memory controller) power with any core awake, W"
    )
    uncore_idle_w: float = Field(
        ge=0, description="uncore power in a package C-state (all cores in a package_deep state), W"
    )
    pause_cycles: float = Field(
        140,
        gt=0,
        description="latency of one PAUSE instruction (cpu_relax), cycles: the cpuidle POLL loop runs one"
        " iteration per PAUSE, so it retires kernel.poll_idle_loop_instructions per pause_cycles. Intel's"
        " optimization manual (Skylake, section 2.5.4): 'about 10 cycles' before Skylake, 'as many as 140"
        " cycles' from Skylake on (the default)",
    )
    copy_bytes_per_cycle: float = Field(
        3.5,
        gt=0,
        description="bytes one core copies per cycle between the page cache and a user buffer"
        " (copy_to_user / copy_from_user: rep movsb with ERMS/FSRM). Estimate: no authoritative figure;"
        " a single-core streaming copy of DRAM-resident data runs ~8-12 GB/s on Skylake/Cascade Lake-SP"
        " server cores, ~12-20 GB/s on Ice Lake-SP/Zen 3/Zen 4; 3.5 bytes/cycle is ~11 GB/s at 3.2 GHz",
    )
    activity: dict[str, float] = Field(
        default_factory=lambda: {"user": 1.0, "kernel": 1.0, "poll": 0.6, "spin": 0.45},
        description="dynamic-power activity factor by kind of work: user code, kernel code, a block-layer"
        " poll loop, the cpuidle POLL spin (tight loops touch few cache lines)",
    )

    @model_validator(mode="after")
    def _check(self):
        if self.logical_cpus > 8192:
            raise ValueError(f"{self.logical_cpus} logical CPUs: Linux's largest NR_CPUS is 8192")
        if not self.min_freq_ghz <= self.base_freq_ghz <= self.max_freq_ghz:
            raise ValueError("need min_freq_ghz <= base_freq_ghz <= max_freq_ghz")
        if not self.cstates:
            raise ValueError("cstates: at least one idle state is needed")
        for i, st in enumerate(self.cstates):
            if st.polling and i != 0:
                raise ValueError(f"cstates[{i}] ({st.name}): only the first state may be a polling state")
        names = [st.name for st in self.cstates]
        self._check_cstate_table(names)
        for name in self.cpuidle_disable:
            if name not in names:
                raise ValueError(f"cpuidle_disable: no idle state '{name}' (states: {', '.join(names)})")
        for k in ("user", "kernel", "poll", "spin"):
            if k not in self.activity:
                raise ValueError(f"activity: missing kind '{k}'")
        self._check_turbo()
        self._check_limits()
        return self

    def _check_turbo(self) -> None:
        """Turbo limits between the base and the maximum frequency, never rising with more cores."""
        if self.all_core_turbo_ghz is not None and not (
            self.base_freq_ghz <= self.all_core_turbo_ghz <= self.max_freq_ghz
        ):
            raise ValueError(
                f"all_core_turbo_ghz {self.all_core_turbo_ghz:g}: need base_freq_ghz ({self.base_freq_ghz:g}) <="
                f" all_core_turbo_ghz <= max_freq_ghz ({self.max_freq_ghz:g})"
            )
        last = None
        for n in sorted(self.turbo_ratio_limits_ghz):
            ghz = self.turbo_ratio_limits_ghz[n]
            if not 1 <= n <= self.physical_cores:
                raise ValueError(f"turbo_ratio_limits_ghz: {n} active cores (a package has 1 to {self.physical_cores})")
            if not self.base_freq_ghz <= ghz <= self.max_freq_ghz:
                raise ValueError(
                    f"turbo_ratio_limits_ghz[{n}] = {ghz:g} GHz: need base_freq_ghz ({self.base_freq_ghz:g}) <="
                    f" GHz <= max_freq_ghz ({self.max_freq_ghz:g})"
                )
            if last is not None and ghz > last[1]:
                raise ValueError(
                    f"turbo_ratio_limits_ghz[{n}] = {ghz:g} GHz is above [{last[0]}] = {last[1]:g}: the limit"
                    " never rises with more active cores"
                )
            last = (n, ghz)
        if last is not None and self.all_core_turbo_ghz is not None and self.all_core_turbo_ghz > last[1]:
            raise ValueError(
                f"all_core_turbo_ghz {self.all_core_turbo_ghz:g} is above turbo_ratio_limits_ghz[{last[0]}] ="
                f" {last[1]:g}"
            )

    def _check_limits(self) -> None:
        """PL2 at or above PL1, EDC at or above TDC (the short-term and peak limits refine the
        sustained ones). Without power_limit_w there are no package limits at all."""
        if self.pl2_w is not None and self.power_limit_w is not None and self.pl2_w < self.power_limit_w:
            raise ValueError(
                f"pl2_w {self.pl2_w:g} W is below power_limit_w (PL1) {self.power_limit_w:g} W: set pl2_w too"
                " (at least PL1), or null for no short-term limit"
            )
        if self.tdc_a is not None and self.edc_a is not None and self.edc_a < self.tdc_a:
            raise ValueError(
                f"edc_a {self.edc_a:g} A is below tdc_a {self.tdc_a:g} A: EDC is the peak limit (set edc_a too,"
                " or null)"
            )

    def _check_cstate_table(self, names: list[str]) -> None:
        """A table as cpuidle has it: one name per state, shallowest first (exit latency and target
        residency never decrease: the governors walk it in order and stop at the first state too
        deep), and no state that takes longer to leave than its target residency (entering it
        could never pay; cpuidle's drivers keep target_residency >= exit_latency)."""
        seen: dict[str, int] = {}
        for i, st in enumerate(self.cstates):
            if st.name in seen:
                raise ValueError(
                    f"cstates[{i}]: the name '{st.name}' is also cstates[{seen[st.name]}]'s (each state "
                    "needs its own: residencies are reported by name)"
                )
            seen[st.name] = i
            if st.exit_latency_ns > st.target_residency_ns:
                raise ValueError(
                    f"cstates[{i}] ({st.name}): exit_latency_ns {st.exit_latency_ns:g} is longer than "
                    f"target_residency_ns {st.target_residency_ns:g}"
                )
            if i:
                prev = self.cstates[i - 1]
                for field in ("exit_latency_ns", "target_residency_ns"):
                    if getattr(st, field) < getattr(prev, field):
                        raise ValueError(
                            f"cstates[{i}] ({st.name}): {field} {getattr(st, field):g} is below "
                            f"cstates[{i - 1}] ({prev.name})'s {getattr(prev, field):g}: list the "
                            "states shallowest first"
                        )

    @property
    def total_cores(self) -> int:
        """Physical cores of every socket."""
        return self.physical_cores * self.sockets

    @property
    def logical_cpus(self) -> int:
        return self.total_cores * (2 if self.smt else 1)

    def node_of_cpu(self, cpu: int) -> int:
        """The NUMA node (socket) of logical CPU ``cpu`` (Linux's numbering: see ``sockets``)."""
        return (cpu % self.total_cores) // self.physical_cores

    def node_cpus(self, node: int) -> tuple[int, ...]:
        """The logical CPUs of NUMA node ``node``, in id order."""
        return tuple(c for c in range(self.logical_cpus) if self.node_of_cpu(c) == node)

    @property
    def top_freq_ghz(self) -> float:
        """Frequency the performance governor runs at."""
        return self.max_freq_ghz if self.turbo else self.base_freq_ghz

    def turbo_limits_ghz(self) -> list[float]:
        """The turbo frequency limit by number of active cores, index 0 .. physical_cores (0 and 1:
        the one-core limit). Without turbo every entry is base_freq_ghz."""
        n_cores = self.physical_cores
        if not self.turbo:
            return [self.base_freq_ghz] * (n_cores + 1)
        top = self.max_freq_ghz
        table = self.turbo_ratio_limits_ghz
        if table:
            keys = sorted(table)
            rest = table[keys[-1]] if self.all_core_turbo_ghz is None else self.all_core_turbo_ghz
            out = [top]
            for n in range(1, n_cores + 1):
                out.append(next((table[k] for k in keys if k >= n), rest))
            out[0] = out[1]
            return out
        low = top if self.all_core_turbo_ghz is None else self.all_core_turbo_ghz
        out = [top, top]
        for n in range(2, n_cores + 1):
            ghz = top + (low - top) * (n - 1) / (n_cores - 1)
            step = self.pstate_step_ghz
            out.append(max(low, round(math.floor(ghz / step + 1e-9) * step, 9)))
        return out

    @property
    def idle_package_w(self) -> float:
        """One package idle: every core in its deepest enabled idle state, the uncore in a package
        C-state if that state allows it (the running averages' start, ``power_limit_initial_avg_w``)."""
        states = [st for st in self.cstates if st.name not in self.cpuidle_disable and not st.polling]
        if not states:  # idle=poll: the cores spin in POLL
            spin = self.busy_power_w(self.top_freq_ghz, self.activity["spin"])
            return self.physical_cores * spin + self.uncore_active_w
        deepest = states[-1]
        uncore = self.uncore_idle_w if deepest.package_deep else self.uncore_active_w
        return self.physical_cores * deepest.power_w + uncore

    def voltage_v(self, freq_ghz: float) -> float:
        """Core voltage at ``freq_ghz``: linear V/f curve between the min and max points."""
        span = self.max_freq_ghz - self.min_freq_ghz
        frac = 0.0 if span <= 0 else (freq_ghz - self.min_freq_ghz) / span
        return self.voltage_at_min_v + frac * (self.voltage_at_max_v - self.voltage_at_min_v)

    def busy_power_w(self, freq_ghz: float, activity: float) -> float:
        """Power of one physical core in C0: leakage ~ V^2, dynamic ~ a * V^2 * f (W)."""
        v2 = (self.voltage_v(freq_ghz) / self.voltage_at_max_v) ** 2
        return v2 * (self.core_leakage_w + self.core_dynamic_w * activity * freq_ghz / self.max_freq_ghz)
