"""Readable units: no function in the package is much over 60 lines unless a ``# long:`` comment
right above it says why (a flat table, a hot loop kept inline for speed)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("simcore", "models", "policies", "scenarios", "stacksim")
#: "about 60 lines": a few lines of slack for a docstring
MAX_LINES = 65


def long_functions(root: Path) -> list[str]:
    out = []
    for pkg in PACKAGES:
        for path in sorted((root / pkg).rglob("*.py")):
            lines = path.read_text().splitlines()
            for node in ast.walk(ast.parse("\n".join(lines))):
                if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    continue
                n = node.end_lineno - node.lineno + 1
                first = min([node.lineno] + [d.lineno for d in node.decorator_list])
                above = "\n".join(lines[max(0, first - 4) : first - 1])
                if n > MAX_LINES and "# long:" not in above:
                    out.append(f"{path.relative_to(root)}:{node.lineno} {node.name}: {n} lines")
    return out


def test_no_function_is_long_without_a_reason():
    assert long_functions(ROOT) == []


def test_the_check_finds_a_long_function(tmp_path):
    body = "\n".join(f"    x{i} = {i}" for i in range(70))
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "m.py").write_text(f"def big():\n{body}\n\n\n# long: a table\ndef table():\n{body}\n")
    for pkg in PACKAGES[:1] + PACKAGES[2:]:
        (tmp_path / pkg).mkdir()
    assert long_functions(tmp_path) == ["models/m.py:1 big: 71 lines"]
