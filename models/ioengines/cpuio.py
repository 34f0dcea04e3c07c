"""fio's ``cpuio`` engine (fio 3.33, engines/cpu.c): burns CPU in user space, does no IO.

fio's cpuio_init turns ``cpuload`` (percent) and ``cpuchunks`` (the burn's length, us, default
50,000) into a loop of "IOs": each one spins for ``cpuchunks`` us of wall-clock time (its queue
hook calls the compute function until ``utime_since_now(start) >= cpucycle``: a noop loop, or qsort
with ``cpumode=qsort``), then fio's thinktime sleeps ``cpuchunks x (100 - cpuload) / cpuload`` us
(``thinktime_blocks=1``, no spin: usec_sleep's nanosleep). So the thread is busy ``cpuload`` percent
of the time on its CPU, at whatever frequency the CPU runs; a preempted spin loses wall time to the
other task, as fio's clock-checking loop does.

The spin is modelled as user-space CPU segments of at most :data:`SPIN_CHECK_NS` each, the clock
checked after each (so a preempted spin ends at most that much late); the sleep as fio's other
nanosleeps (hrtimer, timer slack). The two ``cpumode`` loops differ in their instruction mix and so
in the core's power (qsort draws more), which the power model does not distinguish: ``cpumode`` is
accepted without effect. No IO is counted: fio's cpuio job has no IO statistics either.
"""

from __future__ import annotations

from models.ioengines.host import EngineHost
from models.ioengines.job import FioJob
from models.ioengines.sync_io import SyncThread

#: the spin's segments (ns): its clock check's resolution in the model (fio's loop checks every
#: compute pass, well under a microsecond; a coarser step only matters if the spin is preempted)
SPIN_CHECK_NS = 100_000.0


class CpuioThread(SyncThread):
    """One fio thread of a ``cpuio`` job: spin ``cpuchunks`` us, sleep the rest of the cycle, until
    its runtime ends."""

    def __init__(self, host: EngineHost, job: FioJob, job_idx: int, clone: int, cpu: int, end_ns: float, stream):
        super().__init__(host, job, job_idx, clone, cpu, end_ns, stream)
        load = min(job.cpuload, 100)
        self._spin_ns = job.cpuchunks_us * 1000.0
        self._sleep_ns = job.cpuchunks_us * (100 - load) / load * 1000.0  # fio's o->thinktime
        self._spin_end = 0.0
        self._slices: dict[tuple[int, float], object] = {}

    def _issue_first(self) -> None:
        self._burn()

    def _burn(self) -> None:
        """One cpuio 'IO': spin until ``cpuchunks`` us of wall time have passed."""
        now = self.runner.clock()
        if now >= self.end_ns:
            self._exit(False)
            return
        self._spin_end = min(now + self._spin_ns, self.end_ns)
        self._spin()

    def _spin(self) -> None:
        runner = self.runner
        left = self._spin_end - runner.clock()
        if left <= 0:
            self._after_spin()
            return
        step_us = int(min(left, SPIN_CHECK_NS) // 1000) + 1  # whole microseconds (bounded set of bundles)
        freq = runner.freq
        cost = self._slices.get((step_us, freq))
        if cost is None:
            cost = self._slices[(step_us, freq)] = self.host.costs.get("cpuio_spin", user=step_us * 1000.0 * freq)
        runner.run(cost, self._spin)  # type: ignore[arg-type]

    def _after_spin(self) -> None:
        if self.runner.clock() >= self.end_ns:
            self._exit(False)
        elif self._sleep_ns > 0:
            slack = self.k.timer_slack_ns
            self._nanosleep(False, lambda: self._sleep_ns + slack, self._burn)
        else:
            self._burn()
