"""Build: the package metadata is in setup.cfg; this file adds the optional compiled hot path.

The modules listed in ``simcore/compiled.py`` (COMPILED_MODULES) are compiled with mypyc when it is
importable (pyproject.toml makes mypy a build requirement) and a C compiler works. Otherwise, or
with ``STACKSIM_PURE=1`` in the environment, the install is pure Python from the same sources: a
failed compilation is reported and never fails the install. A successful build records each
compiled source's SHA-256 in ``simcore/_compiled_build.json``; at run time the compiled modules
are used only while the sources still match it (simcore/compiled.py).
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
RECORD = "simcore/_compiled_build.json"
#: SHA-256 of each compiled source as mypyc read it (taken before compiling: an edit made while the
#: build runs must leave a record that no longer matches, so the edited source runs, not stale code)
_DIGESTS: dict[str, str] = {}


def compiled_modules() -> tuple[str, ...]:
    """COMPILED_MODULES from simcore/compiled.py, read without importing the package."""
    tree = ast.parse((ROOT / "simcore" / "compiled.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "COMPILED_MODULES" for t in node.targets):
            return tuple(ast.literal_eval(node.value))
    raise RuntimeError("simcore/compiled.py has no COMPILED_MODULES")


def _say(msg: str) -> None:
    print(f"stacksim build: {msg}", file=sys.stderr)


#: the setup.py commands that build extension modules (pip's metadata steps import this file too)
_BUILDING = ("build_ext", "build", "bdist_wheel", "editable_wheel", "develop", "install")


def _tell(msg: str) -> None:
    """Say ``msg`` on stderr, and on the terminal when there is one: pip captures a build's output
    (and ``pip install -q`` never shows it), so a step of minutes would otherwise look like a hang."""
    _say(msg)
    try:
        with open("/dev/tty", "w") as tty:  # (no controlling terminal in CI: nothing to tell)
            tty.write(f"stacksim build: {msg}\n")
    except OSError:
        pass


def _pure(why: str) -> list:
    """No extensions; an earlier in-place (editable) build's record goes, so its extension modules,
    left next to the sources, are not used (simcore.compiled)."""
    _say(f"{why}: pure Python")
    stale = ROOT / RECORD
    if stale.exists():
        stale.unlink()
    return []


def mypyc_extensions(modules: tuple[str, ...]) -> list:
    if os.environ.get("STACKSIM_PURE", "") not in ("", "0"):
        return _pure("STACKSIM_PURE is set")
    try:
        from mypyc.build import mypycify
    except ImportError:
        return _pure("mypyc is not available")
    paths = [m.replace(".", "/") + ".py" for m in modules]
    _DIGESTS.update({m: hashlib.sha256((ROOT / p).read_bytes()).hexdigest() for m, p in zip(modules, paths)})
    if any(arg in _BUILDING for arg in sys.argv[1:]):
        _tell(
            f"compiling the simulator's hot path ({len(modules)} modules) with mypyc: 2-3 minutes"
            " (STACKSIM_PURE=1 installs pure Python at once)"
        )
    try:  # mypy checks with setup.cfg's [mypy] section (check_untyped_defs), then mypyc generates C
        return mypycify(paths, opt_level="3", debug_level="0")
    except BaseException as e:  # a type error in the sources stops mypycify with SystemExit
        return _pure(f"mypyc could not compile the hot path ({e!r})")


class OptionalBuildExt(build_ext):
    """build_ext that falls back to pure Python when the C compilation fails, all or nothing."""

    def run(self) -> None:
        if not self.extensions:
            return
        try:
            super().run()
        except Exception as e:  # no compiler, missing headers, a compiler error
            _say(f"compiling the hot path failed ({e}): pure Python")
            self._remove_outputs()
            return
        self._write_record()

    def _out_dir(self) -> Path:
        return ROOT if self.inplace else Path(self.build_lib)

    def _remove_outputs(self) -> None:
        for ext in self.extensions:
            path = self._out_dir() / self.get_ext_filename(ext.name)
            if path.exists():
                path.unlink()
        stale = self._out_dir() / RECORD
        if stale.exists():
            stale.unlink()

    def _write_record(self) -> None:
        sources = dict(_DIGESTS)
        out = self._out_dir() / RECORD
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps({"compiler": "mypyc", "sources": sources}, indent=1) + "\n")
        _say(f"compiled {len(sources)} hot-path modules with mypyc")

    def get_outputs(self) -> list[str]:
        outs = super().get_outputs()
        record = self._out_dir() / RECORD
        return outs + [str(record)] if record.exists() else outs


setup(ext_modules=mypyc_extensions(compiled_modules()), cmdclass={"build_ext": OptionalBuildExt})
