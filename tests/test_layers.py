"""The import contracts (setup.cfg ``[importlinter]``, docs/architecture.md), checked by
import-linter on the source tree (function-level and TYPE_CHECKING imports count as imports):
stacksim (CLI) > scenarios > policies > models > simcore, each importing only from below; inside
models/, the lanes: the assembly (host, platforms, power) > ioengines | server > os > cpu | ssd,
the server without the kernel, user space (ioengines) reaching the hardware only through it."""

from __future__ import annotations

import configparser
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _lint(config: Path) -> subprocess.CompletedProcess:
    code = (
        "import sys; from importlinter.cli import lint_imports; "
        f"sys.exit(lint_imports(config_filename={str(config)!r}, no_cache=True))"
    )
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)


def _contracts() -> list[str]:
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    return [s for s in cfg.sections() if s.startswith("importlinter:contract:")]


def test_every_contract_is_kept():
    pytest.importorskip("importlinter")
    n = len(_contracts())
    assert n >= 4  # the packages' layers, models' lanes, the server without the kernel, user space
    run = _lint(ROOT / "setup.cfg")
    assert run.returncode == 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert f"{n} kept, 0 broken" in run.stdout


def _lint_broken_copy(tmp_path, module: str, line: str) -> subprocess.CompletedProcess:
    """import-linter on a copy of the tree where ``module`` (a path under the root) gets ``line``
    inside a function."""
    import shutil

    for pkg in ("simcore", "models", "policies", "scenarios", "stacksim"):
        shutil.copytree(ROOT / pkg, tmp_path / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "setup.cfg", tmp_path / "setup.cfg")
    bad = tmp_path / module
    bad.write_text(bad.read_text() + f"\n\ndef _wrong_way():\n    {line}  # noqa: F401\n")
    code = (
        "import sys; from importlinter.cli import lint_imports; "
        f"sys.exit(lint_imports(config_filename={str(tmp_path / 'setup.cfg')!r}, no_cache=True))"
    )
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
    )


def test_the_contract_catches_an_upward_import(tmp_path):
    """The check can fail: a copy of the tree where a model imports the CLI breaks the contract."""
    pytest.importorskip("importlinter")
    run = _lint_broken_copy(tmp_path, "models/ssd/device.py", "from stacksim import cli")
    assert run.returncode != 0
    assert "models.ssd.device -> stacksim.cli" in run.stdout


def test_the_lanes_catch_the_ssd_reaching_into_the_kernel(tmp_path):
    """The lanes can fail: the SSD importing the NVMe driver (even for typing) breaks them."""
    pytest.importorskip("importlinter")
    run = _lint_broken_copy(tmp_path, "models/ssd/device.py", "from models.os.drivers.nvme import NvmeQueue")
    assert run.returncode != 0
    assert "models.ssd is not allowed to import models.os" in run.stdout
    assert "models.ssd.device -> models.os.drivers.nvme" in run.stdout
