"""``idle``: a calibration aid, not a serving policy: every logical core sleeps in one C-state and
no request is served (requests queue forever). Gives the "all cores in state X" rows of the power
calibration (SANDMAN table 2: C1, deep)."""

from __future__ import annotations

from pydantic import Field

from models.server.reactor import ASLEEP
from policies.core_scheduling.base import CORE_SCHEDULING, CoreSchedulingPolicy
from simcore.config import Model
from simcore.errors import ConfigError


@CORE_SCHEDULING.register("idle")
class AllIdle(CoreSchedulingPolicy):
    class Params(Model):
        cstate: str = Field("C1", description="the C-state every logical core sleeps in")

    def setup(self) -> None:
        s = self.server
        if self.p.cstate not in s.cstate_index:
            raise ConfigError(f"policy idle: cstate '{self.p.cstate}' unknown (known: {', '.join(s.cstate_index)})")
        st = s.cstate_index[self.p.cstate]
        for r in s.reactors:
            r.state = ASLEEP
            r.sleep_cstate = st
        for cpu in s.cpus:
            s.set_state(cpu.id, s.engine.now, -1 - st)
