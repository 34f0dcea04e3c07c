"""Configuration of an NVMe SSD: command path, media service, link, power.

Units: ns, bytes, GB/s (1e9 bytes/s), W. Presets with cited values: :mod:`models.ssd.presets`.
"""

from __future__ import annotations

from pydantic import Field, model_validator

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
        description="flash with a power-protected DRAM write buffer: a write completes after its (buffer)"
        " service time, and its media unit stays busy this much longer programming NAND in the background"
        " (0 = no cache)",
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

    @model_validator(mode="after")
    def _datapath_fits_units(self) -> "DeviceConfig":
        if self.datapath is not None and self.datapath.count > self.parallel_units:
            raise ValueError(
                f"datapath.count={self.datapath.count} exceeds parallel_units={self.parallel_units}: media"
                " unit u uses path u mod count, so the extra paths would never carry data"
            )
        return self
