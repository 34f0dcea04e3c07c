"""The controller's DRAM write buffer and SLC cache (:class:`~models.ssd.controller_config.WriteBufferConfig`,
:class:`~models.ssd.controller_config.SlcCacheConfig`).

A write is admitted to the buffer once it has room (in doorbell order: a write behind one that waits
for room waits too), its data crosses the link, and it is acknowledged after its buffer service
time. Its flush is a program on the units at the write frontier: the FTL writes the dies in turn
(whatever the address), a write of several chunks (NAND pages) programming each of the next units
its share (a superpage), all its programs together at least the device's time per random write; each unit programs from
when the data is in the buffer or when it is free; the write's bytes leave the buffer when its last
program ends. Bytes are programmed at the SLC rate while the SLC cache has room, the native rate's
after. Everything is computed when the write
arrives: the buffer keeps its flushes' end times in a heap, no events of its own.
"""

from __future__ import annotations

import heapq

from models.ssd.controller_config import SlcCacheConfig, WriteBufferConfig
from models.ssd.media import PROGRAM, Media
from models.ssd.zone_media import ZoneDieMap


class SlcCache:
    """How many bytes of the SLC cache are used; the program time per byte per unit of the next
    write (SLC while the cache has room, native after). Counters are monotonic."""

    def __init__(self, cfg: SlcCacheConfig, units: int, slc_ns_per_byte: float) -> None:
        """``slc_ns_per_byte``: a unit's program time per byte at the SLC rate, ns."""
        self.size = cfg.size_bytes
        self.used = cfg.initial_used_bytes
        self.slc_ns_per_byte = slc_ns_per_byte
        #: the native rate spread over the units: each unit programs native_write_gb_s / units
        self.native_ns_per_byte = units / cfg.native_write_gb_s
        self.slc_bytes = 0  # host bytes programmed at the SLC rate
        self.native_bytes = 0  # host bytes programmed at the native rate (after the cliff)

    def ns_per_byte(self, nbytes: int) -> float:
        """The program time per byte per unit of a write of ``nbytes`` (a write across the cliff:
        its bytes at each rate in proportion), and its bytes counted against the cache."""
        room = self.size - self.used
        if room >= nbytes:
            self.used += nbytes
            self.slc_bytes += nbytes
            return self.slc_ns_per_byte
        slc = room if room > 0 else 0
        self.used += slc
        self.slc_bytes += slc
        self.native_bytes += nbytes - slc
        return (slc * self.slc_ns_per_byte + (nbytes - slc) * self.native_ns_per_byte) / nbytes


class WriteBuffer:
    """The DRAM write buffer of one device, flushing onto its media units' timeline ``units`` (the
    time each unit becomes free, ns: shared with the device's reads). Counters are monotonic."""

    def __init__(
        self,
        cfg: WriteBufferConfig,
        slc: SlcCacheConfig | None,
        units: list[float],
        program_ns: float,
        media: Media | None = None,
    ) -> None:
        """``media``: the NAND dies the programs are booked on (their page types' tPROG, reads
        suspending them; ``units`` is then its ``die_free``)."""
        self.capacity = cfg.size_bytes
        self.units = units
        self.media = media
        self._n = len(units)
        self._chunk = cfg.program_chunk_bytes
        #: with media: a die's multi-plane program, bytes, and what the frontier die has gathered for it
        self._unit_bytes = media.cfg.planes_per_die * media.cfg.page_bytes if media is not None else 0
        self._pend_bytes = 0
        self._pend_ns = 0.0
        self._pend_ready = 0.0
        self._ns_per_byte = self._n / cfg.program_gb_s  # a unit's share of the program rate, ns per byte
        self._min_ns = program_ns  # the least time a write takes its first unit
        self._next = 0  # the write frontier: the unit the next write's first chunk goes to
        self.slc: SlcCache | None = SlcCache(slc, self._n, self._ns_per_byte) if slc is not None else None
        self._flushes: list[tuple[float, int]] = []  # (program end, bytes) of the writes held
        self.held = 0  # bytes in the buffer whose programs have not ended
        self._floor = 0.0  # when the last write was admitted: admissions are in doorbell order
        self.hits = 0  # writes admitted at once
        self.full_waits = 0  # writes that found the buffer full and waited for a flush
        self.wait_ns = 0.0  # their waits, summed
        self.program_ns = 0.0  # media unit time of the flushes, summed
        #: a zoned namespace's zone -> dies map (models.ssd.zone_media.ZoneDieMap): its writes program
        #: the dies holding their addresses (a zone is written in order), not the frontier's
        self.zone_map: ZoneDieMap | None = None
        #: with media, in a zoned namespace: each zone stripe unit being gathered (its index in the
        #: namespace) -> [bytes, program ns, when its data is all in the buffer]
        self._zpend: dict[int, list] = {}

    @property
    def program_unit_bytes(self) -> int:
        """What one program on a die covers, bytes: a multi-plane program with media, else a chunk."""
        return self._unit_bytes or self._chunk

    @property
    def unit_ns_per_byte(self) -> float:
        """A die's program time per byte at the native (calibrated) rate, ns."""
        return self._ns_per_byte

    def admit(self, t: float, nbytes: int) -> float:
        """A write of ``nbytes`` fetched at ``t``: when the buffer has room for it, ns (``t``
        unless it is full: then when enough flushes have ended, no earlier than the last write
        admitted)."""
        if t < self._floor:
            t = self._floor
        flushes = self._flushes
        while flushes and flushes[0][0] <= t:
            self.held -= heapq.heappop(flushes)[1]
        if self.held + nbytes <= self.capacity:
            self.hits += 1
        else:
            self.full_waits += 1
            t0 = t
            while flushes and self.held + nbytes > self.capacity:  # (a write larger than the buffer: empty)
                end, b = heapq.heappop(flushes)
                self.held -= b
                if end > t:
                    t = end
            self.wait_ns += t - t0
        self._floor = t
        return t

    def flush(self, nbytes: int, ready: float, offset: int = 0) -> None:
        """Program the write of ``nbytes`` admitted to the buffer, its data there at ``ready``: its
        chunks go to the next units of the write frontier, each programming its share (of at
        least ``write_cache_program_ns`` in all), from ``ready`` or when the unit is free; the
        write's bytes stay held until the last program ends (the frontier, not the address, picks
        the units; in a zoned namespace, its address does: ``offset``)."""
        ns_per_byte = self._ns_per_byte if self.slc is None else self.slc.ns_per_byte(nbytes)
        zmap = self.zone_map
        if zmap is not None and offset < zmap.span_bytes:
            if self.media is not None:
                self._flush_zoned_to_dies(nbytes, ready, offset, ns_per_byte)
            else:
                self._flush_zoned(nbytes, ready, offset, ns_per_byte)
            return
        if self.media is not None:
            self._flush_to_dies(nbytes, ready, ns_per_byte)
            return
        units = self.units
        n = self._n
        u = self._next
        k = (nbytes + self._chunk - 1) // self._chunk if nbytes > self._chunk else 1
        if k == 1:  # (the common case: one unit)
            free = units[u]
            dur = self._program_time(nbytes, ns_per_byte)
            done = units[u] = (free if free > ready else ready) + dur
            u = u + 1 if u + 1 < n else 0
        else:  # a chunk per unit in turn (k > n: every unit, some one chunk more)
            done = ready
            total = self._program_time(nbytes, ns_per_byte)
            per_chunk = total / k
            whole, extra = divmod(k, n) if k > n else (1, 0)
            dur = per_chunk * whole
            for i in range(k if k < n else n):
                free = units[u]
                end = units[u] = (free if free > ready else ready) + (dur + per_chunk if i < extra else dur)
                if end > done:
                    done = end
                u += 1
                if u == n:
                    u = 0
        self._next = u
        heapq.heappush(self._flushes, (done, nbytes))
        self.held += nbytes

    def _program_time(self, nbytes: int, ns_per_byte: float) -> float:
        """The program time of a write of ``nbytes`` at ``ns_per_byte`` (at least
        ``write_cache_program_ns``), ns, added to :attr:`program_ns`."""
        dur = nbytes * ns_per_byte
        if dur < self._min_ns:
            dur = self._min_ns
        self.program_ns += dur
        return dur

    def _flush_to_dies(self, nbytes: int, ready: float, ns_per_byte: float) -> None:
        """With NAND media: the write's bytes join the frontier die's multi-plane program (a page on
        each plane, ``planes_per_die`` x ``page_bytes``); once it is full the die programs it as one
        operation (the bytes' share of the calibrated program time: at least
        ``write_cache_program_ns`` per write), and the frontier moves to the next die. The bytes stay
        held until their program ends."""
        media = self.media
        assert media is not None
        dur = self._program_time(nbytes, ns_per_byte)
        per_byte = dur / nbytes if nbytes else 0.0
        unit = self._unit_bytes
        left = nbytes
        while True:
            take = unit - self._pend_bytes
            if take > left:
                take = left
            self._pend_bytes += take
            self._pend_ns += take * per_byte
            if ready > self._pend_ready:
                self._pend_ready = ready
            left -= take
            if self._pend_bytes < unit:
                break
            u = self._next
            done = media.book(u, self._pend_ready, self._pend_ns, PROGRAM)
            heapq.heappush(self._flushes, (done, self._pend_bytes))
            self._pend_bytes, self._pend_ns = 0, 0.0
            self._next = u + 1 if u + 1 < self._n else 0
            if left <= 0:
                break
        self.held += nbytes

    def _flush_zoned(self, nbytes: int, ready: float, offset: int, ns_per_byte: float) -> None:
        """:meth:`flush` in a zoned namespace: each chunk programs the die its address is on."""
        units = self.units
        unit_of = self.zone_map.unit_of  # type: ignore[union-attr]
        chunk = self._chunk
        done = ready
        pos = offset
        end_off = offset + nbytes
        while pos < end_off:
            nxt = (pos // chunk + 1) * chunk  # the chunk boundary after pos
            b = (nxt if nxt < end_off else end_off) - pos
            u = unit_of(pos)
            dur = b * ns_per_byte
            if dur < self._min_ns:
                dur = self._min_ns
            free = units[u]
            end = units[u] = (free if free > ready else ready) + dur
            self.program_ns += dur
            if end > done:
                done = end
            pos += b
        heapq.heappush(self._flushes, (done, nbytes))
        self.held += nbytes

    def _flush_zoned_to_dies(self, nbytes: int, ready: float, offset: int, ns_per_byte: float) -> None:
        """:meth:`flush` in a zoned namespace on NAND media: the write's bytes join the zone stripe
        units they fall in (``zone_map.stripe_bytes``, a die's multi-plane program in the presets);
        once a unit is whole, its die programs it as one operation (the bytes' share of the program
        time, at least ``write_cache_program_ns`` per write), booked on the media (reads suspend it).
        The bytes stay held until their program ends."""
        media = self.media
        zmap = self.zone_map
        assert media is not None and zmap is not None
        dur = self._program_time(nbytes, ns_per_byte)
        per_byte = dur / nbytes if nbytes else 0.0
        su = zmap.stripe_bytes
        pend = self._zpend
        pos = offset
        end_off = offset + nbytes
        while pos < end_off:
            idx = pos // su
            nxt = (idx + 1) * su
            b = (nxt if nxt < end_off else end_off) - pos
            p = pend.get(idx)
            if p is None:
                p = pend[idx] = [0, 0.0, ready]
            p[0] += b
            p[1] += b * per_byte
            if ready > p[2]:
                p[2] = ready
            if p[0] >= su:
                del pend[idx]
                done = media.book(zmap.unit_of(pos), p[2], p[1], PROGRAM)
                heapq.heappush(self._flushes, (done, p[0]))
            pos += b
        self.held += nbytes

    def take_zone(self, start: int, nbytes: int) -> int:
        """A zone reset or finish of the zone at ``start`` (``nbytes`` of address space): its stripe
        units still being gathered leave the buffer (a reset discards them, a finish programs them
        with its padding); their bytes."""
        pend = self._zpend
        if not pend or self.zone_map is None:
            return 0
        su = self.zone_map.stripe_bytes
        lo, hi = start // su, (start + nbytes) // su
        taken = 0
        for idx in [i for i in pend if lo <= i < hi]:
            taken += pend.pop(idx)[0]
        self.held -= taken
        return taken

    def counters(self) -> dict[str, float]:
        """The buffer's and the SLC cache's counters for the run summary (monotonic)."""
        out = {"buffer_hits": self.hits, "buffer_full_waits": self.full_waits, "buffer_wait_ns": self.wait_ns}
        if self.slc is not None:
            out.update(slc_bytes=self.slc.slc_bytes, native_bytes=self.slc.native_bytes)
        return out
