"""Closed-loop replay of a block trace: each of the trace's submitters (a stream: a blkparse pid, an
MSR host and disk, an fio log's job) becomes one synchronous thread, fio's psync/pvsync2 thread
(:class:`~models.ioengines.sync_io.SyncThread`), that issues its stream's next IO when the previous
one has returned, after the think time the trace recorded.

Why
    A trace from an application that blocks on its IO (a database's synchronous reads, fio with
    ``psync``) records when each IO was issued *because the previous one completed*. Issued at its
    recorded times by a timer-driven submitter (:mod:`models.ioengines.replay`, open loop), the IO
    finds the CPU in another state than the application's did: no thread asleep in a syscall, the
    CPU idle longer (a deeper C-state), the completion reaped by another loop. Here the completion
    reaches a thread asleep in its syscall (or polling in it, with ``replay.hipri``), through the
    same completion policies as ``stacksim run``'s sync engines (interrupt, classic or hybrid
    polling, :mod:`models.os.block.completion`), and the CPU is in the state the application left it in.

Think time
    The trace's gap between an IO's completion and its stream's next issue (blkparse C -> next Q,
    MSR and fio: issue + response time -> next issue) is the application's time between the two.
    Part of it is the path the model itself runs (the wake-up, the syscall's return, the user work
    before the next submission), so the thread aims its next submission at the *simulated*
    completion (the same stamp the trace's completion is: blkparse's C is the driver's completion,
    ``t_reaped``; MSR's and fio's the return to the application, ``t_complete``) plus the recorded
    gap, and waits only for what remains once it is back in user space:

    * nothing left (the recorded gap was the path, or less): it issues at once;
    * less than ``replay.think_sleep_min_ns``: it computes in user space (a busy loop on the clock,
      fio's ``thinktime_spin``), the CPU staying busy;
    * more: it sleeps in nanosleep until the IO is due (an hrtimer with ``replay.timer_slack_ns``),
      the CPU free to go idle, as an application waiting for its next request.

    A stream's first IO is due at its recorded time (the thread sleeps until then).

Reading
    The trace is read in arrival order. A thread that needs its stream's next IO reads until it
    appears, holding the other streams' IOs for their threads; a new stream's thread is started
    when its first IO is read, and an engine call at the next unread IO's time reads on, so a
    stream that starts late is found by its start time even when every thread is idle (a long
    idle gap costs one event). What is held is what the streams drifted apart, not the trace.

End
    When the trace is exhausted every thread returns from its last IO and exits; the run ends when
    the last one has. Every IO read completes exactly once.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import Any, Final

from models.ioengines.async_io import Waiter
from models.ioengines.host import EngineHost
from models.ioengines.job import FioJob
from models.ioengines.replay_settings import ReplaySettings
from models.ioengines.sync_io import SyncThread
from models.ioengines.trace_io import TraceIO
from models.os.block.request import Request

__all__ = ["ClosedReplayer", "ClosedThread", "ClosedRecord"]

SECTOR: Final = 512

ClosedRecord = tuple[TraceIO, int, str, float, int, Any]
"""``(io, device index, stream, done_ns, cpu, tag)``: an IO with its arrival (``io.t_ns``) and
completion (``done_ns``) in trace time, the stream that issued it, the CPU it was issued on (-1:
unknown) and the caller's ``tag`` (handed back with the request, :meth:`ClosedReplayer.submitted`)."""


class ClosedThread(SyncThread):
    """One stream of the trace as fio's synchronous thread (one outstanding IO, blocked in the
    syscall until it completes)."""

    def __init__(
        self, host: EngineHost, job: FioJob, index: int, cpu: int, stream: str, replayer: ClosedReplayer
    ) -> None:
        super().__init__(host, job, 0, index, cpu, float("inf"), host.rng.stream(f"replay.closed.{index}"))
        self.replayer = replayer
        self.stream = stream
        self.queue: deque[ClosedRecord] = deque()  # its IOs read from the trace, not yet issued
        self._held: ClosedRecord | None = None  # the IO it is thinking before (issued after the think)
        self._prev_done_trace = 0.0  # the trace's completion time of its previous IO
        self._prev_done_sim = 0.0  # ... and the simulated one (same stamp)
        self._first = True
        self._reaped_ref: bool = replayer.reaped_ref
        self._slack_ns: float = replayer.settings.timer_slack_ns
        self._sleep_min_ns: float = replayer.settings.think_sleep_min_ns
        self._think = Waiter()
        self._after_think_cb = self._after_think
        self.think_spins = 0
        self.think_sleeps = 0

    def start(self) -> None:
        self.task.resume = self._issue_first
        self.runner.add_task(self.task)

    def _issue_first(self) -> None:
        self._issue(False)

    # long: SyncThread._issue's completion stamping, then the trace's next IO and its think time
    def _issue(self, with_completion: bool) -> None:
        runner = self.runner
        now = runner.clock()
        t0 = now
        if with_completion:
            prev = self.req
            assert prev is not None
            t0 = now + self._complete_cycles / runner.freq
            prev.t_complete = t0
            self._prev_done_sim = prev.t_reaped if self._reaped_ref else t0
            self._ledger.done(prev)
            self.replayer.completed += 1
        rec = self.replayer.next_for(self)
        if rec is None:
            self.req = None
            self._exit(with_completion)
            return
        io = rec[0]
        if self._first:
            self._first = False
            due = float(io.t_ns)
        else:
            due = self._prev_done_sim + (io.t_ns - self._prev_done_trace)
        self._prev_done_trace = rec[3]
        user_ns = self._user_io_cycles / runner.freq
        start = due - user_ns  # the user work before the submission starts then
        wait = start - t0
        if wait <= 0.0:
            self._submit(rec, t0, with_completion)
            return
        self._held = rec
        if wait < self._sleep_min_ns:
            self.think_spins += 1
            self._spin_until(start, with_completion)
        else:
            self.think_sleeps += 1
            self._sleep_until(start, with_completion)

    def _submit(self, rec: ClosedRecord, t0: float, with_completion: bool) -> None:
        """Submit ``rec``'s IO: fio's user work from ``t0``, then the syscall's submission path."""
        io, dev = rec[0], rec[1]
        runner = self.runner
        op = io.op
        nbytes = -(-io.nbytes // SECTOR) * SECTOR
        self.issued_ios += 1
        self.issued_bytes += nbytes
        polled = self.policy[op].polled
        req = self._request(op, nbytes, io.offset)
        req.qp = self._driver.queue_for(dev, runner.id, polled)
        req.t_submit = t0 + self._user_io_cycles / runner.freq
        self.req = req
        self.replayer.submitted(req, rec[5])
        cost = self._costs.get((op, nbytes, with_completion)) or self._submit_cost(op, nbytes, with_completion)
        runner.run(cost, self._doorbell_cb)

    def _request(self, op: str, nbytes: int, offset: int) -> Request:
        req = Request(self._ledger.new_id(), self.task, self.job_idx, op, nbytes, offset, self.runner.id, self.hipri)
        req.flags = self.req_flags
        return req

    # -- think time ------------------------------------------------------------------------------
    def _return_cost(self, with_completion: bool):
        k = self.k
        if with_completion:
            return self.host.costs.get("sync_return", fs=k.fs_complete_cycles, syscall=k.syscall_exit_cycles)
        return None

    def _spin_until(self, t: float, with_completion: bool) -> None:
        """Compute in user space until ``t`` (fio's thinktime_spin: a loop on the clock)."""
        w = self._think
        w.done = False
        engine = self.host.engine

        def due() -> None:
            w.done = True
            self.runner.spin_notify(w)

        def spin() -> None:
            engine.call_at(max(t, engine.now), due)
            self.runner.spin(w, self._after_think_cb)

        cost = self._return_cost(with_completion)
        if cost is None:
            spin()
        else:
            self.runner.run(cost, spin)

    def _sleep_until(self, t: float, with_completion: bool) -> None:
        """nanosleep until ``t`` (after the previous IO's return): the CPU may go idle meanwhile."""
        slack = self._slack_ns
        self._nanosleep(with_completion, lambda: max(0.0, t - self.runner.clock()) + slack, self._after_think_cb)

    def _after_think(self) -> None:
        rec = self._held
        assert rec is not None
        self._held = None
        self._submit(rec, self.runner.clock(), False)

    # -- end -------------------------------------------------------------------------------------
    def _exit(self, with_completion: bool) -> None:
        runner = self.runner
        if with_completion:
            k = self.k
            runner.run(
                self.host.costs.get("sync_exit", fs=k.fs_complete_cycles, syscall=k.syscall_exit_cycles), self._gone
            )
        else:
            self._gone()

    def _gone(self) -> None:
        self.runner.exit_task()
        self.replayer.thread_finished()


class ClosedReplayer:
    """Reads the trace, makes a :class:`ClosedThread` per stream, and ends the run when every one
    has exited.

    ``records`` yields :data:`ClosedRecord` tuples in arrival order. ``reaped_ref``: the trace's
    completions are the driver's (blkparse C: the thread aims at ``t_reaped`` + the gap), else the
    application's (``t_complete``). ``on_submit(req, tag)``, if given, is called as each IO is
    submitted.
    """

    def __init__(
        self,
        host: EngineHost,
        job: FioJob,
        records: Iterator[ClosedRecord],
        settings: ReplaySettings,
        *,
        reaped_ref: bool = False,
        on_submit=None,
    ) -> None:
        self.host = host
        self.job = job
        self.settings = settings
        self.reaped_ref = reaped_ref
        self.on_submit = on_submit
        self._records = iter(records)
        self._peek: ClosedRecord | None = None
        self.threads: list[ClosedThread] = []
        self._by_stream: dict[str, ClosedThread] = {}
        self._read_call = None
        self.exhausted = False
        self.trace_ios = 0
        self.completed = 0
        self.finished_threads = 0
        self.last_due = 0.0
        self.done_event = host.engine.env.event()
        self.end_ns: float | None = None

    # -- reading ---------------------------------------------------------------------------------
    def _peek_record(self) -> ClosedRecord | None:
        if self._peek is None and not self.exhausted:
            self._peek = next(self._records, None)
            if self._peek is None:
                self.exhausted = True
                self._check_done()
        return self._peek

    def _read_one(self) -> bool:
        """Read the next record into its stream's queue (a new stream: a new thread); False at the end."""
        rec = self._peek_record()
        if rec is None:
            return False
        self._peek = None
        self.trace_ios += 1
        if rec[0].t_ns > self.last_due:
            self.last_due = float(rec[0].t_ns)
        th = self._by_stream.get(rec[2])
        if th is None:
            th = self._new_thread(rec[2], rec[4])
            self.host.engine.call_in(0.0, th.start)
        th.queue.append(rec)
        return True

    def _new_thread(self, stream: str, cpu: int) -> ClosedThread:
        ncpu = len(self.host.runners)
        index = len(self.threads)
        th = ClosedThread(self.host, self.job, index, (cpu if cpu >= 0 else index) % ncpu, stream, self)
        self.threads.append(th)
        self._by_stream[stream] = th
        return th

    def next_for(self, th: ClosedThread) -> ClosedRecord | None:
        """``th``'s next IO, reading the trace until it appears (None: its stream has ended)."""
        q = th.queue
        while not q and self._read_one():
            pass
        self._arm_reader()
        return q.popleft() if q else None

    def _arm_reader(self) -> None:
        """Read on at the time of the first unread IO, so that a new stream is started on time."""
        if self._read_call is not None:
            return
        rec = self._peek_record()
        if rec is not None:
            engine = self.host.engine
            self._read_call = engine.call_at(max(float(rec[0].t_ns), engine.now), self._read_due)

    def _read_due(self) -> None:
        """Read the IOs due by now (threads reading ahead may have taken the one this was armed for)."""
        self._read_call = None
        now = self.host.engine.now
        nxt = self._peek_record()
        while nxt is not None and nxt[0].t_ns <= now:
            self._read_one()
            nxt = self._peek_record()
        self._arm_reader()

    # -- bookkeeping -----------------------------------------------------------------------------
    def submitted(self, req, tag) -> None:
        if self.on_submit is not None:
            self.on_submit(req, tag)

    def thread_finished(self) -> None:
        self.finished_threads += 1
        self._check_done()

    def _check_done(self) -> None:
        if (
            self.exhausted
            and self.end_ns is None
            and self.finished_threads == len(self.threads)
            and self.completed == self.trace_ios
        ):
            self.end_ns = self.host.engine.now
            self.done_event.succeed()

    def start(self) -> None:
        self._read_one()
        self._arm_reader()
