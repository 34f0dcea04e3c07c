"""fio's ``zonemode=zbd`` (zbd.c, fio 3.42) and ``zonemode=strided`` (io_u.c): where a job's IOs go
on zones.

zbd: fio reads the device's zone report when it opens it and keeps its own write pointer per zone
(``struct fio_zone_info``), shared by every job on the device (``zoned_block_device_info``), with
the list of zones being written (``write_zones``, at most ``max_open_zones``: the device's
max_active_zones, else its max_open_zones, unless the job sets a lower one). It moves each IO
(``zbd_adjust_block``) so that it is valid:

* a write goes to its zone's write pointer, which fio advances at queue time (so several writes
  to one zone may be in flight; the kernel's mq-deadline keeps them in order). A zone not being
  written joins the list if there is room (``zbd_write_zone_get``; ``job_max_open_zones`` bounds
  one job's share); otherwise the write goes to a zone of the list, chosen from the offset
  (``zbd_convert_to_write_zone``). A sequential job skips the part of a zone beyond its capacity
  to the next zone. A full zone (less than the minimum block size left) is reset before it is
  written again, after the job's writes in flight have completed (``io_u_quiesce``, then the
  BLKRESETZONE ioctl); a zone leaves the list once it is full. A zone whose rest is smaller than
  the block size is finished (BLKFINISHZONE) and the write moves to the next zone. With
  ``zone_reset_frequency``, once the zones of the job's range hold ``zone_reset_threshold`` x its
  size of data, every ``1 / frequency``-th write resets its zone first (``zbd_dec_and_reset_write_cnt``);
* a read (unless ``read_beyond_wp``) stays below the write pointer: a random one is folded into
  the written part of its zone, a sequential one moves to the next zone with data; with no zone
  holding data the job ends (``io_u_eof``);
* a trim is a reset of a zone holding data (``zbd_do_io_u_trim``), counted as a trim: a random one
  of an empty zone moves to the nearest zone with data (``zbd_find_zone``), and ends the job when
  there is none; fio refuses a trim block size other than the zone size (``zbd_verify_bs``).
  A reset of an empty zone issues no ioctl (``__zbd_reset_zone``).

The job's range is rounded to whole zones (``zbd_verify_sizes``: the offset up, the size down).

strided: the job works in a window of ``zonerange`` bytes; after ``zonesize`` bytes it moves the
window on by ``zonerange + zoneskip`` (fio's ``fill_io_u``), wrapping to the job's start past its end.

:class:`JobZones` is a job thread's zonemode part: it takes each IO from the thread's offsets part
(models.ioengines.io_offsets) and moves it (zbd) or the window (strided); the thread issues the zone
ioctls it returns (:data:`ZONE_OPS`) as the blocking ioctls fio's job thread makes.
"""

from __future__ import annotations

from models.ioengines.io_offsets import IoOffsets
from models.ioengines.job import FioJob
from models.os.block.zoned import ZoneReport
from simcore.errors import ConfigError

#: fio's ZBD_MAX_WRITE_ZONES (zbd_types.h): the most zones it tracks as write targets
ZBD_MAX_WRITE_ZONES = 4096
#: what a zoned job's next IO may be besides a read, write or trim: a zone reset or finish (the
#: BLKRESETZONE / BLKFINISHZONE ioctls), or the end of the job (fio's io_u_eof: no zone to read)
ZONE_OPS = frozenset({"zone_reset", "zone_finish", "zbd_eof"})


class ZbdFile:
    """fio's view of one zoned device, shared by its jobs: write pointers (bytes from each zone's
    start), the zones being written, the reset counter."""

    def __init__(self, report: ZoneReport, max_open_zones: int):
        self.zsize = report.zone_bytes
        self.cap = report.capacity_bytes
        self.wp = list(report.write_pointers)
        limit = report.max_active_zones or report.max_open_zones
        self.max_write_zones = max_open_zones or limit or ZBD_MAX_WRITE_ZONES
        self.write_zones: list[int] = []
        self.write_cnt = 0  # writes left before the next threshold reset (zone_reset_frequency)
        self.resets = 0
        self.finishes = 0


class ZbdJob:
    """One job thread's zone logic on a :class:`ZbdFile` (its range in whole zones)."""

    def __init__(self, info: ZbdFile, job: FioJob, base: int, span: int, random: bool, min_bs: int):
        zs = info.zsize
        self.info = info
        self.lo = -(-base // zs)  # zbd_verify_sizes: the offset rounded up to a zone start ...
        self.hi = min((base + span) // zs, len(info.wp))  # ... the end down to a zone end
        if self.hi <= self.lo:
            raise ConfigError(
                f"job '{job.name}': zonemode=zbd: its range (offset {base}, size {span} bytes) holds no whole"
                f" zone of {zs} bytes; fio would refuse it too"
            )
        self.base = self.lo * zs
        self.span = (self.hi - self.lo) * zs
        self.random = random
        self.min_bs = min_bs
        self.job_max = job.job_max_open_zones
        self.mine: list[int] = []  # the write zones this job opened
        self.zrt = job.zone_reset_threshold
        self.zrf = job.zone_reset_frequency
        self.beyond_wp = job.read_beyond_wp
        self.io_size = job.size_bytes or self.span

    def _zone(self, off: int) -> int:
        z = off // self.info.zsize
        return z if self.lo <= z < self.hi else self.lo + (z - self.lo) % (self.hi - self.lo)

    def _next(self, z: int) -> int:
        return z + 1 if z + 1 < self.hi else self.lo

    def _write_zone(self, z: int, off: int) -> int:
        """``zbd_write_zone_get``, else ``zbd_convert_to_write_zone``: the zone the write goes to."""
        info = self.info
        wz = info.write_zones
        if z in wz:
            return z
        room = len(wz) < info.max_write_zones and (not self.job_max or len(self.mine) < self.job_max)
        if room:
            wz.append(z)
            self.mine.append(z)
            return z
        cands = self.mine if self.job_max and len(self.mine) >= self.job_max else wz
        return cands[(off - self.base) * len(cands) // self.span]

    def _close(self, z: int) -> None:
        wz = self.info.write_zones
        if z in wz:
            wz.remove(z)
        if z in self.mine:
            self.mine.remove(z)

    def _threshold_reset(self) -> bool:
        """zone_reset_threshold / zone_reset_frequency: True when this write resets its zone."""
        info = self.info
        if sum(info.wp[self.lo : self.hi]) < self.io_size * self.zrt:
            return False
        if info.write_cnt <= 0:
            info.write_cnt = max(1, round(1.0 / self.zrf))
        info.write_cnt -= 1
        return info.write_cnt == 0

    def write(self, off: int, bs: int) -> list[tuple[str, int, int]]:
        """The IOs a write at ``off`` of ``bs`` bytes becomes: zone finishes and resets, then the
        write at a write pointer: [(op, bytes, offset)]."""
        info = self.info
        zs, cap, wp, mbs = info.zsize, info.cap, info.wp, self.min_bs
        z = self._zone(off)
        if not self.random and z * zs + cap <= off < (z + 1) * zs:
            z = self._next(z)  # a sequential job skips the zone's part beyond its capacity
        ios: list[tuple[str, int, int]] = []
        for _ in range(self.hi - self.lo + 1):
            z = self._write_zone(z, off)
            left = cap - wp[z]
            if 0 < left < mbs:  # a remainder no block fits: finish the zone, go on to the next
                ios.append(("zone_finish", 0, z * zs))
                wp[z] = cap
                info.finishes += 1
                self._close(z)
                z = self._next(z)
                continue
            break
        if ((self.zrf and self._threshold_reset()) or wp[z] + mbs > cap) and wp[z]:
            ios.append(("zone_reset", 0, z * zs))  # (__zbd_reset_zone: no ioctl for an empty zone)
            wp[z] = 0
            info.resets += 1
        start = z * zs + wp[z]
        n = min(bs, cap - wp[z]) // mbs * mbs
        wp[z] += n
        if wp[z] + mbs > cap:
            self._close(z)  # full once this write is queued
        ios.append(("write", n, start))
        return ios

    def read(self, off: int, bs: int) -> int | None:
        """Where a read at ``off`` goes (below a write pointer), or None: no zone holds data."""
        if self.beyond_wp:
            return off
        info = self.info
        zs, wp = info.zsize, info.wp
        z = self._zone(off)
        rel = off - z * zs if z * zs <= off < (z + 1) * zs else 0
        if not self.random and rel + bs > wp[z]:
            z, rel = self._next(z), 0  # a sequential read past the data: the next zone's start
        for _ in range(self.hi - self.lo):
            if wp[z] >= bs:
                break
            z, rel = self._next(z), 0
        else:
            return None
        if rel + bs > wp[z]:  # folded into the zone's written part
            rel = rel % (wp[z] - bs + 1) // self.min_bs * self.min_bs
        return z * zs + rel

    def trim(self, off: int) -> int | None:
        """A trim (fio's zbd_adjust_block and zbd_do_io_u_trim): the start of the zone it resets, or
        None: a random trim found no zone holding data (fio's io_u_eof ends the job). A random trim
        of an empty zone moves to the nearest zone holding data, searching up and down from it in
        the job's range (zbd_find_zone); a sequential trim takes its own zone (an empty one is
        reset too: fio would skip the ioctl and count the trim, a difference of one 2 us reset)."""
        info = self.info
        z = self._zone(off)
        if self.random and not info.wp[z]:
            for d in range(1, self.hi - self.lo):
                if z + d < self.hi and info.wp[z + d]:
                    z += d
                    break
                if z - d >= self.lo and info.wp[z - d]:
                    z -= d
                    break
            else:
                return None
        if info.wp[z]:
            info.resets += 1  # (__zbd_reset_zone counts only a zone that held data)
        info.wp[z] = 0
        self._close(z)
        return z * info.zsize


class Strided:
    """fio's zonemode=strided window: ``zonesize`` bytes in each ``zonerange`` window, then the
    window moves on by ``zonerange + zoneskip`` (past the job's region: back to its start)."""

    def __init__(self, job: FioJob, base: int, span: int):
        self.first = base
        self.end = base + span
        self.start = base
        self.size = job.zonesize_bytes
        self.range = job.zonerange_bytes or job.zonesize_bytes
        self.step = self.range + job.zoneskip_bytes
        self.done = 0

    def window(self) -> tuple[int, int]:
        """The current window: (base, span) in bytes."""
        return self.start, min(self.range, self.end - self.start)

    def issued(self, nbytes: int) -> tuple[int, int] | None:
        """Count ``nbytes``; the next window when this one's bytes are done, else None."""
        self.done += nbytes
        if self.done < self.size:
            return None
        self.done = 0
        nxt = self.start + self.step
        self.start = nxt if nxt < self.end else self.first
        return self.window()


class JobZones:
    """One job thread's zonemode: ``zbd`` (a :class:`ZbdJob`: the job's range in whole zones, its IOs
    moved to write pointers) or ``strided`` (a window that moves on), over the thread's offsets."""

    def __init__(self, offs: IoOffsets, zbd: ZbdJob | None = None, strided: Strided | None = None) -> None:
        self.offs = offs
        self.zbd = zbd
        self.strided = strided
        self.pending: list[tuple[str, int, int]] = []  # the IOs a zbd write became, after the first
        self.trim_bytes = 0  # the bytes of the last zbd trim (a counted zone reset)
        if zbd is not None:
            offs.set_region(zbd.base, zbd.span)
        else:
            assert strided is not None
            offs.set_region(*strided.window())

    def next(self, op: str | None) -> tuple[str, int, int]:
        """The next IO of a zonemode job: strided moves its window on after zonesize bytes; zbd
        moves each IO to a valid place (reads below, writes at a write pointer, trims to zone
        resets) and queues the zone resets and finishes a write needs before it."""
        zbd = self.zbd
        offs = self.offs
        if zbd is None:
            io = offs.next(op)
            assert self.strided is not None
            window = self.strided.issued(io[1])
            if window is not None:
                offs.set_region(*window)
            return io
        pending = self.pending
        if pending:
            return pending.pop(0)
        op, bs, off = offs.next(op)
        if op == "write":
            ios = zbd.write(off, bs)
            io = ios[-1]
            offs.next_offset = io[2] + io[1]
            pending.extend(ios[1:])
            return ios[0]
        if op == "trim":
            self.trim_bytes = bs
            zone = zbd.trim(off)
            if zone is None:
                return "zbd_eof", 0, 0  # no zone holds data to trim: fio's io_u_eof
            return "zone_reset", bs, zone  # a counted trim (its bytes: fio's trim stats)
        where = zbd.read(off, bs)
        if where is None:
            return "zbd_eof", 0, 0  # no zone holds data: fio's io_u_eof ends the job
        offs.next_offset = where + bs
        return op, bs, where
