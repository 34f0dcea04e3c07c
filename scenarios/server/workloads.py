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
is Poisson). Times are those at which a request reaches the target's network receive queue; the
client sent it ``network_rtt_us / 2`` earlier and receives the response ``network_rtt_us / 2``
after the target posts it.

Trace replay (hook): a trace becomes a workload through :func:`trace_arrivals`, which will map
trace records (``scenarios.traces``) onto (time, connection, SSD, op, bytes) tuples; it is not
wired yet (see docs/server.md).
"""

from __future__ import annotations

from typing import Iterator, Literal

import numpy as np
from pydantic import Field, model_validator

from simcore.config import Model

#: SANDMAN's stable sweep: 10K to 10240K IOPS, doubling each step.
STABLE_RATES = tuple(10_000 * 2 ** k for k in range(11))

#: Samsung PM1743 4 KiB random-read maximum (sandman_polling_server.json "about 2,500K").
PM1743_MAX_IOPS = 2_500_000.0


class _Common(Model):
    arrivals: Literal["poisson", "constant"] = Field("poisson", description="inter-arrival law of the open-loop client")
    connections: int = Field(96, ge=1, description="client connections (NVMe-oF IO queues); assigned to target threads round-robin")
    bs: int = Field(4096, ge=512, description="request size, bytes")
    op: Literal["read", "write"] = Field("read", description="request direction")
    network_rtt_us: float = Field(5.0, ge=0, description="client-target network round trip added to every request (RDMA, 200 Gb/s), us")


class StableWorkload(_Common):
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


class BurstWorkload(_Common):
    """One SSD alternating between a low and a burst rate."""

    kind: Literal["burst"] = "burst"
    ssd: int = Field(0, ge=0, description="the SSD receiving the requests")
    ssds: tuple[int, ...] | None = Field(None, description="spread the pattern over these SSDs instead (None: just `ssd`)")
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


Workload = StableWorkload | BurstWorkload


def arrival_batches(wl: Workload, gen: np.random.Generator, n_ssds: int, batch: int = 8192) -> Iterator[tuple[list, list, list]]:
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


def trace_arrivals(records, *, connections: int, time_scale: float = 1.0):
    """Hook for trace replay (issue 7's readers): map trace records to arrival tuples
    ``(t_ns, connection, ssd, op, nbytes)``. Not implemented yet: the server model takes one
    request size and direction per run today (see docs/server.md, "Trace replay")."""
    raise NotImplementedError("trace replay of the server scenarios is not wired yet (docs/server.md)")
