"""One option of a job file as the parser keeps it until its job is built: its key, its value
after ``${VAR}`` expansion and fio's arithmetic (:mod:`.language`), its catalogue entry
(:mod:`.options`) and where it was written, for the messages (:class:`Item`); and the messages of
an option fio's catalogue lacks or a number that expanded to nothing."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Callable, Mapping

from simcore.errors import ConfigError

from . import options as opts
from .language import expand, platform_keywords, value_kind

__all__ = ["UNKNOWN", "Fail", "Item", "empty_number", "make_item", "unknown_option"]


@dataclass(frozen=True, slots=True)
class Item:
    """One ``key[=value]`` occurrence and where it came from (for error messages)."""

    key: str
    value: str | None
    spec: opts.OptionSpec
    where: str  # "t.fio line 7", "t.fio line 3 [global]", "override", ...
    error: ConfigError | None = None  # an option fio's catalogue lacks: raised once the job's engine is checked
    raw: str | None = None  # a numeric value whose ${VAR} expanded to nothing: its text (fio's parse fails)


#: the spec of an unknown option's item (its ``error`` says why)
UNKNOWN = opts.OptionSpec("", "ignored")


def unknown_option(key: str, context: str) -> ConfigError:
    if key.startswith(opts.STACKSIM_PREFIX):
        known = ", ".join(sorted(opts.STACKSIM_OPTIONS))
        return ConfigError(f"unknown stacksim option '{key}' {context}; known stacksim options: {known}")
    names = {n.lower(): n for n in (*opts.FIO_OPTIONS, *opts.STACKSIM_OPTIONS)}
    close = [names[m] for m in difflib.get_close_matches(key.lower(), names, n=3, cutoff=0.7)]
    hint = f". Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
    return ConfigError(
        f"unknown fio option '{key}' {context}: fio {opts.FIO_VERSION}'s option "
        f"catalogue has no such option, fio would reject it too{hint}"
    )


def make_item(
    key: str,
    value: str | None,
    *,
    section: str,
    where: str,
    keywords: Mapping[str, int] | None = None,
    env: Mapping[str, str] | None = None,
) -> Item:
    what = "section [global]" if section == "global" else f"job '{section}'"
    if not key:
        raise ConfigError(f"missing option name before '=' in {what} ({where})")
    spec = opts.lookup(key)
    if spec is None:
        raise unknown_option(key, f"in {what} ({where})")
    if value is not None and ("$" in value or "(" in value):
        entry = opts.CATALOGUE_NAMES.get(key)
        kind = value_kind(entry["type"] if entry else None)
        raw = value
        try:
            value = expand(
                value,
                option=key,
                kind=kind,
                keywords=platform_keywords(None) if keywords is None else keywords,
                env=env,
            )
        except ConfigError as exc:
            raise ConfigError(f"{exc} in {what} ({where})") from None
        if kind != "str" and not value.strip() and raw.strip():
            return Item(key, value, spec, where, raw=raw)
    return Item(key, value, spec, where)


def empty_number(key: str, raw: str) -> str:
    """A numeric option whose ``${VAR}`` expanded to nothing: fio 3.41's fio_option_dup_subs
    substitutes the empty string for an unset variable (options.c), and an empty number fails to
    parse (parse.c: str_to_decimal and check_int return 1 on an empty string), so parse_option logs
    "fio: failed parsing KEY=RAW", the section is dropped and fio exits."""
    unset = ", ".join("${" + n + "}" for n in re.findall(r"\$\{([^}]*)\}", raw))
    return (
        f"option '{key}' needs a value: {unset} is not set in the environment, so it expands to the empty"
        f" string, which fio rejects too (fio: 'fio: failed parsing {key}={raw}')"
    )


Fail = Callable[[str, "Item | None"], ConfigError]
"""A job's error message maker: the message, and the item it is about (None: the job as a whole)
-> a ConfigError naming the file, line and job (``build.build_job``'s ``fail``)."""
