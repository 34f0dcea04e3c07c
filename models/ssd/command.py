"""What an NVMe device sees of a request: one command.

The host's block requests (:class:`models.os.block.request.Request`) and the NVMe-oF commands the
storage server serves (:class:`models.server.reactor.FabricsCommand`) are both
:class:`NvmeCommand`\\ s, so one device model, its queue pairs and the interrupt-generation policies
serve both.
"""

from __future__ import annotations

from typing import Final

from mypy_extensions import mypyc_attr


@mypyc_attr(allow_interpreted_subclasses=True)  # the server's requests subclass it (not compiled)
class NvmeCommand:
    """The device-visible part of a request (times in ns, set by :class:`models.ssd.device.NvmeDevice`)."""

    __slots__ = (
        "op",
        "nbytes",
        "offset",
        "flags",
        "sq_seq",
        "t_dev_start",
        "t_dev_end",
        "t_cqe",
        "device_service_ns",
        "placement",
        "status",
        "meta_bytes",
        "prinfo",
        "opcode",
        "t_fetched",
        "t_fw",
        "t_stage",
        "t_xfer",
        "t_media_end",
        "dev_wait_ns",
        "dev_suspend_ns",
        "dev_tr_ns",
        "dev_page_type",
        "dev_path",
    )

    def __init__(self) -> None:
        self.placement = 0
        self.status = 0
        self.meta_bytes = 0
        self.prinfo = 0
        self.opcode = 0

    op: str
    """``"read"``, ``"write"``, ``"trim"``, or a zoned namespace's ``"zone_append"``,
    ``"zone_reset"``, ``"zone_finish"``, ``"zone_open"``, ``"zone_close"``."""
    nbytes: int
    """Transfer size, bytes."""
    offset: int
    """Starting byte address on the device (its LBA x the block size): picks the media unit."""
    flags: int
    """Interrupt-generation annotations (:data:`models.ssd.irq.URGENT`, ``BARRIER``)."""
    sq_seq: int
    """Position in its submission queue (set at submit; strict Barrier ordering)."""
    t_dev_start: float
    """The device started the media access."""
    t_dev_end: float
    """The media access ended (the data transfer follows)."""
    t_cqe: float
    """The completion entry was posted."""
    device_service_ns: float
    """The media service time drawn for this command."""
    placement: int
    """A write's FDP placement handle (the Directive Specific field with Directive Type Data
    Placement, NVMe TP4146); 0: the default reclaim unit handle."""
    status: int
    """The completion's status (0: success; a zoned namespace's errors: :mod:`models.ssd.zones`)."""
    meta_bytes: int
    """Metadata bytes the command moves besides its data, from a separate buffer (the metadata
    pointer, MPTR, of a namespace formatted with separate metadata); 0: none, or in the data (an
    extended LBA)."""
    prinfo: int
    """The command's protection information field (cdw12 bits 29:26, NVMe NVM Command Set):
    :data:`PRACT` (the controller inserts and strips the tuple) and the checks :data:`PRCHK_GUARD`,
    :data:`PRCHK_APP`, :data:`PRCHK_REF`; 0: none."""
    opcode: int
    """The NVM command a ``"write"`` is sent as, when not a Write (fio's io_uring_cmd ``write_mode``):
    :data:`WRITE_UNCOR`, :data:`WRITE_ZEROES`, :data:`VERIFY` or :data:`ZONE_APPEND`; 0: the
    operation's own command (served by :mod:`models.ssd.nvm_commands`)."""

    # Where the device's time went (set by NvmeDevice.submit for every command it is rung for;
    # ``stacksim explain`` splits the device's share of the IO's latency by them). Times in ns,
    # in pipeline order; a stage a command does not pass through ends where the one before it did.
    t_fetched: float
    """The controller fetched the command from its SQ (after leaving a low-power state)."""
    t_fw: float
    """The controller firmware's serial stage was done with it (``t_fetched`` without one)."""
    t_stage: float
    """It was ready for its media: a read once the controller's share (``controller_read_ns``) is
    done, a buffered write once the write buffer had room, another write once the zone rules and
    the FTL let it go (before its data DMA)."""
    t_xfer: float
    """A read's data crossed its media data path (its link transfer may start); a write's data
    crossed the link (and, unbuffered, its data path)."""
    t_media_end: float
    """Its media stage ended: a flash read's last channel transfer, a read-ahead hit's or a buffered
    write's controller service, a unit's service."""
    dev_wait_ns: float
    """A flash read: waiting for its die (reads or programs and erases ahead of it, suspends
    excluded), on its last-ending page; an unbuffered write: waiting for its media unit."""
    dev_suspend_ns: float
    """A flash read: the suspend latency of the program or erase it suspended, ns (0: none)."""
    dev_tr_ns: float
    """A flash read: the array read time it paid on its last-ending page (the page type's tR, with
    the per-KiB time beyond 4 KiB and the protection information checks)."""
    dev_page_type: int
    """A flash read's page type (0: LSB, then CSB/MSB by the cell), -1 when not a flash read."""
    dev_path: str
    """How it was served: :data:`PATH_MEDIA` (the NAND dies), :data:`PATH_READAHEAD` (a read-ahead
    hit), :data:`PATH_BUFFER` (a write acknowledged from the DRAM write buffer), :data:`PATH_UNIT`
    (a service time per command on a media unit: the 3D XPoint presets' own media model),
    :data:`PATH_OTHER` (trim, zone management, the NVM commands of :mod:`models.ssd.nvm_commands`,
    a failed command)."""


#: NvmeCommand.dev_path values (interned constants: the hot path stores them, allocates nothing)
PATH_MEDIA: Final = "media"
PATH_READAHEAD: Final = "readahead"
PATH_BUFFER: Final = "buffer"
PATH_UNIT: Final = "unit"
PATH_OTHER: Final = "other"


#: PRINFO bits (cdw12 bits 29:26 shifted down): protection information action, guard, application
#: tag and reference tag checks
PRACT = 0x8
PRCHK_GUARD = 0x4
PRCHK_APP = 0x2
PRCHK_REF = 0x1

#: NVM command set opcodes of the commands fio's io_uring_cmd sends for its writes besides Write
#: (exact: include/linux/nvme.h enum nvme_opcode, Linux 6.12)
WRITE_UNCOR = 0x04
WRITE_ZEROES = 0x08
VERIFY = 0x0C
ZONE_APPEND = 0x7D
#: Unrecovered Read Error (Status Code Type 2h, Media and Data Integrity Errors; exact:
#: include/linux/nvme.h NVME_SC_READ_ERROR, Linux 6.12): a read or verify of a block marked by Write
#: Uncorrectable
READ_ERROR = 0x281


def copy_device_record(dst: NvmeCommand, src: NvmeCommand) -> None:
    """Give ``dst`` the device record of ``src`` (a request merged into another, or a split IO
    and the piece it completed with: they were served as that command)."""
    dst.t_fetched = src.t_fetched
    dst.t_fw = src.t_fw
    dst.t_stage = src.t_stage
    dst.t_xfer = src.t_xfer
    dst.t_media_end = src.t_media_end
    dst.dev_wait_ns = src.dev_wait_ns
    dst.dev_suspend_ns = src.dev_suspend_ns
    dst.dev_tr_ns = src.dev_tr_ns
    dst.dev_page_type = src.dev_page_type
    dst.dev_path = src.dev_path
