"""Calibrated-interrupt annotations the OS puts on requests (cinterrupts kernel defaults).

* blocking read/write, pread/pwrite, preadv2/pwritev2 without RWF_NOWAIT, and the fsync family:
  **Urgent** (someone is blocked on the result);
* io_submit (libaio) and io_uring_enter: **Barrier** on the last request of each batch;
* msync(MS_SYNC): Barrier on the last request (not issued by the modelled engines).
A job can override them like RWF_URGENT / RWF_BARRIER / both (= untagged) with the
stacksim-specific fio option ``stacksim_irq_hint=urgent|barrier|untagged`` (``default`` keeps the
kernel's rules). Requests merged in blk-mq take the union of the bits (Urgent wins); the pieces of
an IO split at max_sectors_kb inherit its bits.
"""

from __future__ import annotations

from models.os.block.request import REQ_BARRIER, REQ_URGENT, Request

HINT_FLAGS = {"urgent": REQ_URGENT, "barrier": REQ_BARRIER, "untagged": 0}


def flag_batch(reqs: list[Request], hint: int) -> None:
    """The flags of one io_submit / io_uring_enter batch: Barrier on its last request (the rest
    untagged), or the job's ``hint`` flags on every request (``hint`` >= 0; -1: the kernel's rule)."""
    if hint >= 0:
        for req in reqs:
            req.flags = hint
        return
    for req in reqs:
        req.flags = 0
    if reqs:
        reqs[-1].flags = REQ_BARRIER


def sync_flags(hint: str, nowait: bool) -> int:
    """Flags of a blocking synchronous IO: the submitter's override ``hint`` (``default``: none;
    ``urgent``, ``barrier``, ``untagged``), else Urgent unless the IO is RWF_NOWAIT (``nowait``)."""
    if hint != "default":
        return HINT_FLAGS[hint]
    return 0 if nowait else REQ_URGENT
