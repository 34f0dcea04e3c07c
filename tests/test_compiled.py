"""The compiled hot path (simcore.compiled, setup.py): built when it can be, typed, used only while
its sources match the build, and giving the same results as the pure-Python sources.

The rest of the suite runs whichever code the install gave (``stacksim --version`` says which); the
golden figures (tests/test_golden.py) are checked in this process and, here, once more in a
process that runs the pure-Python sources, so both are held to the same recorded figures."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from simcore import compiled
from simcore.compiled import BUILD_RECORD, COMPILED_MODULES, PURE_ENV, source_digest, why_not_compiled

ROOT = Path(__file__).resolve().parents[1]
SOURCES = [m.replace(".", "/") + ".py" for m in COMPILED_MODULES]


def _pure_env() -> dict:
    return {**os.environ, PURE_ENV: "1"}


def _module_file(module: str, env: dict) -> str:
    out = subprocess.run(
        [sys.executable, "-c", f"import simcore, {module} as m; print(m.__file__)"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_the_install_compiled_the_hot_path_when_it_could():
    """With mypyc and a C compiler at hand, the install must have compiled (a silently failed build
    would leave everything in pure Python). Fresh installs, e.g. CI's, must pass this."""
    if os.environ.get(PURE_ENV, "") not in ("", "0"):
        pytest.skip(f"{PURE_ENV} is set")
    cc = (sysconfig.get_config_var("CC") or "cc").split()[0]
    if importlib.util.find_spec("mypyc") is None or not shutil.which(cc):
        pytest.skip("no mypyc or no C compiler here: the install is pure Python by design")
    why = why_not_compiled()
    if why is not None and why.startswith("sources changed"):
        pytest.skip(why)  # a developer's edit since the last editable install
    assert why is None, f"{why}; install again (pip install -e .) to build the compiled hot path"
    assert compiled.is_compiled() and "compiled hot path (mypyc" in compiled.describe()
    assert Path(_module_file("models.os.sched.runner", dict(os.environ))).suffix == ".so"


def test_pure_env_runs_the_sources():
    assert _module_file("models.os.sched.runner", _pure_env()).endswith("models/os/sched/runner.py")
    out = subprocess.run(
        [sys.executable, "-m", "stacksim", "--version"],
        cwd=ROOT,
        env=_pure_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0 and "pure Python: STACKSIM_PURE is set" in out.stdout, out


def test_pure_python_gives_the_golden_figures():
    """The fast golden subset, recomputed by the pure-Python sources in a child process, matches
    the record exactly (tests/test_golden.py checks this process's code, compiled when built)."""
    out = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "golden.py"), "--check", "--fast"],
        cwd=ROOT,
        env=_pure_env(),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]


@pytest.mark.parametrize("site_packages", [True, False], ids=["with-dependencies", "without-dependencies"])
def test_compiled_modules_pass_mypy(site_packages):
    """mypyc compiles what mypy accepts, and enforces the annotations at run time: the compiled
    modules are checked with setup.cfg's [mypy] settings (check_untyped_defs). Both with the
    dependencies installed and without them (pip's isolated build of a fresh install has only the
    build requirements: simpy, pydantic and numpy are then Any; a type error in either case leaves
    that install silently pure Python)."""
    pytest.importorskip("mypy", reason="the test extra brings mypy")
    flags = [] if site_packages else ["--no-site-packages"]
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", *flags, *SOURCES],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stdout[-4000:] + out.stderr[-2000:]


def _fake_root(tmp_path: Path, digests: dict) -> Path:
    for m in COMPILED_MODULES:
        src = tmp_path / (m.replace(".", "/") + ".py")
        src.parent.mkdir(parents=True, exist_ok=True)
        src.write_text(f"# {m}\n")
        src.with_name(src.stem + sysconfig.get_config_var("EXT_SUFFIX")).write_bytes(b"")
    (tmp_path / BUILD_RECORD).write_text(json.dumps({"sources": digests}))
    return tmp_path


def test_an_edited_source_makes_the_build_stale(tmp_path, monkeypatch):
    monkeypatch.delenv(PURE_ENV, raising=False)
    root = _fake_root(tmp_path, {})
    fresh = {m: source_digest(m, root) for m in COMPILED_MODULES}
    (root / BUILD_RECORD).write_text(json.dumps({"sources": fresh}))
    assert why_not_compiled(root) is None
    (root / "models" / "os" / "sched" / "runner.py").write_text("# edited\n")
    why = why_not_compiled(root)
    assert why is not None and "sources changed" in why and "models.os.sched.runner" in why and "reinstall" in why
    (root / BUILD_RECORD).unlink()
    assert "not compiled at install" in why_not_compiled(root)
    monkeypatch.setenv(PURE_ENV, "1")
    assert why_not_compiled(root) == f"{PURE_ENV} is set"


def test_setup_py_reads_the_same_module_list():
    """setup.py parses COMPILED_MODULES from simcore/compiled.py without importing the package."""
    text = (ROOT / "setup.py").read_text()
    namespace: dict = {"__file__": str(ROOT / "setup.py"), "__name__": "stacksim_setup_probe"}
    head = text.split("\nsetup(")[0]  # everything but the setup() call
    exec(compile(head, str(ROOT / "setup.py"), "exec"), namespace)
    assert namespace["compiled_modules"]() == COMPILED_MODULES
