"""What the block layer reads of the host (:class:`BlockHost`): the scheduler's view
(:class:`models.os.sched.host.SchedHost`) and the CPUs' runners, the SSDs and the block driver
below blk-mq, as the block layer knows it (a :class:`models.os.interfaces.BlockDriver`; blk-mq
narrows it to its :class:`~models.os.block.blk_mq.BlkMqOps`, which that module defines)."""

from __future__ import annotations

from typing import Protocol

from models.os.interfaces import BlockDriver
from models.os.sched.host import SchedHost
from models.os.sched.runner import CpuRunner
from models.ssd.device import NvmeDevice

__all__ = ["BlockHost"]


class BlockHost(SchedHost, Protocol):
    """What blk-mq, kblockd, the elevators, the completion policies and the zone report read of
    the host."""

    @property
    def runners(self) -> list[CpuRunner]:
        """every logical CPU's runner, by CPU id"""

    @property
    def devices(self) -> list[NvmeDevice]:
        """the SSDs, by index"""

    @property
    def driver(self) -> BlockDriver:
        """the block driver under blk-mq (the NVMe driver)"""
