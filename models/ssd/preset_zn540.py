"""The Western Digital Ultrastar DC ZN540 preset (a ZNS SSD: 96-layer BiCS4 TLC NAND, PCIe 3.0 x4 U.2)
on the NAND media model (:mod:`models.ssd.media`, as the other flash presets), calibrated on
Doekemeijer et al., "Performance Characterization of NVMe Flash Devices with Zoned Namespaces
(ZNS)", IEEE CLUSTER 2023 (its fio runs ship as ``scenarios/data/measurements/cluster23zns``, MIT
licence; the ``cluster23-zns`` validation suite replays them).

The device: 32 dies on 8 channels (4 per channel), each die 4 planes of 16 KiB pages; a zone is
striped over all 32 dies 64 KiB (one multi-plane program) at a time; reads take their page type's tR
and cross their die's channel; the DRAM write buffer gathers a zone's 64 KiB stripe unit and programs
it on its die; a reset erases on the zone's dies, a finish programs the padding there; one firmware
core serves every command. Each default is tagged in :data:`ZN540_SOURCES` (exact / recalled /
estimate / fitted).

What was fitted to what (physical parameters only; ``stacksim validate --suite cluster23-zns``
replays the shipped points):

- **the channel rate** (``media.channel_gb_s`` 0.5 GB/s): the QD1 latency step from 4 to 16 KiB
  reads (SPDK 72.6 -> 101.6 us: 29 us for 12 KiB, less the data path's and link's 4.6 us);
- **tR of the MSB page** (74 us; LSB and CSB in FEMU's TLC ratios: 39 / 54 / 74 us): the QD1 4 KiB
  read latency (SPDK 72.6 us) less the front end, firmware, the controller's share (4 us, estimate),
  the 4 KiB channel transfer, data path and link;
- **the dies** (32, 8 channels: recalled for an enterprise controller of this class): how one zone's
  read latency grows with depth (die and channel collisions: +1 us at depth 2, +8 at 8, +44 at 32);
- **the controller's data path** (one of 2.6 GB/s, ECC and DRAM to the host interface): the 8 and
  16 KiB reads' ceiling in one zone (SPDK 296K and 160K IOPS: 2.4-2.6 GB/s; io_uring's 291K and
  149K);
- **the firmware's time per command** (one core; read 2.2 us, write 5.4 us, append 7.6 us,
  exponentially distributed): the small commands' ceilings that no media figure explains: 4 KiB
  reads saturate at 437K IOPS in one zone, 4 KiB writes at ~186K over 4-14 zones at depth 1, 4 KiB
  appends at ~132K at any depth and zone count; the spread (cv 1) from the 2- and 4-zone writes;
- **tPROG** (1.75 ms for a 64 KiB multi-plane program on each of the 32 dies): the 16 KiB writes'
  ceiling, 73.5K IOPS = 1.2 GB/s at any depth and zone count (32 x 64 KiB / 1.2 GB/s); it also
  gives the finish times (a finish programs the zone's unwritten capacity: 538 programs per die,
  0.94 s against the measured 908 ms for a zone with one LBA written, not fitted to them); the
  buffer's DRAM acknowledgement (``write``: 3.2 us + 0.11 us per KiB) from the QD1 4 and 16 KiB
  write latencies less firmware, link and front end;
- **the write buffer** (46 x 64 KiB: a multi-plane program in flight on each die and a stripe unit
  gathered for each of the 14 active zones, estimate) is not fitted; with the dies' share alone
  the 16 KiB writes to 8 and 14 zones fell 9% and 21% short of the flat 1.2 GB/s measured;
- **the stripe width** (all 32 dies): one zone's reads reach the device's 437K 4 KiB IOPS and one
  zone's writes its 1.2 GB/s (as one writer does, the ZenFS maintainers state:
  westerndigitalcorporation/zenfs#168), which with the rates above needs every die.

Not fitted (sources in :data:`ZN540_SOURCES`): the geometry and zone limits (the logs' header, the
ZNS-Study README), the reset times (the paper's medians, :class:`~models.ssd.config.ZonedConfig`:
spent as erases on the zone's dies; a count of blocks x tBERS does not follow their concave curve),
link and power (estimates).
"""

from __future__ import annotations

from typing import Any

from models.ssd.config import DataPathConfig, DeviceConfig, ServiceConfig, ZonedConfig
from models.ssd.controller_config import ReadAheadConfig, WriteBufferConfig
from models.ssd.firmware import FirmwareConfig
from models.ssd.media import MediaConfig

#: the ZN540 namespace the CLUSTER'23 measurements used (log header, exact): 904 zones of 524,288
#: LBAs of 4 KiB (2 GiB), each with a capacity of 275,712 LBAs (1,129,316,352 bytes = ~1077 MiB)
ZN540_ZONES = 904
ZN540_ZONE_BYTES = 524_288 * 4096
ZN540_ZONE_CAP_BYTES = 275_712 * 4096
#: active (and open) zones: 14 (exact, the ZNS-Study README; westerndigitalcorporation/zenfs#168)
ZN540_ACTIVE_ZONES = 14
#: the dies: fitted (the depth sweep's die collisions; see the module)
ZN540_DIES = 32
#: flash channels (recalled: an enterprise controller of its class has 8; 4 dies per channel)
ZN540_CHANNELS = 8
#: BiCS4 TLC: 16 KiB pages, 4 planes per die (recalled, 3D TLC rules of thumb)
ZN540_PAGE_BYTES = 16_384
ZN540_PLANES = 4
#: one die's multi-plane program (4 planes x a 16 KiB page), and its time (fitted: the 16 KiB
#: writes' 1.2 GB/s ceiling)
ZN540_PROGRAM_BYTES = ZN540_PLANES * ZN540_PAGE_BYTES
ZN540_TPROG_NS = 1_750_000.0
#: tR of the MSB page (fitted: the QD1 4 KiB read latency), LSB and CSB in FEMU's TLC ratios
ZN540_MSB_READ_NS = 74_000.0
#: one channel's rate, GB/s (fitted: the QD1 4 -> 16 KiB read latency step)
ZN540_CHANNEL_GB_S = 0.5
#: the controller's share of a read (FTL lookup, ECC decode), ns (estimate: a few us)
ZN540_CTRL_READ_NS = 4_000.0
#: FEMU's TLC page-type read times, us (exact: FEMU's nand.h, from the SimpleSSD paper)
_FEMU_TLC_READ_US = (56.5, 77.5, 106.0)


def zn540_media() -> MediaConfig:
    """The ZN540's BiCS4 TLC on its 8 channels (values and tags in :data:`ZN540_SOURCES`)."""
    read = tuple(round(x / _FEMU_TLC_READ_US[2] * ZN540_MSB_READ_NS, -1) for x in _FEMU_TLC_READ_US)
    return MediaConfig(
        cell="tlc",
        channels=ZN540_CHANNELS,
        planes_per_die=ZN540_PLANES,
        page_bytes=ZN540_PAGE_BYTES,
        channel_gb_s=ZN540_CHANNEL_GB_S,
        read_ns=read,
        program_ns=(1.0, 1.0, 1.0),  # one-shot programs: every page type the same time (recalled)
    )


def zn540(**kw) -> DeviceConfig:
    """Western Digital Ultrastar DC ZN540 as Doekemeijer et al. measured it (CLUSTER'23); the module
    says what was fitted to what."""
    program_gb_s = ZN540_DIES * ZN540_PROGRAM_BYTES / ZN540_TPROG_NS  # bytes per ns = GB/s
    media = zn540_media()
    read_base_ns = ZN540_CTRL_READ_NS + media.mean_read_ns + media.transfer_ns(4096)
    cfg: dict[str, Any] = dict(
        model="WD Ultrastar DC ZN540",
        readahead=ReadAheadConfig(),
        capacity_bytes=ZN540_ZONES * ZN540_ZONE_BYTES,
        media=media,
        # with media: the controller's share is what is left of base_ns after mean tR and the 4 KiB
        # transfer; per_kib_ns 0: a read's bytes beyond 4 KiB cost their channel transfer alone
        read=ServiceConfig(base_ns=read_base_ns, per_kib_ns=0.0),
        write=ServiceConfig(base_ns=3_200.0, per_kib_ns=110.0, sd_ns=300.0),
        firmware=FirmwareConfig(read_ns=2_200.0, write_ns=5_400.0, append_ns=7_600.0, cv=1.0),
        datapath=DataPathConfig(count=1, read_gb_s=2.6, write_gb_s=2.6),
        # a 4 KiB write's share of a die's program: tPROG x 4 KiB / 64 KiB
        write_cache_program_ns=ZN540_TPROG_NS * 4096 / ZN540_PROGRAM_BYTES,
        write_buffer=WriteBufferConfig(
            size_bytes=(ZN540_DIES + ZN540_ACTIVE_ZONES) * ZN540_PROGRAM_BYTES, program_gb_s=program_gb_s
        ),
        parallel_units=ZN540_DIES,
        unit_stripe_bytes=ZN540_PAGE_BYTES,
        link_gb_s=3.5,
        fetch_ns=300.0,
        post_ns=300.0,
        idle_w=5.0,
        active_read_w=12.0,
        active_write_w=12.0,
        zoned=ZonedConfig(
            zone_size_bytes=ZN540_ZONE_BYTES,
            zone_capacity_bytes=ZN540_ZONE_CAP_BYTES,
            max_open_zones=ZN540_ACTIVE_ZONES,
            max_active_zones=ZN540_ACTIVE_ZONES,
            stripe_width=ZN540_DIES,
            stripe_unit_bytes=ZN540_PROGRAM_BYTES,
        ),
    )
    cfg.update(kw)
    return DeviceConfig(**cfg)


#: the sources of the preset's values (docs/presets.md), besides the read-ahead's and front end's
ZN540_SOURCES = {
    "model": "exact: WD Ultrastar DC ZN540 (Doekemeijer et al., IEEE CLUSTER 2023)",
    "capacity_bytes": "exact: 904 zones of 2 GiB (the CLUSTER'23 logs' header)",
    "zoned": "exact: zone size and capacity (log header), 14 active zones (ZNS-Study README); open zones as"
    " many (estimate); reset times the paper's medians, spent as erases on the zone's dies; a finish programs"
    " the padding there (tPROG, fitted); stripe width all 32 dies (fitted: one zone's reads reach 437K IOPS"
    " and its writes the device's 1.2 GB/s, CLUSTER'23), 64 KiB per die (derived: one multi-plane program)",
    "media": "derived: BiCS4 96-layer TLC (exact: AnandTech on the ZN540); 16 KiB pages, 4 planes (recalled, 3D TLC"
    " rules of thumb); 8 channels (recalled); tR of the MSB page 74 us (fitted: the QD1 4 KiB read latency,"
    " 72.6 us SPDK, less front end, firmware, a 4 us controller share (estimate), the channel transfer, data"
    " path and link), LSB/CSB in FEMU's TLC ratios (exact, nand.h); channel 0.5 GB/s (fitted: the QD1 4 -> 16"
    " KiB read latency step, 29 us, less the data path's and link's share; BiCS4's interface is rated higher,"
    " recalled 800 MT/s: the controller's channels run slower or the step holds ECC work); programs one-shot"
    " (recalled); suspend of programs and erases for reads with MQSim's latencies (exact, ssdconfig.xml)",
    "read": "derived: the controller's share 4 us (estimate) + mean tR + a 4 KiB channel transfer; no time per"
    " KiB beyond the channel's",
    "write": "derived: fitted, the buffer's acknowledgement from the QD1 4 and 16 KiB write latencies (11.4, 16.3 us,"
    " SPDK) less firmware, link and front end (CLUSTER'23)",
    "firmware": "derived: fitted, one core, read 2.2 / write 5.4 / append 7.6 us per command (exponential), from the"
    " 4 KiB ceilings (437K reads in one zone, 186K writes over 4-14 zones, 132K appends) and the 2-4 zone"
    " writes (CLUSTER'23)",
    "datapath": "derived: fitted, one path of 2.6 GB/s, from the 8/16 KiB read ceiling (SPDK 296K/160K IOPS,"
    " io_uring 291K/149K: CLUSTER'23)",
    "write_cache_program_ns": "derived: a 4 KiB write's share of a die's 1.75 ms program of 64 KiB",
    "write_buffer": "derived: fitted, tPROG 1.75 ms per 64 KiB (4 planes x 16 KiB, recalled) on 32 dies = 1.2 GB/s,"
    " the 16 KiB writes' ceiling at any depth and zone count (CLUSTER'23); size one program unit per die"
    " in flight (estimate, MQSim's one page per plane) and one 64 KiB stripe unit being gathered for each of"
    " the 14 active zones (estimate: per-zone write buffers are the resources behind the active-zone limit,"
    " recalled; with the dies' share alone, the zones' partial units starved the programs: 16 KiB writes to"
    " 14 zones 21% short of the measured ceiling)",
    "parallel_units": "derived: fitted, 32 dies (4 on each of 8 channels), from the growth of the one-zone read"
    " latency with depth (CLUSTER'23)",
    "unit_stripe_bytes": "derived: the NAND page (a conventional namespace's pages go to the dies in turn)",
    "link_gb_s": "estimate: PCIe 3.0 x4 usable",
    "idle_w": "estimate: a U.2 enterprise drive's envelope",
    "active_read_w": "estimate: a U.2 enterprise drive's envelope",
    "active_write_w": "estimate: a U.2 enterprise drive's envelope",
}
