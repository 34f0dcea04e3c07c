"""What the kernel tells user space of a zoned block device: its zone report (the BLKREPORTZONE
ioctl, ``blkdev_report_zones``) and its limits (sysfs ``queue/chunk_sectors``, ``nr_zones``,
``max_open_zones``, ``max_active_zones``; Linux exposes the NVMe MOR/MAR plus one, 0 for no
limit). Zone resets and finishes are the BLKRESETZONE / BLKFINISHZONE ioctls: synchronous
REQ_OP_ZONE_RESET / REQ_OP_ZONE_FINISH requests (``blkdev_zone_mgmt``), which reach the device as
Zone Management Send commands (request ops ``zone_reset`` / ``zone_finish``)."""

from __future__ import annotations

from dataclasses import dataclass

from models.os.block.host import BlockHost


@dataclass(frozen=True)
class ZoneReport:
    """One zoned device as user space sees it: zone size and capacity (bytes), the zones' write
    pointers (bytes from each zone's start) and conditions, and the open and active limits (0:
    none)."""

    zone_bytes: int
    capacity_bytes: int
    write_pointers: tuple[int, ...]
    full: tuple[bool, ...]
    max_open_zones: int
    max_active_zones: int


def report_zones(host: BlockHost, dev: int) -> ZoneReport | None:
    """The zone report of the host's SSD ``dev``, None for a conventional (not zoned) one."""
    device = host.devices[dev]
    zones = device.zones
    if zones is None:
        return None
    cfg = device.cfg.zoned
    rep = zones.report()
    return ZoneReport(
        zone_bytes=zones.size,
        capacity_bytes=zones.cap,
        write_pointers=tuple(wp for _st, wp, _cap in rep),
        full=tuple(wp >= cap for _st, wp, cap in rep),
        max_open_zones=cfg.max_open_zones or 0,
        max_active_zones=cfg.max_active_zones or 0,
    )
