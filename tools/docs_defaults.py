"""Keep the defaults quoted in docs/ true: the KernelCosts table of docs/os.md is generated from
the code (``models.os.costs.KernelCosts`` defaults and the calibrated ``optane900p-e3-1230v5``).

    python tools/docs_defaults.py          # rewrite the table's Default and Calibrated cells
    python tools/docs_defaults.py --check  # exit 1 and list the cells that differ

tests/test_docs_defaults.py runs the check, so a changed default without a regenerated page fails.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from models.os.costs import KernelCosts
from models.platforms import optane900p_e3_1230v5
from scenarios.calibrate_poll_energy import FIT_BOUNDS

ROOT = Path(__file__).resolve().parents[1]
OS_MD = ROOT / "docs" / "os.md"
ROW = re.compile(r"^\| `(?P<field>\w+)` \| (?P<default>[^|]*) \| (?P<calibrated>[^|]*) \|(?P<rest>.*)$")


def _num(value) -> str:
    if isinstance(value, dict):
        return "{}" if not value else "(per scheduler)"
    v = float(value)
    text = f"{v:,.0f}" if v == int(v) else f"{v:,.1f}"
    return text


def cells(field: str) -> tuple[str, str]:
    """The Default and Calibrated cells of ``field`` from the code."""
    default = KernelCosts.model_fields[field].get_default(call_default_factory=True)
    value = getattr(optane900p_e3_1230v5().kernel, field)
    unit = " ns" if field.endswith("_ns") else ""
    cal = _num(value) + unit
    if value != default:
        cal += " (fitted)" if f"kernel.{field}" in FIT_BOUNDS else " (set)"
    return _num(default) + unit, cal


def regenerate(text: str) -> tuple[str, list[str]]:
    """``text`` with every KernelCosts row's numbers from the code, and the rows that changed."""
    out, changed = [], []
    for line in text.splitlines():
        m = ROW.match(line)
        if m and m["field"] in KernelCosts.model_fields:
            d, c = cells(m["field"])
            new = f"| `{m['field']}` | {d} | {c} |{m['rest']}"
            if new != line:
                changed.append(f"{m['field']}: {m['default'].strip()} / {m['calibrated'].strip()} -> {d} / {c}")
            line = new
        out.append(line)
    return "\n".join(out) + "\n", changed


def _c(v: float, decimals: int = 1) -> str:
    return f"{v:,.{decimals}f}"


def prose_checks() -> list[tuple[str, str]]:
    """(page, text that must appear in it): fitted values and model results quoted in prose, with
    the text made from the code (the fits in models/platforms.py, the default scenario's golden
    figures in tests/golden/golden.json)."""
    import json

    from models.platforms import CINTERRUPTS_FIT, POLL_ENERGY_FIT

    pe, ci = POLL_ENERGY_FIT, CINTERRUPTS_FIT
    ctx, user, base = pe["kernel.ctx_switch_cycles"], pe["kernel.user_io_cycles"], pe["ssd.read.base_ns"]
    e3 = optane900p_e3_1230v5()
    ghz = e3.cpu.top_freq_ghz
    golden = json.loads((ROOT / "tests" / "golden" / "golden.json").read_text())["cases"]["run/default"]
    sched_ns = float(golden["summary.layers_ns_per_io.scheduler"])
    return [
        ("calibration.md", f"| `ssd.read.base_ns` | 4,000-9,000 | {_c(base)} ns |"),
        ("calibration.md", f"| `kernel.user_io_cycles` | 100-3,000 | {_c(user)} cycles ({user / ghz:.0f} ns) |"),
        ("calibration.md", f"| `kernel.ctx_switch_cycles` | 1,000-10,000 | {_c(ctx)} cycles ({ctx / ghz / 1e3:.2f} us) |"),
        ("calibration.md", f"`ctx_switch_cycles` = {_c(ci['kernel.ctx_switch_cycles'])} ({ci['kernel.ctx_switch_cycles'] / 2e3:.2f} us at 2.0 GHz), against {_c(ctx)} ({ctx / ghz / 1e3:.2f} us"),
        ("os.md", f"2 x {_c(ctx)} cycles"),
        ("os.md", f"`layers.scheduler` ({sched_ns:,.0f} ns per IO in the"),
        ("os.md", f"including the {e3.kernel.wakeup_cycles:,.0f}-cycle wakeup"),
        ("ssd.md", f"with the fitted {_c(base)} ns"),
        ("index.md", f"fio's user work ({user:.0f})"),
        ("index.md", f"media service about {round(base, -2):,.0f} ns"),
        ("index.md", f" = {float(golden['summary.latency_us.mean']):.2f} us; 1 voluntary context switch"),
    ]


def stale_prose() -> list[str]:
    out = []
    for page, text in prose_checks():
        if text not in (ROOT / "docs" / page).read_text():
            out.append(f"docs/{page} does not say (from the code): {text}")
    return out


def main(argv: list[str]) -> int:
    new, changed = regenerate(OS_MD.read_text())
    if "--check" in argv:
        for c in changed:
            print(f"docs/os.md KernelCosts table is stale: {c}")
        prose = stale_prose()
        for line in prose:
            print(line)
        return 1 if changed or prose else 0
    OS_MD.write_text(new)
    print(f"docs/os.md: {len(changed)} rows updated")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
