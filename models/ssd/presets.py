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

The catalogue presets after the first five (:data:`SSD_CATALOGUE`, docs/presets.md) are derived
from their datasheet figures by :func:`from_datasheet`, which writes each derivation into the
value's source (:mod:`simcore.sources`).
"""

from __future__ import annotations

from models.ssd.config import DataPathConfig, DeviceConfig, FtlConfig, PowerStateConfig, ServiceConfig
from models.ssd.controller_config import ReadAheadConfig, SlcCacheConfig, WriteBufferConfig
from models.ssd.media import MediaConfig
from models.ssd.preset_zn540 import ZN540_SOURCES, zn540
from simcore.sources import Preset

#: the flash controllers' read-ahead (every flash preset's; the 3D XPoint presets have none)
FLASH_READAHEAD = ReadAheadConfig()
READAHEAD_SOURCE = (
    "estimate: a flash controller's read-ahead of sequential streams, the model's defaults"
    " (ReadAheadConfig: hit 2 us derived from Memblaze's 5.96 us QD1 hit vs 56.95 us without [exact,"
    " memblaze.com news 790], Intel P4500 10 us sequential vs 85-115 us random [exact, Lenovo guide];"
    " 4 streams, prefetch from the 2nd contiguous read, 16 KiB chunks, a 1 MiB window [estimates])"
)

#: a flash controller's DRAM write buffer per media unit (die), bytes: MQSim's back-pressure rule
#: (write-back in flight up to one page per plane, exact: SSD_Device.cpp:339) on 3D TLC geometry (16
#: KiB pages, 4 planes per die, recalled rules of thumb), twice: a die's next multi-plane program
#: gathers while one is in flight (double buffering, estimate): 128 KiB per die
BUFFER_BYTES_PER_UNIT = 2 * 4 * 16_384


def write_buffer(units: int, program_gb_s: float) -> WriteBufferConfig:
    """The flash presets' DRAM write buffer: :data:`BUFFER_BYTES_PER_UNIT` per media unit, flushed at
    the sequential write rate ``program_gb_s``."""
    return WriteBufferConfig(size_bytes=units * BUFFER_BYTES_PER_UNIT, program_gb_s=program_gb_s)


def write_buffer_source(units: int, rate_source: str) -> str:
    """The source of :func:`write_buffer`'s size and program rate."""
    return (
        f"estimate: size_bytes = {units} dies x 128 KiB = {units * BUFFER_BYTES_PER_UNIT:,}, MQSim's back-pressure"
        " rule (one page per plane in flight, exact: SSD_Device.cpp:339) on 3D TLC geometry (16 KiB pages,"
        " 4 planes per die, recalled), doubled so a die's next multi-plane program gathers while one is in"
        f" flight; no datasheet gives the write buffer's size. program_gb_s: the"
        f" sequential write rate ({rate_source})"
    )


#: the 980 PRO 1 TB's SLC cache (Samsung's figures): 42 GB of TurboWrite, then 2,000 MB/s
SLC_980PRO = SlcCacheConfig(size_bytes=42_000_000_000, native_write_gb_s=2.0)
SLC_980PRO_SOURCE = (
    "exact: 42 GB TurboWrite cache on the 1 TB (6 GB static + 36 GB dynamic, unofficial split), 2,000 MB/s"
    " sequential writes after it (Samsung's figures: notebookcheck.com 490845, hardwareluxx); measured on"
    " a fresh drive: 113 GB at 4 GB/s, then ~1.5 GB/s while folding (techpowerup, reproduced by ankmax)"
)
SLC_CLIENT_SOURCE = (
    "estimate: the 980 PRO 1 TB's figures (42 GB, then 2,000 MB/s: exact, notebookcheck.com 490845),"
    " a client TLC drive of its class; no figure for this drive in the sources"
)


#: FEMU's TLC page-type read times (exact: FEMU's nand.h, from the SimpleSSD paper): LSB/CSB/MSB
#: 56.5 / 77.5 / 106 us; the presets keep these ratios, scaled
FEMU_TLC_READ_US = (56.5, 77.5, 106.0)
_ONE_SHOT = ", programs one-shot (a 3D TLC wordline's three pages at once, recalled)"
_SUSPEND_SRC = (
    "suspend of programs and erases for reads: 3D NAND supports it and controllers use it to serve reads"
    " (recalled, the reference sheet's rules of thumb); suspend latencies MQSim's defaults, program 100 us,"
    " erase 700 us (exact, ssdconfig.xml); resume cost none (MQSim, exact)"
)


#: 3D TLC programs a wordline's three pages at once (one-shot programming, recalled): one program
#: time for every page type (the buffer's programs keep their calibrated mean time)
ONE_SHOT_PROGRAM_NS = (1.0, 1.0, 1.0)


def _tlc(msb_read_us: float, channel_gb_s: float) -> MediaConfig:
    """3D TLC media: FEMU's page-type read ratios with the slowest (MSB) read at ``msb_read_us``,
    one-shot programs."""
    read = tuple(round(x / FEMU_TLC_READ_US[2] * msb_read_us * 1e3, -1) for x in FEMU_TLC_READ_US)
    return MediaConfig(cell="tlc", read_ns=read, program_ns=ONE_SHOT_PROGRAM_NS, channel_gb_s=channel_gb_s)


#: NAND generations: (media, source), channels set per preset (:func:`with_media`)
NAND: dict[str, tuple[MediaConfig, str]] = {
    "samsung-v5": (
        _tlc(50.0, 1.4),
        "exact: Samsung V5 96L TLC tR 50 us, Toggle DDR 4.0 1.4 Gb/s (Samsung press release 2018); tR taken"
        " as the MSB page's",
    ),
    "samsung-v6": (
        _tlc(45.0, 1.2),
        "recalled: Samsung V6 128L TLC tR ~45 us, 1.2 Gb/s (ISSCC 2019); tR taken as the MSB page's",
    ),
    "samsung-v7": (
        _tlc(40.0, 2.0),
        "recalled: Samsung V7 176L TLC tR ~40 us, 2.0 Gb/s (ISSCC 2021); tR taken as the MSB page's",
    ),
    "micron-176l": (
        _tlc(45.0, 1.6),
        "exact: Micron 176L ONFI 1600 MT/s (electronicdesign.com 21148162); tR estimate: 45 us MSB, as"
        " the other 17x-layer parts (Micron gives -35% vs its 128L, no absolute figure)",
    ),
    "bics4": (
        _tlc(50.0, 0.8),
        "estimate: Kioxia/WD BiCS4 96L TLC, as Samsung's 96L V5 (tR 50 us MSB, exact for V5); interface"
        " 800 MT/s (the 64-128L range 800-1200, recalled: the lower end)",
    ),
    "bics5": (
        _tlc(45.0, 1.2),
        "estimate: Kioxia/WD BiCS5 112L TLC, as 128L parts (tR 45 us MSB, 1200 MT/s: recalled ranges)",
    ),
    "intel-144l": (
        _tlc(50.0, 1.2),
        "estimate: Intel 144L TLC (floating gate, slower reads than charge-trap parts: recalled), tR 50 us"
        " MSB, 1200 MT/s",
    ),
    "imft-mlc-20nm": (
        MediaConfig(
            cell="mlc",
            read_ns=(40_000.0, 65_000.0),
            program_ns=(500_000.0, 1_300_000.0),
            channel_gb_s=0.4,
            page_bytes=16_384,
            planes_per_die=2,
        ),
        "exact: SimpleSSD's MLC (sample.cfg: LSB/MSB read 40 / 65 us, write 500 / 1300 us, 16 KiB pages,"
        " 2 planes, 400 MT/s channels) for the P3700's 20 nm MLC (its own timings not in the sources)",
    ),
}


#: where a client drive's read ratings come from (the reference sheet's rule for vendor figures)
RATED_IN_SLC_SOURCE = (
    "exact, the reference's rule for vendor figures: client ratings are 'on a fresh drive, inside the SLC cache'"
)
#: pSLC's array read time (MediaConfig.slc_read_ns' default)
PSLC_READ_SOURCE = "recalled: SLC-mode (pSLC) on a TLC die tR 25-35 us, the midpoint 30 us"

STRIPE_SOURCE = (
    "derived: the NAND page (media.page_bytes): the FTL stripes pages over the dies in turn (MQSim's CWDP"
    " allocation, exact)"
)


def media_source(gen: str, channels: int, channel_source: str) -> str:
    """The source of the NAND generation ``gen``'s media on ``channels``."""
    media, src = NAND[gen]
    return (
        f"{src}; read page types in FEMU's ratios (exact, nand.h){'' if media.cell == 'mlc' else _ONE_SHOT};"
        f" {channels} channels ({channel_source}); dies ="
        f" the parallel units; {media.page_bytes // 1024} KiB pages, {media.planes_per_die} planes per die"
        f" (recalled rules of thumb); {_SUSPEND_SRC}; pSLC's tR {media.slc_read_ns / 1e3:g} us for data in the"
        f" SLC cache (reads_from_slc; {PSLC_READ_SOURCE}); the controller's share of a read is what"
        " read.base_ns leaves (derived)"
    )


def with_media(values: dict, sources: dict, gen: str, channels: tuple[int, str]) -> None:
    """Put the NAND generation ``gen``'s media on ``channels`` (count, source) into a preset's values."""
    values["media"] = NAND[gen][0].model_copy(update={"channels": channels[0]})
    sources["media"] = media_source(gen, *channels)
    values["unit_stripe_bytes"] = NAND[gen][0].page_bytes
    sources["unit_stripe_bytes"] = STRIPE_SOURCE


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
    dump]): a host of more than 32 CPUs shares them (:mod:`models.os.block.queue_map`)."""
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
    450K random-read IOPS (datasheet) with each read's die busy 62.7 us (mean tR of SimpleSSD's MLC
    52.5 us + a 4 KiB channel transfer at 400 MT/s 10.2 us) -> 28 dies (Little's law); writes land in
    the DRAM buffer."""
    cfg = dict(
        model="Intel DC P3700",
        readahead=FLASH_READAHEAD,
        capacity_bytes=400_000_000_000,
        read=ServiceConfig(base_ns=76_000.0, per_kib_ns=400.0),
        write=ServiceConfig(base_ns=18_000.0, per_kib_ns=200.0, sd_ns=3_000.0),
        # 75K sustained 4 KiB random-write IOPS (datasheet, 400 GB), flushed to 28 dies in turn: 373 us each
        write_cache_program_ns=373_000.0,
        write_buffer=write_buffer(28, 1.9),
        parallel_units=28,
        media=NAND["imft-mlc-20nm"][0].model_copy(update={"channels": 18}),
        unit_stripe_bytes=16_384,
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
    -> ~94 dies, each busy 37.4 us per read (Samsung V6's mean tR 34 us + a 4 KiB channel transfer at
    1.2 GB/s 3.4 us, :data:`NAND`); 13 GB/s; up to 25 W, idle ~4.6 W (16 drives = 74 W idle in SANDMAN)."""
    cfg = dict(
        model="Samsung PM1743",
        readahead=FLASH_READAHEAD,
        capacity_bytes=3_840_000_000_000,
        read=ServiceConfig(base_ns=72_000.0, per_kib_ns=300.0),
        write=ServiceConfig(base_ns=20_000.0, per_kib_ns=150.0, sd_ns=4_000.0),
        # 250K sustained 4 KiB random-write IOPS [REF5], flushed to 94 dies in turn: 376 us each
        write_cache_program_ns=376_000.0,
        write_buffer=write_buffer(94, 6.6),
        parallel_units=94,
        media=NAND["samsung-v6"][0].model_copy(update={"channels": 16}),
        unit_stripe_bytes=16_384,
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


def pm1743_gc(**kw) -> DeviceConfig:
    """The PM1743 with its FTL's garbage collection modelled: 3.84 TB of user space on 4 TiB of
    NAND, so 14.5% over-provisioning (4,398 / 3,840 - 1, derived; the raw NAND of a 3.84 TB
    enterprise drive is 4 TiB [recalled]); blocks of 256 pages, 3 ms erases (estimates).

    The datasheet's 250K random-write IOPS are a steady-state figure: garbage collection is in
    them, and :func:`pm1743` folds it into its program time (376 us per 4 KiB per die, 94 dies).
    Here the copies and erases are modelled, so the program time is what is left of those 376 us
    per host write (94 dies / 250K) in steady state: uniform random 4 KiB writes reach a write
    amplification of 4.15 in this FTL (greedy, 1 GiB span, 14.5% spare; measured on the model),
    so each host write costs its program, 3.15 copies (a 72 us read and a program each) and 4.15 /
    256 erases of 3 ms: 376 = 4.15 p + 3.15 x 72 + 48.6, p = 24.2 us (derived; the amplification was
    measured with 190 units and 760 us, not re-measured). A fresh (or
    briefly written) drive is faster until its spare blocks are used up.

    Flexible data placement: 8 reclaim unit handles. Samsung showed FDP on the PM1743 (its FDP
    firmware, with Meta's CacheLib, 2023) [recalled]; the number of handles is an estimate, the 8
    that fio's ``uring-cmd-fdp.fio`` asks for ("at least 8 available reclaim units"). Writes without
    a placement handle use handle 0, so runs without FDP are as before."""
    ftl = FtlConfig(enabled=True, spare_fraction=0.145, placement_handles=8)
    return pm1743(**{"ftl": ftl, "write_cache_program_ns": 24_200.0, **kw})


# ---------------------------------------------------------------------------------------------------
# The catalogue: device parameters derived from datasheet figures, each with its source.

#: usable PCIe x4 data rate by generation, GB/s, and how it follows from the link's raw rate
PCIE_X4: dict[int, tuple[float, str]] = {
    3: (3.5, "estimate: PCIe 3.0 x4 usable, as the other presets (3.94 GB/s raw x ~0.9 packet efficiency)"),
    4: (
        7.5,
        "derived: PCIe 4.0 x4 = 16 GT/s x 4 x 128/130 / 8 = 7.88 GB/s raw x ~0.95 packet efficiency"
        " (512 B max payload) = 7.5",
    ),
    5: (15.0, "derived: PCIe 5.0 x4 = 15.75 GB/s raw x ~0.95 packet efficiency = 15.0"),
}
#: commands in flight at which a datasheet's "up to" random IOPS are reached. Estimate: vendors
#: measure them at QD32 with 4-16 jobs (128-512 commands); the upper end
DATASHEET_DEPTH = 512
_FRONT = "estimate: about one PCIe round trip, as the other presets ({:g} ns)"
_READ_CV = 0.25
_WRITE_CV = 0.2


def _xfer_ns(rate_gb_s: float, link_gb_s: float) -> float:
    """A 4 KiB transfer through the data path and the link, cut through: the slower one's time, ns."""
    return 4096 / min(rate_gb_s, link_gb_s)


# long: the docstring lists each step of the derivation
def from_datasheet(
    ds: dict,
    *,
    cached_writes: bool = True,
    flash: bool = True,
    cv: tuple[float, float] = (_READ_CV, _WRITE_CV),
    nand: tuple[str, tuple[int, str]] | None = None,
    rated_in_slc: bool = False,
):
    """Device parameters and their sources from datasheet figures ``ds`` (``name: (value, source)``):
    model, capacity_bytes, pcie_gen, seq_read_gb_s / seq_write_gb_s (128 KiB sequential),
    rand_read_iops / rand_write_iops (4 KiB random, the "up to" figures at high depth),
    read_latency_us / write_latency_us (QD1 4 KiB typical latency, taken as the device's time from
    doorbell to completion entry), idle_w, active_read_w, active_write_w; optional power_states.

    The derivation (written into each value's source):

    - the link: the PCIe generation's usable x4 rate (:data:`PCIE_X4`);
    - the data path: one path at the datasheet's sequential rates (the controller's channels as one
      pipe, as the Optane presets): it bounds large transfers, and 4 KiB commands cross it in
      4096 / rate ns;
    - ``read.base_ns`` = read latency - fetch - post - 4 KiB transfer: the QD1 latency's share that
      is the media and the controller;
    - ``parallel_units``: random-read IOPS x ``read.base_ns`` units are busy at the datasheet's
      figure (Little's law), but commands at random addresses collide on units, so ``N`` commands
      in flight keep only N / (N + U - 1) of U units busy (a closed network with random routing,
      docs/ssd.md); U = busy x (N - 1) / (N - busy) reaches the figure at
      :data:`DATASHEET_DEPTH` commands in flight;
    - ``write.base_ns`` = write latency - fetch - post - 4 KiB transfer (the write buffer's ack);
    - ``cached_writes`` (flash with a DRAM write buffer): ``write_cache_program_ns`` = units /
      random-write IOPS: the buffer flushes to the units in turn (the write frontier), so sustained
      random writes keep every unit busy and come out at the datasheet's figure; the buffer programs
      at the sequential write rate (``write_buffer.program_gb_s``), so large writes are bounded by
      it; otherwise the write ceiling is the units' and the data path's;
    - service-time spread: ``cv`` of the base (estimates: no datasheet gives one; the PM1743 preset's
      read spread is 28%).
    - ``flash``: the controller's read-ahead (:data:`FLASH_READAHEAD`; 3D XPoint has none);
    - ``nand`` (generation, (channels, source)): the NAND media (:data:`NAND`, :func:`with_media`); the
      units are its dies, each busy for a read's mean tR and 4 KiB channel transfer (the controller's
      share is not die time), so that time sets the units by Little's law; the read spread comes
      from the media, not from ``cv``;
    - ``rated_in_slc`` (client drives, with ``nand``): the read ratings were measured on a fresh drive
      inside the SLC cache (:data:`RATED_IN_SLC_SOURCE`), so each rated read took pSLC's tR
      (``media.slc_read_ns``), not the cells' page-type mean: the units follow from that die time,
      and ``read.base_ns`` is the QD1 latency's share with pSLC's tR replaced by the mean page-type
      tR, the filled drive's read (the controller's share is the same in both states). The preset
      models the filled drive; ``media.reads_from_slc`` gives back the rating's state.
    Returns (values, sources) for :class:`~models.ssd.config.DeviceConfig`."""
    v = {k: val for k, (val, _) in ds.items()}
    src = {k: s for k, (_, s) in ds.items()}
    link, link_src = PCIE_X4[v["pcie_gen"]]
    front = 200.0 if v["pcie_gen"] >= 5 else 250.0
    x_r, x_w = _xfer_ns(v["seq_read_gb_s"], link), _xfer_ns(v["seq_write_gb_s"], link)
    read_ns = round(v["read_latency_us"] * 1e3 - 2 * front - x_r)
    write_ns = round(v["write_latency_us"] * 1e3 - 2 * front - x_w)
    if rated_in_slc and nand is None:
        raise ValueError(f"{v['model']}: rated_in_slc needs the NAND media (nand=)")
    die_ns, die_src = _unit_ns(nand, v["rand_read_iops"], read_ns, rated_in_slc)
    rated_read_ns = read_ns
    if rated_in_slc:  # the filled drive's read: the cells' mean tR where the rating's read took pSLC's
        media = NAND[nand[0]][0]
        read_ns = round(read_ns - media.slc_read_ns + media.mean_read_ns)
    busy = v["rand_read_iops"] * die_ns * 1e-9  # units busy at the ceiling (Little's law)
    if busy >= DATASHEET_DEPTH:
        raise ValueError(f"{v['model']}: {busy:.0f} commands busy at the datasheet's IOPS exceed {DATASHEET_DEPTH}")
    units = max(1, round(busy * (DATASHEET_DEPTH - 1) / (DATASHEET_DEPTH - busy)))
    values = {k: v[k] for k in ("model", "capacity_bytes", "idle_w", "active_read_w", "active_write_w")}
    values |= {
        "read": ServiceConfig(base_ns=read_ns)
        if nand
        else ServiceConfig(base_ns=read_ns, sd_ns=round(cv[0] * read_ns)),
        "write": ServiceConfig(base_ns=write_ns, sd_ns=round(cv[1] * write_ns)),
        "parallel_units": units,
        "datapath": DataPathConfig(count=1, read_gb_s=v["seq_read_gb_s"], write_gb_s=v["seq_write_gb_s"]),
        "link_gb_s": link,
        "fetch_ns": front,
        "post_ns": front,
    }
    sources = _derived_sources(v, src, cv, front=front, link_src=link_src, x_r=x_r, x_w=x_w)
    if rated_in_slc:
        media = NAND[nand[0]][0]
        sources["read.base_ns"] = (
            f"derived: {sources['read.base_ns'].removeprefix('derived: ')} = {rated_read_ns} ns, a read from"
            f" pSLC ({RATED_IN_SLC_SOURCE}); on the filled drive modelled the array time is the page types'"
            f" mean tR {media.mean_read_ns:.0f} ns instead of pSLC's {media.slc_read_ns:.0f} ({PSLC_READ_SOURCE}):"
            f" {read_ns} ns, a QD1 read {(read_ns - rated_read_ns) / 1e3:+.2f} us longer than the rating's"
        )
    sources["parallel_units"] = (
        f"derived: {v['rand_read_iops']:,.0f} random-read IOPS ({src['rand_read_iops']}) x {die_ns} ns{die_src} ="
        f" {busy:.1f} units busy (Little's law), reached at {DATASHEET_DEPTH} commands in flight at random"
        f" addresses: U = busy x (N - 1) / (N - busy) = {units}"
    )
    if cached_writes:
        _add_write_buffer(values, sources, units, v, src)
    _add_extras(values, sources, v, src, flash)
    if nand is not None:  # (the read spread comes from the media: page types, collisions, suspends)
        with_media(values, sources, *nand)
        del sources["read.sd_ns"]
    return values, sources


def _unit_ns(
    nand: tuple[str, tuple[int, str]] | None, iops: float, read_ns: int, in_slc: bool = False
) -> tuple[int, str]:
    """A unit's busy time per random 4 KiB read at ``iops`` and how it follows, ns: the read's
    service time, or with ``nand`` a die's mean tR (pSLC's tR when the rating read ``in_slc``), its
    4 KiB channel transfer and its wait for the channel (an M/D/1 queue: the die holds its data
    until it has crossed)."""
    if nand is None:
        return read_ns, ""
    media, channels = NAND[nand[0]][0], nand[1][0]
    xfer = media.transfer_ns(4096)
    rho = iops * xfer * 1e-9 / channels
    wait = rho * xfer / (2.0 * (1.0 - rho))
    tr, what = (media.slc_read_ns, "pSLC tR") if in_slc else (media.mean_read_ns, "mean tR")
    where = f", the rating's reads from the SLC cache ({RATED_IN_SLC_SOURCE}; {PSLC_READ_SOURCE})" if in_slc else ""
    return round(tr + xfer + wait), (
        f" (a die: {what} {tr:.0f} + 4 KiB channel transfer {xfer:.0f} + the M/D/1 wait"
        f" for its channel at {rho:.0%} load {wait:.0f}{where})"
    )


def _add_extras(values: dict, sources: dict, v: dict, src: dict, flash: bool) -> None:
    """A flash controller's read-ahead, and the datasheet's power states when it has them."""
    if flash:
        values["readahead"] = FLASH_READAHEAD
        sources["readahead"] = READAHEAD_SOURCE
    if "power_states" in v:
        values["power_states"] = v["power_states"]
        sources["power_states"] = src["power_states"]


def _derived_sources(v: dict, src: dict, cv, *, front: float, link_src: str, x_r: float, x_w: float) -> dict:
    """The sources of :func:`from_datasheet`'s values but the units: the datasheet's, and the arithmetic."""
    sources = {k: src[k] for k in ("model", "capacity_bytes", "idle_w", "active_read_w", "active_write_w")}
    lat = f"fetch - post ({2 * front:g} ns) - 4 KiB transfer"
    return sources | {
        "read.base_ns": f"derived: the QD1 read latency {v['read_latency_us']:g} us - {lat} ({x_r:.0f} ns)"
        f" ({src['read_latency_us']})",
        "write.base_ns": f"derived: the QD1 write latency {v['write_latency_us']:g} us - {lat} ({x_w:.0f} ns)"
        f" ({src['write_latency_us']})",
        "read.sd_ns": f"estimate: {cv[0]:g} x base (no datasheet gives a spread; the PM1743 preset's is 0.28)",
        "write.sd_ns": f"estimate: {cv[1]:g} x base (no datasheet gives a spread)",
        "datapath": f"derived: one path at the sequential rates, read {v['seq_read_gb_s']:g} GB/s"
        f" ({src['seq_read_gb_s']}), write {v['seq_write_gb_s']:g} GB/s ({src['seq_write_gb_s']})",
        "link_gb_s": link_src,
        "fetch_ns": _FRONT.format(front),
        "post_ns": _FRONT.format(front),
    }


def _add_write_buffer(values: dict, sources: dict, units: int, v: dict, src: dict) -> None:
    """The write buffer: its size, its program rate (the sequential write rate) and the time per
    random write: the buffer flushes to the units in turn, so sustained random writes keep every
    unit busy, units / random-write IOPS (:func:`from_datasheet`)."""
    iops = v["rand_write_iops"]
    program = round(units / iops * 1e9)
    values["write_cache_program_ns"] = program
    values["write_buffer"] = write_buffer(units, v["seq_write_gb_s"])
    sources["write_buffer"] = write_buffer_source(units, f"{v['seq_write_gb_s']:g} GB/s, {src['seq_write_gb_s']}")
    sources["write_cache_program_ns"] = (
        f"derived: {units} units / {iops:,.0f} random-write IOPS ({src['rand_write_iops']}) = {program:.0f} ns"
        " (the buffer flushes to the units in turn: sustained random writes keep every unit busy)"
    )


def _sheet(model: str, source: str, **figures) -> dict:
    """A datasheet: every figure from ``source`` unless given as (value, its own source)."""
    ds = {"model": (model, source)}
    for name, fig in figures.items():
        ds[name] = fig if isinstance(fig, tuple) else (fig, source)
    return ds


def _catalogue_device(sheet_and_sources: tuple[dict, dict], overrides: dict) -> DeviceConfig:
    return DeviceConfig(**{**sheet_and_sources[0], **overrides})


_EST_CAP = "estimate: a common capacity of the family (the datasheet's figures are its 'up to' values)"
_EST_IDLE_CLIENT = (
    "estimate: no PS0 idle figure (the datasheet's milliwatt idle is its low-power states'); client PCIe 4.0"
    " drives idle in an operational state near 1 W in reviews [recalled, not re-checked]"
)
_EST_IDLE_DC = "estimate: ~5 W, the middle of this catalogue's enterprise U.2/U.3 idle figures (3.5-8 W)"
_EST_DC_READ = (
    "estimate: an enterprise TLC drive's QD1 4 KiB read of this generation (Kioxia's CM6 90 us [exact,"
    " Kioxia slide], Micron's 7450 70-80 us [recalled])"
)
_EST_DC_WRITE = "estimate: an enterprise drive's buffered write, as Kioxia's CM6 20 us [exact, Kioxia slide]"

_P5800X_DS = "recalled: Intel Optane SSD DC P5800X product brief (not re-checked)"
_P5800X = from_datasheet(
    _sheet(
        "Intel Optane SSD DC P5800X",
        _P5800X_DS,
        capacity_bytes=(1_600_000_000_000, "estimate: the 1.6 TB model, the smallest with the full write IOPS"),
        pcie_gen=4,
        seq_read_gb_s=7.2,
        seq_write_gb_s=(6.1, _P5800X_DS + "; the lower of 6.1-6.2"),
        rand_read_iops=1_500_000,
        rand_write_iops=1_500_000,
        read_latency_us=(5.0, _P5800X_DS + "; typical ~5 us, taken as the device's time"),
        write_latency_us=(5.0, _P5800X_DS + "; typical ~5 us, taken as the device's time"),
        idle_w=5.0,
        active_read_w=(18.0, "estimate: the low end of the recalled 18-21 W active power"),
        active_write_w=(21.0, "estimate: the high end of the recalled 18-21 W active power"),
    ),
    cached_writes=False,
    flash=False,
    cv=(0.2, 0.2),
)
_P5800X[1]["read.sd_ns"] = _P5800X[1]["write.sd_ns"] = "estimate: 0.2 x base, the P4800X preset's spread (900 / 4500)"


def optane_p5800x(**kw) -> DeviceConfig:
    """Intel Optane SSD DC P5800X 1.6 TB (2nd-generation 3D XPoint, PCIe 4.0 x4): 1.5M 4 KiB random
    reads and writes, 7.2 / 6.1 GB/s sequential, ~5 us typical latency (product brief, recalled).
    No write buffer (3D XPoint writes in place): the write ceiling is the units' and the data path's.
    Whether Intel's 5 us is the device's time or includes a host is not stated; it is taken as the
    device's (doorbell to completion entry), so a kernel IO path adds its own few us on top."""
    return _catalogue_device(_P5800X, kw)


_905P_DS = "recalled: Intel Optane SSD 905P product specification (not re-checked)"
_905P_SOURCES = {
    "model": _905P_DS,
    "capacity_bytes": "estimate: the 960 GB model (480 GB-1.5 TB exist)",
    "read": "estimate: the 3D XPoint controller family's media times (the 900P / P4800X presets: the same"
    " 7-channel SLL3D controller); its recalled ~10 us latency includes a host, as the P4800X's",
    "write": "estimate: as read",
    "parallel_units": "estimate: dies scale with capacity, 28 per 375 GB (P4800X) -> 960 GB ~ 72 dies"
    " = ~10 ranks of 7 (one die per channel)",
    "datapath": f"derived: one path at the sequential rates 2.6 / 2.2 GB/s ({_905P_DS})",
    "link_gb_s": PCIE_X4[3][1],
    "fetch_ns": _FRONT.format(250),
    "post_ns": _FRONT.format(250),
    "idle_w": _905P_DS + " (~5 W)",
    "active_read_w": "estimate: the low end of the recalled 14-16 W active power",
    "active_write_w": "estimate: the high end of the recalled 14-16 W active power",
}


def optane_905p(**kw) -> DeviceConfig:
    """Intel Optane SSD 905P 960 GB (3D XPoint, PCIe 3.0 x4, the 900P's 7-channel SLL3D controller):
    575K / 550K 4 KiB random read / write IOPS, 2.6 / 2.2 GB/s sequential (recalled). Built on the
    900P's family (:func:`_optane`: media times, low spread) with its own data path rates and ranks."""
    cfg = dict(datapath=DataPathConfig(count=1, read_gb_s=2.6, write_gb_s=2.2), capacity_bytes=960_000_000_000)
    cfg.update(active_read_w=14.0, active_write_w=16.0)
    cfg.update(kw)
    return _optane("Intel Optane SSD 905P", 350.0, 450.0, 10, **cfg)


_980PRO_DS = "recalled: Samsung 980 PRO data sheet, 1 TB MZ-V8P1T0 (not re-checked)"
_980PRO_IDCTRL = "recalled: the 980 PRO's nvme id-ctrl power states as commonly posted (not re-checked)"
_980PRO = from_datasheet(
    _sheet(
        "Samsung 980 PRO",
        _980PRO_DS,
        capacity_bytes=1_000_000_000_000,
        pcie_gen=4,
        seq_read_gb_s=7.0,
        seq_write_gb_s=5.0,
        rand_read_iops=1_000_000,
        rand_write_iops=1_000_000,
        read_latency_us=(45.45, "derived: 1 / the QD1 random-read 22K IOPS (" + _980PRO_DS + ")"),
        write_latency_us=(16.67, "derived: 1 / the QD1 random-write 60K IOPS (" + _980PRO_DS + ")"),
        idle_w=(1.0, _EST_IDLE_CLIENT),
        active_read_w=(6.2, _980PRO_DS + ": average power"),
        active_write_w=(8.49, _980PRO_IDCTRL + ": PS0 maximum 8.49 W"),
        power_states=(
            (
                PowerStateConfig(name="PS3", power_w=0.04, entry_latency_ns=2_000_000.0, exit_latency_ns=1_200_000.0),
                PowerStateConfig(name="PS4", power_w=0.005, entry_latency_ns=500_000.0, exit_latency_ns=9_500_000.0),
            ),
            _980PRO_IDCTRL + ": PS3 0.040 W enlat 2000 exlat 1200 us, PS4 0.005 W enlat 500 exlat 9500 us",
        ),
    ),
    nand=(
        "samsung-v6",
        (8, "recalled: the Elpis controller's 8 channels (Samsung 980 PRO data sheet, not re-checked)"),
    ),
    rated_in_slc=True,
)


_980PRO[0]["slc_cache"] = SLC_980PRO
_980PRO[1]["slc_cache"] = SLC_980PRO_SOURCE


def samsung_980pro(**kw) -> DeviceConfig:
    """Samsung 980 PRO 1 TB (Elpis controller, 8 channels, 128-layer V-NAND TLC, PCIe 4.0 x4): 1M / 1M
    4 KiB random IOPS, 7.0 / 5.0 GB/s, QD1 22K / 60K IOPS (data sheet, recalled). The random-write
    and sequential-write figures are the SLC cache's: 42 GB of TurboWrite, then 2,000 MB/s
    (:data:`SLC_980PRO`); its non-operational power states PS3 and PS4 drive APST. PS1/PS2
    (operational, 4.48 / 3.18 W) are not modelled: the device draws its idle or active power."""
    return _catalogue_device(_980PRO, kw)


_990PRO_DS = "exact: mezha.media's Samsung 990 PRO specification table, 1 TB"
_990PRO = from_datasheet(
    _sheet(
        "Samsung 990 PRO",
        _990PRO_DS,
        capacity_bytes=1_000_000_000_000,
        pcie_gen=4,
        seq_read_gb_s=7.45,
        seq_write_gb_s=6.9,
        rand_read_iops=1_200_000,
        rand_write_iops=1_550_000,
        read_latency_us=(45.45, "derived: 1 / a QD1 random-read 22K IOPS (recalled, not re-checked)"),
        write_latency_us=(12.5, "derived: 1 / a QD1 random-write 80K IOPS (recalled, not re-checked)"),
        idle_w=(1.0, _EST_IDLE_CLIENT),
        active_read_w=(5.4, "recalled: the 1 TB's ~5.4 W average power (not re-checked)"),
        active_write_w=(8.6, "estimate: the 4 TB model's 8.6 W peak (exact, mezha.media) taken for the 1 TB"),
    ),
    nand=(
        "samsung-v7",
        (8, "estimate: a client PCIe 4.0 controller's 8 channels (the 980 PRO's Elpis has 8, recalled)"),
    ),
    rated_in_slc=True,
)


_990PRO[0]["slc_cache"] = SLC_980PRO
_990PRO[1]["slc_cache"] = SLC_CLIENT_SOURCE


def samsung_990pro(**kw) -> DeviceConfig:
    """Samsung 990 PRO 1 TB (Pascal controller, 176-layer V-NAND TLC V7, PCIe 4.0 x4): 1.2M / 1.55M
    4 KiB random IOPS, 7.45 / 6.9 GB/s. Its APST power-state table is not in the sources: no
    non-operational states (add yours from ``nvme id-ctrl`` as ``ssd.power_states``)."""
    return _catalogue_device(_990PRO, kw)


_PM9A3_DS = "exact: heise.de/-4720224, Samsung PM9A3 U.2"
_PM9A3 = from_datasheet(
    _sheet(
        "Samsung PM9A3",
        _PM9A3_DS,
        capacity_bytes=(3_840_000_000_000, _EST_CAP),
        pcie_gen=4,
        seq_read_gb_s=6.5,
        seq_write_gb_s=3.5,
        rand_read_iops=900_000,
        rand_write_iops=200_000,
        read_latency_us=(80.0, _EST_DC_READ),
        write_latency_us=(20.0, _EST_DC_WRITE),
        idle_w=(3.5, "recalled: ~3.5 W idle (not re-checked)"),
        active_read_w=(13.5, "recalled: ~13.5 W maximum active (not re-checked)"),
        active_write_w=(13.5, "recalled: ~13.5 W maximum active (not re-checked)"),
    ),
    nand=(
        "samsung-v6",
        (16, "estimate: an enterprise controller's 16 channels (Kioxia's CD6 has 16, exact: heise.de 4666097)"),
    ),
)


def samsung_pm9a3(**kw) -> DeviceConfig:
    """Samsung PM9A3 U.2 3.84 TB (128-layer V-NAND V6 TLC, PCIe 4.0 x4): 900K / 200K 4 KiB random IOPS,
    6.5 / 3.5 GB/s (heise, the launch figures; later revisions list 1,000K / 180K and 6.9 / 4.1 GB/s).
    No latency is published: QD1 times are estimates of its generation."""
    return _catalogue_device(_PM9A3, kw)


_PM1733_DS = "recalled: Samsung PM1733 product brief (not re-checked)"
_PM1733 = from_datasheet(
    _sheet(
        "Samsung PM1733",
        _PM1733_DS,
        capacity_bytes=(3_840_000_000_000, _EST_CAP),
        pcie_gen=4,
        seq_read_gb_s=7.0,
        seq_write_gb_s=3.8,
        rand_read_iops=1_500_000,
        rand_write_iops=135_000,
        read_latency_us=(90.0, _EST_DC_READ),
        write_latency_us=(20.0, _EST_DC_WRITE),
        idle_w=(8.0, _PM1733_DS + "; ~8 W idle"),
        active_read_w=(20.0, _PM1733_DS + "; <= 20 W active"),
        active_write_w=(20.0, _PM1733_DS + "; <= 20 W active"),
    ),
    nand=(
        "samsung-v5",
        (16, "estimate: an enterprise controller's 16 channels (Kioxia's CD6 has 16, exact: heise.de 4666097)"),
    ),
)


def samsung_pm1733(**kw) -> DeviceConfig:
    """Samsung PM1733 U.2 3.84 TB (96-layer V-NAND V5 TLC, PCIe 4.0 x4 or dual-port 2 x2): 1.5M / 135K
    4 KiB random IOPS, 7.0 / 3.8 GB/s (recalled). No latency is published: QD1 times are estimates.
    Its selectable power caps (operational power states) are not modelled."""
    return _catalogue_device(_PM1733, kw)


_CM6_DS = "exact: heise, Kioxia CM6 announcement"
_CM6_LAT = "exact: Kioxia slide (hwcooling.net): CM6-generation read latency 90 us, write 20 us"
_CM6 = from_datasheet(
    _sheet(
        "Kioxia CM6-R",
        _CM6_DS,
        capacity_bytes=(3_840_000_000_000, _EST_CAP),
        pcie_gen=4,
        seq_read_gb_s=6.9,
        seq_write_gb_s=4.2,
        rand_read_iops=1_400_000,
        rand_write_iops=(170_000, _CM6_DS + "; CM6-R (1 DWPD), the 30.72 TB figure"),
        read_latency_us=(90.0, _CM6_LAT),
        write_latency_us=(20.0, _CM6_LAT),
        idle_w=(5.0, _EST_IDLE_DC),
        active_read_w=(19.0, "estimate: the lowest of the selectable 19-25 W maxima (recalled)"),
        active_write_w=(25.0, "estimate: the highest of the selectable 19-25 W maxima (recalled)"),
    ),
    nand=("bics4", (18, "exact: the CM6's 18-channel controller (heise.de 4666097)")),
)


def kioxia_cm6(**kw) -> DeviceConfig:
    """Kioxia CM6-R 3.84 TB (18-channel controller, BiCS4 96-layer TLC, PCIe 4.0 x4 or 2 x2): 1.4M / 170K
    4 KiB random IOPS (CM6-V, 3 DWPD: 350K writes: ``--set ssd.write_cache_program_ns``), 6.9 / 4.2
    GB/s, 90 / 20 us latency (Kioxia's slide for the generation)."""
    return _catalogue_device(_CM6, kw)


_CM7_DS = "recalled: Kioxia CM7 product brief (not re-checked)"
_CM7_LAT = "exact: Kioxia's Gen5 prototype slide (hwcooling.net): read latency 70 us, write 10 us"
_CM7 = from_datasheet(
    _sheet(
        "Kioxia CM7-R",
        _CM7_DS,
        capacity_bytes=(3_840_000_000_000, _EST_CAP),
        pcie_gen=5,
        seq_read_gb_s=14.0,
        seq_write_gb_s=(6.75, _CM7_DS + "; the lower of 6.75-7.0"),
        rand_read_iops=2_700_000,
        rand_write_iops=(310_000, _CM7_DS + "; CM7-R"),
        read_latency_us=(70.0, _CM7_LAT),
        write_latency_us=(10.0, _CM7_LAT),
        idle_w=(5.0, _EST_IDLE_DC),
        active_read_w=(25.0, _CM7_DS + "; <= 25 W"),
        active_write_w=(25.0, _CM7_DS + "; <= 25 W"),
    ),
    nand=("bics5", (18, "estimate: the CM6's 18 channels (exact, heise) for its successor")),
)


def kioxia_cm7(**kw) -> DeviceConfig:
    """Kioxia CM7-R 3.84 TB (BiCS5 112-layer TLC, PCIe 5.0 x4): 2.7M / 310K 4 KiB random IOPS, 14 / 6.75
    GB/s (recalled); latency from Kioxia's Gen5 prototype slide (70 / 10 us)."""
    return _catalogue_device(_CM7, kw)


_7450_DS = "recalled: Micron 7450 PRO product brief, 3.84 TB U.3 (not re-checked)"
_7450 = from_datasheet(
    _sheet(
        "Micron 7450 PRO",
        _7450_DS,
        capacity_bytes=3_840_000_000_000,
        pcie_gen=4,
        seq_read_gb_s=(6.8, "exact: servethehome, Micron 7450 (~6.8 GB/s)"),
        seq_write_gb_s=5.3,
        rand_read_iops=1_000_000,
        rand_write_iops=180_000,
        read_latency_us=(75.0, _7450_DS + "; the middle of 70-80 us typical"),
        write_latency_us=(15.0, _7450_DS + "; ~15 us typical"),
        idle_w=(5.0, _7450_DS + "; ~5 W idle"),
        active_read_w=(14.0, _7450_DS + "; ~14 W maximum (U.3)"),
        active_write_w=(14.0, _7450_DS + "; ~14 W maximum (U.3)"),
    ),
    nand=(
        "micron-176l",
        (16, "estimate: an enterprise controller's 16 channels (Kioxia's CD6 has 16, exact: heise.de 4666097)"),
    ),
)


def micron_7450(**kw) -> DeviceConfig:
    """Micron 7450 PRO U.3 3.84 TB (176-layer TLC B47R with CMOS under the array, PCIe 4.0 x4): 1M /
    180K 4 KiB random IOPS, 6.8 / 5.3 GB/s, ~75 / 15 us typical latency (recalled)."""
    return _catalogue_device(_7450, kw)


_SN850X_DS = "recalled: WD_BLACK SN850X product brief, 1 TB (not re-checked)"
_SN850X = from_datasheet(
    _sheet(
        "WD Black SN850X",
        _SN850X_DS,
        capacity_bytes=1_000_000_000_000,
        pcie_gen=4,
        seq_read_gb_s=7.3,
        seq_write_gb_s=6.3,
        rand_read_iops=800_000,
        rand_write_iops=1_100_000,
        read_latency_us=(45.45, "estimate: not published; the 980 PRO's QD1 read (22K IOPS), a TLC drive of its class"),
        write_latency_us=(16.67, "estimate: not published; the 980 PRO's QD1 write (60K IOPS)"),
        idle_w=(1.0, _EST_IDLE_CLIENT),
        active_read_w=(5.5, _SN850X_DS + "; ~5-6 W average"),
        active_write_w=(5.5, _SN850X_DS + "; ~5-6 W average"),
    ),
    nand=("bics5", (8, "estimate: a client PCIe 4.0 controller's 8 channels (the 980 PRO's Elpis has 8, recalled)")),
    rated_in_slc=True,
)


_SN850X[0]["slc_cache"] = SLC_980PRO
_SN850X[1]["slc_cache"] = SLC_CLIENT_SOURCE


def wd_sn850x(**kw) -> DeviceConfig:
    """WD Black SN850X 1 TB (WD controller, BiCS5 112-layer TLC, PCIe 4.0 x4): 800K / 1.1M 4 KiB random
    IOPS, 7.3 / 6.3 GB/s (recalled). No QD1 figures are published (the 980 PRO's are used) and its APST
    table is not in the sources (no non-operational states)."""
    return _catalogue_device(_SN850X, kw)


_P5520_DS = "recalled: Solidigm D7-P5520 product brief, 3.84 TB (low confidence, not re-checked)"
_P5520 = from_datasheet(
    _sheet(
        "Solidigm D7-P5520",
        _P5520_DS,
        capacity_bytes=3_840_000_000_000,
        pcie_gen=4,
        seq_read_gb_s=7.1,
        seq_write_gb_s=4.2,
        rand_read_iops=1_100_000,
        rand_write_iops=(200_000, _P5520_DS + "; the lower of 200-250K"),
        read_latency_us=(70.0, _P5520_DS + "; ~70 us typical (rough)"),
        write_latency_us=(12.0, _P5520_DS + "; ~12 us typical (rough)"),
        idle_w=(5.0, _P5520_DS + "; ~5 W idle"),
        active_read_w=(20.0, "estimate: the lower of the recalled 20-25 W maxima"),
        active_write_w=(25.0, "estimate: the higher of the recalled 20-25 W maxima"),
    ),
    nand=(
        "intel-144l",
        (16, "estimate: an enterprise controller's 16 channels (Kioxia's CD6 has 16, exact: heise.de 4666097)"),
    ),
)


def solidigm_p5520(**kw) -> DeviceConfig:
    """Solidigm D7-P5520 U.2 3.84 TB (144-layer TLC, PCIe 4.0 x4): 1.1M / 200K 4 KiB random IOPS,
    7.1 / 4.2 GB/s, ~70 / 12 us (recalled, low confidence)."""
    return _catalogue_device(_P5520, kw)


def _optane_sources(model: str, units: str, **special: str) -> dict[str, str]:
    """The sources of the 3D XPoint family presets, from :func:`_optane`'s docstring tags."""
    sources = {
        "model": f"recalled: {model} product specification ([REF5])",
        "read": "estimate: ~4.5 us media + controller at 4 KiB, the rest of the ~6-7 us device time being"
        " PCIe/NVMe transactions ([REF5]; refined by the platforms' calibrations)",
        "write": "estimate: ~5 us media + controller at 4 KiB ([REF5])",
        "parallel_units": units,
        "datapath": "recalled: the P4800X's sequential 2.4 / 2.0 GB/s, also its random 4 KiB ceilings ([REF5])",
        "link_gb_s": PCIE_X4[3][1],
        "fetch_ns": _FRONT.format(250),
        "post_ns": _FRONT.format(250),
        "idle_w": "recalled: 5 W idle ([REF5], P4800X)",
        "active_read_w": "recalled: ~8 W reading ([REF5], P4800X)",
        "active_write_w": "recalled: 13 W writing ([REF5], P4800X)",
        "capacity_bytes": "recalled: product specification",
    }
    sources.update(special)
    return sources


_NAND_LITTLE = "derived: Little's law, saturation IOPS x read service time ({})"
_LEGACY_SOURCES = {
    "optane-900p": _optane_sources(
        "Intel Optane SSD 900P",
        "estimate: three quarters of the P4800X's 28 dies by capacity, three ranks",
        **{"read.sd_ns": "estimate: low spread of the consumer card"},
    ),
    "optane-p4800x": _optane_sources(
        "Intel Optane DC P4800X",
        "recalled: 28 dies of 128 Gb, four per channel: four ranks ([REF5b], reviews)",
        max_queue_pairs="recalled: 32 I/O queue pairs (the issue #30 brief, not re-checked)",
        **{"read.sd_ns": "estimate: refined by the calibrated-interrupts platform"},
    ),
    "optane-p4801x": _optane_sources(
        "Intel Optane DC P4801X",
        "recalled: as the P4800X (four ranks)",
        max_queue_pairs="recalled: as the P4800X",
    ),
    "p3700": {
        "readahead": READAHEAD_SOURCE,
        "model": "recalled: Intel DC P3700 400 GB datasheet",
        "capacity_bytes": "recalled: Intel DC P3700 400 GB datasheet",
        "read": "exact: ~80 us 4 KiB reads (Tai et al., ACM TOS 2022, [CI]); the spread comes from the media"
        " (its measured sd ~29 us, [CI], is not set)",
        "write": "estimate: writes land in the DRAM buffer",
        "write_cache_program_ns": "derived: 28 dies / 75K sustained random-write IOPS (datasheet): the buffer"
        " flushes to the dies in turn",
        "write_buffer": write_buffer_source(28, "recalled: 1,900 MB/s, P3700 specification"),
        "parallel_units": _NAND_LITTLE.format("450K x 62.7 us of die time: mean tR + 4 KiB transfer (datasheet)"),
        "media": media_source("imft-mlc-20nm", 18, "recalled: the P3700's 18-channel controller"),
        "unit_stripe_bytes": STRIPE_SOURCE,
        "link_gb_s": "estimate: PCIe 3.0 x4 usable",
        "fetch_ns": _FRONT.format(300),
        "post_ns": _FRONT.format(300),
        "idle_w": "recalled: datasheet",
        "active_read_w": "recalled: datasheet",
        "active_write_w": "recalled: datasheet",
    },
    "pm1743": {
        "readahead": READAHEAD_SOURCE,
        "model": "recalled: Samsung PM1743 3.84 TB ([REF5])",
        "capacity_bytes": "recalled: Samsung PM1743 3.84 TB ([REF5])",
        "read": "estimate: ~75 us reads ([REF5]); the spread comes from the media",
        "write": "estimate: buffered writes",
        "write_cache_program_ns": "derived: 94 dies / 250K sustained random-write IOPS ([REF5]): the buffer"
        " flushes to the dies in turn",
        "write_buffer": write_buffer_source(94, "exact: 6,600 MB/s, computerbase.de, clubic"),
        "parallel_units": _NAND_LITTLE.format("2.5M x 37.4 us of die time: mean tR + 4 KiB transfer ([REF5])"),
        "media": media_source("samsung-v6", 16, "estimate: an enterprise controller's 16 channels"),
        "unit_stripe_bytes": STRIPE_SOURCE,
        "link_gb_s": "recalled: 13 GB/s sequential ([REF5])",
        "fetch_ns": _FRONT.format(200),
        "post_ns": _FRONT.format(200),
        "max_queue_pairs": "recalled: 128 I/O queue pairs",
        "idle_w": "exact: 74 W idle for 16 drives (SANDMAN, Zhou et al., SOSP 2025)",
        "active_read_w": "recalled: up to 25 W ([REF5]); reading share an estimate",
        "active_write_w": "recalled: up to 25 W ([REF5])",
    },
}


def _ssd_facts(interface: str, form: str, nand: tuple[str, str] | None = None, channels=None, source="") -> dict:
    """Facts about an SSD that are not configuration fields: its interface and form factor, NAND and
    channels where known."""
    facts = {"interface": (interface, source), "form_factor": (form, source)}
    if nand:
        facts["media"] = nand
    if channels:
        facts["channels"] = channels
    return facts


_G3, _G4, _G5 = "PCIe 3.0 x4, NVMe", "PCIe 4.0 x4, NVMe", "PCIe 5.0 x4, NVMe"
SSD_CATALOGUE: dict[str, Preset] = {
    "optane-900p": Preset(
        optane_900p,
        _LEGACY_SOURCES["optane-900p"],
        _ssd_facts(
            _G3, "add-in card / U.2", ("3D XPoint", "recalled: [REF5]"), (7, "recalled: [REF5b]"), "recalled: [REF5]"
        ),
    ),
    "optane-p4800x": Preset(
        optane_p4800x,
        _LEGACY_SOURCES["optane-p4800x"],
        _ssd_facts(_G3, "U.2 / add-in card", ("3D XPoint", "exact: [REF5]"), (7, "exact: [REF5b]"), "exact: [REF5]"),
    ),
    "optane-p4801x": Preset(
        optane_p4801x,
        _LEGACY_SOURCES["optane-p4801x"],
        _ssd_facts(_G3, "M.2 / U.2", ("3D XPoint", "recalled: [REF5]"), (7, "recalled: [REF5b]"), "recalled: [REF5]"),
    ),
    "p3700": Preset(
        p3700,
        _LEGACY_SOURCES["p3700"],
        _ssd_facts(_G3, "add-in card / U.2", ("MLC NAND", "recalled: datasheet"), None, "recalled: datasheet"),
    ),
    "pm1743": Preset(
        pm1743,
        _LEGACY_SOURCES["pm1743"],
        _ssd_facts(_G5, "U.2 / E3.S", ("TLC NAND", "recalled: [REF5]"), None, "recalled: [REF5]"),
    ),
    "optane-p5800x": Preset(
        optane_p5800x,
        _P5800X[1],
        _ssd_facts(_G4, "U.2 / E1.S", ("2nd-gen 3D XPoint", _P5800X_DS), None, _P5800X_DS),
    ),
    "optane-905p": Preset(
        optane_905p,
        _905P_SOURCES,
        _ssd_facts(_G3, "add-in card / U.2 / M.2", ("3D XPoint", _905P_DS), (7, _905P_DS + " (SLL3D)"), _905P_DS),
    ),
    "samsung-980pro": Preset(
        samsung_980pro,
        _980PRO[1],
        _ssd_facts(
            _G4, "M.2 2280", ("128-layer V-NAND TLC (V6)", _980PRO_DS), (8, _980PRO_DS + " (Elpis)"), _980PRO_DS
        ),
    ),
    "samsung-990pro": Preset(
        samsung_990pro,
        _990PRO[1],
        _ssd_facts(_G4, "M.2 2280", ("176-layer V-NAND TLC (V7)", _990PRO_DS), None, _990PRO_DS),
    ),
    "samsung-pm9a3": Preset(
        samsung_pm9a3,
        _PM9A3[1],
        _ssd_facts(_G4, "U.2 (E1.S, M.2 exist)", ("128-layer V-NAND TLC (V6)", _PM9A3_DS), None, _PM9A3_DS),
    ),
    "samsung-pm1733": Preset(
        samsung_pm1733,
        _PM1733[1],
        _ssd_facts(_G4 + " (dual port 2 x2)", "U.2", ("96-layer V-NAND TLC (V5)", _PM1733_DS), None, _PM1733_DS),
    ),
    "kioxia-cm6": Preset(
        kioxia_cm6,
        _CM6[1],
        _ssd_facts(_G4 + " (dual port 2 x2)", "U.3", ("BiCS4 96-layer TLC", _CM6_DS), (18, _CM6_DS), _CM6_DS),
    ),
    "kioxia-cm7": Preset(
        kioxia_cm7,
        _CM7[1],
        _ssd_facts(_G5, "U.3 / E3.S", ("BiCS5 112-layer TLC", _CM7_DS), None, _CM7_DS),
    ),
    "micron-7450": Preset(
        micron_7450,
        _7450[1],
        _ssd_facts(
            _G4, "U.3 (E1.S, M.2 exist)", ("176-layer TLC (B47R)", "exact: tweaktown, servethehome"), None, _7450_DS
        ),
    ),
    "wd-sn850x": Preset(
        wd_sn850x,
        _SN850X[1],
        _ssd_facts(_G4, "M.2 2280", ("BiCS5 112-layer TLC", _SN850X_DS), None, _SN850X_DS),
    ),
    "solidigm-p5520": Preset(
        solidigm_p5520,
        _P5520[1],
        _ssd_facts(_G4, "U.2 (E1.S, E1.L exist)", ("144-layer TLC", _P5520_DS), None, _P5520_DS),
    ),
    "pm1743-gc": Preset(
        pm1743_gc,
        {
            **_LEGACY_SOURCES["pm1743"],
            "ftl": "derived: 14.5% over-provisioning (4 TiB of NAND [recalled] / 3.84 TB - 1); blocks of 256"
            " pages and 3 ms erases (estimates); flexible data placement with 8 reclaim unit handles (Samsung"
            " showed FDP on the PM1743 in 2023 [recalled]; 8 handles: estimate, fio's uring-cmd-fdp.fio's)",
            "write_cache_program_ns": "derived: 376 us per host write (94 dies / 250K steady-state IOPS) ="
            " 4.15 p + 3.15 copies x 72 us + 48.6 us of erases, at the model's steady-state write"
            " amplification 4.15 (measured with 190 units): p = 24.2 us",
        },
        _ssd_facts(_G5, "U.2 / E3.S", ("TLC NAND", "recalled: [REF5]"), None, "recalled: [REF5]"),
    ),
    "zn540": Preset(
        zn540,
        {"readahead": READAHEAD_SOURCE, "fetch_ns": _FRONT.format(300), "post_ns": _FRONT.format(300), **ZN540_SOURCES},
        _ssd_facts(_G3, "U.2", ("TLC NAND (zoned)", "exact: CLUSTER'23"), None, "exact: CLUSTER'23"),
    ),
}
"""Every SSD preset with its sources and facts (docs/presets.md); ``SSD_PRESETS`` maps the names to
the factories."""

SSD_PRESETS = {name: preset.make for name, preset in SSD_CATALOGUE.items()}
