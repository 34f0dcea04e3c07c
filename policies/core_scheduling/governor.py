"""``governor``: SPDK's governor scheduler (``lib/scheduler/gscheduler.c``) with the DPDK power
governor: threads stay where they are, every reactor keeps polling, and each core's frequency
follows its load every ``interval_us`` (10 us in SANDMAN's comparison).

Per reactor, from the busy and idle time of the last interval:

- busy < idle / 1000 -> minimum frequency;
- idle > busy -> one level down;
- idle < busy / 1000 -> maximum frequency;
- otherwise -> one level up.

Levels are ``levels`` evenly spaced frequencies from the platform's minimum to its maximum (the
DPDK library walks ``scaling_available_frequencies``). SMT siblings share one clock: a physical core
asks for the higher of its two reactors' levels. Each request goes through
:meth:`PhysicalCore.request_freq`, so a core keeps its old clock for the P-state transition
latency (450 us on the EPYC): the first requests after a load jump are processed slowly.
The decision stops (dormant) while every core is idle at the minimum; an arrival re-arms it.
"""

from __future__ import annotations

from pydantic import Field

from policies.core_scheduling.base import CORE_SCHEDULING, CoreSchedulingPolicy, round_robin
from models.server.reactor import AWAKE, POLL, Ticker
from simcore.config import Model

#: sandman_polling_server.yaml policy_parameters.governor_interval_us
GOVERNOR_INTERVAL_US = 10.0


@CORE_SCHEDULING.register("governor")
class Governor(CoreSchedulingPolicy):
    class Params(Model):
        interval_us: float = Field(GOVERNOR_INTERVAL_US, gt=0, description="decision period, us")
        levels: int = Field(8, ge=2, description="frequency levels from minimum to maximum")

    def setup(self) -> None:
        s = self.server
        round_robin(s)
        for r in s.reactors:
            s.set_mode(r, POLL)
        c = s.ccfg
        n = self.p.levels
        self.freqs = [c.min_freq_ghz + (c.top_freq_ghz - c.min_freq_ghz) * i / (n - 1) for i in range(n)]
        self.top = n - 1
        self.level = [self.top] * len(s.reactors)
        self.mark = [0.0] * len(s.reactors)
        self.period = self.p.interval_us * 1e3
        self.cores = sorted({r.pcore.index for r in s.reactors})
        self.by_core = {i: [r for r in s.reactors if r.pcore.index == i] for i in self.cores}
        self.ticker = Ticker(s.engine, self.period, self._tick)
        self.ticker.start()
        self.decisions = 0
        s.track_touched = True
        self.live = set(range(len(s.reactors)))  # reactors not idle at the minimum level

    def on_arrival(self, th, now) -> None:
        if not self.ticker.armed:
            self.ticker.poke()

    def _tick(self, now: float):
        s = self.server
        P = self.period
        lv = self.level
        mark = self.mark
        top = self.top
        rs = s.reactors
        live = self.live
        for th in s.touched:
            if th.reactor is not None:
                live.add(th.reactor.idx)
        s.touched.clear()
        cores = set()
        for i in list(live):
            r = rs[i]
            b = r.executed_busy(now)
            busy = b - mark[i]
            mark[i] = b
            if r.state != AWAKE:
                live.discard(i)
                continue
            idle = P - busy if busy < P else 0.0
            cur = lv[i]
            if busy < idle / 1000.0:
                new = 0
            elif idle > busy:
                new = cur - 1 if cur > 0 else 0
            elif idle < busy / 1000.0:
                new = top
            else:
                new = cur + 1 if cur < top else top
            if new != cur:
                lv[i] = new
                cores.add(r.pcore.index)
            if new == 0 and busy == 0.0:
                live.discard(i)  # idle at the minimum: the decision repeats until it gets work
        for c in cores:
            want = max(lv[r.idx] for r in self.by_core[c])
            s.request_freq(c, self.freqs[want])
        self.decisions += 1
        return bool(live)

    def summary(self) -> dict:
        return {"decisions": self.decisions}
