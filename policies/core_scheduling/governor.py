"""``governor``: SPDK's governor scheduler (``lib/scheduler/gscheduler.c``) driving the DPDK power
library (``lib/scheduler/dpdk_governor.c`` -> ``rte_power``): threads stay where they are, every
reactor keeps polling, and each core's frequency follows its own load, one table entry per
decision.

**The scheduling pass** (SPDK ``lib/event/reactor.c``). The main reactor starts a pass when
``interval_us`` (10 us in SANDMAN's comparison) has passed since the last one started *and* the last
one has finished (``g_scheduling_in_progress``). A pass is a chain of events: the main reactor
gathers its own statistics and posts ``_reactors_scheduler_gather_metrics`` to the next core, which
gathers its own and posts to the next, round the ring of cores and back to the main reactor, which
runs ``balance`` there. Each hop waits for the receiving reactor to reach its event ring (the top of
its next loop iteration: :meth:`Server.event_ring_time`), so with many reactors a pass takes far
longer than 10 us and the decisions come that much less often. Each reactor's busy and idle time
is measured over its own window, between its successive gathers (``current_busy_tsc``,
``current_idle_tsc``).

**The decision** (gscheduler ``balance``), per reactor, from that window:

- busy < idle / 1000 -> ``set_core_freq_min``;
- idle > busy -> ``core_freq_down`` (one table entry);
- idle < busy / 1000 -> ``set_core_freq_max``;
- otherwise -> ``core_freq_up`` (one table entry).

So the governor steers each core to where its busy and idle time are equal. **Frequency steps**:
the DPDK table (:func:`models.server.core_scheduling.dpdk_freq_table`): turbo, then the base
frequency down to the minimum in 100 MHz steps (25 entries on the EPYC 9454P). **Scope**: per core;
SMT siblings share one clock, and the power library's documented rule is that a physical core runs
at the higher of its two threads' requests.

**Actuation** (issue 15's costs stay): every reactor fills its statistics once per pass
(``server.stats_fill_ns``, measured by SANDMAN); the main core runs the decision loop
(``decision_ns_per_reactor``) and, for every frequency change, the power library's write to
``scaling_setspeed`` (``freq_request_ns``: write(2), the userspace governor, the driver's request);
the driver writes the request register on the target CPU (``target_ipi_cycles`` on that reactor:
amd-pstate's ``wrmsrl_on_cpu`` when not fast-switching). Charged as the reactors' slow-down over the
pass. The hardware then takes ``pstate_transition_ns`` (450 us on the EPYC) and lands on the latest
request (:meth:`models.cpu.core.PhysicalCore.request_freq`). The passes stop (dormant) once every
core is idle at the minimum; an arrival re-arms them.
"""

from __future__ import annotations

from pydantic import Field

from models.server.core_scheduling import (
    DpdkFreqWrites,
    dpdk_freq_table,
    reactors_by_core,
    request_core_freqs,
    slow_reactors,
)
from models.server.reactor import POLL
from policies.core_scheduling.base import CORE_SCHEDULING, CoreSchedulingPolicy, round_robin

#: sandman_polling_server.yaml policy_parameters.governor_interval_us
GOVERNOR_INTERVAL_US = 10.0


@CORE_SCHEDULING.register("governor")
class Governor(CoreSchedulingPolicy):
    class Params(DpdkFreqWrites):
        interval_us: float = Field(
            GOVERNOR_INTERVAL_US,
            gt=0,
            description="SPDK scheduler period (framework_set_scheduler -p): the least time from one"
            " pass's start to the next's, us (SANDMAN: 10)",
        )
        decision_ns_per_reactor: float = Field(
            20.0,
            ge=0,
            description="the main core's decision loop per reactor"
            " examined (read two counters, compare, pick a level; estimate), ns",
        )

    def setup(self) -> None:
        s = self.server
        round_robin(s)
        for r in s.reactors:
            s.set_mode(r, POLL)
        self.freqs = dpdk_freq_table(s.ccfg)  # highest first, as DPDK indexes it
        self.lowest = len(self.freqs) - 1
        n = len(s.reactors)
        self.level = [0] * n  # DPDK table index per reactor (0: the highest)
        self.mark = [r.executed_busy(0.0) for r in s.reactors]
        self.t_gather = [0.0] * n
        self.busy = [0.0] * n
        self.window = [0.0] * n
        self.period = self.p.interval_us * 1e3
        self.by_core = reactors_by_core(s)
        self.decisions = 0
        self.freq_requests = 0
        self.pass_ns = 0.0  # summed pass durations (start to balance), ns
        self.max_pass_ns = 0.0
        self.armed = False
        self.t_start = 0.0
        self._actuation(0, self.period, ())
        self._arm(0.0)

    def on_arrival(self, th, now) -> None:
        if not self.armed:
            self._arm(now)

    # ------------------------------------------------------------------ the pass
    def _arm(self, at: float) -> None:
        self.armed = True
        s = self.server
        s.engine.call_at(s.event_ring_time(s.reactors[0], at), self._start)

    def _start(self) -> None:
        self.t_start = self.server.engine.now
        self._gather(0)

    def _gather(self, i: int) -> None:
        """Reactor ``i`` reads its busy time since its last gather and posts to the next core."""
        s = self.server
        now = s.engine.now
        r = s.reactors[i]
        b = r.executed_busy(now)
        self.busy[i] = b - self.mark[i]
        self.window[i] = now - self.t_gather[i]
        self.mark[i] = b
        self.t_gather[i] = now
        nxt = i + 1
        if nxt < len(s.reactors):
            s.engine.call_at(s.event_ring_time(s.reactors[nxt], now), self._gather, nxt)
        else:
            s.engine.call_at(s.event_ring_time(s.reactors[0], now), self._balance)

    def _balance(self) -> None:
        """gscheduler's ``balance`` on the main reactor, then the next pass (or dormancy)."""
        s = self.server
        now = s.engine.now
        self.decisions += 1
        self.pass_ns += now - self.t_start
        self.max_pass_ns = max(self.max_pass_ns, now - self.t_start)
        changed = self._decide()
        requests = self._request_cores(changed)
        self.freq_requests += requests
        span = max(self.period, now - self.t_start)
        main = self._actuation(requests, span, changed)
        if all(b == 0.0 for b in self.busy) and all(lv == self.lowest for lv in self.level):
            self.armed = False  # every core idle at the minimum: nothing changes until work arrives
            return
        self._arm(max(self.t_start + self.period, now + main))

    def _decide(self) -> list[int]:
        """Each reactor's new table index from its window; returns the reactors that changed."""
        lv = self.level
        low = self.lowest
        changed = []
        for i, busy in enumerate(self.busy):
            w = self.window[i]
            idle = w - busy if busy < w else 0.0
            cur = lv[i]
            if busy < idle / 1000.0:
                new = low  # set_core_freq_min
            elif idle > busy:
                new = cur + 1 if cur < low else low  # core_freq_down
            elif idle < busy / 1000.0:
                new = 0  # set_core_freq_max
            else:
                new = cur - 1 if cur > 0 else 0  # core_freq_up
            if new != cur:
                lv[i] = new
                changed.append(i)
        return changed

    def _request_cores(self, changed: list[int]) -> int:
        """Ask each physical core of a changed reactor for its faster sibling's entry; returns
        the number of requests that changed a core's target."""
        return request_core_freqs(self.server, self.by_core, changed, lambda r: self.freqs[self.level[r.idx]])

    def _actuation(self, requests: int, span_ns: float, changed) -> float:
        """The pass's work as the reactors' slow-down until the next pass (``span_ns`` apart): the
        main core's decision loop and frequency writes, every reactor's statistics, the register
        write on each changed reactor. Returns the main core's work, ns."""
        s = self.server
        sc = s.cfg.server
        main = sc.stats_fill_ns + self.p.decision_ns_per_reactor * len(s.reactors) + requests * self.p.freq_request_ns
        span = max(span_ns, main / 0.9)
        slow_reactors(s, span, main, sc.stats_fill_ns, changed, self.p.target_ipi_cycles)
        return main

    def summary(self) -> dict:
        mean_pass_us = self.pass_ns / self.decisions / 1e3 if self.decisions else 0.0
        return {"decisions": self.decisions, "freq_requests": self.freq_requests, "mean_pass_us": mean_pass_us}
