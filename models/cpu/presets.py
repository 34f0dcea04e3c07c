"""CPU presets with cited values.

Sources (see docs/cpu.md):
- [ARK] Intel ARK / AMD product pages: core counts, base/turbo/min frequency, TDP.
- [IDLE] Linux ``drivers/idle/intel_idle.c`` state tables (exit latency / target residency, us);
  AMD via ACPI _CST.
- [SANDMAN] Zhou et al., SOSP 2025 (scenarios/data/reference/sandman_polling_server.yaml): EPYC 9454P exit latencies,
  frequency range and transition time.
Per-state and per-core powers are *estimates* split from TDP (no vendor publishes them per core):
the C0 budget of a fully loaded package is divided between cores and uncore, and idle-state powers
follow the usual ratios (C1 clock-gated ~ leakage, C1E at minimum voltage, C6 power-gated ~ 0).
Platforms refine them by calibration against measured power (see models/platforms.py).
"""

from __future__ import annotations

from models.cpu.config import CpuConfig, CStateConfig


def _cs(name, exit_us, resid_us, power_w, **kw) -> CStateConfig:
    return CStateConfig(
        name=name, exit_latency_ns=exit_us * 1000.0, target_residency_ns=resid_us * 1000.0, power_w=power_w, **kw
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


CPU_PRESETS = {
    "xeon-e3-1230-v5": xeon_e3_1230_v5,
    "xeon-e5-2660-v4": xeon_e5_2660_v4,
    "xeon-e5-2640-v4": xeon_e5_2640_v4,
    "xeon-silver-4210r": xeon_silver_4210r,
    "epyc-9454p": epyc_9454p,
}
