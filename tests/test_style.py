"""House style is the tool's (pyproject.toml ``[tool.ruff]``): every Python file of the repository
is formatted by ``ruff format`` and passes ``ruff check`` (pycodestyle, pyflakes, import order)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _ruff(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    pytest.importorskip("ruff")
    return subprocess.run([sys.executable, "-m", "ruff", *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_every_file_is_formatted():
    run = _ruff("format", "--check", ".")
    assert run.returncode == 0, "run `ruff format .`:\n" + run.stdout[-3000:] + run.stderr[-1000:]


def test_every_file_passes_the_linter():
    run = _ruff("check", "--no-cache", ".")
    assert run.returncode == 0, "run `ruff check --fix .`:\n" + run.stdout[-3000:] + run.stderr[-1000:]


def test_the_checks_can_fail(tmp_path):
    """The same configuration flags an unused import, imports out of order and a long line."""
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / "bad.py").write_text("import sys\nimport os\n\nx = '" + "y" * 130 + "'\n")
    out = _ruff("check", "--no-cache", "--output-format", "concise", ".", cwd=tmp_path).stdout
    assert "F401" in out and "I001" in out and "E501" in out
    assert _ruff("format", "--check", ".", cwd=tmp_path).returncode != 0
