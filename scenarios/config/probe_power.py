"""``stacksim probe``'s power estimates for a CPU no preset is by name, and for a VM: from its class.

/proc and /sys do not tell a machine's power. A CPU that a preset is by name (or ``--cpu NAME``) on
bare metal takes the preset's figures. Otherwise a figure from the nearest preset or built-in
platform would be another machine's: the 48-core storage node's 42 W uncore and 70 W board written
for a 2-vCPU guest. So the probe derives them from what it read, by the CPU's class
(:func:`cpu_class`):

* ``vm``: ``hypervisor`` among /proc/cpuinfo's flags (the CPUID bit a hypervisor sets, Intel SDM
  vol. 2A, CPUID leaf 1 ECX bit 31; arch/x86/include/asm/cpufeatures.h X86_FEATURE_HYPERVISOR). The
  host's power is not observable from the guest: each vCPU is taken as a host core of the server
  class (or of the host CPU a preset is by name), the uncore and DRAM as the guest's share, by its
  vCPUs and its memory; no board, no package limit (the host's);
* ``mobile``: a laptop part by its model name (Intel's U/H/P/Y suffixes, "Mobile", AMD's U/H/HS);
* ``desktop`` and ``server``: the generation's market (:mod:`scenarios.config.preset_match`).

A package's thermal design power is taken as cores x the class's TDP per core
(:func:`class_tdp_per_core_w`), split into core and uncore coefficients at the probed base clock as
the catalogue presets are (:func:`models.cpu.preset_power.power_split`). Every figure is an
estimate and says its basis.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field

from models.cpu.config import CpuConfig
from models.cpu.preset_power import power_split
from models.cpu.presets import CPU_PRESETS
from models.platform import PowerConfig
from models.platforms import DRAM_W_PER_CHANNEL, PLATFORM_W_PER_SOCKET
from scenarios.config.preset_match import generation, preset_config

__all__ = ["CLASSES", "PowerEstimate", "cpu_class", "class_tdp_per_core_w", "estimate_power", "power_note"]

CLASSES = ("server", "desktop", "mobile", "vm")

#: a laptop CPU by its model name: Intel's U/H/HX/P/Y and AMD's U/H/HS suffixes, or "Mobile"
_MOBILE = re.compile(r"\b(?:i[3579]-\d{4,5}|ryzen \d \d{4}|core ultra \d \d{3})(?:u|h|hx|hs|p|y)\b|\bmobile\b")
#: a laptop part's TDP per core, W. Recalled: Intel ARK, Core i7-8550U, 4 cores at 15 W (not re-checked)
MOBILE_TDP_PER_CORE_W = 15.0 / 4
#: the DIMM of the built-in R230 and R730 platforms (models.platforms: 3 W per 16 GiB DIMM at low load)
DIMM_BYTES = 16 << 30
#: board, fans and PSU of a desktop, W. Estimate: the built-in R230's 20 W, a small one-socket box
DESKTOP_BOARD_W = 20.0
#: board of a laptop, W. Estimate: a few W for its chipset, SSD slot and regulators with the panel off
MOBILE_BOARD_W = 3.0


def cpu_class(model: str, vendor: str, family: int | None, model_number: int | None, hypervisor: bool) -> str:
    """``vm``, ``mobile``, ``desktop`` or ``server`` (a CPU of no known generation: server)."""
    if hypervisor:
        return "vm"
    if _MOBILE.search(model.lower()):
        return "mobile"
    gen = generation(model, vendor, family, model_number)
    return gen.market if gen and gen.market in CLASSES else "server"


def class_tdp_per_core_w(cls: str) -> tuple[float, str]:
    """(TDP per core, W; its basis): the median over the catalogue's presets of the class's market
    of TDP / cores (a VM: the server class's); a laptop: :data:`MOBILE_TDP_PER_CORE_W`."""
    if cls == "mobile":
        return MOBILE_TDP_PER_CORE_W, "15 W / 4 cores (Core i7-8550U, Intel ARK; recalled), a laptop part"
    market = "server" if cls == "vm" else cls
    per_core = {}
    for key, entry in CPU_PRESETS.items():
        c = preset_config(entry)
        gen = generation(c.model)
        if gen and gen.market == market and c.power_limit_w:
            per_core[key] = c.power_limit_w / c.physical_cores
    value = statistics.median(per_core.values())
    return value, f"the median TDP / cores of the {len(per_core)} {market} CPU presets"


@dataclass
class PowerEstimate:
    #: CpuConfig fields to set
    cpu: dict
    power: PowerConfig
    #: path in the platform file -> "estimate: basis"
    sources: dict[str, str] = field(default_factory=dict)
    note: str = ""
    basis: str = ""


def _per_core(cls: str, host: CpuConfig | None, host_key: str | None) -> tuple[float, str]:
    """The TDP per core: a VM's host CPU named (by its model name or --cpu) gives its own."""
    if cls == "vm" and host is not None and host.power_limit_w:
        w = host.power_limit_w / host.physical_cores
        return w, f"preset {host_key}'s TDP / cores, {host.power_limit_w:g} W / {host.physical_cores}"
    return class_tdp_per_core_w(cls)


def _states(data: dict, preset: CpuConfig, leak: float) -> tuple:
    """Each idle state's power scaled from the preset's by leakage (a state's power is the share of
    the core's leakage it keeps); a polling state draws the busy power (0 here)."""
    ratio = leak / preset.core_leakage_w if preset.core_leakage_w else 0.0
    out = []
    for s in data["cstates"]:
        s = dict(s) if isinstance(s, dict) else s.model_dump()
        s["power_w"] = round(s["power_w"] * ratio, 3)
        out.append(s)
    return tuple(out)


def estimate_power(
    cls: str, data: dict, preset: tuple[str, CpuConfig, bool], memory_bytes: int | None, rapl_read: bool
) -> PowerEstimate:
    """The CPU's power coefficients and the box's power for a CPU of class ``cls``; ``data``: the
    probed CPU's fields so far (cores, sockets, clocks, idle states); ``preset``: (key, config, it is
    this CPU by name or --cpu) of the preset that filled in the rest; ``rapl_read``: the package
    limits were read from powercap (kept)."""
    preset_key, preset, host_named = preset
    cores, sockets = data["physical_cores"], data["sockets"]
    per_core, why = _per_core(cls, preset if host_named else None, preset_key)
    tdp = per_core * cores
    what = f"{cores}-vCPU guest" if cls == "vm" else f"{cls} CPU, {cores} cores per socket"
    hi, lo = data["max_freq_ghz"], data["min_freq_ghz"]
    base = data["base_freq_ghz"]
    table, leak, _ = power_split(
        tdp, cores, base, hi, lo, data["voltage_at_min_v"], data["voltage_at_max_v"], data["smt"]
    )
    basis = f"{cores} x {per_core:.2f} W TDP per core ({why}) at {base:g} GHz"
    est = PowerEstimate(cpu={k: v for k, (v, _) in table.items()}, power=PowerConfig(dram_w=0, platform_base_w=0))
    for k, (_, how) in table.items():
        est.sources[f"cpu.{k}"] = f"estimate: the {what}'s class: {how.removeprefix('estimate: ')}"
    est.cpu["cstates"] = _states(data, preset, leak)
    for i, s in enumerate(est.cpu["cstates"]):
        if not s.get("polling"):
            est.sources[f"cpu.cstates[{i}].power_w"] = f"estimate: preset {preset_key}'s, scaled by this core's leakage"
    # AMD's current limits follow from its package's PPT (models.cpu.preset_power): not this one's
    est.cpu.update(tdc_a=None, edc_a=None)
    for k in ("tdc_a", "edc_a"):
        est.sources[f"cpu.{k}"] = f"estimate: none: preset {preset_key}'s follows from its own package power"
    if not rapl_read:
        est.cpu.update(power_limit_w=None if cls == "vm" else round(tdp, 1), pl2_w=None)
        est.sources["cpu.power_limit_w"] = (
            "estimate: none: a guest's package limit is the host's (not observable)"
            if cls == "vm"
            else f"estimate: PL1 = the {tdp:.1f} W TDP ({basis})"
        )
        est.sources["cpu.pl2_w"] = "estimate: none (no RAPL short_term limit read)"
    est.power, box = _box(cls, sockets, memory_bytes)
    for k, how in box.items():
        est.sources[f"power.{k}"] = f"estimate: {how}"
    est.sources["power.estimated"] = "estimate: the machine the powers above are estimated for, and from what"
    host = "; the host's power is not observable: this guest's share" if cls == "vm" else ""
    est.basis = f"{what}: {basis}{host}"
    est.note = (
        f"power: estimates for a {what} ({basis}{host}), not a preset's or a built-in platform's;"
        " measure and calibrate them (docs/validate-your-hardware.md)"
    )
    return est


def _box(cls: str, sockets: int, memory_bytes: int | None) -> tuple[PowerConfig, dict[str, str]]:
    """DRAM by the memory read (3 W per 16 GiB DIMM, as the built-in platforms), the board by class."""
    gib = (memory_bytes or 0) / (1 << 30)
    dram = round(DRAM_W_PER_CHANNEL * (memory_bytes or 0) / DIMM_BYTES, 2)
    how = {"dram_w": f"{DRAM_W_PER_CHANNEL:g} W per 16 GiB DIMM (the built-in platforms') x {gib:.1f} GiB read"}
    if cls == "vm":
        board, coupling = 0.0, 0.0
        how["dram_w"] += " (the guest's share of the host's DIMMs)"
        how["platform_base_w"] = "none: the host's board is not the guest's (not observable)"
        how["platform_cpu_coupling"] = "none: the host's fans and regulators are not observable"
    else:
        board = {"server": PLATFORM_W_PER_SOCKET * sockets, "desktop": DESKTOP_BOARD_W}.get(cls, MOBILE_BOARD_W)
        coupling = 0.1
        how["platform_base_w"] = {
            "server": f"{PLATFORM_W_PER_SOCKET:g} W per socket (the built-in platforms') x {sockets}",
            "desktop": f"{DESKTOP_BOARD_W:g} W, a one-socket box (the built-in R230's)",
        }.get(cls, f"{MOBILE_BOARD_W:g} W, a laptop's board")
        how["platform_cpu_coupling"] = "0.1 W per CPU watt, as the built-in platforms"
    return PowerConfig(dram_w=dram, platform_base_w=board, platform_cpu_coupling=coupling), how


def calibration_text(basis: str) -> str:
    """The sentence of the probed platform's ``calibration`` that says its powers are estimates."""
    return f"power: estimates for a {basis}"


def power_note(power: PowerConfig) -> str | None:
    """What the run's output says under its power figures when they are estimates for the
    machine's class (``power.estimated``, set by the probe); None when they are not."""
    return calibration_text(power.estimated) if power.estimated else None
