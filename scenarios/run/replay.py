"""Trace replay runs: :class:`ReplayConfig` (:func:`resolve_replay`), run by
:func:`scenarios.run.simulate.simulate`.

    cfg = resolve_replay("scenarios/data/traces/msr_sample.csv", "msr",
                         platform="optane900p-e3-1230v5", speed=2.0, window=(0.0, 0.05))
    result = simulate(cfg)
    result["summary"]["trace_ios"] == result["summary"]["completed_ios"]

The result has the shape of ``stacksim run``'s (``jobs``, ``summary``, ``sim``; one pseudo job
``replay``), the summary adds ``trace_ios`` (IOs read from the trace in the window),
``completed_ios``, ``bad_lines`` (malformed lines skipped with ``skip_bad_lines``) and ``skipped``
(reason -> count: non-IO lines of the format, records outside the window or the volumes), and
``replay`` describes what was replayed (volume -> device, issue lag, ...). The measured interval
is the whole replay: from the window start (t = 0) until the last IO is reaped.

``--set`` keys: ``replay.*`` (:class:`~models.ioengines.replay.ReplaySettings`; ``hipri``,
``registerfiles`` and ``fixedbufs`` are accepted without the prefix, as fio options), and the
platform keys of ``stacksim run`` (``queue.*``, ``cpu.*``, ``ssd.*``, ``kernel.*``, ...).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from typing import Any, Literal

from pydantic import Field

from models.ioengines.iostats import IoStats
from models.ioengines.replay import ReplaySettings, TraceReplayer
from models.os.block.queue import QueueConfig
from models.platform import PlatformConfig
from scenarios.config.host import RunConfig, default_platform_name, resolve
from scenarios.config.sets import PLATFORM_PREFIXES, set_value
from scenarios.inputs.traces import (
    FORMATS,
    map_volume_batches,
    map_volumes,
    open_trace,
    parse_window,
    read_until,
    select,
)
from scenarios.inputs.traces.reader import sniff_format
from scenarios.inputs.traces.timed import open_timed
from scenarios.run.assembly import build_host
from scenarios.run.replay_modes import MODES, build_replay, choose_mode, closed_job, mode_report, replay_job
from scenarios.run.result import Result
from scenarios.run.summary import Snapshot, summarize_host_run
from simcore.config import Model, Seed, validate
from simcore.errors import ConfigError
from simcore.progress import RunProgress
from simcore.stats import RecordChunks, record_sink, records_result

__all__ = [
    "ReplayConfig",
    "resolve_replay",
    "run_replay",
    "replay_job",
    "closed_job",
    "choose_mode",
    "split_replay_sets",
    "MODES",
]


#: with an end to the window, the trace is read until this much (trace time) past it, so that
#: slightly out-of-order records still count; the rest of the file is not read
WINDOW_GRACE_NS = 1_000_000_000
_FIO_ALIASES = ("hipri", "registerfiles", "fixedbufs")


class ReplayConfig(Model):
    """Everything one replay needs (fully resolved)."""

    name: str = "replay"
    trace: str = Field(description="trace file (plain or gzip)")
    format: str | None = Field(None, description=f"trace format, one of {', '.join(FORMATS)}; None = sniffed")
    platform: PlatformConfig
    replay: ReplaySettings = ReplaySettings()
    speed: float = Field(1.0, gt=0, allow_inf_nan=False, description="time scale: 2.0 replays twice as fast")
    window_start_ns: int | None = Field(
        None, ge=0, le=2**53, description="window start in trace time (from the first record), ns"
    )
    window_end_ns: int | None = Field(None, ge=0, le=2**53, description="window end in trace time, ns (exclusive)")
    volumes: tuple[str, ...] | None = Field(None, description="trace volumes to keep (None = all)")
    skip_bad_lines: bool = Field(False, description="count and skip malformed lines instead of failing")
    blk_action: str = Field("Q", description="blkparse: replay Q (issue) or D (dispatch) events")
    mode: Literal["open", "closed", "auto"] = Field(
        "open",
        description=(
            "open: IOs issued at their recorded times; closed: each stream of the trace a synchronous thread "
            "(next IO when the previous one returned, plus the recorded think time); auto: per stream, closed "
            "when it never had two IOs in flight, else open (scenarios.run.replay_modes)"
        ),
    )
    seed: Seed = 1

    @property
    def queue(self) -> QueueConfig:
        """The block queue's settings (``platform.queue``: stored once)."""
        return self.platform.queue


def _window_ns(window) -> tuple[int | None, int | None]:
    if window is None:
        return None, None
    if isinstance(window, str):
        window = parse_window(window)
    try:
        start, end = window
    except (TypeError, ValueError):
        raise ConfigError(f"window must be 'START:END' or a (start_s, end_s) pair, got {window!r}") from None
    return (None if start is None else int(round(start * 1e9)), None if end is None else int(round(end * 1e9)))


def split_replay_sets(sets: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A replay's ``--set`` keys split into (replay settings, platform ``--set`` keys); a fio option
    or an unknown ``replay.*`` key is a ConfigError."""
    replay: dict[str, Any] = {}
    platform: dict[str, Any] = {}
    for key, raw in sets.items():
        value = set_value(raw)
        if key.startswith("replay."):
            name = key.split(".", 1)[1]
            if name not in ReplaySettings.model_fields:
                raise ConfigError(
                    f"--set {key}: unknown replay setting (known: "
                    f"{', '.join('replay.' + k for k in ReplaySettings.model_fields)})"
                )
            replay[name] = value
        elif key in _FIO_ALIASES:
            replay[key] = value
        elif "." not in key and key not in PLATFORM_PREFIXES:
            raise ConfigError(
                f"--set {key}: a replay has no fio job (the trace gives the IOs); use "
                f"replay.* keys ({', '.join(ReplaySettings.model_fields)}) or platform keys"
            )
        else:
            platform[key] = raw
    return replay, platform


def resolve_replay(
    trace: str,
    fmt: str | None = None,
    *,
    platform: str | None = None,
    speed: float = 1.0,
    window=None,
    sets: dict[str, Any] | None = None,
    seed: int | None = None,
    skip_bad_lines: bool = False,
    volumes: Iterable[str] | None = None,
    blk_action: str = "Q",
    mode: str = "open",
) -> ReplayConfig:
    """Build a :class:`ReplayConfig` (``platform`` None: :func:`default_platform_name`, the platform
    ``stacksim run`` runs on by default); bad input raises ConfigError naming it."""
    if platform is None:
        platform = default_platform_name()
    if fmt is not None and fmt not in FORMATS:
        raise ConfigError(f"unknown trace format {fmt!r}; expected one of {', '.join(FORMATS)}")
    replay_sets, platform_sets = split_replay_sets(dict(sets or {}))
    settings = validate(ReplaySettings, replay_sets, where="replay settings")
    # the platform keys get exactly `stacksim run`'s --set semantics (the default scenario's job is discarded)
    base = resolve(platform=platform, sets=platform_sets)
    start, end = _window_ns(window)
    if isinstance(volumes, str):
        volumes = [v for v in volumes.split(",") if v.strip()]
    vols = tuple(str(v).strip() for v in volumes) if volumes else None
    data = dict(
        trace=str(trace),
        format=fmt,
        platform=base.platform,
        replay=settings,
        speed=speed,
        window_start_ns=start,
        window_end_ns=end,
        volumes=vols,
        skip_bad_lines=skip_bad_lines,
        blk_action=blk_action,
        mode=mode,
        seed=1 if seed is None else seed,
    )
    return validate(ReplayConfig, data, where="replay")


def _add_replay_report(
    result: dict, cfg: ReplayConfig, reader, replayer, drops: dict[str, int], device_of: dict[str, int]
) -> None:
    """Add what was replayed to ``result``: the trace's IO counts and skipped records (the reader's and
    ``drops``, the selection's) to its summary, and its ``replay`` section (the trace, window in s,
    volume -> SSD map ``device_of``, mode, submitter threads, and the open part's issue lag in us or
    the closed part's think times)."""
    s = result["summary"]
    skipped = dict(reader.skipped)
    for reason, n in drops.items():
        skipped[reason] = skipped.get(reason, 0) + n
    s["trace_ios"] = replayer.trace_ios
    s["completed_ios"] = replayer.completed
    s["bad_lines"] = reader.bad_lines
    s["skipped"] = skipped
    how = mode_report(replayer, cfg.replay, cfg.queue)
    if reader.out_of_order and how["mode"] == "open":
        result.setdefault("warnings", []).append(
            f"{reader.out_of_order} of the trace's {reader.records} records are earlier than the record before"
            f" them (up to {reader.max_backstep_ns / 1e6:g} ms back): the replayer issues a record that is"
            " already due at once, so these arrive together; sort the trace by time if that is not the"
            " order it was recorded in"
        )
    result["replay"] = {
        "trace": cfg.trace,
        "format": reader.format,
        "lines_read": reader.lines_read,
        "records_read": reader.records,
        "out_of_order": reader.out_of_order,
        "speed": cfg.speed,
        "window_s": [
            None if cfg.window_start_ns is None else cfg.window_start_ns / 1e9,
            None if cfg.window_end_ns is None else cfg.window_end_ns / 1e9,
        ],
        "volumes": {v: f"ssd{d}" for v, d in device_of.items()},
        "mode": how["mode"],
        "threads": how["threads"],
        "completion": how["completion"],
        "last_due_s": replayer.last_due / 1e9,
    }
    if how["think"] is not None:
        result["replay"]["think"] = how["think"]
    if how["open_part"] is not None:
        lag = how["open_part"].fold_lag()
        result["replay"]["issue_lag_us"] = {
            "mean": lag.mean / 1e3,
            "p99": (lag.percentiles([99]) or [0.0])[0] / 1e3,
            "max": max(lag.max, 0.0) / 1e3,
        }


def _closed_records(reader, cfg: ReplayConfig, n_devices: int, device_of: dict[str, int], drops: dict[str, int]):
    """The timed trace's IOs as :data:`~models.ioengines.replay_closed.ClosedRecord` tuples: in the
    window (rebased to its start), of the volumes kept, times (arrival and completion) divided by the
    speed, each volume on its device as :func:`map_volumes` maps it."""
    start, end = cfg.window_start_ns, cfg.window_end_ns
    base = start or 0
    vols = set(cfg.volumes) if cfg.volumes else None
    for t in reader:
        ts = t.io.t_ns
        why = (
            "before window"
            if start is not None and ts < start
            else "after window"
            if end is not None and ts >= end
            else "volume"
            if vols is not None and t.io.volume not in vols
            else None
        )
        if why is not None:
            drops[why] = drops.get(why, 0) + 1
            if why == "after window" and ts >= end + WINDOW_GRACE_NS:
                return
            continue
        dev = device_of.get(t.io.volume)
        if dev is None:
            dev = device_of[t.io.volume] = len(device_of) % n_devices
        new_t = round((ts - base) / cfg.speed)
        yield t.io.at(new_t), dev, t.stream, new_t + t.lat_ns / cfg.speed, t.cpu, t


def _replayer(cfg: ReplayConfig, host, drops: dict[str, int], device_of: dict[str, int]):
    """``(reader, replayer, job, why)`` of ``cfg``'s mode: open, or closed (or mixed) on a timed reading
    of the trace (a format that records completions: blkparse with C events, MSR); auto decides by the
    trace's overlap per stream (:func:`choose_mode`; a format without completions: open)."""
    why = f"--replay {cfg.mode}"
    if cfg.mode != "open":
        fmt = cfg.format or sniff_format(cfg.trace)
        if fmt in ("blkparse", "msr"):
            timed = open_timed(cfg.trace, fmt, skip_bad_lines=cfg.skip_bad_lines)
            mode, why, closed = choose_mode(timed, cfg.mode)
            if mode != "open":
                recs = _closed_records(timed, cfg, len(host.devices), device_of, drops)
                replayer, job = build_replay(host, cfg.replay, recs, mode, closed, reaped_ref=fmt == "blkparse")
                return timed, replayer, job, why
        elif cfg.mode == "closed":
            raise ConfigError(
                f"--replay closed: {fmt} traces record no completions, so no think times; closed replay "
                "reads blkparse (Q/D/C), MSR (response times) or, with validate --trace, fio latency logs"
            )
        else:
            why = f"--replay auto chose open: {fmt} traces record no completions (no overlap to judge)"
    reader = open_trace(cfg.trace, cfg.format, skip_bad_lines=cfg.skip_bad_lines, blk_action=cfg.blk_action)
    end = cfg.window_end_ns
    ndev = len(host.devices)
    records: Iterator[Any]
    batched = False
    if cfg.window_start_ns is not None or end is not None or cfg.volumes or cfg.speed != 1:
        selected = select(
            read_until(reader, None if end is None else end + WINDOW_GRACE_NS),
            window_ns=(cfg.window_start_ns, end),
            volumes=set(cfg.volumes) if cfg.volumes else None,
            speed=cfg.speed,
            counts=drops,
        )
        records = map_volumes(selected, ndev, device_of)
    else:  # the whole trace as it is: read a block of lines at a time, no Python step per record
        records, batched = map_volume_batches(reader.batches(), ndev, device_of), True
    job = replay_job(cfg.replay)
    return reader, TraceReplayer(host, job, records, cfg.replay, batched=batched), job, why


def run_replay(
    cfg: ReplayConfig, progress: bool | None = False, records: bool | RecordChunks = False, keep_model: bool = False
) -> Result:
    """Replay ``cfg`` (use :func:`scenarios.run.simulate.simulate`); ``progress``, ``records`` and
    ``keep_model`` as there (the progress line knows the end only with a window end). The summary
    is ``stacksim run``'s (:mod:`scenarios.run.summary`), measured from the start of the trace."""
    wall0 = time.perf_counter()
    sink, want = record_sink(records), records
    drops: dict[str, int] = {}
    host = build_host(cfg.platform, cfg.queue, cfg.seed, keep_requests=keep_model)
    device_of: dict[str, int] = {}  # volume -> device, filled as the trace is read
    reader, replayer, job, why = _replayer(cfg, host, drops, device_of)
    run_cfg = RunConfig(name=cfg.name, platform=cfg.platform, jobs=(job,), seed=cfg.seed)
    snap = Snapshot(host, 0.0)
    stats = IoStats(host, run_cfg.jobs, 0.0, records=sink)
    replayer.start()
    if replayer.exhausted and replayer.trace_ios == 0:
        raise ConfigError(
            f"{cfg.trace}: no read/write IO in the window ({reader.describe()}; dropped: {drops or 'none'})"
        )
    host.start()
    end = cfg.window_end_ns
    end_ns = (end - (cfg.window_start_ns or 0)) / cfg.speed if end is not None else None
    with RunProgress(end_ns=end_ns, ios=lambda: replayer.completed, enabled=progress, label="replaying").attached(
        host.engine
    ):
        host.engine.run(replayer.done_event)
    # the reaped time is computed as clock + cycles / GHz: it may exceed the engine time by rounding
    t_end = max(host.engine.now, stats.finish().t_complete_max)
    host.pkg.settle(t_end)
    result = summarize_host_run(run_cfg, host, snap, stats, t_end, time.perf_counter() - wall0)
    _add_replay_report(result, cfg, reader, replayer, drops, device_of)
    result["replay"]["mode_reason"] = why
    return Result(result, records=records_result(want, sink), model=host if keep_model else None)
