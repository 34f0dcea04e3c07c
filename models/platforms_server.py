"""Storage-server platforms (NVMe-oF targets with many cores and SSDs).

``epyc9454p-16xpm1743``: the storage node of SANDMAN (Zhou et al., SOSP 2025,
``scenarios/data/reference/sandman_polling_server.yaml``): AMD EPYC 9454P (48 cores / 96
logical, SMT on, 3.65 GHz all-core, 400 MHz minimum), 16 x Samsung PM1743, ConnectX-6 NVMe-oF over
RDMA, Linux 6.8.

Where each value comes from:

- CPU structure, frequencies, the 450 us P-state transition: the EPYC preset (``models.cpu.presets``).
- Exit latencies, as *time back to full performance* measured by SANDMAN (table 2): C1 3 us
  (ACPI reports ~1 us for the halt itself; the study measures the whole wake-up on this part), the
  deep state 800 us (ACPI's C2 exit of up to 400 us plus the clock ramp back to base frequency,
  "at least 400 us").
- Per-state core powers, uncore, core leakage / dynamic power, the "others" terms and SSD idle /
  active power: **fitted** by ``stacksim calibrate --study server-power`` (scipy least squares on
  the simulator's own outputs: the server model run in each measured configuration) to table 1
  (idle / light load / peak breakdown) and table 2 (per-state CPU and system power). The fitted
  values are in :data:`SERVER_POWER_FIT`; re-run the script to refresh them.

"Others" (everything but CPU package and SSDs: DRAM, fans, regulators, NIC, board, PSU loss) is
:class:`~models.platform.PowerConfig`'s ``dram_w + platform_base_w + platform_cpu_coupling x P_cpu
+ (c0_core_w + c0_core_ghz_w x f) per physical core in C0``: platform power that follows
*executing* cores (memory, fabric and NIC traffic of a core in C0, and the regulators that feed
it). Linear coupling to package power alone cannot fit the measurements: polling at 400 MHz raises
the CPU by 10 W over C1 but "others" by 38 W, while entering the deep state lowers "others" by only
0.95 W per CPU watt (see docs/server.md).

It is an ordinary platform (``models.platforms.PLATFORMS``): ``stacksim run --platform
epyc9454p-16xpm1743`` runs fio jobs on it, and the storage-server scenarios run on any platform.
"""

from __future__ import annotations

from models.cpu.config import CStateConfig
from models.cpu.presets import epyc_9454p
from models.os.costs.tables import KernelCosts
from models.platform import PlatformConfig, PowerConfig
from models.ssd.presets import pm1743

#: Output of ``stacksim calibrate --study server-power`` (re-run it to refresh; it prints this dict).
SERVER_POWER_FIT = {
    "cpu.C1.power_w": 0.2433,
    "cpu.C2.power_w": 0.12,
    "cpu.uncore_active_w": 122.5322,
    "cpu.uncore_idle_w": 46.24,
    "cpu.core_leakage_w": 1.5,
    "cpu.core_dynamic_w": 4.2708,
    "power.platform_base_w": 45.1813,
    "power.platform_cpu_coupling": 0.9223,
    "power.c0_core_w": 0.986,
    "power.c0_core_ghz_w": 0.7793,
    "ssd.idle_w": 4.4286,
    "ssd.active_read_w": 61.5281,
}
# Notes on the fit (residuals: every table-1/table-2 quantity within 5%; docs/server.md quotes the worst):
# - core leakage and deep-state core power sit at their priors (the preset's estimates): the
#   measured totals do not separate them from the uncore;
# - ssd.active_read_w is an *effective* slope: the linear media-occupancy model needs 61.5 W at
#   full occupancy to give 296 W at 640K IOPS per drive (24% occupancy), above the PM1743's 25 W
#   maximum, so drive power is concave in load; per-drive power far above 640K IOPS is over-predicted.

#: DRAM: 756 GB in 24 RDIMMs at ~1.5 W background each (estimate, not fitted: the study reports
#: DRAM inside "others").
DRAM_W = 36.0

#: Exit latencies (us) and target residencies (us) of the idle states, SANDMAN table 2 / Appendix A.
C1_EXIT_US, C1_RESIDENCY_US = 3.0, 6.0
DEEP_EXIT_US, DEEP_RESIDENCY_US = 800.0, 800.0


def _apply_fit(fit: dict) -> tuple[dict, dict, dict, dict]:
    cpu, power, ssd = {}, {}, {}
    for key, val in fit.items():
        head, rest = key.split(".", 1)
        {"cpu": cpu, "power": power, "ssd": ssd}[head][rest] = float(val)
    return cpu, power, ssd


def epyc9454p_16xpm1743(fit: dict | None = None) -> PlatformConfig:
    """The SANDMAN storage node with the power parameters ``fit`` (default :data:`SERVER_POWER_FIT`).
    Its OS idles in C1 (``cpu.cpuidle_disable`` = the deep state): the measured idle CPU power is the
    all-C1 power; a policy may still put a core in the deep state itself."""
    fit = SERVER_POWER_FIT if fit is None else {**SERVER_POWER_FIT, **fit}
    cpu_fit, power_fit, ssd_fit = _apply_fit(fit)
    cstates = (
        CStateConfig(name="POLL", exit_latency_ns=0.0, target_residency_ns=0.0, power_w=0.0, polling=True),
        CStateConfig(
            name="C1",
            exit_latency_ns=C1_EXIT_US * 1e3,
            target_residency_ns=C1_RESIDENCY_US * 1e3,
            power_w=cpu_fit.pop("C1.power_w"),
        ),
        CStateConfig(
            name="C2",
            exit_latency_ns=DEEP_EXIT_US * 1e3,
            target_residency_ns=DEEP_RESIDENCY_US * 1e3,
            power_w=cpu_fit.pop("C2.power_w"),
            package_deep=True,
            flushes_core_caches=True,
        ),
    )
    cpu = epyc_9454p(cstates=cstates, cpuidle_disable=("C2",), **cpu_fit)
    ssd = pm1743(**ssd_fit)
    calib = ", ".join(f"{k}={v:g}" for k, v in fit.items())
    return PlatformConfig(
        name="epyc9454p-16xpm1743",
        description="SANDMAN storage node: EPYC 9454P (48C/96T, 3.65 GHz all-core) + 16 x PM1743, NVMe-oF/RDMA target",
        cpu=cpu,
        ssd=ssd,
        ssd_count=16,
        kernel=KernelCosts(version="6.8"),  # the study's Linux 6.8
        memory_bytes=756 << 30,  # sandman_polling_server: 756 GB
        power=PowerConfig(dram_w=DRAM_W, **power_fit),
        calibration="power fitted by stacksim calibrate --study server-power to sandman_polling_server.yaml"
        " tables 1-2: " + calib,
    )
