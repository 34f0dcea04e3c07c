"""Configuration base: frozen pydantic models, YAML/JSON loading, dotted overrides, clear errors.

Every platform, policy and workload is a :class:`Model` (frozen, ``extra="forbid"``), so a typo in
a key is an error that names the key, and a configuration can be exported as a JSON schema.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from simcore.errors import ConfigError

__all__ = ["Model", "load_data_file", "validate", "set_path", "parse_scalar", "format_validation_error"]

M = TypeVar("M", bound=BaseModel)


class Model(BaseModel):
    """Base of every configuration model: immutable, unknown keys rejected."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=True)


class NoParams(Model):
    """The parameters of a plug-in that has none (an empty, strict model: any key is an error)."""


def format_validation_error(err: ValidationError, *, where: str) -> str:
    """One readable message per pydantic error, naming the dotted field path."""
    lines = []
    for e in err.errors():
        loc = ".".join(str(p) for p in e["loc"]) or "(top level)"
        msg = e["msg"]
        if e["type"] == "extra_forbidden":
            msg = "unknown key"
        elif e["type"] == "missing":
            msg = "required key is missing"
        lines.append(f"{where}: {loc}: {msg}" + (f" (got {e['input']!r})" if e["type"] not in ("missing", "extra_forbidden") and not isinstance(e.get("input"), dict) else ""))
    return "\n".join(lines)


def validate(model: type[M], data: Any, *, where: str) -> M:
    """Validate ``data`` into ``model`` or raise :class:`ConfigError` naming each bad field."""
    try:
        return model.model_validate(data)
    except ValidationError as err:
        raise ConfigError(format_validation_error(err, where=where)) from None


def load_data_file(path: str | Path) -> Any:
    """Load a YAML or JSON file (by extension; YAML otherwise) with clear errors."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"file not found: {p}")
    text = p.read_text()
    try:
        if p.suffix.lower() == ".json":
            return json.loads(text)
        return yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as err:
        raise ConfigError(f"{p}: not valid {'JSON' if p.suffix.lower() == '.json' else 'YAML'}: {err}") from None


def parse_scalar(text: str) -> Any:
    """Interpret a ``--set`` value: YAML scalar rules (ints, floats, bools, lists), else string."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError:
        return text


def set_path(data: dict, dotted: str, value: Any, *, known_only: bool = True) -> None:
    """Set ``data[a][b][c] = value`` for ``dotted = "a.b.c"`` in a nested plain-dict config.

    With ``known_only`` every key but the last must already exist, so that a misspelt section is
    reported instead of silently creating a new branch (the final key is checked by the model).
    """
    parts = dotted.split(".")
    node = data
    for i, part in enumerate(parts[:-1]):
        if isinstance(node, list):
            try:
                node = node[int(part)]
                continue
            except (ValueError, IndexError):
                raise ConfigError(f"--set {dotted}: {'.'.join(parts[: i + 1])} is not a valid list index") from None
        if part not in node or not isinstance(node[part], (dict, list)):
            if known_only:
                raise ConfigError(f"--set {dotted}: unknown section '{'.'.join(parts[: i + 1])}'")
            node[part] = {}
        node = node[part]
    last = parts[-1]
    if isinstance(node, list):
        try:
            node[int(last)] = value
        except (ValueError, IndexError):
            raise ConfigError(f"--set {dotted}: '{last}' is not a valid list index") from None
    else:
        node[last] = value
