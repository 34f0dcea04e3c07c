"""A fingerprint of the simulator's code, so stored results are never reused across model changes.

Sweeps store one row per run keyed by the point, the replicate and a hash of the resolved
configuration. The same configuration gives a different answer once the models change, so each
row also records :func:`code_sha`: a hash of every Python source file of stacksim's packages and
of the plug-ins the run loads. A stored row with another code hash is recomputed.
"""

from __future__ import annotations

import hashlib
import importlib.util
from functools import lru_cache
from pathlib import Path
from typing import Iterable

#: the top-level packages whose code decides a simulation's result
PACKAGES = ("simcore", "models", "policies", "scenarios", "stacksim")


def _package_files(name: str) -> list[tuple[str, Path]]:
    """(path relative to the package's parent, file) of every Python file of package ``name``."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return []
    files: list[tuple[str, Path]] = []
    for root in map(Path, spec.submodule_search_locations):
        files.extend((f"{name}/{f.relative_to(root).as_posix()}", f) for f in root.rglob("*.py"))
    return sorted(files)


def _plugin_file(spec: str) -> Path | None:
    if spec.endswith(".py"):
        p = Path(spec)
        return p if p.is_file() else None
    try:
        found = importlib.util.find_spec(spec)
    except (ImportError, ValueError):
        return None
    return Path(found.origin) if found is not None and found.origin and found.origin.endswith(".py") else None


@lru_cache(maxsize=1)
def packages_sha() -> str:
    """SHA-256 (hex) over every Python source of stacksim's packages: path and bytes, in path order."""
    h = hashlib.sha256()
    for name in PACKAGES:
        for rel, f in _package_files(name):
            h.update(f"{rel}\0".encode())
            h.update(f.read_bytes())
    return h.hexdigest()


def code_sha(plugins: Iterable[str] = ()) -> str:
    """16 hex digits identifying the simulator's code (and the given plug-ins' files)."""
    h = hashlib.sha256(packages_sha().encode())
    for spec in plugins:
        h.update(f"plugin {spec}\0".encode())
        path = _plugin_file(spec)
        if path is not None:
            h.update(path.read_bytes())
    return h.hexdigest()[:16]
