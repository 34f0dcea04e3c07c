"""The thin file-system layer under file jobs on direct IO: where each file lies on the SSDs.

A direct-IO read or write of a regular file goes the block-device path plus one extra step: the
file system maps the file offset to a device address (``iomap_begin``: ext4_map_blocks' extent
status tree lookup, xfs_bmapi_read's in-core extent B-tree), under the inode's shared lock. Its CPU
cost per IO is ``KernelCosts.fs_file_extent_cycles``, charged to the ``fs`` layer; the rest of the
direct-IO path is the block device's (``fs_submit_cycles`` and the per-page work).

Layout (stacksim's assumption, stated in docs/os.md): one file system on SSD 0, freshly made, each
file one extent (fio lays its files out before the job starts, so they are written and allocated
contiguously), files placed one after another in the order jobs first name them, each aligned to
:data:`EXTENT_ALIGN_BYTES`. Overwrites of allocated blocks need no allocation, so no journal work
is modelled. A block-device name (``/dev/nvme1n1``, ``/dev/ng1n1``) is the raw device: no
extent lookup, SSD 1 (modulo the platform's count); its ``nN`` the namespace (``/dev/nvme0n2``:
namespace 2 of SSD 0, its extent of the controller's space, models.ssd.namespaces); other ``/dev/``
names take the SSDs in the order they are first named.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from models.ssd.namespaces import extent_of
from simcore.errors import ConfigError

#: files start on 1 MiB boundaries (mkfs's default stripe/alignment granularity on NVMe; a file
#: laid out by fio in one go is one extent from there)
EXTENT_ALIGN_BYTES = 1 << 20

_NVME_NAME = re.compile(r"^/dev/(?:nvme|ng)(\d+)n(\d+)")


def namespace_extent(ssd: Any, nsid: int, where: str) -> tuple[int, int]:
    """Namespace ``nsid``'s (base, size) in the controller's address space of an SSD configured as
    ``ssd`` (models.ssd.namespaces; the engines reach the device's namespaces through the kernel's
    view of them); a ConfigError naming ``where`` when there is no such namespace."""
    return extent_of(ssd, nsid, where)


def is_device(path: str) -> bool:
    """A block or character device name (``/dev/...``): IO to it skips the file system."""
    return path.startswith("/dev/")


@dataclass(frozen=True, slots=True)
class FileRegion:
    """Where one of a job's files lies: SSD ``dev`` from ``start_bytes`` for ``size_bytes``
    (``None``: a raw device whose extent is the job's ``size``, as for a job without files)."""

    name: str
    dev: int
    start_bytes: int
    size_bytes: int | None
    is_file: bool


class FileLayout:
    """The files every job names, placed once on the SSDs (see the module docstring).

    ``reserve`` each (path, size) first, then ``place``; a file named twice gets the larger size
    (fio extends a shared file to the largest job's need)."""

    def __init__(self, capacity_bytes: int | None, n_ssds: int, ssd: Any = None):
        """``ssd``: the SSDs' configuration (models.ssd.config.DeviceConfig), whose namespaces a
        device name's ``nN`` picks (None: every name is namespace 1)."""
        self.ssd = ssd
        self.capacity_bytes = capacity_bytes
        self.n_ssds = n_ssds
        self._sizes: dict[str, int | None] = {}
        self._regions: dict[str, FileRegion] = {}
        self._devices: list[str] = []

    def reserve(self, path: str, size_bytes: int | None) -> None:
        if path in self._sizes:
            old = self._sizes[path]
            if size_bytes is not None and (old is None or size_bytes > old):
                self._sizes[path] = size_bytes
            return
        self._sizes[path] = size_bytes
        if is_device(path) and not _NVME_NAME.match(path):
            self._devices.append(path)

    def place(self) -> None:
        """Give every reserved file its region; files must fit on SSD 0's capacity."""
        at = 0
        for path, size in self._sizes.items():
            if is_device(path):
                m = _NVME_NAME.match(path)
                dev = int(m.group(1)) if m else self._devices.index(path)
                nsid = int(m.group(2)) if m else 1
                start, size = 0, None
                if self.ssd is not None and nsid != 1:  # (namespace 1: the whole device, as before)
                    start, size = extent_of(self.ssd, nsid, f"filename={path}")
                self._regions[path] = FileRegion(path, dev % self.n_ssds, start, size, False)
                continue
            if size is None:
                raise ConfigError(
                    f"file '{path}': no size; a file job needs size= or filesize= "
                    "(fio refuses it too: the file does not exist)"
                )
            self._regions[path] = FileRegion(path, 0, at, size, True)
            at += -(-size // EXTENT_ALIGN_BYTES) * EXTENT_ALIGN_BYTES
        cap = self.capacity_bytes
        if cap is not None and at > cap:
            raise ConfigError(
                f"the jobs' files need {at} bytes on SSD 0, more than its capacity "
                f"(ssd.capacity_bytes = {cap}); fio would fail with ENOSPC"
            )

    def region(self, path: str) -> FileRegion:
        return self._regions[path]
