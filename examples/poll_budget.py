"""poll-budget: poll for a time budget, then sleep until the interrupt.

Requests go to the CPU's interrupt-driven queue pair. The task polls for its request for at most
``budget_ns`` (``runner.poll_for``: whole iterations of the poll loop at the core's frequency).
A request that completes within the budget is reaped by the interrupt handler while the task
spins, and the task goes on with no context switch. A longer one falls back: the task sleeps
until the interrupt wakes it (one voluntary context switch), as a Linux 4.x task polling a queue
with interrupts would with a time limit on blk_poll."""

from pydantic import Field

from policies.completion.base import COMPLETION_POLICIES, CompletionPolicy
from simcore.config import Model


class PollBudgetParams(Model):
    budget_ns: float = Field(
        50_000,
        ge=0,
        description="how long to poll before sleeping, ns (default: the 50 us that"
        " Documentation/networking/ip-sysctl.rst recommends for net.core.busy_poll)",
    )


@COMPLETION_POLICIES.register("poll-budget")
class PollBudget(CompletionPolicy):
    polled = False  # interrupt-driven queues: the interrupt completes what the poll gave up on
    Params = PollBudgetParams  # set with --set queue.completion_params.budget_ns=...

    def __init__(self, host, queue):
        super().__init__(host, queue)
        self.sleeps = 0  # requests that outlived the budget (summary.hybrid_sleeps_per_io)

    def wait(self, runner, task, req, then) -> None:
        def fall_back(r):  # the budget is spent; r: the CPU the task polled on
            self.sleeps += 1
            req.slept = True
            req.waiter_sleeping = True  # the interrupt handler's completion wakes the task
            r.sleep(then, iowait=True)

        runner.poll_for(req.qp, req, self.params.budget_ns, then, fall_back)
