"""``sandman``: SANDMAN (Zhou et al., SOSP 2025): sleep in C1 with one eye open.

The paper's three techniques, each with a switch for ablation studies:

(a) **Sleeping cores.** A reactor without threads sleeps in C1 with a user-level monitor/wait on
    the next entry of its event queue: posting a thread to it wakes it in about the C1 exit
    latency, with no system call or interrupt (``wakeup=mwait``). ``wakeup=interrupt`` sleeps in
    the kernel instead (OS idle state, ``server.kernel_wakeup_us`` to wake); ``sleep=freq`` does
    not sleep at all but drops an empty physical core to the minimum frequency and ramps it back
    (P-state transition latency) when a thread arrives.
(b) **Coarse consolidation** every ``coarse_interval_s`` (1 s): threads that received no request go
    to the main core; every core under ``t_idle`` (0.4) load gives its threads to the other awake
    cores that stay under ``t_healthy`` (0.8), first fit in core order; with
    ``sibling_scheduling``, a lone awake SMT sibling also gives its threads away when they fit, so
    both siblings (the whole physical core) sleep.
(c) **Fine-grained burst detection** every ``fine_interval_us`` (10 us): each thread's count of
    incoming requests (``burst_signal=queue``, from its RX queues) or its busy time
    (``burst_signal=load``) is compared with the confidence interval of its history
    (:class:`~policies.core_scheduling.detector.CIDetector`, moving average +- ``z`` standard
    errors). A thread above the upper bound, on a core whose incoming work in the interval exceeds
    ``overload`` x its capacity (the core cannot absorb the surge), is moved to a whole sleeping
    core, preferring one whose SMT sibling is awake (with ``sibling_scheduling``). The main core
    runs the algorithm (``server.scheduler_run_ns``, ~2 us) every fine interval and every awake
    reactor fills its statistics (``server.stats_fill_ns``).

``hybrid_polling`` makes cores with threads sleep between polls as :mod:`.hybrid` does (with a
user-level timed wait when ``wakeup=mwait``). The run starts in the state an idle SANDMAN server
settles in: every thread on the main core, every other core asleep (``initial=spread`` starts
round-robin instead). The first coarse decision comes ``coarse_first_s`` into the run (default:
one coarse interval).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from models.server.reactor import ASLEEP, AWAKE, HYBRID, POLL, Ticker
from policies.core_scheduling.base import CORE_SCHEDULING, CoreSchedulingPolicy, round_robin, scheduler_overhead
from policies.core_scheduling.detector import CIDetector
from policies.core_scheduling.hybrid import INITIAL_SLEEP_US, sleep_fn
from simcore.config import Model

#: sandman_polling_server.yaml policy_parameters.sandman
T_HEALTHY, T_IDLE, COARSE_INTERVAL_S, FINE_INTERVAL_US, Z = 0.8, 0.4, 1.0, 10.0, 1.96


@CORE_SCHEDULING.register("sandman")
class Sandman(CoreSchedulingPolicy):
    class Params(Model):
        t_healthy: float = Field(T_HEALTHY, gt=0, le=1, description="consolidation keeps a core's load under this")
        t_idle: float = Field(T_IDLE, ge=0, le=1, description="a core under this load gives its threads away")
        coarse_interval_s: float = Field(COARSE_INTERVAL_S, gt=0, description="consolidation period, s")
        coarse_first_s: float | None = Field(
            None, gt=0, description="time of the first consolidation, s (None: one period)"
        )
        fine_interval_us: float = Field(FINE_INTERVAL_US, gt=0, description="burst-detection period, us")
        z: float = Field(Z, gt=0, description="confidence-interval width in standard errors")
        history_intervals: int = Field(100, ge=1, description="moving-average window of the detector, fine intervals")
        backlog_us: float = Field(
            30.0,
            ge=0,
            description="burst_signal=queue: a surge is acted on when its core's queued"
            " work (requests received but not yet processed) exceeds this, us",
        )
        overload: float = Field(
            1.0,
            ge=0,
            description="burst_signal=load: a surge is acted on when its core's measured"
            " load over the fine interval reaches this",
        )
        sleep: Literal["cstate", "freq"] = Field(
            "cstate", description="empty cores sleep in a C-state, or run at minimum frequency"
        )
        burst_signal: Literal["queue", "load"] = Field(
            "queue", description="detect bursts from incoming requests or thread busy time"
        )
        wakeup: Literal["mwait", "interrupt"] = Field(
            "mwait", description="user-level monitor/wait, or kernel sleep + software interrupt"
        )
        hybrid_polling: bool = Field(
            False, description="cores with threads sleep between polls (half the mean service time)"
        )
        sibling_scheduling: bool = Field(True, description="consolidate and wake SMT siblings together")
        burst_detection: bool = Field(True, description="fine-grained burst detection on/off")
        consolidation: bool = Field(True, description="coarse consolidation on/off")
        initial: Literal["main", "spread"] = Field("main", description="threads start on the main core, or round-robin")

    # ------------------------------------------------------------------ setup
    def setup(self) -> None:
        s = self.server
        p = self.p
        self.main = s.reactors[0]
        if p.initial == "main":
            for th in s.threads:
                s.place(th, self.main)
        else:
            round_robin(s)
        self.fine_ns = p.fine_interval_us * 1e3
        if p.burst_detection:
            scheduler_overhead(s, self.fine_ns)
        self.run_ns = s.cfg.server.scheduler_run_ns
        self.backlog_ns = p.backlog_us * 1e3
        if p.wakeup == "mwait":
            self.sleep_state, self.wake_ns = s.c1, 0.0
        else:
            self.sleep_state, self.wake_ns = s.os_idle, s.cfg.server.kernel_wakeup_us * 1e3
        self.hyb = (
            sleep_fn(0.5, INITIAL_SLEEP_US * 1e3, None if p.wakeup == "mwait" else s) if p.hybrid_polling else None
        )
        for r in s.reactors:
            if r.threads or r is self.main or p.sleep == "freq":
                self._awake_mode(r)
            else:
                s.sleep(r, self.sleep_state, self.wake_ns)
        if p.sleep == "freq":
            for i in {r.pcore.index for r in s.reactors}:
                self._core_freq(i)
        self.cycles = sum(self.item_cycles())  # per request on a reactor (receive + completion)
        n = len(s.threads)
        self.cnt = [0] * n
        self.touched: list[int] = []
        self.det = CIDetector(p.z, p.history_intervals)
        self.burst_decisions: list[float] = []
        self.flags = 0
        self.burst_moves = 0
        self.coarse_moves = 0
        self.fine = Ticker(s.engine, self.fine_ns, self._fine)
        if p.burst_signal == "load":
            s.track_touched = True
            self.bmark = [0.0] * n
            self._rmark = [0.0] * len(s.reactors)
            self._rmark_t = 0.0
            self._rload: dict = {}
        self.fine.start()
        cp = p.coarse_interval_s * 1e9
        self.coarse = Ticker(
            s.engine, cp, self._coarse, phase_ns=(p.coarse_first_s * 1e9 if p.coarse_first_s else cp) % cp
        )
        self.coarse.start(p.coarse_first_s * 1e9 if p.coarse_first_s else cp)
        self.amark = [0] * n
        self.cbmark = [0.0] * n
        self.t_last_coarse = 0.0

    def _awake_mode(self, r) -> None:
        s = self.server
        if self.p.hybrid_polling:
            kind = "mwait" if self.p.wakeup == "mwait" else "kernel"
            s.set_mode(r, HYBRID, hyb_kind=kind, hyb_sleep=self.hyb, cstate=s.c1)
        else:
            s.set_mode(r, POLL)

    def _core_freq(self, core_index: int) -> None:
        """``sleep=freq``: a physical core runs at minimum frequency while both siblings are empty."""
        s = self.server
        rs = [r for r in s.reactors if r.pcore.index == core_index]
        busy = any(r.threads or r.incoming or r is self.main for r in rs)
        s.request_freq(core_index, s.ccfg.top_freq_ghz if busy else s.ccfg.min_freq_ghz)

    def _move(self, th, dest) -> None:
        s = self.server
        src = th.reactor
        s.move(th, dest, self.run_ns)
        if self.p.sleep == "freq":
            self._core_freq(dest.pcore.index)
            if src is not None:
                self._core_freq(src.pcore.index)

    def _sleep_if_empty(self, r) -> None:
        if r is self.main or r.threads or r.incoming:
            return
        if self.p.sleep == "freq":
            self._core_freq(r.pcore.index)
        else:
            self.server.sleep(r, self.sleep_state, self.wake_ns)

    def _is_sleeping(self, r) -> bool:
        """A whole core for a surging thread: no threads (asleep, or at minimum frequency)."""
        if r is self.main or r.threads or r.incoming:
            return False
        return r.state == ASLEEP or self.p.sleep == "freq"

    # ------------------------------------------------------------------ fine grain
    def on_arrival(self, th, now) -> None:
        i = th.idx
        if not self.cnt[i]:
            self.touched.append(i)
        self.cnt[i] += 1
        if not self.fine.armed:
            self.fine.poke()

    def _fine(self, now: float):
        s = self.server
        p = self.p
        k = int(now / self.fine_ns + 0.5)
        cnt = self.cnt
        threads = s.threads
        if p.burst_signal == "queue":
            keys = self.touched
            xs = [cnt[i] for i in keys]
        else:
            tt = s.touched
            keys = [th.idx for th in tt]
            tt.clear()
            xs = []
            self._bprev = {}
            for i in keys:
                b = threads[i].busy
                xs.append(b - self.bmark[i])
                self._bprev[i] = self.bmark[i]
                self.bmark[i] = b
            self._measure_loads(now)
        if not keys and not self.touched:
            return False
        det = self.det
        flagged = []
        rwork: dict = {}
        for i, x in zip(keys, xs):
            if det.update(i, k, x):
                flagged.append(i)
        for i in self.touched:
            r = threads[i].reactor
            if r is not None:
                rwork[r] = rwork.get(r, 0) + cnt[i]
        if flagged:
            self.flags += len(flagged)
        if flagged and p.burst_detection:
            self._act_on_bursts(now, flagged, rwork)
        for i in self.touched:
            cnt[i] = 0
        self.touched = []
        return True

    def _queued_ns(self, r, now: float) -> float:
        """Work received by ``r`` and not yet processed: committed ahead plus waiting in its threads' queues."""
        s = self.server
        ahead = r.free_at - now if r.free_at > now else 0.0
        waiting = sum(len(th.pending) + len(th.pending_cq) for th in r.backlog if th.reactor is r)
        if waiting:
            ahead += waiting * self.cycles / 2.0 * r.infl * s.smt / r.pcore.freq_ghz
        return ahead

    def _capacity_load(self, r, requests: int) -> float:
        """Fraction of ``r``'s capacity in one fine interval that ``requests`` requests need."""
        s = self.server
        f = r.pcore.freq_ghz
        smt = s.smt if s.sibling_c0(r, s.engine.now) else 1.0
        return requests * self.cycles * smt * r.infl / (f * self.fine_ns)

    def _act_on_bursts(self, now: float, flagged: list[int], rwork: dict) -> None:
        s = self.server
        p = self.p
        by_r: dict = {}
        for i in flagged:
            th = s.threads[i]
            if th.reactor is not None:
                by_r.setdefault(th.reactor, []).append(th)
        moved = False
        for r, ths in by_r.items():
            if len(r.threads) <= 1:
                continue
            if p.burst_signal == "queue":
                if self._queued_ns(r, now) < self.backlog_ns:
                    continue
                load = self._capacity_load(r, rwork.get(r, 0))
            else:
                load = self._rload.get(r.idx, 0.0)
                if load < p.overload:
                    continue
            # move surging threads (largest first), each to a whole sleeping core, until what
            # stays on r is back under t_healthy
            ths.sort(key=lambda t: -self.cnt[t.idx])
            for th in ths:
                if len(r.threads) <= 1 or load < p.t_healthy:
                    break
                dest = self._sleeping_core()
                if dest is None:
                    break
                share = self._thread_share(th, r, load, rwork.get(r, 0))
                self._move(th, dest)
                load -= share
                self.burst_moves += 1
                moved = True
        if moved:
            self.burst_decisions.append(now)

    def _measure_loads(self, now: float) -> None:
        """``burst_signal=load``: every reactor's measured load since the previous fine decision."""
        dt = now - self._rmark_t
        self._rmark_t = now
        for r in self.server.reactors:
            b = r.executed_busy(now)
            self._rload[r.idx] = (b - self._rmark[r.idx]) / dt if dt > 0 else 0.0
            self._rmark[r.idx] = b

    def _thread_share(self, th, r, load: float, requests: int) -> float:
        """The part of ``r``'s load that ``th`` brought in this interval."""
        if self.p.burst_signal == "queue":
            return load * self.cnt[th.idx] / requests if requests else 0.0
        return (th.busy - self._bprev.get(th.idx, th.busy)) / self.fine_ns

    def _sleeping_core(self):
        s = self.server
        first = None
        for r in s.reactors:
            if not self._is_sleeping(r):
                continue
            if not self.p.sibling_scheduling:
                return r
            sib = r.sib
            if sib is not None and sib.state == AWAKE and (sib.threads or sib is self.main):
                return r
            if first is None:
                first = r
        return first

    # ------------------------------------------------------------------ coarse grain
    def _coarse(self, now: float):
        """The coarse-grain step: measure each thread's arrivals and load over the interval, then
        consolidate: idle threads to the main core, cores under ``t_idle`` emptied onto awake cores
        under ``t_healthy`` (whole physical cores with sibling scheduling), empty cores asleep."""
        s = self.server
        P = now - self.t_last_coarse
        self.t_last_coarse = now
        if P <= 0:
            return True
        arr = {}
        load = {}
        for th in s.threads:
            arr[th] = th.arrivals - self.amark[th.idx]
            self.amark[th.idx] = th.arrivals
            load[th] = (th.busy - self.cbmark[th.idx]) / P
            self.cbmark[th.idx] = th.busy
        if not self.p.consolidation:
            return True
        plan = _Consolidation(s, self.main, self.p, load)
        # (1) threads without incoming requests -> main core
        assign = {th: (self.main if arr[th] == 0 else th.reactor) for th in s.threads if th.reactor is not None}
        plan.start(assign)
        plan.empty_idle_cores()
        if self.p.sibling_scheduling:
            plan.empty_lone_siblings()
        n0 = s.migrations
        for th, r in assign.items():
            if th.reactor is not None and th.reactor is not r:
                self._move(th, r)
        self.coarse_moves += s.migrations - n0
        for r in s.reactors:
            self._sleep_if_empty(r)
        return True

    def summary(self) -> dict:
        return {
            "burst_flags": self.flags,
            "burst_moves": self.burst_moves,
            "coarse_moves": self.coarse_moves,
            "fine_periods": self.fine.fires,
        }


class _Consolidation:
    """SANDMAN's coarse-grain plan over one interval: the thread -> reactor assignment (updated in
    place), each reactor's load and members, the awake reactors and those emptied so far."""

    def __init__(self, server, main, p, load: dict):
        self.server, self.main, self.p, self.load = server, main, p, load

    def start(self, assign: dict) -> None:
        rs = self.server.reactors
        self.assign = assign
        self.rload = {r: 0.0 for r in rs}
        self.members = {r: [] for r in rs}
        for th, r in assign.items():
            self.rload[r] += self.load[th]
            self.members[r].append(th)
        self.awake = [r for r in rs if self.members[r] or r is self.main]
        self.emptied: set = set()

    def place_all(self, ths, src: list, prefer_pairs: bool) -> dict | None:
        """First-fit placement of ``ths`` on other awake cores (not in ``src``) under t_healthy."""
        members, main, load = self.members, self.main, self.load
        trial = dict(self.rload)
        out = {}
        cands = [r for r in self.awake if r not in src and r not in self.emptied]
        if prefer_pairs:
            paired = [
                r
                for r in cands
                if r.sib is not None and (members[r.sib] or r.sib is main) and r.sib not in self.emptied
            ]
            cands = paired + [r for r in cands if r not in paired]
        for th in sorted(ths, key=lambda t: -load[t]):
            for r in cands:
                if trial[r] + load[th] < self.p.t_healthy:
                    trial[r] += load[th]
                    out[th] = r
                    break
            else:
                return None
        return out

    def commit(self, plan: dict, src: list) -> None:
        for th, r in plan.items():
            self.assign[th] = r
            self.members[r].append(th)
            self.rload[r] += self.load[th]
        for r in src:
            self.members[r] = []
            self.rload[r] = 0.0
            self.emptied.add(r)

    def empty_idle_cores(self) -> None:
        """(2) cores under t_idle give their threads away; with sibling scheduling the unit is the
        physical core (both siblings empty together, or neither)."""
        p, main, awake, rload = self.p, self.main, self.awake, self.rload
        if p.sibling_scheduling:
            units = {}
            for r in awake:
                units.setdefault(r.pcore.index, []).append(r)
            units = [
                u
                for u in units.values()
                if main not in u and (len(u) == 2 or u[0].sib is None or u[0].sib not in awake)
            ]
        else:
            units = [[r] for r in awake if r is not main]
        for u in sorted(units, key=lambda u: (sum(rload[r] for r in u), u[0].idx)):
            if any(rload[r] >= p.t_idle or r in self.emptied for r in u):
                continue
            ths = [th for r in u for th in self.members[r]]
            plan = self.place_all(ths, u, p.sibling_scheduling)
            if plan is not None:
                self.commit(plan, u)

    def empty_lone_siblings(self) -> None:
        """(3) lone awake siblings give their threads away so the physical core sleeps whole."""
        members, emptied, main = self.members, self.emptied, self.main
        for r in self.awake:
            if r is main or r in emptied or not members[r]:
                continue
            sib = r.sib
            if sib is not None and sib not in emptied and (members[sib] or sib is main):
                continue
            plan = self.place_all(members[r], [r], True)
            if plan is not None:
                self.commit(plan, [r])
