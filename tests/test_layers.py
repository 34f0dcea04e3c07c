"""The import contracts (setup.cfg ``[importlinter]``, docs/architecture.md), checked by
import-linter on the source tree (function-level and TYPE_CHECKING imports count as imports):
stacksim (CLI) > scenarios > policies > models > simcore, each importing only from below; inside
models/, the lanes: the assembly (host, platforms, power) > ioengines | server > os > cpu | ssd,
the server without the kernel, user space (ioengines) reaching the hardware only through it; inside
models/os, the kernel's tree (costs, header > locking > the runner chain > block > drivers > mm > fs >
io_uring), and no import circle anywhere in models/."""

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
    assert n >= 5  # the packages' layers, models' lanes, the server without the kernel, user space, the kernel tree
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


def test_the_kernel_tree_catches_the_block_layer_typing_its_driver(tmp_path):
    """The kernel's layers can fail: a request naming the NVMe driver's queue, even only for typing
    (the import that made the circle before the header models/os/interfaces.py), breaks them."""
    pytest.importorskip("importlinter")
    line = "from models.os.drivers.nvme import NvmeQueue"
    run = _lint_broken_copy(tmp_path, "models/os/block/request.py", line)
    assert run.returncode != 0
    assert "models.os.block is not allowed to import models.os.drivers" in run.stdout


def _module_graph(root: Path, package: str):
    """Every import between the modules of ``package`` (function-level and TYPE_CHECKING ones
    included, relative ones resolved): a networkx digraph of dotted names."""
    import ast

    import networkx as nx

    def name(p: Path) -> str:
        parts = list(p.relative_to(root).with_suffix("").parts)
        return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)

    files = {name(p): p for p in (root / package).rglob("*.py")}
    graph = nx.DiGraph()
    for mod, path in files.items():
        graph.add_node(mod)
        pkg = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    up = pkg.split(".")[: len(pkg.split(".")) - node.level + 1]
                    base = ".".join(up + ([base] if base else []))
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            else:
                continue
            for target in targets:
                if target in files and target != mod:
                    graph.add_edge(mod, target)
    return graph


def _cycles(graph) -> list[list[str]]:
    import networkx as nx

    return [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]


def test_no_import_circle_in_models():
    """No two modules of models/ reach each other through imports, type-only ones counted: each
    part names what it needs of a part above it through a declaration below both
    (models/os/interfaces.py, the runner chain's hooks in models/os/sched/execution.py)."""
    cycles = _cycles(_module_graph(ROOT, "models"))
    assert not cycles, cycles


def test_the_circle_check_can_fail(tmp_path):
    """A copy of models/ where the lowest runner level names the top one for typing has a circle."""
    import shutil

    shutil.copytree(ROOT / "models", tmp_path / "models", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    bad = tmp_path / "models" / "os" / "sched" / "execution.py"
    bad.write_text(bad.read_text() + "\nif TYPE_CHECKING:\n    from models.os.sched.runner import CpuRunner\n")
    cycles = _cycles(_module_graph(tmp_path, "models"))
    assert any("models.os.sched.execution" in c and "models.os.sched.runner" in c for c in cycles)
