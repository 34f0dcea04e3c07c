"""Sweep progress on stderr (runs done/total, rate, ETA): a bar on a terminal, and elsewhere (CI, nohup,
a redirected log) one plain line every :data:`LOG_EVERY_S` seconds of wall time."""

from __future__ import annotations

import sys
import time

#: without a terminal, a progress line at most this often (wall seconds)
LOG_EVERY_S = 30.0


class Progress:
    """A progress bar: ``tqdm`` when installed, else one self-rewriting line.

    ``enabled=None`` shows it only when stderr is a TTY. ``done`` runs already finished (reused
    from an earlier, interrupted sweep) count towards the total but not towards the rate.
    """

    def __init__(
        self,
        total: int,
        done: int = 0,
        *,
        enabled: bool | None = None,
        desc: str = "sweep",
        log_every_s: float = LOG_EVERY_S,
    ):
        self.total = total
        self.n = done
        self._start_n = done
        self._t0 = time.monotonic()
        self._bar = None
        self.desc = desc
        tty = sys.stderr.isatty()
        self.enabled = tty if enabled is None else enabled
        #: not a terminal and not asked either way: plain lines, every ``log_every_s`` seconds
        self.log_every_s = log_every_s if enabled is None and not tty else None
        self._logged = self._t0
        if not self.enabled:
            return
        try:
            from tqdm import tqdm
        except ImportError:
            self._line()
            return
        self._bar = tqdm(
            total=total or None, initial=done, desc=desc, unit="run", file=sys.stderr, dynamic_ncols=True, smoothing=0.1
        )

    def update(self, n: int = 1) -> None:
        """``n`` more runs finished."""
        self.n += n
        if self.log_every_s is not None and time.monotonic() - self._logged >= self.log_every_s:
            self._logged = time.monotonic()
            sys.stderr.write(f"{self.desc}: {self._status()}\n")
            sys.stderr.flush()
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.update(n)
        else:
            self._line()

    def skip(self, n: int = 1) -> None:
        """``n`` more runs found already stored: they count as done, not towards the rate."""
        self.n += n
        self._start_n += n
        if self._bar is not None:
            self._bar.update(n)

    def close(self) -> None:
        if not self.enabled:
            return
        if self._bar is not None:
            self._bar.close()
        else:
            sys.stderr.write("\n")
            sys.stderr.flush()

    def _status(self) -> str:
        elapsed = time.monotonic() - self._t0
        ran = self.n - self._start_n
        rate = ran / elapsed if elapsed > 0 else 0.0
        if not self.total:
            return f"{self.n} runs  {rate:.2f} run/s"
        eta_s = time.strftime("%H:%M:%S", time.gmtime((self.total - self.n) / rate)) if rate > 0 else "?"
        return f"{self.n}/{self.total} runs  {rate:.2f} run/s  ETA {eta_s}"

    def _line(self) -> None:
        sys.stderr.write(f"\r{self._status()}   ")
        sys.stderr.flush()
