"""Open-loop replay of a block trace: each trace IO is submitted at its (scaled) timestamp,
whatever the completions of earlier IOs (a production trace records demand, not a closed loop).

Submitters
    ``replay.threads`` submitter threads (default: one per logical CPU), thread i on CPU
    ``i % cpus``. Each behaves like an io_uring application: when IOs are due it prepares their
    SQEs (user work per IO) and submits all IOs due at that instant with one io_uring_enter
    (per-IO io_uring issue + fs + blk-mq + NVMe submit, one plugged batch: adjacent IOs may merge,
    one doorbell) -- the cost helpers of :class:`~models.ioengines.async_io.AsyncThread`.
    Between submissions it waits in io_uring_enter(GETEVENTS) with a timeout at its next due IO:
    with interrupt completion (the default) it sleeps until an IRQ handler posts a completion or
    the hrtimer of the timeout fires; with ``replay.hipri`` (IORING_SETUP_IOPOLL, needs
    ``queue.io_poll=1``) it busy-polls its CPU's polled queues while IOs are in flight and sleeps
    on the timer only when none is. Completions are reaped from the CQ ring in user space
    (per-IO fio-like completion work); an IO's latency is reaped time minus submit time.

Arrivals
    The trace is a generator consumed lazily: records due at the same instant form one batch,
    and batches are assigned to threads in trace order (``replay.assign``: ``round-robin`` over
    threads, or ``volume``: all IOs of a trace volume on one thread). Only ``replay.lookahead``
    batches (default: one per thread) are read ahead of the submissions, so a thread knows its
    next due time when it goes to wait and the trace never sits in memory. A record earlier than
    the one before it (out-of-order trace) is due immediately after it.

Mapping
    Trace volumes map onto the platform's devices with
    :func:`~scenarios.inputs.traces.select.map_volumes`; offsets are kept, sizes are rounded up to 512 B.
    IOs larger than ``max_sectors_kb`` are split by blk-mq as in a run (one command per piece).

End
    When the trace (window) is exhausted, the threads stop submitting and reap what is in flight;
    the run ends when the last IO is reaped. Every IO read from the trace completes exactly once
    (checked: a second completion of a request raises).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from models.ioengines.async_io import AsyncThread, Waiter
from models.ioengines.host import EngineHost
from models.ioengines.job import FioJob
from models.ioengines.replay_settings import ReplaySettings
from models.ioengines.trace_io import TraceIO
from models.os.block.annotations import flag_batch
from models.os.block.request import Request
from models.os.costs.bundle import Cost
from simcore.engine import Call, pop_last
from simcore.errors import ConfigError
from simcore.grid import CountGrid
from simcore.stats import LatencyStats

if TYPE_CHECKING:
    from models.os.sched.runner import CpuRunner, Timer

SECTOR: Final = 512
#: drain limit: simulated time allowed after the last trace IO is due before a stuck run is an error
DRAIN_LIMIT_NS: Final = 10e9

_RUN: Final = "run"
_SLEEP: Final = "sleep"
_POLL: Final = "poll"


class DueBatch:
    """IOs of the trace due together on one thread: ``ios``, ``(TraceIO, device)`` pairs (kept as
    the trace reader's tuples: compiled, a typed tuple taken out of a list and put into another
    would be unpacked and packed again, one allocation per IO), due at ``due`` ns."""

    __slots__ = ("due", "ios")

    def __init__(self, due: float, ios: list[Any]) -> None:
        self.due = due
        self.ios = ios


class ReplayThread(AsyncThread):
    """One submitter thread of the replay (an io_uring application)."""

    def __init__(self, host: EngineHost, job: FioJob, index: int, cpu: int, replayer: "TraceReplayer") -> None:
        super().__init__(host, job, 0, index, cpu, float("inf"), host.rng.stream(f"replay.{index}"))
        self.replayer = replayer
        self.defer_tw = False  # the replayer's ring posts each completion as it comes (its own model)
        #: batches assigned to this thread, in due order (a list: a thread holds about one; the
        #: compiled code indexes a list natively, not a deque)
        self.pending: list[DueBatch] = []
        self.state = _RUN
        self.timer: Timer | None = None
        self.arrival_call: Call | None = None
        self._timer_slack_ns: float = replayer.settings.timer_slack_ns
        self._loop_cb = self._loop  # (bound once: continuations of every IO)
        self._woken_cb = self._woken
        self._timer_fired_cb = self._timer_fired
        self._enter_returned_cb = self._enter_returned
        self._on_done_cb = self._on_done
        self._block_cb = self._block
        self._start_poll_cb = self._start_poll
        self._in_call: list[Request] = []  # the IOs of the io_uring_enter under way (one at a time)
        self._in_call_reqs: list[Request] = []  # ... and the requests the plug made of them
        self.wait = Waiter()
        self.submitted = 0
        self.reaped = 0
        self.exited = False
        self._my_poll_qps: tuple = ()
        self._costs_by_shape = CountGrid()  # by IOs, requests and pages
        #: io_uring_enter(GETEVENTS) with a timeout (its hrtimer programmed), per wait: built once
        self._wait_enter_cost: Cost = host.costs.get(
            "replay_wait_enter", syscall=self.k.syscall_entry_cycles, actions={"hrtimer_program": 1}
        )

    # -- program -----------------------------------------------------------------------------
    def start(self) -> None:
        self.task.resume = self._loop
        self.runner.add_task(self.task)

    def assigned(self, due: float) -> None:
        """The replayer gave this thread a batch due at ``due`` (its first pending one)."""
        if len(self.pending) != 1:
            return  # an earlier batch already sets the timeout
        if self.state == _SLEEP and self.timer is None:
            self._arm_timer(due)
        elif self.state == _POLL and self.arrival_call is None:
            self._arm_arrival(due)

    def _loop(self) -> None:
        runner = self.runner
        now = runner.clock()
        if self.pending and self.pending[0].due <= now:
            self._submit(now)
        elif self.ring:
            self._reap()
        elif self.replayer.exhausted and not self.pending and self.inflight == 0:
            self.exited = True
            runner.exit_task()
            self.replayer.thread_finished()
        else:
            self._wait()

    def _submit(self, now: float) -> None:
        """Prepare and submit every IO due now, with one io_uring_enter."""
        runner = self.runner
        due_now: list[DueBatch] = []  # the batches due, in order
        count = 0
        pending = self.pending
        while pending and pending[0].due <= now:
            entry: DueBatch = pending.pop(0) if len(pending) > 1 else pop_last(pending)
            due_now.append(entry)
            count += len(entry.ios)
            self.replayer.taken()
        polled = self.iopoll
        user_ns = self._user_io_cycles / runner.freq
        reqs: list[Request] = []
        t = now
        lag = self.replayer.lag
        depth = self.inflight + len(self.ring) + count
        for entry in due_now:
            due = entry.due
            for pair in entry.ios:
                rec: TraceIO = pair[0]
                dev: int = pair[1]
                nbytes = -(-rec.nbytes // SECTOR) * SECTOR
                req = Request(self._ledger.new_id(), self.task, 0, rec.op, nbytes, rec.offset, runner.id, polled)
                req.qp = self._driver.queue_for(dev, runner.id, polled)
                req.done_cb = self._on_done_cb
                t += user_ns
                req.t_submit = t
                req.depth = depth
                lag.append(t - due)
                reqs.append(req)
        if len(lag) >= 4096:
            self.replayer.fold_lag()
        flag_batch(reqs, self._hint_flags)
        self.inflight += len(reqs)
        self.submitted += len(reqs)
        plugged: list[Request] = self._blk.plug(reqs)  # split and merged inside the call
        self._in_call, self._in_call_reqs = reqs, plugged
        runner.run(self._batch_cost(reqs, len(plugged)), self._enter_returned_cb)

    def _enter_returned(self) -> None:
        """io_uring_enter returned for its IOs (``_in_call``), which the plug made ``_in_call_reqs``."""
        ios, reqs = self._in_call, self._in_call_reqs
        t = self.runner.clock()
        for req in ios:  # fio's issue_time
            req.t_issued = t
        # dispatched as the call returns, or by the CPU's kblockd worker (which then preempts)
        self._blk.issue_batch(
            reqs,
            plugged=True,
            runner=self.runner,
            nsubmit=len(ios),
            plug_min=self.plug_min,
            own_plug=self.dio_batch_plug(),
        )
        self.runner.preemption_point(self._loop_cb)

    def _batch_cost(self, reqs: list[Request], nreq: int) -> Cost:
        """io_uring_enter submitting ``reqs`` (``nreq`` requests after the plug): the per-IO and
        per-request parts of AsyncThread plus one syscall. They depend only on the numbers of IOs,
        pages and requests, which key the cache."""
        pages = 0
        for r in reqs:
            pages += max(1, -(-r.nbytes // 4096))
        cost: Cost | None = self._costs_by_shape.get(len(reqs), nreq, pages)
        if cost is None:
            cost = self._submit_cost(reqs, nreq, with_syscall=True)
            self._costs_by_shape.put(len(reqs), nreq, pages, cost)
        return cost

    def _reap(self) -> None:
        """Reap every completion in the CQ ring (user space, no system call)."""
        runner = self.runner
        got, self.ring = self.ring, []
        cost = self._reap_cost(len(got), False, len(got))
        t = runner.clock() + cost.cycles / runner.freq
        ledger = self._ledger  # (a direct call each, not a bound method)
        for req in got:
            req.t_complete = t
            ledger.done(req)
        self.reaped += len(got)
        self.replayer.reaped(len(got))
        runner.run(cost, self._loop_cb)

    # -- waiting -----------------------------------------------------------------------------
    def _wait(self) -> None:
        runner = self.runner
        if self.iopoll and self.inflight:
            # io_uring_enter(GETEVENTS) with IOPOLL: spin on the polled queues until a completion
            # (or the next due IO: the application's loop checks its clock)
            w = self.wait
            w.done = False
            self.state = _POLL
            if self.pending:
                self._arm_arrival(self.pending[0].due)
            runner.run(self._enter_cost, self._start_poll_cb)
            return
        # io_uring_enter(GETEVENTS, min_complete=1) with a timeout at the next due IO, or (nothing
        # in flight) a plain timed sleep; an IRQ handler's completion or the hrtimer wakes it
        runner.run(self._wait_enter_cost, self._block_cb)

    def _start_poll(self) -> None:
        w = self.wait
        if any(qp.hw.cq for qp in self._my_poll_qps):
            w.done = True  # posted before the spin started: reap at once
        self.runner.poll(self._poll_qp(), w, self._after_poll)

    def _block(self) -> None:
        runner = self.runner
        now = runner.clock()
        if (
            self.ring
            or (self.pending and self.pending[0].due <= now)
            or (self.replayer.exhausted and not self.pending and self.inflight == 0)
        ):
            self._return_from_wait()
            return
        self.state = _SLEEP
        if self.pending:
            self._arm_timer(self.pending[0].due)
        runner.sleep(self._woken_cb, iowait=False)

    def _arm_timer(self, due: float) -> None:
        runner = self.runner
        delay = max(0.0, due - runner.clock()) + self._timer_slack_ns
        self.timer = runner.start_timer(delay, self._timer_fired_cb)

    def _timer_fired(self, runner) -> None:
        self.timer = None
        if self.state == _SLEEP:
            runner.wake(self.task)

    def _woken(self) -> None:
        if self.timer is not None:
            self.runner.cancel_timer(self.timer)
            self.timer = None
        self._return_from_wait()

    def _return_from_wait(self) -> None:
        self.state = _RUN
        self.runner.add_carry(self._exit_cost)
        self._loop()

    def _poll_qp(self):
        """The polled queue to spin on: the device of the oldest IO in flight is unknown to the
        ring, so the first device's; completions on the others nudge the loop (see
        :meth:`TraceReplayer._hook_polled_queues`)."""
        return self._my_poll_qps[0]

    def _arm_arrival(self, due: float) -> None:
        engine = self.host.engine
        self.arrival_call = engine.call_at(max(due, engine.now), self._arrival)

    def _arrival(self) -> None:
        self.arrival_call = None
        self.nudge()

    def nudge(self) -> None:
        """End the current IOPOLL spin at the end of its iteration (an IO is due, or a completion
        was posted on another of this CPU's polled queues)."""
        if self.state != _POLL:
            return
        w = self.wait
        w.done = True
        runner = self.runner
        if runner.current is not self.task:
            return  # preempted: it resumes, sees done and returns
        if runner.mode == "poll":
            runner.spin_notify(w)
        elif runner.mode == "irq":
            # an interrupt is running on top of the poll loop: look again when it has returned
            self.host.engine.call_in(100.0, self._renudge)

    def _renudge(self) -> None:
        if self.state == _POLL:
            self.nudge()

    def _after_poll(self) -> None:
        if self.arrival_call is not None:
            self.arrival_call.cancel()
            self.arrival_call = None
        runner = self.runner
        reap = self.host.driver.reap
        for qp in self._my_poll_qps:
            if qp.hw.cq:
                reap(runner, qp)  # io_do_iopoll walks every queue with requests of this ring
        self._return_from_wait()

    # -- completion ----------------------------------------------------------------------------
    def _on_done(self, runner: CpuRunner, req: Request) -> None:
        """Completion posted to the CQ ring (in the IRQ handler or the poll reap) on ``runner``."""
        req.done_cb = COMPLETED_TWICE
        self.inflight -= 1
        self.ring.append(req)
        if self.state == _SLEEP:
            self.state = _RUN
            runner.wake(self.task)
        elif self.state == _POLL:
            self.wait.done = True


def _completed_twice(runner, req) -> None:
    raise RuntimeError(f"replay: request {req.id} completed twice")


#: the callback a posted request keeps (a module constant: compiled code reads it from a C static,
#: not the module's dictionary, per IO)
COMPLETED_TWICE: Final = _completed_twice


class TraceReplayer:
    """Feeds trace batches to the submitter threads and ends the run when everything is reaped.

    ``records`` yields ``(TraceIO, device_index)`` with times already windowed and scaled (with
    ``batched``: lists of them, walked by index: no iterator step per record).
    """

    def __init__(
        self, host: EngineHost, job: FioJob, records: Iterator[Any], settings: ReplaySettings, *, batched: bool = False
    ) -> None:
        self.host = host
        self.settings = settings
        ncpu = len(host.runners)
        nthreads = settings.threads or ncpu
        if settings.hipri and not host.queue.io_poll:
            raise ConfigError("replay.hipri=1 polls for completions: it needs polled queues, set queue.io_poll=1")
        self.threads = [ReplayThread(host, job, i, i % ncpu, self) for i in range(nthreads)]
        if settings.hipri:
            ndev = len(host.devices)
            for th in self.threads:
                th._my_poll_qps = tuple(host.driver.queue_for(d, th.runner.id, True) for d in range(ndev))
            if ndev > 1:
                self._hook_polled_queues()
        self.lookahead = settings.lookahead or nthreads
        self._records = iter(records)
        self._batched = batched
        # (TraceIO, device) pairs, untyped: compiled, a typed tuple would be unpacked from the list
        # and packed again, one allocation per record
        self._batch: list[Any] = []  # (batched) the list being read, from _bi on
        self._bi = 0
        self._peek: Any = None
        self._last_due = 0.0
        self._rr = 0
        self._volume_thread: dict[str, int] = {}
        self._by_volume = settings.assign == "volume"
        self.ahead = 0  # batches assigned, not yet taken
        self.exhausted = False
        self.trace_ios = 0
        self.completed = 0
        self.finished_threads = 0
        self.last_due = 0.0
        self.lag: list[float] = []  # submit time - due time, per IO, ns: not yet folded into lag_stats
        self.lag_stats = LatencyStats()
        self.done_event = host.engine.env.event()
        self.end_ns: float | None = None

    def fold_lag(self) -> LatencyStats:
        """Fold the buffered issue lags into ``lag_stats`` (memory independent of the trace's
        length) and return it."""
        if len(self.lag):
            self.lag_stats.add(np.array(self.lag, dtype=np.float64))
            self.lag = []
        return self.lag_stats

    # -- feeding -------------------------------------------------------------------------------
    def _next_record(self) -> Any:
        """The next ``(TraceIO, device)`` pair, or None at the end of the trace."""
        if self._peek is not None:
            rec = self._peek
            self._peek = None
            return rec
        i = self._bi
        batch = self._batch
        if i < len(batch):
            self._bi = i + 1
            return batch[i]
        if not self._batched:
            return next(self._records, None)
        while True:  # the next non-empty list
            nxt: list[Any] | None = next(self._records, None)
            if nxt is None:
                return None
            if nxt:
                self._batch, self._bi = nxt, 1
                return nxt[0]

    def _thread_for(self, rec: TraceIO) -> int:
        if self._by_volume:
            idx = self._volume_thread.get(rec.volume)
            if idx is None:
                idx = self._volume_thread[rec.volume] = len(self._volume_thread) % len(self.threads)
            return idx
        return self._rr % len(self.threads)

    def refill(self) -> None:
        """Read batches until ``lookahead`` are assigned and not yet submitted (or the trace ends)."""
        while not self.exhausted and self.ahead < self.lookahead:
            first = self._next_record()
            if first is None:
                self._trace_done()
                return
            rec: TraceIO = first[0]
            due = max(float(rec.t_ns), self._last_due)
            tidx = self._thread_for(rec)
            ios = [first]
            while True:
                nxt = self._next_record()
                if nxt is None:
                    break
                nrec: TraceIO = nxt[0]
                if max(float(nrec.t_ns), due) != due or self._thread_for(nrec) != tidx:
                    self._peek = nxt
                    break
                ios.append(nxt)
            self._rr += 1
            self._last_due = due
            self.last_due = due
            self.trace_ios += len(ios)
            self.ahead += 1
            th = self.threads[tidx]
            th.pending.append(DueBatch(due, ios))
            th.assigned(due)

    def _trace_done(self) -> None:
        self.exhausted = True
        if self.trace_ios == 0:
            return
        engine = self.host.engine
        engine.call_at(max(engine.now, self.last_due + DRAIN_LIMIT_NS), self._drain_timeout)
        self._check_done()

    def taken(self) -> None:
        """A thread took a batch for submission."""
        self.ahead -= 1
        self.refill()

    def reaped(self, n: int) -> None:
        self.completed += n

    def thread_finished(self) -> None:
        self.finished_threads += 1
        self._check_done()

    def _check_done(self) -> None:
        if (
            self.exhausted
            and self.completed == self.trace_ios
            and self.end_ns is None
            and all(
                t.exited or (t.state == _SLEEP and not t.pending and not t.inflight and not t.ring)
                for t in self.threads
            )
        ):
            self.end_ns = self.host.engine.now
            self.done_event.succeed()

    def _drain_timeout(self) -> None:
        if self.end_ns is None:
            stuck = self.trace_ios - self.completed
            raise RuntimeError(
                f"replay: {stuck} of {self.trace_ios} IOs still not reaped "
                f"{DRAIN_LIMIT_NS / 1e9:g} s after the last one was due"
            )

    # -- polled queues of several devices ------------------------------------------------------
    def _hook_polled_queues(self) -> None:
        """With several devices a spinning thread watches one queue; a completion posted on
        another polled queue of its CPU ends the spin so that the loop reaps it."""
        by_cpu: dict[int, list[ReplayThread]] = {}
        for th in self.threads:
            by_cpu.setdefault(th.runner.id, []).append(th)
        for (_dev, cpu), qp in self.host.driver.poll_qps.items():
            hw = qp.hw  # the device's side of the pair, which calls its posting callback
            orig = hw.on_post
            threads = by_cpu.get(cpu, [])

            def posted(q, req, orig=orig, threads=threads, nq=qp):
                orig(q, req)
                for th in threads:
                    if th.state == _POLL and nq in th._my_poll_qps and th._poll_qp() is not nq:
                        th.nudge()

            hw.on_post = posted

    # -- run -------------------------------------------------------------------------------------
    def start(self) -> None:
        self.refill()
        for th in self.threads:
            th.start()
