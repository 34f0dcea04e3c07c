"""What memory management reads of the host (:class:`MmHost`): the driver's view
(:class:`models.os.drivers.host.DriverHost`) with the NVMe driver itself (the queue a page's IO
goes to) and blk-mq (where the page cache's reads and writeback are issued)."""

from __future__ import annotations

from typing import Protocol

from models.os.block.blk_mq import BlkMq
from models.os.drivers.host import DriverHost
from models.os.drivers.nvme import NvmeDriver

__all__ = ["MmHost"]


class MmHost(DriverHost, Protocol):
    """What the page cache's IO paths, writeback's flushers and kswapd read of the host."""

    @property
    def driver(self) -> NvmeDriver:
        """the NVMe driver: the hardware queue of each CPU and device"""

    @property
    def blk(self) -> BlkMq:
        """blk-mq: where requests are issued"""
