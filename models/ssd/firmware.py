"""The controller's firmware as a serial stage: each command costs the firmware a time by operation
(parsing, mapping lookup, buffer allocation, a zone append's LBA assignment), on one of ``cores``
cores, in doorbell order. Small commands then meet a ceiling of cores / time per command whatever
the number of dies: what serialises a zoned SSD's writers to distinct zones (and every reader),
as Amber/SimpleSSD's HIL and ICL charge firmware cycles per request (exact: SimpleSSD models the
firmware's CPU time per function on its cores).

The stage sits after the command fetch, before the command's data moves (the firmware decides
where it goes). Units: ns.
"""

from __future__ import annotations

import numpy as np
from pydantic import Field

from simcore.config import Model
from simcore.rng import BatchedDraws


class FirmwareConfig(Model):
    """The controller firmware's time per command by operation, on ``cores`` cores (a command takes
    the first free one, in doorbell order). Defaults are none: a preset that models its firmware
    sets them (tagged there)."""

    cores: int = Field(1, ge=1, le=64, description="firmware cores that serve commands, each one at a time")
    read_ns: float = Field(0.0, ge=0, description="firmware time of a read command, ns")
    write_ns: float = Field(0.0, ge=0, description="firmware time of a write command, ns")
    append_ns: float = Field(
        0.0, ge=0, description="firmware time of a zone append (the write's work and its LBA assignment), ns"
    )
    other_ns: float = Field(0.0, ge=0, description="firmware time of any other command (trim, zone management), ns")
    cv: float = Field(
        0.0,
        ge=0,
        le=4,
        description="coefficient of variation of a command's firmware time (gamma-distributed about its"
        " mean; 0: constant, 1: exponential): the firmware's paths vary from command to command",
    )


class Firmware:
    """The firmware cores' timeline: when each is free (ns). Counters are monotonic."""

    __slots__ = ("free", "by_op", "other_ns", "busy_ns", "wait_ns", "draw")

    def __init__(self, cfg: FirmwareConfig, rng_gen: np.random.Generator) -> None:
        k = 1.0 / (cfg.cv * cfg.cv) if cfg.cv > 0 else 0.0
        #: a command's firmware time over its mean (gamma of shape 1 / cv^2, mean 1; constant 1 at cv 0)
        self.draw = BatchedDraws(rng_gen, lambda gen, n: gen.gamma(k, 1.0 / k, n)).next if k > 0 else (lambda: 1.0)
        self.free = [0.0] * cfg.cores
        self.by_op = {"read": cfg.read_ns, "write": cfg.write_ns, "zone_append": cfg.append_ns}
        self.other_ns = cfg.other_ns
        self.busy_ns = 0.0  # firmware time spent on commands
        self.wait_ns = 0.0  # time commands waited for a free core

    def command(self, op: str, t: float) -> float:
        """A command of ``op`` fetched at ``t``: when the firmware has done its part, ns."""
        dur = self.by_op.get(op, self.other_ns)
        if dur <= 0.0:
            return t
        dur *= self.draw()
        free = self.free
        i = 0
        if len(free) > 1:
            i = min(range(len(free)), key=free.__getitem__)
        start = free[i] if free[i] > t else t
        self.wait_ns += start - t
        self.busy_ns += dur
        free[i] = start + dur
        return start + dur
