"""``--set KEY=VALUE`` overrides, the same for every kind of run.

The command line's items are parsed once (:func:`parse_sets`: ``KEY=VALUE`` -> ``{KEY: text}``);
a value is read as a YAML scalar (:func:`set_value`: ``1`` an int, ``true`` a bool, ``1e-3`` a
float, else the text). The platform's keys mean the same in a host run, a storage-server run and a
trace replay (:func:`apply_sets`): ``queue.*`` (the block queue's sysfs attributes; the IO
scheduler's own ``queue.iosched.*`` parameters are checked by the scheduler), ``nvme.*``,
``cpu.*``, ``ssd.*``, ``kernel.*``, ``sched.*``, ``power.*``, ``ssd_count`` and ``ssd_nodes``. Every other key goes
to the kind of run, which takes its own sections: a host fio options (``bs=8k``, no dot), a server
``server.*``, ``policy.*``, ``workload.*`` and ``metrics.*``, a replay ``replay.*``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from simcore.config import parse_scalar, set_path
from simcore.errors import ConfigError

__all__ = ["PLATFORM_PREFIXES", "PLATFORM_HEADS", "parse_sets", "set_value", "is_platform_key", "apply_sets"]

#: ``--set`` sections that are fields of the platform (besides ``queue``)
PLATFORM_PREFIXES = ("cpu", "ssd", "kernel", "sched", "power", "ssd_count", "ssd_nodes", "nvme", "pagecache")
#: platform keys whose value is kept as the text given (a kernel release: ``6.10`` is not ``6.1``)
TEXT_KEYS = ("kernel.version",)
#: every ``--set`` section that addresses the platform
PLATFORM_HEADS = ("queue", *PLATFORM_PREFIXES)


def parse_sets(items: Iterable[str]) -> dict[str, str]:
    """``["KEY=VALUE", ...]`` -> ``{KEY: VALUE}`` (both stripped; a later KEY wins)."""
    out = {}
    for it in items:
        if "=" not in it:
            raise ConfigError(f"--set {it!r}: expected KEY=VALUE")
        key, val = it.split("=", 1)
        key = key.strip()
        if not key:
            raise ConfigError(f"--set {it!r}: empty key")
        out[key] = val.strip()
    return out


def set_value(raw: Any) -> Any:
    """A ``--set`` value: text is read as a YAML scalar, anything else (a YAML file's value) is kept."""
    return parse_scalar(raw) if isinstance(raw, str) else raw


def is_platform_key(key: str) -> bool:
    """Whether ``key`` addresses the platform (``queue.io_poll``, ``cpu.freq_ghz``, ``ssd_count``, ...)."""
    return key.split(".", 1)[0] in PLATFORM_HEADS


def apply_sets(pdata: dict, sets: dict[str, Any], other: Callable[[str, Any], None]) -> None:
    """Apply ``sets`` in order: the platform keys to the platform data ``pdata`` (a plain dict, in
    place), every other key (with its raw value) to ``other``, the kind of run's own handler."""
    for key, raw in sets.items():
        head, _, rest = key.partition(".")
        if head == "queue":
            if not rest:
                raise ConfigError(f"--set {key}: name a queue attribute, e.g. queue.io_poll=1")
            set_path(pdata["queue"], rest, set_value(raw), known_only=not rest.startswith("iosched."))
        elif head in PLATFORM_PREFIXES:
            # a release is text: 6.10 is not 6.1
            set_path(pdata, key, raw if key in TEXT_KEYS and isinstance(raw, str) else set_value(raw))
        else:
            other(key, raw)
