"""The layers contract (setup.cfg ``[importlinter]``, docs/architecture.md): stacksim (CLI) >
scenarios > policies > models > simcore, each importing only from below, checked by import-linter
on the source tree (function-level imports count as imports)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _lint(config: Path) -> subprocess.CompletedProcess:
    code = ("import sys; from importlinter.cli import lint_imports; "
            f"sys.exit(lint_imports(config_filename={str(config)!r}, no_cache=True))")
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_every_package_imports_only_from_the_layers_below():
    pytest.importorskip("importlinter")
    run = _lint(ROOT / "setup.cfg")
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert "1 kept, 0 broken" in run.stdout


def test_the_contract_catches_an_upward_import(tmp_path):
    """The check can fail: a copy of the tree where a model imports the CLI breaks the contract."""
    pytest.importorskip("importlinter")
    import shutil

    for pkg in ("simcore", "models", "policies", "scenarios", "stacksim"):
        shutil.copytree(ROOT / pkg, tmp_path / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "setup.cfg", tmp_path / "setup.cfg")
    bad = tmp_path / "models" / "ssd" / "device.py"
    bad.write_text(bad.read_text() + "\n\ndef _upward():\n    from stacksim import cli  # noqa: F401\n")
    code = ("import sys; from importlinter.cli import lint_imports; "
            f"sys.exit(lint_imports(config_filename={str(tmp_path / 'setup.cfg')!r}, no_cache=True))")
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                         env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"})
    assert run.returncode != 0
    assert "models.ssd.device -> stacksim.cli" in run.stdout
