"""The mechanisms a core-scheduling policy (``policies/core_scheduling``) decides through: a
thread's placement and its move to another reactor (installed at the destination's next event
check, after its wake-up if it sleeps), a reactor's idle behaviour, its sleep, and a core's
frequency.

A part of :class:`models.server.target.Server` (a base class of it: the methods read the fields
its ``__init__`` sets).
"""

from __future__ import annotations

from math import ceil

from models.cpu.cpuidle import NO_TIMER_NS
from models.server.reactor import ASLEEP, AWAKE, HYBRID, IRQ, LOOP_EPS_NS, WAKING, LThread, Reactor
from simcore.tracing import CPU_PID


class PolicyMechanisms:
    """The mechanisms for policies of a :class:`~models.server.target.Server`: :meth:`place`,
    :meth:`set_mode`, :meth:`move`, :meth:`sleep`, :meth:`request_freq`."""

    def place(self, th: LThread, r: Reactor) -> None:
        """Initial placement (at setup)."""
        if th.reactor is not None:
            th.reactor.threads.remove(th)
            th.reactor.loop_cycles -= th.poll_cycles
        th.reactor = r
        r.threads.append(th)
        r.loop_cycles += th.poll_cycles

    def set_mode(
        self, r: Reactor, idle_mode: int, hyb_kind: str = "kernel", hyb_sleep=None, cstate: int | None = None
    ) -> None:
        """Make ``r`` an awake reactor with the given idle behaviour (at setup, or when it has no work)."""
        r.idle_mode = idle_mode
        r.hyb_kind = hyb_kind
        if hyb_sleep is not None:
            r.hyb_sleep = hyb_sleep
        if cstate is not None:
            r.sleep_cstate = cstate
        r.state = AWAKE
        now = self.engine.now
        r.t_mode = now
        if idle_mode == IRQ:
            st = r.idle_gov.select(NO_TIMER_NS, 0)
            r.idle, r.idle_state, r.idle_from = True, st, now
            self._apply(r.cpu_id, -1 - st)
        else:
            self._apply(r.cpu_id, self.act_poll)

    def move(self, th: LThread, dest: Reactor, delay_ns: float = 0.0) -> bool:
        """Move ``th`` to ``dest`` through dest's event queue: it leaves its ring now, is posted after
        ``delay_ns`` + the move cost, and is installed when ``dest`` next checks its events (next loop
        boundary; after the wake-up if ``dest`` sleeps). Work arriving meanwhile waits for it."""
        src = th.reactor
        if src is dest or src is None:
            return False
        now = self.engine.now
        src.threads.remove(th)
        src.loop_cycles -= th.poll_cycles
        if th.queued:
            src.backlog.remove(th)
            th.queued = False
        if src.free_at <= now:
            src.t_mode = now
        th.reactor = None
        th.moves += 1
        if self.tracer is not None:
            self.tracer.instant(CPU_PID, src.cpu_id, f"thread {th.idx} -> cpu{dest.cpu_id}", now)
        t_post = now + delay_ns + self.move_ns
        t_inst = self._install_time(dest, t_post)
        dest.incoming += 1
        self.engine.call_at(t_inst, self._install, th, dest)
        self.migrations += 1
        return True

    def _install_time(self, r: Reactor, t: float) -> float:
        st = r.state
        if st == ASLEEP:
            if r.sleep_ev is not None:
                r.sleep_ev.cancel()
                r.sleep_ev = None
            x = self.exit_ns[r.sleep_cstate]
            r.state = WAKING
            r.wake_end = t + (r.wake_ns if r.wake_ns > x else x)
            r.wakes += 1
            self.set_state(r.cpu_id, t + x, self.act_poll)
            self.wake_log.append((t, r.wake_end, x))
            return r.wake_end
        if st == WAKING:
            return r.wake_end if r.wake_end > t else t
        if r.sleep_ev is not None:  # about to sleep: stays awake
            r.sleep_ev.cancel()
            r.sleep_ev = None
        if r.free_at > t:
            return r.free_at
        if r.idle_mode == HYBRID:
            if not r.in_stretch:
                t1 = (r.t_mode if r.t_mode > r.free_at else r.free_at) + self.loop_ns(r)
                return t1 if t1 > t else t
            k = ceil((t - r.st_t0 - r.st_L) / r.st_P - LOOP_EPS_NS)
            return r.st_t0 + r.st_L + max(k, 1) * r.st_P
        t0 = r.t_mode if r.t_mode > r.free_at else r.free_at
        L = self.loop_ns(r)
        if t <= t0 or L <= 0:
            return t0 if t0 > t else t
        return t0 + ceil((t - t0) / L - LOOP_EPS_NS) * L

    def _install(self, th: LThread, r: Reactor) -> None:
        now = self.engine.now
        r.incoming -= 1
        if r.state == WAKING:
            r.state = AWAKE
            r.t_mode = now
        elif r.free_at <= now and not r.in_stretch:
            r.t_mode = now
        th.reactor = r
        r.threads.append(th)
        r.loop_cycles += th.poll_cycles
        limit = now + self.h_hi
        while (th.pending or th.pending_cq) and r.free_at < limit:
            self._take_batch(r, th, now, limit, self.batch)
        if th.pending or th.pending_cq:
            self._backlog(r, th, now)
        hook = getattr(self.policy, "on_install", None)
        if hook is not None:
            hook(th, r)

    def sleep(self, r: Reactor, cstate: int, wake_ns: float = 0.0) -> bool:
        """Put ``r`` (no threads) to sleep in ``cstate`` once its committed work is done; waking it
        will take ``max(wake_ns, exit latency)``."""
        if r.threads or r.incoming:
            return False
        r.sleep_cstate = cstate
        r.wake_ns = wake_ns
        if r.state != AWAKE or r.sleep_ev is not None:
            return False
        now = self.engine.now
        if r.free_at > now:
            r.sleep_ev = self.engine.call_at(r.free_at, self._do_sleep, r)
        else:
            self._do_sleep(r)
        return True

    def _do_sleep(self, r: Reactor) -> None:
        r.sleep_ev = None
        if r.threads or r.incoming or r.state != AWAKE:
            return
        now = self.engine.now
        if r.free_at > now:
            r.sleep_ev = self.engine.call_at(r.free_at, self._do_sleep, r)
            return
        r.state = ASLEEP
        r.in_stretch = False
        r.idle = False
        self._apply(r.cpu_id, -1 - r.sleep_cstate)

    def request_freq(self, core_index: int, ghz: float) -> bool:
        """Ask physical core ``core_index`` (both siblings) for ``ghz`` (P-state transition latency
        applies); True when that is a change of its target."""
        core = self.pkg.cores[core_index]
        cfg = self.ccfg
        ghz = min(max(ghz, cfg.min_freq_ghz), cfg.top_freq_ghz)
        if ghz != core.target_ghz:
            core.request_freq(self.engine.now, ghz)
            return True
        return False
