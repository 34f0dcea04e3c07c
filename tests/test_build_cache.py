"""setup.py's cache of compiled builds: a reinstall of unchanged sources copies the extension
modules built before instead of compiling them again (minutes on a small machine). A real mypyc
build takes minutes, so these tests give the build command fake outputs: what they check is the
cache's logic (its key, a hit, a miss), not mypyc."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from setuptools import Extension
from setuptools.command.build_ext import build_ext
from setuptools.dist import Distribution

from simcore.compiled import BUILD_RECORD, COMPILED_MODULES

ROOT = Path(__file__).resolve().parents[1]
mypyc_build = pytest.importorskip("mypyc.build", reason="the test extra's mypy brings mypyc")


@pytest.fixture
def setup_py(monkeypatch, tmp_path):
    """setup.py's namespace without its setup() call, its cache under ``tmp_path``, its messages
    on stderr only (not the terminal)."""
    text = (ROOT / "setup.py").read_text()
    ns: dict = {"__file__": str(ROOT / "setup.py"), "__name__": "stacksim_setup_probe"}
    exec(compile(text.split("\nsetup(")[0], str(ROOT / "setup.py"), "exec"), ns)
    ns["_tell"] = ns["_say"]
    for var in ("STACKSIM_PURE", "STACKSIM_BUILD_CACHE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return ns


def _fake_root(tmp_path: Path) -> Path:
    root = tmp_path / "src"
    for m in COMPILED_MODULES:
        path = root / (m.replace(".", "/") + ".py")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# {m}\n")
    return root


def test_the_cache_key_changes_with_any_compiled_source_and_with_mypyc(setup_py, tmp_path):
    root = _fake_root(tmp_path)
    key = setup_py["cache_key"]
    before = key(setup_py["source_digests"](COMPILED_MODULES, root), "1.0")
    assert key(setup_py["source_digests"](COMPILED_MODULES, root), "1.0") == before  # unchanged: a hit
    assert key(setup_py["source_digests"](COMPILED_MODULES, root), "1.1") != before
    for module in (COMPILED_MODULES[0], COMPILED_MODULES[-1]):
        path = root / (module.replace(".", "/") + ".py")
        original = path.read_text()
        path.write_text(original + "x = 1\n")
        assert key(setup_py["source_digests"](COMPILED_MODULES, root), "1.0") != before, module
        path.write_text(original)
    assert key(setup_py["source_digests"](COMPILED_MODULES, root), "1.0") == before


def test_the_cache_lives_under_xdg_cache_home(setup_py, monkeypatch, tmp_path):
    assert setup_py["cache_root"]() == tmp_path / "cache" / "stacksim" / "mypyc"
    monkeypatch.setenv("STACKSIM_BUILD_CACHE", str(tmp_path / "elsewhere"))
    assert setup_py["cache_root"]() == tmp_path / "elsewhere"
    monkeypatch.setenv("STACKSIM_BUILD_CACHE", "0")
    assert setup_py["cache_root"]() is None


#: what the fake mypycify returns: a module's shim and mypyc's shared library (its real layout)
FAKE_EXTENSIONS = ("simcore.engine", "models.ssd.device", "f00d__mypyc")


def _fake_compile(monkeypatch, calls: list) -> None:
    def mypycify(paths, **options):
        calls.append("mypycify")
        return [Extension(name, sources=["fake.c"]) for name in FAKE_EXTENSIONS]

    def build_extension(self, ext):  # the C compiler's output: the extension's name as its bytes
        calls.append(ext.name)
        dest = Path(self.get_ext_fullpath(ext.name))
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_bytes(f"compiled {ext.name}".encode())

    monkeypatch.setattr(mypyc_build, "mypycify", mypycify)
    monkeypatch.setattr(build_ext, "build_extension", build_extension)


def _install(setup_py, out: Path) -> dict[str, bytes]:
    """setup.py's steps of a build: the extension list, then build_ext into ``out``; every file
    it wrote."""
    extensions = setup_py["mypyc_extensions"](COMPILED_MODULES, argv=["bdist_wheel"])
    command = setup_py["OptionalBuildExt"](Distribution({"name": "stacksim", "ext_modules": extensions}))
    command.build_lib, command.build_temp = str(out), str(out.with_name(out.name + "-temp"))
    command.ensure_finalized()
    command.run()
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def test_a_cache_hit_copies_the_build_and_writes_the_same_record(setup_py, monkeypatch, tmp_path):
    calls: list = []
    _fake_compile(monkeypatch, calls)
    first = _install(setup_py, tmp_path / "first")
    assert calls == ["mypycify", *FAKE_EXTENSIONS]  # a miss: type-checked and compiled
    record = json.loads(first[BUILD_RECORD])
    assert record["sources"] == setup_py["source_digests"](COMPILED_MODULES)
    entries = list((tmp_path / "cache" / "stacksim" / "mypyc").iterdir())
    assert len(entries) == 1 and (entries[0] / "manifest.json").is_file()  # no temporary left

    calls.clear()
    setup_py["_CACHE"].clear()  # a new install: a new process
    second = _install(setup_py, tmp_path / "second")
    assert calls == []  # a hit: nothing type-checked, nothing compiled
    assert second == first  # the same extension modules and the same record
    assert sorted(n for n in first if n.endswith(".so")) == sorted(
        build_ext(Distribution()).get_ext_filename(n) for n in FAKE_EXTENSIONS
    )


def test_an_edited_source_or_an_incomplete_entry_compiles_again(setup_py, monkeypatch, tmp_path):
    calls: list = []
    _fake_compile(monkeypatch, calls)
    _install(setup_py, tmp_path / "first")
    (entry,) = (tmp_path / "cache" / "stacksim" / "mypyc").iterdir()
    shared = next(entry.rglob("f00d__mypyc*"))
    shared.unlink()  # e.g. a cache cleaned by hand
    assert setup_py["cached_extensions"](entry) is None
    calls.clear()
    setup_py["_CACHE"].clear()
    _install(setup_py, tmp_path / "second")
    assert calls[0] == "mypycify"

    calls.clear()
    setup_py["_CACHE"].clear()
    setup_py["_DIGESTS"].clear()
    monkeypatch.setitem(setup_py, "source_digests", lambda modules: {m: "edited" for m in modules})
    _install(setup_py, tmp_path / "third")
    assert calls[0] == "mypycify"


def test_pip_metadata_steps_and_pure_installs_do_not_type_check(setup_py, monkeypatch):
    calls: list = []
    _fake_compile(monkeypatch, calls)
    for step in (["egg_info"], ["dist_info", "--output-dir", "x"]):
        assert setup_py["mypyc_extensions"](COMPILED_MODULES, argv=step) == []
    monkeypatch.setenv("STACKSIM_PURE", "1")
    monkeypatch.setitem(setup_py, "_pure", lambda why: [why])  # (the real one removes the checkout's record)
    assert setup_py["mypyc_extensions"](COMPILED_MODULES, argv=["bdist_wheel"]) == ["STACKSIM_PURE is set"]
    assert calls == []
