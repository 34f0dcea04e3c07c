"""vfio-pci: the kernel hands an NVMe controller to one user-space process, whose own driver (SPDK's)
then drives it.

SPDK's set-up (``scripts/setup.sh``) unbinds the controllers from the kernel's nvme driver and binds
them to vfio-pci (or uio_pci_generic); the process maps the controller's registers (BAR0) into its
address space and registers its DMA memory (hugepages) with the IOMMU once, at start. From then on
the kernel is not on the IO path: the process creates its own I/O queue pairs (Create I/O CQ / SQ
on the admin queue, the CQ without an interrupt vector), writes submission entries into its SQ in
its own memory, writes the SQ tail doorbell register with one store to the mapped BAR, and reads
the completion entries the controller writes into its CQ. No system call, no interrupt, no block
layer.

:class:`Vfio` is the host's record of the controllers bound so (by device index, with the job
that holds each); :class:`UserQueuePair` is the process's side of one of its queue pairs (the
controller's side is the device's :class:`~models.ssd.device.QueuePair`). The process learns of a
completion only by polling its CQ; the pair's ``on_post`` callback tells the model when a poll will
find one (as the kernel driver's ``cqe_posted`` does for its polled queues).

stacksim keeps the kernel driver's queue pairs on a bound controller (created when the host is
built, before the jobs are known); they stay idle, and a kernel job may not use the controller
(:meth:`Vfio.owner_of`).
"""

from __future__ import annotations

from typing import Any, Callable

from models.ssd.device import NvmeDevice, QueuePair
from simcore.errors import ConfigError


class UserQueuePair:
    """One I/O queue pair of a user-space driver: the controller's pair (``hw``: its CQ of posted
    entries), the commands written to the SQ whose tail doorbell is not written yet (``pending``),
    and the device (``index``)."""

    __slots__ = ("hw", "device", "index", "pending")

    def __init__(self, hw: QueuePair):
        self.hw = hw
        self.device: NvmeDevice = hw.device
        self.index: int = hw.device.index
        self.pending: list[Any] = []

    def ring_sq_doorbell(self) -> int:
        """Write the SQ tail doorbell (one MMIO store): the controller fetches every pending command
        now. Returns how many it covered."""
        cmds = self.pending
        if not cmds:
            return 0
        self.pending = []
        submit = self.device.submit
        hw = self.hw
        for cmd in cmds:
            submit(hw, cmd)
        return len(cmds)


class Vfio:
    """The host's controllers bound to vfio-pci, by device index, and the job holding each."""

    def __init__(self, devices: list[NvmeDevice]):
        self._devices = devices
        self._owner: dict[int, str] = {}

    def bind(self, dev_index: int, owner: str) -> None:
        """Bind device ``dev_index`` to vfio-pci for ``owner`` (a job's name; the jobs of one fio
        run share the process, so several may hold it)."""
        if not 0 <= dev_index < len(self._devices):
            raise ConfigError(
                f"{owner}: a user-space driver asks for SSD {dev_index}, the platform has {len(self._devices)}"
                " (set ssd_count)"
            )
        self._owner.setdefault(dev_index, owner)

    def owner_of(self, dev_index: int) -> str | None:
        """The job that bound device ``dev_index`` to vfio-pci, or None (the kernel's)."""
        return self._owner.get(dev_index)

    def alloc_io_qpair(
        self, dev_index: int, depth: int, on_post: Callable[[QueuePair, Any], None], owner: str
    ) -> UserQueuePair:
        """A polled I/O queue pair of ``depth`` entries on bound device ``dev_index``
        (spdk_nvme_ctrlr_alloc_io_qpair); ``on_post(hw, command)`` is told of each posted entry."""
        if dev_index not in self._owner:
            self.bind(dev_index, owner)
        dev = self._devices[dev_index]
        if len(dev.qps) >= dev.cfg.max_queue_pairs:
            raise ConfigError(
                f"{owner}: SSD {dev_index} has no free I/O queue pair for another user-space qpair "
                f"(ssd.max_queue_pairs={dev.cfg.max_queue_pairs}, {len(dev.qps)} in use, the kernel driver's"
                " included); raise ssd.max_queue_pairs or use fewer threads"
            )
        hw = dev.add_queue_pair(polled=True, depth=depth)
        hw.on_post = on_post
        return UserQueuePair(hw)
