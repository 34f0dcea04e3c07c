"""``dynamic``: SPDK's dynamic scheduler (``lib/scheduler/scheduler_dynamic.c``), run every
``interval_us`` (SPDK's default is 1 s; SANDMAN's comparison ran it at 10 us).

Each period the main core gathers, per reactor, busy and idle time, and per thread its busy time
and its share of its reactor's idle polling (so a thread's load is busy / (busy + idle) of the
time its reactor spent on it). Then, as SPDK does:

1. every thread with load < ``load_limit`` (20%) goes to the main core;
2. every other thread goes to the first core, in core order, that fits it (the main core first;
   a lower-numbered core; any core if its own core is over ``core_limit`` (80%); else the least busy
   core when its core is over the limit), where "fits" means the core's busy share after adding
   the thread stays under ``core_limit``; a source core that was over ``core_busy`` (95%) keeps an
   estimate of at least ``core_limit`` after losing the thread;
3. cores left without threads switch to interrupt mode: they sleep through the kernel (epoll),
   in the OS idle state, and waking one for a thread takes ``server.kernel_wakeup_us`` (27 us).

The metrics are gathered by an event that each reactor handles between two loop iterations, so
while the main core is saturated (requests waiting in its threads' queues) the period stretches
until every waiting thread has had one turn (one poller batch); loads are then measured over the
stretched period.

Loads measured over 10 us are noisy (a request is ~1 us of work), so under a stable load threads
keep moving (SANDMAN: more than a million moves per minute). Each move costs the event-queue
hand-off (``server.thread_move_ns``) after the algorithm (``server.scheduler_run_ns`` on the main
core); each awake reactor spends ``server.stats_fill_ns`` per period filling its statistics.
"""

from __future__ import annotations

from pydantic import Field

from models.server.core_scheduling import dpdk_freq_table
from models.server.reactor import AWAKE, POLL, Ticker
from policies.core_scheduling.base import CORE_SCHEDULING, CoreSchedulingPolicy, round_robin, scheduler_overhead
from simcore.config import Model

#: sandman_polling_server.yaml policy_parameters.dynamic_scheduling_interval_us
DYNAMIC_INTERVAL_US = 10.0
#: SPDK's defaults of the dynamic scheduler's load_limit, core_limit and core_busy options
#: (lib/scheduler/scheduler_dynamic.c)
LOAD_LIMIT, CORE_LIMIT, CORE_BUSY = 20.0, 80.0, 95.0


@CORE_SCHEDULING.register("dynamic")
class DynamicScheduler(CoreSchedulingPolicy):
    class Params(Model):
        interval_us: float = Field(DYNAMIC_INTERVAL_US, gt=0, description="scheduling period, us")
        load_limit: float = Field(LOAD_LIMIT, ge=0, le=100, description="thread load (%) under which it is idle")
        core_limit: float = Field(CORE_LIMIT, ge=0, le=100, description="core load (%) a placement may not exceed")
        core_busy: float = Field(
            CORE_BUSY, ge=0, le=100, description="core load (%) above which its estimate stays >= core_limit"
        )
        main_core_governor: bool = Field(
            False, description="scale the main core's frequency with its load (DPDK governor)"
        )

    def setup(self) -> None:
        s = self.server
        round_robin(s)
        for r in s.reactors:
            s.set_mode(r, POLL)
        self.period = self.p.interval_us * 1e3
        scheduler_overhead(s, self.period)
        self.rmark = [r.executed_busy(0.0) for r in s.reactors]
        self.tmark = [0.0] * len(s.threads)
        self.lcore = [th.reactor.idx for th in s.threads]  # SPDK's thread_info.lcore (target)
        self.wake_ns = s.cfg.server.kernel_wakeup_us * 1e3
        self.run_ns = s.cfg.server.scheduler_run_ns
        self.ticker = Ticker(s.engine, self.period, self._tick)
        self.ticker.start()
        s.track_touched = True
        self.periods = 0
        self._deferred = False
        self.t_last = 0.0
        self.on_main = 0
        c = s.ccfg
        self.freqs = dpdk_freq_table(c)[::-1]  # the DPDK power library's table, lowest first
        self.main_level = len(self.freqs) - 1

    def on_arrival(self, th, now) -> None:
        if not self.ticker.armed:
            self.ticker.poke()

    def _iteration_left(self, r, now: float) -> float:
        """Time until saturated reactor ``r`` ends its current loop iteration: its committed work
        plus one poller batch of every thread waiting in its backlog."""
        s = self.server
        per = s.item_ns(r)
        waiting = sum(min(len(th.pending), s.batch) for th in r.backlog if th.reactor is r)
        return max(r.free_at - now, 0.0) + waiting * per

    def _tick(self, now: float):
        """One scheduling period (SPDK's ``balance``): measure reactor and thread loads, move idle
        threads to the main core and active ones to the best core, put empty cores to sleep."""
        s = self.server
        rs = s.reactors
        if rs[0].backlog and not self._deferred:
            self._deferred = True
            return max(self._iteration_left(rs[0], now), 1.0)
        self._deferred = False
        P = now - self.t_last
        self.t_last = now
        if P <= 0:
            return True
        busy, idle, any_busy = self._reactor_loads(now, P)
        lcore = self.lcore
        count = [0] * len(rs)
        for i in lcore:
            count[i] += 1
        order = self._thread_loads(idle)
        self.periods += 1
        main = 0
        if not any_busy and not order and self.on_main == len(lcore):
            return False  # everything idle on the main core: the decision cannot change
        bal = _Balance(busy, idle, count, lcore, self.p)
        loads = [(th, tb, tb * 100.0 / (tb + ti) if tb + ti > 0 else 0.0) for th, tb, ti in order]
        bal.idle_threads_to(loads, main)
        bal.active_threads_to_best_core(loads, main)
        # apply: threads whose assignment changed move; empty cores sleep in the kernel
        for th, _tb, _load in loads:
            dst = rs[lcore[th.idx]]
            if th.reactor is not None and th.reactor is not dst:
                s.move(th, dst, self.run_ns)
        for r in rs:
            if count[r.idx] == 0 and r.state == AWAKE and not r.threads and not r.incoming:
                s.sleep(r, s.os_idle, self.wake_ns)
        self.on_main = sum(1 for i in lcore if i == main)
        if self.p.main_core_governor:
            m = rs[main]
            lvl = self.main_level
            self.main_level = (
                min(lvl + 1, len(self.freqs) - 1)
                if _pct(busy[main], idle[main]) >= self.p.core_busy
                else max(lvl - 1, 0)
            )
            s.request_freq(m.pcore.index, self.freqs[self.main_level])
        return True

    def _reactor_loads(self, now: float, P: float) -> tuple[list[float], list[float], bool]:
        """Busy and idle ns of every reactor over the period ``P`` (awake ones; others 0) and
        whether any was busy."""
        rs = self.server.reactors
        busy = [0.0] * len(rs)
        idle = [0.0] * len(rs)
        any_busy = False
        rmark = self.rmark
        for r in rs:
            b = r.executed_busy(now)
            d = b - rmark[r.idx]
            rmark[r.idx] = b
            if r.state == AWAKE:
                if d > P:
                    d = P
                busy[r.idx] = d
                idle[r.idx] = P - d
                if d > 0.0:
                    any_busy = True
        return busy, idle, any_busy

    def _thread_loads(self, idle: list[float]) -> list[tuple]:
        """(thread, busy ns, idle share ns) per thread (SPDK thread stats), in core order; threads
        that did no work and already sit on the main core cannot move and are skipped."""
        s = self.server
        touched = s.touched
        order = []
        tmark = self.tmark
        for r in s.reactors:
            lc = r.loop_cycles or 1.0
            ths = [th for th in r.threads if th in touched] if r.idx == 0 else r.threads
            for th in ths:
                tb = th.busy - tmark[th.idx]
                tmark[th.idx] = th.busy
                ti = idle[r.idx] * th.poll_cycles / lc
                order.append((th, tb, ti))
        for th in touched:  # in transit: keep the marks current
            tmark[th.idx] = th.busy
        touched.clear()
        return order

    def summary(self) -> dict:
        return {"periods": self.periods}


def _pct(b: float, i: float) -> float:
    """Busy percentage of ``b`` busy and ``i`` idle ns."""
    t = b + i
    return b * 100.0 / t if t > 0 else 0.0


class _Balance:
    """The balancing pass of one period over the per-core busy/idle ns, thread counts and the
    thread -> core assignment ``lcore`` (all updated in place as threads move)."""

    __slots__ = ("busy", "idle", "count", "lcore", "ll", "cl", "cb")

    def __init__(self, busy, idle, count, lcore, p):
        self.busy, self.idle, self.count, self.lcore = busy, idle, count, lcore
        self.ll, self.cl, self.cb = p.load_limit, p.core_limit, p.core_busy

    def move(self, th, tb: float, dst: int) -> None:
        """Assign ``th`` (``tb`` busy ns) to core ``dst``; a busy source core left below the core
        limit is counted at the limit (SPDK keeps it from looking emptier than it will be)."""
        busy, idle, count, lcore = self.busy, self.idle, self.count, self.lcore
        src = lcore[th.idx]
        if src == dst:
            return
        busy[dst] += tb
        idle[dst] = idle[dst] - tb if idle[dst] > tb else 0.0
        count[dst] += 1
        bp = _pct(busy[src], idle[src])
        busy[src] = busy[src] - tb if busy[src] > tb else 0.0
        idle[src] += tb
        if bp >= self.cb and _pct(busy[src], idle[src]) < self.cl:
            tot = busy[src] + idle[src]
            busy[src] = tot * self.cl / 100.0
            idle[src] = tot - busy[src]
        count[src] -= 1
        lcore[th.idx] = dst

    def idle_threads_to(self, loads, main: int) -> None:
        """1) threads below the load limit go to the main core."""
        for th, tb, load in loads:
            if load < self.ll:
                self.move(th, tb, main)

    def active_threads_to_best_core(self, loads, main: int) -> None:
        """2) each active thread goes to the main core or a lower core with room under the core
        limit; from an overloaded core to the least busy one; else it stays."""
        busy, idle, count, lcore, cl = self.busy, self.idle, self.count, self.lcore, self.cl
        n = len(busy)
        for th, tb, load in loads:
            if load < self.ll:
                continue
            cur = lcore[th.idx]
            least = cur
            over = count[cur] > 1 and busy[cur] > 0 and _pct(busy[cur], idle[cur]) >= cl
            target = None
            for i in range(n):
                if busy[i] < busy[least]:
                    least = i
                if i == cur:
                    continue
                bi, ii = busy[i], idle[i]
                if not (bi + ii == 0.0 or count[i] == 0 or (ii >= tb and _pct(bi + tb, ii - tb) < cl)):
                    continue
                if i == main or (i < cur and cur != main) or over:
                    target = i
                    break
            if target is None:
                target = least if over else cur
            self.move(th, tb, target)
