"""The scenarios: built-in ones by name, others by the path of their YAML file, and of which kind.

Every scenario file says what it runs with ``kind``: ``host`` (the default: fio jobs on a Linux
host, :class:`scenarios.config.host.ScenarioFile`) or ``server`` (an NVMe-oF storage server and its
client, :class:`scenarios.config.server.ServerScenarioFile`). The built-in scenarios of both kinds
are the YAML files of ``scenarios/data/builtin/``. This module is the one place that decides which
kind a scenario is (:func:`scenario_kind`); :func:`scenarios.config.resolve.resolve_run` resolves
either kind.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from scenarios.data import BUILTIN_DIR
from simcore.config import load_data_file, refuse_ambiguous
from simcore.errors import ConfigError

__all__ = ["KINDS", "builtin_scenarios", "locate_scenario", "load_scenario", "scenario_kind", "source_args"]

#: the kinds of scenario: fio jobs on a host, or a storage server with its client
KINDS = ("host", "server")


def builtin_scenarios(kind: str | None = None) -> dict[str, Path]:
    """name -> file of the built-in scenarios, sorted by name; ``kind``: only those of that kind."""
    files = {p.stem: p for p in sorted(BUILTIN_DIR.glob("*.yaml"))}
    if kind is None:
        return files
    return {name: p for name, p in files.items() if _kind_of(p) == kind}


def locate_scenario(scenario: str) -> Path:
    """The file of ``scenario``: a built-in scenario's name or the path of a scenario YAML file."""
    refuse_ambiguous(scenario, builtin_scenarios(), "scenario")
    path = builtin_scenarios().get(scenario) or Path(scenario)
    if not path.exists():  # (a directory, device or FIFO is the reader's to name)
        raise ConfigError(f"unknown scenario '{scenario}' (built-in: {', '.join(builtin_scenarios())}; or a YAML path)")
    return path


def load_scenario(scenario: str, kind: str) -> tuple[dict[str, Any], Path]:
    """The data and the file of ``scenario`` (a name or a path), which must be of ``kind``."""
    path = locate_scenario(scenario)
    found = _kind_of(path)
    if found != kind:
        raise ConfigError(f"{scenario} is a {_WHAT[found]} scenario, not a {_WHAT[kind]} one")
    return load_data_file(path), path


def scenario_kind(scenario: str) -> str:
    """``host`` or ``server``: the ``kind`` of a built-in scenario's name or a scenario file."""
    return _kind_of(locate_scenario(scenario))


def source_args(source: str) -> dict[str, str]:
    """The input of ``stacksim run SOURCE`` (and explain) as keywords of
    :func:`scenarios.config.resolve.resolve_run`: a ``.yaml``/``.yml`` path or a built-in scenario
    name -> ``{"scenario": ...}``, anything else -> ``{"job_file": ...}`` (a fio job file, which
    must exist)."""
    refuse_ambiguous(source, builtin_scenarios(), "scenario")
    if source.endswith((".yaml", ".yml")) or source in builtin_scenarios():
        return {"scenario": source}
    if not Path(source).exists():  # (a directory, device or FIFO is the reader's to name)
        raise ConfigError(f"job file not found: {source}")
    return {"job_file": source}


_WHAT = {"host": "host (fio jobs)", "server": "storage-server"}


def _kind_of(path: Path) -> str:
    """The ``kind`` of the scenario file ``path`` (``host`` when it names none)."""
    data = load_data_file(path)
    kind = data.get("kind", "host") if isinstance(data, dict) else "host"
    if kind not in KINDS:
        raise ConfigError(f"{path}: kind '{kind}': expected one of {', '.join(KINDS)}")
    return kind
