"""fio's rate control (``rate``, ``rate_iops``, ``rate_process``), per direction, as fio 3.41 does it
(io_u.c rate_ddir, ioengines.c td_io_queue, backend usec_for_io; HOWTO ``rate_process``):

* each direction with a cap has a bandwidth in bytes/s (``rate``, or ``rate_iops`` x the
  direction's smallest block size, as fio converts it); a direction without a cap is never held;
* after each issue the direction's next issue time moves on: ``linear`` -- by the IO's bytes over
  the bandwidth (cumulative from the first issue, so a thread that fell behind catches up);
  ``poisson`` -- by an exponential gap of mean 10**6 / IOPS us, in whole microseconds as fio
  computes it (``(int64_t)(1000000 / iops) * -logf(u)``: above 10**6 IOPS the mean is 0 and fio
  stops pacing), also cumulative;
* before an IO (fio's rate_ddir): a direction that is due goes; in a mixed job whose other
  direction is due, that one goes instead; when both are ahead the one due first goes after a
  sleep until its time (the engine's thread sleeps on an hrtimer; fio quiesces in-flight IOs first).
"""

from __future__ import annotations

import math

from models.ioengines.job import FioJob
from simcore.rng import BatchedDraws

OPS = ("read", "write")


EIO = 5
"""The errno fio gives a job that missed its minimum rate (td_verror(td, EIO, "check_min_rate"))."""


class MinRate:
    """fio's ``rate_min`` / ``rate_iops_min`` (backend.c check_min_rate): after a 2 s settle period
    from the thread's start, every ``rate_cycle`` ms the bytes (or IOs) completed in each direction
    since the last check are compared with the minimum; a miss ends the job with EIO."""

    SETTLE_NS = 2e9

    def __init__(self, job: FioJob):
        self.min_bps = {"read": job.rate_min_read_bps, "write": job.rate_min_write_bps}
        self.min_iops = {"read": job.rate_iops_min_read, "write": job.rate_iops_min_write}
        self.active = any(self.min_bps.values()) or any(self.min_iops.values())
        self.cycle_ns = job.rate_cycle_ms * 1e6
        self.done = {op: [0, 0] for op in OPS}  # completed bytes, IOs
        self.last: dict = {op: None for op in OPS}  # (time, bytes, IOs) of the last check
        self.start_ns = 0.0

    def completed(self, op: str, nbytes: int, now: float) -> str | None:
        """Count a completion; the miss message when a check fails (then the job ends)."""
        d = self.done.get(op)
        if d is None:  # trims: fio's minimum rates here are per read and write
            return None
        d[0] += nbytes
        d[1] += 1
        if now - self.start_ns < self.SETTLE_NS:
            return None
        for o in OPS:
            if self.done[o][0]:
                msg = self._check(o, now)
                if msg:
                    return msg
        return None

    def _check(self, op: str, now: float) -> str | None:
        nbytes, ios = self.done[op]
        last = self.last[op]
        if last is not None and (last[1] or last[2]):
            spent_ms = int((now - last[0]) / 1e6)
            if spent_ms < self.cycle_ns / 1e6 or spent_ms == 0:
                return None
            if self.min_bps[op]:
                rate = (nbytes - last[1]) * 1000 // spent_ms
                if rate < self.min_bps[op]:
                    return f"rate_min={self.min_bps[op]}B/s not met, got {rate}B/s"
            elif self.min_iops[op]:
                rate = (ios - last[2]) * 1000 // spent_ms
                if rate < self.min_iops[op]:
                    return f"rate_iops_min={self.min_iops[op]} not met, got {rate} IOPS"
        self.last[op] = (now, nbytes, ios)
        return None


def min_bs(job: FioJob, op: str) -> int:
    """The smallest block size of a direction (bs, bssplit or bsrange): fio's ``min_bs[ddir]``."""
    if op == "read":
        bs, split, rng = job.bs_read_bytes, job.bssplit_read, job.bsrange_read
    else:
        bs, split, rng = job.bs_write_bytes, job.bssplit_write, job.bsrange_write
    if split:
        return min(s for s, _p in split)
    return rng[0] if rng else bs


class RatePacer:
    """The next issue time of each direction of one fio thread."""

    def __init__(self, job: FioJob, gen):
        self.bps: dict[str, float] = {}
        self.iops: dict[str, float] = {}
        self.bs_min = {op: min_bs(job, op) for op in OPS}
        for op in OPS:
            rate = job.rate_read_bps if op == "read" else job.rate_write_bps
            iops = job.rate_iops_read if op == "read" else job.rate_iops_write
            if rate:
                self.bps[op] = float(rate)
                self.iops[op] = rate // self.bs_min[op]
            elif iops:
                self.iops[op] = float(iops)
        self.gap_us = {op: 1_000_000 // int(i) if i >= 1 else 0 for op, i in self.iops.items()}
        self.poisson = job.rate_process == "poisson"
        self._u = BatchedDraws(gen, lambda g, n: 1.0 - g.random(n), batch=1024).next if self.poisson else None
        self.mixed = (
            {op: (job.rwmixread if op == "read" else 100 - job.rwmixread) > 0 for op in OPS}
            if job.rw in ("rw", "readwrite", "randrw")
            else {op: False for op in OPS}
        )
        self.next_ns = {op: 0.0 for op in OPS}
        self.started = False

    @property
    def active(self) -> bool:
        return bool(self.iops or self.bps)

    def start(self, now: float) -> None:
        """The thread's first issue: every capped direction is due now (fio's epoch)."""
        self.started = True
        for op in self.iops:
            self.next_ns[op] = now

    def choose(self, op: str, now: float) -> tuple[str, float]:
        """fio's rate_ddir: the direction to issue and when it is due (``<= now``: go now)."""
        if not self.started:
            self.start(now)
        nxt = self.next_ns
        if op not in self.iops or nxt[op] <= now:
            return op, now
        other = "write" if op == "read" else "read"
        if self.mixed[other]:
            if other not in self.iops or nxt[other] <= now:
                return other, now
            if nxt[other] < nxt[op]:
                return other, nxt[other]
        return op, nxt[op]

    def issued(self, op: str, nbytes: int) -> None:
        """An IO of ``nbytes`` was issued in direction ``op``: move its next issue time."""
        if op not in self.iops:
            return
        if self.poisson:
            self.next_ns[op] += 1000.0 * math.floor(self.gap_us[op] * -math.log(self._u()))
        elif op in self.bps:
            self.next_ns[op] += nbytes * 1e9 / self.bps[op]
        else:  # rate_iops: bytes over iops x min_bs; exact for a fixed block size
            gap = 1e9 / self.iops[op]
            self.next_ns[op] += gap if nbytes == self.bs_min[op] else gap * (nbytes / self.bs_min[op])
