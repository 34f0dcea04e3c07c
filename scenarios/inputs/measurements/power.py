"""Read wall/system power logs: powerstat, ``ipmitool dcmi power reading``, or a plain CSV.

Formats (sniffed from the first 40 lines, or given as ``fmt``):

* ``powerstat``: rows under the header ``Time User Nice Sys Idle IO Run Ctxt/s IRQ/s Fork Exec
  Exit Watts`` (the Watts column is found from the header, counted from the right); the
  ``Time`` column (HH:MM:SS, wrapping at midnight) gives the times; the preamble and the summary
  after the first ``--------`` line are skipped.
* ``ipmi``: one or many ``ipmitool dcmi power reading`` outputs concatenated; each
  ``Instantaneous power reading: N Watts`` is a sample. Times come from the ``IPMI timestamp:``
  lines if every reading has one and they never go backwards, else sample i is at
  ``i * interval_s``. Minimum/maximum/average lines go to ``reported`` (min of minima, max of
  maxima, mean of averages). Other lines (``date`` output, ...) are ignored.
* ``csv``: ``time,watts`` rows (seconds, watts), optional header line, ``#`` comments; time must
  not go backwards.

Times are seconds relative to the first sample; watts must be finite and >= 0.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from datetime import datetime

from simcore.errors import ConfigError

from .common import read_text, to_float

__all__ = ["PowerLog", "read_power_log", "POWER_FORMATS"]

POWER_FORMATS = ("powerstat", "ipmi", "csv")
_CLOCK = re.compile(r"(\d{1,2}):(\d{2}):(\d{2})")
_IPMI_NOW = re.compile(r"\s*Instantaneous power reading:\s*(\S+)\s*Watts", re.I)
_IPMI_STAT = re.compile(r"\s*(Minimum|Maximum|Average)[^:]*:\s*(\S+)\s*Watts", re.I)
_IPMI_TS = re.compile(r"\s*IPMI timestamp:\s*(.+?)\s*$", re.I)


@dataclass(frozen=True, slots=True)
class PowerLog:
    """A power trace: ``samples`` are ``(t_s, watts)`` pairs, t relative to the first sample."""

    path: str
    format: str
    samples: tuple[tuple[float, float], ...]
    reported: dict[str, float] = field(default_factory=dict)
    """What the tool itself reported (ipmi: ``min_w``, ``max_w``, ``avg_w``)."""

    @property
    def mean_w(self) -> float:
        """Arithmetic mean of the samples, W (the tools sample at a fixed interval)."""
        return sum(w for _, w in self.samples) / len(self.samples)

    @property
    def duration_s(self) -> float:
        return self.samples[-1][0] - self.samples[0][0]

    def describe(self) -> str:
        ws = [w for _, w in self.samples]
        return (
            f"power log ({self.format}) {self.path}: {len(ws)} samples over "
            f"{self.duration_s:g} s, mean {self.mean_w:.1f} W, min {min(ws):g} W, max {max(ws):g} W"
        )


def _sniff(lines: list[str], path) -> str:
    head = lines[:40]
    if any(_IPMI_NOW.match(line) for line in head):
        return "ipmi"
    if any(_is_powerstat_header(line.split()) for line in head):
        return "powerstat"
    content = [line for line in head if line.strip() and not line.lstrip().startswith("#")]
    if content and len(content[0].split(",")) == 2:
        return "csv"
    raise ConfigError(
        f"{path}: cannot tell the power log format (expected powerstat output, "
        f"ipmitool dcmi power reading output or 'time,watts' CSV)"
    )


def _is_powerstat_header(tokens: list[str]) -> bool:
    return bool(tokens) and tokens[0] == "Time" and "Watts" in tokens


def _powerstat(lines: list[str], path) -> list[tuple[float, float]]:
    samples: list[tuple[float, float]] = []
    from_right = None
    day = last = 0
    for lineno, line in enumerate(lines, 1):
        tokens = line.split()
        if _is_powerstat_header(tokens):
            if from_right is None:
                from_right = len(tokens) - tokens.index("Watts")
                ncols = len(tokens)
            continue
        if from_right is None or not tokens:
            continue
        if tokens[0].startswith("--------"):
            break  # summary
        where = f"{path}:{lineno}"
        clock = _CLOCK.fullmatch(tokens[0])
        if clock is None:
            raise ConfigError(f"{where}: powerstat row should start with HH:MM:SS, got {tokens[0]!r}")
        if len(tokens) != ncols:
            raise ConfigError(f"{where}: powerstat row has {len(tokens)} columns, header has {ncols}")
        t = int(clock[1]) * 3600 + int(clock[2]) * 60 + int(clock[3])
        if t + day < last:
            day += 86400  # past midnight
        last = t + day
        samples.append((float(last), to_float(tokens[-from_right], where, "Watts", minimum=0)))
    if from_right is None:
        raise ConfigError(f"{path}: no powerstat header line ('Time User ... Watts') found")
    return samples


def _ipmi(lines: list[str], path, interval_s: float):
    watts: list[float] = []
    stamps: list[datetime | None] = []
    stats: dict[str, list[float]] = {"minimum": [], "maximum": [], "average": []}
    for lineno, line in enumerate(lines, 1):
        where = f"{path}:{lineno}"
        if m := _IPMI_NOW.match(line):
            watts.append(to_float(m[1], where, "instantaneous power", minimum=0))
            stamps.append(None)
        elif m := _IPMI_STAT.match(line):
            stats[m[1].lower()].append(to_float(m[2], where, f"{m[1].lower()} power", minimum=0))
        elif (m := _IPMI_TS.match(line)) and stamps and stamps[-1] is None:
            try:
                stamps[-1] = datetime.strptime(m[1], "%a %b %d %H:%M:%S %Y")
            except ValueError:
                pass  # unparseable timestamp: times fall back to the sample index
    if all(s is not None for s in stamps) and all(a <= b for a, b in zip(stamps, stamps[1:])):
        times = [(s - stamps[0]).total_seconds() for s in stamps] if stamps else []
    else:
        times = [i * interval_s for i in range(len(watts))]
    reported = {}
    if stats["minimum"]:
        reported["min_w"] = min(stats["minimum"])
    if stats["maximum"]:
        reported["max_w"] = max(stats["maximum"])
    if stats["average"]:
        reported["avg_w"] = sum(stats["average"]) / len(stats["average"])
    return list(zip(times, watts)), reported


def _csv(lines: list[str], path) -> list[tuple[float, float]]:
    samples: list[tuple[float, float]] = []
    first = True
    for lineno, line in enumerate(lines, 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        where = f"{path}:{lineno}"
        fields = [f.strip() for f in line.split(",")]
        if len(fields) != 2:
            raise ConfigError(f"{where}: expected 2 columns 'time,watts', got {len(fields)}")
        if first:
            first = False
            try:
                float(fields[0])
            except ValueError:
                continue  # header
        t = to_float(fields[0], where, "time")
        if samples and t < samples[-1][0]:
            raise ConfigError(f"{where}: time {t:g} s goes backwards (previous {samples[-1][0]:g} s)")
        samples.append((t, to_float(fields[1], where, "watts", minimum=0)))
    return samples


def read_power_log(path: str | os.PathLike, fmt: str | None = None, *, interval_s: float = 1.0) -> PowerLog:
    """Read a power log (format sniffed unless ``fmt`` is one of :data:`POWER_FORMATS`).

    ``interval_s``: sampling interval used for ipmi readings without usable timestamps, s.
    """
    if fmt is not None and fmt not in POWER_FORMATS:
        raise ConfigError(f"{path}: unknown power log format {fmt!r}; expected one of {', '.join(POWER_FORMATS)}")
    if not interval_s > 0:
        raise ConfigError(f"interval_s must be > 0, got {interval_s!r}")
    lines = read_text(path, "power log").splitlines()
    fmt = fmt or _sniff(lines, path)
    reported: dict[str, float] = {}
    if fmt == "powerstat":
        samples = _powerstat(lines, path)
    elif fmt == "ipmi":
        samples, reported = _ipmi(lines, path, interval_s)
    else:
        samples = _csv(lines, path)
    if not samples:
        raise ConfigError(f"{path}: no power samples found ({fmt})")
    t0 = samples[0][0]
    return PowerLog(str(path), fmt, tuple((t - t0, w) for t, w in samples), reported)
