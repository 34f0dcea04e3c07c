"""The catalogue presets' power estimates (:mod:`models.cpu.presets`): core and uncore power
coefficients split from the TDP so that a busy package at the base clock draws its TDP, AMD's TDC
and EDC derived from the PPT, and the sources of the Intel presets' PL2. Every value here is an
estimate or a recalled figure, named as such in the presets' sources (docs/cpu.md, "Preset
limits")."""

from __future__ import annotations

import math

from models.cpu.config import CpuConfig

_UNCORE_SHARE = 0.3
#: EDC / TDC: the Ryzen 9 5950X's defaults, 140 A / 95 A (Ryzen Master; recalled) [AMDLIM]
_EDC_OVER_TDC = 140.0 / 95.0


def amd_current_limits(cfg: CpuConfig) -> tuple[float, float]:
    """(TDC, EDC) in A, estimates [AMDLIM]: TDC is the cores' current when they draw the PPT less the
    active uncore at the base clock's voltage, EDC is 140/95 of it."""
    assert cfg.power_limit_w is not None
    tdc = (cfg.power_limit_w - cfg.uncore_active_w) / cfg.voltage_v(cfg.base_freq_ghz)
    return math.ceil(tdc), math.ceil(tdc * _EDC_OVER_TDC)  # rounded up: PPT binds first at base


_AMDLIM_TDC = (
    "estimate: the cores' current when they draw the PPT less the active uncore at the base clock's"
    " voltage (PPT binds before TDC down to the base clock); no public EPYC figure"
)
_AMDLIM_EDC = "estimate: 140/95 x TDC, the ratio of the Ryzen 9 5950X's 140 A EDC / 95 A TDC (Ryzen Master; recalled)"
_INTEL_PL2 = (
    "recalled: PL2 = 1.2 x TDP on Xeon servers (Intel Xeon datasheets vol. 1; not re-checked), as"
    " powercap's short_term constraint reports it"
)
_INTEL_PL2_WIN = "estimate: about 10 ms, the short window of Xeon server boards (not found in a primary source)"


def power_split(
    tdp_w: float, cores: int, base: float, top: float, fmin: float, vmin: float, vmax: float, smt: bool = True
):
    """Core and uncore power coefficients split from the TDP (every one an estimate: no vendor
    publishes them): the package draws its TDP with every core busy at the base clock, both SMT
    siblings of each (activity 1 + ``smt_second_thread_activity``, the default 0.3); 30% goes to
    the uncore (the Silver 4210R preset's 30 of 100 W), the rest to the cores; a core's power at the
    top clock and activity 1 is a quarter leakage and three quarters dynamic, scaled to the base
    clock by the V/f line (:meth:`CpuConfig.busy_power_w`). Returns the table entries and the C1
    and C1E core powers (leakage at the top and at the lowest voltage)."""
    per_core = (1 - _UNCORE_SHARE) * tdp_w / cores
    v_base = vmin + (vmax - vmin) * (base - fmin) / (top - fmin) if top > fmin else vmax  # one clock: at the top
    act = 1.0 + (CpuConfig.model_fields["smt_second_thread_activity"].default if smt else 0.0)
    at_top = per_core / ((v_base / vmax) ** 2 * (0.25 + 0.75 * act * base / top))
    # rounded down: the split's package at base stays within its TDP
    leak, dyn = math.floor(25 * at_top) / 100, math.floor(75 * at_top) / 100
    how = (
        f"estimate: the {tdp_w:g} W TDP with {cores} cores busy at {base:g} GHz{', both SMT siblings' if smt else ''},"
        f" 70% to the cores ({per_core:.2f} W each); a core at {top:g} GHz and activity 1 draws {at_top:.2f} W,"
        " 1/4 leakage, 3/4 dynamic"
    )
    uncore = round(_UNCORE_SHARE * tdp_w, 1)
    table = {
        "core_leakage_w": (leak, how),
        "core_dynamic_w": (dyn, how),
        "uncore_active_w": (uncore, f"estimate: 30% of the {tdp_w:g} W TDP (the Silver 4210R preset's share)"),
        "uncore_idle_w": (
            round(0.3 * uncore, 1),
            "estimate: 0.3 of the active uncore in a package C-state (the Silver 4210R preset's 9 of 30 W)",
        ),
    }
    return table, leak, round(leak * (vmin / vmax) ** 2, 2)
