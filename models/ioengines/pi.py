"""fio's io_uring_cmd on a namespace formatted with metadata: what each command carries and what
fio's thread computes (fio 3.41, engines/nvme.c and engines/io_uring.c).

* **The format as fio sees it** (``fio_nvme_get_info``): metadata of ``ms`` bytes per block, at the
  end of each block's data (an extended LBA: fio's blocks are ``lba + ms`` bytes) or in a separate
  buffer (``md_per_io_size`` per IO; the command's metadata pointer moves ``nlb x ms`` bytes besides
  the data, ``fio_nvme_uring_cmd_prep``). With ``pi_act=1`` and ``ms`` the tuple's size, fio uses no
  metadata at all: the controller inserts the tuple on a write and strips it on a read (PRACT).
* **The command's PRINFO** (``fio_nvme_pi_fill``: ``cdw12 |= io_flags``): PRACT when ``pi_act=1``,
  and the PRCHK bits of ``pi_chk``, on reads and writes (not on trims). The controller's work for
  them is the device's (``NamespaceConfig.pi_ns_per_lba``).
* **fio's own work** with ``pi_act=0`` on a namespace with protection information: before a write
  is queued, each block's tuple is built (``fio_nvme_generate_pi_16b_guard`` / ``_64b_guard``): with
  GUARD, a CRC over the block's data and the metadata before the tuple (``fio_crc_t10dif`` or
  ``fio_crc64_nvme``), then the tags; after a read completes each block's tuple is checked the same
  way (``fio_nvme_pi_verify``, from ``fio_ioring_event``). Priced per byte of CRC and per tuple
  (``KernelCosts.pi_*``), in fio's ``user`` layer.
"""

from __future__ import annotations

from models.os.block.request import PI_ACTION, PI_CHECKS


class PiPlan:
    """One io_uring_cmd job's metadata and protection information: the metadata bytes a command
    moves from its separate buffer, its PRINFO bits, fio's CPU work per IO (cycles)."""

    __slots__ = ("lba", "meta_per_lba", "unit", "prinfo", "_per_block_cycles")

    def __init__(
        self,
        *,
        lba_bytes: int,
        metadata_bytes: int,
        extended: bool,
        pi_type: int,
        tuple_bytes: int,
        pi_act: bool,
        checks: tuple[str, ...],
        crc_cycles_per_byte: float,
        tuple_cycles: float,
    ) -> None:
        ms = 0 if (pi_type and pi_act and metadata_bytes == tuple_bytes) else metadata_bytes
        self.lba = lba_bytes
        #: a block as fio's buffers hold it (an extended LBA carries its metadata), bytes
        self.unit = lba_bytes + ms if (ms and extended) else lba_bytes
        #: metadata bytes per block from the separate buffer (0: none, or inside the data)
        self.meta_per_lba = ms if (ms and not extended) else 0
        prinfo = PI_ACTION if pi_act else 0
        for name in checks:
            prinfo |= PI_CHECKS[name]
        self.prinfo = prinfo
        cycles = 0.0
        if pi_type and not pi_act:  # fio builds (writes) and checks (reads) each block's tuple
            guard_bytes = (self.unit if ms and extended else lba_bytes + ms) - tuple_bytes
            cycles = tuple_cycles + (crc_cycles_per_byte * guard_bytes if "GUARD" in checks else 0.0)
        self._per_block_cycles = cycles

    def meta_bytes(self, op: str, nbytes: int) -> int:
        """The metadata a command of ``nbytes`` moves from its separate buffer, bytes."""
        return nbytes // self.lba * self.meta_per_lba if op != "trim" else 0

    def cycles(self, op: str, nbytes: int) -> float:
        """fio's work on a write's tuples before it is queued, or a read's after it completes."""
        return self._per_block_cycles * (nbytes // self.unit) if op != "trim" else 0.0
