"""The Western Digital Ultrastar DC ZN540 preset (a ZNS SSD: TLC NAND, PCIe 3.0 x4 U.2), calibrated
on Doekemeijer et al., "Performance Characterization of NVMe Flash Devices with Zoned Namespaces
(ZNS)", IEEE CLUSTER 2023 (its fio runs ship as ``scenarios/data/measurements/cluster23zns``, MIT
licence; the ``cluster23-zns`` validation suite replays them).

What was fitted to what (physical parameters only; ``stacksim validate --suite cluster23-zns``
replays the shipped points):

- **the dies** (``parallel_units``: 32), **tR** and the **channel transfer** (``read``: 68 us, and
  1.7 us per KiB beyond 4 KiB while the die's page goes out over its channel, ~600 MB/s): the
  transfer from the QD1 latency step from 4 to 16 KiB reads (SPDK 72.6 -> 101.6 us, less the link's
  and data path's share), tR from the QD1 4 KiB read latency less the front end, firmware, data path
  and link; the die count from how that latency grows with depth in one zone (die collisions: +1 us
  at depth 2, +8 at 8, +19 at 16, +44 at 32);
- **the controller's data path** (``datapath``: one of 2.7 GB/s, ECC and DRAM to the host
  interface): the 8 and 16 KiB reads' ceiling in one zone (296K and 160K IOPS: 2.4-2.6 GB/s);
- **the firmware's time per command** (``firmware``: one core; read 2.2 us, write 5.4 us, append
  7.6 us, exponentially distributed): from the small commands' ceilings that no media figure
  explains: 4 KiB reads saturate at 437K IOPS in one zone (1 / 2.29 us), 4 KiB writes at ~186K IOPS
  over 4-14 zones at depth 1 (1 / 5.4 us), 4 KiB appends at ~132K IOPS at any depth and zone count
  (1 / 7.6 us); the spread (cv 1) from the 2- and 4-zone writes (141.6K and 180K IOPS: mean-value
  analysis of an exponential server with 5.4 us gives 143K and 181K; a constant one 175K and 185K);
- **tPROG** (1.75 ms for a 64 KiB program unit, 4 planes x 16 KiB, on each of the 32 dies): from the
  16 KiB writes' ceiling, 73.5K IOPS = 1.2 GB/s at any depth and zone count (32 x 64 KiB / 1.2 GB/s);
  the write buffer's DRAM acknowledgement (``write``: 3.2 us + 0.11 us per KiB) from the QD1 4 and
  16 KiB write latencies less firmware, link and front end;
- **the stripe width** (all 32 dies): one zone's reads reach the device's 437K 4 KiB IOPS and one
  zone's writes its 1.2 GB/s (as one writer does, the ZenFS maintainers state:
  westerndigitalcorporation/zenfs#168), which with the rates above needs every die.

Not fitted (sources in :data:`ZN540_SOURCES`): the geometry and zone limits (the logs' header, the
ZNS-Study README), reset and finish times (the paper's medians, :class:`~models.ssd.config.ZonedConfig`),
link and power (estimates).
"""

from __future__ import annotations

from typing import Any

from models.ssd.config import DataPathConfig, DeviceConfig, ServiceConfig, ZonedConfig
from models.ssd.controller_config import ReadAheadConfig, WriteBufferConfig
from models.ssd.firmware import FirmwareConfig

#: the ZN540 namespace the CLUSTER'23 measurements used (log header, exact): 904 zones of 524,288
#: LBAs of 4 KiB (2 GiB), each with a capacity of 275,712 LBAs (1,129,316,352 bytes = ~1077 MiB)
ZN540_ZONES = 904
ZN540_ZONE_BYTES = 524_288 * 4096
ZN540_ZONE_CAP_BYTES = 275_712 * 4096
#: the dies (parallel units): fitted (the depth sweep's die collisions; see the module)
ZN540_DIES = 32
#: one die's program: 4 planes x a 16 KiB page (3D TLC rules of thumb, recalled), in TPROG_NS (fitted)
ZN540_PROGRAM_BYTES = 4 * 16_384
ZN540_TPROG_NS = 1_750_000.0


def zn540(**kw) -> DeviceConfig:
    """Western Digital Ultrastar DC ZN540 as Doekemeijer et al. measured it (CLUSTER'23); the module
    says what was fitted to what."""
    program_gb_s = ZN540_DIES * ZN540_PROGRAM_BYTES / ZN540_TPROG_NS  # bytes per ns = GB/s
    cfg: dict[str, Any] = dict(
        model="WD Ultrastar DC ZN540",
        readahead=ReadAheadConfig(),
        capacity_bytes=ZN540_ZONES * ZN540_ZONE_BYTES,
        read=ServiceConfig(base_ns=68_000.0, per_kib_ns=1_700.0, sd_ns=6_000.0),
        write=ServiceConfig(base_ns=3_200.0, per_kib_ns=110.0, sd_ns=300.0),
        firmware=FirmwareConfig(read_ns=2_200.0, write_ns=5_400.0, append_ns=7_600.0, cv=1.0),
        datapath=DataPathConfig(count=1, read_gb_s=2.7, write_gb_s=2.7),
        # a 4 KiB write's share of a die's program: tPROG x 4 KiB / 64 KiB
        write_cache_program_ns=ZN540_TPROG_NS * 4096 / ZN540_PROGRAM_BYTES,
        write_buffer=WriteBufferConfig(size_bytes=ZN540_DIES * ZN540_PROGRAM_BYTES, program_gb_s=program_gb_s),
        parallel_units=ZN540_DIES,
        link_gb_s=3.5,
        fetch_ns=300.0,
        post_ns=300.0,
        idle_w=5.0,
        active_read_w=12.0,
        active_write_w=12.0,
        zoned=ZonedConfig(
            zone_size_bytes=ZN540_ZONE_BYTES,
            zone_capacity_bytes=ZN540_ZONE_CAP_BYTES,
            max_open_zones=14,
            max_active_zones=14,
            stripe_width=ZN540_DIES,
        ),
    )
    cfg.update(kw)
    return DeviceConfig(**cfg)


#: the sources of the preset's values (docs/presets.md), besides the read-ahead's and front end's
ZN540_SOURCES = {
    "model": "exact: WD Ultrastar DC ZN540 (Doekemeijer et al., IEEE CLUSTER 2023)",
    "capacity_bytes": "exact: 904 zones of 2 GiB (the CLUSTER'23 logs' header)",
    "zoned": "exact: zone size and capacity (log header), 14 active zones (ZNS-Study README); open zones as"
    " many (estimate); reset and finish times the paper's medians, spent on the zone's dies; stripe width"
    " all 32 dies (fitted: one zone's reads reach 437K IOPS and its writes the device's 1.2 GB/s, CLUSTER'23)",
    "read": "derived: fitted, tR 68 us from the QD1 4 KiB read latency (72.6 us, SPDK) less front end, firmware,"
    " data path and link; 1.7 us per KiB (the channel transfer) from the QD1 4 -> 16 KiB step (CLUSTER'23)",
    "write": "derived: fitted, the buffer's acknowledgement from the QD1 4 and 16 KiB write latencies (11.4, 16.3 us,"
    " SPDK) less firmware, link and front end (CLUSTER'23)",
    "firmware": "derived: fitted, one core, read 2.2 / write 5.4 / append 7.6 us per command (exponential), from the"
    " 4 KiB ceilings (437K reads in one zone, 186K writes over 4-14 zones, 132K appends) and the 2-4 zone"
    " writes (CLUSTER'23)",
    "datapath": "derived: fitted, one path of 2.7 GB/s, from the 8/16 KiB read ceiling (296K/160K IOPS, CLUSTER'23)",
    "write_cache_program_ns": "derived: a 4 KiB write's share of a die's 1.75 ms program of 64 KiB",
    "write_buffer": "derived: fitted, tPROG 1.75 ms per 64 KiB (4 planes x 16 KiB, recalled) on 32 dies = 1.2 GB/s,"
    " the 16 KiB writes' ceiling at any depth and zone count (CLUSTER'23); size one program unit per die"
    " (estimate, MQSim's one page per plane in flight)",
    "parallel_units": "derived: fitted, 32 dies, from the growth of the one-zone read latency with depth (CLUSTER'23)",
    "link_gb_s": "estimate: PCIe 3.0 x4 usable",
    "idle_w": "estimate: a U.2 enterprise drive's envelope",
    "active_read_w": "estimate: a U.2 enterprise drive's envelope",
    "active_write_w": "estimate: a U.2 enterprise drive's envelope",
}
