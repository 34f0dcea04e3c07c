"""A fio job thread's blocking block-device ioctls: a trim (fio 3.41 io_u.c do_io_u_trim ->
os/os-linux.h os_trim: the BLKDISCARD ioctl) and zonemode=zbd's zone reset or finish (zbd.c
zbd_reset_zone / zbd_finish_zone: BLKRESETZONE, BLKFINISHZONE).

The thread enters the ioctl (fio's work on the io_u, the system call, the kernel's discard set-up
``blk_ioctl_discard`` -- a zone ioctl's ``blkdev_zone_mgmt`` builds and waits for one bio the same
way: priced alike, an estimate), the request goes through blk-mq to the device as an NVMe Dataset
Management (or Zone Management Send) command, the thread sleeps until its interrupt
(``submit_bio_wait``: the trim completion policy never polls), and the call returns. On a regular
file the BLKDISCARD ioctl fails at once: ext4_ioctl / xfs_file_ioctl return -ENOTTY before any work
(:meth:`TrimIoctls.enotty_cost`).

:class:`TrimIoctls` is a thread's part (the synchronous engines issue zone ioctls with it; libaio and
io_uring issue their trims and zone ioctls with it, fio's engines having no asynchronous discard).
A trim of a synchronous engine that is not a zone ioctl runs as its other IOs do (only its bundle,
:meth:`TrimIoctls.cost`, is this part's).
"""

from __future__ import annotations

from typing import Callable, Protocol

from models.ioengines.host import EngineHost
from models.os.block.blk_mq import BlkMq
from models.os.block.completion import CompletionPolicy
from models.os.block.io_ledger import IoLedger
from models.os.block.request import Request
from models.os.costs.bundle import Cost
from models.os.costs.tables import KernelCosts
from models.os.drivers.nvme import NvmeDriver
from models.os.sched.runner import CpuRunner
from models.os.sched.task import Task


class IoctlThread(Protocol):
    """What the part reads of its thread (read at each step: the thread may move between CPUs)."""

    host: EngineHost
    k: KernelCosts
    runner: CpuRunner
    task: Task
    job_idx: int
    dev: int
    req_flags: int
    policy: dict[str, CompletionPolicy]
    _ledger: IoLedger
    _blk: BlkMq
    _driver: NvmeDriver

    def per_request_parts(self, nsubmit: int = 1, plug_min: int = 3, own_plug: int = 0) -> dict: ...

    def dio_plug(self, op: str, nbytes: int) -> int: ...


#: what the thread is told when its ioctl returned: (the request, when fio has it back, the bundle
#: of the return that the thread then runs)
Returned = Callable[[Request, float, Cost], None]


class TrimIoctls:
    """One thread's trim and zone ioctls: their bundles (built once each), requests and runs."""

    def __init__(self, th: IoctlThread) -> None:
        self.th = th
        self._costs: dict[tuple[str, int, bool], Cost] = {}
        self._req: Request | None = None  # the ioctl under way (one at a time)
        self._ret = ""
        self._returned: Returned | None = None

    def cost(self, nbytes: int, with_completion: bool, op: str = "trim") -> Cost:
        """The ioctl's submitting segment: fio's user work, the syscall, the discard set-up, blk-mq
        and the NVMe command (Dataset Management; a zone op's Zone Management Send is priced as
        it), after the previous IO's return when there is one (``with_completion``)."""
        key = (op, nbytes, with_completion)
        cost = self._costs.get(key)
        if cost is not None:
            return cost
        th = self.th
        k = th.k
        parts = dict(
            user=k.user_io_cycles,
            syscall=k.syscall_entry_cycles,
            block=k.discard_ioctl_cycles,
            driver=k.nvme_dsm_cycles,
        )
        for layer, cyc in th.per_request_parts(own_plug=th.dio_plug(op, nbytes)).items():
            parts[layer] = parts.get(layer, 0.0) + cyc
        if with_completion:
            parts["fs"] = k.fs_complete_cycles
            parts["syscall"] += k.syscall_exit_cycles
        cost = self._costs[key] = th.host.costs.get(
            f"{op}_{'complete_' if with_completion else ''}submit", actions=None, user_space=False, **parts
        )
        return cost

    def enotty_cost(self) -> Cost:
        """BLKDISCARD on a regular file: fio's work, the call and the file system's refusal."""
        k = self.th.k
        return self.th.host.costs.get(
            "trim_ioctl_enotty",
            user=k.user_io_cycles,
            syscall=k.syscall_entry_cycles + k.syscall_exit_cycles,
            fs=k.ioctl_enotty_cycles,
        )

    def zone_request(self, op: str, nbytes: int, off: int) -> Request:
        """A zone reset or finish: the BLKRESETZONE / BLKFINISHZONE ioctl's request (no data; a
        trim of zonemode=zbd, ``nbytes`` > 0, is one of fio's IOs, the others are not)."""
        th = self.th
        rid = th._ledger.new_id() if nbytes > 0 else -1
        req = Request(rid, th.task, th.job_idx, op, 0, off, th.runner.id, False)
        req.qp = th._driver.queue_for(th.dev, th.runner.id, False)
        req.flags = th.req_flags
        return req

    def run(self, req: Request, cost: Cost, ret: str, returned: Returned) -> None:
        """Run the ioctl of ``req``: its submitting segment ``cost``, the thread asleep until the
        interrupt, the return (bundle ``ret``); then ``returned(req, t, return bundle)``."""
        self._req, self._ret, self._returned = req, ret, returned
        self.th.runner.run(cost, self._doorbell)

    def _doorbell(self) -> None:
        th = self.th
        req = self._req
        assert req is not None
        th._blk.issue(req, th.runner, th.dio_plug(req.op, req.nbytes))
        th.policy["trim"].wait(th.runner, th.task, req, self._back)

    def _back(self) -> None:
        th = self.th
        req, returned = self._req, self._returned
        assert req is not None and returned is not None
        self._req = self._returned = None
        k = th.k
        runner = th.runner
        cost = th.host.costs.get(self._ret, fs=k.fs_complete_cycles, syscall=k.syscall_exit_cycles)
        returned(req, runner.clock() + cost.cycles / runner.freq, cost)
