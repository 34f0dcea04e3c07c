"""Classic polling (RWF_HIPRI, io_poll=1, io_poll_delay=-1): spin in blk_poll until done."""

from models.os.completion import CompletionPolicy
from policies.completion.base import COMPLETION_POLICIES


@COMPLETION_POLICIES.register("classic-poll")
class ClassicPollCompletion(CompletionPolicy):
    polled = True

    def wait(self, runner, task, req, then) -> None:
        runner.poll(req.qp, req, then)
