"""The models read the fio job and the host through typed contracts (issue 43, item 3).

``models/ioengines/job.py``'s :class:`FioJob` is the job the engines read; each level of the
kernel declares what it reads of the host (``models/os/sched/host.py`` and the views above it,
``models/ioengines/host.py`` for user space, ``models/cpu/cpufreq.py`` for the governors), and
``models/host.py``'s ``Host`` matches them. Here: no parameter or attribute named ``job`` or
``host`` in ``models/`` is untyped or ``Any`` (so mypy checks every field a model reads of them:
``tests/test_compiled.py`` for the compiled hot path); ``Host`` is every view of it (mypy); and
each check can fail.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: the names whose type is a contract: the fio job a thread runs, the host a part is built on
NAMES = ("job", "host")
#: annotations that type nothing
UNTYPED = {"Any", "typing.Any", "object"}


def _untyped(annotation: ast.expr | None) -> bool:
    if annotation is None:
        return True
    text = ast.unparse(annotation)
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        text = annotation.value  # a quoted annotation
    return text.strip() in UNTYPED


def _params(fn: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> list[ast.arg]:
    a = fn.args
    return [*a.posonlyargs, *a.args, *a.kwonlyargs]


def untyped_contracts(source: str, path: str) -> list[str]:
    """``path:line: what`` for each parameter named job/host without a type (or typed Any), each
    such attribute assigned without a type (``self.host = ring.host``; ``self.host = host`` is
    typed by its parameter) and each class-level ``host: Any``."""
    tree = ast.parse(source)
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            typed = {p.arg for p in _params(node) if not _untyped(p.annotation)}
            typed |= {  # locals declared with a type: ``host: EngineHost = main.host``
                s.target.id
                for s in ast.walk(node)
                if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name) and not _untyped(s.annotation)
            }
            for p in _params(node):
                if p.arg in NAMES and _untyped(p.annotation):
                    found.append(f"{path}:{p.lineno}: parameter '{p.arg}' of {getattr(node, 'name', 'lambda')}")
            if isinstance(node, ast.Lambda):
                continue
            for stmt in ast.walk(node):
                if isinstance(stmt, ast.Assign):
                    for target in stmt.targets:
                        if isinstance(target, ast.Attribute) and target.attr in NAMES:
                            value = stmt.value
                            if not (isinstance(value, ast.Name) and value.id in typed):
                                found.append(f"{path}:{stmt.lineno}: attribute '{target.attr}' assigned untyped")
                elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Attribute):
                    if stmt.target.attr in NAMES and _untyped(stmt.annotation):
                        found.append(f"{path}:{stmt.lineno}: attribute '{stmt.target.attr}' typed Any")
        elif isinstance(node, ast.ClassDef):
            for stmt in node.body:
                if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                    if stmt.target.id in NAMES and _untyped(stmt.annotation):
                        found.append(f"{path}:{stmt.lineno}: class attribute '{stmt.target.id}' typed Any")
    return sorted(found, key=lambda f: (int(f.split(":")[1]), f))


def test_no_job_or_host_in_the_models_is_untyped():
    found = []
    for path in sorted((ROOT / "models").rglob("*.py")):
        found += untyped_contracts(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    assert not found, "untyped job/host in models/ (type them: FioJob, a host view):\n" + "\n".join(found)


def test_the_scan_finds_each_kind_of_untyped_job_or_host():
    """The check can fail: each way of leaving the contract untyped is found."""
    source = """
from typing import Any

class Thread:
    host: Any

    def __init__(self, host, job: Any, ring, *, other) -> None:
        self.host = ring.host
        self.job: Any = job
        self.other = other

def pick(job: "Any", host: "EngineHost") -> None:
    pass

f = lambda job: job.rw
"""
    found = untyped_contracts(source, "m.py")
    assert found == [
        "m.py:5: class attribute 'host' typed Any",
        "m.py:7: parameter 'host' of __init__",
        "m.py:7: parameter 'job' of __init__",
        "m.py:8: attribute 'host' assigned untyped",
        "m.py:9: attribute 'job' typed Any",
        "m.py:12: parameter 'job' of pick",
        "m.py:15: parameter 'job' of lambda",
    ], found
    typed = """
class Thread:
    def __init__(self, host: EngineHost, job: FioJob) -> None:
        self.host = host
        self.job = job
        self.other: EngineHost = host

def worker(main: Thread) -> None:
    host: EngineHost = main.host
    main.host = host
"""
    assert untyped_contracts(typed, "m.py") == []


#: the views of the host the models name it by, each with the module that declares it; the widest
#: (user space's) includes every kernel level's (sched < block < drivers < mm < io_uring)
VIEWS = {
    "EngineHost": "models.ioengines.host",
    "UringHost": "models.os.io_uring.host",
    "MmHost": "models.os.mm.host",
    "DriverHost": "models.os.drivers.host",
    "BlockHost": "models.os.block.host",
    "SchedHost": "models.os.sched.host",
    "CpufreqHost": "models.cpu.cpufreq",
}


def _mypy(tmp_path: Path, body: str) -> subprocess.CompletedProcess:
    probe = tmp_path / "host_views_probe.py"
    imports = "".join(f"from {mod} import {name}\n" for name, mod in VIEWS.items())
    probe.write_text("from __future__ import annotations\n\nfrom models.host import Host\n" + imports + body)
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "setup.cfg"), "--no-incremental", str(probe)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_host_matches_every_view_of_it(tmp_path):
    """``Host`` is each view (structurally: it inherits none), so a field renamed or retyped in the
    host, or in a view, is a type error here as well as in the models that read it."""
    pytest.importorskip("mypy", reason="the test extra brings mypy")
    body = "\n\ndef views(host: Host) -> None:\n" + "".join(f"    _{n.lower()}: {n} = host\n" for n in VIEWS)
    out = _mypy(tmp_path, body)
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]


def test_the_conformance_check_can_fail(tmp_path):
    """A host without the IO ledger, or with the engine of another type, is not user space's view."""
    pytest.importorskip("mypy", reason="the test extra brings mypy")
    body = """

class NoLedger(Host):
    ledger: None  # type: ignore[assignment]


class OtherEngine(Host):
    engine: int  # type: ignore[assignment]


def views(a: NoLedger, b: OtherEngine) -> None:
    _a: EngineHost = a
    _b: SchedHost = b
"""
    out = _mypy(tmp_path, body)
    assert out.returncode != 0
    assert 'expression has type "NoLedger", variable has type "EngineHost"' in out.stdout, out.stdout
    assert 'expression has type "OtherEngine", variable has type "SchedHost"' in out.stdout, out.stdout
