"""The storage server's reactor timing, analytic rather than loop by loop: when an item visible at
``t`` starts (the next empty-loop boundary of an idle polling reactor, at once on an interrupt's
wake-up, the next wake of a hybrid sleep stretch; when the committed work ends on a busy reactor),
how long it runs (cycles / frequency, x ``smt_slowdown`` while the SMT sibling is in C0, x the
scheduler's overhead factor), and the end of a busy period (the reactor's idle behaviour: poll,
an interrupt-driven C-state, or a hybrid sleep stretch). Idle polling is never simulated.

A part of :class:`models.server.target.Server` (a base class of it: the methods read the fields
its ``__init__`` sets).
"""

from __future__ import annotations

from math import ceil

from models.cpu.cpuidle import NO_TIMER_NS
from models.server.reactor import AWAKE, HYBRID, IRQ, LOOP_EPS_NS, POLL, LThread, Reactor
from simcore.tracing import CPU_PID


class ReactorTiming:
    """Reactor timing of a :class:`~models.server.target.Server`: loop lengths, commits, busy
    periods and their ends."""

    def loop_ns(self, r: Reactor) -> float:
        """Length of one empty loop iteration of ``r`` now."""
        return r.loop_cycles * r.infl * (self.smt if self.sibling_c0(r, self.engine.now) else 1.0) / r.pcore.freq_ghz

    def event_ring_time(self, r: Reactor, t: float) -> float:
        """When polling reactor ``r`` runs an event posted to its ring at ``t``: SPDK's reactor loop
        drains the event ring at the top of every iteration (``_reactor_run``:
        ``event_queue_run_batch`` before the threads' pollers). An idle reactor reaches it at its
        next empty-loop boundary; a busy one after its current iteration, at most one poller batch
        of each of its threads (``server.poll_batch`` requests) later. Other modes: at once."""
        if r.state != AWAKE or r.idle_mode != POLL:
            return t
        if r.free_at > t:
            return min(r.free_at, t + self.batch * self.item_ns(r) * max(len(r.threads), 1))
        s = self._loop_boundary(r, t)
        if s < r.stall_until:
            s = r.stall_until
        return s if s > t else t

    def pstate_stalled(self, rs: list, _freq_ghz: float) -> None:
        """A P-state change took effect on the core of reactors ``rs``: its clock stops until
        ``stall_until`` (the PLL relocks). Nothing starts before then; on a reactor with work
        committed, the work after the item under way waits as long (the stall is counted as the
        reactor's busy time, as SPDK's TSC counts it; the items already timed keep their ends)."""
        now = self.engine.now
        for r in rs:
            end = r.pcore.stall_until
            if end <= now:
                return
            if r.free_at > now:
                ns = end - now
                r.free_at += ns
                r.busy += ns
            r.stall_until = end

    def item_ns(self, r: Reactor) -> float:
        """A saturated reactor's time per request (receive and completion averaged), ns."""
        return (r.rx_cycles + r.cq_cycles) / 2.0 * r.infl * self.smt / r.pcore.freq_ghz

    def _loop_boundary(self, r: Reactor, t: float) -> float:
        """The first empty-loop boundary of idle polling reactor ``r`` at or after ``t`` (its loops
        run back to back from the end of its last work, or from its mode's start)."""
        t0 = r.t_mode if r.t_mode > r.free_at else r.free_at
        if t <= t0:
            return t0
        L = r.loop_cycles * r.infl * (self.smt if self.sibling_c0(r, t) else 1.0) / r.pcore.freq_ghz
        return t0 + ceil((t - t0) / L - LOOP_EPS_NS) * L if L > 0 else t

    @staticmethod
    def sibling_c0(r: Reactor, t: float) -> bool:
        """Is ``r``'s SMT sibling in C0 at ``t`` (an awake reactor that polls, or has work committed
        past ``t``)? Its work then runs ``smt_slowdown`` times slower."""
        sib = r.sib
        return sib is not None and sib.state == AWAKE and (sib.idle_mode == POLL or sib.free_at > t)

    def _commit(self, r: Reactor, th: LThread, t: float, cycles: float, what: str) -> float:
        """Commit ``cycles`` of thread ``th``'s work (``what``: for the timeline), visible at ``t``
        (= now), to ``r``; returns its end."""
        fa = r.free_at
        if fa > t:
            s = fa
        else:
            s = self._idle_start(r, t)
            if s < r.stall_until:  # the core's clock is stopped (a P-state change)
                s = r.stall_until
            r.period_start = s
        f = r.pcore.freq_ghz
        sib = r.sib
        if sib is not None and sib.state == AWAKE and (sib.idle_mode == POLL or sib.free_at > s):
            e = s + cycles * r.infl * self.smt / f
        else:
            e = s + cycles * r.infl / f
        d = e - s
        r.free_at = e
        r.busy += d
        th.busy += d
        if self.tracer is not None:
            self.tracer.span(CPU_PID, r.cpu_id, f"thread {th.idx}: {what}", s, d, "work")
        if self.track_touched:
            self.touched[th] = None
        if fa <= t and r.period_ev is None and (r.idle_mode != POLL or self.act_proc != self.act_poll):
            self._arm_period_end(r)
        return e

    def _idle_start(self, r: Reactor, t: float) -> float:
        """When an idle awake reactor starts an item visible at ``t`` (and its power-state change)."""
        mode = r.idle_mode
        if mode == POLL:
            s = self._loop_boundary(r, t)
            if self.act_proc != self.act_poll:
                self.set_state(r.cpu_id, s, self.act_proc)
            return s
        if mode == IRQ:
            if not r.idle:  # still in the idle-entry path: the interrupt is taken at once
                return t
            r.idle = False
            r.idle_gov.reflect(t - r.idle_from)
            r.wakes += 1
            self._apply(r.cpu_id, self.act_kernel)  # C0 from the interrupt (the exit latency runs in C0)
            return t + self.exit_ns[r.idle_state] + r.exit_cycles / r.pcore.freq_ghz
        # HYBRID
        if not r.in_stretch:  # in the first poll after the last work
            t1 = (r.t_mode if r.t_mode > r.free_at else r.free_at) + self.loop_ns(r)
            return t1 if t1 > t else t
        t0, L, P = r.st_t0, r.st_L, r.st_P
        k = ceil((t - t0 - L) / P - LOOP_EPS_NS)
        if k < 1:
            k = 1
        s = t0 + L + k * P
        resume = s - L - r.st_W
        c0 = (k - 1) * (r.st_W + L + r.st_E)
        if resume < t:
            c0 += t - resume
            resume = t
        self._hyb_correction(r, c0)
        r.in_stretch = False
        r.wakes += 1
        self.set_state(r.cpu_id, resume, self.act_poll)
        return s

    def _arm_period_end(self, r: Reactor) -> None:
        mode = r.idle_mode
        lag = r.entry_ns if mode == IRQ else (self.loop_ns(r) if mode == HYBRID else 0.0)
        r.period_ev = self.engine.call_at(r.free_at + lag, self._period_end, r)

    def _period_end(self, r: Reactor) -> None:
        """A busy period may have ended: enter the reactor's idle behaviour (or re-arm)."""
        now = self.engine.now
        mode = r.idle_mode
        lag = r.entry_ns if mode == IRQ else (self.loop_ns(r) if mode == HYBRID else 0.0)
        if r.free_at + lag > now + LOOP_EPS_NS:
            r.period_ev = self.engine.call_at(r.free_at + lag, self._period_end, r)
            return
        r.period_ev = None
        if r.state != AWAKE:
            return
        if mode == POLL:
            self._apply(r.cpu_id, self.act_poll)
        elif mode == IRQ:
            st = r.idle_gov.select(NO_TIMER_NS, 0)
            r.idle = True
            r.idle_state = st
            r.idle_from = now
            self._apply(r.cpu_id, -1 - st)
        else:
            self._begin_stretch(r, now, lag)

    def _begin_stretch(self, r: Reactor, now: float, L: float) -> None:
        """A hybrid-polling reactor found nothing in a poll: sleep, wake, poll, ... until work."""
        f = r.pcore.freq_ghz
        sleep = r.hyb_sleep(r)
        k = self.cfg.platform.kernel
        if r.hyb_kind == "kernel":  # nanosleep: syscall + hrtimer + switch out / timer IRQ + wakeup + switch in
            E = k.nanosleep_entry_cycles() / f
            W = k.nanosleep_wakeup_cycles() / f
        else:  # user-level timed wait (MWAITX): no kernel path
            E = W = 0.0
        st = r.sleep_cstate
        X = self.exit_ns[st]
        r.in_stretch = True
        r.st_t0 = now - L
        r.st_L = L
        r.st_E = E
        r.st_W = W
        r.st_P = L + E + sleep + X + W
        self._hyb_correction(r, E)
        self._apply(r.cpu_id, -1 - st)
