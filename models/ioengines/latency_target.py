"""fio's latency-target depth search (``latency_target``, ``latency_window``,
``latency_percentile``, ``latency_run``; fio's io_u.c: lat_target_init / lat_target_check /
lat_target_success / lat_target_failed).

The job starts at queue depth 1 (bounds low = 1, high = ``iodepth``). After each window of
``latency_window`` ns, the window succeeds when at least ``latency_percentile`` % of the IOs it
completed took at most ``latency_target`` ns:

- success: low = depth (minus one when depth + 1 == high: a stable depth); the depth doubles while
  high is still ``iodepth`` (no failure yet), else bisects towards high; capped at ``iodepth``;
- failure: high = depth; the depth bisects towards low (at the floor it stays, and without
  ``latency_run`` that ends the search as an unchanged success does).

Without ``latency_run``, a success that leaves the depth unchanged starts a final window at that
depth, and the job ends after it (fio also resets its statistics there; stacksim's cover the
whole search). With ``latency_run`` the search never stops.
"""

from __future__ import annotations

from models.ioengines.job import FioJob


class LatencyTarget:
    """The search state of one thread. ``completed(lat_ns)`` per IO; ``check(now)`` after reaping
    returns the depth to use (and sets ``done`` when the job should end)."""

    __slots__ = (
        "target_ns",
        "window_ns",
        "percentile",
        "run",
        "iodepth",
        "qd",
        "low",
        "high",
        "window_start",
        "ios",
        "failed",
        "end_run",
        "done",
        "windows",
    )

    @classmethod
    def for_job(cls, job: FioJob, now: float) -> LatencyTarget:
        """The search of a thread of ``job`` (``latency_target`` set), starting at ``now``."""
        return cls(
            job.latency_target_ns, job.latency_window_ns, job.latency_percentile, job.latency_run, job.iodepth, now
        )

    def __init__(self, target_ns: float, window_ns: float, percentile: float, run: bool, iodepth: int, now: float):
        self.target_ns = target_ns
        self.window_ns = window_ns
        self.percentile = percentile
        self.run = run
        self.iodepth = iodepth
        self.qd, self.low, self.high = 1, 1, iodepth
        self.end_run = False
        self.done = False
        self.windows = 0
        self._new_window(now)

    def _new_window(self, now: float) -> None:
        self.window_start = now
        self.ios = 0
        self.failed = 0

    def completed(self, lat_ns: float) -> None:
        self.ios += 1
        if lat_ns > self.target_ns:
            self.failed += 1

    def check(self, now: float) -> int:
        if now - self.window_start < self.window_ns or self.ios == 0:
            return self.qd
        self.windows += 1
        ok = 100.0 * (self.ios - self.failed) / self.ios >= self.percentile
        self._success(now) if ok else self._failure(now)
        return self.qd

    def _success(self, now: float) -> None:
        qd = self.qd
        self.low = qd
        if qd + 1 == self.high:
            self.low -= 1  # the depth will not grow after this: a stable depth
        self.qd = (qd + self.high) // 2 if self.high != self.iodepth else qd * 2
        if self.qd > self.iodepth:
            self.qd = self.iodepth
        if not self.run and self.qd == qd:
            if self.end_run:
                self.done = True
            else:
                self.end_run = True  # a final window at this depth
        self._new_window(now)

    def _failure(self, now: float) -> None:
        qd = self.qd
        self.high = qd
        self.qd = max(1, (qd + self.low) // 2)
        if not self.run and self.qd == qd:  # nowhere lower to go: a final window, then the end
            if self.end_run:
                self.done = True
            else:
                self.end_run = True
        self._new_window(now)
