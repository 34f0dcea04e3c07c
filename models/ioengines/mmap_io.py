"""fio's ``mmap`` engine (engines/mmap.c): the file is mapped MAP_SHARED and every IO is a
``memcpy`` between fio's buffer and the mapping; the kernel sees only the page faults.

fio maps the whole file, then ``posix_madvise``s it by ``fadvise_hint`` (MADV_RANDOM for a random
job: VM_RAND_READ, no fault readahead; MADV_SEQUENTIAL for a sequential one: VM_SEQ_READ, and the
file's readahead window doubled by the fadvise at open). Its ``POSIX_MADV_DONTNEED`` right after is
a no-op on Linux (glibc ignores it: MADV_DONTNEED would discard data). An IO is fio's user work,
then the copy (user time, bytes / ``cpu.copy_bytes_per_cycle``), interrupted by a page fault at
each page not mapped (or, for a write, not mapped writable): the exception entry and exit and
``handle_mm_fault`` (``pagecache.fault_cycles``), ``filemap_fault``'s lookup, readahead and wait
(:meth:`models.os.mm.filemap.Filemap.fault_plan`), each page mapped (``pagecache.map_page_cycles``)
and, for a write, ``page_mkwrite`` and the dirtying (``pagecache.write_page_cycles``), then
``balance_dirty_pages_ratelimited`` (``fault_dirty_shared_page``). Writeback write-protects the
pages it cleans (``page_mkclean``), so the next write to one faults again. fio's sync of an mmap
file (``fsync=N``, ``end_fsync``) is ``msync(MS_SYNC)`` of the mapping: the file's dirty pages
written back and waited for, as for fsync. ``direct=1`` (fio's msync and MADV_DONTNEED after each
IO) is not modelled.
"""

from __future__ import annotations

from models.ioengines.buffered_io import BufferedThread
from models.ioengines.host import EngineHost
from models.ioengines.job import FioJob
from models.os.mm.readahead import RaState


class MmapThread(BufferedThread):
    """One fio thread copying to and from a shared file mapping."""

    def __init__(self, host: EngineHost, job: FioJob, job_idx: int, clone: int, cpu: int, end_ns: float, stream):
        super().__init__(host, job, job_idx, clone, cpu, end_ns, stream)
        self._complete_cycles = 0.0  # no system call to return from

    def _new_ra(self) -> RaState:
        ra = super()._new_ra()
        hint = self.job.fadvise_hint
        if hint == "1":
            hint = "random" if self.offsets.random else "sequential"
        ra.mmap_seq = hint == "sequential"  # posix_madvise(POSIX_MADV_SEQUENTIAL): VM_SEQ_READ
        return ra

    def _submit_cost(self, op: str, nbytes: int, with_completion: bool):
        if op == "trim":
            return super()._submit_cost(op, nbytes, with_completion)
        cost = self._costs[(op, nbytes, with_completion)] = self.host.costs.get("mmap_io", user=self.k.user_io_cycles)
        return cost

    def _doorbell(self) -> None:
        """The copy starts: the faults it takes (decided now), then the rest as a buffered IO."""
        req = self.req
        assert req is not None
        if req.op == "trim":
            super()._doorbell()
            return
        m, ra = self._cur()
        self._plan = plan = self._fm.fault_plan(
            m, ra, req.offset - m.start, req.nbytes, req.op == "write", self.runner.clock()
        )
        self.runner.run(self._lookup_cost(plan), self._after_lookup_cb)

    def _lookup_cost(self, plan):
        c = self._pc.cfg
        # the faults' exception entry and exit, like a system call's; the pages they map
        parts = self._plan_parts(plan, c.map_page_cycles * plan.mapped, syscall=c.fault_cycles * plan.faults)
        return self.host.costs.get("mmap_faults", **parts)

    def _copy(self) -> None:
        """fio's memcpy (user space); a write's dirtied pages then meet balance_dirty_pages."""
        req = self.req
        assert req is not None
        cost = self.host.costs.get("mmap_memcpy", user=req.nbytes / self._copy_bpc)
        self.runner.run(cost, self._after_write_copy if req.op == "write" else self._io_done)
