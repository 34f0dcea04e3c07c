"""``schedutil`` (kernel/sched/cpufreq_schedutil.c, Linux 5.15), with its IO-wait boost.

The scheduler calls the governor when a task is enqueued on a CPU (a wake-up; flagged IOWAIT if
the task slept in io_schedule) and at each scheduler tick that finds a task running (the CPU's
tick, :class:`models.os.sched.runner.CpuRunner`; with ``sched.tick`` off only wake-ups update). Each
call:

- updates each CPU's utilization, PELT's ``util_avg``: a geometric average of running time with a
  32-period half-life (1 period = 1024 us), frequency invariant (running time is scaled by the
  current / top frequency, as on x86 since 5.7), in capacity units (1024 = a CPU at top speed).
  Between two calls the running time is taken as spread evenly over the interval;
- applies the IO-wait boost: an IOWAIT wake-up sets the CPU's boost to 1/8 of capacity, or doubles
  it (up to full capacity) once per request; an update without a new request halves it (dropped
  below 1/8); a CPU not updated for more than a tick loses it. The CPU's utilization is at least
  its boost;
- if ``rate_limit_us`` has passed since the last frequency change: ``next = 1.25 x top x util /
  1024`` with the highest utilization of the core's CPUs, resolved to the lowest P-state at or above
  it (RELATION_L), requested if it differs.

Not modelled: uclamp, deadline/RT utilization, the "busy CPU keeps its frequency" rule of
single-CPU policies.
"""

from __future__ import annotations

from typing import Optional

from pydantic import Field

from models.cpu.cpufreq import UINT_MAX, CpufreqGovernor
from models.host import Host
from policies.cpu_power.base import CPUFREQ_GOVERNORS
from simcore.config import Model

CAPACITY = 1024.0
IOWAIT_BOOST_MIN = CAPACITY / 8
PELT_HALF_LIFE_NS = 32 * 1_024_000.0  # 32 periods of 1024 us


class SchedutilTunables(Model):
    """sysfs: /sys/devices/system/cpu/cpufreq/schedutil/rate_limit_us, plus one model switch."""

    rate_limit_us: Optional[int] = Field(
        None,
        ge=0,
        le=UINT_MAX,
        description="minimum time between frequency changes, us (default: the driver's"
        " transition latency x 1000, at most 10 ms; the sysfs value is an unsigned int, cpufreq_schedutil.c)",
    )
    iowait_boost: bool = Field(True, description="model switch (not in sysfs): apply the IO-wait boost")


class _CpuUtil:
    """schedutil's per-CPU state (struct sugov_cpu) plus the PELT signal it reads."""

    __slots__ = ("runner", "util", "t", "busy", "boost", "boost_pending", "last_update")

    def __init__(self, runner, now: float):
        self.runner = runner
        self.util = 0.0
        self.t = now
        self.busy = runner.cpu.busy_ns_at(now)
        self.boost = 0.0
        self.boost_pending = False
        self.last_update = now


@CPUFREQ_GOVERNORS.register("schedutil")
class Schedutil(CpufreqGovernor):
    Params = SchedutilTunables

    def __init__(self, host: Host, params: SchedutilTunables):
        super().__init__(host, params)
        self.delay_ns = params.rate_limit_us * 1e3 if params.rate_limit_us is not None else self.transition_delay_ns()
        self.tick_ns = 1e9 / host.platform.sched.tick_hz
        self._cpu: dict[int, _CpuUtil] = {}
        self._core_state: dict[int, list] = {}  # core index -> [next_freq, last_freq_update_time]
        self.updates = 0

    def start(self) -> None:
        host = self.host
        now = host.engine.now
        for r in host.runners:
            self._cpu[r.id] = _CpuUtil(r, now)
        for core in host.pkg.cores:
            self._core_state[core.index] = [core.target_ghz, -float("inf")]

    # -- the scheduler's hooks ----------------------------------------------------------------------
    def on_enqueue(self, runner, now: float, iowait: bool) -> None:
        """cpufreq_update_util from enqueue_task: a task became runnable on ``runner``'s CPU."""
        self._update(runner.cpu.core, self._cpu[runner.id], now, iowait)

    def on_tick(self, runner, now: float) -> None:
        """scheduler_tick: task_tick_fair updates the utilization of a CPU running a task (not the
        idle task) at its tick."""
        if runner.current is not None:
            self._update(runner.cpu.core, self._cpu[runner.id], now, False)

    # -- sugov_update_shared ----------------------------------------------------------------------------
    def _update(self, core, sc: _CpuUtil, now: float, iowait: bool) -> None:
        self.updates += 1
        if self.params.iowait_boost:
            self._iowait_boost(sc, now, iowait)
        sc.last_update = now
        st = self._core_state[core.index]
        if now - st[1] < self.delay_ns:
            return
        util = 0.0
        for c in core.cpus:
            other = self._cpu[c.id]
            u = self._pelt(other, now, core.freq_ghz)
            if self.params.iowait_boost:
                u = self._iowait_apply(other, now, u)
            if u > util:
                util = u
        top = self.cfg.top_freq_ghz
        nxt = self.resolve_freq(1.25 * top * util / CAPACITY, round_up=True)
        if nxt != st[0]:
            st[0] = nxt
            st[1] = now
            self.set_freq(core, nxt)

    def _pelt(self, sc: _CpuUtil, now: float, freq_ghz: float) -> float:
        dt = now - sc.t
        if dt > 0:
            busy = sc.runner.cpu.busy_ns_at(now)
            running = (busy - sc.busy) / dt * (freq_ghz / self.cfg.top_freq_ghz)  # frequency invariant
            decay = 0.5 ** (dt / PELT_HALF_LIFE_NS)
            sc.util = sc.util * decay + CAPACITY * running * (1.0 - decay)
            sc.t = now
            sc.busy = busy
        return sc.util

    def _iowait_reset(self, sc: _CpuUtil, now: float, set_boost: bool) -> bool:
        if now - sc.last_update <= self.tick_ns:
            return False
        sc.boost = IOWAIT_BOOST_MIN if set_boost else 0.0
        sc.boost_pending = set_boost
        return True

    def _iowait_boost(self, sc: _CpuUtil, now: float, iowait: bool) -> None:
        if sc.boost and self._iowait_reset(sc, now, iowait):
            return
        if not iowait or sc.boost_pending:
            return
        sc.boost_pending = True
        sc.boost = min(sc.boost * 2, CAPACITY) if sc.boost else IOWAIT_BOOST_MIN

    def _iowait_apply(self, sc: _CpuUtil, now: float, util: float) -> float:
        if not sc.boost or self._iowait_reset(sc, now, False):
            return util
        if not sc.boost_pending:
            sc.boost /= 2
            if sc.boost < IOWAIT_BOOST_MIN:
                sc.boost = 0.0
                return util
        sc.boost_pending = False
        return sc.boost if sc.boost > util else util
