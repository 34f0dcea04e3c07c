"""Client workloads of the storage server: open-loop request streams with known burst times.

- :class:`StableWorkload`: a constant offered rate (Poisson or evenly spaced arrivals) of 4 KiB
  random reads spread uniformly over the SSDs (SANDMAN's stable sweep: 10K to 10240K IOPS,
  doubling, :data:`STABLE_RATES`).
- :class:`BurstWorkload`: one SSD at ``low_fraction`` of its maximum IOPS for ``low_s``, then at
  ``high_fraction`` for ``high_s``, repeating ``cycles`` times (SANDMAN: 5% for 10 s, 100% for
  1 s). ``time_scale`` multiplies every duration (quick runs). :meth:`BurstWorkload.windows`
  gives the true burst intervals, so burst-detection accuracy can be reported.

Requests enter through ``connections`` client connections (NVMe-oF queue pairs), each request on
a connection drawn uniformly at random (so every connection sees a Poisson stream when the total
is Poisson). With ``client: closed`` (stable and burst) the client is fio over NVMe-oF instead
(:mod:`models.server.client`): each connection keeps ``iodepth`` commands outstanding and sends the
next one when a response arrives, the phases' rates being caps, so a slower target lowers the
throughput instead of building a queue. Times are those at which a request reaches the target's
network receive queue; the client sent it ``network_rtt_us / 2`` earlier and receives the response
``network_rtt_us / 2`` after the target posts it.

- :class:`TraceWorkload`: trace replay (``server-trace``). :func:`trace_arrivals` streams a block
  trace through the readers of :mod:`scenarios.inputs.traces` (``open_trace`` -> ``select`` ->
  ``map_volumes``) and turns each record into an arrival (time, connection, SSD, op, bytes):
  open loop at the trace's timestamps (/ ``trace_speed``), each request with its own direction
  and size (rounded up to 512 B), the trace's volumes mapped onto the server's SSDs.

Data movement on the network (every kind): ``network_rtt_us`` is the round trip of a 4 KiB
request; a read's response carries its data, so bytes beyond 4 KiB add ``nbytes /
network_gbps`` before the client has it; a write larger than the target's in-capsule data size
(``server.in_capsule_bytes``, SPDK's 4 KiB) is pulled by the target with an RDMA READ after the
command is parsed: one more round trip plus its transfer time before the NVMe submit.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Iterator, Literal

import numpy as np
from pydantic import Field, field_validator, model_validator

from scenarios.inputs.traces import FORMATS, map_volumes, open_trace, parse_window, select
from simcore.config import Model
from simcore.errors import ConfigError
from simcore.spool import spooled

#: SANDMAN's stable sweep: 10K to 10240K IOPS, doubling each step.
STABLE_RATES = tuple(10_000 * 2**k for k in range(11))

#: Samsung PM1743 4 KiB random-read maximum (sandman_polling_server.yaml "about 2,500K").
PM1743_MAX_IOPS = 2_500_000.0


class _Common(Model):
    arrivals: Literal["poisson", "constant"] = Field("poisson", description="inter-arrival law of the open-loop client")
    connections: int = Field(
        96,
        ge=1,
        le=65535,
        description="client connections (NVMe-oF IO queues, at most 65535: the"
        " queue ID is 16 bits); assigned to target threads round-robin",
    )
    bs: int = Field(4096, ge=512, description="request size, bytes")
    op: Literal["read", "write"] = Field("read", description="request direction")
    network_rtt_us: float = Field(
        5.0, ge=0, description="client-target network round trip of a 4 KiB request (RDMA), us"
    )
    network_gbps: float = Field(
        200.0,
        gt=0,
        description="network link rate for request data beyond 4 KiB (reads: the"
        " response; writes over server.in_capsule_bytes: the target's RDMA READ), Gb/s",
    )


class _Client(Model):
    """Open-loop arrivals, or a closed-loop fio client (models.server.client)."""

    client: Literal["open", "closed"] = Field(
        "open",
        description="open: arrivals at the offered rate whatever the"
        " target does; closed: fio over NVMe-oF, each connection keeps iodepth"
        " commands outstanding and the offered rate is a cap (fio rate_iops)",
    )
    iodepth: int = Field(
        4,
        ge=1,
        le=65535,
        description="closed client: commands outstanding per connection (fio iodepth;"
        " an assumption, the studies do not state theirs)",
    )
    think_time_us: float = Field(
        0.0,
        ge=0,
        description="closed client: pause between a response and the next command"
        " of its connection (fio thinktime), us",
    )


class StableWorkload(_Common, _Client):
    """Constant offered load over the SSDs."""

    kind: Literal["stable"] = "stable"
    rate_iops: float = Field(1_280_000.0, gt=0, description="offered client rate, IOPS")
    duration_s: float = Field(0.2, gt=0, description="simulated time, s (warm-up included)")
    warmup_s: float = Field(0.02, ge=0, description="excluded from statistics, s")
    ssds: tuple[int, ...] | None = Field(None, description="SSD indices the requests go to (None: all)")

    @model_validator(mode="after")
    def _check(self):
        if self.warmup_s >= self.duration_s:
            raise ValueError("warmup_s must be shorter than duration_s")
        return self

    def phases(self) -> list[tuple[float, float, float]]:
        """(start ns, end ns, rate IOPS) pieces of the offered rate."""
        return [(0.0, self.duration_s * 1e9, self.rate_iops)]

    def windows(self) -> list[tuple[float, float]]:
        return []

    @property
    def end_ns(self) -> float:
        return self.duration_s * 1e9

    @property
    def warmup_ns(self) -> float:
        return self.warmup_s * 1e9

    def target_ssds(self, count: int) -> tuple[int, ...]:
        return tuple(range(count)) if self.ssds is None else self.ssds


class BurstWorkload(_Common, _Client):
    """One SSD alternating between a low and a burst rate."""

    kind: Literal["burst"] = "burst"
    ssd: int = Field(0, ge=0, description="the SSD receiving the requests")
    ssds: tuple[int, ...] | None = Field(
        None, description="spread the pattern over these SSDs instead (None: just `ssd`)"
    )
    ssd_max_iops: float = Field(PM1743_MAX_IOPS, gt=0, description="the SSD's maximum 4 KiB random-read IOPS")
    low_fraction: float = Field(0.05, gt=0, le=1, description="rate between bursts, fraction of ssd_max_iops")
    high_fraction: float = Field(1.0, gt=0, le=1, description="rate during a burst, fraction of ssd_max_iops")
    low_s: float = Field(10.0, gt=0, description="duration of the quiet phase, s (before time_scale)")
    high_s: float = Field(1.0, gt=0, description="duration of a burst, s (before time_scale)")
    cycles: int = Field(1, ge=1, description="quiet + burst cycles")
    time_scale: float = Field(1.0, gt=0, description="multiplies every duration (quick runs)")
    warmup_s: float = Field(0.0, ge=0, description="excluded from statistics, s (after time_scale)")

    @property
    def cycle_ns(self) -> float:
        return (self.low_s + self.high_s) * self.time_scale * 1e9

    @property
    def end_ns(self) -> float:
        return self.cycles * self.cycle_ns

    @property
    def warmup_ns(self) -> float:
        return self.warmup_s * 1e9

    def phases(self) -> list[tuple[float, float, float]]:
        out = []
        lo = self.low_s * self.time_scale * 1e9
        for c in range(self.cycles):
            t0 = c * self.cycle_ns
            out.append((t0, t0 + lo, self.low_fraction * self.ssd_max_iops))
            out.append((t0 + lo, t0 + self.cycle_ns, self.high_fraction * self.ssd_max_iops))
        return out

    def windows(self) -> list[tuple[float, float]]:
        """The true burst intervals (ns)."""
        return [(a, b) for a, b, _ in self.phases()[1::2]]

    def target_ssds(self, count: int) -> tuple[int, ...]:
        return (self.ssd,) if self.ssds is None else self.ssds


def _parse_window(text: str) -> tuple[float | None, float | None]:
    try:
        return parse_window(text)
    except ConfigError as err:
        raise ValueError(str(err).replace(f"--window {text!r}: ", "")) from None


class TraceWorkload(_Common):
    """Replay of a block trace (open loop at the trace's timestamps; see :class:`TraceFeed`).

    The run lasts until every trace IO of the window has completed (``warmup_s`` after the first
    arrival is excluded from the statistics). ``bs``, ``op`` and ``arrivals`` are not used: every
    request has the trace's direction and size.
    """

    kind: Literal["trace"] = "trace"
    trace: str | None = Field(None, description="block trace file, plain or gzip (scenarios/inputs/traces formats)")
    trace_format: str | None = Field(
        None, description="alibaba|tencent|msr|blkparse|iolog (None: sniffed from the file)"
    )
    trace_speed: float = Field(1.0, gt=0, allow_inf_nan=False, description="time scale: 2.0 replays twice as fast")
    trace_window: str | None = Field(
        None,
        description="'START:END' in seconds of trace time from its first record"
        " (either side optional; None: the whole trace)",
    )
    trace_volumes: tuple[str, ...] | None = Field(
        None, description="trace volumes to replay, e.g. hm_0,hm_1 (None: all)"
    )
    trace_skip_bad_lines: bool = Field(
        False, description="count and skip malformed lines instead of failing with file:line"
    )
    trace_blk_action: Literal["Q", "D"] = Field(
        "Q", description="blkparse traces: replay Q (queued) or D (dispatched) events"
    )
    ssds: tuple[int, ...] | None = Field(
        None,
        description="SSDs the trace's volumes are mapped onto, round-robin in order of first appearance (None: all)",
    )
    warmup_s: float = Field(0.0, ge=0, description="excluded from statistics, s of replay time")

    @field_validator("trace")
    @classmethod
    def _trace_file(cls, v: str | None) -> str | None:
        if v is None:
            raise ValueError("trace replay needs the trace file: --set workload.trace=PATH")
        v = spooled(v)  # '-' or a pipe: read once into a temporary file (the feed reads it twice)
        if not Path(v).is_file():
            raise ValueError(f"trace file not found: {v}")
        return v

    @field_validator("trace_format")
    @classmethod
    def _format(cls, v: str | None) -> str | None:
        if v is not None and v not in FORMATS:
            raise ValueError(f"unknown trace format {v!r}: expected one of {', '.join(FORMATS)} (or unset: sniffed)")
        return v

    @field_validator("trace_volumes", mode="before")
    @classmethod
    def _volumes(cls, v: Any) -> Any:
        if isinstance(v, (int, float)) and not isinstance(v, bool):  # YAML: trace_volumes: 12
            v = str(v)
        if isinstance(v, str):  # --set workload.trace_volumes=hm_0,hm_1
            v = tuple(x.strip() for x in v.split(",") if x.strip())
        if isinstance(v, (list, tuple)):
            v = tuple(str(x) for x in v)  # volume names that look like numbers ("12") stay names
        return v

    @field_validator("trace_window", mode="before")
    @classmethod
    def _window_text(cls, v: Any) -> Any:
        if v is None:
            return v
        if not isinstance(v, str):
            raise ValueError(
                f"expected 'START:END' text in seconds, got {v!r} (in YAML quote it: '0:0.5' or '1:30'"
                " unquoted read as numbers)"
            )
        _parse_window(v)
        return v

    @property
    def window_ns(self) -> tuple[int | None, int | None]:
        """The trace window (start, end) in ns of trace time (None: open)."""
        if self.trace_window is None:
            return None, None
        start, end = _parse_window(self.trace_window)
        return (None if start is None else int(round(start * 1e9)), None if end is None else int(round(end * 1e9)))

    @property
    def end_ns(self) -> None:
        """Not known before the trace has been read: the run ends when every IO has completed."""
        return None

    @property
    def warmup_ns(self) -> float:
        return self.warmup_s * 1e9

    def windows(self) -> list[tuple[float, float]]:
        return []

    def target_ssds(self, count: int) -> tuple[int, ...]:
        return tuple(range(count)) if self.ssds is None else self.ssds


Workload = StableWorkload | BurstWorkload | TraceWorkload


def arrival_batches(
    wl: Workload, gen: np.random.Generator, n_ssds: int, batch: int = 8192
) -> Iterator[tuple[list, list, list]]:
    """Batches of (arrival times ns, connection indices, SSD indices), in time order.

    Poisson arrivals restart at each phase boundary (memorylessness makes this exact); constant
    arrivals are evenly spaced within each phase. The batch size does not change the draws'
    order within a phase, so results do not depend on it beyond the phase cut.
    """
    ssds = np.asarray(wl.target_ssds(n_ssds), dtype=np.int64)
    conns = wl.connections
    for start, end, rate in wl.phases():
        gap = 1e9 / rate
        t = start
        while True:
            if wl.arrivals == "poisson":
                times = t + np.cumsum(gen.exponential(gap, batch))
            else:
                times = t + gap * np.arange(1, batch + 1)
            cut = int(np.searchsorted(times, end))
            c = gen.integers(0, conns, batch)
            s = ssds[gen.integers(0, ssds.size, batch)] if ssds.size > 1 else np.full(batch, ssds[0])
            if cut:
                yield times[:cut].tolist(), c[:cut].tolist(), s[:cut].tolist()
            if cut < batch:
                break
            t = float(times[-1])


#: with an end to the window, the trace is read until this much (trace time) past it, so that slightly
#: out-of-order records still count; the rest of the file is not read (as scenarios/run/replay.py does)
WINDOW_GRACE_NS = 1_000_000_000
SECTOR = 512
#: trace records read ahead at a time (the rest of the file is read as the replay reaches it)
TRACE_BATCH = 4096


def _read_until(records: Iterable, limit_ns: int | None) -> Iterator:
    for rec in records:
        if limit_ns is not None and rec.t_ns >= limit_ns:
            return
        yield rec


def trace_arrivals(
    records: Iterable,
    gen: np.random.Generator,
    *,
    connections: int,
    ssds: tuple[int, ...],
    batch: int = 4096,
    feed: "TraceCounters | None" = None,
) -> Iterator[tuple[list, list, list, list, list]]:
    """Map ``(TraceIO, device slot)`` pairs (from :func:`scenarios.inputs.traces.map_volumes`) to batches of
    (arrival times ns, connection indices, SSD indices, ops, bytes), in time order.

    Open loop: a request arrives at its record's time (already rebased and scaled by ``select``);
    a record earlier than its predecessor (an out-of-order trace) arrives with it instead, and is
    counted as late. Slot ``k`` is SSD ``ssds[k]``; each request goes on a connection drawn
    uniformly (one draw per request, in batches); sizes are rounded up to 512 B. Counters go to
    ``feed`` when given. Only ``batch`` records are held at a time.
    """
    if feed is None:
        feed = TraceCounters()
    prev = 0.0
    it = iter(records)
    while True:
        ts: list = []
        ss: list = []
        ops: list = []
        nbs: list = []
        offs: list = []
        for rec, slot in it:
            t = float(rec.t_ns)
            if t < prev:
                feed.late += 1
                if prev - t > feed.max_late_ns:
                    feed.max_late_ns = prev - t
                t = prev
            prev = t
            nb = -(-rec.nbytes // SECTOR) * SECTOR
            ts.append(t)
            ss.append(ssds[slot])
            ops.append(rec.op)
            nbs.append(nb)
            offs.append(rec.offset)
            if rec.op == "read":
                feed.reads += 1
            else:
                feed.writes += 1
            feed.bytes += nb
            if len(ts) == batch:
                break
        if not ts:
            return
        feed.ios += len(ts)
        yield ts, gen.integers(0, connections, len(ts)).tolist(), ss, ops, nbs, offs
        if len(ts) < batch:
            return


class TraceCounters:
    """What a trace stream delivered: IOs, reads, writes, bytes (rounded), late (out-of-order) arrivals,
    records dropped by the selection (reason -> count) and the volume -> SSD mapping."""

    def __init__(self) -> None:
        self.ios = self.reads = self.writes = self.bytes = self.late = 0
        self.max_late_ns = 0.0
        self.drops: dict[str, int] = {}
        self.device_of: dict[str, int] = {}


class TraceFeed(TraceCounters):
    """The streamed arrivals of a :class:`TraceWorkload` on ``n_ssds`` SSDs, and what was read.

    ``batches`` yields what :func:`trace_arrivals` yields; the counters (``ios``, ``reads``,
    ``writes``, ``bytes``, ``late``, ``drops``, ``device_of``, the reader's ``bad_lines`` and
    ``skipped``) are valid while and after the stream is consumed. The file is opened here (a
    missing file or an unknown format fails at once); malformed lines raise ConfigError
    ``file:line: ...`` when reached (or are counted, with ``trace_skip_bad_lines``).
    """

    def __init__(self, wl: TraceWorkload, n_ssds: int, gen: np.random.Generator, batch: int | None = None):
        super().__init__()
        self.wl = wl
        self.reader = open_trace(
            wl.trace, wl.trace_format, skip_bad_lines=wl.trace_skip_bad_lines, blk_action=wl.trace_blk_action
        )
        start, end = wl.window_ns
        records = select(
            _read_until(self.reader, None if end is None else end + WINDOW_GRACE_NS),
            window_ns=(start, end),
            volumes=set(wl.trace_volumes) if wl.trace_volumes else None,
            speed=wl.trace_speed,
            counts=self.drops,
        )
        ssds = wl.target_ssds(n_ssds)
        for i in ssds:
            if not 0 <= i < n_ssds:
                raise ConfigError(f"workload.ssds: SSD {i} does not exist (the platform has {n_ssds})")
        device_of = self.device_of

        def mapped():
            for rec, slot in map_volumes(records, len(ssds)):
                if rec.volume not in device_of:
                    device_of[rec.volume] = ssds[slot]
                yield rec, slot

        self.batches = trace_arrivals(
            mapped(),
            gen,
            connections=wl.connections,
            ssds=ssds,
            batch=TRACE_BATCH if batch is None else batch,
            feed=self,
        )

    def skipped(self) -> dict[str, int]:
        """Reason -> count of trace lines not replayed (non-IO lines, outside the window or volumes)."""
        out = dict(self.reader.skipped)
        for reason, n in self.drops.items():
            out[reason] = out.get(reason, 0) + n
        return out

    def describe(self) -> dict:
        """What was replayed (the result's ``replay`` block)."""
        wl = self.wl
        start, end = wl.window_ns
        return {
            "trace": wl.trace,
            "format": self.reader.format,
            "lines_read": self.reader.lines_read,
            "records_read": self.reader.records,
            "out_of_order": self.reader.out_of_order,
            "late_arrivals": self.late,
            "max_late_us": self.max_late_ns / 1e3,
            "speed": wl.trace_speed,
            "window_s": [None if start is None else start / 1e9, None if end is None else end / 1e9],
            "volumes": {v: f"ssd{d}" for v, d in self.device_of.items()},
            "reads": self.reads,
            "writes": self.writes,
            "bytes": self.bytes,
        }
