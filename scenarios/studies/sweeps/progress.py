"""Sweep progress on stderr (runs done/total, rate, ETA) when it is a terminal; silent otherwise."""

from __future__ import annotations

import sys
import time


class Progress:
    """A progress bar: ``tqdm`` when installed, else one self-rewriting line.

    ``enabled=None`` shows it only when stderr is a TTY. ``done`` runs already finished (reused
    from an earlier, interrupted sweep) count towards the total but not towards the rate.
    """

    def __init__(self, total: int, done: int = 0, *, enabled: bool | None = None, desc: str = "sweep"):
        self.total = total
        self.n = done
        self._start_n = done
        self._t0 = time.monotonic()
        self._bar = None
        self.enabled = sys.stderr.isatty() if enabled is None else enabled
        if not self.enabled:
            return
        try:
            from tqdm import tqdm
        except ImportError:
            self._line()
            return
        self._bar = tqdm(
            total=total, initial=done, desc=desc, unit="run", file=sys.stderr, dynamic_ncols=True, smoothing=0.1
        )

    def update(self, n: int = 1) -> None:
        """``n`` more runs finished."""
        self.n += n
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.update(n)
        else:
            self._line()

    def close(self) -> None:
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.close()
        else:
            sys.stderr.write("\n")
            sys.stderr.flush()

    def _line(self) -> None:
        elapsed = time.monotonic() - self._t0
        ran = self.n - self._start_n
        rate = ran / elapsed if elapsed > 0 else 0.0
        eta_s = time.strftime("%H:%M:%S", time.gmtime((self.total - self.n) / rate)) if rate > 0 else "?"
        sys.stderr.write(f"\r{self.n}/{self.total} runs  {rate:.2f} run/s  ETA {eta_s}   ")
        sys.stderr.flush()
