"""A progress line for one long simulation (``stacksim run``, ``replay``, and each simulation of
``calibrate``): wall time elapsed, simulated time, ETA, simulation speed.

It is driven by :attr:`simcore.engine.Engine.progress_hook`, which the engine calls every
:data:`~simcore.engine.PROGRESS_EVERY_EVENTS` events with the simulated time: no events are
added to the queue, so results are bit-identical with and without it, and long idle stretches of
simulated time cost nothing. The line is redrawn at most every ``min_interval_s`` of wall time,
only when enabled (by default: when stderr is a terminal), and erased by :meth:`RunProgress.close`.

    progress = RunProgress(end_ns=1e9, ios=lambda: host.completed_ios)
    with progress.attached(host.engine):
        host.engine.run(1e9)
"""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from typing import Callable, TextIO

__all__ = ["RunProgress", "progress_enabled"]


def progress_enabled(flag: bool | None, quiet: bool = False, stream: TextIO | None = None) -> bool:
    """The CLI rule: ``--progress``/``--no-progress`` (``flag``) decide; otherwise on when the
    stream (stderr) is a terminal and the command is not ``--quiet``."""
    if flag is not None:
        return flag
    stream = sys.stderr if stream is None else stream
    return not quiet and bool(getattr(stream, "isatty", lambda: False)())


def _hms(seconds: float) -> str:
    seconds = int(round(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


class RunProgress:
    """One self-rewriting line on ``stream`` (default stderr) while a simulation runs.

    ``end_ns``: the simulated time the run ends at (for the percentage and the ETA; ``None`` when
    unknown, e.g. a trace replay); ``ios``: returns the IOs completed so far (for IOs per wall
    second); ``enabled``: ``None`` = when ``stream`` is a terminal.
    """

    def __init__(
        self,
        *,
        end_ns: float | None = None,
        ios: Callable[[], int] | None = None,
        enabled: bool | None = None,
        label: str = "simulating",
        stream: TextIO | None = None,
        min_interval_s: float = 0.25,
    ):
        self.stream = sys.stderr if stream is None else stream
        self.enabled = progress_enabled(enabled, stream=self.stream)
        self.end_ns = end_ns
        self.ios = ios
        self.label = label
        self.min_interval_s = min_interval_s
        self._t0 = time.monotonic()
        self._last = -float("inf")
        self._width = 0
        self.lines = 0  # lines drawn (for tests)

    def __call__(self, now_ns: float) -> None:
        """The engine hook: redraw if enough wall time has passed."""
        t = time.monotonic()
        if t - self._last < self.min_interval_s:
            return
        self._last = t
        self.draw(now_ns, t - self._t0)

    def text(self, now_ns: float, wall_s: float) -> str:
        sim_s = now_ns * 1e-9
        speed = sim_s / wall_s if wall_s > 0 else 0.0
        parts = [f"{self.label}: {_hms(wall_s)} elapsed", f"simulated {sim_s:.3f} s"]
        if self.end_ns:
            frac = min(now_ns / self.end_ns, 1.0)
            parts[-1] += f" of {self.end_ns * 1e-9:.3f} s ({100 * frac:.0f}%)"
            eta = (self.end_ns - now_ns) * 1e-9 / speed if speed > 0 else None
            parts.append(f"ETA {_hms(eta)}" if eta is not None else "ETA ?")
        parts.append(f"{speed:.3g} sim s/s")
        if self.ios is not None and wall_s > 0:
            parts.append(f"{self.ios() / wall_s:,.0f} IOs/s")
        return "  ".join(parts)

    def draw(self, now_ns: float, wall_s: float) -> None:
        if not self.enabled:
            return
        line = self.text(now_ns, wall_s)
        pad = max(self._width - len(line), 0)
        self._width = len(line)
        self.stream.write("\r" + line + " " * pad)
        self.stream.flush()
        self.lines += 1

    def close(self) -> None:
        """Erase the line (the run's own output follows on a clean line)."""
        if self.enabled and self.lines:
            self.stream.write("\r" + " " * self._width + "\r")
            self.stream.flush()

    @contextmanager
    def attached(self, engine):
        """Install as ``engine``'s progress hook for the ``with`` block (when enabled)."""
        if not self.enabled:
            yield self
            return
        old = engine.progress_hook
        engine.progress_hook = self
        try:
            yield self
        finally:
            engine.progress_hook = old
            self.close()
