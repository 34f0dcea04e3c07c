"""Which code runs: the mypyc-compiled hot path or the pure-Python sources.

At install time ``setup.py`` compiles :data:`COMPILED_MODULES` with mypyc when it can (mypy is a
build requirement; a C compiler must be present) and records the SHA-256 of each compiled source in
``simcore/_compiled_build.json``. Without a compiler the install is pure Python from the same
``.py`` files, with identical results (``tests/test_compiled.py`` compares them).

The compiled modules are used only when that record matches the sources next to them. An editable
install builds the extension modules in place, next to the ``.py`` files, and Python imports an
extension module before a source file of the same name: without this check, an edit to a compiled
module's source would silently not run until the next ``pip install``. When the sources changed
since the build (or ``STACKSIM_PURE=1`` is set, or the record is missing), :func:`activate` makes
every compiled module load from its source instead (all of them: compiled code assumes its
compiled neighbours), and says why once, on stderr, unless pure Python was asked for.

``stacksim --version`` prints :func:`describe`.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import sys
from pathlib import Path

__all__ = [
    "COMPILED_MODULES",
    "BUILD_RECORD",
    "activate",
    "describe",
    "is_compiled",
    "source_digest",
    "why_not_compiled",
]

#: The hot path, compiled by mypyc (setup.py reads this tuple without importing the package). Each
#: is typed enough to pass ``mypy --check-untyped-defs`` (tests/test_compiled.py); a class in one of
#: them that code outside them subclasses is marked ``mypyc_attr(allow_interpreted_subclasses=True)``.
COMPILED_MODULES = (
    "simcore.engine",
    "simcore.grid",
    "models.ssd.command",
    "models.ssd.transfer_path",
    "models.os.costs.bundle",
    "models.os.interfaces",
    "models.ssd.device",
    "models.cpu.core",
    "models.os.sched.task",
    "models.os.block.request",
    "models.os.block.annotations",
    "models.os.fs.aio",
    "models.os.io_uring.ring",
    "models.os.irq.irqwork",
    "models.os.sched.execution",
    "models.os.sched.poll",
    "models.os.time.hrtimer",
    "models.os.sched.idle",
    "models.os.irq.entry",
    "models.os.sched.eevdf",
    "models.os.sched.cfs",
    "models.os.sched.placement",
    "models.os.sched.balance",
    "models.os.sched.runner",
    "models.os.locking.spinlock",
    "models.os.block.hook_locks",
    "models.os.block.blk_mq",
    "models.os.drivers.nvme",
    "models.cpu.cpuidle",
    "policies.cpu_idle.menu",
    "models.ioengines.io_offsets",
    "models.ioengines.files",
    "models.ioengines.sync_io",
    "models.ioengines.call_costs",
    "models.ioengines.async_io",
    "models.ioengines.null_io",
    "models.ioengines.replay",
    "models.ssd.irq_generation",
    "models.os.block.completion",
    "models.os.block.io_ledger",
    "policies.completion.interrupt",
    "policies.completion.classic_poll",
    "policies.completion.hybrid_poll",
    "policies.interrupt_generation.none",
    "models.ioengines.iostats",
    "models.ioengines.trace_io",
    "scenarios.inputs.traces.record",
    "scenarios.inputs.traces.csvformats",
    "scenarios.inputs.traces.reader",
    "scenarios.inputs.traces.select",
)

#: the build record, relative to the directory that holds the top-level packages
BUILD_RECORD = "simcore/_compiled_build.json"
_ROOT = Path(__file__).resolve().parent.parent
#: environment variable: set to 1 to run the pure-Python sources even when compiled ones exist
PURE_ENV = "STACKSIM_PURE"

_state: dict[str, str] = {}


def source_digest(module: str, root: Path = _ROOT) -> str:
    """SHA-256 of ``module``'s source file under ``root``."""
    return hashlib.sha256((root / (module.replace(".", "/") + ".py")).read_bytes()).hexdigest()


def _extension_exists(module: str, root: Path = _ROOT) -> bool:
    base = root / module.replace(".", "/")
    return any(base.with_name(base.name + suffix).exists() for suffix in importlib.machinery.EXTENSION_SUFFIXES)


class _SourceFinder:
    """A meta-path finder that loads the compiled modules from their ``.py`` sources."""

    @staticmethod
    def find_spec(fullname: str, path=None, target=None):
        if fullname not in COMPILED_MODULES:
            return None
        source = _ROOT / (fullname.replace(".", "/") + ".py")
        return importlib.util.spec_from_file_location(fullname, source)


def why_not_compiled(root: Path = _ROOT) -> str | None:
    """None when the compiled modules under ``root`` may run; else why not."""
    if os.environ.get(PURE_ENV, "") not in ("", "0"):
        return f"{PURE_ENV} is set"
    record_path = root / BUILD_RECORD
    if not record_path.exists():
        return "not compiled at install (no C compiler, or STACKSIM_PURE=1 at install)"
    try:
        record = json.loads(record_path.read_text())
        digests = record["sources"]
    except (OSError, ValueError, KeyError, TypeError):
        return f"unreadable build record {record_path}"
    changed = [m for m in COMPILED_MODULES if digests.get(m) != source_digest(m, root)]
    if changed:
        return (
            "sources changed since the compiled build ("
            + ", ".join(changed)
            + "): reinstall (pip install -e .) to recompile"
        )
    if not all(_extension_exists(m, root) for m in COMPILED_MODULES):
        return "compiled modules missing"
    return None


def activate() -> None:
    """Decide once per process which code runs (called by ``simcore/__init__``, before any
    compiled module is imported)."""
    if _state:
        return
    why = why_not_compiled()
    _state["why"] = why or ""
    if why is None:
        return
    if any(_extension_exists(m) for m in COMPILED_MODULES):
        loaded = [m for m in COMPILED_MODULES if m in sys.modules]
        if loaded:  # too late to choose: say so instead of mixing compiled and source modules
            raise ImportError(f"stacksim: {', '.join(loaded)} imported before simcore; import simcore first")
        sys.meta_path.insert(0, _SourceFinder())
        if not why.startswith(PURE_ENV):
            print(f"stacksim: running pure Python: {why}", file=sys.stderr)


def is_compiled() -> bool:
    """True when the compiled hot path runs in this process."""
    activate()
    return not _state["why"]


def package_version() -> str:
    """The installed stacksim's version (its metadata), or ``(not installed)``."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("stacksim")
    except PackageNotFoundError:
        return "(not installed)"


def describe() -> str:
    """One line: which code runs, and why when it is not the compiled one."""
    if is_compiled():
        return f"compiled hot path (mypyc, {len(COMPILED_MODULES)} modules)"
    return f"pure Python: {_state['why']}"
