"""Interrupt completion: the task sleeps (io_schedule); the queue's MSI-X handler wakes it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from mypy_extensions import mypyc_attr

from models.os.block.completion import CompletionPolicy
from policies.completion.base import COMPLETION_POLICIES

if TYPE_CHECKING:
    from models.os.block.request import Request
    from models.os.sched.runner import CpuRunner
    from models.os.sched.task import Task


@mypyc_attr(allow_interpreted_subclasses=True)  # plug-ins may extend it
class InterruptCompletion(CompletionPolicy):
    polled = False

    def wait(self, runner: CpuRunner, task: Task, req: Request, then: Callable[[], None]) -> None:
        if req.done:
            then()
            return
        req.waiter_sleeping = True
        runner.sleep(then, True)


# registered by a call, not a class decorator: the module is compiled with the hot path
# (simcore/compiled.py), and mypyc compiles a decorated class as a plain Python class
COMPLETION_POLICIES.register("interrupt")(InterruptCompletion)
