"""What fio's engines and the trace replayers read of the host (:class:`EngineHost`).

User space sits above the kernel and below the host's assembly (``models/host.py``), so it names
the host by this view: io_uring's (:class:`models.os.io_uring.host.UringHost`, which widens each
level of the kernel's: :mod:`models.os.sched.host`) with what only user space reads: the IO ledger
and the next IO's id, the run's random streams, the completion policies, a new ring's SQPOLL
thread, the page cache (buffered IO), the devices bound to vfio-pci (fio's SPDK engine) and, of
the platform, the memory copy rate and the SSDs' capacity. ``Host`` matches it structurally
(``tests/test_typed_models.py`` type-checks the assembly that hands it over)."""

from __future__ import annotations

from typing import Protocol

from models.os.block.completion import CompletionPolicy
from models.os.block.io_ledger import IoLedger
from models.os.drivers.vfio import Vfio
from models.os.io_uring.host import UringHost, UringPlatform
from models.os.io_uring.sqpoll import SqThread
from models.os.mm.filemap import Filemap
from models.os.mm.writeback import Writeback
from simcore.rng import RngStreams

__all__ = ["EngineHost", "EnginePlatform"]


class _CpuConfig(Protocol):
    @property
    def copy_bytes_per_cycle(self) -> float:
        """memcpy's bytes per cycle (a buffered IO's copy to or from the page cache)"""


class _SsdConfig(Protocol):
    @property
    def capacity_bytes(self) -> int | None:
        """each SSD's capacity (None: unknown)"""

    @property
    def nsid(self) -> int:
        """the namespace a job naming none reaches (models.ssd.namespaces)"""


class EnginePlatform(UringPlatform, Protocol):
    """What user space reads of the platform's configuration (through no import of the hardware
    models: ``[importlinter:contract:user-space-on-kernel]``)."""

    @property
    def cpu(self) -> _CpuConfig:
        """the CPU's configuration"""

    @property
    def ssd(self) -> _SsdConfig:
        """the SSDs' configuration"""


class EngineHost(UringHost, Protocol):
    """What a fio job thread, its helpers (offload workers, verify threads, io-wq workers) and the
    trace replayers read of the host."""

    @property
    def platform(self) -> EnginePlatform:
        """the platform's configuration"""

    @property
    def rng(self) -> RngStreams:
        """the run's named random streams"""

    @property
    def ledger(self) -> IoLedger:
        """completed IOs (count, statistics sink, kept records)"""

    #: the id the next submitted IO gets (an offload worker's IOs take theirs here)
    next_io_id: int

    @property
    def user_devices(self) -> Vfio:
        """the devices bound to vfio-pci for a user-space driver"""

    @property
    def filemap(self) -> Filemap | None:
        """buffered IO's page cache and its paths (None until :meth:`enable_pagecache`)"""

    @property
    def writeback(self) -> Writeback | None:
        """dirty throttling and the flusher threads (None with :attr:`filemap`)"""

    def enable_pagecache(self) -> None:
        """Bring the page cache, its paths and flushers (the first buffered job does)."""

    def policy(self, name: str) -> CompletionPolicy:
        """The completion policy ``name`` (instantiated on first use)."""

    def policy_name(self, hipri: bool, reaps_itself: bool = False) -> str:
        """The completion policy of a request by the kernel's rule."""

    def new_sq_thread(self, cpu: int | None) -> SqThread:
        """The SQPOLL thread of a new io_uring ring, bound to ``cpu`` (None: unbound)."""
