"""System power: CPU package + SSDs + DRAM + rest of the platform, the split the published studies
measure (SANDMAN's CPU by powerstat and system by IPMI: Zhou et al., SOSP 2025; whole-system wall
power: Harris & Altiparmak, HotStorage 2022). The rest is not constant on a server: it follows CPU
activity (SANDMAN's Table 1: "others" 204 W idle, 398 W under light load with its cores polling).

* CPU package: exact integral of per-core power (C-state, frequency, SMT activity) and uncore
  (:mod:`models.cpu.core`); on several sockets also each package's own (``cpu_socket0``, ``cpu_socket1``, ...: its cores
  and its uncore, which sleeps only when that socket's CPUs are all deep);
* SSDs: idle power plus (active - idle) per busy media unit (:mod:`models.ssd.device`), minus
  (idle - state power) for the time spent in APST low-power states (:mod:`models.ssd.apst`); the
  device's energy accounts are :mod:`models.ssd.energy`'s (the storage server reads them too);
* DRAM: ``power.dram_w``;
* the rest of the platform: ``power.platform_base_w`` + ``power.platform_cpu_coupling`` x CPU
  package power (fans and voltage regulators follow CPU activity) + ``power.c0_core_w`` +
  ``power.c0_core_ghz_w`` x f per physical core in C0 (memory, fabric and NIC paths and traffic of
  executing cores; :attr:`models.cpu.core.Package.c0_acc`).
:class:`EnergyReading` snapshots the cumulative energy accounts; the difference of two readings
gives exact average powers over the interval. A simulated meter samples them at ``meter_hz``.
"""

from __future__ import annotations

from dataclasses import dataclass

from models.host import Host
from models.ssd.energy import ssd_energy_j, ssd_reading


@dataclass(frozen=True)
class EnergyReading:
    t_ns: float
    cpu_j: float
    ssd: tuple  # per device: ssd_reading() (models.ssd.energy)
    c0_ns: float = 0.0
    """physical-core C0 time, ns (summed over cores)"""
    c0_ghz_ns: float = 0.0
    """physical-core C0 time x frequency, GHz x ns"""
    socket_j: tuple = ()
    """each socket's energy (its cores and uncore), J, on a machine of several sockets (else empty)"""


def read_energy(host: Host, now: float) -> EnergyReading:
    """Integrate the CPU package up to ``now`` and snapshot every energy account."""
    pkg = host.pkg
    pkg.settle(now)
    pkg.settle_c0(now)
    cpu_j = sum(c.energy_j for c in pkg.cores) + pkg.uncore_energy_j
    sockets = tuple(pkg.socket_energy_j(n) for n in range(len(pkg.sockets))) if len(pkg.sockets) > 1 else ()
    ssd = tuple(ssd_reading(d, now) for d in host.devices)
    return EnergyReading(now, cpu_j, ssd, pkg.c0_acc[0], pkg.c0_acc[1], sockets)


def average_power(platform, devices, a: EnergyReading, b: EnergyReading) -> dict:
    """Average power by component (W) between readings ``a`` and ``b``."""
    dur_s = (b.t_ns - a.t_ns) * 1e-9
    if dur_s <= 0:
        raise ValueError("empty interval")
    cpu_w = (b.cpu_j - a.cpu_j) / dur_s
    ssd_w = ssd_energy_j(devices, a.ssd, b.ssd, dur_s) / dur_s
    pw = platform.power
    c0_w = (pw.c0_core_w * (b.c0_ns - a.c0_ns) + pw.c0_core_ghz_w * (b.c0_ghz_ns - a.c0_ghz_ns)) / (b.t_ns - a.t_ns)
    other_w = pw.platform_base_w + pw.platform_cpu_coupling * cpu_w + c0_w
    out = {
        "cpu": cpu_w,
        "ssd": ssd_w,
        "dram": pw.dram_w,
        "other": other_w,
        "system": cpu_w + ssd_w + pw.dram_w + other_w,
    }
    for n, (ja, jb) in enumerate(zip(a.socket_j, b.socket_j)):  # several sockets: each package's own, W
        out[f"cpu_socket{n}"] = (jb - ja) / dur_s
    return out


class PowerMeter:
    """A wall-power meter sampling average power every 1 / ``hz`` seconds (1 Hz like the
    studies' meters). Samples are recorded from ``start_ns`` (the end of warm-up)."""

    def __init__(self, host: Host, hz: float, start_ns: float, end_ns: float):
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
