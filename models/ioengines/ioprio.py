"""fio's IO priorities of a job thread (fio 3.41: backend.c's ioprio_set of ``prio`` /
``prioclass``, os/os-linux.h ioprio_value, engines/cmdprio.c for ``cmdprio_percentage``,
``cmdprio_class``, ``cmdprio`` and ``cmdprio_bssplit``; HOWTO "I/O priority"):

* ``prio`` / ``prioclass`` set the thread's priority (ioprio_set; class BE when only ``prio`` is
  given, as fio's ioprio_value): :func:`thread_ioprio`, the task's ``ioprio``;
* with ``cmdprio_percentage`` that share of the IOs (one uniform draw per IO, per direction)
  carries ``cmdprio_class`` / ``cmdprio`` in the command itself (io_uring ``sqe->ioprio``, libaio
  ``IOCB_FLAG_IOPRIO``); with ``cmdprio_bssplit`` the entry of the IO's block size gives the share
  and, in its long form, the class and level (other sizes get none): :class:`CmdPrio`.

A priority value is ``class << 13 | level`` (the kernel's IOPRIO_PRIO_VALUE). Trims carry none.
"""

from __future__ import annotations

import numpy as np

from models.ioengines.job import FioJob
from simcore.rng import BatchedDraws


def thread_ioprio(job: FioJob) -> int | None:
    """The thread's ioprio_set value, or None when the job sets no ``prio`` / ``prioclass``."""
    if job.prio is None and job.prioclass is None:
        return None
    return ((job.prioclass or 2) << 13) | (job.prio or 0)


class CmdPrio:
    """The per-command priorities of one thread: :meth:`value` per read or write (0: none)."""

    def __init__(self, job: FioJob, gen: np.random.Generator) -> None:
        self.pct = {"read": job.cmdprio_percentage_read, "write": job.cmdprio_percentage_write}
        value = {
            "read": (job.cmdprio_class_read << 13) | job.cmdprio_read,
            "write": (job.cmdprio_class_write << 13) | job.cmdprio_write,
        }
        self.values = value
        self.by_size = not any(self.pct.values())
        #: cmdprio_bssplit: per direction, block size -> (percent, priority value)
        self.table = {
            op: {
                bs: (p, value[op] if cls is None or level is None else (cls << 13) | level)
                for bs, p, cls, level in split
            }
            for op, split in (("read", job.cmdprio_bssplit_read), ("write", job.cmdprio_bssplit_write))
        }
        self.draw = BatchedDraws(gen, lambda g, n: g.random(n), batch=1024).next

    @staticmethod
    def wanted(job: FioJob) -> bool:
        """The job gives some commands a priority of their own."""
        return bool(
            job.cmdprio_percentage_read
            or job.cmdprio_percentage_write
            or job.cmdprio_bssplit_read
            or job.cmdprio_bssplit_write
        )

    def value(self, op: str, bs: int) -> int:
        """The priority of a read or write of ``bs`` bytes (one draw), 0 for none."""
        if not self.by_size:
            return self.values[op] if self.draw() * 100.0 < self.pct[op] else 0
        entry = self.table[op].get(bs)
        return entry[1] if entry is not None and self.draw() * 100.0 < entry[0] else 0
