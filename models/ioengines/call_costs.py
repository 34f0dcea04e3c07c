"""The cost bundles of an asynchronous fio thread's system calls, each built once per distinct call
(fio 3.41 engines/io_uring.c fio_ioring_commit -> io_uring_enter, fio_ioring_getevents reading the
CQ ring; engines/libaio.c fio_libaio_commit -> io_submit, fio_libaio_getevents -> io_getevents):

* a submitting call for a batch: fio's preparation and the kernel's issue of each IO (the thread's
  per-IO parts: the kernel context's issue and the file system's), blk-mq and the NVMe command of
  each request after the plug, the system call and the enter's own work (the context's), less what
  the plug shares among its requests (SQ doorbells, sq_lock rounds, tag allocations);
* a reap of ``n`` events: fio's work on each, the context's reap (the getevents call, the CQ flushes
  of the task-work runs that posted them); with SQPOLL fio reads the CQEs the SQ thread posted, in
  user space.

:class:`CallCosts` is an :class:`~models.ioengines.async_io.AsyncThread`'s part (compiled: a batch's
call is looked up here per call). The thread keeps the memos in front of it, the last one-IO call
and the reaps by count, as native fields of its own.
"""

from __future__ import annotations

from typing import Callable

from models.ioengines.host import EngineHost
from models.os.block.request import Request
from models.os.costs.bundle import Cost
from models.os.fs.aio import AsyncContext


class CallCosts:
    """One thread's call bundles: ``per_io(op, nbytes)`` and ``per_request(nsubmit, plug_min)`` are
    the thread's parts of one IO and of one request, cycles by layer."""

    def __init__(
        self,
        host: EngineHost,
        engine: str,
        kctx: AsyncContext,
        sqpoll: bool,
        passthru: bool,
        plug_min: int,
        per_io: Callable[[str, int], dict],
        per_request: Callable[[int, int], dict],
    ) -> None:
        self.host = host
        self.k = host.kcosts
        self.engine = engine
        self.kctx = kctx
        self.sqpoll = sqpoll
        self.passthru = passthru
        self.plug_min = plug_min
        self.per_io = per_io
        self.per_request = per_request
        #: io_uring_enter's own work per call (the context's; none with an SQPOLL thread)
        self.call_cycles: float = kctx.enter_cycles
        self._by_key: dict[tuple, Cost] = {}

    def submit(self, ios: list[Request], nreq: int, with_syscall: bool, saved: tuple[int, int, int]) -> Cost:
        """The submitting call for ``ios`` that became ``nreq`` requests in the plug, which shares
        ``saved`` (SQ doorbells, sq_lock rounds, tag allocations: BlkMq.plug_savings) among them."""
        if len(ios) == 1:  # (no tuple of the batch built)
            one = ios[0]
            key: tuple = (one.op, one.nbytes, nreq, with_syscall, saved)
        else:
            key = (tuple((r.op, r.nbytes) for r in ios), nreq, with_syscall, saved)
        cost = self._by_key.get(key)
        if cost is None:
            cost = self._by_key[key] = self._make_submit(ios, nreq, with_syscall, saved)
        return cost

    def _make_submit(self, ios: list[Request], nreq: int, with_syscall: bool, saved: tuple[int, int, int]) -> Cost:
        k = self.k
        total: dict[str, float] = {}
        for r in ios:
            for layer, cyc in self.per_io(r.op, r.nbytes).items():
                total[layer] = total.get(layer, 0.0) + cyc
        for layer, cyc in self.per_request(len(ios), self.plug_min).items():
            total[layer] = total.get(layer, 0.0) + nreq * cyc
        if with_syscall:
            total["syscall"] = (
                total.get("syscall", 0.0) + k.syscall_entry_cycles + k.syscall_exit_cycles + self.call_cycles
            )
        if saved[0] or saved[1]:
            total["driver"] -= saved[0] * k.nvme_sq_doorbell_cycles + saved[1] * k.nvme_sq_lock_cycles
        if saved[2]:
            total["block"] -= saved[2] * k.blk_tag_batch_cycles
        return self.host.costs.get(f"{self.engine}_submit", actions=None, user_space=False, **total)

    def reap(self, n: int, syscall: bool, flushes: int, pi_cycles: float) -> Cost:
        """fio reaping ``n`` events (with a system call or not), and ``flushes`` posts of CQEs
        (io_uring: one per task-work run, however many completions it posts); ``pi_cycles``: fio's
        checks of the reads' protection information among them. (Built each time: the thread keeps
        what it built.)"""
        k = self.k
        if self.sqpoll:
            # SQPOLL: the SQ thread completed the requests and filled the CQEs (sq_complete_parts);
            # fio reads them from the shared ring in user space
            return self.host.costs.get(f"{self.engine}_reap", user=n * k.user_complete_cycles + pi_cycles)
        user = n * k.user_complete_cycles
        if self.passthru:  # fio's checks of the reads' protection information
            user += pi_cycles
        parts = {"user": user, **self.kctx.reap_parts(n, flushes, syscall)}
        return self.host.costs.get(f"{self.engine}_getevents", actions=None, user_space=False, **parts)
