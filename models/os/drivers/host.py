"""What the NVMe driver reads of the host (:class:`DriverHost`): the block layer's view
(:class:`models.os.block.host.BlockHost`), the block queue's configuration and, of the platform,
the NUMA node of each SSD (:class:`DriverPlatform`)."""

from __future__ import annotations

from typing import Protocol

from models.os.block.host import BlockHost
from models.os.block.queue import QueueConfig

__all__ = ["DriverHost", "DriverPlatform"]


class DriverPlatform(Protocol):
    """What the driver reads of the platform's configuration (``models/platform.py``)."""

    def ssd_node(self, index: int) -> int:
        """The NUMA node SSD ``index`` is attached to (its PCIe root port's)."""


class DriverHost(BlockHost, Protocol):
    """What the NVMe driver reads of the host."""

    @property
    def queue(self) -> QueueConfig:
        """the block queue's configuration (polled queues, nr_requests, completion)"""

    @property
    def platform(self) -> DriverPlatform:
        """the platform's configuration"""
