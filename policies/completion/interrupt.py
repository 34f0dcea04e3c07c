"""Interrupt completion: the task sleeps (io_schedule); the queue's MSI-X handler wakes it."""

from models.os.completion import CompletionPolicy
from policies.completion.base import COMPLETION_POLICIES


@COMPLETION_POLICIES.register("interrupt")
class InterruptCompletion(CompletionPolicy):
    polled = False

    def wait(self, runner, task, req, then) -> None:
        if req.done:
            then()
            return
        req.waiter_sleeping = True
        runner.sleep(then, True)
