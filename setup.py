"""Build: the package metadata is in setup.cfg; this file adds the optional compiled hot path.

The modules listed in ``simcore/compiled.py`` (COMPILED_MODULES) are compiled with mypyc when it is
importable (pyproject.toml makes mypy a build requirement) and a C compiler works. Otherwise, or
with ``STACKSIM_PURE=1`` in the environment, the install is pure Python from the same sources: a
failed compilation is reported and never fails the install. A successful build records each
compiled source's SHA-256 in ``simcore/_compiled_build.json``; at run time the compiled modules
are used only while the sources still match it (simcore/compiled.py).

Compiling takes minutes (7 on a 2-core machine), so each build is kept in a cache,
``$XDG_CACHE_HOME/stacksim/mypyc/KEY/`` (``~/.cache`` without XDG_CACHE_HOME; ``STACKSIM_BUILD_CACHE``
names another directory, ``0`` turns it off), KEY a hash of every compiled source, the Python
version and ABI, mypyc's version and the build options: a reinstall of unchanged sources copies the
cached extension modules and writes the same record, in seconds. Each step says what it does on
the terminal (``pip install -q`` shows a build's output only when it fails).
"""

from __future__ import annotations

import ast
import configparser
import contextlib
import hashlib
import json
import os
import platform
import shutil
import sys
import sysconfig
import threading
import time
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
RECORD = "simcore/_compiled_build.json"
#: SHA-256 of each compiled source as mypyc read it (taken before compiling: an edit made while the
#: build runs must leave a record that no longer matches, so the edited source runs, not stale code)
_DIGESTS: dict[str, str] = {}
#: environment variable: the cache's directory, or 0 to build without it
CACHE_ENV = "STACKSIM_BUILD_CACHE"
#: mypycify's options that change the compiled code (part of the cache key)
MYPYC_OPTIONS = {"opt_level": "3", "debug_level": "0"}
#: "entry": the cache directory a fresh build is stored in
_CACHE: dict[str, Path] = {}
#: seconds between "still compiling" lines
HEARTBEAT_S = 30.0


def compiled_modules() -> tuple[str, ...]:
    """COMPILED_MODULES from simcore/compiled.py, read without importing the package."""
    tree = ast.parse((ROOT / "simcore" / "compiled.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "COMPILED_MODULES" for t in node.targets):
            return tuple(ast.literal_eval(node.value))
    raise RuntimeError("simcore/compiled.py has no COMPILED_MODULES")


def source_digests(modules: tuple[str, ...], root: Path = ROOT) -> dict[str, str]:
    """SHA-256 of each module's source under ``root`` (the record's and the cache key's)."""
    return {m: hashlib.sha256((root / (m.replace(".", "/") + ".py")).read_bytes()).hexdigest() for m in modules}


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


def cache_root() -> Path | None:
    """The directory of cached builds, None when ``STACKSIM_BUILD_CACHE=0``."""
    setting = os.environ.get(CACHE_ENV, "")
    if setting == "0":
        return None
    if setting:
        return Path(setting)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "stacksim" / "mypyc"


def _mypy_settings() -> str:
    """setup.cfg's [mypy] section, which mypyc's type check (and so the generated code) follows."""
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    return json.dumps(dict(cfg["mypy"]) if cfg.has_section("mypy") else {}, sort_keys=True)


def cache_key(digests: dict[str, str], mypyc_version: str) -> str:
    """What the compiled code depends on: each compiled source, the interpreter and its ABI, mypyc
    and the build options (a hash; a change to any of them is another build)."""
    parts = [f"{m} {d}" for m, d in sorted(digests.items())]
    parts += [sys.version, sysconfig.get_config_var("EXT_SUFFIX") or "", platform.machine()]
    parts += [f"mypyc {mypyc_version}", json.dumps(MYPYC_OPTIONS, sort_keys=True), _mypy_settings()]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:32]


def cached_extensions(entry: Path) -> list | None:
    """The extension modules stored in cache ``entry`` (each copied, not compiled, by
    OptionalBuildExt), or None when it holds no complete build."""
    try:
        files = json.loads((entry / "manifest.json").read_text())["extensions"]
        complete = bool(files) and all((entry / rel).is_file() for rel in files.values())
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None
    if not complete:
        return None
    out = []
    for name, rel in files.items():
        ext = Extension(name, sources=[])
        ext.cached_file = str(entry / rel)  # type: ignore[attr-defined]
        out.append(ext)
    return out


def store_in_cache(entry: Path, built: dict[str, tuple[str, Path]]) -> None:
    """Keep ``built`` (extension name: (path relative to the output directory, built file)) in
    ``entry``: written beside it and renamed, so a reader never sees half an entry."""
    tmp = entry.with_name(f"{entry.name}.tmp{os.getpid()}")
    try:
        shutil.rmtree(tmp, ignore_errors=True)
        for rel, path in built.values():
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, tmp / rel)
        manifest = {"extensions": {name: rel for name, (rel, _) in built.items()}}
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
        if not entry.exists():
            tmp.rename(entry)
            _say(f"kept the compiled hot path in {entry}: a reinstall of these sources copies it")
    except OSError as e:  # a read-only or full cache: the install itself is done
        _say(f"could not keep the compiled hot path in {entry} ({e})")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@contextlib.contextmanager
def _heartbeat(doing: str):
    """Say every HEARTBEAT_S seconds that ``doing`` still runs, and how long it took."""
    t0 = time.monotonic()
    done = threading.Event()

    def beat() -> None:
        while not done.wait(HEARTBEAT_S):
            _tell(f"  ... still {doing} ({time.monotonic() - t0:.0f} s)")

    thread = threading.Thread(target=beat, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        _say(f"{doing}: {time.monotonic() - t0:.0f} s")


def mypyc_extensions(modules: tuple[str, ...], argv: list[str] | None = None) -> list:
    """The extension modules to build: cached ones for these sources when the cache has them, else
    mypyc's (mypy type-checks and mypyc writes C here, before setup(); build_ext compiles the C).
    pip's metadata steps run this file too: they get none (nothing is type-checked for them)."""
    if os.environ.get("STACKSIM_PURE", "") not in ("", "0"):
        return _pure("STACKSIM_PURE is set")
    try:
        from mypy.version import __version__ as mypyc_version
        from mypyc.build import mypycify
    except ImportError:
        return _pure("mypyc is not available")
    _DIGESTS.update(source_digests(modules))
    if not any(arg in _BUILDING for arg in (sys.argv[1:] if argv is None else argv)):
        return []
    root = cache_root()
    entry = root / cache_key(_DIGESTS, mypyc_version) if root else None
    cached = cached_extensions(entry) if entry else None
    if cached:
        _tell(f"the hot path ({len(modules)} modules) was compiled before for these sources: copied from {entry}")
        return cached
    if entry:
        _CACHE["entry"] = entry
    _tell(
        f"compiling the simulator's hot path ({len(modules)} modules) with mypyc: several minutes on a"
        " first install (7 on 2 cores), seconds on a reinstall of the same sources (STACKSIM_PURE=1"
        " installs pure Python at once)"
    )
    _tell(f"step 1 of 2: mypy type-checks the {len(modules)} modules and mypyc writes their C")
    try:  # mypy checks with setup.cfg's [mypy] section (check_untyped_defs), then mypyc generates C
        with _heartbeat("type-checking and writing C"):
            return mypycify([m.replace(".", "/") + ".py" for m in modules], **MYPYC_OPTIONS)
    except (Exception, SystemExit) as e:  # a type error in the sources stops mypycify with SystemExit
        return _pure(f"mypyc could not compile the hot path ({e!r})")


class OptionalBuildExt(build_ext):
    """build_ext that falls back to pure Python when the C compilation fails, all or nothing; a
    cached build (mypyc_extensions) is copied, and a fresh one is kept in the cache."""

    def run(self) -> None:
        if not self.extensions:
            return
        cached = all(getattr(ext, "cached_file", None) for ext in self.extensions)
        if not cached:
            _tell(f"step 2 of 2: compiling the C ({len(self.extensions)} extension modules, one large)")
        try:
            with contextlib.nullcontext() if cached else _heartbeat("compiling the C"):
                super().run()
        except Exception as e:  # no compiler, missing headers, a compiler error
            _say(f"compiling the hot path failed ({e}): pure Python")
            self._remove_outputs()
            return
        self._write_record()
        if not cached and "entry" in _CACHE:
            store_in_cache(_CACHE["entry"], self._built())

    def build_extension(self, ext) -> None:
        cached = getattr(ext, "cached_file", None)
        if cached is None:
            super().build_extension(ext)
            return
        dest = Path(self.get_ext_fullpath(ext.name))
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(cached, dest)

    def _built(self) -> dict[str, tuple[str, Path]]:
        """Each extension's file name (relative to the output directory) and its built file
        (setuptools builds in build_lib, then copies in place for an editable install)."""
        out = {}
        for ext in self.extensions:
            rel = self.get_ext_filename(self.get_ext_fullname(ext.name))
            out[ext.name] = (rel, Path(self.build_lib) / rel)
        return out

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
        _say(f"{len(sources)} hot-path modules compiled with mypyc: {out}")

    def get_outputs(self) -> list[str]:
        outs = super().get_outputs()
        record = self._out_dir() / RECORD
        return outs + [str(record)] if record.exists() else outs


setup(ext_modules=mypyc_extensions(compiled_modules()), cmdclass={"build_ext": OptionalBuildExt})
