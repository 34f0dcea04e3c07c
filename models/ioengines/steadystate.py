"""fio's steady-state detection (``steadystate``/``ss``, ``ss_dur``, ``ss_ramp``, ``ss_interval``;
fio's steadystate.c).

After ``ss_ramp``, every ``ss_interval`` a measurement is taken of the threads watched (one fio
thread, or a whole job with ``group_reporting``): IOPS, bandwidth (bytes/s) or mean completion
latency (ns) over the interval. The last ``ss_dur / ss_interval`` measurements form the rolling
window; once it is full, each new measurement re-assesses it:

- ``iops``, ``bw``, ``lat``: steady when every measurement lies within the limit of the window's
  mean (the maximum deviation);
- ``iops_slope``, ``bw_slope``, ``lat_slope``: steady when the least-squares slope of the
  measurements (per measurement) is within the limit.

A limit with ``%`` is that percentage of the window's mean. Steady state ends the watched threads
(their runtime ends now), as fio stops the job; ``attained`` says whether it happened.
"""

from __future__ import annotations

from collections import deque

from models.os.sched.task import DEAD

CRITERIA = ("iops", "iops_slope", "bw", "bw_slope", "lat", "lat_slope")


class SteadyState:
    """One steady-state check over ``threads`` (fio engine threads with ``done_ios``,
    ``done_bytes``, ``done_lat_ns`` counters and an ``end_ns``)."""

    def __init__(
        self,
        engine,
        threads: list,
        criterion: str,
        limit: float,
        percent: bool,
        dur_ns: float,
        ramp_ns: float,
        interval_ns: float,
        start_ns: float,
    ):
        self.engine = engine
        self.threads = threads
        self.criterion = criterion
        self.limit = limit
        self.percent = percent
        self.interval_ns = interval_ns
        self.n = max(1, int(round(dur_ns / interval_ns)))
        self.window: deque = deque(maxlen=self.n)
        self.attained = False
        self.value = None  # the last assessed deviation or slope
        self._last = (0, 0, 0.0)
        self.engine.call_at(start_ns + ramp_ns, self._begin)

    def _totals(self) -> tuple[int, int, float]:
        return (
            sum(t.done_ios for t in self.threads),
            sum(t.done_bytes for t in self.threads),
            sum(t.done_lat_ns for t in self.threads),
        )

    def _begin(self) -> None:
        self._last = self._totals()
        self.engine.call_in(self.interval_ns, self._tick)

    def _tick(self) -> None:
        now = self.engine.now
        if all(now >= t.end_ns or t.task.state == DEAD for t in self.threads):
            return
        ios, nbytes, lat = self._totals()
        d_ios, d_bytes, d_lat = ios - self._last[0], nbytes - self._last[1], lat - self._last[2]
        self._last = (ios, nbytes, lat)
        secs = self.interval_ns * 1e-9
        kind = self.criterion.split("_")[0]
        x = d_ios / secs if kind == "iops" else d_bytes / secs if kind == "bw" else (d_lat / d_ios if d_ios else 0.0)
        self.window.append(x)
        if len(self.window) == self.n and self._steady():
            self.attained = True
            for t in self.threads:
                t.end_ns = min(t.end_ns, now)
            return
        self.engine.call_in(self.interval_ns, self._tick)

    def _steady(self) -> bool:
        w = list(self.window)
        mean = sum(w) / len(w)
        limit = self.limit * abs(mean) / 100.0 if self.percent else self.limit
        if self.criterion.endswith("_slope"):
            n = len(w)
            if n < 2:
                return False
            sx, sy = n * (n - 1) / 2.0, sum(w)
            sxx = sum(i * i for i in range(n))
            sxy = sum(i * y for i, y in enumerate(w))
            self.value = (n * sxy - sx * sy) / (n * sxx - sx * sx)
        else:
            self.value = max(abs(y - mean) for y in w)
        return abs(self.value) <= limit

    def report(self, text: str, dur_s: float, ramp_s: float) -> dict:
        """fio's JSON ``steadystate`` object (the fields stacksim knows)."""
        key = "slope" if self.criterion.endswith("_slope") else "max_deviation"
        return {
            "ss": text,
            "duration": dur_s,
            "steadystate_ramp_time": ramp_s,
            "attained": int(self.attained),
            "criterion": f"{self.limit:g}{'%' if self.percent else ''}",
            key: self.value,
            "data": {"window": list(self.window)},
        }
