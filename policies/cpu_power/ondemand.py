"""``ondemand`` (drivers/cpufreq/cpufreq_ondemand.c, cpufreq_governor.c in Linux 5.x).

Every ``sampling_rate`` each policy (here: physical core) measures the load of its CPUs since the
last sample, ``load = 100 x (wall - idle) / wall``, the highest over the siblings. Idle time is the
time the CPU ran no work (C-states and the cpuidle POLL spin); with ``io_is_busy`` the time a CPU
sat idle while tasks of its runqueue waited for IO counts as busy. Above ``up_threshold`` the core
goes to the top frequency and stays there at least ``sampling_down_factor`` periods; otherwise it
goes to ``min + load x (max - min) / 100``, the closest P-state.

The kernel samples from the scheduler's utilization hook once a period has passed, so a CPU that
stays idle is not sampled until it wakes; the model samples on a timer, which gives the same
frequency for a core that stays idle (load 0 -> the minimum).
"""

from __future__ import annotations

from typing import Optional

from pydantic import Field

from models.cpu.cpufreq import UINT_MAX, CpufreqGovernor
from models.host import Host
from policies.cpu_power.base import CPUFREQ_GOVERNORS
from simcore.config import Model


class OndemandTunables(Model):
    """sysfs: /sys/devices/system/cpu/cpufreq/ondemand/*"""

    sampling_rate: Optional[int] = Field(
        None,
        ge=1,
        le=UINT_MAX,
        description="sampling period, us (default: the driver's transition latency x 1000, at"
        " most 10 ms, at least two scheduler ticks; the sysfs value is an unsigned int, cpufreq_governor.c)",
    )
    up_threshold: int = Field(80, ge=1, le=100, description="load (%) above which the core goes to the top frequency")
    sampling_down_factor: int = Field(
        1, ge=1, le=100_000, description="periods to stay at the top before sampling again"
    )
    io_is_busy: Optional[bool] = Field(
        None, description="count IO-wait time as busy (kernel default: on for Intel Core 2 and later, off otherwise)"
    )


@CPUFREQ_GOVERNORS.register("ondemand")
class Ondemand(CpufreqGovernor):
    Params = OndemandTunables

    def __init__(self, host: Host, params: OndemandTunables):
        super().__init__(host, params)
        tick_ns = 1e9 / host.platform.sched.tick_hz
        if params.sampling_rate is not None:
            self.period_ns = params.sampling_rate * 1e3
        else:
            self.period_ns = max(2 * tick_ns, self.transition_delay_ns())
        self.io_is_busy = params.io_is_busy if params.io_is_busy is not None else self.cfg.model.startswith("Intel")
        self.samples = 0

    def start(self) -> None:
        host = self.host
        now = host.engine.now
        for core in host.pkg.cores:
            runners = [host.runners[c.id] for c in core.cpus]
            last = [self._busy_ns(r, now) for r in runners]
            host.engine.call_in(self.period_ns, self._sample, core, runners, last, now)

    def _busy_ns(self, runner, now: float) -> float:
        busy = runner.cpu.busy_ns_at(now)
        return busy + runner.iowait_ns_at(now) if self.io_is_busy else busy

    def _sample(self, core, runners, last: list, t_last: float) -> None:
        now = self.host.engine.now
        wall = now - t_last
        load = 0.0
        for i, r in enumerate(runners):
            b = self._busy_ns(r, now)
            load = max(load, 100.0 * (b - last[i]) / wall)
            last[i] = b
        self.samples += 1
        cfg = self.cfg
        p = self.params
        mult = 1
        if load > p.up_threshold:
            if core.target_ghz < cfg.top_freq_ghz:
                mult = p.sampling_down_factor
            self.set_freq(core, cfg.top_freq_ghz)
        else:
            target = cfg.min_freq_ghz + load * (cfg.top_freq_ghz - cfg.min_freq_ghz) / 100.0
            self.set_freq(core, self.resolve_freq(target, round_up=False))
        self.host.engine.call_in(self.period_ns * mult, self._sample, core, runners, last, now)
