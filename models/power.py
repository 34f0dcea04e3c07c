"""System power: CPU package + SSDs + DRAM + rest of the platform (mechanisms.md section 10).

* CPU package: exact integral of per-core power (C-state, frequency, SMT activity) and uncore
  (:mod:`models.cpu.core`);
* SSDs: idle power plus (active - idle) per busy media unit (:mod:`models.ssd.device`);
* DRAM: ``power.dram_w``;
* the rest of the platform: ``power.platform_base_w`` + ``power.platform_cpu_coupling`` x CPU
  package power (fans and voltage regulators follow CPU activity).
:class:`EnergyReading` snapshots the cumulative energy accounts; the difference of two readings
gives exact average powers over the interval. A simulated meter samples them at ``meter_hz``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class EnergyReading:
    t_ns: float
    cpu_j: float
    ssd_busy_unit_ns: tuple  # per device: (read, write) busy unit-ns


def read_energy(host, now: float) -> EnergyReading:
    """Integrate the CPU package up to ``now`` and snapshot every energy account."""
    host.pkg.settle(now)
    cpu_j = sum(c.energy_j for c in host.pkg.cores) + host.pkg.uncore_energy_j
    ssd = tuple((d.busy_unit_ns["read"], d.busy_unit_ns["write"]) for d in host.devices)
    return EnergyReading(now, cpu_j, ssd)


def ssd_energy_j(devices, busy_a, busy_b, dur_s: float) -> float:
    """SSD energy over ``dur_s``: idle power plus (active - idle) per busy media unit, from the
    devices' cumulative (read, write) busy unit-ns at the start (``busy_a``) and end (``busy_b``)."""
    energy = 0.0
    for d, (r0, w0), (r1, w1) in zip(devices, busy_a, busy_b):
        c = d.cfg
        energy += c.idle_w * dur_s
        energy += (c.active_read_w - c.idle_w) / c.parallel_units * (r1 - r0) * 1e-9
        energy += (c.active_write_w - c.idle_w) / c.parallel_units * (w1 - w0) * 1e-9
    return energy


def average_power(platform, devices, a: EnergyReading, b: EnergyReading) -> dict:
    """Average power by component (W) between readings ``a`` and ``b``."""
    dur_s = (b.t_ns - a.t_ns) * 1e-9
    if dur_s <= 0:
        raise ValueError("empty interval")
    cpu_w = (b.cpu_j - a.cpu_j) / dur_s
    ssd_w = ssd_energy_j(devices, a.ssd_busy_unit_ns, b.ssd_busy_unit_ns, dur_s) / dur_s
    pw = platform.power
    other_w = pw.platform_base_w + pw.platform_cpu_coupling * cpu_w
    return {"cpu": cpu_w, "ssd": ssd_w, "dram": pw.dram_w, "other": other_w, "system": cpu_w + ssd_w + pw.dram_w + other_w}


class PowerMeter:
    """A wall-power meter sampling average power every 1 / ``hz`` seconds (1 Hz like the
    studies' meters). Samples are recorded from ``start_ns`` (the end of warm-up)."""

    def __init__(self, host, hz: float, start_ns: float, end_ns: float):
        self.host = host
        self.period_ns = 1e9 / hz
        self.samples: list[dict] = []
        self._end = end_ns
        self._last: EnergyReading | None = None
        host.engine.call_at(start_ns, self._tick)

    def _tick(self) -> None:
        host = self.host
        now = host.engine.now
        reading = read_energy(host, now)
        if self._last is not None:
            p = average_power(host.platform, host.devices, self._last, reading)
            self.samples.append({"t_s": now * 1e-9, **{f"{k}_w": v for k, v in p.items()}})
        self._last = reading
        if now + self.period_ns <= self._end + 1e-6:
            host.engine.call_in(self.period_ns, self._tick)
