"""How a trace is replayed: open, closed, or each stream its own way (``--replay``).

:func:`choose_mode` decides (``auto``: from the trace's own overlap, per stream), :func:`build_replay`
makes the replayer of the decision on a host: an open-loop :class:`~models.ioengines.replay.TraceReplayer`,
a closed-loop :class:`~models.ioengines.replay_closed.ClosedReplayer`, or both (:class:`MixedReplay`:
the streams that never had two IOs in flight closed, the others open, one trace read once).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

from models.ioengines.replay import TraceReplayer
from models.ioengines.replay_closed import ClosedRecord, ClosedReplayer
from models.ioengines.replay_settings import ReplaySettings
from models.os.block.completion import completion_policy_name
from scenarios.inputs.fio.parser import FioJob, job_from_options
from scenarios.inputs.traces.timed import stream_overlaps
from simcore.errors import ConfigError

__all__ = ["MODES", "choose_mode", "build_replay", "MixedReplay", "replay_job", "closed_job", "mode_report"]

MODES = ("open", "closed", "auto")


def replay_job(settings: ReplaySettings) -> FioJob:
    """The pseudo fio job the open replay's submitters' costs and the fio-shaped output refer to."""
    return job_from_options(
        {
            "rw": "randrw",
            "ioengine": "io_uring",
            "direct": "1",
            "iodepth": "4096",
            "hipri": "1" if settings.hipri else "0",
            "registerfiles": "1" if settings.registerfiles else "0",
            "fixedbufs": "1" if settings.fixedbufs else "0",
        },
        name="replay",
        source="<replay>",
    )


def closed_job(settings: ReplaySettings) -> FioJob:
    """The pseudo fio job of a closed replay's threads: fio's pvsync2 (preadv2/pwritev2, RWF_HIPRI
    with ``replay.hipri``), one IO at a time."""
    return job_from_options(
        {"rw": "randrw", "ioengine": "pvsync2", "direct": "1", "iodepth": "1", "hipri": "1" if settings.hipri else "0"},
        name="replay",
        source="<replay>",
    )


def choose_mode(reader, mode: str) -> tuple[str, str, frozenset[str]]:
    """``(open|closed|mixed, why, closed streams)`` for a timed trace ``reader``
    (:mod:`scenarios.inputs.traces.timed`): the mode given, or with ``auto`` per stream: closed when
    it never had two IOs in flight (a synchronous submitter), else open; all streams one way is
    that mode, else ``mixed``. Reads the trace once for ``auto``. An fio log without issue times
    knows its arrivals to 1 ms: overlaps within 1 ms do not count there."""
    if mode not in MODES:
        raise ConfigError(f"--replay {mode!r}: expected one of {', '.join(MODES)}")
    if mode != "auto":
        return mode, f"--replay {mode}", frozenset()
    count, over = stream_overlaps(reader)
    if reader.approx_arrivals:
        count, over = stream_overlaps(reader, tolerance_ns=1e6)
    n = len(count)
    closed = frozenset(s for s in count if s not in over)
    if not over:
        return (
            "closed",
            (
                f"--replay auto chose closed: in each of the trace's {n} stream{'s' if n != 1 else ''}"
                f" ({_names(count)}) every IO was issued after the previous one completed"
            ),
            closed,
        )
    worst = max(over, key=lambda k: over[k])
    overlap = (
        f"{len(over)} of {n} streams had IOs in flight together ({sum(over.values())} IOs issued before an "
        f"earlier one of their stream completed; most in {worst!r}: {over[worst]} of {count[worst]})"
    )
    if not closed:
        return "open", f"--replay auto chose open: {overlap}", closed
    return (
        "mixed",
        (
            f"--replay auto chose closed for {len(closed)} stream{'s' if len(closed) != 1 else ''} "
            f"({_names(closed)}) and open for the others: {overlap}"
        ),
        closed,
    )


def _names(streams, shown: int = 4) -> str:
    names = [f"{k!r}" for k in list(streams)[:shown]]
    return ", ".join(names) + (f", ... ({len(streams) - shown} more)" if len(streams) > shown else "")


class _Branches:
    """One iterator read by two consumers: an item goes to branch ``pick(item)`` (0 or 1); a branch
    reads the source while its own queue is empty, holding the other's items for it."""

    def __init__(self, source: Iterator, pick: Callable[[Any], int]) -> None:
        self.source = source
        self.pick = pick
        self.queues: tuple[deque, deque] = (deque(), deque())

    def branch(self, k: int) -> Iterator:
        q = self.queues[k]
        while True:
            while not q:
                item = next(self.source, None)
                if item is None:
                    return
                self.queues[self.pick(item)].append(item)
            yield q.popleft()


class MixedReplay:
    """An open and a closed replayer of one trace on one host, seen as one (counts summed, done
    when both are)."""

    def __init__(self, host, open_part: TraceReplayer, closed_part: ClosedReplayer) -> None:
        self.parts = (open_part, closed_part)
        self.done_event = host.engine.env.all_of([p.done_event for p in self.parts])

    threads = property(lambda self: [t for p in self.parts for t in p.threads])
    trace_ios = property(lambda self: sum(p.trace_ios for p in self.parts))
    completed = property(lambda self: sum(p.completed for p in self.parts))
    exhausted = property(lambda self: all(p.exhausted for p in self.parts))
    last_due = property(lambda self: max(p.last_due for p in self.parts))

    def start(self) -> None:
        for p in self.parts:
            p.start()


def build_replay(
    host,
    settings: ReplaySettings,
    records: Iterator[ClosedRecord],
    mode: str,
    closed_streams: frozenset[str],
    *,
    reaped_ref: bool,
    on_open=None,
    on_submit=None,
):
    """``(replayer, job)``: the replayer of ``mode`` (open, closed or mixed: ``closed_streams``
    closed) over ``records``. ``on_open(record)``: each record handed to the open replayer;
    ``on_submit(req, tag)``: each closed submission; ``reaped_ref`` as :class:`ClosedReplayer`'s."""

    def opened(recs: Iterator[ClosedRecord]) -> Iterator:
        for rec in recs:
            if on_open is not None:
                on_open(rec)
            yield rec[0], rec[1]

    def closed(recs: Iterator[ClosedRecord]) -> ClosedReplayer:
        return ClosedReplayer(host, closed_job(settings), recs, settings, reaped_ref=reaped_ref, on_submit=on_submit)

    if mode == "open":
        return TraceReplayer(host, replay_job(settings), opened(records), settings), replay_job(settings)
    if mode == "closed":
        return closed(records), closed_job(settings)
    split = _Branches(records, lambda rec: 1 if rec[2] in closed_streams else 0)
    job = replay_job(settings)
    return MixedReplay(host, TraceReplayer(host, job, opened(split.branch(0)), settings), closed(split.branch(1))), job


def mode_report(replayer, settings: ReplaySettings, queue) -> dict:
    """What a replay's mode did: ``mode``, ``threads``, ``completion``, and closed: ``think`` (think
    times computed in user space and slept), open: the open part (for its issue lag)."""
    parts = replayer.parts if isinstance(replayer, MixedReplay) else (replayer,)
    opened = [p for p in parts if isinstance(p, TraceReplayer)]
    closed = [p for p in parts if isinstance(p, ClosedReplayer)]
    how = []
    if opened:
        how.append("polling (IOPOLL)" if settings.hipri else "interrupt")
    if closed:
        how.append(completion_policy_name(queue, settings.hipri))
    out: dict[str, Any] = {
        "mode": "mixed" if opened and closed else "closed" if closed else "open",
        "threads": len(replayer.threads),
        "completion": " (open) / ".join(how) + (" (closed)" if len(how) == 2 else ""),
        "think": None,
        "open_part": opened[0] if opened else None,
    }
    if closed:
        out["think"] = {
            "computed": sum(th.think_spins for th in closed[0].threads),
            "slept": sum(th.think_sleeps for th in closed[0].threads),
        }
    return out
