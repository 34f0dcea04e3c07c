"""Configuration of an NVMe SSD: command path, media service, link, power.

Units: ns, bytes, GB/s (1e9 bytes/s), W. Presets with cited values: :mod:`models.ssd.presets`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from models.ssd.controller_config import ReadAheadConfig, SlcCacheConfig, WriteBufferConfig
from models.ssd.firmware import FirmwareConfig
from models.ssd.media import MediaConfig
from models.ssd.namespaces import ConventionalNamespaceConfig
from simcore.config import Model


class ServiceConfig(Model):
    """Media service time of one command of one direction: base + per-KiB, with jitter."""

    base_ns: float = Field(gt=0, description="media + controller time of a 4 KiB command, ns")
    per_kib_ns: float = Field(0.0, ge=0, description="extra media time per KiB beyond 4 KiB, ns")
    sd_ns: float = Field(0.0, ge=0, description="standard deviation of the service time (lognormal jitter), ns")


class DataPathConfig(Model):
    """The media data path: the controller's channels, ECC and buffers that every command's data
    crosses between its media unit and the host link. Each path carries one transfer at a time
    (nbytes / rate); media unit u uses path u mod ``count``. When the bytes it moves bound a
    device's throughput (its random 4 KiB IOPS ceiling x 4 KiB equals its sequential rate), this is
    that bound, apart from the number of commands in flight."""

    count: int = Field(
        1,
        ge=1,
        le=65536,
        description="independent data paths (1: one path the controller stripes"
        " every command over; the channels count when each channel bounds its own dies)",
    )
    read_gb_s: float = Field(gt=0, description="read data rate of one path, GB/s (1e9 B/s)")
    write_gb_s: float = Field(gt=0, description="write data rate of one path, GB/s (1e9 B/s)")


class TrimConfig(Model):
    """Deallocation (NVMe Dataset Management, Deallocate: a trim/discard) of one range. The controller
    fetches the range list and updates its mapping table; no media is read or programmed, so
    trims are served by the controller's mapping-table work, one command at a time, apart from
    the media units. Defaults are estimates (no published per-command figure): a command costs
    about a small write's controller time, and whole-device deallocation of a ~400 GB NVMe drive
    (``blkdiscard``) takes on the order of a second."""

    base_ns: float = Field(
        5000.0,
        ge=0,
        description="controller time of a deallocate command of up to 4 KiB"
        " (range-list fetch, mapping update), ns (estimate)",
    )
    per_mib_ns: float = Field(
        2000.0, ge=0, description="mapping-table update per further MiB deallocated, ns (estimate: ~0.8 s for 400 GB)"
    )


class ZonedConfig(Model):
    """An NVMe Zoned Namespace (ZNS Command Set 1.0, TP 4053, part of NVMe 2.0): the namespace is
    zones of ``zone_size_bytes`` (ZSZE, equal for all), each writable up to ``zone_capacity_bytes``
    (ZCAP) and only at its write pointer; a zone is empty, implicitly or explicitly opened, closed
    or full; open zones are implicitly + explicitly opened ones, active zones the open and the
    closed ones (MOR / MAR of Identify Namespace, 0's based there, given here as counts, as Linux's
    ``max_open_zones`` / ``max_active_zones`` sysfs attributes do). Reset and finish costs are the
    WD Ultrastar DC ZN540's (Doekemeijer et al., "Performance Characterization of NVMe Flash
    Devices with Zoned Namespaces (ZNS)", IEEE CLUSTER 2023, raw SPDK logs in
    stonet-research/NVMeBenchmarks, ``partial_reset`` and ``partial_finish``: medians at QD1)."""

    zone_size_bytes: int = Field(
        gt=0,
        le=2**50,
        description="ZSZE: the address span of one zone, bytes (Linux needs a power of two: nvme_revalidate_zones)",
    )
    zone_capacity_bytes: int = Field(gt=0, le=2**50, description="ZCAP: the writable part of a zone, bytes")
    max_open_zones: int | None = Field(
        None, ge=1, le=2**32, description="MOR + 1: zones open at once, implicitly or explicitly (None: no limit)"
    )
    max_active_zones: int | None = Field(
        None, ge=1, le=2**32, description="MAR + 1: zones open or closed at once (None: no limit)"
    )
    precondition: Literal["empty", "full"] = Field(
        "empty",
        description="every zone's state when the run starts: empty (reset), or full (written to its"
        " capacity, so reads find data and writers reset zones first)",
    )
    reset_empty_ns: float = Field(
        2_000.0, ge=0, description="reset of an empty zone, ns (ZN540 median 2 us, CLUSTER'23 raw logs)"
    )
    reset_curve: tuple[tuple[float, float], ...] = Field(
        (
            (0.0, 1_660_000.0),
            (0.0625, 5_100_000.0),
            (0.125, 6_400_000.0),
            (0.25, 8_150_000.0),
            (0.5, 11_700_000.0),
            (1.0, 16_050_000.0),
        ),
        description="reset of a zone holding data: (written fraction of its capacity, ns) points, linear"
        " between them (ZN540 medians, CLUSTER'23: 1 LBA 1.63-1.69 ms, 6.25% 5.1, 12.5% 6.0-6.8, 25%"
        " 7.7-8.6, 50% 11.2-12.2, full 15.5-16.6 ms; the midpoints of the runs' ranges)",
    )
    finish_empty_ns: float = Field(
        14_000.0, ge=0, description="finish of an empty zone, ns (ZN540 median 14 us, CLUSTER'23)"
    )
    finish_curve: tuple[tuple[float, float], ...] = Field(
        (
            (0.0, 908_000_000.0),
            (0.0625, 848_000_000.0),
            (0.125, 792_000_000.0),
            (0.25, 681_000_000.0),
            (0.5, 457_000_000.0),
            (1.0, 2_600_000.0),
        ),
        description="finish of a zone holding data: (written fraction, ns) points, linear between them;"
        " the device pads the unwritten rest (ZN540 medians, CLUSTER'23: 908 ms with 1 LBA written,"
        " 457 ms at 50%, 2.6 ms one LBA short of full)",
    )
    stripe_width: int | None = Field(
        None,
        ge=1,
        le=65536,
        description="the parallel units (dies) one zone is striped over: the device's units form groups"
        " of this many, zone z on group z mod groups (models.ssd.zone_media; None: every unit)",
    )
    stripe_unit_bytes: int = Field(
        16_384,
        ge=4096,
        le=1 << 24,
        description="a zone's bytes on one die before the next die of its stripe, bytes (a 3D TLC NAND"
        " page of 16 KiB, recalled)",
    )

    @model_validator(mode="after")
    def _capacity_fits(self) -> "ZonedConfig":
        for name in ("reset_curve", "finish_curve"):
            xs = [x for x, _t in getattr(self, name)]
            if (
                not xs
                or xs[0] != 0.0
                or xs[-1] != 1.0
                or xs != sorted(set(xs))
                or min(t for _x, t in getattr(self, name)) < 0
            ):
                raise ValueError(f"{name}: (fraction, ns) points from fraction 0 to 1, increasing, times >= 0")
        if self.zone_capacity_bytes > self.zone_size_bytes:
            raise ValueError(
                f"zone_capacity_bytes={self.zone_capacity_bytes} exceeds zone_size_bytes={self.zone_size_bytes}"
                " (ZCAP <= ZSZE)"
            )
        for name in ("zone_size_bytes", "zone_capacity_bytes"):
            if getattr(self, name) % 4096:
                raise ValueError(f"{name}={getattr(self, name)} is not a multiple of the 4096-byte LBA")
        if self.max_open_zones and self.max_active_zones and self.max_open_zones > self.max_active_zones:
            raise ValueError(
                f"max_open_zones={self.max_open_zones} exceeds max_active_zones={self.max_active_zones}"
                " (an open zone is active)"
            )
        return self


class FtlConfig(Model):
    """The flash translation layer's page mapping and garbage collection (off by default: a preset
    or run turns it on, so runs without it are unchanged). A compact page-mapped FTL: logical
    pages of ``page_bytes`` map to physical pages in blocks (reclaim units) of ``pages_per_block``;
    the physical space is the user space plus ``spare_fraction`` (over-provisioning); writes fill
    the open block of their stream (their FDP placement handle; GC copies have a stream of their
    own); when fewer than ``gc_free_blocks`` blocks are free, the controller picks the closed
    block with the fewest valid pages (greedy), copies those pages out (a page read and a program
    each, on the media units) and erases it. Write amplification = pages programmed / pages the
    host wrote. Sizes are estimates unless a preset cites them."""

    enabled: bool = Field(False, description="model the FTL and its garbage collection")
    page_bytes: int = Field(
        4096, ge=512, le=1 << 20, description="mapping unit, bytes (4 KiB: page-mapped FTLs map 4 KiB; estimate)"
    )
    pages_per_block: int = Field(
        256,
        ge=4,
        le=1 << 16,
        description="pages per block (the erase / reclaim unit: a superblock across dies), estimate",
    )
    spare_fraction: float = Field(
        0.07,
        ge=0.005,
        le=4.0,
        description="over-provisioning, (physical - user) / user (0.07: the 2^30 / 10^9 gap of a"
        " consumer drive; enterprise presets cite theirs)",
    )
    span_bytes: int = Field(
        1 << 30,
        ge=1 << 20,
        le=1 << 36,
        description="user space the FTL maps, bytes: a device larger than this folds onto it (logical"
        " page modulo the span); write amplification depends on over-provisioning, utilisation and"
        " access skew, not on size, so a folded span keeps it (estimate: 1 GiB keeps the map small)",
    )
    precondition: Literal["full", "empty", "steady"] = Field(
        "full",
        description="the mapped space at the start: full (every logical page written once, in order:"
        " SNIA PTS's sequential fill), empty (a fresh drive) or steady (what random overwrites of the"
        " whole span leave, SNIA PTS's preconditioning: greedy GC's steady state, set analytically as"
        " MQSim does, models.ssd.gc_analytic)",
    )
    gc_free_blocks: int = Field(
        3, ge=2, le=1024, description="free blocks below which garbage collection runs (estimate)"
    )
    erase_ns: float = Field(
        3_000_000.0, ge=0, description="block erase on one media unit, ns (estimate: TLC NAND erases take 3-5 ms)"
    )
    placement_handles: int = Field(
        1,
        ge=1,
        le=128,
        description="FDP reclaim unit handles (NVMe TP4146): writes with placement handle h fill their"
        " own open block; 1: no flexible data placement (every host write shares one)",
    )

    @model_validator(mode="after")
    def _enough_blocks(self) -> "FtlConfig":
        blocks = self.span_bytes // (self.page_bytes * self.pages_per_block)
        if self.enabled and blocks < 4 * (self.gc_free_blocks + self.placement_handles + 1):
            raise ValueError(
                f"span_bytes={self.span_bytes} holds {blocks} blocks of {self.pages_per_block} x {self.page_bytes}"
                " bytes: too few for garbage collection (raise span_bytes or lower pages_per_block)"
            )
        if self.enabled:
            self.check_steady(None)
        return self

    def mapped_pages(self, capacity_bytes: int | None) -> int:
        """Logical pages the map covers: ``span_bytes``, or the device's capacity when smaller."""
        span = min(self.span_bytes, capacity_bytes) if capacity_bytes else self.span_bytes
        return max(1, span // self.page_bytes)

    def blocks(self, capacity_bytes: int | None) -> int:
        """Physical blocks: the mapped pages times 1 + ``spare_fraction``, in whole blocks."""
        return -(-int(self.mapped_pages(capacity_bytes) * (1.0 + self.spare_fraction)) // self.pages_per_block)

    def check_steady(self, capacity_bytes: int | None) -> None:
        """With ``precondition`` steady, greedy GC's steady state needs the blocks beside the free
        ones GC keeps (``gc_free_blocks`` + 1, models.ssd.ftl) to hold more than the mapped pages."""
        if self.precondition != "steady":
            return
        pages, ppb = self.mapped_pages(capacity_bytes), self.pages_per_block
        data = self.blocks(capacity_bytes) - self.gc_free_blocks - 1
        if data * ppb <= pages:
            raise ValueError(
                f"ftl.precondition=steady: {data} blocks of {ppb} pages beside the {self.gc_free_blocks + 1} GC keeps"
                f" free cannot hold the {pages} mapped pages with room to collect (raise ftl.spare_fraction or"
                " ftl.span_bytes, or lower ftl.gc_free_blocks)"
            )


#: the protection information tuple of each guard size, bytes (NVMe 2.0 NVM Command Set, 5.3: the
#: 16b guard tuple is guard 2 + application tag 2 + reference tag 4; the 64b guard tuple is guard 8 +
#: application tag 2 + storage and reference tag 6)
PI_TUPLE_BYTES = {16: 8, 64: 16}


class NamespaceConfig(Model):
    """The namespace's format as Identify Namespace gives it: the LBA format in use (FLBAS: data
    size LBADS, metadata size MS, bit 4: metadata at the end of each block's data, an *extended LBA*,
    else in a separate buffer the command points to with MPTR), end-to-end protection information
    (DPS: Type 1-3, a tuple in each block's metadata: a CRC guard of the block's data, an
    application tag and a reference tag), and the atomic write unit (NAWUPF, else the controller's
    AWUPF). Defaults: 512-byte blocks without metadata, one block written atomically (AWUPF = 0)."""

    lba_data_bytes: int = Field(
        512,
        ge=512,
        le=65536,
        description="LBADS: the data bytes of a logical block (a power of two; 512: the format O_DIRECT"
        " alignment assumes here)",
    )
    metadata_bytes: int = Field(
        0, ge=0, le=4096, description="MS: metadata bytes of each logical block (0: none; 8, 16, 64 are common)"
    )
    extended_lba: bool = Field(
        False,
        description="FLBAS bit 4: the metadata travels at the end of each block's data (an extended LBA of"
        " lba_data_bytes + metadata_bytes), else in a separate buffer (MPTR), one more DMA per command",
    )
    pi_type: int = Field(
        0, ge=0, le=3, description="DPS bits 2:0: protection information Type 1, 2 or 3 in the metadata (0: none)"
    )
    pi_guard_bits: Literal[16, 64] = Field(
        16,
        description="the guard of the tuple (Identify Namespace NVM, ELBAF guard type): 16, a CRC-16 T10-DIF"
        " in an 8-byte tuple; 64, a CRC-64 (NVMe polynomial) in a 16-byte tuple",
    )
    pi_ns_per_lba: float = Field(
        20.0,
        ge=0,
        description="the controller's work per logical block whose protection information it checks"
        " (PRCHK) or inserts and strips (PRACT), added to the command's media time, ns (estimate: the"
        " guard's CRC is computed in hardware as the data streams through the controller, what remains"
        " is the tuple's compare and the reference tag's increment, a few tens of ns of firmware)",
    )
    atomic_write_unit_bytes: int | None = Field(
        None,
        gt=0,
        le=1 << 30,
        description="(NAWUPF or AWUPF) + 1 logical blocks, bytes: the largest write the device keeps"
        " whole across a power failure (None: one logical block, AWUPF = 0); Linux's"
        " atomic_write_unit_max_bytes is it rounded down to a power of two (nvme_update_atomic_write_disk_info,"
        " 6.11; recalled)",
    )

    @model_validator(mode="after")
    def _format(self) -> "NamespaceConfig":
        if self.lba_data_bytes & (self.lba_data_bytes - 1):
            raise ValueError(f"lba_data_bytes={self.lba_data_bytes} is not a power of two (LBADS is its log2)")
        tuple_bytes = PI_TUPLE_BYTES[self.pi_guard_bits]
        if self.pi_type and self.metadata_bytes < tuple_bytes:
            raise ValueError(
                f"pi_type={self.pi_type} needs metadata_bytes of at least the {tuple_bytes}-byte protection"
                f" information tuple (metadata_bytes={self.metadata_bytes})"
            )
        unit = self.atomic_write_unit_bytes
        if unit is not None and unit % self.lba_data_bytes:
            raise ValueError(
                f"atomic_write_unit_bytes={unit} is not a whole number of {self.lba_data_bytes}-byte logical blocks"
            )
        return self

    @property
    def pi_tuple_bytes(self) -> int:
        """The protection information tuple's size, bytes (0: no protection information)."""
        return PI_TUPLE_BYTES[self.pi_guard_bits] if self.pi_type else 0


class PowerStateConfig(Model):
    """A non-operational NVMe power state, as the Identify Controller power state descriptor
    (``nvme id-ctrl``: ``psN : mp:... enlat:... exlat:...``) gives it."""

    name: str = Field(description="e.g. 'PS3'")
    power_w: float = Field(ge=0, description="maximum power in the state (MP), W")
    entry_latency_ns: float = Field(ge=0, description="ENLAT: time to enter the state, ns")
    exit_latency_ns: float = Field(ge=0, description="EXLAT: time to leave the state for a command, ns")

    def brief(self) -> str:
        """``PS3 0.04 W enlat 2000 exlat 1200 us``, as ``nvme id-ctrl`` gives it."""
        return (
            f"{self.name} {self.power_w:g} W enlat {self.entry_latency_ns / 1e3:g}"
            f" exlat {self.exit_latency_ns / 1e3:g} us"
        )


class ApstConfig(Model):
    """How the host programs APST: Linux ``nvme_core`` module parameters (5.15 defaults)."""

    enabled: bool = Field(True, description="program APST when the device has non-operational states")
    ps_max_latency_us: float = Field(
        100_000.0, ge=0, description="default_ps_max_latency_us: states whose ENLAT + EXLAT exceeds this are not used"
    )
    primary_timeout_ms: float = Field(
        100.0,
        gt=0,
        description="apst_primary_timeout_ms: idle time before the"
        " primary state (the deepest within primary_latency_tol_us)",
    )
    secondary_timeout_ms: float = Field(
        2000.0, ge=0, description="apst_secondary_timeout_ms: further idle time before the secondary state (0: none)"
    )
    primary_latency_tol_us: float = Field(15_000.0, ge=0, description="apst_primary_latency_tol_us")
    secondary_latency_tol_us: float = Field(100_000.0, ge=0, description="apst_secondary_latency_tol_us")


class DeviceConfig(Model):
    """An NVMe SSD."""

    model: str
    read: ServiceConfig
    write: ServiceConfig
    trim: TrimConfig = Field(TrimConfig(), description="deallocate (trim/discard) commands")
    write_cache_program_ns: float = Field(
        0.0,
        ge=0,
        description="flash with a DRAM write buffer (``write_buffer``): the least media unit time a flushed"
        " write's programs take, after it was acknowledged from the buffer: sustained"
        " random writes at units / this (0 = no buffer: a write costs its service time on its unit)",
    )
    write_buffer: WriteBufferConfig | None = Field(
        None, description="the controller's DRAM write buffer (needed with write_cache_program_ns > 0)"
    )
    slc_cache: SlcCacheConfig | None = Field(
        None, description="the SLC cache and the write cliff after it (client flash presets; None: none)"
    )
    parallel_units: int = Field(
        ge=1,
        le=65536,
        description="independent media units (dies, or die groups that serve a command"
        " together): each serves one command at a time, so their number and the service time set the"
        " IOPS ceiling (at most 65536, more than the dies of any SSD)",
    )
    unit_stripe_bytes: int = Field(
        4096,
        ge=512,
        le=2**30,
        description="address interleave across media units: the command"
        " at byte offset o goes to unit (o // unit_stripe_bytes) mod parallel_units (sequential"
        " IO rotates over the units, random IO collides on them at random), bytes",
    )
    datapath: DataPathConfig | None = Field(
        None,
        description="the media data path between the units and the link"
        " (None: not modelled, the units and the link bound the throughput)",
    )
    link_gb_s: float = Field(gt=0, description="usable PCIe data bandwidth, GB/s (1e9 B/s)")
    fetch_ns: float = Field(ge=0, description="doorbell write to command fetched by the controller, ns")
    post_ns: float = Field(ge=0, description="completion entry DMA write + MSI-X message to the CPU, ns")
    capacity_bytes: int | None = Field(
        None,
        gt=0,
        le=2**63 - 1,
        description="user capacity (datasheet), bytes; fio's size=N% is a share of it (None: unknown, size=N% refused)",
    )
    max_queue_pairs: int = Field(
        64,
        ge=1,
        le=65535,
        description="I/O queue pairs the controller offers (NVMe: at most"
        " 65535, Number of Queues is 16 bits, 0's based)",
    )
    max_queue_depth: int = Field(
        1024, ge=2, le=65536, description="entries per I/O queue (NVMe CAP.MQES is 16 bits, 0's based: at most 65536)"
    )
    idle_w: float = Field(ge=0, description="idle (PS0, no commands) power, W")
    active_read_w: float = Field(
        ge=0,
        description="power at the read ceiling: every data path (without a data path"
        " stage: every parallel unit) busy reading, W",
    )
    active_write_w: float = Field(
        ge=0,
        description="power at the write ceiling: every data path (without a data path"
        " stage: every parallel unit) busy writing, W",
    )
    power_states: tuple[PowerStateConfig, ...] = Field(
        (), description="non-operational power states for APST, shallowest first (none: the device stays in PS0)"
    )
    apst: ApstConfig = Field(ApstConfig(), description="the host's APST programming")
    zoned: ZonedConfig | None = Field(
        None, description="a zoned namespace (NVMe ZNS): zones, write pointers, limits (None: conventional)"
    )
    firmware: FirmwareConfig | None = Field(
        None,
        description="the controller firmware's time per command by operation, a serial stage after the"
        " fetch (models.ssd.firmware; None: not modelled, folded into the service times)",
    )
    ftl: FtlConfig = Field(FtlConfig(), description="the FTL's page mapping and garbage collection (off by default)")
    readahead: ReadAheadConfig | None = Field(
        None,
        description="the controller's read-ahead of sequential read streams (flash presets have one;"
        " None: every read goes to the media, as on 3D XPoint)",
    )
    namespace: NamespaceConfig = Field(
        NamespaceConfig(),
        description="the namespace's LBA format, protection information and atomic write unit",
    )
    conventional_namespaces: tuple[ConventionalNamespaceConfig, ...] = Field(
        (),
        description="conventional namespaces 2, 3, ... beside the first (zoned with ``zoned``), on the same"
        " controller, buffer and dies (models.ssd.namespaces); each needs its size_bytes",
    )
    nsid: int = Field(
        1,
        ge=1,
        le=1024,
        description="the namespace a job reaches when its filename names none (no filename; SPDK without ns=)",
    )
    media: MediaConfig | None = Field(
        None,
        description="the NAND media (models.ssd.media): the parallel units are its dies on its channels, reads"
        " take their page type's tR and a channel transfer, reads suspend programs and erases (None: a"
        " service time per command, as on 3D XPoint)",
    )

    @model_validator(mode="after")
    def _media_fits(self) -> "DeviceConfig":
        m = self.media
        if m is None:
            return self
        unit = m.planes_per_die * m.page_bytes
        if self.write_buffer is not None and self.write_buffer.size_bytes < unit:
            raise ValueError(
                f"write_buffer.size_bytes={self.write_buffer.size_bytes} is smaller than a die's multi-plane program"
                f" (media.planes_per_die x media.page_bytes = {unit}): the buffer gathers one before programming it"
            )
        left = m.controller_read_ns(self.read.base_ns)
        if left < 0:
            raise ValueError(
                f"media: the mean tR {m.mean_read_ns:g} ns and a 4 KiB channel transfer {m.transfer_ns(4096):g} ns"
                f" exceed read.base_ns={self.read.base_ns:g} (the media's share of a read cannot exceed the read)"
            )
        return self

    @model_validator(mode="after")
    def _datapath_fits_units(self) -> "DeviceConfig":
        if self.datapath is not None and self.datapath.count > self.parallel_units:
            raise ValueError(
                f"datapath.count={self.datapath.count} exceeds parallel_units={self.parallel_units}: media"
                " unit u uses path u mod count, so the extra paths would never carry data"
            )
        return self

    @model_validator(mode="after")
    def _stripe_fits_units(self) -> "DeviceConfig":
        width = self.zoned.stripe_width if self.zoned is not None else None
        if width is not None and width > self.parallel_units:
            raise ValueError(
                f"zoned.stripe_width={width} exceeds parallel_units={self.parallel_units}: a zone is striped"
                " over units the device has"
            )
        return self

    @model_validator(mode="after")
    def _buffer_has_programs(self) -> "DeviceConfig":
        programs, buf = self.write_cache_program_ns > 0, self.write_buffer is not None
        if programs != buf:
            raise ValueError(
                "write_cache_program_ns > 0 needs a write_buffer (the DRAM buffer its programs flush), and a"
                f" write_buffer needs write_cache_program_ns > 0 (got {self.write_cache_program_ns:g} ns and"
                f" write_buffer={'set' if buf else 'None'})"
            )
        slc = self.slc_cache
        if slc is not None:
            if not programs:
                raise ValueError("slc_cache needs write_cache_program_ns > 0 and a write_buffer: its SLC rate")
            slc_gb_s = self.write_buffer.program_gb_s
            if slc.native_write_gb_s >= slc_gb_s:
                raise ValueError(
                    f"slc_cache.native_write_gb_s={slc.native_write_gb_s:g} is not below the SLC rate"
                    f" (write_buffer.program_gb_s={slc_gb_s:g}): no cliff"
                )
        return self

    @model_validator(mode="after")
    def _zones_fit(self) -> "DeviceConfig":
        z = self.zoned
        if z is None:
            return self
        if self.capacity_bytes is None or self.capacity_bytes < z.zone_size_bytes:
            raise ValueError(
                f"zoned: a zoned namespace needs capacity_bytes of at least one zone ({z.zone_size_bytes} bytes)"
            )
        if self.ftl.enabled:
            raise ValueError(
                "zoned with ftl.enabled: a ZNS device's host resets zones, the FTL model is for conventional namespaces"
            )
        return self

    @model_validator(mode="after")
    def _nsid_exists(self) -> "DeviceConfig":
        n = 1 + len(self.conventional_namespaces)
        if self.nsid > n:
            have = "namespace 1 only" if n == 1 else f"namespaces 1-{n}"
            raise ValueError(
                f"nsid={self.nsid}: the SSD has {have} (ssd.conventional_namespaces adds conventional"
                " namespaces 2, 3, ...)"
            )
        if self.conventional_namespaces and self.capacity_bytes is None:
            raise ValueError(
                "conventional_namespaces: the first namespace needs capacity_bytes (the others follow it in"
                " the controller's address space)"
            )
        if self.conventional_namespaces and self.ftl.enabled:
            raise ValueError("conventional_namespaces with ftl.enabled: the FTL maps one namespace (not modelled)")
        return self

    @model_validator(mode="after")
    def _ftl_steady_fits(self) -> "DeviceConfig":
        if self.ftl.enabled:
            self.ftl.check_steady(self.capacity_bytes)
        return self
