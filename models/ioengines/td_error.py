"""fio's rule for an IO's error (fio 3.41, td_error.c): is it fatal to its job?

The job's ``continue_on_error`` and ``ignore_error`` (parsed by ``scenarios/inputs/fio/errors.py``)
make the rule; a job thread asks it through :meth:`models.ioengines.job.FioJob.continues_after`.

* An error has a class (td_error.c ``td_error_type``): EILSEQ is a verify error, a read's a read
  error, every other direction's (writes and trims) a write error.
* ``continue_on_error`` sets the classes fio goes on after: ``none`` / ``0``, ``read``, ``write``,
  ``io`` (read and write), ``verify``, ``all`` / ``1``.
* A non-empty ``ignore_error`` list replaces its class's errors and adds the class to
  ``continue_on_error`` (``ignore_error_type``). A class without a list continues on fio's
  ``__NON_FATAL_ERR``: EIO and EILSEQ.
* An error is not fatal when its class is continued and its errno is in the class's list
  (``td_non_fatal_error``); otherwise the job ends with it.
"""

from __future__ import annotations

import errno
import os

__all__ = ["CLASSES", "CONTINUE", "DEFAULT_NON_FATAL", "IgnoreLists", "device_error", "non_fatal"]

#: the error classes, in ignore_error's list order (td_error.h ``error_type_bit``)
CLASSES = ("read", "write", "verify")
#: continue_on_error's values: the classes each continues on
CONTINUE = {
    "none": (),
    "0": (),
    "read": ("read",),
    "write": ("write",),
    "io": ("read", "write"),
    "verify": ("verify",),
    "all": CLASSES,
    "1": CLASSES,
}
#: td_error.c's __NON_FATAL_ERR: what a continued class without its own list goes on after
DEFAULT_NON_FATAL = (errno.EIO, errno.EILSEQ)

IgnoreLists = tuple[tuple[int, ...] | None, tuple[int, ...] | None, tuple[int, ...] | None]
"""``ignore_error``'s errnos per class (read, write, verify); None: no list given."""


def non_fatal(continue_on_error: str, ignore: IgnoreLists, op: str, err: int) -> bool:
    """Whether fio goes on after ``err`` on an IO of direction ``op`` (td_non_fatal_error)."""
    cls = "verify" if err == errno.EILSEQ else "read" if op == "read" else "write"
    i = CLASSES.index(cls)
    continued = cls in CONTINUE[continue_on_error] or ignore[i] is not None
    return continued and err in (ignore[i] or DEFAULT_NON_FATAL)


#: NVMe statuses (SCT and SC) the kernel completes a block request with as BLK_STS_MEDIUM, which
#: is -ENODATA (exact, Linux 6.12: drivers/nvme/host/core.c nvme_error_status; block/blk-core.c
#: blk_errors): write fault, unrecovered read error, unwritten block, access denied, read only,
#: compare failure; the zone errors and the others are BLK_STS_IOERR, -EIO
MEDIUM_STATUSES = frozenset({0x280, 0x281, 0x287, 0x286, 0x182, 0x285})


def device_error(status: int, passthru: bool) -> tuple[int, str]:
    """The error fio's IO gets from an NVMe completion ``status``, and how fio logs it.

    Through io_uring_cmd the CQE's result is the command's NVMe status itself (exact:
    drivers/nvme/host/ioctl.c nvme_uring_cmd_end_io, Linux 6.12), which fio keeps as a device
    error, logged as ``device error 0x281`` and carried as the job's error (fio 3.41
    fio_ioring_cmd_event, IO_U_F_DEVICE_ERROR [recalled]). Through the block device the kernel
    makes an errno of it: ENODATA for the medium errors, EIO for the others (the kernel's retries
    of a status without Do Not Retry are not modelled)."""
    if passthru:
        return status, f"device error {status:#x}"
    err = errno.ENODATA if (status & 0x7FF) in MEDIUM_STATUSES else errno.EIO
    return err, os.strerror(err)
