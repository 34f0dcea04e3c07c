"""An io_uring instance as the kernel set it up (Linux 6.1 ``io_uring/io_uring.c``, ``rw.c``,
``uring_cmd.c``): the rules of the calls a task makes on its ring, and the kernel's work for them.

- **Submission.** ``io_uring_enter`` issues each SQE (``io_issue_sqe``: ``io_read``/``io_write`` ->
  the file system's direct-IO submit; ``fget`` per SQE unless the file is registered; no page
  mapping with registered buffers: IORING_OP_READ_FIXED); ``io_uring_cmd`` SQEs go to the NVMe
  driver's uring_cmd path (no file system). The enter itself costs ``io_uring_enter_cycles``
  (``io_submit_sqes``' set-up, ``io_submit_state_start``/``end``) unless an SQPOLL thread submits.
  A batch is plugged from ``uring_plug_min`` requests (io_submit_state_start:
  ``state->need_plug = max_ios > 2`` in 6.x, ``> 1`` in 5.15).
- **Completion.** An interrupt's completion runs as task work that fills the CQE; the fills of one
  task-work run share one flush of the CQ (``__io_submit_flush_completions``: one
  ``completion_lock`` round and one wake-up). With DEFER_TASKRUN (6.1; fio asks for it from 3.33;
  not with SQPOLL, and an IOPOLL ring posts in its polling enter) the task work waits on the ring's
  local list until the task enters with GETEVENTS (``io_run_local_work``). The task reads posted
  CQEs from the shared ring in user space: no system call unless it must wait.
- **SQPOLL.** The SQ thread (:mod:`models.os.io_uring.sqpoll`) issues the SQEs and completes the
  requests in its own task work (``sq_complete_parts``).
"""

from __future__ import annotations

from models.os.costs.tables import KernelCosts
from models.os.fs.aio import AsyncContext
from models.os.kernel_version import has, uring_plug_min

__all__ = ["IoRing"]


class IoRing(AsyncContext):
    """One task's io_uring instance (``struct io_ring_ctx``) with its set-up flags.

    ``kver``: the kernel's (major, minor); ``wants_defer_taskrun``: the application asked for
    IORING_SETUP_DEFER_TASKRUN (the kernel grants it from 6.1, and the flag combines with neither
    SQPOLL nor, for posting, IOPOLL); ``registered_files``: IORING_REGISTER_FILES (no fget per
    SQE); ``fixed_buffers``: registered buffers (no page mapping per IO)."""

    def __init__(
        self,
        k: KernelCosts,
        kver: tuple[int, int],
        *,
        passthru: bool = False,
        iopoll: bool = False,
        sqpoll: bool = False,
        wants_defer_taskrun: bool = False,
        registered_files: bool = False,
        fixed_buffers: bool = False,
    ) -> None:
        super().__init__(k, passthru, iopoll, sqpoll)
        self.registered_files = registered_files
        self.fixed_buffers = fixed_buffers
        self.defer_taskrun = wants_defer_taskrun and not iopoll and not sqpoll and has(kver, "defer_taskrun")
        self.plug_min = uring_plug_min(kver)
        self.flush_split = not sqpoll  # (the SQ thread's posting is its own: sq_complete_parts)
        self.reaps_in_user = True
        self.enter_cycles = k.io_uring_enter_cycles if not sqpoll else 0.0

    def issue_cycles(self) -> float:
        k = self.k
        cycles = k.io_uring_issue_cycles
        if not self.registered_files:
            cycles += k.fget_cycles
        return cycles

    def maps_pages(self) -> bool:
        return not self.fixed_buffers

    def issue_parts(self, op: str, nbytes: int, fs_file_cycles: float) -> dict:
        if self.passthru:  # no file system: the NVMe driver's uring_cmd path builds the request
            return dict(syscall=self.issue_cycles(), driver=self.k.uring_cmd_cycles)
        return super().issue_parts(op, nbytes, fs_file_cycles)

    def reap_parts(self, n: int, flushes: int, syscall: bool) -> dict:
        if not self.passthru:
            return super().reap_parts(n, flushes, syscall)
        # nvme_uring_cmd_end_io -> io_uring_cmd_done in task work: no bio end
        k = self.k
        reap = n * k.aio_reap_cycles
        if self.flush_split:
            reap += (flushes - n) * k.uring_cq_flush_cycles
        parts = dict(driver=n * k.uring_cmd_done_cycles, syscall=reap)
        if syscall:
            parts["syscall"] += k.syscall_entry_cycles + k.syscall_exit_cycles
        return parts

    def sq_complete_parts(self, n: int) -> dict:
        """The SQ thread's task-work run that completes ``n`` of this ring's requests, cycles by
        layer: the direct-IO completion (or passthrough's io_uring_cmd_done) per request and the CQE
        fills under one completion lock (__io_submit_flush_completions)."""
        k = self.k
        post = n * k.aio_reap_cycles - (n - 1) * k.uring_cq_flush_cycles
        if self.passthru:
            return dict(driver=n * k.uring_cmd_done_cycles, syscall=post)
        return dict(fs=n * k.fs_complete_cycles, syscall=post)
