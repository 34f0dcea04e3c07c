"""SSD presets with cited values.

Sources (see docs/ssd.md):
- [REF5] datasheets and reviews: Optane
  read service ~6-7 us at 4 KiB, 550K/500K 4 KiB random read/write IOPS, QD16 585K IOPS at 25.5 us
  (P4800X), 5 W idle, ~8 W reading, 13 W writing; P3700 ~80 us 4 KiB reads with large variance;
  PM1743 2.5M / 250K IOPS, 13.0 / 6.6 GB/s, up to 25 W.
- [CI] Tai et al., ACM TOS 2022 (scenarios/data/reference/calibrated_interrupts.yaml): P3700 sync read 80 +- 29 us.
- PCIe 3.0 x4 usable ~3.5 GB/s; PCIe 5.0 x4 ~14 GB/s.
- [REF5b] device internals (reviews): the Optane controller has 7 channels; the 375 GB P4800X
  carries 28 dies of 128 Gb 3D XPoint, four per channel; P4800X sequential 2.4 / 2.0 GB/s.
Optane presets: media units are die ranks (a command striped over the channels), the data path is
the channels' sequential rate. NAND presets: ``parallel_units`` follows from Little's law (units =
saturation IOPS x service time) and no data path stage is modelled (no sourced channel rates).
"""

from __future__ import annotations

from models.ssd.config import DataPathConfig, DeviceConfig, FtlConfig, ServiceConfig, ZonedConfig


def _optane(model: str, read_sd_ns: float, write_sd_ns: float, ranks: int, **kw) -> DeviceConfig:
    """The 3D XPoint controller family (900P, P4800X, P4801X) over PCIe 3.0 x4 [REF5]. One 7-channel
    controller; the controller stripes each command's data over the channels, so a 4 KiB command
    occupies one die on each channel (a rank: the media unit) and the channels move data as one
    path at the drive's sequential rates, 2.4 GB/s read and 2.0 GB/s write (P4800X datasheet).
    Those rates are the random 4 KiB ceilings too (550-585K reads x 4 KiB = 2.25-2.4 GB/s, 500K
    writes x 4 KiB = 2.0 GB/s): the bound is bytes, not commands. Media + controller time per
    command ~4.5 us read, ~5 us write at 4 KiB (refined by the platforms' calibrations); PCIe and
    NVMe transactions (fetch, post, link) make up the rest of the ~6-7 us device time. 5 W idle,
    ~8 W reading, 13 W writing."""
    cfg = dict(
        model=model,
        read=ServiceConfig(base_ns=4_500.0, per_kib_ns=0.0, sd_ns=read_sd_ns),
        write=ServiceConfig(base_ns=5_100.0, per_kib_ns=0.0, sd_ns=write_sd_ns),
        parallel_units=ranks,
        datapath=DataPathConfig(count=1, read_gb_s=2.4, write_gb_s=2.0),
        link_gb_s=3.5,
        fetch_ns=250.0,
        post_ns=250.0,
        idle_w=5.0,
        active_read_w=8.0,
        active_write_w=13.0,
    )
    cfg.update(kw)
    return DeviceConfig(**cfg)


def optane_900p(**kw) -> DeviceConfig:
    """Intel Optane SSD 900P 280 GB (consumer card, low service-time variance; 280 GB, the smaller of
    its two capacities, product specification). Three ranks: three quarters of the 375 GB P4800X's
    28 dies (four per channel) by capacity, so three dies per channel (an estimate)."""
    return _optane("Intel Optane SSD 900P", 350.0, 450.0, 3, **{"capacity_bytes": 280_000_000_000, **kw})


def optane_p4800x(**kw) -> DeviceConfig:
    """Intel Optane DC P4800X 375 GB: QD1 mean 8.9 us end to end, QD16 585K IOPS at 25.5 us [REF5];
    service-time variance refined by the calibrated-interrupts platform. 28 dies of 128 Gb, four per
    channel [REF5]: four ranks. 32 I/O queue pairs (the controller's Number of Queues, Get Features
    07h; the issue #30 brief's figure [recalled, not re-checked against an ``nvme get-feature -f 7``
    dump]): a host of more than 32 CPUs shares them (:mod:`models.os.queue_map`)."""
    return _optane(
        "Intel Optane DC P4800X",
        900.0,
        1_000.0,
        4,
        **{"capacity_bytes": 375_000_000_000, "max_queue_pairs": 32, **kw},
    )


def optane_p4801x(**kw) -> DeviceConfig:
    """Intel Optane DC P4801X (M.2 / U.2 cache drive, same 3D XPoint controller family as P4800X);
    capacity: the 375 GB U.2 model (100 and 200 GB exist too: set ssd.capacity_bytes)."""
    base = optane_p4800x().model_dump()
    base.update(model="Intel Optane DC P4801X")
    base.update(kw)
    return DeviceConfig(**base)


def p3700(**kw) -> DeviceConfig:
    """Intel DC P3700 400 GB (MLC NAND, PCIe 3.0 x4): ~80 us 4 KiB reads, sd ~29 us [CI];
    450K random-read IOPS (datasheet) at ~78 us -> 36 units; writes land in the DRAM buffer."""
    cfg = dict(
        model="Intel DC P3700",
        capacity_bytes=400_000_000_000,
        read=ServiceConfig(base_ns=76_000.0, per_kib_ns=400.0, sd_ns=28_000.0),
        write=ServiceConfig(base_ns=18_000.0, per_kib_ns=200.0, sd_ns=3_000.0),
        # 75K sustained 4 KiB random-write IOPS (datasheet, 400 GB) with 36 units: ~460 us per program
        write_cache_program_ns=460_000.0,
        parallel_units=36,
        link_gb_s=2.8,
        fetch_ns=300.0,
        post_ns=300.0,
        idle_w=4.0,
        active_read_w=11.0,
        active_write_w=20.0,
    )
    cfg.update(kw)
    return DeviceConfig(**cfg)


def pm1743(**kw) -> DeviceConfig:
    """Samsung PM1743 3.84 TB (TLC NAND, PCIe 5.0 x4): 2.5M 4 KiB random-read IOPS at ~75 us
    -> ~190 units; 13 GB/s; up to 25 W, idle ~4.6 W (16 drives = 74 W idle in SANDMAN)."""
    cfg = dict(
        model="Samsung PM1743",
        capacity_bytes=3_840_000_000_000,
        read=ServiceConfig(base_ns=72_000.0, per_kib_ns=300.0, sd_ns=20_000.0),
        write=ServiceConfig(base_ns=20_000.0, per_kib_ns=150.0, sd_ns=4_000.0),
        # 250K sustained 4 KiB random-write IOPS [REF5] with 190 units: ~740 us per program
        write_cache_program_ns=740_000.0,
        parallel_units=190,
        link_gb_s=13.0,
        fetch_ns=200.0,
        post_ns=200.0,
        max_queue_pairs=128,
        idle_w=4.6,
        active_read_w=18.5,
        active_write_w=25.0,
    )
    cfg.update(kw)
    return DeviceConfig(**cfg)


#: the ZN540 namespace the CLUSTER'23 measurements used (log header, exact): 904 zones of 524,288
#: LBAs of 4 KiB (2 GiB), each with a capacity of 275,712 LBAs (1,129,316,352 bytes = ~1077 MiB)
ZN540_ZONES = 904
ZN540_ZONE_BYTES = 524_288 * 4096
ZN540_ZONE_CAP_BYTES = 275_712 * 4096


def zn540(**kw) -> DeviceConfig:
    """Western Digital Ultrastar DC ZN540, a ZNS SSD (TLC NAND, PCIe 3.0 x4 U.2), as Doekemeijer
    et al. measured it (IEEE CLUSTER 2023, raw SPDK logs in stonet-research/NVMeBenchmarks):

    - geometry (exact, log header): 904 zones of 2 GiB, zone capacity 1,129,316,352 bytes; the
      namespace's address space is the zones' (fio's size=100%);
    - 14 active zones (exact: "since we have 14 maximum active zones", ZNS-Study README); open
      zones: the datasheet was not found, so as many as active ones (estimate);
    - reset and finish times (the ZonedConfig defaults): the paper's medians;
    - writes: one zone takes 1146 MiB/s at any depth (1.2 GB/s, derived); SPDK 4 KiB writes at QD1
      11.4 us, appends 14.8 us, appends saturating at 132K IOPS per zone: service ~7.4 us after fetch,
      link and zone stage (derived; the write is acknowledged from the controller's buffer);
    - reads, units, link, power: not measured there and no datasheet figure found; estimates: TLC
      reads ~75 us like the other NAND presets, PCIe 3.0 x4 (3.5 GB/s usable), 64 units,
      5 W idle, 12 W active (a U.2 enterprise drive's envelope)."""
    cfg = dict(
        model="WD Ultrastar DC ZN540",
        capacity_bytes=ZN540_ZONES * ZN540_ZONE_BYTES,
        read=ServiceConfig(base_ns=75_000.0, per_kib_ns=300.0, sd_ns=15_000.0),
        write=ServiceConfig(base_ns=7_400.0, per_kib_ns=0.0, sd_ns=500.0),
        parallel_units=64,
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
            zone_write_gb_s=1.2,
            append_extra_ns=4_200.0,
        ),
    )
    cfg.update(kw)
    return DeviceConfig(**cfg)


def pm1743_gc(**kw) -> DeviceConfig:
    """The PM1743 with its FTL's garbage collection modelled: 3.84 TB of user space on 4 TiB of
    NAND, so 14.5% over-provisioning (4,398 / 3,840 - 1, derived; the raw NAND of a 3.84 TB
    enterprise drive is 4 TiB [recalled]); blocks of 256 pages, 3 ms erases (estimates).

    The datasheet's 250K random-write IOPS are a steady-state figure: garbage collection is in
    them, and :func:`pm1743` folds it into its program time (740 us per 4 KiB per unit, 190 units).
    Here the copies and erases are modelled, so the program time is what is left of those 760 us
    per host write (190 units / 250K) in steady state: uniform random 4 KiB writes reach a write
    amplification of 4.15 in this FTL (greedy, 1 GiB span, 14.5% spare; measured on the model),
    so each host write costs its program, 3.15 copies (a 72 us read and a program each) and 4.15 /
    256 erases of 3 ms: 760 = 4.15 p + 3.15 x 72 + 48.6, p = 117 us (derived). A fresh (or
    briefly written) drive is faster until its spare blocks are used up."""
    return pm1743(**{"ftl": FtlConfig(enabled=True, spare_fraction=0.145), "write_cache_program_ns": 117_000.0, **kw})


SSD_PRESETS = {
    "optane-900p": optane_900p,
    "optane-p4800x": optane_p4800x,
    "optane-p4801x": optane_p4801x,
    "p3700": p3700,
    "pm1743": pm1743,
    "pm1743-gc": pm1743_gc,
    "zn540": zn540,
}
