"""The Python examples of docs/api.md run as written (each code block in a fresh namespace)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[1] / "docs" / "api.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)


def test_the_page_has_examples():
    assert len(BLOCKS) >= 4


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_api_example_runs(index, capsys):
    exec(compile(BLOCKS[index], f"{DOC}:block{index + 1}", "exec"), {"__name__": "__docs__"})
    assert capsys.readouterr().out.strip() or "assert" in BLOCKS[index]
