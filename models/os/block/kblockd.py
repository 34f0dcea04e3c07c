"""The kblockd workqueue's worker on one CPU (``kworker/N:1H``): runs hardware queues
asynchronously for blk-mq.

In the 5.x kernels, a request submitted without a plug to a queue with an IO scheduler is inserted
into the scheduler by the submitting task (``blk_mq_sched_insert_request(rq, false, true, true)``:
at_head false, run_queue true, **async true**) and the hardware queue is then run from the kblockd
workqueue (``blk_mq_run_hw_queue(hctx, true)`` -> ``kblockd_mod_delayed_work_on(hctx cpu)``): the
submitter wakes a kworker on the queue's CPU, and that kworker dispatches (the scheduler's dispatch,
the NVMe command and its doorbell). kblockd is a ``WQ_HIGHPRI`` workqueue, so its workers run at
nice -20 and preempt the submitter at its next preemption point (the return to user space, or its
sleep): with its weight 88761 against nice 0's 1024, its virtual time advances 87 times slower and
CFS's wake-up preemption fires as soon as the submitter's virtual time is ahead by the wake-up
granularity scaled to the worker's weight (~46 us). With ``none`` (no scheduler) the request is
issued directly from the submitting context (``blk_mq_try_issue_directly``), and a plugged batch
(``blk_finish_plug`` -> ``blk_mq_flush_plug_list``) inserts its requests in one go and runs the
queue synchronously.

Costs: the submitter pays the wake-up (``wakeup_cycles`` + load and pressure accounting); the
worker pays a switch in and out (``kthread_switch_cycles`` between it and a task), per run
``kworker_run_cycles`` (process_one_work, blk_mq_run_work_fn) and per request the scheduler's
dispatch work and the NVMe command (``nvme_submit_cycles``); its sleep pays the dequeue accounting.
"""

from __future__ import annotations

from typing import Any, Protocol

from models.os.block.host import BlockHost
from models.os.sched.execution import Execution
from models.os.sched.task import SLEEPING, kernel_thread


class HwQueues(Protocol):
    """What a kblockd worker needs of blk-mq (which makes the workers: it names blk-mq by this)."""

    @property
    def dispatch_cycles(self) -> float:
        """the elevator's dispatch cycles per request"""

    def run_hctx(self, h: Any, runner: Execution) -> None:
        """Run hardware context ``h`` (dispatch what its elevator holds) on ``runner``'s CPU."""


class KblockdWorker:
    """The kblockd worker of one CPU (for blk-mq ``blk``). ``kick(h, n, runner)`` from the
    submitting code: ``n`` requests were inserted for hardware context ``h``; the worker runs it
    soon."""

    def __init__(self, host: BlockHost, blk: HwQueues, cpu: int):
        self.host = host
        self.blk = blk
        self.runner = host.runners[cpu]
        self.task = kernel_thread(host.all_tasks, f"kworker/{cpu}:1H", cpu, nice=-20)  # WQ_HIGHPRI: a nice -20 pool
        self.pending: dict = {}  # hardware context -> requests inserted for it since the last run
        self.runs = 0  # work items executed (hardware queue runs)
        self.dispatched = 0  # requests the runs dispatched
        self._costs: dict = {}

    def kick(self, h, n: int, waker) -> None:
        """``kblockd_mod_delayed_work_on``: queue a run of ``h`` (``n`` more requests), waking the
        worker from ``waker`` (the runner whose code submitted) if it sleeps."""
        self.pending[h] = self.pending.get(h, 0) + n
        if self.task.state == SLEEPING:
            self.task.resume = self._work
            waker.wake(self.task)

    def _cost(self, n: int):
        cost = self._costs.get(n)
        if cost is None:
            k = self.host.kcosts
            blk = self.blk
            parts = dict(block=k.kworker_run_cycles, driver=n * k.nvme_submit_cycles)
            if blk.dispatch_cycles:
                parts["iosched"] = n * blk.dispatch_cycles
            cost = self._costs[n] = self.host.costs.get("kblockd_run", **parts)
        return cost

    def _work(self) -> None:
        """Switched in: run every pending hardware queue (the work item's cost, then the
        doorbells), then sleep until kicked again."""
        if not self.pending:
            self.runner.sleep(self._work, iowait=False)
            return
        pending, self.pending = self.pending, {}
        n = sum(pending.values())
        self.runs += 1
        self.dispatched += n
        self.runner.run(self._cost(n), lambda: self._dispatch(pending))

    def _dispatch(self, pending: dict) -> None:
        blk = self.blk
        for h in pending:
            blk.run_hctx(h, self.runner)
        self._work()
