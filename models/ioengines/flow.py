"""fio's token-based flow control between jobs (``flow``, ``flow_id``, ``flow_sleep``), as fio 3.41
does it (flow.c flow_threshold_exceeded; HOWTO ``flow``):

* the threads of the jobs with the same ``flow_id`` (default 0, the global flow) share a counter
  (starting at 1) and the sum of their weights (``flow`` of each running thread: added when it
  starts, removed when it exits);
* before each IO a thread compares its own count with the shared one: while
  ``own / shared > weight / total weight`` it may not issue; otherwise both counters go up by one
  and the IO goes. So the jobs' IO counts keep the ratio of their weights;
* a thread held back spins in fio's loop (``flow_sleep=0``: the CPU stays busy, queued completions
  are not reaped meanwhile) or, with ``flow_sleep`` us, first waits for its IOs in flight, then
  sleeps that long and checks again.

A spinning thread is released the moment another thread's IO (or exit) changes the counters so
that it may go, which is when fio's next loop iteration would see it.
"""

from __future__ import annotations

from typing import Callable


class Flow:
    """The shared state of one ``flow_id``."""

    __slots__ = ("counter", "total_weight", "waiting")

    def __init__(self):
        self.counter = 1  # fio's flow_get: flow_counter starts at 1
        self.total_weight = 0
        self.waiting: list[FlowMember] = []

    def _changed(self) -> None:
        """The counters or weights changed: release the held-back threads that may now go."""
        if not self.waiting:
            return
        still = []
        for m in self.waiting:
            if m.may_go():
                m.release()
            else:
                still.append(m)
        self.waiting = still


class FlowMember:
    """One thread's share of a :class:`Flow` (its ``flow`` weight; ``sleep_ns``: its ``flow_sleep``,
    0 for a held-back thread that spins). ``on_release`` is called when a held-back thread may go
    again (its owner then checks :meth:`take` once more)."""

    __slots__ = ("flow", "weight", "sleep_ns", "count", "joined", "on_release", "done")

    def __init__(self, flow: Flow, weight: int, sleep_ns: float = 0.0):
        self.flow = flow
        self.weight = weight
        self.sleep_ns = float(sleep_ns)
        self.count = 0
        self.joined = False
        self.on_release = None
        self.done = False  # the spin waiter's flag (models.os.sched.runner CpuRunner.spin)

    def join(self) -> None:
        """The thread starts (fio's flow_init_job)."""
        if not self.joined:
            self.joined = True
            self.flow.total_weight += self.weight
            self.flow._changed()

    def leave(self) -> None:
        """The thread exits (fio's flow_exit_job): its weight leaves the flow."""
        if self.joined:
            self.joined = False
            self.flow.total_weight -= self.weight
            if self in self.flow.waiting:
                self.flow.waiting.remove(self)
            self.flow._changed()

    def may_go(self) -> bool:
        f = self.flow
        return f.total_weight <= 0 or self.count * f.total_weight <= self.weight * f.counter

    def take(self) -> bool:
        """fio's flow_threshold_exceeded before one IO: True (and both counters up) when the IO
        may go; False when the thread is held back."""
        if not self.may_go():
            return False
        self.count += 1
        self.flow.counter += 1
        self.flow._changed()
        return True

    def hold(self, on_release) -> None:
        """Wait until :meth:`may_go`: ``on_release()`` is called then."""
        self.done = False
        self.on_release = on_release
        self.flow.waiting.append(self)

    def spin(self, runner, runner_now: Callable, then: Callable[[], None]) -> None:
        """The held-back thread spins in fio's loop on ``runner`` until the flow lets it go, then
        ``then()``; the release notifies ``runner_now()``, the thread's CPU then (it may have moved)."""
        self.hold(lambda: runner_now().spin_notify(self))
        runner.spin(self, then)

    def release(self) -> None:
        self.done = True
        cb, self.on_release = self.on_release, None
        if cb is not None:
            cb()
