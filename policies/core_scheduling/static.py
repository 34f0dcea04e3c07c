"""``spdk-static``: SPDK's default: fixed reactors, threads round-robin, always polling at full speed."""

from __future__ import annotations

from pydantic import Field

from models.server.reactor import POLL
from policies.core_scheduling.base import CORE_SCHEDULING, CoreSchedulingPolicy, round_robin
from simcore.config import Model


@CORE_SCHEDULING.register("spdk-static")
class SpdkStatic(CoreSchedulingPolicy):
    """Every reserved core polls all the time; never sleeps, never changes frequency."""

    class Params(Model):
        freq_ghz: float | None = Field(
            None,
            gt=0,
            description="pin every core to this frequency from t=0 (None: the"
            " platform's governor, performance = maximum)",
        )

    def initial_freq_ghz(self):
        return self.p.freq_ghz

    def setup(self) -> None:
        s = self.server
        round_robin(s)
        for r in s.reactors:
            s.set_mode(r, POLL)
