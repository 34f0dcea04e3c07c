"""Golden figures: the fast subset of ``benchmarks/golden.py`` recomputed and compared exactly with
``tests/golden/golden.json`` (recorded before the architecture renovation, issue 12). A refactor
that must not change results keeps every figure bit-identical; a deliberate change re-records
(``python benchmarks/golden.py --record``) and says in its commit which figure moved and why. The
full set (every scenario at its own settings, the validation suites) is
``python benchmarks/golden.py --check``."""

import importlib.util
import sys
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parent.parent / "benchmarks" / "golden.py"
_spec = importlib.util.spec_from_file_location("stacksim_golden", _PATH)
golden = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = golden  # dataclasses look their module up
_spec.loader.exec_module(golden)

RECORDED = golden.load()["cases"]
FAST = [c for c in golden.cases() if c.fast]


def test_every_case_is_recorded_and_the_fast_subset_is_not_empty():
    assert FAST and {c.name for c in golden.cases()} == set(RECORDED)


@pytest.mark.parametrize("case", FAST, ids=[c.name for c in FAST])
def test_golden_figures_unchanged(case):
    moved = golden.diff(case.name, RECORDED[case.name], golden.run_case(case))
    assert not moved, "figures moved:\n" + "\n".join(moved)


def test_diff_names_each_figure_that_moved():
    want = {"a.b": "1.0", "n": 3, "gone": "2.0"}
    got = {"a.b": "1.0000000000000002", "n": 3, "new": None}
    lines = golden.diff("c", want, got)
    assert len(lines) == 3
    assert any("a.b moved '1.0' -> '1.0000000000000002'" in s for s in lines)
    assert any("gone missing" in s for s in lines) and any("new new" in s for s in lines)


def test_flatten_keeps_full_precision_and_drops_wall_clock():
    flat = golden.flatten({"x": 0.1 + 0.2, "sim": {"wall_s": 1.0, "events": 5}, "_private": 1, "l": [1, None]})
    assert flat == {"x": "0.30000000000000004", "sim.events": 5, "l.0": 1, "l.1": None}
