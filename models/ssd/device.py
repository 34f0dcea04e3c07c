"""An NVMe SSD: queue pairs, command fetch, media units, media data paths, a shared link, CQ posting.

Pipeline of one command (times in ns):
  doorbell -> fetch (``fetch_ns``) -> [write: data DMA over the link, then its media data path]
  -> media service on the unit holding its address -> [read: its media data path, then data DMA
  over the link] -> completion entry posted + MSI-X (``post_ns``).
The media service is either a time per command (base + per-KiB + lognormal jitter: 3D XPoint) or,
with ``media`` (flash, :mod:`models.ssd.media`), the controller's share then the die's tR for the
page type and its channel's transfer, reads suspending the die's programs and erases. Flash with a
DRAM write buffer (:mod:`models.ssd.write_buffer`) acknowledges a write once the buffer has room and
flushes it by programs on the dies (the SLC cache's rate, then the native one). The front end
(fetch, posting) overlaps across commands. The media stage is ``parallel_units`` units (dies),
each serving one operation at a time; the address picks the unit (``unit_stripe_bytes``
interleave), so random commands collide on units at random. The data paths (``datapath``) and the
link each carry one transfer at a time at their rates (cut-through between them). Every stage is
computed analytically when the doorbell rings (paths, channels and link serve transfers in the
order their data is ready, first fit into their free gaps), so a command costs the event queue a
single event: its completion posting.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Final

import numpy as np

from models.ssd.apst import ApstState, apst_steps
from models.ssd.command import (
    PATH_BUFFER,
    PATH_MEDIA,
    PATH_OTHER,
    PATH_READAHEAD,
    PATH_UNIT,
    ZONE_APPEND,
    NvmeCommand,
)
from models.ssd.config import DeviceConfig
from models.ssd.firmware import Firmware
from models.ssd.ftl import Ftl, gc_work
from models.ssd.irq import IrqConfig
from models.ssd.irq_generation import IrqGeneration
from models.ssd.media import Media
from models.ssd.nvm_commands import NvmCommands
from models.ssd.readahead import ReadAhead
from models.ssd.transfer_path import TransferPath
from models.ssd.write_buffer import WriteBuffer
from models.ssd.zone_media import ZonedMedia
from models.ssd.zones import OK, ZoneSet
from simcore.engine import Engine, Handler, handler_call
from simcore.errors import ConfigError
from simcore.rng import BatchedDraws
from simcore.stats import LatencyStats

#: one Dataset Management range (context attributes, length, starting LBA): what a deallocate moves
DSM_RANGE_BYTES: Final = 16

#: Zone Management Send actions (a zoned namespace's commands that move no data)
ZONE_MGMT_OPS: Final = frozenset({"zone_reset", "zone_finish", "zone_open", "zone_close"})


class QueuePair:
    """One NVMe submission/completion queue pair as the controller sees it: its SQ sequence, the
    completion entries posted and not yet reaped, and how it tells the host: an interrupt-driven
    pair's vector (its interrupt generation decides when it fires), a polled pair's posting
    callback. The host's side of the pair (which CPU it serves, who polls it, the interrupt
    handler) belongs to the host's driver (:class:`models.os.drivers.nvme.NvmeQueue`, or the server's own
    user-space driver), which registers the callbacks: the device knows nothing else of it."""

    __slots__ = (
        "qid",
        "device",
        "polled",
        "cq",
        "on_post",
        "on_irq",
        "irq_gen",
        "inflight",
        "depth",
        "seq",
        "posted_times",
        "post_gaps",
        "submit_hook",
    )

    def __init__(self, qid: int, device: "NvmeDevice", polled: bool, depth: int):
        self.qid = qid
        self.device = device
        self.polled = polled  # no interrupt vector (the CQ was created with interrupts disabled)
        self.depth = depth
        self.cq: list[Any] = []  # posted, not yet reaped completion entries (requests)
        #: polled pairs: called as on_post(qp, command) when an entry is posted (the host driver's)
        self.on_post: Callable[[QueuePair, Any], None] | None = None
        #: interrupt-driven pairs: the MSI-X vector, called as on_irq(qp, urgent_only) when the
        #: interrupt generation fires it (the host driver's handler entry)
        self.on_irq: Callable[[QueuePair, bool], None] | None = None
        self.irq_gen: IrqGeneration | None = None  # device-side interrupt generation policy of this CQ's vector
        self.inflight = 0
        self.seq = 0  # SQ sequence number of the next command
        self.submit_hook: Callable[[Any], None] | None = (
            None  # the interrupt-generation policy's on_submit, if it tracks the SQ
        )
        # completion inter-arrival statistics: CQE post times not folded yet into post_gaps (None: off)
        self.posted_times: list[float] | None = []
        self.post_gaps = LatencyStats()  # gaps between consecutive CQE posts, ns

    def fold_posts(self) -> None:
        """Fold the buffered CQE post times into ``post_gaps`` (the last one stays: the next gap
        starts there)."""
        t = self.posted_times
        if t is not None and len(t) > 1:
            self.post_gaps.add(np.diff(np.asarray(t, dtype=np.float64)))
            del t[:-1]

    def restart_gaps(self) -> None:
        """Count inter-arrival gaps from the next CQE on (the start of a measured interval)."""
        if self.posted_times is not None:
            self.posted_times = []
        self.post_gaps = LatencyStats()


def _lognormal_sampler(mean: float, sd: float):
    """Sampler of lognormal variates with the given mean and sd (sd=0: constant)."""
    if sd <= 0:
        return lambda gen, n: np.full(n, mean)
    sigma2 = math.log(1.0 + (sd / mean) ** 2)
    mu = math.log(mean) - sigma2 / 2.0
    sigma = math.sqrt(sigma2)
    return lambda gen, n: gen.lognormal(mu, sigma, n)


class Posting(Handler):
    """A command's completion entry, to be posted in its pair's CQ (the event of its Call: a native
    call, where a bound method and an argument tuple per command cost more than the posting)."""

    __slots__ = ("device", "qp", "req")

    def __init__(self, device: NvmeDevice, qp: QueuePair, req: NvmeCommand) -> None:
        self.device = device
        self.qp = qp
        self.req = req

    def on_event(self) -> None:
        self.device._post(self.qp, self.req)


class OpService:
    """One operation's media service as the hot path reads it (from ``cfg.read`` / ``cfg.write``):
    ``base_ns`` for 4 KiB, ``per_kib_ns`` per KiB beyond, times a ``jitter()`` draw."""

    __slots__ = ("base_ns", "per_kib_ns", "jitter")

    def __init__(self, base_ns: float, per_kib_ns: float, jitter: Callable[[], float]):
        self.base_ns = base_ns
        self.per_kib_ns = per_kib_ns
        self.jitter = jitter


class NvmeDevice:
    """Runtime model of one NVMe SSD."""

    def __init__(
        self,
        cfg: DeviceConfig,
        engine: Engine,
        rng_gen: np.random.Generator,
        index: int = 0,
        irq_cfg: IrqConfig | None = None,
        irq_generation: type[IrqGeneration] | None = None,
    ):
        """``irq_cfg`` (``nvme.*``) and ``irq_generation`` (the class of ``irq_cfg.irq``, resolved by
        the assembly) drive the interrupts of interrupt-driven queue pairs; a device with only
        polled queue pairs needs neither."""
        self.cfg = cfg
        self.engine = engine
        self.index = index
        self.qps: list[QueuePair] = []
        mc = cfg.media
        #: the NAND dies and channels (models.ssd.media; None: a service time per command on each unit)
        self.media = Media(mc, cfg.parallel_units, lambda: TransferPath(engine)) if mc else None
        self._units = self.media.die_free if self.media else [0.0] * cfg.parallel_units  # when each unit is free
        self._n_units = cfg.parallel_units
        self._stripe = cfg.unit_stripe_bytes
        self._link = TransferPath(engine)
        self._ns_per_byte = 1.0 / cfg.link_gb_s
        dp = cfg.datapath
        # the media data paths (none: not modelled) and their ns per byte, read and write
        self._paths = [TransferPath(engine) for _ in range(dp.count)] if dp is not None else []
        self._n_paths = len(self._paths)
        self._path_read_ns_per_byte = 1.0 / dp.read_gb_s if dp is not None else 0.0
        self._path_write_ns_per_byte = 1.0 / dp.write_gb_s if dp is not None else 0.0
        self._jitter = {
            "read": BatchedDraws(rng_gen, _lognormal_sampler(1.0, cfg.read.sd_ns / cfg.read.base_ns)),
            "write": BatchedDraws(rng_gen, _lognormal_sampler(1.0, cfg.write.sd_ns / cfg.write.base_ns)),
        }
        # the hot path's view of cfg.read / cfg.write
        self._svc_read = OpService(cfg.read.base_ns, cfg.read.per_kib_ns, self._jitter["read"].next)
        #: with media: the controller's share of a read (the calibrated base less mean tR and transfer), ns
        self._ctrl_read_ns = mc.controller_read_ns(cfg.read.base_ns) if mc else 0.0
        self._svc_write = OpService(cfg.write.base_ns, cfg.write.per_kib_ns, self._jitter["write"].next)
        self._trim_free = 0.0  # when the controller's mapping-table work (deallocations) is free
        ns = cfg.namespace
        #: a logical block as it crosses the link (an extended LBA carries its metadata), bytes, and
        #: the controller's protection information work per block (0: the namespace has none)
        self._lba_unit = ns.lba_data_bytes + (ns.metadata_bytes if ns.extended_lba else 0)
        self._pi_ns_per_lba = ns.pi_ns_per_lba if ns.pi_type else 0.0
        self._setup_media_state(cfg, rng_gen)
        self._fetch_ns = cfg.fetch_ns
        self._post_ns: float = cfg.post_ns
        # Counters (monotonic; the stats layer subtracts a warm-up snapshot).
        self.commands = 0
        self.bytes = 0
        # media unit busy time per operation, and data path transfer time (with a data path stage), ns
        # (busy_unit_ns, busy_path_ns)
        self._busy_read_unit_ns = 0.0
        self._busy_write_unit_ns = 0.0
        self._busy_trim_unit_ns = 0.0
        self._busy_read_path_ns = 0.0
        self._busy_write_path_ns = 0.0
        steps = apst_steps(cfg)
        #: autonomous power state transitions (models.ssd.apst), None without non-operational states
        self.apst = ApstState(cfg, steps) if steps else None
        self.irq_cfg = irq_cfg or IrqConfig.model_validate({})  # the defaults
        self._irq_generation = irq_generation

    def _setup_media_state(self, cfg: DeviceConfig, rng_gen: np.random.Generator) -> None:
        """A zoned namespace's zones and an FTL's map, when the device has them (None otherwise:
        writes then take no detour)."""
        zc = cfg.zoned
        #: the zones of a zoned namespace (models.ssd.zones), None for a conventional one
        self.zones: ZoneSet | None = ZoneSet(zc, cfg.capacity_bytes or 0) if zc is not None else None
        #: the zones on the dies (models.ssd.zone_media): reads and flushes go to the zone's dies
        #: the zoned namespace's end in the controller's address space: conventional namespaces
        #: (models.ssd.namespaces) lie beyond it, outside the zone rules and the zone -> dies map
        self._zoned_end = (cfg.capacity_bytes or 0) if zc is not None else 0
        self.zoned_media = (
            ZonedMedia(zc, self._units, self.media, self._zoned_end or 1 << 62) if zc is not None else None
        )
        self._zone_map = self.zoned_media.map if self.zoned_media is not None else None
        #: the controller firmware's serial stage (models.ssd.firmware), None when not modelled
        self.firmware = Firmware(cfg.firmware, rng_gen) if cfg.firmware is not None else None
        #: the FTL with garbage collection (models.ssd.ftl), None when ftl.enabled is off
        self.ftl: Ftl | None = Ftl.of_device(cfg, rng_gen) if cfg.ftl.enabled else None
        ra = cfg.readahead
        #: the controller's read-ahead of sequential streams (models.ssd.readahead), None without one
        self.readahead: ReadAhead | None = ReadAhead(ra, self._prefetch) if ra is not None else None
        self._hit_ns = ra.hit_ns if ra is not None else 0.0
        wb = cfg.write_buffer
        #: the DRAM write buffer and SLC cache (models.ssd.write_buffer), None without a buffer
        self.write_buffer: WriteBuffer | None = (
            None if wb is None else WriteBuffer(wb, cfg.slc_cache, self._units, cfg.write_cache_program_ns, self.media)
        )
        if self.write_buffer is not None:
            self.write_buffer.zone_map = self._zone_map
        self._checks_writes = self.zones is not None or self.ftl is not None
        self._gc_copy_ns = self.ftl.copy_ns if self.ftl is not None else 0.0  # a GC copy's read and program
        self._gc_unit = 0  # the media unit the next copy or erase goes to (round robin)
        self.zone_errors = 0  # commands failed by the zone rules
        self.nvm_commands = NvmCommands(self)  # Write Zeroes, Write Uncorrectable, Verify, Zone Append
        self.nvm_used = False  # it had one of them: every command passes it (a native flag: the hot path's)

    def add_queue_pair(self, polled: bool, depth: int) -> QueuePair:
        """Create the next I/O queue pair (Create I/O SQ / CQ): ``polled`` without an interrupt
        vector, ``depth`` entries (at most ``max_queue_depth``). The host registers its callbacks
        on it (``on_irq``, ``on_post``)."""
        if len(self.qps) >= self.cfg.max_queue_pairs:
            raise ConfigError(
                f"ssd.max_queue_pairs={self.cfg.max_queue_pairs} ({self.cfg.model}): the controller offers no"
                " further I/O queue pair (the host's driver asked for more than Number of Queues grants)"
            )
        qp = QueuePair(len(self.qps), self, polled, min(depth, self.cfg.max_queue_depth))
        if not polled:
            if self._irq_generation is None:
                raise ValueError(
                    f"{self.cfg.model}: an interrupt-driven queue pair needs an interrupt generation policy"
                )
            gen = qp.irq_gen = self._irq_generation(qp, self.irq_cfg, self.engine)
            if type(gen).on_submit is not IrqGeneration.on_submit:
                qp.submit_hook = gen.on_submit  # only policies that track the SQ see submissions
        self.qps.append(qp)
        return qp

    # long: the hot path of every command, kept inline for speed (the zone and FTL detours are calls)
    def submit(self, qp: QueuePair, req: NvmeCommand, dma_extra_ns: float = 0.0) -> None:
        """The SQ tail doorbell was rung for ``req`` at the current time. ``dma_extra_ns``: what the
        command's data DMA to or from host memory takes longer than to the device's own NUMA node
        (a buffer behind the socket interconnect; the host knows where its buffers are): the
        completion entry, posted after the data, comes that much later."""
        now = self.engine.now
        op = req.op
        nbytes = req.nbytes
        moved = nbytes + req.meta_bytes  # the data and a separate metadata buffer's bytes (MPTR)
        xfer = moved * self._ns_per_byte
        if self.apst is None:
            t = now + self._fetch_ns
        else:  # an idle controller may first have to leave a low-power state
            t = self.apst.on_submit(now) + self._fetch_ns
        req.t_fetched = t
        if self.firmware is not None:  # (an io_uring_cmd Zone Append is a write with its opcode)
            t = self.firmware.command("zone_append" if req.opcode == ZONE_APPEND else op, t)
        # the command's record of where its time goes (plain stores; each path below sets its own)
        req.t_fw = req.t_stage = req.t_xfer = req.t_media_end = t
        req.dev_wait_ns = req.dev_suspend_ns = req.dev_tr_ns = 0.0
        req.dev_page_type = -1
        req.dev_path = PATH_OTHER
        is_read = op == "read"
        if (self.nvm_used or req.opcode) and self.nvm_commands.serve(qp, req, t, dma_extra_ns):
            return  # Write Zeroes, Write Uncorrectable, Verify (models.ssd.nvm_commands)
        if self._checks_writes and not is_read and (req.offset < self._zoned_end or self._not_conventional(req)):
            t = self._media_state(req, t)
            if t < 0.0:
                self._fail(qp, req, dma_extra_ns)
                return
            op = "write" if op == "zone_append" else op
        start: float
        end: float
        svc: float
        ready = -1.0  # a read-ahead hit: when its data is in the controller's DRAM
        ra = self.readahead
        if ra is not None:
            if is_read:
                ready = ra.read(req.offset, nbytes, t)
            else:  # data it prefetched over this range is stale
                ra.invalidate(req.offset, nbytes if nbytes else 1 << 62)
        if ready >= 0.0:
            start, end, svc = self._hit_service(req, ready, t, moved, xfer)
        elif op == "trim" or op in ZONE_MGMT_OPS:
            start, end, svc = self._trim_service(nbytes, t) if op == "trim" else self._zmgmt_service(req, t)
            nbytes = DSM_RANGE_BYTES if op == "trim" else 0  # what crossed the link
        else:  # (inline: the hot path)
            zmap = self._zone_map  # the media unit holding the address (a zone's: on its dies)
            unit = (
                zmap.unit_of(req.offset)
                if zmap is not None and req.offset < self._zoned_end
                else (req.offset // self._stripe) % self._n_units
            )
            path: TransferPath | None = self._paths[unit % self._n_paths] if self._n_paths else None
            if is_read:
                service = self._svc_read
            elif op == "write":
                service = self._svc_write
            else:
                raise ValueError(f"NVMe command {op!r} has no media service model")
            wb = self.write_buffer if not is_read else None
            if not is_read:
                if wb is not None:  # its data moves once the buffer has room for it
                    t = wb.admit(t, nbytes)
                req.t_stage = t
                lstart = self._link.reserve(t, xfer)
                t = lstart + xfer
                if path is not None and wb is None:
                    t = self._write_path(path, lstart, t, moved)
                req.t_xfer = t
            units = self._units
            free = units[unit]  # it serves its commands one at a time, in doorbell order
            # media service time: base + per KiB beyond 4 KiB, times a lognormal jitter draw
            extra_kib = nbytes / 1024.0 - 4.0
            media = self.media if is_read else None
            if media is not None:  # the controller's share, then its die's tR and its channel
                svc = service.per_kib_ns * extra_kib if extra_kib > 0.0 else 0.0
                t += self._ctrl_read_ns
            else:
                base_ns = service.base_ns
                svc = (base_ns + service.per_kib_ns * extra_kib if extra_kib > 0.0 else base_ns) * service.jitter()
            if req.prinfo and self._pi_ns_per_lba:  # the controller checks or inserts each block's tuple
                svc += self._pi_ns_per_lba * (nbytes // self._lba_unit)
            if media is not None:
                req.t_stage = t
                page_type = media.page_type(req.offset)
                start, end, svc = media.read(unit, t, page_type, svc, nbytes)
                req.dev_path = PATH_MEDIA
                req.dev_page_type = page_type
                req.dev_wait_ns = media.last_wait_ns
                req.dev_suspend_ns = media.last_suspend_ns
                req.dev_tr_ns = media.last_tr_ns
            elif wb is not None:
                # in the DRAM buffer: acknowledged after its (buffer) service without waiting for a
                # unit; its flush programs the write frontier's units later (their data path
                # transfer is part of the program time), and its bytes stay held until then
                start = t
                end = start + svc
                wb.flush(nbytes, end, req.offset)
                req.dev_path = PATH_BUFFER
            elif self.zoned_media is not None and is_read:  # reads suspend a zone reset or finish
                start = self.zoned_media.read_start(unit, t, svc)
                end = start + svc
                req.dev_path = PATH_UNIT
                req.dev_wait_ns = start - t
            else:
                start = free if free > t else t
                end = start + svc
                units[unit] = end
                req.dev_path = PATH_UNIT
                req.dev_wait_ns = start - t
            req.t_media_end = end
            if not is_read:
                if wb is None:
                    self._busy_write_unit_ns += svc
            else:
                self._busy_read_unit_ns += svc
                if path is not None:
                    end = self._read_path(path, end, moved, xfer)
                req.t_xfer = end
                end = self._link.reserve(end, xfer) + xfer
                if media is not None:
                    svc += self._ctrl_read_ns
        req.t_dev_start = start
        req.t_dev_end = end
        req.device_service_ns = svc
        self.bytes += nbytes
        self._accept(qp, req, end + self._post_ns + dma_extra_ns)

    def _hit_service(
        self, req: NvmeCommand, ready: float, t: float, moved: int, xfer: float
    ) -> tuple[float, float, float]:
        """A read-ahead hit fetched at ``t``, its data in DRAM at ``ready``: the controller serves it
        (``hit_ns``), then its data crosses its data path and the link; no media unit is touched;
        (start, end, service). Its record: waiting for the prefetch in ``dev_wait_ns``."""
        start = ready if ready > t else t
        svc = self._hit_ns
        end = start + svc
        req.dev_path = PATH_READAHEAD
        req.dev_wait_ns = start - t
        req.t_media_end = end
        if self._n_paths:
            unit = (req.offset // self._stripe) % self._n_units
            end = self._read_path(self._paths[unit % self._n_paths], end, moved, xfer)
        req.t_xfer = end
        end = self._link.reserve(end, xfer) + xfer
        return start, end, svc

    def _prefetch(self, offset: int, nbytes: int, t: float) -> float:
        """A read-ahead chunk read from the media into DRAM, no earlier than ``t``: it occupies one
        unit for a read's service time of its size, a stream's consecutive chunks on consecutive
        units (a superpage: a page on every die); returns when it is done, ns."""
        unit = (offset // nbytes) % self._n_units
        service = self._svc_read
        extra_kib = nbytes / 1024.0 - 4.0
        if self.media is not None:  # (pages on the dies in turn from its address's; per KiB: the array)
            extra, m = service.per_kib_ns * extra_kib if extra_kib > 0.0 else 0.0, self.media
            zmap = self._zone_map  # (in a zoned namespace: the zone's die holding the address)
            if zmap is not None and offset < self._zoned_end:
                unit = zmap.unit_of(offset)
            else:
                unit = (offset // self._stripe) % self._n_units
            _s, end, svc = m.read(unit, t + self._ctrl_read_ns, m.page_type(offset), extra, nbytes)
            self._busy_read_unit_ns += svc
            return end
        base_ns = service.base_ns
        svc = (base_ns + service.per_kib_ns * extra_kib if extra_kib > 0.0 else base_ns) * service.jitter()
        free = self._units[unit]
        end = (free if free > t else t) + svc
        self._units[unit] = end
        self._busy_read_unit_ns += svc
        return end

    def _media_state(self, req: NvmeCommand, t: float) -> float:
        """A non-read command fetched at ``t`` meets the zones and the FTL: a zoned write checked
        against its zone's write pointer and state (and, with a per-zone write rate, queued on its
        zone's serial stage), a zone management action applied (its time left in
        ``device_service_ns``), the FTL's garbage collection run for a write (its copies and erases
        occupying media units). Returns when the command may go on, ns, or -1 when it failed
        (``req.status`` says why)."""
        op = req.op
        zones = self.zones
        if zones is not None:
            if op in ZONE_MGMT_OPS:
                return self._zone_action(zones, req, t)
            if op != "trim":
                status, off = zones.write(req.offset, req.nbytes, op == "zone_append" or req.opcode == ZONE_APPEND)
                if status != OK:
                    req.status = status
                    zones.errors += 1
                    self.zone_errors += 1
                    return -1.0
                req.offset = off  # an append's assigned LBA (a write's own)
            return t
        ftl = self.ftl
        if ftl is not None:
            if op == "trim":
                ftl.trim(req.offset, req.nbytes)
            else:
                copies, erases = ftl.write(req.offset, req.nbytes, req.placement % ftl.cfg.placement_handles)
                if copies or erases:  # (with media: booked as operations reads suspend)
                    work = (copies, erases, self._gc_copy_ns, self.cfg.ftl.erase_ns, t)
                    m = self.media
                    self._gc_unit, busy = (
                        m.gc_work(self._gc_unit, *work) if m else gc_work(self._units, self._gc_unit, *work)
                    )
                    self._busy_write_unit_ns += busy
        return t

    def _not_conventional(self, req: NvmeCommand) -> bool:
        """A command beyond the zoned namespace's extent that still meets the zone rules (and fails
        them): any but a write or trim on a device with zones (a zone action, an append to a
        conventional namespace), or any on a device without (its FTL)."""
        return self.zones is None or (req.op != "write" and req.op != "trim") or req.opcode == ZONE_APPEND

    def _zone_action(self, zones: ZoneSet, req: NvmeCommand, t: float) -> float:
        """Zone Management Send on the zone holding ``req.offset``; the action's time goes into
        ``req.device_service_ns`` (reset and finish: by how full the zone was)."""
        z = zones.zone_of(req.offset)
        if z >= zones.count:
            req.status = 0x1B8  # beyond the namespace: the ZNS Zone Boundary Error
            return -1.0
        op = req.op
        svc = 0.0
        status = OK
        if op == "zone_reset":
            svc = zones.reset(z)
        elif op == "zone_finish":
            status, svc = zones.finish(z)
        elif op == "zone_open":
            status = zones.open_zone(z)
        else:
            status = zones.close(z)
        if status != OK:
            req.status = status
            zones.errors += 1
            self.zone_errors += 1
            return -1.0
        req.device_service_ns = svc
        return t

    def _zmgmt_service(self, req: NvmeCommand, t: float) -> tuple[float, float, float]:
        """A zone management action fetched at ``t``: a reset or finish erases / pads on the zone's
        dies for the action's time (set by :meth:`_zone_action`; models.ssd.zone_media), an open or
        close is the firmware's alone; (start, end, service)."""
        svc = req.device_service_ns
        zm = self.zoned_media
        if zm is None or not svc > 0.0:
            return t, t + svc, svc
        z = req.offset // zm.map.zone_bytes
        wb = self.write_buffer
        pad = self.zones.last_pad_bytes if self.zones is not None and req.op == "zone_finish" else 0
        if wb is not None and zm.media is not None:  # the zone's partial stripe units in the buffer:
            pad += wb.take_zone(z * zm.map.zone_bytes, zm.map.zone_bytes)  # dropped, or padded with the rest
        if req.op == "zone_finish" and zm.media is not None and wb is not None:
            if not pad:  # nothing to program: the controller's bookkeeping alone
                return t, t + svc, svc
            # the padding's programs at the buffer's program rate (a die's multi-plane program at a time)
            unit = wb.program_unit_bytes
            start, end = zm.pad(z, pad, unit, unit * wb.unit_ns_per_byte, t)
            return start, end, end - start
        if (
            req.op == "zone_reset"
            and zm.media is not None
            and self.zones is not None
            and not self.zones.last_reset_bytes
        ):
            return t, t + svc, svc  # an empty zone: no block to erase
        start, end = zm.action(z, svc, t)
        return start, end, svc

    def _fail(self, qp: QueuePair, req: NvmeCommand, dma_extra_ns: float) -> None:
        """A command the zone rules refused: completed with its error status once fetched, no
        data moved, no media touched."""
        t = self.engine.now + self._fetch_ns
        req.t_dev_start = req.t_dev_end = t
        req.t_fetched = req.t_fw = req.t_stage = req.t_xfer = req.t_media_end = t
        req.device_service_ns = 0.0
        self._accept(qp, req, t + self._post_ns + dma_extra_ns)

    def _accept(self, qp: QueuePair, req: NvmeCommand, post_ns: float) -> None:
        """The command is fetched from ``qp``'s SQ (its sequence number, the queue's submit hook)
        and in flight; its completion is posted at ``post_ns``: one event per command, at its exact
        posting time (in the engine's bulk heap: thousands may be in flight)."""
        req.sq_seq = qp.seq
        qp.seq += 1
        if qp.submit_hook is not None:
            qp.submit_hook(req)
        qp.inflight += 1
        self.commands += 1
        self.engine.schedule_bulk(handler_call(Posting(self, qp, req), post_ns))

    def _read_path(self, path: TransferPath, ready: float, nbytes: int, xfer: float) -> float:
        """A read's data crossing its media data path from ``ready`` (media done); returns when its
        link transfer may start: the data streams from the path into the link (cut-through), so
        the link transfer starts once data flows and ends no earlier than the path's, ns."""
        pdur = nbytes * self._path_read_ns_per_byte
        pstart = path.reserve(ready, pdur)
        self._busy_read_path_ns += pdur
        t = pstart + pdur - xfer
        return t if t > pstart else pstart

    def _write_path(self, path: TransferPath, lstart: float, lend: float, nbytes: int) -> float:
        """A write's data crossing its media data path after the link (cut-through: it flows on
        as it arrives, so the path transfer starts no earlier than the link's and ends no earlier
        than the link's end); returns its end, ns."""
        pdur = nbytes * self._path_write_ns_per_byte
        ready = lend - pdur
        if ready < lstart:
            ready = lstart
        pstart = path.reserve(ready, pdur)
        self._busy_write_path_ns += pdur
        return pstart + pdur

    def _trim_service(self, nbytes: int, t: float) -> tuple[float, float, float]:
        """A deallocate command of ``nbytes`` fetched at ``t``: its 16-byte range list crosses the
        link, then the controller's mapping-table work serves it (one deallocation at a time, apart
        from the media units: :class:`~models.ssd.config.TrimConfig`); (start, end, service)."""
        trim = self.cfg.trim
        t = self._link.reserve(t, DSM_RANGE_BYTES * self._ns_per_byte) + DSM_RANGE_BYTES * self._ns_per_byte
        start = self._trim_free if self._trim_free > t else t
        extra_mib = (nbytes - 4096) / (1 << 20)
        svc = trim.base_ns + (trim.per_mib_ns * extra_mib if extra_mib > 0 else 0.0)
        end = self._trim_free = start + svc
        self._busy_trim_unit_ns += svc
        return start, end, svc

    @property
    def busy_unit_ns(self) -> dict[str, float]:
        """Media unit busy time so far per operation, ns."""
        wb = self.write_buffer
        write = self._busy_write_unit_ns + (wb.program_ns if wb is not None else 0.0)
        return {"read": self._busy_read_unit_ns, "write": write, "trim": self._busy_trim_unit_ns}

    @property
    def busy_path_ns(self) -> dict[str, float]:
        """Data path transfer time so far per direction (with a data path stage), ns."""
        return {"read": self._busy_read_path_ns, "write": self._busy_write_path_ns}

    def busy_until(self) -> float:
        """When the media units and data paths have finished every command reserved on them, ns."""
        t = max(self._units)
        for path in self._paths:
            b = path.busy_until()
            if b > t:
                t = b
        return t

    def _post(self, qp: QueuePair, req: NvmeCommand) -> None:
        """Completion entry visible in the CQ; the pair's interrupt generation (its vector) or the
        host's posting callback decides what happens next."""
        now = req.t_cqe = self.engine.now
        qp.inflight -= 1
        if self.apst is not None:
            self.apst.on_complete(now, self.busy_until())
        qp.cq.append(req)
        posted = qp.posted_times
        if posted is not None:
            posted.append(now)
            if len(posted) >= 1024:
                qp.fold_posts()
        gen = qp.irq_gen
        if gen is not None:
            gen.on_completion(req)
        else:
            on_post = qp.on_post
            assert on_post is not None  # (a polled queue: the driver's hook)
            on_post(qp, req)
