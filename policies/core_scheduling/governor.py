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

Actuation costs CPU (issue 15): every awake reactor fills its statistics each period
(``server.stats_fill_ns``, measured by SANDMAN), the main core runs the decision loop
(``decision_ns_per_reactor`` per reactor examined) and, for every frequency change it requests, the
DPDK power library's write to ``scaling_setspeed`` through the cpufreq userspace governor
(``freq_request_ns``: a write(2) system call, the governor's store and the driver's P-state
request). Charged as the reactors' slow-down over the period, recomputed every period from the
requests it made (:func:`models.server.core_scheduling.scheduler_overhead` for the fixed part).
The hardware transition follows the request (the core keeps its old clock for the transition
latency).
"""

from __future__ import annotations

from pydantic import Field

from models.server.reactor import AWAKE, POLL, Ticker
from policies.core_scheduling.base import CORE_SCHEDULING, CoreSchedulingPolicy, round_robin
from simcore.config import Model

#: sandman_polling_server.yaml policy_parameters.governor_interval_us
GOVERNOR_INTERVAL_US = 10.0


@CORE_SCHEDULING.register("governor")
class Governor(CoreSchedulingPolicy):
    class Params(Model):
        interval_us: float = Field(GOVERNOR_INTERVAL_US, gt=0, description="decision period, us")
        levels: int = Field(8, ge=2, description="frequency levels from minimum to maximum")
        decision_ns_per_reactor: float = Field(
            20.0,
            ge=0,
            description="the main core's decision loop per reactor"
            " examined (read two counters, compare, pick a level; estimate), ns",
        )
        freq_request_ns: float = Field(
            3000.0,
            ge=0,
            description="one frequency request from user space: write(2) to"
            " scaling_setspeed, the userspace governor's store, the driver's P-state"
            " request (estimate: a system call plus an MSR/CPPC write), ns",
        )

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
        self.freq_requests = 0
        self._actuation(0)
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
        requests = 0
        for c in cores:
            want = max(lv[r.idx] for r in self.by_core[c])
            if s.request_freq(c, self.freqs[want]):
                requests += 1
        self.freq_requests += requests
        nxt = self._actuation(requests)
        self.decisions += 1
        if not live:
            return False
        return True if nxt == self.period else nxt

    def _actuation(self, requests: int) -> float:
        """The decision loop and this period's frequency requests on the main core, the statistics
        on every reactor: a slow-down of their work until the next decision. A decision whose
        work exceeds 90% of the period delays the next one (the loop cannot run faster than its
        own work); returns the time to the next decision, ns."""
        s = self.server
        sc = s.cfg.server
        main = sc.stats_fill_ns + self.p.decision_ns_per_reactor * len(s.reactors) + requests * self.p.freq_request_ns
        nxt = max(self.period, main / 0.9)
        for r in s.reactors:
            over = main if r is s.reactors[0] else sc.stats_fill_ns
            r.infl = nxt / (nxt - over)
        return nxt

    def summary(self) -> dict:
        return {"decisions": self.decisions, "freq_requests": self.freq_requests}
