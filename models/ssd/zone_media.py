"""A zoned namespace on the device's media: which dies hold each zone, and resets and finishes as
media operations.

**Zone -> dies** (:class:`ZoneDieMap`): the device's parallel units (dies, or die groups: whatever
``parallel_units`` stands for) are split into ``units // stripe_width`` groups of ``stripe_width``
consecutive units; zone ``z`` lives on group ``z mod groups`` (consecutive zones on different
groups), its data striped ``stripe_unit_bytes`` at a time over the group's units (equal offsets of
two zones of one group are on different dies, up to ``stripe_width`` zones). A read goes to the unit
holding its address; a write's flush programs the zone's units in turn from the zone's own write
frontier (its write pointer decides the die: a zone is written sequentially). The interface is three
calls: ``units_of(z)`` (the unit indices of zone ``z``), ``unit_of(offset)`` and ``stripe_width``:
it sits on any list of units. The first stripe unit of a group's ``j``-th zone is on its unit
``first_of(j)``, the base-2 radical inverse of ``j`` times the width (0, w/2, w/4, 3w/4, ...): zones
written at one pace keep their write frontiers apart on the dies (with zone ``j`` starting on die
``j``, concurrent writers met on each other's programs at every stripe unit; a modelling choice: the
ZN540's own placement is not known).

**Reset and finish** (:class:`ZonedMedia`): a reset erases the blocks the zone has written on each
of its dies, a finish pads the zone's unwritten capacity there; each books every one of the zone's
dies (from when the die is free: reads and programs queued there wait, and an action waits for
them), and the command ends when its last die does. On NAND media (:class:`~models.ssd.media.Media`)
a reset is an erase on each die for the measured time (:class:`~models.ssd.config.ZonedConfig`'s
curve, by how much of the zone was written: a count of blocks x tBERS does not follow its concave
shape), a finish the programs of the unwritten capacity, a multi-plane program at a time at the
write buffer's program rate (:meth:`ZonedMedia.pad`); reads suspend them as any erase or program.
Without media both take the measured curves' time on every die.

Sources: FEMU's ZNS mode stripes every zone over all its chips (exact: its ZNS code's lpn_to_ppa,
github.com/vtess/FEMU); real ZNS drives stripe a zone over a set of dies (recalled); the ZN540's
own stripe width is fitted (models.ssd.preset_zn540).
"""

from __future__ import annotations

from models.ssd.config import ZonedConfig
from models.ssd.media import ERASE, PROGRAM, Media

#: without NAND media: a read on a die that a reset or finish occupies suspends it after this long,
#: ns, and the action resumes after the read (estimate: MQSim's program-suspend latency, 100 us;
#: with media the media's own suspend latencies apply)
ZONE_ACTION_SUSPEND_NS = 100_000.0


class ZoneDieMap:
    """Zone index -> its units (see the module docstring). Units are indices into the device's
    list of parallel units."""

    __slots__ = ("n_units", "stripe_width", "stripe_bytes", "zone_bytes", "groups", "span_bytes", "_firsts")

    def __init__(
        self, n_units: int, stripe_width: int, stripe_bytes: int, zone_bytes: int, span_bytes: int = 1 << 62
    ) -> None:
        """``span_bytes``: the zoned namespace's end in the device's address space (addresses beyond
        it are conventional namespaces', :mod:`models.ssd.namespaces`)."""
        if not 1 <= stripe_width <= n_units:
            raise ValueError(f"stripe_width={stripe_width}: between 1 and the device's {n_units} parallel units")
        self.n_units = n_units
        self.stripe_width = stripe_width
        self.stripe_bytes = stripe_bytes
        self.zone_bytes = zone_bytes
        self.groups = n_units // stripe_width
        self.span_bytes = span_bytes
        #: first_of(j) for the group's zones j (the pattern repeats every 4096 zones of a group)
        self._firsts = [self.first_of(j) for j in range(4096)]

    def first_of(self, j: int) -> int:
        """The unit (within its group) of the first stripe unit of the group's ``j``-th zone: the
        base-2 radical inverse of ``j`` times the width (0, w/2, w/4, 3w/4, ...), so the write
        frontiers of a group's first zones, written at one pace, are as far apart on the dies as
        they can be."""
        w = self.stripe_width
        r, f, k = 0.0, 0.5, j
        while k:
            if k & 1:
                r += f
            k >>= 1
            f *= 0.5
        return int(r * w) % w

    def units_of(self, z: int) -> list[int]:
        """The units of zone ``z``, in the order its stripe units go to them."""
        w = self.stripe_width
        base = (z % self.groups) * w
        first = self._firsts[(z // self.groups) % len(self._firsts)]
        return [base + (first + k) % w for k in range(w)]

    def unit_of(self, offset: int) -> int:
        """The unit holding byte ``offset`` of the namespace."""
        z = offset // self.zone_bytes
        w = self.stripe_width
        firsts = self._firsts
        k = ((offset - z * self.zone_bytes) // self.stripe_bytes + firsts[(z // self.groups) % len(firsts)]) % w
        return (z % self.groups) * w + k


class ZonedMedia:
    """A zoned namespace's zones on the device's units ``units`` (the time each becomes free, ns:
    the device's own list, shared with reads and programs). With NAND ``media`` (its ``die_free``
    is ``units``) a reset is booked as an erase and a finish as programs on each of the zone's dies,
    so reads suspend them as they suspend any erase or program (:class:`models.ssd.media.Media`)."""

    def __init__(self, cfg: ZonedConfig, units: list[float], media: Media | None = None, span_bytes: int = 1 << 62):
        width = cfg.stripe_width or len(units)
        self.map = ZoneDieMap(len(units), width, cfg.stripe_unit_bytes, cfg.zone_size_bytes, span_bytes)
        self.units = units
        self.media = media
        self.media_ns = 0.0  # die time of resets and finishes, summed over the dies
        self.erases = 0  # erases booked on the dies by resets (one per die of the zone)
        self.pad_programs = 0  # programs booked on the dies by finishes
        #: per die: when its last reset or finish ends, and when the reads that suspended it end, ns
        self.action_end = [0.0] * len(units)
        self.read_free = [0.0] * len(units)

    def action(self, z: int, svc: float, t: float) -> tuple[float, float]:
        """A reset or finish of zone ``z`` taking ``svc`` ns on each of its dies, from ``t``:
        (start, end) of the action on the media, ns. With media it is an erase on each die."""
        units = self.units
        media = self.media
        start = end = t
        first = True
        for u in self.map.units_of(z):
            s = units[u] if units[u] > t else t
            if media is not None:
                e = media.book(u, t, svc, ERASE)
                self.erases += 1
            else:
                e = units[u] = self.action_end[u] = s + svc
            if first or s < start:
                start = s
                first = False
            if e > end:
                end = e
        self.media_ns += svc * self.map.stripe_width
        return start, end

    def pad(self, z: int, pad_bytes: int, program_bytes: int, program_ns: float, t: float) -> tuple[float, float]:
        """A finish of zone ``z`` on NAND media: the controller programs the zone's ``pad_bytes``
        unwritten bytes, spread over its dies, ``program_bytes`` (a multi-plane program) taking
        ``program_ns`` at a time on each die (the last one the rest); (start, end) on the media, ns."""
        media = self.media
        assert media is not None
        units = self.units
        dies = self.map.units_of(z)
        per_die = -(-pad_bytes // len(dies))
        whole, rest = divmod(per_die, program_bytes)
        start = end = t
        first = True
        for u in dies:
            s = units[u] if units[u] > t else t
            e = s
            for _ in range(whole):
                e = media.book(u, t, program_ns, PROGRAM)
            if rest:
                e = media.book(u, t, program_ns * rest / program_bytes, PROGRAM)
            self.pad_programs += whole + (1 if rest else 0)
            self.media_ns += e - s
            if first or s < start:
                start = s
                first = False
            if e > end:
                end = e
        return start, end

    def read_start(self, u: int, t: float, svc: float) -> float:
        """A read of ``svc`` ns reaching die ``u`` at ``t``: when it starts, ns. On a die whose
        reset or finish runs past ``t`` + :data:`ZONE_ACTION_SUSPEND_NS`, it suspends the action
        then (after the reads queued before it), and the action resumes after it; otherwise it waits
        for the die. The die's free time is updated."""
        units = self.units
        free = units[u]
        if free == self.action_end[u] and free > t + ZONE_ACTION_SUSPEND_NS:
            start = self.read_free[u]
            if start < t + ZONE_ACTION_SUSPEND_NS:
                start = t + ZONE_ACTION_SUSPEND_NS
            self.read_free[u] = start + svc
            units[u] = self.action_end[u] = free + svc
            return start
        start = free if free > t else t
        units[u] = start + svc
        return start
