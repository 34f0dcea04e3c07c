"""The namespaces of one NVMe controller: the first (``nsid`` 1: zoned when ``ssd.zoned`` is set,
else conventional, of ``capacity_bytes``) and the conventional ones ``ssd.conventional_namespaces``
adds (``nsid`` 2, 3, ...), all on the same controller, firmware, DRAM write buffer, channels and dies.

NVMe has no conventional zone inside a zoned namespace: a ZNS drive exposes its random-write space
as a separate conventional namespace on the same controller (exact: the zonedstorage.io
documentation). The model gives each namespace an extent of the controller's internal address
space, one after another (each aligned to :data:`NAMESPACE_ALIGN_BYTES`): a command to byte ``o`` of
namespace ``n`` reaches the device at ``base(n) + o``. The device's zone rules, its zone -> dies map
and the write buffer's zoned flushes apply to the zoned namespace's extent only; a conventional
namespace's reads go to the dies its pages are striped over (``unit_stripe_bytes``) and its writes
are flushed at the buffer's write frontier, over every die, as on a conventional drive. So a
conventional namespace's writer and a zoned reader meet on the dies.

A host names the namespace in the job's ``filename``: the kernel's ``/dev/nvme0n2`` (and
``/dev/ng0n2``), SPDK's ``ns=2``; a job naming none (no ``filename``, SPDK without ``ns=``) uses
``ssd.nsid``.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from simcore.config import Model
from simcore.errors import ConfigError

#: each namespace's extent starts on a 1 GiB boundary of the controller's address space (a
#: modelling choice: it keeps the page types and die stripes of a namespace's offsets the same
#: whatever the namespaces before it)
NAMESPACE_ALIGN_BYTES = 1 << 30


class ConventionalNamespaceConfig(Model):
    """A conventional (random-write) namespace beside the device's first one. Its size has no default:
    the first namespace's ``capacity_bytes`` (a zoned one's zones) is not its."""

    size_bytes: int = Field(
        gt=0,
        le=2**62,
        description="the namespace's capacity (NSZE x the LBA size), bytes; required: nothing else gives it",
    )

    @model_validator(mode="before")
    @classmethod
    def _size_given(cls, data):
        if isinstance(data, dict) and "size_bytes" not in data:
            raise ValueError(
                "size_bytes: a conventional namespace needs its size (bytes); it does not take the first"
                " namespace's capacity_bytes (on a zoned device that is the zones')"
            )
        return data


def extents(capacity_bytes: int | None, conventional: tuple[ConventionalNamespaceConfig, ...]) -> list[tuple[int, int]]:
    """(base, size) in the controller's address space of each namespace, ``nsid`` 1 first."""
    out = [(0, capacity_bytes or 0)]
    at = capacity_bytes or 0
    for ns in conventional:
        base = -(-at // NAMESPACE_ALIGN_BYTES) * NAMESPACE_ALIGN_BYTES
        out.append((base, ns.size_bytes))
        at = base + ns.size_bytes
    return out


def extent_of(ssd, nsid: int, where: str) -> tuple[int, int]:
    """Namespace ``nsid``'s (base, size) on the device config ``ssd``; a clear error naming ``where``
    (the file or field that asked) when the device has no such namespace."""
    ext = extents(ssd.capacity_bytes, ssd.conventional_namespaces)
    if not 1 <= nsid <= len(ext):
        have = "namespace 1 only" if len(ext) == 1 else f"namespaces 1-{len(ext)}"
        raise ConfigError(
            f"{where}: namespace {nsid}; the SSD ({ssd.model}) has {have} (ssd.conventional_namespaces adds"
            " conventional namespaces 2, 3, ...)"
        )
    return ext[nsid - 1]
