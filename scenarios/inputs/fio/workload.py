"""fio's workload-shaping option values: ``random_distribution``, ``percentage_random``, ``rate``,
and the files' (``filename``/``directory`` lists, ``filesize``, ``file_service_type``).

Each function returns the job fields the option sets, or raises ConfigError naming the option
(the parser adds the file, job and line). Rules and limits as fio 3.41 checks them (options.c:
str_random_distribution_cb, parse_zoned_distribution; the HOWTO for the syntax).
"""

from __future__ import annotations

import math
from typing import Any

from simcore.errors import ConfigError

from .units import parse_int, parse_size, split_rwt

DISTRIBUTIONS = ("random", "zipf", "pareto", "normal", "zoned", "zoned_abs", "sequence")
#: fio's limit on zones per direction (ZONESPLIT_MAX)
ZONES_MAX = 256
#: fio's limit on the block indices of ``random_distribution=sequence`` (HOWTO: "Up to 64 sequence
#: elements are supported")
SEQUENCE_MAX = 64


def _float(text: str, what: str, raw: str, option: str = "random_distribution") -> float:
    try:
        v = float(text)
    except ValueError:
        raise ConfigError(f"option '{option}': {what} '{text}' is not a number (in '{raw}')") from None
    if not math.isfinite(v):
        raise ConfigError(f"option '{option}': {what} must be finite (in '{raw}')")
    return v


def _zone_list(text: str, *, absolute: bool, kb: int, raw: str) -> tuple[tuple[float, float], ...]:
    """``60/10:30/20:...`` -> ((access %, size % or bytes), ...); access must add up to 100.

    A ``zoned`` range left out (``20/``, ``20`` or ``20/0``) is missing: fio's zone_split_ddir
    shares what the given ranges leave of 100 % among the missing ones, in whole percent
    (``(100 - given) / missing``), so ``zoned:50/5:30/15:20/`` gives the last zone 80 %."""
    zones: list[tuple[float, float | None]] = []
    for part in text.split(":"):
        acc_s, sep, size_s = part.strip().partition("/")
        if not acc_s.strip() or (absolute and (not sep or not size_s.strip())):
            raise ConfigError(
                f"option 'random_distribution': zone '{part.strip()}' is not ACCESS%/"
                f"{'SIZE' if absolute else 'RANGE%'} (in '{raw}')"
            )
        acc = _float(acc_s, "zone access percentage", raw)
        size: float | None = (
            float(parse_size(size_s, option="random_distribution", kb_base=kb))
            if absolute
            else _float(size_s, "zone range percentage", raw) or None
            if size_s.strip()
            else None
        )
        if acc < 0 or acc > 100 or (size is not None and not absolute and not 0 < size <= 100):
            raise ConfigError(
                f"option 'random_distribution': zone '{part.strip()}' has a percentage outside 0..100 (in '{raw}')"
            )
        zones.append((acc, size))
    if len(zones) > ZONES_MAX:
        raise ConfigError(f"option 'random_distribution': {len(zones)} zones, fio takes at most {ZONES_MAX}")
    acc = sum(a for a, _s in zones)
    if abs(acc - 100.0) > 1e-9:
        raise ConfigError(
            f"option 'random_distribution': zone access percentages add up to {acc:g}, fio needs 100 (in '{raw}')"
        )
    given = sum(s for _a, s in zones if s is not None)
    if not absolute and given > 100.0 + 1e-9:
        raise ConfigError(f"option 'random_distribution': zone ranges add up to more than 100% (in '{raw}')")
    missing = sum(s is None for _a, s in zones)
    share = float(int(100 - given) // missing) if missing else 0.0
    return tuple((a, share if s is None else s) for a, s in zones)


def _skew(name: str, text: str, raw: str, option: str) -> float:
    """A zipf theta, pareto h or normal deviation, in the range fio accepts for it."""
    val = _float(text, f"{name} value", raw, option)
    if name == "zipf" and (val <= 0 or val == 1.0):
        raise ConfigError(f"option '{option}': zipf theta must be > 0 and different from 1.0, got {val:g}")
    if name == "pareto" and not 0 < val < 1:
        raise ConfigError(f"option '{option}': pareto input out of range (0 < h < 1), got {val:g}")
    if name == "normal" and not 0 <= val < 100:
        raise ConfigError(f"option '{option}': normal deviation out of range (0 <= dev < 100), got {val:g}")
    return val


def _sequence(text: str, raw: str) -> tuple[int, ...]:
    """``2,0,1`` -> the block indices of fio's ``sequence`` distribution (1 to :data:`SEQUENCE_MAX`
    non-negative integers, in blocks of the job's smallest block size)."""
    parts = [p.strip() for p in text.split(",")] if text.strip() else []
    if not parts:
        raise ConfigError(
            "option 'random_distribution': 'sequence' needs block indices, e.g. random_distribution=sequence:2,0,1"
        )
    if len(parts) > SEQUENCE_MAX:
        raise ConfigError(
            f"option 'random_distribution': {len(parts)} sequence elements, fio takes at most {SEQUENCE_MAX}"
        )
    out = []
    for p in parts:
        if not p.isdigit():
            raise ConfigError(
                f"option 'random_distribution': sequence element '{p}' is not a block index"
                f" (a non-negative integer; in '{raw}')"
            )
        out.append(int(p))
    return tuple(out)


def parse_random_distribution(text: str | None, kb: int) -> dict[str, Any]:
    """``random``, ``zipf:theta[:center]``, ``pareto:h[:center]``, ``normal:dev[:center]``,
    ``zoned:A/R:...[,read/write/trim zones]``, ``zoned_abs:A/SIZE:...`` -> job fields."""
    raw = (text or "").strip()
    if not raw:
        raise ConfigError("option 'random_distribution' needs a value")
    name, sep, rest = raw.replace("=", ":", 1).partition(":") if raw.startswith("zoned") else raw.partition(":")
    name = name.strip().lower()
    out: dict[str, Any] = dict(
        random_distribution=name,
        random_distribution_value=None,
        random_distribution_center=None,
        zones_read=(),
        zones_write=(),
        random_sequence=(),
    )
    if name not in DISTRIBUTIONS:
        raise ConfigError(
            f"option 'random_distribution': unknown distribution '{name}' (allowed: {', '.join(DISTRIBUTIONS)})"
        )
    if name == "sequence":
        out["random_sequence"] = _sequence(rest, raw)
        return out
    if name == "random":
        if sep:
            raise ConfigError(f"option 'random_distribution': 'random' takes no value (got '{raw}')")
        return out
    if not rest.strip():
        raise ConfigError(
            f"option 'random_distribution': '{name}' needs a value, e.g. "
            f"{ {'zipf': 'zipf:1.2', 'pareto': 'pareto:0.2', 'normal': 'normal:10'}.get(name, name + ':60/10:40/90') }"
        )
    if name.startswith("zoned"):
        r, w, _t = split_rwt(rest, option="random_distribution")
        absolute = name == "zoned_abs"
        out["zones_read"] = _zone_list(r, absolute=absolute, kb=kb, raw=raw) if r else ()
        out["zones_write"] = _zone_list(w, absolute=absolute, kb=kb, raw=raw) if w else ()
        if not out["zones_read"] and not out["zones_write"]:
            raise ConfigError(f"option 'random_distribution': no zones in '{raw}'")
        out["zones_read"] = out["zones_read"] or out["zones_write"]
        out["zones_write"] = out["zones_write"] or out["zones_read"]
        return out
    if "," in rest:
        raise ConfigError(
            f"option 'random_distribution': per-direction values are taken only by zoned and zoned_abs (got '{raw}')"
        )
    val_s, _, center_s = rest.partition(":")
    val = _skew(name, val_s, raw, "random_distribution")
    out["random_distribution_value"] = val
    if center_s.strip():
        center = _float(center_s, "center", raw)
        if not 0 <= center <= 1:
            raise ConfigError(
                f"option 'random_distribution': distribution center out of range (0 <= center <= 1), got {center:g}"
            )
        out["random_distribution_center"] = center
    return out


def parse_percentage_random(text: str | None) -> dict[str, Any]:
    """``percentage_random=read[,write[,trim]]``, each 0..100 (default 100)."""
    r, w, t = split_rwt(text, option="percentage_random")
    vals = [100 if p is None else parse_int(p, option="percentage_random", minimum=0, maximum=100) for p in (r, w, t)]
    return dict(percentage_random_read=vals[0], percentage_random_write=vals[1])


# --- fio's files (models/ioengines/files.py) ----------------------------------------------------
FILE_SERVICE = ("roundrobin", "random", "sequential", "zipf", "pareto", "normal")


def split_names(text: str | None, option: str) -> tuple[str, ...]:
    """fio's ``a:b:c`` file/directory list, ``\\:`` being a colon inside a name."""
    raw = (text or "").strip()
    if not raw:
        raise ConfigError(f"option '{option}' needs a value")
    names = [n.replace("\0", ":") for n in raw.replace("\\:", "\0").split(":")]
    if any(not n for n in names):
        raise ConfigError(f"option '{option}': empty name in '{raw}'")
    return tuple(names)


def parse_filesize(text: str | None, kb: int) -> tuple[int, int]:
    """``filesize=SIZE`` or ``LO-HI`` (each file drawn uniformly in it) -> (lo, hi) bytes."""
    raw = (text or "").strip()
    lo_s, sep, hi_s = raw.partition("-") if not raw.startswith("-") else (raw, "", "")
    lo = parse_size(lo_s, option="filesize", kb_base=kb)
    hi = parse_size(hi_s, option="filesize", kb_base=kb) if sep else lo
    if hi < lo:
        raise ConfigError(f"option 'filesize={raw}': the range ends before it starts")
    return lo, hi


def parse_file_service(text: str | None) -> dict[str, Any]:
    """``file_service_type=KIND[:N]`` (roundrobin, random, sequential: N IOs per turn) or
    ``zipf|pareto|normal|gauss[:value]`` (the skew), checked as fio's str_fst_cb does."""
    raw = (text or "").strip()
    name, sep, val_s = raw.partition(":")
    name = name.strip().lower()
    name = "normal" if name == "gauss" else name
    if name not in FILE_SERVICE:
        raise ConfigError(
            f"option 'file_service_type': unknown value '{raw}' "
            f"(allowed: {', '.join(FILE_SERVICE)}, gauss; each with an optional ':N')"
        )
    val: float | None = None
    if sep:
        if name in ("roundrobin", "random", "sequential"):
            val = float(parse_int(val_s, option="file_service_type", minimum=1))
        else:
            val = _skew(name, val_s, raw, "file_service_type")
    return dict(file_service_type=name, file_service_value=val)
