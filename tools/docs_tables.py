"""Tables of docs/ made from the code: a page marks a table with

    <!-- generated: NAME [ARG] -->
    | ... |
    <!-- end generated -->

and ``tools/docs_defaults.py`` rewrites what is between the markers with ``TABLES[NAME](ARG)``
(``--check``: report the blocks that differ). The tables come from the presets and platforms in
``models/`` and from the ``docs/*`` runs of the golden set (``tests/golden/golden.json``, whose
figures ``tests/test_golden.py`` recomputes from the code on every test run).
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

from models.cpu.presets import CPU_PRESETS
from models.platform import PowerConfig
from models.platforms import PLATFORMS

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(
    r"(<!-- generated: (?P<name>[\w-]+)(?: (?P<arg>[\w.-]+))? -->\n)(?P<body>.*?)(<!-- end generated -->)", re.S
)


def golden_run(name: str) -> dict:
    """The flattened figures of golden case ``docs/<name>`` (floats as numbers)."""
    case = json.loads((ROOT / "tests" / "golden" / "golden.json").read_text())["cases"][f"docs/{name}"]
    return {k: float(v) if isinstance(v, str) and _is_float(v) else v for k, v in case.items()}


def _is_float(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _g(v: float, decimals: int = 2) -> str:
    """A number as the pages write it: no trailing zeros, at most ``decimals`` decimals."""
    text = f"{v:.{decimals}f}".rstrip("0").rstrip(".")
    return text if text != "-0" else "0"


def _table(head: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def cstates(preset: str) -> str:
    """A CPU preset's C-states: exit latency and target residency (us), per-core power (W)."""
    rows = []
    for st in CPU_PRESETS[preset]().cstates:
        power = "busy power at `spin` activity" if st.polling else _g(st.power_w)
        rows.append(
            [
                st.name,
                _g(st.exit_latency_ns / 1e3),
                _g(st.target_residency_ns / 1e3),
                power,
                "yes" if st.package_deep else "",
                "yes" if st.flushes_core_caches else "",
            ]
        )
    return _table(["State", "Exit", "Residency", "Power", "package_deep", "flushes_core_caches"], rows)


def cpu_power_presets(_arg=None) -> str:
    """Each CPU preset's power coefficients and its busy-core power at the top clock (W)."""
    rows = []
    for name, make in CPU_PRESETS.items():
        c = make()
        f = c.top_freq_ghz
        threads = c.physical_cores * (2 if c.smt else 1)
        rows.append(
            [
                f"`{name}` ({_g(c.power_limit_w)} W TDP, {c.physical_cores}C/{threads}T)",
                _g(f),
                _g(c.core_leakage_w, 1),
                _g(c.core_dynamic_w, 1),
                _g(c.busy_power_w(f, 1.0), 1),
                _g(c.busy_power_w(f, c.activity["poll"]), 1),
                _g(c.busy_power_w(f, c.activity["spin"]), 1),
                f"{_g(c.uncore_active_w, 1)} / {_g(c.uncore_idle_w, 1)}",
            ]
        )
    c = next(iter(CPU_PRESETS.values()))()
    return _table(
        [
            "Preset",
            "Top GHz",
            "Leakage",
            "Dynamic",
            "P(a=1)",
            f"P(poll {_g(c.activity['poll'])})",
            f"P(spin {_g(c.activity['spin'])})",
            "Uncore active / idle",
        ],
        rows,
    )


POWER_UNITS = {
    "dram_w": "W",
    "platform_base_w": "W",
    "platform_cpu_coupling": "W/W",
    "c0_core_w": "W",
    "c0_core_ghz_w": "W/GHz",
}


def power_config(platform: str) -> str:
    """A platform's non-CPU, non-SSD power fields: unit, value, meaning (the field's description)."""
    pw = PLATFORMS[platform]().power
    rows = []
    for field, unit in POWER_UNITS.items():
        desc = PowerConfig.model_fields[field].description.removesuffix(", W")
        rows.append([f"`{field}`", unit, _g(getattr(pw, field), 3), desc])
    return _table(["Field", "Unit", f"`{platform}`", "Meaning"], rows)


MODES = (("classic polling", "classic-poll"), ("hybrid polling", "hybrid-poll"), ("interrupt", "interrupt"))


def modes_cpu(_arg=None) -> str:
    """Per completion mode: CPU package power and where the IO thread's CPU spends its time."""
    rows = []
    for label, run in MODES:
        g = golden_run(run)
        c0, spin = g["summary.cstate_residency.cpu0.C0"], g["summary.cstate_residency.cpu0.POLL"]
        ios = g["summary.iops"] * g["sim.measured_s"]
        poll = g["summary.layers_ns_per_io.polling"] * ios / (g["sim.measured_s"] * 1e9)
        rows.append(
            [
                label,
                _g(g["summary.power_w.cpu"], 1),
                f"{100 * c0:.0f}%",
                f"{100 * (c0 - poll):.0f}%",
                f"{100 * poll:.0f}%",
                f"{100 * spin:.0f}%",
            ]
        )
    return _table(["Mode", "CPU W", "cpu0 in C0", "code", "`blk_poll`", "POLL spin"], rows)


def modes_energy(_arg=None) -> str:
    """Per completion mode: IOPS, system power, MB per joule, joules per million IOs."""
    rows = []
    for label, run in MODES:
        g = golden_run(run)
        rows.append(
            [
                label,
                f"{g['summary.iops']:,.0f}",
                _g(g["summary.power_w.system"], 1),
                f"{g['summary.bytes_per_joule'] / 1e6:.2f}",
                f"{g['summary.energy_j_per_million_ios']:.0f}",
            ]
        )
    return _table(["Mode", "IOPS", "System W", "MB/J", "J per million IOs"], rows)


GOVERNORS = (
    ("`performance`", "interrupt"),
    ("`ondemand` (io_is_busy=1, the Intel default)", "ondemand"),
    ("`ondemand`, `io_is_busy=0`", "ondemand-io-not-busy"),
    ("`schedutil`", "schedutil"),
    ("`schedutil`, `iowait_boost=false`", "schedutil-no-boost"),
    ("`powersave`", "powersave"),
)


def governors(_arg=None) -> str:
    """Per cpufreq governor: mean latency, IOPS, CPU power, joules per million IOs."""
    rows = []
    for label, run in GOVERNORS:
        g = golden_run(run)
        rows.append(
            [
                label,
                f"{g['summary.latency_us.mean']:.2f} us",
                f"{g['summary.iops'] / 1e3:.1f}K",
                f"{g['summary.power_w.cpu']:.1f} W",
                f"{g['summary.energy_j_per_million_ios']:.0f}",
            ]
        )
    return _table(["Governor", "Mean latency", "IOPS", "CPU power", "J per million IOs"], rows)


def ssd_presets(_arg=None) -> str:
    """Each SSD preset's service times, media units, data path, link, front end and power."""
    from models.ssd.presets import SSD_PRESETS

    rows = []
    for name, make in SSD_PRESETS.items():
        d = make()
        rows.append(
            [
                f"`{name}`",
                f"{d.read.base_ns:,.0f} / {d.read.sd_ns:,.0f}",
                f"{d.write.base_ns:,.0f} / {d.write.sd_ns:,.0f}",
                f"{d.read.per_kib_ns:,.0f} / {d.write.per_kib_ns:,.0f}",
                f"{d.write_cache_program_ns / 1e3:,.0f}",
                str(d.parallel_units),
                f"{d.datapath.count} x {_g(d.datapath.read_gb_s, 1)} / {_g(d.datapath.write_gb_s, 1)}"
                if d.datapath
                else "-",
                _g(d.link_gb_s, 1),
                f"{d.fetch_ns:,.0f} / {d.post_ns:,.0f}",
                f"{_g(d.idle_w, 1)} / {_g(d.active_read_w, 1)} / {_g(d.active_write_w, 1)}",
            ]
        )
    return _table(
        [
            "Preset",
            "Read base / sd (ns)",
            "Write base / sd (ns)",
            "per KiB R/W (ns)",
            "Write program (us)",
            "Units",
            "Data path GB/s R / W",
            "Link GB/s",
            "Fetch / post (ns)",
            "Idle / read / write W",
        ],
        rows,
    )


def catalogue_cpus(_arg=None) -> str:
    """The CPU catalogue, one row each: family, cores, clocks, TDP, idle states, sockets."""
    from models.cpu.presets import CPU_CATALOGUE

    rows = []
    for name, preset in CPU_CATALOGUE.items():
        c = preset.make()
        threads = c.physical_cores * (2 if c.smt else 1)
        states = ", ".join(
            f"{st.name} {_g(st.exit_latency_ns / 1e3)}/{_g(st.target_residency_ns / 1e3)}" for st in c.cstates[1:]
        )
        rows.append(
            [
                f"`{name}`",
                str(preset.fact("family", "")),
                f"{c.physical_cores}C/{threads}T",
                f"{_g(c.base_freq_ghz)} / {_g(c.max_freq_ghz)}",
                _g(c.power_limit_w or 0),
                states,
                str(preset.fact("max_sockets", 1)),
            ]
        )
    return _table(
        ["Preset", "Family", "Cores", "Base / top GHz", "TDP W", "Idle states (exit/residency us)", "Sockets"], rows
    )


def catalogue_ssds(_arg=None) -> str:
    """The SSD catalogue, one row each: interface, media, capacity, the device's QD1 read time and
    its random-read ceiling at the datasheets' depth (units x that depth's busy share / service, the
    data paths' bytes, the firmware's reads per second)."""
    from models.ssd.presets import DATASHEET_DEPTH, SSD_CATALOGUE

    rows = []
    for name, preset in SSD_CATALOGUE.items():
        d = preset.make()
        rate = min(d.link_gb_s, d.datapath.read_gb_s) if d.datapath else d.link_gb_s  # one transfer's
        total = min(d.link_gb_s, d.datapath.count * d.datapath.read_gb_s) if d.datapath else d.link_gb_s
        fw = d.firmware.read_ns if d.firmware is not None else 0.0  # the firmware's time per read
        qd1 = (d.fetch_ns + fw + d.read.base_ns + 4096 / rate + d.post_ns) / 1e3
        units = d.parallel_units * DATASHEET_DEPTH / (DATASHEET_DEPTH + d.parallel_units - 1) / d.read.base_ns * 1e9
        ceiling = min(units, total * 1e9 / 4096, d.firmware.cores / fw * 1e9 if fw else math.inf)
        rows.append(
            [
                f"`{name}`",
                str(preset.fact("interface", "")),
                str(preset.fact("media", "")),
                f"{d.capacity_bytes / 1e12:g} TB" if d.capacity_bytes else "-",
                _g(qd1, 1),
                f"{ceiling / 1e3:,.0f}K",
                ", ".join(ps.name for ps in d.power_states) or "-",
            ]
        )
    return _table(
        ["Preset", "Interface", "Media", "Capacity", "QD1 read us", f"4 KiB reads at {DATASHEET_DEPTH}", "APST states"],
        rows,
    )


def preset_sources(name: str) -> str:
    """Every value preset ``name`` sets, with its source; then its facts."""
    from models.cpu.presets import CPU_CATALOGUE
    from models.ssd.presets import SSD_CATALOGUE
    from simcore.sources import sourced_rows

    preset = CPU_CATALOGUE.get(name) or SSD_CATALOGUE[name]
    rows = [
        [f"`{f}`", v.replace("|", "/"), s.replace("|", "/")] for f, v, s in sourced_rows(preset.make(), preset.sources)
    ]
    rows += [[f"({f})", str(v), s] for f, (v, s) in preset.facts.items()]
    return _table(["Field", "Value", "Source"], rows)


def cpu_limit_presets(_arg=None) -> str:
    """Each CPU preset's turbo and package limits, and its busy package's power at base and at the
    all-core turbo (every core busy, both SMT siblings, the uncore active)."""
    rows = []
    for name, make in CPU_PRESETS.items():
        c = make()
        act = max(c.activity.values()) * (1.0 + (c.smt_second_thread_activity if c.smt else 0.0))

        def busy(ghz: float, c=c, act=act) -> float:
            return c.physical_cores * c.busy_power_w(ghz, act) + c.uncore_active_w

        all_core = c.turbo_limits_ghz()[c.physical_cores]
        pl2 = f"{_g(c.pl2_w)} W / {_g(c.pl2_window_ms)} ms" if c.pl2_w is not None else "-"
        amps = f"{_g(c.tdc_a)} / {_g(c.edc_a)}" if c.tdc_a is not None else "-"
        rows.append(
            [
                f"`{name}`",
                f"{_g(c.max_freq_ghz)} / {_g(all_core)}",
                f"{_g(c.power_limit_w)} W / "
                + (
                    f"{_g(c.power_limit_window_ms / 1000)} s"
                    if c.power_limit_window_ms >= 1000
                    else f"{_g(c.power_limit_window_ms)} ms"
                ),
                pl2,
                amps,
                _g(c.idle_package_w, 1),
                f"{_g(busy(c.base_freq_ghz), 1)} at {_g(c.base_freq_ghz)}",
                f"{_g(busy(all_core), 1)} at {_g(all_core)}",
            ]
        )
    return _table(
        [
            "Preset",
            "Turbo GHz, 1 core / all",
            "PL1 (PPT) / Tau",
            "PL2 / window",
            "TDC / EDC A",
            "Idle W (avg at t=0)",
            "Busy W at base",
            "Busy W at all-core turbo",
        ],
        rows,
    )


TABLES = {
    "catalogue-cpus": catalogue_cpus,
    "catalogue-ssds": catalogue_ssds,
    "preset-sources": preset_sources,
    "ssd-presets": ssd_presets,
    "cstates": cstates,
    "cpu-power-presets": cpu_power_presets,
    "cpu-limit-presets": cpu_limit_presets,
    "power-config": power_config,
    "modes-cpu": modes_cpu,
    "modes-energy": modes_energy,
    "governors": governors,
}


def regenerate(text: str) -> tuple[str, list[str]]:
    """``text`` with every generated block remade, and the names of the blocks that changed."""
    changed = []

    def fill(m: re.Match) -> str:
        name, arg = m["name"], m["arg"]
        if name not in TABLES:
            raise KeyError(f"unknown generated table {name!r}")
        body = TABLES[name](arg)
        if body != m["body"]:
            changed.append(f"{name} {arg or ''}".strip())
        return m[1] + body + m[5]

    return BLOCK.sub(fill, text), changed
