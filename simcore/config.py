"""Configuration base: frozen pydantic models, YAML/JSON loading, dotted overrides, clear errors.

Every platform, policy and workload is a :class:`Model` (frozen, ``extra="forbid"``), so a typo in
a key is an error that names the key, and a configuration can be exported as a JSON schema.
"""

from __future__ import annotations

import difflib
import re
import typing
from pathlib import Path
from typing import Annotated, Any, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from simcore.bounded import parse_json, read_text_file
from simcore.errors import ConfigError
from simcore.yaml_loader import load_yaml, yaml_errors

__all__ = [
    "Model",
    "Seed",
    "SEED_MAX",
    "UNIT_LIMITS",
    "check_seed",
    "load_data_file",
    "read_text_file",
    "validate",
    "set_path",
    "parse_scalar",
    "format_validation_error",
]

M = TypeVar("M", bound=BaseModel)

#: Largest run seed: seeds are non-negative 63-bit integers, so they fit a signed 64-bit column
#: (sweep CSV/Parquet, pandas) and match the replicate seeds a sweep derives (63 bits).
SEED_MAX = 2**63 - 1
Seed = Annotated[int, Field(ge=0, le=SEED_MAX, description="random seed, 0 .. 2**63-1")]


def check_seed(seed: int | None, what: str = "seed") -> None:
    """Refuse a seed outside 0 .. :data:`SEED_MAX` (``None`` = the default) with a clear message."""
    if seed is not None and not 0 <= seed <= SEED_MAX:
        raise ConfigError(f"{what} {seed}: a seed must be an integer from 0 to 2**63-1 ({SEED_MAX})")


_DAY = 86_400.0
#: Sane range of a configured number by the unit suffix of its field name (first match wins), for
#: fields that state no upper bound of their own: a value outside is a typo or an absurd input
#: (1e300 ns, 1e12 GHz), never a machine. Times: no time constant of a CPU, kernel or SSD comes
#: near a day. Power: 10 kW is more than a whole server draws. Frequency: the overclocking record is
#: ~9.1 GHz, no P-state is below 1 MHz. Cycles: 1e9 cycles is a tenth of a second of one operation.
UNIT_LIMITS: dict[str, tuple[float, float, str]] = {
    "_gb_s": (1e-3, 1e4, "GB/s"),
    "_gbps": (1e-3, 1e5, "Gb/s"),
    "_ns": (0.0, _DAY * 1e9, "ns (1 day)"),
    "_us": (0.0, _DAY * 1e6, "us (1 day)"),
    "_ms": (0.0, _DAY * 1e3, "ms (1 day)"),
    "_s": (0.0, _DAY, "s (1 day)"),
    "_w": (0.0, 1e4, "W"),
    "_ghz": (1e-3, 10.0, "GHz"),
    "_cycles": (0.0, 1e9, "cycles"),
    "_v": (0.0, 5.0, "V"),
    "_iops": (0.0, 1e9, "IO/s"),
    "_bytes": (0.0, 2.0**64 - 1, "bytes (64 bits)"),
}


def _unit_limit(name: str) -> tuple[float, float, str] | None:
    for suffix, limit in UNIT_LIMITS.items():
        if name.endswith(suffix):
            return limit
    return None


class Model(BaseModel):
    """Base of every configuration model: immutable, unknown keys rejected, numbers finite (no NaN
    or infinity anywhere) and within the sane range of their unit (:data:`UNIT_LIMITS`)."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=True, allow_inf_nan=False)

    @field_validator("*", mode="after")
    @classmethod
    def _sane_unit_range(cls, v: Any, info: ValidationInfo) -> Any:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or info.field_name is None:
            return v
        limit = _unit_limit(info.field_name)
        if limit is None:
            return v
        field = cls.model_fields[info.field_name]
        if any(getattr(m, "le", None) is not None or getattr(m, "lt", None) is not None for m in field.metadata):
            return v  # the field states its own upper bound
        lo, hi, unit = limit
        if v != 0 and not lo <= v <= hi:
            raise ValueError(f"{v:g} is out of the sane range of a {info.field_name} value ({lo:g} .. {hi:g} {unit})")
        return v


class NoParams(Model):
    """The parameters of a plug-in that has none (an empty, strict model: any key is an error)."""


_TYPE_ERRORS = {
    "bool_type",
    "bool_parsing",
    "int_type",
    "int_parsing",
    "float_type",
    "float_parsing",
    "string_type",
    "dict_type",
    "list_type",
    "tuple_type",
    "model_type",
    "literal_error",
    "none_required",
}


def _is_branch(part: Any) -> bool:
    """A location part that names a union member (``list[int]``, ``str``), not a key of the data."""
    return isinstance(part, str) and ("[" in part or part in ("bool", "int", "float", "str", "none"))


def _submodel(annotation: Any) -> type[BaseModel] | None:
    """The model class a field holds (itself, or inside ``X | None``, ``list[X]``, ...), if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _submodel(arg)
        if found is not None:
            return found
    return None


def _unknown_key(model: type[BaseModel] | None, loc: tuple) -> str:
    """ "unknown key", with the valid keys of the model that holds it and the closest one, when the
    location leads through ``model``'s fields to it."""
    cur = model
    for part in loc[:-1]:
        if cur is None:
            break
        if isinstance(part, int) or _is_branch(part):
            continue
        field = cur.model_fields.get(str(part))
        cur = _submodel(field.annotation) if field is not None else None
    if cur is None or not loc:
        return "unknown key"
    valid = sorted(cur.model_fields)
    close = difflib.get_close_matches(str(loc[-1]), valid, n=1, cutoff=0.5)
    hint = f"; did you mean '{close[0]}'?" if close else ""
    return f"unknown key (valid: {', '.join(valid)}){hint}"


def format_validation_error(err: ValidationError, *, where: str, model: type[BaseModel] | None = None) -> str:
    """One readable message per bad field, naming the dotted field path (the members of a union
    are folded into one message: the most specific one, e.g. "not finite" over "not a string");
    with ``model`` (the model validated), an unknown key lists the valid ones."""
    best: dict[str, dict] = {}
    for e in err.errors():
        loc = ".".join(str(p) for p in e["loc"] if not _is_branch(p)) or "(top level)"
        seen = best.get(loc)
        if seen is None or (seen["type"] in _TYPE_ERRORS and e["type"] not in _TYPE_ERRORS):
            best[loc] = e
    for loc in [k for k, e in best.items() if e["type"] in _TYPE_ERRORS]:
        if any(other.startswith(loc + ".") for other in best):
            del best[loc]  # another member of the union got further into the value
    lines = []
    for loc, e in best.items():
        msg = e["msg"].removeprefix("Value error, ")
        if e["type"] == "extra_forbidden":
            msg = _unknown_key(model, tuple(p for p in e["loc"] if not _is_branch(p)))
        elif e["type"] == "missing":
            msg = "required key is missing"
        got = ""
        if e["type"] not in ("missing", "extra_forbidden") and not isinstance(e.get("input"), dict):
            got = repr(e["input"])
            got = f" (got {got if len(got) <= 60 else f'{got[:24]}...{got[-8:]}, {len(got)} characters'})"
        lines.append(f"{where}: {loc}: {msg}{got}")
    return "\n".join(lines)


def validate(model: type[M], data: Any, *, where: str) -> M:
    """Validate ``data`` into ``model`` or raise :class:`ConfigError` naming each bad field."""
    try:
        return model.model_validate(data)
    except ValidationError as err:
        raise ConfigError(format_validation_error(err, where=where, model=model)) from None


def refuse_ambiguous(name: str, builtins, what: str) -> None:
    """``name`` is both a built-in ``what`` and a file or directory here: refuse to guess (either
    would silently win over the other), and say how to name each."""
    if name in builtins and Path(name).exists():
        raise ConfigError(
            f"'{name}' is both a built-in {what} and a file here: write ./{name} for the file,"
            f" or run from another directory for the built-in"
        )


#: Deepest bracket nesting a YAML configuration file may have (a real one has fewer than 10):
#: the pure-Python YAML parser takes seconds to hit Python's recursion limit on thousands of levels.
MAX_NESTING = 100
_BRACKETS = re.compile(r"""[\[\]{}"'#\n]""")


def _flow_depth(text: str) -> int:
    """Deepest ``[``/``{`` nesting outside quotes and comments (a cheap scan before parsing)."""
    depth = top = 0
    quote = None
    comment = False
    for m in _BRACKETS.finditer(text):
        c = m.group()
        if comment:
            comment = c != "\n"
        elif quote is not None:
            quote = None if c == quote else quote
        elif c in "[{":
            depth += 1
            top = max(top, depth)
            if top > MAX_NESTING:
                return top
        elif c in "]}":
            depth = max(depth - 1, 0)
        elif c in "\"'":
            quote = c
        elif c == "#":
            comment = True
    return top


def load_data_file(path: str | Path) -> Any:
    """Load a YAML or JSON file (by extension; YAML otherwise) with clear errors: read through
    :func:`simcore.bounded.read_text_file` (size, NUL bytes, UTF-8), YAML by
    :func:`simcore.yaml_loader.load_yaml` (duplicate keys, alias bombs), JSON by
    :func:`simcore.bounded.parse_json` (duplicate keys refused too)."""
    p = Path(path)
    text = read_text_file(p)
    if p.suffix.lower() == ".json":
        return parse_json(text, str(p), unique_keys=True)
    depth = _flow_depth(text)
    if depth > MAX_NESTING:
        raise ConfigError(f"{p}: not valid YAML: nested {depth} levels deep (at most {MAX_NESTING})")
    try:
        return load_yaml(text, str(p))
    except yaml.YAMLError as err:
        if "maximum nesting depth" in str(err):  # libyaml's limit (the C loader's RecursionError)
            raise ConfigError(f"{p}: not valid YAML: nested too deeply") from None
        raise ConfigError(f"{p}: not valid YAML: {err}") from None
    except RecursionError:
        raise ConfigError(f"{p}: not valid YAML: nested too deeply") from None
    except ValueError as err:  # e.g. an integer of more than 4300 digits
        raise ConfigError(f"{p}: not valid YAML: {err}") from None


def parse_scalar(text: str, where: str = "--set value") -> Any:
    """Interpret a ``--set`` value: YAML scalar rules (ints, floats, bools, lists), else string
    (a value that is YAML with a duplicate key or past the node budget is refused, naming ``where``)."""
    try:
        return load_yaml(text, f"{where} {text if len(text) <= 60 else text[:40] + '...'}")
    except yaml_errors:  # ValueError: an integer of > 4300 digits
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
            node = node[_list_index(node, part, dotted, ".".join(parts[: i + 1]))]
            continue
        if part not in node or not isinstance(node[part], (dict, list)):
            if known_only:
                raise ConfigError(f"--set {dotted}: unknown section '{'.'.join(parts[: i + 1])}'")
            node[part] = {}
        node = node[part]
    last = parts[-1]
    if isinstance(node, list):
        node[_list_index(node, last, dotted, dotted)] = value
    else:
        node[last] = value


def _list_index(items: list, part: str, dotted: str, where: str) -> int:
    """``part`` as an index of ``items``: a number from 0 to len - 1 (Python's negative indices
    from the end would silently edit another element: refused)."""
    if part.isascii() and part.isdigit() and int(part) < len(items):
        return int(part)
    raise ConfigError(f"--set {dotted}: {where} is not a valid list index (0 to {len(items) - 1})")
