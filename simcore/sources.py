"""Values with their sources: how the preset catalogue says where each number comes from.

A preset declares every value it sets beside its source, ``field: (value, source)``, and
:func:`split` separates the two: the values become the configuration's keyword arguments, the
sources a ``{field: source}`` map shipped with the preset (:class:`Preset`). ``stacksim list NAME``
prints them side by side, and ``stacksim platform new`` writes them into the platform file it makes.

A source is one line that starts with how sure the value is, in the words of the reference notes
the catalogue was built from:

- ``exact:`` read in source code (the kernel's ``intel_idle`` tables), a vendor document or raw data;
- ``derived:`` computed from sourced facts (the arithmetic follows);
- ``recalled:`` from the named source (a vendor's product page or datasheet) but not re-checked
  against it: check it before relying on it;
- ``estimate:`` a modelling choice, with its reasoning.

A field a preset leaves at the configuration model's default takes the default's own source (the
field's description says it). A source may also name a part of a field (``cstates.power_w``).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from pydantic import BaseModel

from simcore.errors import ConfigError

__all__ = ["KINDS", "Preset", "split", "kind_of", "unsourced", "close_names", "unknown_name"]

#: how sure a value is, the first word of its source
KINDS = ("exact", "derived", "recalled", "estimate")


def kind_of(source: str) -> str:
    """The kind of ``source`` (its first word, before the colon); '' when it names none of :data:`KINDS`."""
    head = source.split(":", 1)[0].strip()
    return head if head in KINDS else ""


def split(table: Mapping[str, tuple[Any, str]]) -> tuple[dict[str, Any], dict[str, str]]:
    """``{field: (value, source)}`` -> (``{field: value}``, ``{field: source}``)."""
    values, sources = {}, {}
    for name, (value, source) in table.items():
        values[name] = value
        sources[name] = source
    return values, sources


@dataclass(frozen=True)
class Preset:
    """A catalogue entry: the factory of its configuration, the source of every value it sets
    (``sources``: field or ``field.part`` -> source) and facts that are not configuration fields but
    bound how the part is used (``facts``: name -> (value, source), e.g. the sockets a CPU supports)."""

    make: Callable[..., BaseModel]
    sources: Mapping[str, str]
    facts: Mapping[str, tuple[Any, str]] = field(default_factory=dict)

    def fact(self, name: str, default: Any = None) -> Any:
        """The value of fact ``name`` (``default`` if the preset does not state it)."""
        return self.facts[name][0] if name in self.facts else default


def unsourced(config: BaseModel, sources: Mapping[str, str]) -> list[str]:
    """The top-level fields of ``config`` that differ from the model's default (or have none) and
    whose source is not given, neither for the field nor for a part of it."""
    missing = []
    for name, info in type(config).model_fields.items():
        value = getattr(config, name)
        default = info.get_default(call_default_factory=True) if not info.is_required() else object()
        if value == default:
            continue
        if name not in sources and not any(k.startswith(name + ".") for k in sources):
            missing.append(name)
    return missing


def close_names(name: str, names) -> list[str]:
    """Up to four of ``names`` that look like ``name`` (a typo, a different spelling)."""
    names = list(names)
    low = name.lower().replace("_", "-").replace(" ", "-")
    close = difflib.get_close_matches(low, names, n=4, cutoff=0.5)
    close += [n for n in names if n not in close and (low in n or n in low)]
    return close[:4]


def unknown_name(name: str, names, what: str, option: str) -> ConfigError:
    """The error for an unknown preset name: the close matches first, then every name."""
    names = list(names)
    close = close_names(name, names)
    if close:
        return ConfigError(f"{option} {name}: no {what} of that name; did you mean {', '.join(close)}?")
    return ConfigError(f"{option} {name}: no {what} of that name (known: {', '.join(names)})")


def _text(value: Any) -> str:
    """A value as one short line of text."""
    if isinstance(value, bool) or value is None:
        return str(value).lower()
    if isinstance(value, float):
        return f"{int(value):,}" if value.is_integer() and abs(value) < 1e15 else f"{value:.6g}"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, BaseModel):
        if hasattr(value, "brief"):  # a model that says itself in a few words (a C-state, a power state)
            return value.brief()
        return ", ".join(f"{k}={_text(getattr(value, k))}" for k in type(value).model_fields)
    if isinstance(value, (tuple, list)):
        return "; ".join(_text(v) for v in value) if value else "none"
    return str(value)


def _part(value: Any, part: str) -> str:
    """Part ``part`` of a field's value: an attribute of a nested model, or of each item of a tuple."""
    if isinstance(value, (tuple, list)):
        return ", ".join(
            (f"{getattr(v, 'name')} " if hasattr(v, "name") else "") + _text(getattr(v, part, None)) for v in value
        )
    return _text(getattr(value, part, None))


def sourced_rows(config: BaseModel, sources: Mapping[str, str]) -> list[tuple[str, str, str]]:
    """(field, value as text, source) for every value ``sources`` names, in the model's field order;
    a source of a part of a field (``read.base_ns``, ``cstates.power_w``) is a row of its own."""
    rows = []
    for name in type(config).model_fields:
        value = getattr(config, name)
        if name in sources:
            rows.append((name, _text(value), sources[name]))
        for key, source in sources.items():
            if key.startswith(name + "."):
                rows.append((key, _part(value, key.split(".", 1)[1]), source))
    return rows
