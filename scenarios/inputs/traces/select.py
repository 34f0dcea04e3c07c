"""Streaming transforms of trace records: time window / volume / speed selection, and the
assignment of many trace volumes to a few simulated devices."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from typing import Any

from simcore.errors import ConfigError

from .record import MAX_TRACE_NS, TraceIO

__all__ = ["select", "map_volumes", "map_volume_batches", "read_until", "parse_window"]


def parse_window(text: str | None) -> tuple[float | None, float | None]:
    """``"START:END"`` in seconds of trace time, either side optional (``"2:"``, ``":0.5"``)."""
    if text is None or text.strip() in ("", ":"):
        return None, None
    if ":" not in text:
        raise ConfigError(f"--window {text!r}: expected START:END in seconds (either side optional)")
    out: list[float | None] = []
    for part, name in zip(text.split(":", 1), ("start", "end")):
        part = part.strip()
        if not part:
            out.append(None)
            continue
        try:
            v = float(part)
        except ValueError:
            raise ConfigError(f"--window {text!r}: {name} {part!r} is not a number of seconds") from None
        if not math.isfinite(v) or v < 0:
            raise ConfigError(f"--window {text!r}: {name} must be a finite number of seconds >= 0")
        if v * 1e9 > 2**53:
            raise ConfigError(
                f"--window {text!r}: {name} is beyond 2**53 ns (~104 days) of trace time, where the "
                "simulated clock loses nanosecond resolution"
            )
        out.append(v)
    if out[0] is not None and out[1] is not None and out[1] <= out[0]:
        raise ConfigError(f"--window {text!r}: end must be after start")
    return out[0], out[1]


def _check_window(window_ns) -> tuple[int | None, int | None]:
    try:
        start, end = window_ns
    except (TypeError, ValueError):
        raise ConfigError(f"window_ns must be a (start_ns, end_ns) pair, got {window_ns!r}") from None
    for name, v in (("start", start), ("end", end)):
        if v is not None and (not isinstance(v, int) or isinstance(v, bool)):
            raise ConfigError(f"window_ns {name} must be an integer number of ns or None, got {v!r}")
    if start is not None and end is not None and end < start:
        raise ConfigError(f"window_ns end {end} is before start {start}")
    return start, end


def select(
    records: Iterable[TraceIO],
    *,
    window_ns: Any = (None, None),
    volumes: Any = None,
    speed: Any = 1.0,
    assume_sorted: bool = False,
    counts: dict[str, int] | None = None,
) -> Iterator[TraceIO]:
    """Keep the records with ``start <= t_ns < end`` (on the original times; None = open) and,
    if ``volumes`` is given, a volume in it; yield them in the same order with ``t_ns`` rebased to
    ``start`` (0 if None) and divided by ``speed`` (2.0 = replay twice as fast), rounded to ns.
    (``window_ns`` a pair of int ns or None, ``volumes`` a set of names, ``speed`` a number: typed
    Any, checked here with messages, since the compiled module would refuse other types tersely.)

    ``assume_sorted``: stop reading at the first record at or past ``end`` (for time-sorted
    traces; saves reading the rest of a large file). ``counts``, if given, receives the number
    of records dropped per reason (``"before window"``, ``"after window"``, ``"volume"``).
    """
    start, end = _check_window(window_ns)
    if isinstance(speed, bool) or not isinstance(speed, (int, float)) or not math.isfinite(speed) or speed <= 0:
        raise ConfigError(f"speed must be a finite number > 0, got {speed!r}")
    if isinstance(volumes, str):
        raise ConfigError(f"volumes must be a set of volume names, not the string {volumes!r}")
    wanted = None if volumes is None else {str(v) for v in volumes}
    base = start or 0
    counts = {} if counts is None else counts

    def drop(reason: str) -> None:
        counts[reason] = counts.get(reason, 0) + 1

    for rec in records:
        t = rec.t_ns
        if start is not None and t < start:
            drop("before window")
            continue
        if end is not None and t >= end:
            if assume_sorted:
                return
            drop("after window")
            continue
        if wanted is not None and rec.volume not in wanted:
            drop("volume")
            continue
        new_t = t - base if speed == 1 else round((t - base) / speed)
        if new_t > MAX_TRACE_NS:  # the reader's bound, after scaling: a slowed replay must not escape it
            raise ConfigError(
                f"speed {speed:g}: the record at {(t - base) / 1e9:g} s of trace time would be replayed at"
                f" {new_t / 1e9:.4g} s, beyond 2**53 ns (~104 days) of simulated time, where the clock stays"
                " exact; raise the speed or replay a shorter window"
            )
        yield rec if new_t == t else rec.at(new_t)


def map_volumes(
    records: Iterable[TraceIO], n_devices: Any, index: dict[str, int] | None = None
) -> Iterator[tuple[TraceIO, int]]:
    """Yield ``(record, device_index)``: the k-th distinct volume (in order of first appearance,
    counting from 0) goes to device ``k % n_devices``, for the whole stream. ``index``, if given,
    receives each volume's device as it first appears."""
    seen = _volume_index(n_devices, index)
    for rec in records:
        yield rec, _device_of(seen, rec.volume, n_devices)


def map_volume_batches(
    batches: Iterable[list[TraceIO]], n_devices: Any, index: dict[str, int] | None = None
) -> Iterator[list[tuple[TraceIO, int]]]:
    """:func:`map_volumes` a list at a time (of :meth:`TraceReader.batches
    <scenarios.inputs.traces.reader.TraceReader.batches>`): each list's ``(record,
    device_index)`` pairs, the same devices."""
    seen = _volume_index(n_devices, index)
    for batch in batches:
        yield [(rec, _device_of(seen, rec.volume, n_devices)) for rec in batch]


def _volume_index(n_devices: Any, index: dict[str, int] | None) -> dict[str, int]:
    """:func:`map_volumes`' check of ``n_devices`` and its volume -> device map (``index``, or a new one)."""
    if isinstance(n_devices, bool) or not isinstance(n_devices, int) or n_devices < 1:
        raise ConfigError(f"n_devices must be an integer >= 1, got {n_devices!r}")
    return {} if index is None else index


def _device_of(seen: dict[str, int], volume: str, n_devices: int) -> int:
    """The device of ``volume``: the k-th distinct volume seen goes to device ``k % n_devices``."""
    dev = seen.get(volume)
    if dev is None:
        dev = seen[volume] = len(seen) % n_devices
    return dev


def read_until(records: Iterable[TraceIO], limit_ns: int | None) -> Iterator[TraceIO]:
    """The records up to the first one at or past ``limit_ns`` (None: all of them)."""
    for rec in records:
        if limit_ns is not None and rec.t_ns >= limit_ns:
            return
        yield rec
