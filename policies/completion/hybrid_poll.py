"""Hybrid polling (io_poll_delay=0 adaptive or N>0 fixed us), as in Linux 4.10-6.3
(block/blk-mq.c: blk_mq_poll_hybrid_sleep, blk_mq_poll_nsecs, blk_mq_poll_stats_bkt).

Before polling, the task sleeps once per request on an exact hrtimer: adaptive mode sleeps
(mean + 1) / 2 ns of the request's bucket (direction + 2 x log2(sectors), 16 buckets; larger sizes
share the last), using the statistics of the last completed 100 ms window; a bucket with no samples
gives no sleep, so the first request does not sleep. ``hybrid_stats: rearm`` re-arms the window
whenever a request asks for a sleep and no window is active (5.x kernels); ``once`` collects a
single window, as the poll study describes. The sleep is io_schedule (iowait) with a timer
interrupt at expiry; then the task classic-polls.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Final, cast

from mypy_extensions import mypyc_attr

from models.host import Host
from models.os.block.completion import CompletionPolicy
from models.os.block.queue import QueueConfig
from models.os.sched.runner import CpuRunner
from policies.completion.base import COMPLETION_POLICIES
from simcore.engine import Engine

if TYPE_CHECKING:
    from models.os.block.request import Request
    from models.os.sched.runner import Timer
    from models.os.sched.task import Task

BKTS: Final = 16
WINDOW_NS: Final = 100_000_000.0


def stats_bucket(op: str, nbytes: int) -> int:
    """blk_mq_poll_stats_bkt: ddir + 2 * ilog2(sectors), clamped to the last pair (-1: no sectors)."""
    sectors = nbytes // 512
    if sectors <= 0:
        return -1
    ddir = 0 if op == "read" else 1
    lg = 0  # ilog2, in integers (a shift loop: native when compiled, exact at any size)
    while sectors > 1:
        sectors >>= 1
        lg += 1
    b = ddir + 2 * lg
    return ddir + BKTS - 2 if b >= BKTS else b


@mypyc_attr(allow_interpreted_subclasses=True)  # plug-ins may extend it
class HybridPollCompletion(CompletionPolicy):
    polled = True

    def __init__(self, host: Host, queue: QueueConfig) -> None:
        super().__init__(host, queue)
        self.fixed_ns: float = queue.io_poll_delay * 1000.0 if queue.io_poll_delay > 0 else 0.0
        self.rearm: bool = queue.hybrid_stats == "rearm"
        self.mean_ns: list[float | None] = [None] * BKTS  # q->poll_stat: committed means
        self._win_end: float | None = None  # end of the active collection window
        self._win_sum: list[float] = [0.0] * BKTS
        self._win_n: list[int] = [0] * BKTS
        self._windows_started = 0
        k = host.kcosts
        self.cost_arm = host.costs.get("hybrid_sleep_arm", block=k.hybrid_stats_cycles, actions={"hrtimer_program": 1})
        self.sleeps = 0
        self.slept_ns = 0.0
        self._engine: Engine = host.engine

    # -- statistics window (blk_stat callback) --------------------------------------------
    def _roll_window(self, now: float) -> None:
        if self._win_end is not None and now >= self._win_end:
            for b in range(BKTS):
                if self._win_n[b]:
                    self.mean_ns[b] = self._win_sum[b] / self._win_n[b]
                self._win_sum[b] = 0.0
                self._win_n[b] = 0
            self._win_end = None
        if self._win_end is None and (self.rearm or self._windows_started == 0):
            self._win_end = now + WINDOW_NS
            self._windows_started += 1

    def on_complete(self, req: Request) -> None:
        now: float = self._engine.now
        end = self._win_end
        if end is not None and now < end:
            b = stats_bucket(req.op, req.nbytes)
            if b >= 0:
                sums, counts = self._win_sum, self._win_n  # (compiled: unboxed arithmetic, not +=)
                sums[b] = sums[b] + (now - req.t_dispatch)
                counts[b] = counts[b] + 1

    def sleep_ns(self, req: Request) -> float:
        """blk_mq_poll_nsecs: how long to sleep before polling ``req`` (0 = no sleep)."""
        if self.fixed_ns:
            return self.fixed_ns
        self._roll_window(self._engine.now)
        b = stats_bucket(req.op, req.nbytes)
        mean = self.mean_ns[b] if b >= 0 else None
        return 0.0 if not mean else (mean + 1.0) / 2.0

    # -- the wait ------------------------------------------------------------------------------
    def wait(self, runner: CpuRunner, task: Task, req: Request, then: Callable[[], None]) -> None:
        ns = self.sleep_ns(req)
        if ns <= 0 or req.done:
            runner.poll(req.qp, req, then)
            return
        runner.add_carry(self.cost_arm)
        self._sleep(runner, task, req, ns, then)

    def _sleep(self, runner: CpuRunner, task: Task, req: Request, ns: float, then: Callable[[], None]) -> None:
        if req.done:
            runner.poll(req.qp, req, then)
            return
        self.sleeps += 1
        req.slept = True
        nap = _Nap(self, runner, task, req, then)
        req.t_sleep = nap.t0
        timer = nap.timer = runner.start_timer(ns, nap.expired)
        req.t_timer = timer.expiry
        req.waiter_sleeping = True
        runner.sleep(nap.resume, iowait=True)


class _Nap:
    """One hybrid sleep: its hrtimer's expiry wakes the task, which then polls its request."""

    __slots__ = ("policy", "runner", "task", "req", "then", "t0", "timer")

    def __init__(
        self, policy: HybridPollCompletion, runner: CpuRunner, task: Task, req: Request, then: Callable[[], None]
    ) -> None:
        self.policy = policy
        self.runner = runner
        self.task = task
        self.req = req
        self.then = then
        self.t0 = runner.clock()
        self.timer: Timer | None = None

    def expired(self, r: CpuRunner) -> None:
        """The hrtimer interrupt on ``r``: wake the task unless the completion already did."""
        req = self.req
        if req.waiter_sleeping:
            req.waiter_sleeping = False
            r.wake(self.task)

    def resume(self) -> None:
        """The task runs again (woken by the timer or the completion): poll for the request."""
        timer = self.timer
        assert timer is not None
        self.runner.cancel_timer(timer)
        req = self.req
        req.waiter_sleeping = False
        now = cast(CpuRunner, self.runner.runners[self.task.cpu])  # the CPU it woke up on (it may have moved)
        req.t_woken = now.clock()
        self.policy.slept_ns += req.t_woken - self.t0
        now.poll(req.qp, req, self.then)


# registered by a call, not a class decorator: the module is compiled with the hot path
# (simcore/compiled.py), and mypyc compiles a decorated class as a plain Python class
COMPLETION_POLICIES.register("hybrid-poll")(HybridPollCompletion)
