"""``stacksim probe``: a platform for the machine the facts were read from.

What ``/proc`` and ``/sys`` tell (:mod:`scenarios.inputs.machine.read`) is written as it is: the
topology, the cpufreq range, driver and governor, each cpuidle state's name, exit latency, target
residency and whether it is disabled, RAPL's long-term limit, the NVMe devices, their PCIe link,
NUMA node, capacity and hardware queues, each block queue's settings, the installed memory and the
kernel release. What they cannot tell comes from the presets (:mod:`scenarios.config.preset_match`):
the CPU's power coefficients and each idle state's power from the CPU preset, the SSD's service
times and powers from the SSD preset, the kernel's cycle costs and the box's power from the
built-in platform whose CPU is nearest; but on a VM, or for a CPU no preset is by name, the CPU's
and the box's powers are estimated from the CPU's class (:mod:`scenarios.config.probe_power`), not
taken from another machine. Each value's origin is recorded in :class:`Sources` (a
path in ``/sys``, or ``estimate: ...``), written beside it as a YAML comment.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from models.cpu.config import CpuConfig
from models.cpu.presets import CPU_PRESETS
from models.os.block.queue import QueueConfig
from models.platform import PlatformConfig
from models.platforms import PLATFORMS
from models.ssd.presets import SSD_PRESETS
from policies.cpu_idle import CPUIDLE_GOVERNORS
from policies.cpu_power import CPUFREQ_GOVERNORS
from policies.io_scheduler import IO_SCHEDULERS
from scenarios.config.preset_match import (
    generation,
    match_name,
    nearest_cpu,
    nearest_ssd,
    preset_config,
    reported_name,
    words,
)
from scenarios.config.probe_power import PowerEstimate, calibration_text, cpu_class, estimate_power
from scenarios.inputs.machine.read import CPU, Controller, Machine
from simcore.config import validate
from simcore.errors import ConfigError

__all__ = ["Sources", "Probed", "probe_platform", "probe_header", "NoNvmeError", "pcie_gb_s"]


class NoNvmeError(ConfigError):
    """The machine has no NVMe device and no ``--ssd NAME`` says which SSD to simulate."""


@dataclass
class Sources:
    """Where each value of the platform came from, by its path in the platform file (``cpu.model``,
    ``cpu.cstates[2].power_w``): a file of ``/sys`` or ``/proc``, or ``estimate: why``. A block of
    ``estimated`` (``kernel``: why) says why on its first line; in a block of ``mixed`` as well
    (``cpu``, ``ssd``: read and estimated values side by side) each value not read says "estimate"."""

    exact: dict[str, str] = field(default_factory=dict)
    estimated: dict[str, str] = field(default_factory=dict)
    mixed: set[str] = field(default_factory=set)

    def read(self, path: str, source: str) -> None:
        self.exact[path] = source

    def estimate(self, path: str, why: str) -> None:
        self.exact[path] = "estimate: " + why

    def comment(self, path: str, leaf: bool) -> str | None:
        """The comment of the line of ``path`` (``leaf``: it holds a value, not a block)."""
        if path in self.exact:
            return self.exact[path]
        if path in self.estimated:
            where = "where marked" if path in self.mixed else "apart from what is marked"
            return f"estimate {where}: {self.estimated[path]}"
        return "estimate" if leaf and path.split(".", 1)[0] in self.mixed else None


@dataclass
class Probed:
    platform: PlatformConfig
    sources: Sources
    #: what to tell the user (a preset matched or not, what the model cannot represent)
    notes: list[str]


@dataclass
class _Work:
    m: Machine
    src: Sources = field(default_factory=Sources)
    notes: list[str] = field(default_factory=list)
    #: the powers estimated from the CPU's class (None: the CPU preset's, this CPU by name)
    power: PowerEstimate | None = None


def _unknown(name: str, names, option: str, what: str) -> ConfigError:
    return ConfigError(f"{option} {name}: no {what} preset of that name (known: {', '.join(names)})")


def _cpu_preset(w: _Work, key: str | None) -> tuple[str, CpuConfig, bool]:
    """The CPU preset for what /sys cannot tell: ``key`` (--cpu), else the one whose model is in the
    reported name, else the nearest generation. Returns (key, config, matched by name or named)."""
    configs = {k: preset_config(v) for k, v in CPU_PRESETS.items()}
    cpu = w.m.cpu
    if key is not None:
        if key not in configs:
            raise _unknown(key, configs, "--cpu", "CPU")
        w.notes.append(f"CPU: preset {key} (--cpu) for what /sys cannot tell")
        return key, configs[key], True
    found = match_name(cpu.model, {k: c.model for k, c in configs.items()})
    if found:
        w.notes.append(f"CPU: '{cpu.model}' is preset {found} (its model name)")
        return found, configs[found], True
    gen = generation(cpu.model, cpu.vendor, cpu.family, cpu.model_number)
    gens = {k: generation(c.model) for k, c in configs.items()}
    found = nearest_cpu(gen, gen.vendor if gen else "", gens)
    what = f"{gen.label} ({gen.vendor}, {gen.market})" if gen else "of no known generation"
    w.notes.append(
        f"CPU: no preset is '{cpu.model}' ({what}): PAUSE, voltages and idle-state shapes from the nearest"
        f" generation, preset {found} ({configs[found].model}); name another with --cpu NAME"
    )
    return found, configs[found], False


def _topology(w: _Work) -> dict:
    cpu, src, topo = w.m.cpu, w.src, f"{CPU}/cpu*/topology"
    packages = cpu.packages
    if not packages:
        raise ConfigError(f"no CPU topology under {CPU} (cpuN/topology/physical_package_id, core_id)")
    counts = [len(cpu.cores_of(p)) for p in packages]
    threads: dict[tuple[int, int], int] = {}
    for key in cpu.core_of.values():
        threads[key] = threads.get(key, 0) + 1
    two = sum(1 for n in threads.values() if n > 1)
    smt = 2 * two > len(threads)
    if len(set(counts)) > 1:
        w.notes.append(f"the packages have {counts} online cores: the model's sockets are identical ({max(counts)})")
    if 0 < two < len(threads):
        w.notes.append(
            f"{two} of {len(threads)} cores have SMT siblings (a hybrid or partly offline CPU): the model's cores"
            f" are identical, {'all' if smt else 'none'} with SMT"
        )
    nodes = len(cpu.nodes)
    if nodes and nodes != len(packages):
        w.notes.append(f"{nodes} NUMA nodes on {len(packages)} packages: the model has one node per socket")
    src.read("cpu.sockets", f"{len(packages)} physical_package_id values ({topo})")
    src.read("cpu.physical_cores", f"core_id values per package ({topo})")
    src.read("cpu.smt", f"thread_siblings_list ({topo})")
    _check_numbering(w, smt, max(counts), len(packages))
    return {"sockets": len(packages), "physical_cores": max(counts), "smt": smt}


def _check_numbering(w: _Work, smt: bool, cores: int, sockets: int) -> None:
    """The model numbers logical CPUs as Linux does a two-socket Intel server: first threads of
    socket 0, then socket 1, then their SMT siblings; say when this machine numbers them otherwise
    (fio's cpus_allowed then names other CPUs in the model)."""
    total = cores * sockets
    if not smt:
        return
    for c, sib in w.m.cpu.siblings.items():
        expect = [c % total, c % total + total]
        if sorted(sib) != expect:
            w.notes.append(
                f"this machine numbers SMT siblings as {','.join(map(str, sib))}; the model as"
                f" {','.join(map(str, expect))}: CPU numbers in job files (cpus_allowed) may name other cores"
            )
            return


def _khz_ghz(khz: float) -> float:
    """A sysfs frequency in kHz as GHz, to the kHz it was read in (no 2.5961399999999997 in YAML)."""
    return round(khz / 1e6, 6)


def _mhz_ghz(mhz: float) -> float:
    """/proc/cpuinfo's MHz (three decimals) as GHz, to the kHz."""
    return round(mhz / 1000, 6)


def _ghz_in_name(name: str) -> float | None:
    m = re.search(r"@\s*([\d.]+)\s*GHz", name)
    return float(m.group(1)) if m else None


def _fixed_frequency(w: _Work, preset: CpuConfig) -> dict:
    """No cpufreq driver (a VM, or cpufreq off): the frequency is what the CPU reports, fixed."""
    mhz = w.m.cpu.mhz
    ghz = _mhz_ghz(mhz) if mhz else _ghz_in_name(w.m.cpu.model) or preset.base_freq_ghz
    why = "/proc/cpuinfo 'cpu MHz'" if mhz else "estimate: the preset's base frequency"
    for f in ("base_freq_ghz", "max_freq_ghz", "min_freq_ghz"):
        w.src.read(f"cpu.{f}", f"no cpufreq driver ({CPU}/cpu0/cpufreq absent): fixed at {why}")
    w.src.read("cpu.turbo", "no cpufreq driver: one frequency")
    w.src.read("cpu.cpufreq_governor", "no cpufreq driver: one frequency (performance keeps it)")
    w.notes.append(f"no cpufreq driver: the frequency is fixed at {ghz:g} GHz ({why})")
    return {
        "base_freq_ghz": ghz,
        "max_freq_ghz": ghz,
        "min_freq_ghz": ghz,
        "turbo": False,
        "cpufreq_governor": "performance",
    }


def _governor(w: _Work, driver: str | None, governor: str | None) -> str:
    """The modelled governor nearest the machine's (the names the model has are cpufreq's)."""
    known = CPUFREQ_GOVERNORS.names()
    gov = governor or "performance"
    if gov == "powersave" and driver in ("intel_pstate", "amd-pstate-epp"):
        w.notes.append(
            f"{driver}'s powersave (active mode) picks the frequency from utilisation and the EPP hint,"
            " not the minimum: modelled by schedutil"
        )
        return "schedutil"
    if gov not in known:
        near = "ondemand" if gov == "conservative" else "performance"
        w.notes.append(f"cpufreq governor {gov} is not modelled: {near}")
        return near
    return gov


def _frequencies(w: _Work, preset: CpuConfig, named: bool) -> dict:
    f, d = w.m.freq, f"{CPU}/cpu0/cpufreq"
    if f.max_khz is None or f.min_khz is None:
        return _fixed_frequency(w, preset)
    lo, hi = _khz_ghz(f.min_khz), _khz_ghz(f.max_khz)
    base, base_src = (_khz_ghz(f.base_khz), f"{d}/base_frequency") if f.base_khz else (None, "")
    if base is None and _ghz_in_name(w.m.cpu.model):
        base, base_src = _ghz_in_name(w.m.cpu.model), "/proc/cpuinfo model name"
    if base is None:
        base, base_src = (preset.base_freq_ghz, "estimate: the preset's") if named else (hi, f"{d}/cpuinfo_max_freq")
    if f.no_turbo is not None:
        turbo, turbo_src = not f.no_turbo, f"{CPU}/intel_pstate/no_turbo"
    elif f.boost is not None:
        turbo, turbo_src = f.boost, f"{CPU}/cpufreq/boost"
    else:
        turbo, turbo_src = hi > base, "cpuinfo_max_freq above the base frequency"
    if f.scaling_max_khz and f.scaling_max_khz < f.max_khz:
        hi = _khz_ghz(f.scaling_max_khz)
        w.notes.append(f"scaling_max_freq caps the frequency at {hi:g} GHz")
    base = min(max(base, lo), hi)
    w.src.read("cpu.min_freq_ghz", f"{d}/cpuinfo_min_freq")
    w.src.read("cpu.max_freq_ghz", f"{d}/cpuinfo_max_freq, scaling_max_freq")
    w.src.read("cpu.base_freq_ghz", base_src)
    w.src.read("cpu.turbo", turbo_src)
    w.src.read("cpu.cpufreq_governor", f"{d}/scaling_governor ({f.governor}, driver {f.driver})")
    out = {"base_freq_ghz": base, "max_freq_ghz": max(hi, base), "min_freq_ghz": lo, "turbo": turbo}
    out["cpufreq_governor"] = _governor(w, f.driver, f.governor)
    if f.transition_ns and 0 < f.transition_ns < 4_000_000_000:  # 4294967295: CPUFREQ_ETERNAL, unknown
        out["pstate_transition_ns"] = float(f.transition_ns)
        w.src.read("cpu.pstate_transition_ns", f"{d}/cpuinfo_transition_latency")
    return out


def _state_like(name: str, lat_ns: float, preset: CpuConfig):
    """The preset's idle state of the same name (ACPI's ``C2_ACPI`` is ``C2``), else the one of the
    nearest exit latency (the power of a state follows how much of the core it turns off)."""
    real = [s for s in preset.cstates if not s.polling]
    base = re.sub(r"_ACPI$", "", name).upper()
    for s in real:
        if s.name.upper() == base:
            return s, f"the preset's {s.name}"
    s = min(real, key=lambda s: abs(s.exit_latency_ns - lat_ns))
    return s, f"the preset's {s.name}, the nearest exit latency"


def _no_cpuidle(w: _Work, preset: CpuConfig) -> dict:
    """No cpuidle driver: the kernel idles with the architecture's default (x86 default_idle: HLT,
    a C1), or polls with idle=poll. One state, as the machine has."""
    if w.m.idle.idle_param == "poll":
        w.notes.append("idle=poll: the CPUs poll when idle (one POLL state)")
        w.src.read("cpu.cstates", "idle=poll on /proc/cmdline: no cpuidle, the idle loop polls")
        return {
            "cstates": (
                {"name": "POLL", "exit_latency_ns": 0.0, "target_residency_ns": 0.0, "power_w": 0.0, "polling": True},
            ),
            "cpuidle_disable": (),
        }
    c1, why = _state_like("C1", 1000.0, preset)
    w.notes.append(f"no cpuidle driver ({CPU}/cpuidle absent): one idle state, HLT (the kernel's default_idle)")
    w.src.read("cpu.cstates", f"no cpuidle driver ({CPU}/cpuidle): the default idle, HLT, only")
    w.src.read("cpu.cstates[0].name", "x86's default_idle: HLT")
    w.src.read("cpu.cstates[0].polling", "a hardware state")
    for f in ("exit_latency_ns", "target_residency_ns", "power_w"):
        w.src.estimate(f"cpu.cstates[0].{f}", f"HLT is a C1: {why}")
    hlt = {
        "name": "HLT",
        "exit_latency_ns": c1.exit_latency_ns,
        "target_residency_ns": c1.target_residency_ns,
        "power_w": c1.power_w,
    }
    return {"cstates": (hlt,), "cpuidle_disable": ()}


def _cstates(w: _Work, preset: CpuConfig) -> dict:
    idle = w.m.idle
    if not idle.states or idle.idle_param == "poll":
        return _no_cpuidle(w, preset)
    states, disabled = [], []
    for i, s in enumerate(idle.states):
        lat, res = s.latency_us * 1000.0, s.residency_us * 1000.0
        p = f"cpu.cstates[{i}]"
        w.src.read(f"{p}.name", f"{s.path}/name")
        w.src.read(f"{p}.exit_latency_ns", f"{s.path}/latency (us)")
        w.src.read(f"{p}.target_residency_ns", f"{s.path}/residency (us)")
        if res < lat:
            w.notes.append(f"{s.name}: residency {s.residency_us:g} us below its latency: taken as {s.latency_us:g}")
            res = lat
        state = {"name": s.name, "exit_latency_ns": lat, "target_residency_ns": res}
        if i == 0 and s.name == "POLL":
            state.update(power_w=0.0, polling=True)
            w.src.read(f"{p}.polling", "the cpuidle core's POLL state (cpuidle_poll_state_init)")
            w.src.read(f"{p}.power_w", "unused: a polling core draws its busy power")
        else:
            like, why = _state_like(s.name, lat, preset)
            state.update(
                power_w=like.power_w, package_deep=like.package_deep, flushes_core_caches=like.flushes_core_caches
            )
            w.src.read(f"{p}.polling", "a hardware state")
            for f in ("power_w", "package_deep", "flushes_core_caches"):
                w.src.estimate(f"{p}.{f}", why)
        states.append(state)
        if s.disabled:
            disabled.append(s.name)
    w.src.read("cpu.cpuidle_disable", f"{CPU}/cpu0/cpuidle/state*/disable")
    return {"cstates": tuple(states), "cpuidle_disable": tuple(disabled)}


def _idle_governor(w: _Work) -> str:
    gov = w.m.idle.governor
    if gov in CPUIDLE_GOVERNORS.names():
        w.src.read("cpu.cpuidle_governor", f"{CPU}/cpuidle/current_governor")
        return gov
    if gov:
        w.notes.append(f"cpuidle governor {gov} is not modelled: menu")
        w.src.read("cpu.cpuidle_governor", f"{CPU}/cpuidle/current_governor is {gov} (not modelled): menu")
    return "menu"


def _power_limit(w: _Work) -> dict:
    zones = w.m.rapl
    if not zones:
        w.src.estimate("cpu.power_limit_w", "no RAPL in /sys/class/powercap: the preset's (PL1 = TDP)")
        return {}
    on = [z for z in zones if z.enabled and z.long_term_w]
    d = f"/sys/class/powercap/{zones[0].zone}"
    if not on:
        w.src.read("cpu.power_limit_w", f"{d}/enabled: the limit is off")
        return {"power_limit_w": None}
    if len({z.long_term_w for z in on}) > 1:
        w.notes.append(f"the packages' RAPL limits differ ({[z.long_term_w for z in on]} W): the first is used")
    out = {"power_limit_w": on[0].long_term_w}
    w.src.read("cpu.power_limit_w", f"{d}/constraint_*_power_limit_uw (long_term)")
    if on[0].window_us:
        out["power_limit_window_ms"] = on[0].window_us / 1000.0
        w.src.read("cpu.power_limit_window_ms", f"{d}/constraint_*_time_window_us (long_term)")
    if on[0].short_term_w and on[0].short_term_w >= on[0].long_term_w:
        out["pl2_w"] = on[0].short_term_w
        w.src.read("cpu.pl2_w", f"{d}/constraint_*_power_limit_uw (short_term)")
        if on[0].short_window_us:
            out["pl2_window_ms"] = on[0].short_window_us / 1000.0
            w.src.read("cpu.pl2_window_ms", f"{d}/constraint_*_time_window_us (short_term)")
    elif on[0].short_term_w:
        w.notes.append(f"RAPL's short_term limit ({on[0].short_term_w:g} W) is below its long_term one: left out")
    return out


def _fit_preset_limits(w: _Work, data: dict) -> None:
    """The preset's turbo limits and PL2 where they still fit the probed clocks and PL1 (sysfs
    shows neither MSR_TURBO_RATIO_LIMIT nor, without powercap, PL2): else none."""
    lo, hi = data["base_freq_ghz"], data["max_freq_ghz"]
    bins = [data["all_core_turbo_ghz"]] if data.get("all_core_turbo_ghz") is not None else []
    bins += list(data.get("turbo_ratio_limits_ghz", {}).values())
    if any(not lo <= g <= hi for g in bins):
        data["all_core_turbo_ghz"], data["turbo_ratio_limits_ghz"] = None, {}
        w.src.estimate("cpu.all_core_turbo_ghz", "none: the preset's turbo limits do not fit the probed clocks")
    elif bins:
        w.src.estimate("cpu.all_core_turbo_ghz", "the preset's (sysfs does not show MSR_TURBO_RATIO_LIMIT)")
    pl1, pl2 = data.get("power_limit_w"), data.get("pl2_w")
    if pl2 is not None and (pl1 is None or pl2 < pl1):
        data["pl2_w"] = None
        w.src.estimate("cpu.pl2_w", "none: the preset's PL2 is below the probed PL1")


def _cpu(w: _Work, key: str | None) -> tuple[CpuConfig, str]:
    found, preset, named = _cpu_preset(w, key)
    data = preset.model_dump()
    data["model"] = w.m.cpu.model or preset.model
    w.src.read("cpu.model", "/proc/cpuinfo model name" if w.m.cpu.model else f"estimate: preset {found}")
    data.update(_topology(w))
    data.update(_frequencies(w, preset, named))
    data.update(_cstates(w, preset))
    data["cpuidle_governor"] = _idle_governor(w)
    data.update(_power_limit(w))
    _fit_preset_limits(w, data)
    _class_power(w, data, (found, preset, named))
    w.src.estimated["cpu"] = f"preset {found}" if named else f"preset {found} (nearest generation)"
    w.src.mixed.add("cpu")
    return validate(CpuConfig, data, where="the probed CPU"), found


def _class_power(w: _Work, data: dict, preset: tuple[str, CpuConfig, bool]) -> None:
    """A VM, or a CPU no preset is by name: its powers from its class (scenarios.config.probe_power),
    not another machine's."""
    c = w.m.cpu
    cls = cpu_class(c.model, c.vendor, c.family, c.model_number, c.hypervisor)
    if cls != "vm" and preset[2]:
        return
    w.power = estimate_power(cls, data, preset, w.m.memory_bytes, bool(w.m.rapl))
    data.update(w.power.cpu)
    w.src.exact.update(w.power.sources)
    w.notes.append(w.power.note)


#: the share of a PCIe link's encoded rate that carries data (TLP and DLLP overheads). Estimate: the
#: SSD presets' usable 3.5 GB/s of a PCIe 3.0 x4 link, whose rate after 128b/130b encoding is 3.94 GB/s
PCIE_PAYLOAD_SHARE = 0.89


def pcie_gb_s(gt_s: float, width: int) -> float:
    """Usable data rate of a PCIe link of ``width`` lanes at ``gt_s`` GT/s, GB/s: 8b/10b encoding up to
    5 GT/s (PCIe 1 and 2), 128b/130b from 8 GT/s (PCIe 3 on), then :data:`PCIE_PAYLOAD_SHARE`."""
    encoding = 0.8 if gt_s <= 5.0 else 128 / 130
    return gt_s * width * encoding / 8 * PCIE_PAYLOAD_SHARE


def _chosen_controllers(w: _Work) -> list[Controller]:
    """The NVMe controllers of one model (a platform has one SSD model): the most numerous."""
    remote = [c for c in w.m.nvme if c.transport not in (None, "pcie")]
    if remote:
        names = ", ".join(f"{c.name} ({c.transport})" for c in remote)
        w.notes.append(f"left out {names}: NVMe over fabrics, not a local SSD")
    ctrls = [c for c in w.m.nvme if c.namespaces and c not in remote]
    by_model: dict[str, list[Controller]] = {}
    for c in ctrls:
        by_model.setdefault(c.model, []).append(c)
    chosen = max(by_model.values(), key=len) if by_model else []
    for model, group in by_model.items():
        if group is not chosen:
            w.notes.append(
                f"left out {', '.join(c.name for c in group)} ({model}): a platform has one SSD model,"
                f" {chosen[0].model} here"
            )
    return chosen


def _ssd_preset(w: _Work, key: str | None, ctrl: Controller | None) -> tuple[str, dict, str]:
    configs = {k: preset_config(v) for k, v in SSD_PRESETS.items()}
    if key is not None:
        if key not in configs:
            raise _unknown(key, configs, "--ssd", "SSD")
        return key, configs[key].model_dump(), f"preset {key} (--ssd)"
    assert ctrl is not None
    reported = reported_name(ctrl.model)
    found = match_name(reported, {k: c.model for k, c in configs.items()})
    if found:
        w.notes.append(f"SSD: '{ctrl.model}' is preset {found} ({configs[found].model})")
        return found, configs[found].model_dump(), f"preset {found}"
    link = pcie_gb_s(ctrl.link_gt_s, ctrl.link_width) if ctrl.link_gt_s and ctrl.link_width else None
    found = nearest_ssd("optane" in words(reported), link, configs)
    w.notes.append(
        f"SSD: no preset is '{ctrl.model}': service times and powers from preset {found} ({configs[found].model},"
        " the same media and nearest link rate); name another with --ssd NAME"
    )
    return found, configs[found].model_dump(), f"preset {found} (nearest: media and link)"


def _measured_device(w: _Work, data: dict, ctrl: Controller) -> None:
    """What /sys says of the device itself: model, capacity, queues, link."""
    ns, d = ctrl.namespaces[0], f"/sys/class/nvme/{ctrl.name}"
    data["model"] = ctrl.model or data["model"]
    w.src.read("ssd.model", f"{d}/model")
    sizes = [n.size_bytes for n in ctrl.namespaces if n.size_bytes]
    if sizes:
        data["capacity_bytes"] = sum(sizes)
        w.src.read("ssd.capacity_bytes", f"{ns.path}/size (512-byte sectors), every namespace")
    poll = w.m.poll_queues or 0
    if ns.hw_queues:
        data["max_queue_pairs"] = max(1, ns.hw_queues - poll)
        w.src.read(
            "ssd.max_queue_pairs",
            f"{ns.path}/mq/* ({ns.hw_queues}) less poll_queues ({poll}): the queues Linux set up",
        )
    if ns.nr_tags:
        # nvme sets the tag set's depth to the queue's entries less one (a full ring keeps one empty)
        data["max_queue_depth"] = ns.nr_tags + 1
        w.src.read("ssd.max_queue_depth", f"{ns.path}/mq/0/nr_tags + 1")
    if ctrl.link_gt_s and ctrl.link_width:
        link = pcie_gb_s(ctrl.link_gt_s, ctrl.link_width)
        where = f"{d}/device/current_link_speed, current_link_width: {ctrl.link_gt_s:g} GT/s x{ctrl.link_width}"
        if link < data["link_gb_s"]:
            data["link_gb_s"] = round(link, 3)
            w.src.estimate("ssd.link_gb_s", f"{where} (below the preset's: the slot bounds it)")
        else:
            w.src.estimate("ssd.link_gb_s", f"the preset's ({where} allows {link:.2f})")


def _ssd_nodes(w: _Work, ctrls: list[Controller], sockets: int) -> tuple[int, ...]:
    packages = w.m.cpu.packages
    nodes = []
    for c in ctrls:
        pkg = w.m.cpu.package_of_node(c.numa_node) if c.numa_node is not None and c.numa_node >= 0 else None
        nodes.append(packages.index(pkg) if pkg in packages else 0)
    if nodes:
        w.src.read("ssd_nodes", "/sys/class/nvme/nvme*/device/numa_node (its package)")
    nodes = [min(n, sockets - 1) for n in nodes]
    if not any(nodes):
        return ()
    return (nodes[0],) if len(set(nodes)) == 1 else tuple(nodes)


def _queue(w: _Work, ctrls: list[Controller]) -> QueueConfig:
    """The first namespace's block queue (``/sys/block/nvmeXnY/queue/*``)."""
    if not ctrls:
        w.src.estimate("queue", "no NVMe here: the model's defaults for an NVMe namespace")
        return QueueConfig()
    ns = ctrls[0].namespaces[0]
    q, d = ns.queue, f"{ns.path}/queue"
    others = {(n.scheduler, n.queue.get("io_poll")) for c in ctrls for n in c.namespaces}
    if len(others) > 1:
        w.notes.append(f"the namespaces' queues differ (scheduler, io_poll: {sorted(map(str, others))}): {ns.name}'s")
    data: dict = {}
    sched = ns.scheduler or "none"
    if sched not in IO_SCHEDULERS.names():
        w.notes.append(f"IO scheduler {sched} is not modelled: none")
        sched = "none"
    data["scheduler"] = sched
    known = IO_SCHEDULERS.get(sched).TUNABLES
    data["iosched"] = {k: int(v) for k, v in ns.iosched.items() if k in known and re.fullmatch(r"-?\d+", v)}
    for attr, conv in (("nr_requests", int), ("max_sectors_kb", int), ("io_poll_delay", int), ("nomerges", int)):
        if re.fullmatch(r"-?\d+", q.get(attr, "")):
            data[attr] = conv(q[attr])
    if "nr_requests" in data:
        data["nr_requests"] = min(max(data["nr_requests"], 1), 10240)
    if "io_poll" in q:
        data["io_poll"] = q["io_poll"] == "1"
    if "write_cache" in q:
        w.notes.append(f"{ns.name}: write_cache is '{q['write_cache']}' ({d}/write_cache; flushes are not modelled)")
    for key in data:
        w.src.read(f"queue.{key}", f"{d}/{key}" if key != "iosched" else f"{d}/iosched/*")
    return validate(QueueConfig, data, where=f"{d}")


def _nearest_platform(w: _Work) -> tuple[str, PlatformConfig]:
    """The built-in platform whose CPU is nearest this one: its kernel's cycle costs and box power."""
    cpu = w.m.cpu
    gen = generation(cpu.model, cpu.vendor, cpu.family, cpu.model_number)
    plats = {k: make() for k, make in PLATFORMS.items()}
    key = nearest_cpu(gen, gen.vendor if gen else "", {k: generation(p.cpu.model) for k, p in plats.items()})
    return key, plats[key]


def _kernel_and_box(w: _Work) -> dict:
    key, base = _nearest_platform(w)
    release = w.m.kernel_release
    m = re.match(r"(\d+)\.(\d+)", release or "")
    kernel = base.kernel.model_copy(update={"version": f"{m.group(1)}.{m.group(2)}"}) if m else base.kernel
    w.src.estimated["kernel"] = f"the cycle costs of platform {key} ({base.cpu.model}, the nearest CPU)"
    if m:
        w.src.read("kernel.version", f"/proc/sys/kernel/osrelease ({release})")
    power = base.power
    if w.power is not None:
        power = w.power.power.model_copy(update={"estimated": w.power.basis})
        w.src.estimated["power"] = f"the CPU's class ({w.power.basis})"
        w.src.mixed.add("power")
    else:
        w.src.estimated["power"] = f"platform {key}'s DRAM and board"
    w.src.estimated["sched"] = "the model's defaults"
    w.src.read("nvme.irq", "none: no interrupt coalescing (NVMe's reset value; Linux's driver leaves it)")
    return {"kernel": kernel, "sched": base.sched, "power": power, "_from": key}


def _ssd_side(w: _Work, ssd: str | None, sockets: int) -> tuple[dict, str]:
    ctrls = _chosen_controllers(w)
    if not ctrls and ssd is None:
        names = ", ".join(SSD_PRESETS)
        raise NoNvmeError(
            "no NVMe device in /sys/class/nvme (a VM's virtio disks and SATA disks are not modelled):"
            f" name the SSD to simulate with --ssd NAME ({names})"
        )
    key, data, why = _ssd_preset(w, ssd, ctrls[0] if ctrls else None)
    if ctrls:
        _measured_device(w, data, ctrls[0])
        links = {(c.link_gt_s, c.link_width) for c in ctrls}
        if len(links) > 1:
            w.notes.append(f"the devices' PCIe links differ ({sorted(map(str, links))}): {ctrls[0].name}'s is used")
    w.src.estimated["ssd"] = why
    w.src.mixed.add("ssd")
    out: dict = {"ssd": data, "queue": _queue(w, ctrls)}
    if ctrls:
        out["ssd_count"] = len(ctrls)
        w.src.read("ssd_count", f"/sys/class/nvme: {', '.join(c.name for c in ctrls)}")
        out["ssd_nodes"] = _ssd_nodes(w, ctrls, sockets)
    else:
        w.src.estimate("ssd_count", "no NVMe here: one device of --ssd")
    return out, key


def probe_platform(m: Machine, name: str = "probed", cpu: str | None = None, ssd: str | None = None) -> Probed:
    """The platform of machine ``m``; ``cpu`` and ``ssd`` name the presets for what /sys cannot tell
    (default: matched by model name). :class:`NoNvmeError` when there is no NVMe device and no ``ssd``."""
    w = _Work(m)
    cpu_cfg, cpu_key = _cpu(w, cpu)
    ssd_side, ssd_key = _ssd_side(w, ssd, cpu_cfg.sockets)
    box = _kernel_and_box(w)
    plat_key = box.pop("_from")
    data = {"name": name, "cpu": cpu_cfg, **ssd_side, **box}
    if m.memory_bytes:
        data["memory_bytes"] = m.memory_bytes
        w.src.read("memory_bytes", "/proc/meminfo MemTotal (what fio's $mb_memory sees)")
    if m.cache_memory_bytes:
        data["pagecache"] = {"memory_bytes": m.cache_memory_bytes}
        w.src.read("pagecache.memory_bytes", "/proc/meminfo MemFree + Active(file) + Inactive(file) (now)")
    else:
        w.src.estimate("pagecache.memory_bytes", "half of MemTotal, at most 16 GiB (no file-page counts read)")
    data["description"] = _description(m, cpu_cfg, ssd_side)
    powers = (
        f"CPU powers from preset {cpu_key}, SSD service times and powers from preset {ssd_key}, kernel cycle"
        f" costs and box power from platform {plat_key}"
        if w.power is None
        else f"SSD service times and powers from preset {ssd_key}, kernel cycle costs from platform {plat_key},"
        f" {calibration_text(w.power.basis)}"
    )
    data["calibration"] = (
        f"probed from /proc and /sys (stacksim probe); estimates: {powers}. Calibrate them against this"
        " machine (docs/validate-your-hardware.md)"
    )
    if m.other_disks:
        disks = ", ".join(f"{d} ({s})" for d, s in m.other_disks.items())
        w.notes.append(f"block devices that are not NVMe (not modelled): {disks}")
    return Probed(validate(PlatformConfig, data, where="the probed platform"), w.src, w.notes)


def _description(m: Machine, cpu: CpuConfig, ssd_side: dict) -> str:
    threads = 2 if cpu.smt else 1
    count = ssd_side.get("ssd_count", 1)
    ssd = ssd_side["ssd"]["model"]
    kernel = m.kernel_release or "unknown kernel"
    sockets = f"{cpu.sockets} x " if cpu.sockets > 1 else ""
    disks = f"{count} x {ssd}" if m.nvme else f"{ssd} (--ssd: none here)"
    return (
        f"probed: {sockets}{cpu.model} ({cpu.physical_cores}C/{cpu.physical_cores * threads}T), {disks}, Linux {kernel}"
    )


def probe_header(probed: Probed, source: str, out: str | None) -> str:
    """The comment lines at the top of the platform file: what made it, how to read it, the notes."""
    use = out if out and out != "-" else "FILE.yaml"
    lines = [
        f"stacksim platform {probed.platform.name}: written by `stacksim probe` from {source}.",
        "Each value says where it came from: a file of /proc or /sys, or 'estimate' (what they cannot",
        "tell: from a preset or a built-in platform, named on its block's first line). Calibrate the",
        "estimates against this machine: docs/validate-your-hardware.md.",
        *(f"- {n}" for n in probed.notes),
        f"Use it with: stacksim run --platform {use}",
    ]
    return "\n".join(lines)
