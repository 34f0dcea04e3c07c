"""``dpdk-empty-poll``: the DPDK power library's empty-poll governor (``rte_power_empty_poll.c``,
DPDK 19.02-22.11; its ``l3fwd-power --empty-poll`` example), on SPDK-style reactors: threads stay
where they are, every reactor keeps polling, and each core's frequency moves between two states on
how many of its polls came back empty.

Per reactor, every ``interval_ms`` (10: ``INTERVALS_PER_SECOND`` 100, an ``rte_timer`` on the main
core), ``update_stats``: the empty polls of the interval, averaged over the last ``bins`` (4,
``BINS_AV``) intervals, against the trained count of a fully idle interval at the current frequency
(``base_edpi``, plus 0.05%) give a busy percentage. A reactor polls in loops of equal length while
idle, so the empty polls over the idle count are its idle time over the interval (the model reads
the time; the loop length cancels).

``update_stats_normal``: in ``MED``, a busy percentage above ``med_to_high_percent`` (70) counts one
window; **more than** ``windows`` (100) consecutive such windows move the core to ``HGH``, and a window
at or below the threshold resets the count. In ``HGH``, below ``high_to_med_percent`` (30) counts
toward ``MED`` the same way. A state change clears the averaging bins (``enter_busy_state``,
``enter_normal_state``: the bins start at zero). So the governor reacts after a second of sustained
load: a one-second burst ends before it scales up.

Frequencies: the state's index into DPDK's frequency table
(:func:`models.server.core_scheduling.dpdk_freq_table`, highest first): l3fwd-power's ``freq_tlb``
{14, 9, 1} for LOW, MED, HGH (LOW, the purge state, is not supported by the library). Training
(two traffic-free seconds per frequency) is assumed done: the run starts in ``MED``. Each change is
one ``rte_power_set_freq`` (``freq_request_ns`` on the main core, ``target_ipi_cycles`` on the
reactor, as :mod:`policies.core_scheduling.governor`), then the P-state transition. Per logical core;
SMT siblings share a clock at the faster sibling's request.
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
from models.server.reactor import POLL, Ticker
from policies.core_scheduling.base import CORE_SCHEDULING, CoreSchedulingPolicy, round_robin

MED, HGH = 1, 2


@CORE_SCHEDULING.register("dpdk-empty-poll")
class EmptyPollGovernor(CoreSchedulingPolicy):
    class Params(DpdkFreqWrites):
        interval_ms: float = Field(10.0, gt=0, description="detection period (INTERVALS_PER_SECOND 100), ms")
        windows: int = Field(
            100,
            ge=0,
            description="consecutive windows past the threshold before the state changes (it changes on the"
            " next one: threshold_ctr counts to INTERVALS_PER_SECOND)",
        )
        bins: int = Field(4, ge=1, description="intervals averaged (BINS_AV)")
        med_to_high_percent: float = Field(70.0, ge=0, le=100, description="MED -> HGH busy threshold, %")
        high_to_med_percent: float = Field(30.0, ge=0, le=100, description="HGH -> MED busy threshold, %")
        med_index: int = Field(9, ge=0, description="MED's index in the DPDK frequency table (l3fwd-power freq_tlb)")
        high_index: int = Field(1, ge=0, description="HGH's index in the DPDK frequency table (l3fwd-power freq_tlb)")

    def setup(self) -> None:
        s = self.server
        round_robin(s)
        for r in s.reactors:
            s.set_mode(r, POLL)
        table = dpdk_freq_table(s.ccfg)
        last = len(table) - 1
        self.freq = {MED: table[min(self.p.med_index, last)], HGH: table[min(self.p.high_index, last)]}
        n = len(s.reactors)
        self.state = [MED] * n
        self.ctr = [0] * n
        self.bins = [[0.0] * self.p.bins for _ in range(n)]  # idle fractions; zero after a change
        self.ec = [0] * n
        self.mark = [0.0] * n
        self.period = self.p.interval_ms * 1e6
        self.by_core = reactors_by_core(s)
        self.state_changes = 0  # (the cores start at MED: initial_freq_ghz, enter_normal_state)
        self.ticker = Ticker(s.engine, self.period, self._tick)
        self.ticker.start()

    def initial_freq_ghz(self) -> float | None:
        table = dpdk_freq_table(self.server.cfg.platform.cpu)
        return table[min(self.p.med_index, len(table) - 1)]

    def _busy_percent(self, i: int, busy_ns: float) -> float:
        """update_stats: 100 - the mean empty polls over the trained idle count, in %."""
        idle_frac = max(self.period - busy_ns, 0.0) / self.period
        b = self.bins[i]
        b[self.ec[i] % len(b)] = idle_frac
        self.ec[i] += 1
        return 100.0 - sum(b) / len(b) / (1.0 + 1.0 / 2000.0) * 100.0

    def _tick(self, now: float):
        s = self.server
        changed = []
        for i, r in enumerate(s.reactors):
            b = r.executed_busy(now)
            if self._advance(i, self._busy_percent(i, b - self.mark[i])):
                changed.append(i)
            self.mark[i] = b
        requests = request_core_freqs(s, self.by_core, changed, lambda r: self.freq[self.state[r.idx]])
        self.state_changes += len(changed)
        self._actuation(requests, changed)
        return True

    def _advance(self, i: int, pct: float) -> bool:
        """update_stats_normal for reactor ``i`` with this window's busy percentage; True when
        its state changed."""
        p = self.p
        st = self.state[i]
        if not (pct > p.med_to_high_percent if st == MED else pct < p.high_to_med_percent):
            self.ctr[i] = 0  # reset
            return False
        if self.ctr[i] < p.windows:
            self.ctr[i] += 1
            return False
        self.state[i] = HGH if st == MED else MED
        self.ctr[i] = 0
        self.bins[i] = [0.0] * p.bins
        self.ec[i] = 0
        return True

    def _actuation(self, requests: int, changed: list[int]) -> None:
        """This interval's frequency writes: a slow-down of the main reactor and of each changed one."""
        main = requests * self.p.freq_request_ns
        slow_reactors(self.server, self.period, main, 0.0, changed, self.p.target_ipi_cycles)

    def summary(self) -> dict:
        return {"state_changes": self.state_changes, "cores_high": sum(1 for st in self.state if st == HGH)}
