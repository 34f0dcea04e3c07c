"""Event tracing in the Chrome trace-event format (opens in Perfetto and chrome://tracing).

Models call the tracer only behind ``if tracer is not None`` (one attribute test when tracing is
off). The trace is bounded: events are kept only inside ``[t0_ns, t1_ns]`` and at most
``max_events``. Tracks: process "CPUs" with one thread per logical CPU (the running task's segment
as a parent span with one child span per stack layer, polling, hard IRQs, idle spans named by
C-state); process "devices" with one thread per device queue (each command's service); flow arrows
submit -> device -> completion; counter tracks for power. Timestamps are in us (the format's unit).
"""

from __future__ import annotations

import json
from pathlib import Path

from simcore.outfile import write_text

CPU_PID, DEV_PID, POWER_PID = 1, 2, 3


class ChromeTracer:
    def __init__(
        self, t0_ns: float = 0.0, t1_ns: float = float("inf"), max_events: int = 500_000, max_ios: int | None = None
    ):
        self.t0 = t0_ns
        self.t1 = t1_ns
        self.max_events = max_events
        self.max_ios = max_ios
        self.events: list[dict] = []
        self.truncated = False
        self.ios_seen = 0
        self._names: dict[tuple, str] = {}

    # -- bounds ----------------------------------------------------------------------------------
    def wants(self, start_ns: float, end_ns: float) -> bool:
        if end_ns < self.t0 or start_ns > self.t1:
            return False
        if len(self.events) >= self.max_events:
            self.truncated = True
            return False
        return True

    def _ts(self, t_ns: float) -> float:
        return t_ns / 1000.0

    # -- recording -------------------------------------------------------------------------------
    def span(
        self, pid: int, tid: int, name: str, start_ns: float, dur_ns: float, cat: str = "", args: dict | None = None
    ):
        if dur_ns < 0 or not self.wants(start_ns, start_ns + dur_ns):
            return
        ev = {"ph": "X", "pid": pid, "tid": tid, "name": name, "ts": self._ts(start_ns), "dur": dur_ns / 1000.0}
        if cat:
            ev["cat"] = cat
        if args:
            ev["args"] = args
        self.events.append(ev)

    def segment(self, cpu: int, start_ns: float, dur_ns: float, who: str, parts: list[tuple[str, float]]):
        """A CPU segment: parent span (task or idle task) with consecutive child spans per layer."""
        if not self.wants(start_ns, start_ns + dur_ns):
            return
        self.span(CPU_PID, cpu, who, start_ns, dur_ns, "task")
        total = sum(ns for _, ns in parts) or 1.0
        scale = dur_ns / total  # SMT contention stretches every part alike
        t = start_ns
        for layer, ns in parts:
            if ns > 0:
                self.span(CPU_PID, cpu, layer, t, ns * scale, "layer")
                t += ns * scale

    def instant(self, pid: int, tid: int, name: str, t_ns: float, args: dict | None = None):
        """A point event on a track (e.g. a thread migration)."""
        if self.wants(t_ns, t_ns):
            ev = {"ph": "i", "s": "t", "pid": pid, "tid": tid, "name": name, "ts": self._ts(t_ns)}
            if args:
                ev["args"] = args
            self.events.append(ev)

    def name_track(self, pid: int, tid: int, name: str) -> None:
        """Name a track (thread) of the trace."""
        self._names[(pid, tid)] = name

    def counter(self, name: str, t_ns: float, values: dict):
        if self.wants(t_ns, t_ns):
            self.events.append(
                {"ph": "C", "pid": POWER_PID, "tid": 0, "name": name, "ts": self._ts(t_ns), "args": values}
            )

    def io(self, req, cpu: int):
        """One completed IO of the host model: device service span and a flow submit -> device ->
        completion on ``cpu``."""
        self.request(req, req.qp, req.t_submit, req.t_complete, ((cpu, req.t_dispatch), (cpu, req.t_reaped)))

    def request(self, req, qp, t_first: float, t_last: float, cpu_points) -> None:
        """One completed request on queue pair ``qp``: its device service span, and a flow from the
        CPU that sent it (``cpu_points[0]``: (cpu, time)) through the device to the CPU that completed
        it (``cpu_points[1]``). ``[t_first, t_last]`` decides whether it falls in the window."""
        if self.max_ios is not None and self.ios_seen >= self.max_ios:
            return
        if not self.wants(t_first, t_last):
            return
        self.ios_seen += 1
        dev_tid = qp.device.index * 1000 + qp.qid
        self._names[(DEV_PID, dev_tid)] = f"ssd{qp.device.index} q{qp.qid}"
        size = f"{req.nbytes // 1024}K" if req.nbytes >= 1024 else f"{req.nbytes}B"
        self.span(
            DEV_PID,
            dev_tid,
            f"{req.op} {size}",
            req.t_dev_start,
            req.t_dev_end - req.t_dev_start,
            "device",
            {"io": req.id, "service_ns": round(req.device_service_ns, 1)},
        )
        fid = req.id
        (cpu0, t0), (cpu1, t1) = cpu_points
        self.events.append(
            {"ph": "s", "id": fid, "pid": CPU_PID, "tid": cpu0, "name": "io", "cat": "flow", "ts": self._ts(t0)}
        )
        self.events.append(
            {
                "ph": "t",
                "id": fid,
                "pid": DEV_PID,
                "tid": dev_tid,
                "name": "io",
                "cat": "flow",
                "ts": self._ts(req.t_dev_start),
            }
        )
        self.events.append(
            {
                "ph": "f",
                "bp": "e",
                "id": fid,
                "pid": CPU_PID,
                "tid": cpu1,
                "name": "io",
                "cat": "flow",
                "ts": self._ts(t1),
            }
        )

    def power_counter(self, engine, power_w, end_ns: float, period_ns: float = 10_000.0) -> None:
        """Sample ``power_w()`` (W) every ``period_ns`` of the window up to ``end_ns`` as a counter
        track (events on ``engine``; only while tracing)."""
        start = max(self.t0, 0.0)
        stop = min(self.t1, end_ns)

        def tick():
            now = engine.now
            self.counter("CPU package power (W)", now, {"W": round(power_w(), 3)})
            if now + period_ns <= stop:
                engine.call_in(period_ns, tick)

        if start <= stop:
            engine.call_at(start, tick)

    # -- output ----------------------------------------------------------------------------------
    def write(self, path: str | Path, ncpus: int) -> None:
        """Write the trace-event JSON to ``path`` (all-or-nothing, see :mod:`simcore.outfile`)."""
        write_text(path, self.to_json(ncpus), what="--trace")

    def to_json(self, ncpus: int) -> str:
        """The Chrome trace-event document as JSON text."""
        meta = [
            {"ph": "M", "pid": CPU_PID, "name": "process_name", "args": {"name": "CPUs"}},
            {"ph": "M", "pid": DEV_PID, "name": "process_name", "args": {"name": "devices"}},
            {"ph": "M", "pid": POWER_PID, "name": "process_name", "args": {"name": "power"}},
        ]
        meta += [
            {"ph": "M", "pid": CPU_PID, "tid": c, "name": "thread_name", "args": {"name": f"cpu{c}"}}
            for c in range(ncpus)
        ]
        meta += [
            {"ph": "M", "pid": pid, "tid": tid, "name": "thread_name", "args": {"name": n}}
            for (pid, tid), n in self._names.items()
        ]
        # per track, in time order (parents before children at equal start: longer first)
        body = sorted(self.events, key=lambda e: (e.get("pid", 0), e.get("tid", 0), e["ts"], -e.get("dur", 0)))
        doc = {
            "traceEvents": meta + body,
            "displayTimeUnit": "ns",
            "otherData": {"generator": "stacksim", "truncated": self.truncated},
        }
        return json.dumps(doc)
