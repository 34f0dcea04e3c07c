"""Which preset describes a probed part: by model name, else the nearest generation.

:func:`match_name` compares a model name as the machine reports it (``/proc/cpuinfo``'s
``model name``, ``/sys/class/nvme/nvmeX/model``) with each preset's own ``model`` field, both
normalised to sets of lower-case words: a preset matches when every word of its model is in the
reported name (``Intel Xeon Silver 4210R`` in ``Intel(R) Xeon(R) Silver 4210R CPU @ 2.40GHz``), the
one with the most words winning (a word of letters and digits may be run together in the reported
name: ``980PRO``). Any preset added to :data:`models.cpu.presets.CPU_PRESETS` or
:data:`models.ssd.presets.SSD_PRESETS` is matched the same way, with no list to keep here.

Enterprise SSDs report a part number, not a marketing name: :data:`SSD_PART_NUMBERS` names the
product of a few part-number families, so their words can match a preset's model
[recalled from the vendors' product tables, not re-checked].

With no match, :func:`generation` places a CPU by its name or, failing that, by ``/proc/cpuinfo``'s
``cpu family`` and ``model`` (the numbers the kernel's ``intel_idle`` tables are keyed on:
arch/x86/include/asm/intel-family.h), and :func:`nearest_cpu` picks the preset of the closest
generation: the same vendor first, then the same market (server or desktop), then the nearest
launch year (the years are the generations' launches as the vendors announced them [recalled, to
within about half a year: they only order the generations]).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "words",
    "preset_config",
    "reported_name",
    "match_name",
    "Generation",
    "generation",
    "nearest_cpu",
    "nearest_ssd",
]


def words(name: str) -> set[str]:
    """``Intel(R) Xeon(R) E5-2660 v4`` -> {intel, xeon, e5, 2660, v4}."""
    return {w for w in re.split(r"[^a-z0-9]+", _plain(name)) if w}


def preset_config(entry: Any):
    """The configuration a preset registry entry makes: the entry is its factory (a callable), or
    an object carrying one as ``make``."""
    make = getattr(entry, "make", entry)
    return make()


#: part-number family -> the product's name [recalled: Intel's and Samsung's product tables and
#: the numbers drives report in ``nvme list``; not re-checked]
SSD_PART_NUMBERS: tuple[tuple[str, str], ...] = (
    (r"SSDPE.1D280", "Intel Optane SSD 900P"),
    (r"SSDPE.1D", "Intel Optane SSD 905P"),
    (r"SSDPE.1K", "Intel Optane SSD DC P4800X"),
    (r"SSDPEL1K", "Intel Optane SSD DC P4801X"),
    (r"SSDPF21Q", "Intel Optane SSD DC P5800X"),
    (r"SSDPE.MD", "Intel SSD DC P3700"),
    (r"SSDPF2KX", "Solidigm D7-P5520"),
    (r"MZQL2|MZ1L2", "Samsung PM9A3"),
    (r"MZWLJ", "Samsung PM1733"),
    (r"MZWLO", "Samsung PM1743"),
    (r"KCM6", "Kioxia CM6"),
    (r"MTFDK.{2}\d+T\d?TFR", "Micron 7450"),
)


def reported_name(name: str) -> str:
    """A reported SSD model, followed by its product's name when it is a part number."""
    for pattern, product in SSD_PART_NUMBERS:
        if re.search(pattern, name.upper()):
            return f"{name} {product}"
    return name


def _plain(name: str) -> str:
    """Lower case, without the (R) and (TM) marks."""
    return re.sub(r"\((r|tm)\)", " ", name.lower())


def _squashed(name: str) -> str:
    """The name's letters and digits run together (``samsungssd980pro1tb``)."""
    return re.sub(r"[^a-z0-9]+", "", _plain(name))


def match_name(reported: str, models: Mapping[str, str]) -> str | None:
    """The key of the preset (``models``: key -> its ``model`` field) each of whose words is a word
    of the ``reported`` name, the most specific one (the most words); None if none. A word that
    mixes letters and digits may also be run together in the reported name (``980PRO`` is in
    ``Samsung SSD 980 PRO``). A preset's parenthesised note is not part of its name
    (``Intel Core i9-12900K (P-cores)`` is the part ``Intel Core i9-12900K``)."""
    have, squashed = words(reported), _squashed(reported)

    def found(w: str) -> bool:
        return w in have or (bool(re.search(r"\d", w)) and bool(re.search(r"[a-z]", w)) and w in squashed)

    best, best_n = None, 0
    for key, model in models.items():
        need = words(re.sub(r"\([^)]*\)", " ", model))
        if need and all(found(w) for w in need) and len(need) > best_n:
            best, best_n = key, len(need)
    return best


@dataclass(frozen=True)
class Generation:
    """Where a CPU sits: vendor (intel, amd), market (server, desktop), launch year, a label."""

    vendor: str
    market: str
    year: float
    label: str


#: Intel family 6 model -> (market, year, label) (intel-family.h names)
_INTEL_MODELS = {
    63: ("server", 2014, "Haswell-EP"),
    79: ("server", 2016, "Broadwell-EP"),
    86: ("server", 2016, "Broadwell-DE"),
    85: ("server", 2018, "Skylake-SP / Cascade Lake-SP"),
    106: ("server", 2021, "Ice Lake-SP"),
    108: ("server", 2021, "Ice Lake-D"),
    143: ("server", 2023, "Sapphire Rapids"),
    207: ("server", 2023.9, "Emerald Rapids"),
    173: ("server", 2024.7, "Granite Rapids"),
    78: ("desktop", 2015, "Skylake"),
    94: ("desktop", 2015, "Skylake"),
    158: ("desktop", 2017, "Kaby Lake / Coffee Lake"),
    165: ("desktop", 2020, "Comet Lake"),
    167: ("desktop", 2021, "Rocket Lake"),
    151: ("desktop", 2021.9, "Alder Lake"),
    154: ("desktop", 2021.9, "Alder Lake"),
    183: ("desktop", 2022.9, "Raptor Lake"),
    186: ("desktop", 2022.9, "Raptor Lake"),
    191: ("desktop", 2022.9, "Raptor Lake"),
}

#: name pattern -> (vendor, market, year from the matched digit, label)
_NAMES: tuple[tuple[str, str, str, Callable[[str], float], str], ...] = (
    (
        r"xeon.*\be[357]-\d{4}\w*\s*v(\d)",
        "intel",
        "server",
        lambda v: {2: 2012, 3: 2014, 4: 2016, 5: 2015.5}.get(int(v), 2017),
        "Xeon E v",
    ),
    (
        r"xeon.*(?:bronze|silver|gold|platinum)\s*\d(\d)\d\d",
        "intel",
        "server",
        lambda g: 2015.5 + 2 * int(g),
        "Xeon Scalable gen ",
    ),
    (r"core.*\bi[3579]-(1\d|[2-9])\d{3}", "intel", "desktop", lambda g: 2009 + int(g), "Core gen "),
    (
        r"epyc\s*\d\d\d(\d)",
        "amd",
        "server",
        lambda g: {1: 2017, 2: 2019, 3: 2021, 4: 2022.9}.get(int(g), 2024.8),
        "EPYC gen ",
    ),
    (
        r"ryzen.*\b(\d)\d{3}",
        "amd",
        "desktop",
        lambda s: {1: 2017, 2: 2018, 3: 2019, 5: 2020.9, 7: 2022.7}.get(int(s), 2024.6),
        "Ryzen ",
    ),
)


def _vendor(name: str, vendor_id: str) -> str:
    low = name.lower()
    if vendor_id == "AuthenticAMD" or re.search(r"\b(amd|epyc|ryzen)\b", low):
        return "amd"
    if vendor_id == "GenuineIntel" or "intel" in low or "xeon" in low:
        return "intel"
    return vendor_id.lower() or "unknown"


def _amd_model(family: int, model: int) -> tuple[str, float, str] | None:
    if family == 23:
        return (
            ("server", 2019, "Zen 2 (Rome)")
            if model == 0x31
            else ("desktop", 2017 if model < 0x30 else 2019, "Zen/Zen 2")
        )
    if family == 25:
        if model < 0x10:
            return ("server", 2021, "Zen 3 (Milan)")
        if model < 0x20 or 0xA0 <= model < 0xB0:
            return ("server", 2022.9, "Zen 4 (Genoa/Bergamo)")
        return ("desktop", 2020.9 if model < 0x60 else 2022.7, "Zen 3/Zen 4 client")
    return ("server", 2024.8, "Zen 5") if family == 26 else None


def generation(
    name: str, vendor_id: str = "", family: int | None = None, model: int | None = None
) -> Generation | None:
    """The generation of the CPU named ``name`` (or, for a name without a number, such as a VM's
    ``Intel(R) Xeon(R) Processor``, of ``family``/``model``); None if neither tells."""
    vendor, low = _vendor(name, vendor_id), re.sub(r"\((r|tm)\)", "", name.lower())
    for pattern, vend, market, year, label in _NAMES:
        m = re.search(pattern, low)
        if m:
            return Generation(vend, market, year(m.group(1)), label + m.group(1))
    found = None
    if vendor == "intel" and family == 6 and model in _INTEL_MODELS:
        found = _INTEL_MODELS[model]
    elif vendor == "amd" and family is not None and model is not None:
        found = _amd_model(family, model)
    return Generation(vendor, *found) if found else None


def nearest_cpu(probed: Generation | None, vendor: str, presets: Mapping[str, Generation | None]) -> str:
    """The preset key closest to ``probed``: same vendor, then market, then launch year (first in
    order on a tie). Without a generation: the first preset of ``vendor``, else the first."""

    def distance(g: Generation | None) -> float:
        if g is None:
            return 1e6
        if probed is None:
            return 0.0 if g.vendor == vendor else 100.0
        return 100.0 * (g.vendor != probed.vendor) + 3.0 * (g.market != probed.market) + abs(g.year - probed.year)

    return min(presets, key=lambda k: distance(presets[k]))


def nearest_ssd(optane: bool, link_gb_s: float | None, presets: Mapping[str, Any]) -> str:
    """The SSD preset (key -> DeviceConfig) of the same media (3D XPoint or NAND: the Optane
    presets' models say Optane) with the link rate nearest ``link_gb_s`` (first in order without one)."""

    def distance(cfg) -> float:
        same = ("optane" in words(cfg.model)) == optane
        link = abs(math.log(cfg.link_gb_s / link_gb_s)) if link_gb_s else 0.0
        return 100.0 * (not same) + link

    return min(presets, key=lambda k: distance(presets[k]))
