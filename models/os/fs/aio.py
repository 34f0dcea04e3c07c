"""The kernel's side of an asynchronous-IO context (Linux 6.1 ``fs/aio.c``): what a task's
``io_submit`` and ``io_getevents`` calls do in the kernel, as the context was set up.

A context knows the kernel's rules for the calls a submitter makes on it, and the cycles of its
own work by stack layer (the submitter adds its user-space share): issuing one IO (``aio_read`` /
``aio_write`` -> the file system's direct-IO submit), plugging (``io_submit`` plugs a batch of more
than ``AIO_PLUG_THRESHOLD`` = 2 IOs: ``blk_start_plug`` when ``nr > AIO_PLUG_THRESHOLD``), posting a
completion (``aio_complete``: each event under ``ctx->completion_lock``) and reaping events
(``io_getevents``, always a system call). io_uring's ring is one too, with its own rules
(:class:`models.os.io_uring.ring.IoRing`).

The per-IO bookkeeping of the completion ring (how many events are posted and visible) is kept by
the submitting thread itself (models.ioengines.async_io): compiled, it is a native field of the
thread's own object on every completion, where a call into this object would cost a few dozen
instructions per IO; the rules it follows are this object's flags (``defer_taskrun``,
``flush_split``).
"""

from __future__ import annotations

from typing import Final

from models.os.costs.tables import KernelCosts

__all__ = ["AIO_PLUG_THRESHOLD", "AsyncContext"]

#: fs/aio.c: ``#define AIO_PLUG_THRESHOLD 2``: io_submit plugs a batch of more than this many IOs
AIO_PLUG_THRESHOLD: Final = 2


class AsyncContext:
    """libaio's ``struct kioctx`` as the kernel set it up for one task (see the module docstring).

    ``k``: the platform's kernel costs; ``passthru``: NVMe passthrough commands (io_uring_cmd only);
    ``iopoll``: the context completes by polling (IORING_SETUP_IOPOLL; libaio never polls);
    ``sqpoll``: a kernel thread submits (IORING_SETUP_SQPOLL)."""

    def __init__(self, k: KernelCosts, passthru: bool = False, iopoll: bool = False, sqpoll: bool = False) -> None:
        self.k = k
        self.passthru = passthru
        self.iopoll = iopoll
        self.sqpoll = sqpoll
        #: requests one submitting call must carry for the kernel to plug them
        self.plug_min: int = AIO_PLUG_THRESHOLD + 1
        #: a completion is queued on the context's work list and posted only when the task enters
        #: with GETEVENTS (io_uring's DEFER_TASKRUN; libaio posts from the interrupt: never)
        self.defer_taskrun = False
        #: posting completions costs one flush per batch that posts them (io_uring's CQ flush), not
        #: a lock round per event (libaio's aio_complete)
        self.flush_split = False
        #: the submitter reads posted completions from memory it shares with the kernel (io_uring's
        #: CQ ring); False: reaping them is a system call (io_getevents)
        self.reaps_in_user = False
        #: the call's own work per entry beyond the system call's entry and exit, cycles
        self.enter_cycles = 0.0

    def issue_cycles(self) -> float:
        """The engine's work to issue one IO (aio_read/aio_write and the kiocb's set-up), cycles."""
        return self.k.aio_issue_cycles

    def maps_pages(self) -> bool:
        """Whether issuing an IO maps its user pages (get_user_pages per 4 KiB page: not with
        io_uring's registered buffers)."""
        return True

    def issue_parts(self, op: str, nbytes: int, fs_file_cycles: float) -> dict:
        """The kernel's work to issue one IO of ``op`` and ``nbytes`` in a submitting call, cycles by
        layer (``syscall``: the engine's, ``fs``: the file system's direct-IO submit, its extent
        lookup ``fs_file_cycles`` included: a file job's, models.os.fs.filesystem)."""
        k = self.k
        pages = max(1, -(-nbytes // 4096))
        fs = k.fs_submit_cycles + fs_file_cycles + (k.fs_per_page_cycles * pages if self.maps_pages() else 0.0)
        return dict(syscall=self.issue_cycles(), fs=fs)

    def reap_parts(self, n: int, flushes: int, syscall: bool) -> dict:
        """The kernel's work to complete and hand over ``n`` events in ``flushes`` posts (io_uring:
        one per task-work run), cycles by layer: the direct-IO completion per event (``fs``) and its
        posting (``syscall``: aio_complete's lock per event; io_uring's CQE fills, one flush per
        batch); with ``syscall``, the reaping call's entry and exit."""
        k = self.k
        reap = n * k.aio_reap_cycles
        if self.flush_split:
            reap += (flushes - n) * k.uring_cq_flush_cycles
        parts = dict(fs=n * k.fs_complete_cycles, syscall=reap)
        if syscall:
            parts["syscall"] += k.syscall_entry_cycles + k.syscall_exit_cycles
        return parts
