"""One block IO request as it travels through blk-mq, the NVMe driver and the device."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Final

from models.ssd.command import (
    PRACT,
    PRCHK_APP,
    PRCHK_GUARD,
    PRCHK_REF,
    VERIFY,
    WRITE_UNCOR,
    WRITE_ZEROES,
    ZONE_APPEND,
    NvmeCommand,
)
from models.ssd.irq_generation import BARRIER, URGENT

if TYPE_CHECKING:
    from models.os.interfaces import QueueView

READ: Final = "read"
WRITE: Final = "write"
#: ``Request.flags`` bits: the calibrated-interrupt annotations (cinterrupts) the kernel puts on a
#: request, or an application's RWF_URGENT / RWF_BARRIER (:mod:`models.os.block.annotations`).
#: The NVMe command carries them to the device, whose interrupt generation reads them: the bits
#: are the device's (:mod:`models.ssd.irq_generation`)
REQ_URGENT: Final = URGENT
REQ_BARRIER: Final = BARRIER
#: ``Request.prinfo`` bits: the NVMe command's protection information action and checks (a
#: passthrough command's cdw12 PRINFO, set by the application: fio's pi_act and pi_chk)
PI_ACTION: Final = PRACT
PI_CHECKS: Final = {"GUARD": PRCHK_GUARD, "APPTAG": PRCHK_APP, "REFTAG": PRCHK_REF}
#: ``Request.opcode`` by fio's io_uring_cmd write_mode: the NVM command a passthrough write is sent
#: as (0: Write)
WRITE_OPCODES: Final = {
    "write": 0,
    "uncor": WRITE_UNCOR,
    "zeroes": WRITE_ZEROES,
    "verify": VERIFY,
    "zone_append": ZONE_APPEND,
}


class Request(NvmeCommand):
    """A request: one bio, or, above the queue's ``max_sectors_kb``, one IO split into pieces that
    travel as requests of their own (:meth:`models.os.block.blk_mq.BlkMq.split`). Times in ns. The part the
    device sees (direction, size, flags, device timestamps) is its :class:`NvmeCommand`."""

    __slots__ = (
        "id",
        "task",
        "job",
        "cpu",
        "qp",
        "hipri",
        "done",
        "waiter_sleeping",
        "depth",
        "t_submit",
        "t_issued",
        "t_dispatch",
        "t_reaped",
        "t_complete",
        "slept",
        "t_sleep",
        "t_timer",
        "t_woken",
        "done_cb",
        "merged",
        "parent",
        "splits",
        "splits_left",
        "ioprio",
    )

    splits_left: int
    """A split IO: its pieces not finished yet (set only on one, by BlkMq.split)."""

    def __init__(self, rid: int, task: Any, job: int, op: str, nbytes: int, offset: int, cpu: int, hipri: bool):
        self.id = rid
        self.task = task
        self.job = job
        self.op = op
        self.nbytes = nbytes
        self.offset = offset
        self.cpu = cpu
        self.qp: QueueView | None = None  # the driver's queue it goes to (models.os.drivers.nvme)
        self.hipri = hipri
        self.done = False
        self.waiter_sleeping = False
        self.t_submit = self.t_dispatch = self.t_dev_start = self.t_dev_end = 0.0
        self.t_cqe = self.t_reaped = self.t_complete = 0.0
        self.depth = 1  # fio's queue depth when it was submitted (its own included)
        self.t_issued = 0.0  # async engines: the submitting call returned (fio's issue_time; slat ends)
        self.device_service_ns = 0.0
        self.slept = False
        # a hybrid poll's sleep (models: policies/completion/hybrid_poll.py), when ``slept``: its
        # hrtimer armed and the task going to sleep, the timer's expiry, the task running again
        self.t_sleep = self.t_timer = self.t_woken = 0.0
        self.flags = 0
        self.placement = 0  # FDP placement handle (NVMe passthrough writes of fio's fdp=1)
        self.status = 0  # the device's completion status (0: success)
        self.meta_bytes = 0  # metadata moved from a separate buffer (NVMe passthrough on a namespace with metadata)
        self.prinfo = 0  # protection information action and checks (models.ssd.command PRACT, PRCHK_*)
        self.opcode = 0  # a write's NVM command when not a Write (io_uring_cmd's write_mode; models.ssd.command)
        self.ioprio = 0  # IOPRIO_PRIO_VALUE(class, level) (models.os.block.elevator); 0: none (the task's)
        self.done_cb: Callable[[Any, Request], None] | None = (
            None  # async engines: called as done_cb(runner, req) at completion
        )
        self.merged: list[Request] | None = None  # requests merged into this one (they complete with it)
        self.sq_seq = -1  # position in its submission queue (strict Barrier ordering)
        self.parent: Request | None = None  # a split piece: the IO it belongs to (completes when all its pieces have)
        self.splits: list[Request] | None = (
            None  # an IO larger than max_sectors_kb: its pieces, one device command each
        )
        # splits_left (pieces not finished yet) is set only on a split IO, by BlkMq.split

    @property
    def own_bytes(self) -> int:
        """The bytes this IO asked for: a merge grows the target request's ``nbytes`` (the device
        transfers them as one command), and the merged IOs count their own bytes."""
        merged = self.merged
        return self.nbytes - sum(m.nbytes for m in merged) if merged else self.nbytes
