"""What io_uring reads of the host (:class:`UringHost`): memory management's view
(:class:`models.os.mm.host.MmHost`), the scheduler-wide balancer (an unbound SQPOLL thread may
move), the SQPOLL threads so far (a new one's name counts them), writeback (io-wq's buffered
writes) and, of the platform, the scheduler's configuration (:class:`UringPlatform`)."""

from __future__ import annotations

from typing import Protocol, Sequence

from models.os.drivers.host import DriverPlatform
from models.os.mm.host import MmHost
from models.os.mm.writeback import Writeback
from models.os.sched.balance import LoadBalancer
from models.os.sched.config import SchedConfig

__all__ = ["UringHost", "UringPlatform"]


class UringPlatform(DriverPlatform, Protocol):
    """What io_uring reads of the platform's configuration."""

    @property
    def sched(self) -> SchedConfig:
        """the scheduler's configuration (task placement)"""


class UringHost(MmHost, Protocol):
    """What an io_uring SQPOLL thread reads of the host."""

    @property
    def balancer(self) -> LoadBalancer:
        """the scheduler-wide load balancer"""

    @property
    def sq_threads(self) -> Sequence[object]:
        """the SQPOLL threads created so far"""

    @property
    def writeback(self) -> Writeback | None:
        """the page cache's writeback (None: no page cache); io-wq's buffered writes dirty pages"""

    @property
    def platform(self) -> UringPlatform:
        """the platform's configuration"""
