"""CPU presets with cited values.

Sources (see docs/cpu.md):
- [ARK] Intel ARK / AMD product pages: core counts, base/turbo/min frequency, TDP.
- [IDLE] Linux ``drivers/idle/intel_idle.c`` state tables (exit latency / target residency, us);
  AMD via ACPI _CST.
- [SANDMAN] Zhou et al., SOSP 2025 (scenarios/data/reference/sandman_polling_server.yaml): EPYC 9454P exit latencies,
  frequency range and transition time.
- [RAPL] the package power limits (docs/cpu.md, "Package power limits"): PL1 = TDP over a time
  window Tau (1 s on server boards; 28 s and longer on client parts), PL2 = 1.2 x TDP on Xeon
  servers (recalled: Intel Xeon E5 v4 and Xeon Scalable datasheets, vol. 1, not re-checked here),
  1.25 x TDP on client parts (recalled: Intel's desktop datasheets), over a short window: 2.44 ms as
  Linux's powercap reports it on client parts (``constraint_1_time_window_us`` 2440, recalled),
  about 10 ms on servers (estimate).
- [TURBO] all-core turbo (the last entry of MSR_TURBO_RATIO_LIMIT): recalled from Intel's
  specification updates and the public turbo-bin tables (WikiChip), not re-checked; the bins
  between one core and all cores are interpolated (an estimate, ``CpuConfig.all_core_turbo_ghz``).
- [AMDLIM] AMD's current limits (TDC sustained, EDC peak): no public per-part figure for EPYC;
  estimates: TDC = the cores' current when they draw the PPT less the uncore at the base clock's
  voltage (PPT binds before TDC down to the base clock), EDC = 140/95 x TDC (the ratio of the
  Ryzen 9 5950X's defaults, TDC 95 A and EDC 140 A as Ryzen Master reports them, recalled).
Per-state and per-core powers are *estimates* split from TDP (no vendor publishes them per core):
the C0 budget of a fully loaded package (every core busy at the base clock, both SMT siblings of
each, as Intel and AMD define the TDP) is divided between cores and uncore, and idle-state powers
follow the usual ratios (C1 clock-gated ~ leakage, C1E at minimum voltage, C6 power-gated ~ 0).
Platforms refine them by calibration against measured power (see models/platforms.py).

The catalogue (:data:`CPU_CATALOGUE`, docs/presets.md) carries each preset's values with their
sources (:mod:`simcore.sources`): the presets after the first five declare every value beside its
source; the first five keep their docstring tags, turned into per-field sources in the catalogue.
"""

from __future__ import annotations

from models.cpu.config import CpuConfig, CStateConfig
from models.cpu.preset_power import (
    _AMDLIM_EDC,
    _AMDLIM_TDC,
    _INTEL_PL2,
    _INTEL_PL2_WIN,
    amd_current_limits,
    power_split,
)
from simcore.sources import Preset, split


def _cs(name, exit_us, resid_us, power_w, **kw) -> CStateConfig:
    return CStateConfig(
        name=name, exit_latency_ns=exit_us * 1000.0, target_residency_ns=resid_us * 1000.0, power_w=power_w, **kw
    )


#: a modified line moved from one core to another of a Xeon Scalable (Skylake-SP and later: the
#: cores on a mesh, not Broadwell-EP's ring), ns
MESH_LINE_TRANSFER_NS = 70.0
_MESH_LINE = (
    "estimate: the core-to-core latency of a modified line across the Xeon Scalable mesh (Skylake-SP,"
    " Cascade Lake-SP, Ice Lake-SP), 60-80 ns in ping-pong measurements (Intel MLC --c2c_latency,"
    " core-to-core latency tools; recalled, not re-read), against 40 ns on Broadwell-EP's ring (John"
    " McCalpin, Intel forum); a time in the uncore, at the mesh's clock: measure yours with"
    " mlc --c2c_latency"
)


def xeon_e3_1230_v5(**overrides) -> CpuConfig:
    """Intel Xeon E3-1230 v5 (Skylake, 14 nm, 80 W TDP). [ARK]: 4C/8T, 3.4 GHz base, 3.8 GHz turbo;
    800 MHz lowest P-state. C-states: Skylake client table [IDLE]; C9/C10 are not offered on server
    boards (R230) and are left out."""
    cfg = dict(
        model="Intel Xeon E3-1230 v5",
        physical_cores=4,
        smt=True,
        base_freq_ghz=3.4,
        max_freq_ghz=3.8,
        min_freq_ghz=0.8,
        pause_cycles=140.0,  # Skylake: 'as many as 140 cycles' (Intel optimization manual, 2.5.4)
        voltage_at_min_v=0.70,
        voltage_at_max_v=1.20,
        pstate_transition_ns=20_000.0,  # driver-declared transition latency (Appendix A, P-states)
        power_limit_w=80.0,  # PL1 = TDP [ARK]; 1 s time window (a common BIOS default; estimate)
        pl2_w=100.0,  # PL2 = 1.25 x TDP, Intel's recommendation for its client-derived parts [RAPL]
        pl2_window_ms=2.44,  # powercap's short_term window on client parts, 2440 us [RAPL]
        all_core_turbo_ghz=3.6,  # [TURBO]
        cstates=(
            _cs("POLL", 0, 0, 0.0, polling=True),
            _cs("C1", 2, 2, 2.4),
            _cs("C1E", 10, 20, 1.3),
            # C3 and deeper flush the core's L1/L2 into the LLC (C7s and C8 the LLC too)
            _cs("C3", 70, 100, 0.5, package_deep=True, flushes_core_caches=True),
            _cs("C6", 85, 200, 0.05, package_deep=True, flushes_core_caches=True),
            _cs("C7s", 124, 800, 0.05, package_deep=True, flushes_core_caches=True),
            _cs("C8", 200, 800, 0.04, package_deep=True, flushes_core_caches=True),
        ),
        # 80 W TDP at 4 busy cores: ~4 x 15.5 W cores + ~8 W uncore (estimate, see module doc).
        core_leakage_w=3.5,
        core_dynamic_w=12.0,
        uncore_active_w=8.0,
        uncore_idle_w=1.5,
    )
    cfg.update(overrides)
    return CpuConfig(**cfg)


def xeon_e5_2660_v4(**overrides) -> CpuConfig:
    """Intel Xeon E5-2660 v4 (Broadwell-EP, 14 nm, 105 W TDP). [ARK]: 14C/28T, 2.0 GHz base,
    3.2 GHz turbo, 1.2 GHz lowest P-state. C-states: the server table C1 2/2, C1E 10/20, C6 133/600
    [IDLE, Appendix A]."""
    cfg = dict(
        model="Intel Xeon E5-2660 v4",
        physical_cores=14,
        smt=True,
        base_freq_ghz=2.0,
        max_freq_ghz=3.2,
        min_freq_ghz=1.2,
        pause_cycles=10.0,  # Broadwell: 'about 10 cycles' (Intel optimization manual, 2.5.4)
        copy_bytes_per_cycle=3.0,  # estimate: ~8-10 GB/s single-core DRAM copy on Broadwell-EP at ~3 GHz
        voltage_at_min_v=0.75,
        voltage_at_max_v=1.15,
        pstate_transition_ns=20_000.0,
        power_limit_w=105.0,  # PL1 = TDP [ARK]; 1 s time window (a common BIOS default; estimate)
        pl2_w=126.0,  # PL2 = 1.2 x TDP on Xeon servers [RAPL]
        pl2_window_ms=10.0,  # [RAPL] estimate
        all_core_turbo_ghz=2.6,  # [TURBO]
        cstates=(
            _cs("POLL", 0, 0, 0.0, polling=True),
            _cs("C1", 2, 2, 1.6),
            _cs("C1E", 10, 20, 1.0),
            _cs("C6", 133, 600, 0.05, package_deep=True, flushes_core_caches=True),  # core power-gated
        ),
        # 105 W TDP with 14 busy cores at base: ~14 x 5.6 W + ~26 W uncore (estimate).
        core_leakage_w=1.6,
        core_dynamic_w=6.5,
        uncore_active_w=26.0,
        uncore_idle_w=8.0,
    )
    cfg.update(overrides)
    return CpuConfig(**cfg)


def xeon_e5_2640_v4(**overrides) -> CpuConfig:
    """Intel Xeon E5-2640 v4 (Broadwell-EP, 14 nm, 90 W TDP). [ARK]: 10C/20T, 2.4 GHz base, 3.4 GHz
    turbo, 1.2 GHz lowest P-state, 25 MB L3, 2-socket capable. The E5-2660 v4's generation: the same
    C-state table (C1 2/2, C1E 10/20, C6 133/600 us) [IDLE] and PAUSE (~10 cycles). Powers: estimates
    split from TDP as for the other presets (10 busy cores at base ~ 10 x 6.2 W + ~24 W uncore)."""
    cfg = xeon_e5_2660_v4().model_dump()
    cfg.update(
        model="Intel Xeon E5-2640 v4",
        physical_cores=10,
        base_freq_ghz=2.4,
        max_freq_ghz=3.4,
        power_limit_w=90.0,  # PL1 = TDP [ARK]
        pl2_w=108.0,  # PL2 = 1.2 x TDP [RAPL]
        all_core_turbo_ghz=2.6,  # [TURBO]
        core_dynamic_w=6.2,
        uncore_active_w=24.0,
        uncore_idle_w=7.5,
    )
    cfg.update(overrides)
    return CpuConfig(**cfg)


def xeon_silver_4210r(**overrides) -> CpuConfig:
    """Intel Xeon Silver 4210R (Cascade Lake-SP, 14 nm, 100 W TDP). [ARK]: 10C/20T per socket,
    2.4 GHz base, 3.2 GHz turbo, 1.0 GHz lowest P-state, 13.75 MB L3, 2-socket capable. C-states:
    the kernel's ``skx_cstates`` table (Skylake-SP and Cascade Lake-SP) [IDLE]: C1 2/2, C1E 10/20,
    C6 133/600 us (the TLB is flushed and the core power-gated). Powers: estimates split from TDP as
    for the other presets (10 busy cores at base ~ 10 x 6.4 W + ~30 W uncore)."""
    cfg = dict(
        model="Intel Xeon Silver 4210R",
        physical_cores=10,
        smt=True,
        base_freq_ghz=2.4,
        max_freq_ghz=3.2,
        min_freq_ghz=1.0,
        voltage_at_min_v=0.75,
        voltage_at_max_v=1.15,
        pstate_transition_ns=20_000.0,
        power_limit_w=100.0,  # PL1 = TDP [ARK]
        pl2_w=120.0,  # PL2 = 1.2 x TDP [RAPL]
        pl2_window_ms=10.0,  # [RAPL] estimate
        all_core_turbo_ghz=2.9,  # [TURBO] estimate
        cstates=(
            _cs("POLL", 0, 0, 0.0, polling=True),
            _cs("C1", 2, 2, 1.8),
            _cs("C1E", 10, 20, 1.1),
            _cs("C6", 133, 600, 0.05, package_deep=True, flushes_core_caches=True),
        ),
        core_leakage_w=1.8,
        core_dynamic_w=6.4,
        uncore_active_w=30.0,
        uncore_idle_w=9.0,
        line_transfer_ns=MESH_LINE_TRANSFER_NS,  # the mesh's (_MESH_LINE)
    )
    cfg.update(overrides)
    return CpuConfig(**cfg)


def epyc_9454p(**overrides) -> CpuConfig:
    """AMD EPYC 9454P (Zen 4, 290 W TDP). [ARK/AMD]: 48C/96T, 2.75 GHz base, 3.8 GHz boost; the
    SANDMAN setup runs 3.65 GHz all-core and 400 MHz minimum, with >450 us min-to-max frequency
    transitions [SANDMAN]. C-states via ACPI: C1 about 1/2 us; C2 exit 400 / residency 800 us
    [Appendix A], the deep end of the reported range."""
    cfg = dict(
        model="AMD EPYC 9454P",
        physical_cores=48,
        smt=True,
        base_freq_ghz=2.75,
        max_freq_ghz=3.65,
        min_freq_ghz=0.4,
        # Zen 2 and later: PAUSE of the order of Skylake's (tens of cycles; public microbenchmarks, no
        # vendor figure): estimate 64
        pause_cycles=64.0,
        copy_bytes_per_cycle=5.0,  # estimate: ~15-20 GB/s single-core DRAM copy on Zen 4 at ~3.6 GHz
        turbo=True,
        voltage_at_min_v=0.65,
        voltage_at_max_v=1.10,
        pstate_transition_ns=450_000.0,
        power_limit_w=290.0,  # PPT = TDP [AMD]
        power_limit_window_ms=1.0,  # the SMU enforces PPT within about a millisecond: no extra smoothing (estimate)
        # [AMDLIM] estimates: TDC lets PPT bind down to the base clock, EDC 140/95 x TDC
        tdc_a=255.0,
        edc_a=375.0,
        cstates=(
            _cs("POLL", 0, 0, 0.0, polling=True),
            _cs("C1", 1, 2, 1.9),
            _cs("C2", 400, 800, 0.12, package_deep=True, flushes_core_caches=True),  # CC6: L1/L2 flushed
        ),
        # 290 W TDP split as 48 x ~4.6 W cores + ~70 W IO die / uncore (estimate).
        core_leakage_w=1.5,
        core_dynamic_w=3.6,
        uncore_active_w=42.0,
        uncore_idle_w=40.0,
    )
    cfg.update(overrides)
    return CpuConfig(**cfg)


# ---------------------------------------------------------------------------------------------------
# The catalogue presets: every value beside its source, ``field: (value, source)`` (simcore.sources).

_IDLE = "exact: Linux drivers/idle/intel_idle.c, {} (exit latency / target residency, us; v6.3-6.6 copy)"
_ACPI = (
    "recalled: ACPI _CST as acpi_idle reports it on EPYC Rome/Milan/Genoa (cpupower idle-info: C1 1 us,"
    " C2 400 us; target residency = latency x latency_factor 2, drivers/acpi/processor_idle.c); a"
    " placeholder: BIOSes report C2 at 18-400 us, read yours in /sys/devices/system/cpu/cpu0/cpuidle"
)
_STATE_POWER = (
    "estimate: C1 (clock-gated) = core_leakage_w; C1E (minimum voltage) = core_leakage_w x"
    " (voltage_at_min_v / voltage_at_max_v)^2; C6/CC6 and deeper (power-gated) 0.05 W: no vendor"
    " publishes per-core state powers"
)
_FLAGS = (
    "derived: the state's MWAIT hint is a core C6 or deeper (0x20 and up; AMD CC6 via C2), which power-gates"
    " the core and flushes its L1/L2 (package_deep: the package may follow)"
)
_INTEL_V = "estimate: server Xeon V/f end points as the Silver 4210R preset (0.75 V lowest, 1.15 V top)"
_AMD_V = "estimate: as the EPYC 9454P preset (0.65 V lowest, 1.10 V top)"
_INTEL_PSTATE = "estimate: intel_pstate's declared 20 us transition latency, as the other Intel presets"
_AMD_PSTATE = (
    "estimate: SANDMAN's measured >450 us min-to-max transition on the EPYC 9454P (Zhou et al., SOSP 2025),"
    " taken for every EPYC generation"
)
_INTEL_PAUSE = (
    "recalled: Intel optimization manual 2.5.4: PAUSE takes 'as many as 140 cycles' from Skylake on"
    " (not re-measured for this generation)"
)
_AMD_PAUSE = "estimate: as the EPYC 9454P preset (Zen 2 and later: tens of cycles in public microbenchmarks)"


def _shared(vendor: str) -> dict:
    """The estimates a vendor's catalogue CPUs share, ``field: (value, source)``."""
    intel = vendor == "intel"
    shared = {
        "smt": (True, "recalled: vendor product page (2 threads per core)"),
        "voltage_at_min_v": (0.75 if intel else 0.65, _INTEL_V if intel else _AMD_V),
        "voltage_at_max_v": (1.15 if intel else 1.10, _INTEL_V if intel else _AMD_V),
        "pstate_transition_ns": (20_000.0, _INTEL_PSTATE) if intel else (450_000.0, _AMD_PSTATE),
        "pause_cycles": (140.0, _INTEL_PAUSE) if intel else (64.0, _AMD_PAUSE),
    }
    if not intel:
        shared["power_limit_window_ms"] = (
            1.0,
            "estimate: the SMU enforces PPT within about a millisecond (as the EPYC 9454P preset)",
        )
    return shared


def _states(rows, leak: float, c1e: float) -> tuple:
    """Idle states from (name, exit us, residency us) rows of a driver table: POLL first (cpuidle's
    ``cpuidle_poll_state_init``), per-core powers by :data:`_STATE_POWER`."""
    states = [_cs("POLL", 0, 0, 0.0, polling=True)]
    for name, exit_us, resid_us in rows:
        deep = name not in ("C1", "C1E")
        power = 0.05 if deep else (leak if name == "C1" else c1e)
        states.append(_cs(name, exit_us, resid_us, power, package_deep=deep, flushes_core_caches=deep))
    return tuple(states)


def _catalogue_cpu(spec: dict, vendor: str, rows, table: str, **extra) -> tuple[dict, dict]:
    """(values, sources) of a catalogue CPU: its datasheet ``spec``, the shared estimates and the idle
    states of ``rows`` (from driver table ``table``); ``extra``: further ``field: (value, source)``."""
    values, sources = split({**_shared(vendor), **spec, **extra})
    power, leak, c1e = power_split(
        values["power_limit_w"],
        values["physical_cores"],
        values["base_freq_ghz"],
        values["max_freq_ghz"],
        values["min_freq_ghz"],
        values["voltage_at_min_v"],
        values["voltage_at_max_v"],
        values.get("smt", True),
    )
    for name, (value, source) in power.items():
        values[name], sources[name] = value, source
    if vendor == "amd":
        tdc, edc = amd_current_limits(CpuConfig(**values, cstates=_states(rows, leak, c1e)))
        values["tdc_a"], sources["tdc_a"] = tdc, _AMDLIM_TDC
        values["edc_a"], sources["edc_a"] = edc, _AMDLIM_EDC
    values["cstates"] = _states(rows, leak, c1e)
    sources["cstates"] = (_IDLE.format(table) if vendor == "intel" else _ACPI) + "; POLL: cpuidle_poll_state_init"
    sources["cstates.power_w"] = _STATE_POWER
    sources["cstates.package_deep"] = _FLAGS
    return values, sources


def _ark(model: str) -> str:
    return f"recalled: Intel ARK, {model} (not re-checked)"


def _amd(model: str) -> str:
    return f"recalled: AMD product page, {model} (not re-checked)"


#: kernel tables (name, exit latency us, target residency us)
SKX_CSTATES = (("C1", 2, 2), ("C1E", 10, 20), ("C6", 133, 600))
ICX_CSTATES = (("C1", 1, 1), ("C1E", 4, 4), ("C6", 170, 600))
SPR_CSTATES = (("C1", 1, 1), ("C1E", 2, 4), ("C6", 290, 800))
#: adl_cstates without C1: the driver marks it UNUSABLE while C1E promotion is on (the default:
#: "On AlderLake C1 has to be disabled if C1E is enabled"), so cpuidle never lists it
ADL_CSTATES = (("C1E", 2, 4), ("C6", 220, 600), ("C8", 280, 800), ("C10", 680, 2000))
#: ACPI _CST on EPYC (acpi_idle): C1 1 us, C2 400 us, residency = 2 x latency
EPYC_CSTATES = (("C1", 1, 2), ("C2", 400, 800))


def _intel_server(model, cores, base, top, tdp, table, rows, fmin=(1.0, ""), all_core=(None, "")):
    """An Intel Xeon of the catalogue: ARK's cores, clocks and TDP, ``table``'s idle states, its
    all-core turbo, PL2 = 1.2 x TDP."""
    src = _ark(model)
    fmin_v, fmin_src = fmin
    spec = {
        "model": (model, src),
        "physical_cores": (cores, src),
        "base_freq_ghz": (base, src),
        "max_freq_ghz": (top, src + "; max turbo, one core"),
        "min_freq_ghz": (fmin_v, fmin_src or "estimate: the lowest P-state of Xeon servers (ARK lists none)"),
        "power_limit_w": (tdp, src + "; PL1 = TDP"),
        "pl2_w": (round(1.2 * tdp, 1), _INTEL_PL2),
        "pl2_window_ms": (10.0, _INTEL_PL2_WIN),
        "all_core_turbo_ghz": all_core,
        "line_transfer_ns": (MESH_LINE_TRANSFER_NS, _MESH_LINE),
    }
    return _catalogue_cpu(spec, "intel", rows, table)


def _epyc(model, cores, base, top, tdp, fmin):
    """An AMD EPYC of the catalogue: AMD's cores, clocks and default TDP, ACPI's idle states."""
    src = _amd(model)
    spec = {
        "model": (model, src),
        "physical_cores": (cores, src),
        "base_freq_ghz": (base, src),
        "max_freq_ghz": (top, src + "; max boost"),
        "min_freq_ghz": fmin,
        "power_limit_w": (tdp, src + "; PPT = default TDP"),
    }
    return _catalogue_cpu(spec, "amd", EPYC_CSTATES, "ACPI _CST")


_EST_LFM = "estimate: the lowest P-state of Xeon servers ({:g} GHz; ARK lists none)"
_TURBO_REC = "recalled: all-core turbo {:g} GHz, Intel's launch SKU table / WikiChip turbo bins (not re-checked)"
_TURBO_EST = "estimate: all-core turbo {:g} GHz ({}; not found in a primary source)"
_GOLD_6248R = _intel_server(
    "Intel Xeon Gold 6248R",
    24,
    3.0,
    4.0,
    205.0,
    "skx_cstates",
    SKX_CSTATES,
    (1.0, _EST_LFM.format(1.0)),
    (3.5, _TURBO_EST.format(3.5, "half-way between the 3.0 GHz base and the 4.0 GHz one-core turbo")),
)
_GOLD_5318Y = _intel_server(
    "Intel Xeon Gold 5318Y",
    24,
    2.1,
    3.4,
    165.0,
    "icx_cstates",
    ICX_CSTATES,
    (0.8, _EST_LFM.format(0.8)),
    (2.6, _TURBO_REC.format(2.6)),
)
_GOLD_6338 = _intel_server(
    "Intel Xeon Gold 6338",
    32,
    2.0,
    3.2,
    205.0,
    "icx_cstates",
    ICX_CSTATES,
    (0.8, _EST_LFM.format(0.8)),
    (2.6, _TURBO_REC.format(2.6)),
)
_PLATINUM_8380 = _intel_server(
    "Intel Xeon Platinum 8380",
    40,
    2.3,
    3.4,
    270.0,
    "icx_cstates",
    ICX_CSTATES,
    (0.8, _EST_LFM.format(0.8)),
    (3.0, _TURBO_REC.format(3.0)),
)
_PLATINUM_8480P = _intel_server(
    "Intel Xeon Platinum 8480+",
    56,
    2.0,
    3.8,
    350.0,
    "spr_cstates",
    SPR_CSTATES,
    (0.8, _EST_LFM.format(0.8)),
    (3.0, _TURBO_REC.format(3.0)),
)
#: Sapphire Rapids is not in the reference notes' ARK table: its figures are recalled from memory
_SPR_NOTE = "recalled: Intel ARK, Xeon Platinum 8480+ (from memory, not in the catalogue's reference notes: check it)"
for _f in ("model", "physical_cores", "base_freq_ghz", "max_freq_ghz", "power_limit_w"):
    _PLATINUM_8480P[1][_f] = _SPR_NOTE


def xeon_gold_6248r(**overrides) -> CpuConfig:
    """Intel Xeon Gold 6248R (Cascade Lake-SP refresh, 14 nm): 24C/48T, 3.0 / 4.0 GHz, 205 W,
    35.75 MB L3, 2 sockets; the kernel's ``skx_cstates`` (C1 2/2, C1E 10/20, C6 133/600 us)."""
    return CpuConfig(**{**_GOLD_6248R[0], **overrides})


def xeon_gold_5318y(**overrides) -> CpuConfig:
    """Intel Xeon Gold 5318Y (Ice Lake-SP, 10 nm): 24C/48T, 2.1 / 3.4 GHz, 165 W, 36 MB L3;
    ``icx_cstates`` (C1 1/1, C1E 4/4, C6 170/600 us)."""
    return CpuConfig(**{**_GOLD_5318Y[0], **overrides})


def xeon_gold_6338(**overrides) -> CpuConfig:
    """Intel Xeon Gold 6338 (Ice Lake-SP): 32C/64T, 2.0 / 3.2 GHz, 205 W, 48 MB L3; ``icx_cstates``."""
    return CpuConfig(**{**_GOLD_6338[0], **overrides})


def xeon_platinum_8380(**overrides) -> CpuConfig:
    """Intel Xeon Platinum 8380 (Ice Lake-SP): 40C/80T, 2.3 / 3.4 GHz, 270 W, 60 MB L3; ``icx_cstates``."""
    return CpuConfig(**{**_PLATINUM_8380[0], **overrides})


def xeon_platinum_8480plus(**overrides) -> CpuConfig:
    """Intel Xeon Platinum 8480+ (Sapphire Rapids, Intel 7): 56C/112T, 2.0 / 3.8 GHz, 350 W (figures
    recalled, not in the reference notes); ``spr_cstates`` (C1 1/1, C1E 2/4, C6 290/800 us; with
    package C6 disabled in the BIOS the driver lowers C6 to 190/600: set it with --set)."""
    return CpuConfig(**{**_PLATINUM_8480P[0], **overrides})


_I9_12900K = _catalogue_cpu(
    {
        "model": ("Intel Core i9-12900K (P-cores)", _ark("Core i9-12900K") + "; the 8 P-cores only (see docstring)"),
        "physical_cores": (8, _ark("Core i9-12900K") + ": 8 P-cores (with HT) + 8 E-cores; only the P-cores modelled"),
        "base_freq_ghz": (3.2, _ark("Core i9-12900K") + ": P-core base"),
        "max_freq_ghz": (5.2, _ark("Core i9-12900K") + ": Turbo Boost Max 3.0, the favoured P-cores"),
        "min_freq_ghz": (0.8, "estimate: the 800 MHz lowest P-state of Intel client parts"),
        "power_limit_w": (
            125.0,
            _ark("Core i9-12900K") + ": Processor Base Power 125 W as PL1 (boards often set PL1 = PL2 = the"
            " 241 W Maximum Turbo Power; --set cpu.power_limit_w=241)",
        ),
    },
    "intel",
    ADL_CSTATES,
    "adl_cstates",
    all_core_turbo_ghz=(4.9, _TURBO_REC.format(4.9) + "; every P-core"),
    power_limit_window_ms=(56_000.0, "recalled: Tau = 56 s, Intel's default for 12th Gen K parts (not re-checked)"),
    pl2_w=(241.0, _ark("Core i9-12900K") + ": Maximum Turbo Power 241 W as PL2"),
    pl2_window_ms=(2.44, "recalled: powercap's short_term window on client parts, 2440 us (not re-checked)"),
    voltage_at_min_v=(0.70, "estimate: a desktop part's V/f end points (0.70 V at 0.8 GHz)"),
    voltage_at_max_v=(1.30, "estimate: a desktop part's V/f end points (about 1.3 V at 5.2 GHz)"),
)
_I9_12900K[1]["cstates"] += "; C1 left out: adl_cstates marks it UNUSABLE while C1E promotion is on (the default)"


def core_i9_12900k(**overrides) -> CpuConfig:
    """Intel Core i9-12900K (Alder Lake-S desktop), its 8 P-cores: 3.2 / 5.2 GHz, 125 W; ``adl_cstates``.
    The model has one kind of core, so this preset is the part's **8 P-cores with Hyper-Threading**
    (16 logical CPUs): the 8 E-cores (no SMT, 2.4 / 3.9
    GHz, another power curve) are left out. An IO thread pinned to a P-core sees the P-core's clocks
    and idle states; a workload spread over all 24 threads does not (the E-cores would run it slower
    and at less power). The 125 W base power is split over the P-cores (the E-cores' share goes to
    them: per-core powers are estimates anyway). Idle states: ``adl_cstates`` as the driver exposes
    them by default (C1E 2/4, C6 220/600, C8 280/800, C10 680/2000 us; C1 hidden while C1E
    promotion is on)."""
    return CpuConfig(**{**_I9_12900K[0], **overrides})


_ACPI_LFM = (1.5, "estimate: the lowest P-state acpi-cpufreq offers on Rome and Milan (P2, 1.5 GHz)")
_EPYC_7302 = _epyc("AMD EPYC 7302", 16, 3.0, 3.3, 155.0, _ACPI_LFM)
_EPYC_7763 = _epyc("AMD EPYC 7763", 64, 2.45, 3.5, 280.0, _ACPI_LFM)
_EPYC_9654 = _epyc(
    "AMD EPYC 9654",
    96,
    2.4,
    3.7,
    360.0,
    (0.4, "estimate: SANDMAN's 400 MHz minimum on the EPYC 9454P (the same Genoa generation, amd-pstate)"),
)


def epyc_7302(**overrides) -> CpuConfig:
    """AMD EPYC 7302 (Zen 2 Rome): 16C/32T, 3.0 / 3.3 GHz, 155 W, 128 MB L3; idle states from ACPI
    _CST (acpi_idle: C1 1/2 us, C2 400/800 us, a placeholder for the BIOS's table)."""
    return CpuConfig(**{**_EPYC_7302[0], **overrides})


def epyc_7763(**overrides) -> CpuConfig:
    """AMD EPYC 7763 (Zen 3 Milan): 64C/128T, 2.45 / 3.5 GHz, 280 W, 256 MB L3; ACPI _CST as the 7302."""
    return CpuConfig(**{**_EPYC_7763[0], **overrides})


def epyc_9654(**overrides) -> CpuConfig:
    """AMD EPYC 9654 (Zen 4 Genoa): 96C/192T, 2.4 / 3.7 GHz, 360 W default TDP (cTDP 320-400 W),
    384 MB L3; ACPI _CST as the 7302."""
    return CpuConfig(**{**_EPYC_9654[0], **overrides})


def _tagged(vendor: str, idle: str, **special: str) -> dict[str, str]:
    """The sources of one of the first five presets, from its docstring's tags: [ARK] (vendor
    pages), [IDLE] (the kernel's tables), [SANDMAN]; the power coefficients are estimates split from
    TDP (module docstring); ``special``: per-field sources that differ."""
    sources = {f: vendor for f in ("model", "physical_cores", "base_freq_ghz", "max_freq_ghz", "min_freq_ghz")}
    sources.update(
        power_limit_w=vendor + "; PL1/PPT = TDP",
        voltage_at_min_v="estimate: V/f end points of the generation (no vendor figure)",
        voltage_at_max_v="estimate: V/f end points of the generation (no vendor figure)",
        pstate_transition_ns="estimate: the driver-declared P-state transition latency (20 us)",
        cstates=idle + "; POLL: cpuidle_poll_state_init",
        core_leakage_w="estimate: split from TDP (module docstring)",
        core_dynamic_w="estimate: split from TDP (module docstring)",
        uncore_active_w="estimate: split from TDP (module docstring)",
        uncore_idle_w="estimate: split from TDP (module docstring)",
    )
    sources["cstates.power_w"] = (
        "estimate: the usual ratios (C1 clock-gated ~ leakage, C1E at minimum voltage, C6 power-gated ~ 0)"
    )
    sources.update(special)
    return sources


def _facts(sockets: tuple[int, str], channels: tuple[int, str], family: str) -> dict:
    """Facts about a CPU that are not configuration fields: the sockets it supports (``platform new
    --sockets`` is bounded by it) and its memory channels per socket (a composed platform's DRAM power)."""
    return {"max_sockets": sockets, "memory_channels": channels, "family": (family, "recalled: vendor product page")}


_MEM = "recalled: vendor product page ({} channels of {})"
CPU_CATALOGUE: dict[str, Preset] = {
    "xeon-e3-1230-v5": Preset(
        xeon_e3_1230_v5,
        _tagged(
            "recalled: Intel ARK, Xeon E3-1230 v5 ([ARK])",
            "exact: intel_idle skl_cstates ([IDLE]); C9/C10 left out (not offered on server boards)",
            pause_cycles="recalled: Intel optimization manual 2.5.4 ('as many as 140 cycles' from Skylake)",
            pl2_w="recalled: PL2 = 1.25 x TDP, Intel's recommendation for its client-derived parts ([RAPL])",
            pl2_window_ms="recalled: powercap's short_term window on client parts, 2440 us ([RAPL])",
            all_core_turbo_ghz="recalled: 3.6 GHz with all 4 cores active, low confidence (public turbo-bin"
            " tables; not re-checked); the 2- and 3-core bins interpolated ([TURBO])",
        ),
        _facts((1, "recalled: Intel ARK (1 socket)"), (2, _MEM.format(2, "DDR4-2133")), "Skylake (client/E3)"),
    ),
    "xeon-e5-2660-v4": Preset(
        xeon_e5_2660_v4,
        _tagged(
            "recalled: Intel ARK, Xeon E5-2660 v4 ([ARK])",
            "exact: the Broadwell/Skylake server table C1 2/2, C1E 10/20, C6 133/600 ([IDLE])",
            pause_cycles="recalled: Intel optimization manual 2.5.4 ('about 10 cycles' before Skylake)",
            copy_bytes_per_cycle="estimate: ~8-10 GB/s single-core DRAM copy on Broadwell-EP at ~3 GHz",
            pl2_w=_INTEL_PL2 + " ([RAPL])",
            pl2_window_ms=_INTEL_PL2_WIN + " ([RAPL])",
            all_core_turbo_ghz="recalled: 2.6 GHz all-core turbo (Intel's Xeon E5 v4 specification update,"
            " non-AVX; not re-checked) ([TURBO])",
        ),
        _facts((2, "recalled: Intel ARK (2 sockets)"), (4, _MEM.format(4, "DDR4-2400")), "Broadwell-EP"),
    ),
    "xeon-e5-2640-v4": Preset(
        xeon_e5_2640_v4,
        _tagged(
            "recalled: Intel ARK, Xeon E5-2640 v4 ([ARK])",
            "exact: the Broadwell server table, as the E5-2660 v4 ([IDLE])",
            pause_cycles="recalled: Intel optimization manual 2.5.4 ('about 10 cycles' before Skylake)",
            copy_bytes_per_cycle="estimate: ~8-10 GB/s single-core DRAM copy on Broadwell-EP at ~3 GHz",
            pl2_w=_INTEL_PL2 + " ([RAPL])",
            pl2_window_ms=_INTEL_PL2_WIN + " ([RAPL])",
            all_core_turbo_ghz="recalled: 2.6 GHz all-core turbo (Intel's Xeon E5 v4 specification update,"
            " non-AVX; not re-checked) ([TURBO])",
        ),
        _facts((2, "recalled: Intel ARK (2 sockets)"), (4, _MEM.format(4, "DDR4-2133")), "Broadwell-EP"),
    ),
    "xeon-silver-4210r": Preset(
        xeon_silver_4210r,
        _tagged(
            "recalled: Intel ARK, Xeon Silver 4210R ([ARK])",
            "exact: intel_idle skx_cstates ([IDLE])",
            pl2_w=_INTEL_PL2 + " ([RAPL])",
            pl2_window_ms=_INTEL_PL2_WIN + " ([RAPL])",
            all_core_turbo_ghz="estimate: 2.9 GHz all-core turbo (the Silver 4210's reported 2.7 GHz plus the"
            " refresh's +200 MHz base; not found in a primary source) ([TURBO])",
            line_transfer_ns=_MESH_LINE,
        ),
        _facts((2, "recalled: Intel ARK (1-2 sockets)"), (6, _MEM.format(6, "DDR4-2400")), "Cascade Lake-SP"),
    ),
    "epyc-9454p": Preset(
        epyc_9454p,
        _tagged(
            "recalled: AMD product page, EPYC 9454P ([ARK/AMD])",
            "recalled: ACPI _CST C1 ~1/2 us, C2 400/800 us (the deep end of the reported range)",
            max_freq_ghz="exact: SANDMAN's 3.65 GHz all-core clock (Zhou et al., SOSP 2025)",
            min_freq_ghz="exact: SANDMAN's 400 MHz minimum (Zhou et al., SOSP 2025)",
            pstate_transition_ns="exact: SANDMAN's >450 us min-to-max transition (Zhou et al., SOSP 2025)",
            pause_cycles="estimate: Zen 2 and later, tens of cycles in public microbenchmarks",
            power_limit_window_ms="estimate: the SMU enforces PPT within about a millisecond",
            copy_bytes_per_cycle="estimate: ~15-20 GB/s single-core DRAM copy on Zen 4 at ~3.6 GHz",
            tdc_a=_AMDLIM_TDC + " ([AMDLIM])",
            edc_a=_AMDLIM_EDC + " ([AMDLIM])",
        ),
        _facts(
            (1, "recalled: AMD product page ('P': single socket)"), (12, _MEM.format(12, "DDR5-4800")), "Zen 4 Genoa"
        ),
    ),
    "xeon-gold-6248r": Preset(
        xeon_gold_6248r,
        _GOLD_6248R[1],
        _facts((2, "recalled: Intel ARK (1-2 sockets)"), (6, _MEM.format(6, "DDR4-2933")), "Cascade Lake-SP"),
    ),
    "xeon-gold-5318y": Preset(
        xeon_gold_5318y,
        _GOLD_5318Y[1],
        _facts((2, "recalled: Intel ARK (2 sockets)"), (8, _MEM.format(8, "DDR4-2933")), "Ice Lake-SP"),
    ),
    "xeon-gold-6338": Preset(
        xeon_gold_6338,
        _GOLD_6338[1],
        _facts((2, "recalled: Intel ARK (2 sockets)"), (8, _MEM.format(8, "DDR4-3200")), "Ice Lake-SP"),
    ),
    "xeon-platinum-8380": Preset(
        xeon_platinum_8380,
        _PLATINUM_8380[1],
        _facts((2, "recalled: Intel ARK (2 sockets)"), (8, _MEM.format(8, "DDR4-3200")), "Ice Lake-SP"),
    ),
    "xeon-platinum-8480plus": Preset(
        xeon_platinum_8480plus,
        _PLATINUM_8480P[1],
        _facts((2, _SPR_NOTE + " (2 sockets)"), (8, _SPR_NOTE + " (8 channels of DDR5-4800)"), "Sapphire Rapids"),
    ),
    "core-i9-12900k": Preset(
        core_i9_12900k,
        _I9_12900K[1],
        _facts((1, "recalled: Intel ARK (desktop, 1 socket)"), (2, _MEM.format(2, "DDR5-4800")), "Alder Lake-S"),
    ),
    "epyc-7302": Preset(
        epyc_7302,
        _EPYC_7302[1],
        _facts((2, "recalled: AMD product page (1-2 sockets)"), (8, _MEM.format(8, "DDR4-3200")), "Zen 2 Rome"),
    ),
    "epyc-7763": Preset(
        epyc_7763,
        _EPYC_7763[1],
        _facts((2, "recalled: AMD product page (1-2 sockets)"), (8, _MEM.format(8, "DDR4-3200")), "Zen 3 Milan"),
    ),
    "epyc-9654": Preset(
        epyc_9654,
        _EPYC_9654[1],
        _facts((2, "recalled: AMD product page (1-2 sockets)"), (12, _MEM.format(12, "DDR5-4800")), "Zen 4 Genoa"),
    ),
}
"""Every CPU preset with its sources and facts (docs/presets.md); ``CPU_PRESETS`` maps the names to
the factories."""

CPU_PRESETS = {name: preset.make for name, preset in CPU_CATALOGUE.items()}
