"""fio value syntax: sizes (bytes), times (nanoseconds), booleans, integers, CPU sets.

Every function raises :class:`simcore.errors.ConfigError` naming the option on bad input;
the parser appends the job, file and line.

Sizes follow fio's ``kb_base`` rules (checked against fio 3.33). With fio's default
``kb_base=1024`` ("compatibility mode") ``4k`` = ``4K`` = ``4kb`` = ``4ki`` = 4096 bytes, but the
full IEC form ``4KiB`` = 4000 bytes (fio reads ``KiB``/``MiB``/... as powers of 1000 then);
``kb_base=1000`` swaps the two. Suffixes are case-insensitive; ``b`` means byte.

Times: fio matches the units ``s``, ``m``, ``h``, ``d`` exactly and ``us``/``ms`` by prefix, and
silently reads any other suffix as microseconds (``2sec`` is 2 us, ``1min`` is 1 us, in fio 3.33),
so such suffixes are rejected here rather than given a meaning fio does not give them.
"""

from __future__ import annotations

import math
import re

from models.ioengines.job import SIZE_MAX_BYTES, TIME_MAX_NS
from simcore.errors import ConfigError

#: Highest CPU number: Linux's largest NR_CPUS (x86-64 MAXSMP) is 8192.
CPU_MAX = 8191
_MAX_DIGITS = 40  # more decimal digits than any 64-bit value has: refused before int() is asked

_INT_RE = re.compile(r"[+-]?\d+")
_SIZE_RE = re.compile(r"([+-]?\d+)([a-z%]*)")
_TIME_RE = re.compile(r"([+-]?\d+)([a-z]*)")
_SIZE_POWERS = {"k": 1, "m": 2, "g": 3, "t": 4, "p": 5}
_NS_PER = {
    "us": 1_000,
    "usec": 1_000,
    "ms": 1_000_000,
    "msec": 1_000_000,
    "s": 10**9,
    "m": 60 * 10**9,
    "h": 3600 * 10**9,
    "d": 86400 * 10**9,
}
_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def _text(text: str | None, option: str) -> str:
    if text is None or not text.strip():
        raise ConfigError(f"option '{option}' needs a value")
    return ascii_number_text(text.strip(), option)


def ascii_number_text(text: str, option: str) -> str:
    """``text`` if its digits are ASCII: fio reads numbers with C's strtoll/strtod, which know
    ``0``-``9`` only (Python's int() and float() also take ``４`` or ``٤``: refused, as fio does)."""
    for ch in text:
        if not ch.isascii() and ch.isdigit():
            raise ConfigError(
                f"option '{option}': '{ch}' (U+{ord(ch):04X}) in '{text}' is not an ASCII digit (fio reads 0-9 only)"
            )
    return text


def _digits(digits: str, raw: str, option: str) -> int:
    """``int(digits)``, refusing absurdly long numbers with a short message (not a 4300-digit one)."""
    if len(digits.lstrip("+-").lstrip("0")) > _MAX_DIGITS:
        shown = raw if len(raw) <= 40 else f"{raw[:20]}...{raw[-8:]} ({len(raw)} characters)"
        raise ConfigError(f"option '{option}': value '{shown}' is out of range (beyond 64 bits)")
    return int(digits)


def parse_size(text: str | None, *, option: str, kb_base: int = 1024, allow_zero: bool = False) -> int:
    """Parse a fio size (``4k``, ``1m``, ``2g``, ``4096``, ``0x1000``) and return bytes.

    Suffixes k/m/g/t/p, optionally followed by ``b`` or ``i``, are powers of ``kb_base``;
    kib/mib/gib/tib/pib are powers of the other base (1000 when ``kb_base=1024``), as in fio.
    Percentages of the device (``50%``), fractions and negative values are rejected.
    """
    raw = _text(text, option)
    if kb_base not in (1000, 1024):
        raise ConfigError(f"option 'kb_base': must be 1000 or 1024, got {kb_base}")
    low = raw.lower()
    if low.startswith("0x"):
        try:
            if len(low) > _MAX_DIGITS:
                raise ValueError
            value, suffix = int(low, 16), ""
        except ValueError:
            raise ConfigError(f"option '{option}': bad hexadecimal size '{raw}'") from None
    else:
        m = _SIZE_RE.fullmatch(low)
        if m is None:
            raise ConfigError(
                f"option '{option}': bad size '{raw}' (expected an integer with an optional "
                "unit such as 4k, 1m, 2g; fractions are not allowed)"
            )
        value, suffix = _digits(m.group(1), raw, option), m.group(2)
    if suffix == "%":
        raise ConfigError(
            f"option '{option}': '{raw}' is a percentage of the device size, which is modelled for size "
            "only (not yet for this option); give an absolute size such as 1g"
        )
    if value < 0:
        raise ConfigError(f"option '{option}': size must not be negative, got '{raw}'")
    if suffix in ("", "b"):
        mult = 1
    elif suffix[0] in _SIZE_POWERS and suffix[1:] in ("", "b", "i", "ib"):
        base = (1000 if kb_base == 1024 else 1024) if suffix[1:] == "ib" else kb_base
        mult = base ** _SIZE_POWERS[suffix[0]]
    else:
        raise ConfigError(
            f"option '{option}': unknown size unit in '{raw}' (use b, k, m, g, t, p, optionally followed by b)"
        )
    if value == 0 and not allow_zero:
        raise ConfigError(f"option '{option}': size must be greater than zero, got '{raw}'")
    if value * mult > SIZE_MAX_BYTES:
        raise ConfigError(
            f"option '{option}': size '{raw}' is beyond 64 bits (at most {SIZE_MAX_BYTES} bytes, as fio stores sizes)"
        )
    return value * mult


def parse_time_ns(text: str | None, *, option: str, default_unit: str = "s") -> int:
    """Parse a fio time (``10``, ``500us``, ``20ms``, ``30s``, ``2m``, ``1h``, ``1d``); return ns.

    Units (case-insensitive): us/usec, ms/msec, s, m (minutes), h, d. A bare number is in
    ``default_unit`` (fio: seconds for runtime/ramp_time/startdelay, microseconds for thinktime).
    Zero is allowed; negative values, fractions and other suffixes (``sec``, ``min``, ``ns``:
    fio would read them as microseconds) are rejected.
    """
    if default_unit not in _NS_PER:
        raise ValueError(f"default_unit must be one of {sorted(_NS_PER)}")
    raw = _text(text, option)
    m = _TIME_RE.fullmatch(raw.lower())
    if m is None:
        raise ConfigError(
            f"option '{option}': bad time '{raw}' (expected an integer with an optional unit: "
            "us, ms, s, m, h, d; fractions are not allowed)"
        )
    value, unit = _digits(m.group(1), raw, option), m.group(2) or default_unit
    if unit not in _NS_PER:
        raise ConfigError(
            f"option '{option}': unknown time unit '{m.group(2)}' in '{raw}' (fio would silently "
            "read it as microseconds); use us, ms, s, m (minutes), h or d"
        )
    if value < 0:
        raise ConfigError(f"option '{option}': time must not be negative, got '{raw}'")
    if value * _NS_PER[unit] > TIME_MAX_NS:
        raise ConfigError(
            f"option '{option}': time '{raw}' is too long (at most about 104 days = 2**53 ns, "
            "the simulated clock's nanosecond resolution)"
        )
    return value * _NS_PER[unit]


def ms_time(ms: float, *, option: str) -> str:
    """A fio time value for ``ms`` milliseconds (``--runtime-ms 0.5`` -> ``500us``; fio times are
    integers, so fractions go to us and ns); ConfigError naming ``option`` if not finite, negative
    or beyond :data:`TIME_MAX_NS`."""
    if not math.isfinite(ms) or ms < 0 or ms * 1e6 > TIME_MAX_NS:
        raise ConfigError(f"{option} {ms:g}: expected a number of ms from 0 to about 104 days (2**53 ns)")
    if ms == int(ms):
        return f"{int(ms)}ms"
    return f"{round(ms * 1000)}us"


def parse_bool(text: str | None, *, option: str, flag: bool = False) -> bool:
    """Parse a boolean: 1/0, true/false, yes/no, on/off (fio itself accepts only 0/1).

    ``flag=True`` is for fio's set-type options (``time_based``, ``group_reporting``, ...): no
    value means true and any non-negative integer is accepted (non-zero = true), as in fio.
    Other booleans (``direct``, ``nowait``, ...) need a value in fio, so none is an error.
    """
    if text is None or not text.strip():
        if flag:
            return True
        raise ConfigError(f"option '{option}' needs a value (fio rejects a bare '{option}'; write {option}=1)")
    low = text.strip().lower()
    if flag and low.isdigit():
        return int(low) != 0
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    raise ConfigError(f"option '{option}': bad boolean '{text.strip()}' (use 1/0, true/false, yes/no, on/off)")


def parse_int(text: str | None, *, option: str, minimum: int | None = None, maximum: int | None = None) -> int:
    """Parse a plain decimal integer, checking ``minimum <= value <= maximum`` when given."""
    raw = _text(text, option)
    if _INT_RE.fullmatch(raw) is None:
        raise ConfigError(f"option '{option}': expected an integer, got '{raw}'")
    value = _digits(raw, raw, option)
    if not -(2**63) <= value < 2**64:
        raise ConfigError(f"option '{option}': {value} is out of range (beyond 64 bits)")
    if minimum is not None and value < minimum:
        raise ConfigError(f"option '{option}': must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise ConfigError(f"option '{option}': must be <= {maximum}, got {value}")
    return value


def parse_cpu_list(text: str | None, *, option: str = "cpus_allowed") -> tuple[int, ...]:
    """Parse a fio CPU list such as ``0-3,6`` into sorted, de-duplicated CPU numbers."""
    raw = _text(text, option)
    cpus: set[int] = set()
    for part in raw.split(","):
        part = part.strip()
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", part)
        if m is None:
            raise ConfigError(f"option '{option}': bad CPU list '{raw}' (expected e.g. 0-3,6)")
        if any(len(g) > 5 for g in m.groups() if g):
            raise ConfigError(f"option '{option}': CPU number in '{part}' is out of range (at most {CPU_MAX})")
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        if hi > CPU_MAX:
            raise ConfigError(
                f"option '{option}': CPU {hi} is out of range (at most {CPU_MAX}: Linux's largest NR_CPUS is 8192)"
            )
        if hi < lo:
            raise ConfigError(f"option '{option}': bad CPU range '{part}' (end before start)")
        cpus.update(range(lo, hi + 1))
    return tuple(sorted(cpus))


def parse_cpumask(text: str | None, *, option: str = "cpumask") -> tuple[int, ...]:
    """Parse a fio cpumask (bit i set = CPU i allowed; decimal or 0x-prefixed hex) into CPU numbers."""
    raw = _text(text, option)
    try:
        if len(raw) > CPU_MAX // 3:
            raise ConfigError(f"option '{option}': CPU mask '{raw[:20]}...' names CPUs beyond {CPU_MAX}")
        mask = int(raw[2:], 16) if raw.lower().startswith("0x") else int(raw, 10)
    except ValueError:
        raise ConfigError(f"option '{option}': bad CPU mask '{raw}' (expected e.g. 0xf or 15)") from None
    if mask.bit_length() > CPU_MAX + 1:
        raise ConfigError(
            f"option '{option}': CPU mask '{raw[:20]}' names CPUs beyond {CPU_MAX} (Linux's largest NR_CPUS is 8192)"
        )
    if mask <= 0:
        raise ConfigError(f"option '{option}': CPU mask must select at least one CPU, got '{raw}'")
    return tuple(i for i in range(mask.bit_length()) if mask >> i & 1)


def split_rwt(text: str | None, *, option: str) -> tuple[str | None, str | None, str | None]:
    """Split a fio per-direction value ``read[,write[,trim]]``; ``None`` means "fio's default".

    fio rules: ``8k`` applies to all three directions; ``8k,32k`` = 8k reads, 32k writes and
    trims; ``8k,32k,`` = default trims; ``,8k`` = default reads, 8k writes and trims.
    """
    raw = _text(text, option)
    parts = [p.strip() or None for p in raw.split(",")]
    if len(parts) > 3:
        raise ConfigError(f"option '{option}': at most 3 comma-separated values (read,write,trim), got '{raw}'")
    if len(parts) == 1:
        return parts[0], parts[0], parts[0]
    if len(parts) == 2:
        return parts[0], parts[1], parts[1]
    return parts[0], parts[1], parts[2]


def parse_bssplit(text: str, *, option: str = "bssplit", kb_base: int = 1024) -> tuple[tuple[int, float], ...]:
    """One direction of fio's ``bssplit`` (``4k/50:64k/30:1m/20``): (bytes, percent) entries.

    As in fio, entries without a percentage (``4k/10:64k``) share what the others leave of 100%
    evenly; percentages above 100 in total are an error."""
    entries: list[tuple[int, float | None]] = []
    for part in text.split(":"):
        part = part.strip()
        if not part:
            raise ConfigError(f"option '{option}': empty entry in '{text}' (expected SIZE/PERCENT[:SIZE/PERCENT...])")
        size_s, _, perc_s = part.partition("/")
        size = parse_size(size_s, option=option, kb_base=kb_base)
        perc = None
        if perc_s.strip():
            try:
                perc = float(perc_s)
            except ValueError:
                raise ConfigError(f"option '{option}': '{perc_s}' is not a percentage (in '{part}')") from None
            if not math.isfinite(perc) or perc < 0:
                raise ConfigError(
                    f"option '{option}': percentage '{perc_s.strip()}' must be a number from 0 to 100 (in '{part}')"
                )
        entries.append((size, perc))
    given = sum(p for _s, p in entries if p is not None)
    if given > 100.0 + 1e-9:
        raise ConfigError(f"option '{option}': percentages add up to {given:g} (> 100) in '{text}'")
    blank = [i for i, (_s, p) in enumerate(entries) if p is None]
    share = (100.0 - given) / len(blank) if blank else 0.0
    out = tuple((s, share if p is None else p) for s, p in entries)
    if not blank and given < 100.0 - 1e-9:
        raise ConfigError(f"option '{option}': percentages add up to {given:g}, not 100, in '{text}'")
    return out


def parse_bsrange(text: str, *, option: str = "bsrange", kb_base: int = 1024) -> tuple[int, int]:
    """One direction of fio's ``bsrange`` (``4k-64k``): (minimum, maximum) bytes."""
    lo_s, sep, hi_s = text.partition("-")
    if not sep:
        raise ConfigError(f"option '{option}': expected MIN-MAX (e.g. 4k-64k), got '{text}'")
    lo = parse_size(lo_s, option=option, kb_base=kb_base)
    hi = parse_size(hi_s, option=option, kb_base=kb_base)
    if hi < lo:
        raise ConfigError(f"option '{option}': maximum {hi_s.strip()} is below minimum {lo_s.strip()}")
    return lo, hi
