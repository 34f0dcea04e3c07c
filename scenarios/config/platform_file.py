"""Platforms by name or from a YAML/JSON file, and writing a platform file.

``--platform`` accepts a built-in name (``models.platforms.PLATFORMS``) or the path of a platform
file: the full :class:`~models.platform.PlatformConfig` as YAML (or JSON), as ``stacksim
calibrate`` writes it (``stacksim schema platform`` gives its JSON schema). A typo in a key is an
error naming the key and the file.

This module imports neither :mod:`scenarios.config.host` nor the simulator, so the scenario
resolver can use :func:`load_platform` without an import cycle.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from models.platform import PlatformConfig
from models.platforms import PLATFORMS
from simcore.config import load_data_file, refuse_ambiguous, validate
from simcore.errors import ConfigError

__all__ = ["load_platform", "platform_yaml", "annotated_yaml", "PLATFORM_FILE_SUFFIXES"]

PLATFORM_FILE_SUFFIXES = (".yaml", ".yml", ".json")


def load_platform(name_or_path: str) -> PlatformConfig:
    """The built-in platform ``name_or_path``, else the platform file at that path."""
    refuse_ambiguous(name_or_path, PLATFORMS, "platform")
    if name_or_path in PLATFORMS:
        return PLATFORMS[name_or_path]()
    path = Path(name_or_path)
    if path.suffix.lower() in PLATFORM_FILE_SUFFIXES or path.exists():
        if not path.exists():  # (a directory, device or FIFO is the reader's to name)
            raise ConfigError(f"platform file not found: {path}")
        data = load_data_file(path)
        if not isinstance(data, dict):
            raise ConfigError(
                f"{path}: a platform file must be a mapping of PlatformConfig keys "
                f"(see `stacksim schema platform`), got {type(data).__name__}"
            )
        return validate(PlatformConfig, data, where=str(path))
    raise ConfigError(
        f"unknown platform '{name_or_path}' (known: {', '.join(sorted(PLATFORMS))}; or a platform .yaml file)"
    )


def platform_yaml(
    platform: PlatformConfig, header: str = "", comment: Callable[[str, bool], str | None] | None = None
) -> str:
    """``platform`` as a YAML document that :func:`load_platform` reads back unchanged;
    ``header`` lines are written first as ``#`` comments, and ``comment`` (see :func:`annotated_yaml`)
    annotates each line."""
    lines = [f"# {line}".rstrip() for line in header.splitlines()]
    data = platform.model_dump(mode="json")
    body = annotated_yaml(data, comment) if comment else yaml.safe_dump(data, sort_keys=False, width=100)
    return "\n".join(lines + [body]) if lines else body


def _scalar(value: Any) -> str:
    """``value`` as one line of YAML (a flow collection for a non-empty list of lists or mappings)."""
    text = yaml.safe_dump(value, default_flow_style=True, width=1 << 30, sort_keys=False).strip()
    return text[: -len("\n...")] if text.endswith("\n...") else text


def _emit(value: dict, path: str, pad: str, comment: Callable[[str, bool], str | None], out: list[str]) -> None:
    """The mapping ``value`` in block style, each line with ``comment(its path, whether a leaf)``."""
    for key, v in value.items():
        p = f"{path}.{key}" if path else str(key)
        leaf = not (isinstance(v, (dict, list)) and v)
        note = comment(p, leaf)
        tail = f"  # {note}" if note else ""
        if isinstance(v, dict) and v:
            out.append(f"{pad}{_scalar(key)}:{tail}")
            _emit(v, p, pad + "  ", comment, out)
        elif isinstance(v, list) and v:
            out.append(f"{pad}{_scalar(key)}:{tail}")
            for i, item in enumerate(v):
                if isinstance(item, dict) and item:
                    sub: list[str] = []
                    _emit(item, f"{p}[{i}]", pad + "    ", comment, sub)
                    sub[0] = f"{pad}  - {sub[0].lstrip()}"
                    out.extend(sub)
                else:
                    note = comment(f"{p}[{i}]", True)
                    out.append(f"{pad}  - {_scalar(item)}" + (f"  # {note}" if note else ""))
        else:
            out.append(f"{pad}{_scalar(key)}: {_scalar(v)}{tail}")


def annotated_yaml(data: dict, comment: Callable[[str, bool], str | None]) -> str:
    """``data`` as block YAML with a trailing comment on each line for which ``comment(path, leaf)``
    gives one (``path``: ``cpu.model``, ``cpu.cstates[1].power_w``; ``leaf``: the line holds a value
    rather than opening a block). Each value is on one line, so a comment never splits one."""
    out: list[str] = []
    _emit(data, "", "", comment, out)
    return "\n".join(out) + "\n"
