"""Docs that are true: the KernelCosts table of docs/os.md, every generated table of docs/ (presets,
platform power, the golden set's docs runs) and the fitted values and results quoted in prose are
made from the code by tools/docs_defaults.py; a changed default without a regenerated page fails
here."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import models.os.costs.tables as costs

ROOT = Path(__file__).resolve().parents[1]


def _tool():
    spec = importlib.util.spec_from_file_location("docs_defaults", ROOT / "tools" / "docs_defaults.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_kernel_cost_table_generated_tables_and_quoted_values_match_the_code():
    tool = _tool()
    _new, changed = tool.regenerate(tool.OS_MD.read_text())
    assert changed == [], "run: python tools/docs_defaults.py"
    assert tool.stale_tables() == {}, "run: python tools/docs_defaults.py"
    assert tool.stale_prose() == []


def test_the_pages_have_their_generated_tables():
    """Each generated table is in place (a deleted marker would silently stop the checking)."""
    tool = _tool()
    cpu, power = ((ROOT / "docs" / p).read_text() for p in ("cpu.md", "power.md"))
    for preset in ("xeon-e3-1230-v5", "xeon-e5-2660-v4", "xeon-e5-2640-v4", "xeon-silver-4210r", "epyc-9454p"):
        assert f"<!-- generated: cstates {preset} -->" in cpu
    assert "<!-- generated: cpu-power-presets -->" in cpu and "<!-- generated: governors -->" in cpu
    for name in ("modes-cpu", "modes-energy", "power-config optane900p-e3-1230v5"):
        assert f"<!-- generated: {name} -->" in power
    every_page = "".join(p.read_text() for p in (ROOT / "docs").glob("*.md"))
    assert set(tool.docs_tables.TABLES) <= {m["name"] for m in tool.docs_tables.BLOCK.finditer(every_page)}


def test_a_changed_preset_is_caught(monkeypatch):
    tool = _tool()
    from models.cpu import presets

    real = presets.CPU_PRESETS["epyc-9454p"]
    monkeypatch.setitem(tool.docs_tables.CPU_PRESETS, "epyc-9454p", lambda: real(uncore_idle_w=39.0))
    stale = tool.stale_tables()
    assert {p.name for p in stale} == {"cpu.md"}
    assert stale[ROOT / "docs" / "cpu.md"][1] == ["cpu-power-presets", "cpu-limit-presets"]


def test_every_kernel_cost_field_with_a_number_has_a_row():
    text = (ROOT / "docs" / "os.md").read_text()
    missing = [
        f
        for f in (
            "user_io_cycles",
            "ctx_switch_cycles",
            "irq_entry_cycles",
            "wakeup_cycles",
            "idle_entry_cycles",
            "idle_exit_cycles",
        )
        if f"| `{f}` |" not in text
    ]
    assert missing == []


def test_a_changed_default_is_caught(monkeypatch):
    tool = _tool()
    field = costs.KernelCosts.model_fields["wakeup_cycles"]
    monkeypatch.setattr(field, "default", field.default + 1)
    _new, changed = tool.regenerate(tool.OS_MD.read_text())
    assert any(c.startswith("wakeup_cycles:") for c in changed)
