"""The zones of an NVMe Zoned Namespace (ZNS Command Set 1.0, TP 4053): their states, write
pointers, the open and active limits, and what reset and finish cost.

Rules (the ZNS specification, section 2.1, as recalled; Linux's ``blk_zone`` conditions name the
same states):

* a zone is Empty, Implicitly Opened, Explicitly Opened, Closed or Full (Read Only and Offline are
  not modelled); open = implicitly + explicitly opened, active = open + closed;
* a write must start exactly at the zone's write pointer ("Zone Invalid Write") and end within its
  capacity ("Zone Boundary Error"); writing a Full zone fails ("Zone Is Full");
* writing an Empty or Closed zone opens it implicitly. An Empty zone becomes active: with
  ``max_active_zones`` active already the write fails ("Too Many Active Zones"). With
  ``max_open_zones`` open, the controller closes an implicitly opened zone (the least recently
  written here) to make room, and fails the write ("Too Many Open Zones") if every open zone was
  opened explicitly;
* the write pointer reaching the capacity makes the zone Full (no longer open nor active);
* Zone Append names the zone's start and writes at its write pointer (several in flight are fine:
  the controller orders them); Reset makes a zone Empty (write pointer at its start), Finish makes
  it Full (the device pads the rest), Open and Close make it Explicitly Opened / Closed.

Status values: NVMe ZNS command-specific status codes (Status Code Type 1), recalled from the
specification: 0xB8 Zone Boundary Error, 0xB9 Zone Is Full, 0xBC Zone Invalid Write, 0xBD Too Many
Active Zones, 0xBE Too Many Open Zones, 0xBF Invalid Zone State Transition.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Final

from models.ssd.config import ZonedConfig

EMPTY, IMPLICIT_OPEN, EXPLICIT_OPEN, CLOSED, FULL = 0, 1, 2, 3, 4
STATE_NAMES: Final = ("empty", "implicitly_open", "explicitly_open", "closed", "full")

OK: Final = 0
ZONE_BOUNDARY_ERROR: Final = 0x1B8
ZONE_IS_FULL: Final = 0x1B9
ZONE_INVALID_WRITE: Final = 0x1BC
TOO_MANY_ACTIVE_ZONES: Final = 0x1BD
TOO_MANY_OPEN_ZONES: Final = 0x1BE
INVALID_ZONE_STATE_TRANSITION: Final = 0x1BF
#: a status value (SCT << 8 | SC) -> its name in the specification
STATUS_NAMES: Final = {
    ZONE_BOUNDARY_ERROR: "Zone Boundary Error",
    ZONE_IS_FULL: "Zone Is Full",
    ZONE_INVALID_WRITE: "Zone Invalid Write",
    TOO_MANY_ACTIVE_ZONES: "Too Many Active Zones",
    TOO_MANY_OPEN_ZONES: "Too Many Open Zones",
    INVALID_ZONE_STATE_TRANSITION: "Invalid Zone State Transition",
}


def _interp(curve: tuple[tuple[float, float], ...], x: float) -> float:
    """Linear interpolation in (x, y) points with increasing x from 0 to 1."""
    xs = [p[0] for p in curve]
    i = bisect_right(xs, x)
    if i >= len(curve):
        return curve[-1][1]
    x0, y0 = curve[i - 1]
    x1, y1 = curve[i]
    return y0 + (y1 - y0) * (x - x0) / (x1 - x0)


#: memory a zone's state takes once it has been written, bytes: its state and write pointer here (and,
#: before the zones went onto the dies, a busy-until time), fio's copy of the write pointers (models/ioengines/zbd.py),
#: each a list slot and, once set to a value of its own, a Python int or float (measured: 21 bytes a
#: zone as built, all zones empty)
ZONE_STATE_BYTES: Final = 96


def zone_state_bytes(cfg: ZonedConfig, capacity_bytes: int) -> int:
    """The memory the zones of one namespace of ``capacity_bytes`` take (for the run's estimate
    before anything is built), bytes."""
    return capacity_bytes // cfg.zone_size_bytes * ZONE_STATE_BYTES


class ZoneSet:
    """The zones of one namespace of ``capacity_bytes`` (whole zones only). Write pointers are
    bytes from the zone's start."""

    def __init__(self, cfg: ZonedConfig, capacity_bytes: int):
        self.cfg = cfg
        self.size = cfg.zone_size_bytes
        self.cap = cfg.zone_capacity_bytes
        self.count = capacity_bytes // self.size
        full = cfg.precondition == "full"
        self.state = [FULL if full else EMPTY] * self.count
        self.wp = [self.cap if full else 0] * self.count
        self.max_open = cfg.max_open_zones or self.count
        self.max_active = cfg.max_active_zones or self.count
        #: open zones, least recently written first (dict order): zone -> explicitly opened
        self.open: dict[int, bool] = {}
        self.n_active = 0
        # counters (monotonic)
        self.resets = 0
        self.finishes = 0
        self.errors = 0
        self.implicit_closes = 0
        #: the unwritten capacity the last finish padded, bytes (0: nothing to program)
        self.last_pad_bytes = 0
        #: what the last reset's zone held, bytes (0: an empty zone, nothing to erase)
        self.last_reset_bytes = 0

    def zone_of(self, offset: int) -> int:
        return offset // self.size

    def _make_open(self, z: int, explicit: bool) -> int:
        """Open zone ``z`` (Empty or Closed): OK, or the status of a limit in the way."""
        st = self.state[z]
        if st == EMPTY and self.n_active >= self.max_active:
            return TOO_MANY_ACTIVE_ZONES
        if len(self.open) >= self.max_open:
            victim = next((o for o, exp in self.open.items() if not exp), None)
            if victim is None:
                return TOO_MANY_OPEN_ZONES
            del self.open[victim]  # the controller closes an implicitly opened zone
            self.state[victim] = CLOSED
            self.implicit_closes += 1
        if st == EMPTY:
            self.n_active += 1
        self.state[z] = EXPLICIT_OPEN if explicit else IMPLICIT_OPEN
        self.open[z] = explicit
        return OK

    def write(self, offset: int, nbytes: int, append: bool = False) -> tuple[int, int]:
        """A write (or, ``append``, a Zone Append naming the zone's start) of ``nbytes`` at
        ``offset``: (status, the offset written: an append's assigned one)."""
        z = offset // self.size
        if z >= self.count:
            return ZONE_BOUNDARY_ERROR, offset
        rel = offset - z * self.size
        st = self.state[z]
        if append:
            if rel:
                return ZONE_INVALID_WRITE, offset  # an append names the zone's start LBA
            rel = self.wp[z]
        if st == FULL:
            return ZONE_IS_FULL, offset
        if rel != self.wp[z]:
            return ZONE_INVALID_WRITE, offset
        if rel + nbytes > self.cap:
            return ZONE_BOUNDARY_ERROR, offset
        if st == EMPTY or st == CLOSED:
            status = self._make_open(z, False)
            if status:
                return status, offset
        else:
            explicit = self.open.pop(z)
            self.open[z] = explicit  # the most recently written
        wp = self.wp[z] = rel + nbytes
        if wp >= self.cap:
            self._to_full(z)
        return OK, z * self.size + rel

    def _to_full(self, z: int) -> None:
        st = self.state[z]
        if st in (IMPLICIT_OPEN, EXPLICIT_OPEN):
            del self.open[z]
        if st != EMPTY and st != FULL:
            self.n_active -= 1
        self.state[z] = FULL

    def _leave(self, z: int) -> None:
        """Zone ``z`` stops being open / active (before a reset)."""
        st = self.state[z]
        if st in (IMPLICIT_OPEN, EXPLICIT_OPEN):
            del self.open[z]
        if st in (IMPLICIT_OPEN, EXPLICIT_OPEN, CLOSED):
            self.n_active -= 1

    def reset(self, z: int) -> float:
        """Zone Management Send, Reset: the zone becomes Empty; returns the device time, ns (by how
        much of its capacity was written)."""
        written = self.last_reset_bytes = self.wp[z]
        self._leave(z)
        self.state[z] = EMPTY
        self.wp[z] = 0
        self.resets += 1
        if written == 0:
            return self.cfg.reset_empty_ns
        return _interp(self.cfg.reset_curve, written / self.cap)

    def finish(self, z: int) -> tuple[int, float]:
        """Zone Management Send, Finish: the zone becomes Full (the device pads what is unwritten);
        (status, device time in ns). Finishing an Empty zone makes it active first (ZNS 2.1.1.3.5)."""
        st = self.state[z]
        written = self.wp[z]
        self.last_pad_bytes = 0
        if st == FULL:
            return OK, self.cfg.finish_empty_ns
        if st == EMPTY:
            if self.n_active >= self.max_active:
                return TOO_MANY_ACTIVE_ZONES, 0.0
            self.n_active += 1
            self.state[z] = CLOSED
        self._to_full(z)
        self.wp[z] = self.cap
        self.finishes += 1
        self.last_pad_bytes = self.cap - written if written else 0
        if written == 0:
            return OK, self.cfg.finish_empty_ns
        return OK, _interp(self.cfg.finish_curve, written / self.cap)

    def open_zone(self, z: int) -> int:
        """Zone Management Send, Open: Explicitly Opened (status)."""
        st = self.state[z]
        if st == EXPLICIT_OPEN:
            return OK
        if st == FULL:
            return INVALID_ZONE_STATE_TRANSITION
        if st == IMPLICIT_OPEN:
            self.open[z] = True
            self.state[z] = EXPLICIT_OPEN
            return OK
        return self._make_open(z, True)

    def close(self, z: int) -> int:
        """Zone Management Send, Close: an open zone becomes Closed, or Empty when nothing was
        written to it (it is then no longer active)."""
        st = self.state[z]
        if st == CLOSED:
            return OK
        if st not in (IMPLICIT_OPEN, EXPLICIT_OPEN):
            return INVALID_ZONE_STATE_TRANSITION
        del self.open[z]
        if self.wp[z] == 0:
            self.state[z] = EMPTY
            self.n_active -= 1
        else:
            self.state[z] = CLOSED
        return OK

    def report(self) -> list[tuple[int, int, int]]:
        """Zone Management Receive (Report Zones): (state, write pointer from the zone's start,
        capacity) per zone, in bytes."""
        return [(self.state[z], self.wp[z], self.cap) for z in range(self.count)]
