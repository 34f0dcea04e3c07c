"""The NVM commands fio's io_uring_cmd sends for its writes besides Write (its ``write_mode``), as
the device executes them, and what they leave behind for later reads.

A command's :attr:`~models.ssd.command.NvmeCommand.opcode` names it (NVM Command Set 2.0; the
opcodes of include/linux/nvme.h, Linux 6.12):

* **Write Zeroes** (08h) moves no data (fio sends it without a buffer). On a device with an FTL
  (or zones) the controller records the range as zeroes in its mapping table: the range's pages
  are deallocated (the FTL's trim: garbage collection no longer copies them) and no page is
  programmed; the work is the mapping table's, served like a deallocation (``ssd.trim``). The
  specification lets a controller deallocate the blocks of a Write Zeroes whether or not the host
  sets DEAC (fio 3.41 does not) [recalled, NVM Command Set 2.0 section 3.2.8]; that flash
  controllers do is an estimate. On a device without an FTL (the in-place media of Optane) it
  programs zeroes: a write's media service on the unit holding the address, with no link
  transfer.
* **Write Uncorrectable** (04h) moves no data and marks the range's logical blocks invalid: a
  later Read or Verify of a marked block completes with Unrecovered Read Error (status 281h) after
  its media read. A write (or Write Zeroes, or a deallocation) of a block clears its mark. The
  FTL's old copy of the data is dropped (the mapping entry now says uncorrectable); the work is
  the mapping table's.
* **Verify** (0Ch) reads the range from the media and checks it (ECC) without moving data to the
  host: a read's media service on its unit, no data path, no link transfer; a marked block fails
  it with status 281h.
* **Zone Append** (7Dh) names its zone's start (fio's zone_append mode: the zone's ZSLBA); the
  zone's write pointer places the data (:mod:`models.ssd.zones`), so appends at any depth do not
  fail as out-of-order writes do. It goes on through the device's write path.

fio counts every one of them as a write (its direction is DDIR_WRITE; only the opcode differs).
"""

from __future__ import annotations

from typing import Any

from models.ssd.command import READ_ERROR, VERIFY, WRITE_UNCOR, WRITE_ZEROES, ZONE_APPEND, NvmeCommand
from models.ssd.zones import OK

#: Invalid Command Opcode (generic status 01h): a Zone Append to a conventional namespace
INVALID_OPCODE = 0x01


class NvmCommands:
    """One device's Write Zeroes, Write Uncorrectable, Verify and Zone Append, and the blocks Write
    Uncorrectable marked. Until the first such command (the device's ``nvm_used``) the device's
    other commands do not pass here. Counters are monotonic."""

    def __init__(self, dev: Any) -> None:
        """``dev``: the :class:`models.ssd.device.NvmeDevice` whose commands these are."""
        self.dev = dev
        self.lba = dev.cfg.namespace.lba_data_bytes
        #: logical blocks (byte offset // block size) marked by Write Uncorrectable
        self.marked: set[int] = set()
        self.write_zeroes = 0  # Write Zeroes commands
        self.zeroes_bytes = 0  # bytes they zeroed
        self.zeroes_deallocated_bytes = 0  # of which deallocated in the mapping table (no program)
        self.write_uncor = 0  # Write Uncorrectable commands
        self.uncor_blocks = 0  # logical blocks they marked
        self.uncorrectable_reads = 0  # Reads that met a marked block (failed: Unrecovered Read Error)
        self.verifies = 0  # Verify commands
        self.verify_bytes = 0  # bytes they read from the media
        self.verify_errors = 0  # Verifies that met a marked block
        self.zone_appends = 0

    def _blocks(self, offset: int, nbytes: int) -> range:
        return range(offset // self.lba, -(-(offset + max(nbytes, 1)) // self.lba))

    def _hits_mark(self, req: NvmeCommand) -> bool:
        marked = self.marked
        return bool(marked) and any(b in marked for b in self._blocks(req.offset, req.nbytes))

    def _clear(self, req: NvmeCommand) -> None:
        if self.marked:
            self.marked.difference_update(self._blocks(req.offset, req.nbytes))

    def serve(self, qp: Any, req: NvmeCommand, t: float, dma_extra_ns: float) -> bool:
        """The command fetched at ``t``: True when this module served it (its completion is
        booked), False when the device's own path goes on with it (a read, a write, a
        deallocation, a zone append: the marks checked or cleared first)."""
        code = req.opcode
        if not code:
            if req.op == "read":
                if self._hits_mark(req):
                    req.status = READ_ERROR  # its media read happens: the ECC fails it
                    self.uncorrectable_reads += 1
            elif self.marked:  # a write, deallocation or zone reset clears them
                zones = self.dev.zones
                if req.op == "zone_reset" and zones is not None:
                    z = zones.zone_of(req.offset)
                    self.marked.difference_update(self._blocks(z * zones.size, zones.size))
                else:
                    self._clear(req)
            return False
        dev = self.dev
        dev.nvm_used = True
        if code == ZONE_APPEND:
            zones = dev.zones
            if zones is None:
                req.status = INVALID_OPCODE
                dev._fail(qp, req, dma_extra_ns)
                return True
            req.offset = zones.zone_of(req.offset) * zones.size  # the zone's start (ZSLBA)
            self.zone_appends += 1
            return False
        if code != VERIFY and dev.zones is not None:  # a zoned namespace: they write at its pointer
            status, _off = dev.zones.write(req.offset, req.nbytes)
            if status != OK:
                req.status = status
                dev.zones.errors += 1
                dev.zone_errors += 1
                dev._fail(qp, req, dma_extra_ns)
                return True
        if dev.readahead is not None and code != VERIFY:  # its prefetched data over the range is stale
            dev.readahead.invalidate(req.offset, req.nbytes)
        if code == WRITE_ZEROES:
            start, end, svc = self._zeroes(req, t)
        elif code == WRITE_UNCOR:
            self.marked.update(self._blocks(req.offset, req.nbytes))
            self.write_uncor += 1
            self.uncor_blocks += len(self._blocks(req.offset, req.nbytes))
            if dev.ftl is not None:
                dev.ftl.trim(req.offset, req.nbytes)
            start, end, svc = self._mapping(req.nbytes, t)
        elif code == VERIFY:
            start, end, svc = self._verify(req, t)
        else:
            raise ValueError(f"NVMe opcode {code:#x} has no model")
        req.t_dev_start = start
        req.t_dev_end = end
        req.device_service_ns = svc
        dev._accept(qp, req, end + dev._post_ns + dma_extra_ns)
        return True

    def _zeroes(self, req: NvmeCommand, t: float) -> tuple[float, float, float]:
        """Write Zeroes: deallocated in the mapping table (an FTL or zones), else programmed."""
        dev = self.dev
        self._clear(req)
        self.write_zeroes += 1
        self.zeroes_bytes += req.nbytes
        if dev.ftl is not None or dev.zones is not None:
            if dev.ftl is not None:
                dev.ftl.trim(req.offset, req.nbytes)
            self.zeroes_deallocated_bytes += req.nbytes
            return self._mapping(req.nbytes, t)
        return self._media(req, t, dev._svc_write, write=True)

    def _verify(self, req: NvmeCommand, t: float) -> tuple[float, float, float]:
        self.verifies += 1
        self.verify_bytes += req.nbytes
        if self._hits_mark(req):
            req.status = READ_ERROR
            self.verify_errors += 1
        return self._media(req, t, self.dev._svc_read, write=False)

    def _mapping(self, nbytes: int, t: float) -> tuple[float, float, float]:
        """The controller's mapping-table work for ``nbytes``, serial with its deallocations
        (``ssd.trim``'s times; nothing crosses the link); (start, end, service)."""
        dev = self.dev
        trim = dev.cfg.trim
        start = dev._trim_free if dev._trim_free > t else t
        extra_mib = (nbytes - 4096) / (1 << 20)
        svc = trim.base_ns + (trim.per_mib_ns * extra_mib if extra_mib > 0 else 0.0)
        end = dev._trim_free = start + svc
        dev._busy_trim_unit_ns += svc
        return start, end, svc

    def _media(self, req: NvmeCommand, t: float, service: Any, write: bool) -> tuple[float, float, float]:
        """A media access of the command's size on the unit holding its address, in doorbell order
        (the read's or write's service time and jitter), no data moved to or from the host."""
        dev = self.dev
        unit = (req.offset // dev._stripe) % dev._n_units
        extra_kib = req.nbytes / 1024.0 - 4.0
        media = dev.media
        if media is not None and not write:  # NAND: the controller's share, the die's tR (no transfer out)
            extra = service.per_kib_ns * extra_kib if extra_kib > 0.0 else 0.0
            start, end, svc = media.read(unit, t + dev._ctrl_read_ns, media.page_type(req.offset), extra, req.nbytes)
            dev._busy_read_unit_ns += svc
            return start, end, svc
        base = service.base_ns
        svc = (base + service.per_kib_ns * extra_kib if extra_kib > 0.0 else base) * service.jitter()
        free = dev._units[unit]
        start = free if free > t else t
        end = dev._units[unit] = start + svc
        if write:
            dev._busy_write_unit_ns += svc
        else:
            dev._busy_read_unit_ns += svc
        return start, end, svc

    def counters(self) -> dict[str, float]:
        """The monotonic counters of the commands the device has had (the run's ``ssd_media``)."""
        out: dict[str, float] = {}
        if self.write_zeroes:
            out.update(
                write_zeroes=self.write_zeroes,
                write_zeroes_bytes=self.zeroes_bytes,
                write_zeroes_deallocated_bytes=self.zeroes_deallocated_bytes,
            )
        if self.write_uncor:
            out.update(
                write_uncorrectable=self.write_uncor,
                uncorrectable_blocks_marked=self.uncor_blocks,
                uncorrectable_reads=self.uncorrectable_reads,
            )
        if self.verifies:
            out.update(verifies=self.verifies, verify_bytes=self.verify_bytes, verify_errors=self.verify_errors)
        if self.zone_appends:
            out["zone_appends"] = self.zone_appends
        return out
