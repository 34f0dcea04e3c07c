"""fio's ``null`` engine (engines/null.c): no kernel and no device, the classic way to measure fio's
own per-IO overhead.

fio's null engine completes an IO without any system call: with ``iodepth=1`` its queue hook returns
the IO completed; deeper, it counts queued IOs, ``commit`` turns them into events and
``getevents`` hands them back, all in user space. So an IO costs fio's own work only: issuing it
(``user_io_cycles``) and completing it (``user_complete_cycles``), on the thread's CPU, at its
clock. Nothing reaches the block layer, the driver or the SSD: the layers other than ``user`` stay
at zero and no device command is counted.
"""

from __future__ import annotations

from models.ioengines.async_io import AsyncThread


class NullThread(AsyncThread):
    """One fio thread of a ``null`` job: :class:`AsyncThread`'s queueing and reaping, with the
    commit completing every queued IO at once and neither call entering the kernel."""

    def _submit_cost(self, ios, nreq: int, with_syscall: bool, saved: tuple[int, int, int] = (0, 0, 0)):
        n = len(ios)
        cost = self._acosts.get(("null_commit", n))
        if cost is None:
            cost = self._acosts[("null_commit", n)] = self.host.costs.get("null_commit", user=n * self.k.user_io_cycles)
        return cost

    def _reap_cost(self, n: int, syscall: bool, flushes: int = 0, pi_cycles: float = 0.0):
        cost = self._acosts.get(("null_getevents", n))
        if cost is None:
            cost = self._acosts[("null_getevents", n)] = self.host.costs.get(
                "null_getevents", user=n * self.k.user_complete_cycles
            )
        return cost

    def _submitted(self, ios, reqs) -> None:
        """The commit: every IO is an event at once (fio_null_commit), reaped by the next getevents."""
        runner = self.runner
        t = runner.clock()
        for req in ios:
            req.t_issued = t
            req.done = True
            req.t_reaped = t
            self._on_done(runner, req)
        self._after_submit()
