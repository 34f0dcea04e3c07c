"""fio's file-system metadata engines: each IO is one system call on a file or directory that moves no data.

fio's engines (fio 3.33, engines/falloc.c, ftruncate.c, filecreate.c, filestat.c, filedelete.c; fio
3.41's engines/fileoperations.c holds the file and directory ones; the HOWTO's ``ioengine``) are
synchronous (FIO_SYNCIO: one call at a time, ``iodepth`` ignored):

* ``falloc`` -- a read is ``fallocate(FALLOC_FL_KEEP_SIZE)``, a write ``fallocate(0)`` (both allocate
  the IO's range: ``kernel.fs_fallocate_cycles``), a trim ``fallocate(FALLOC_FL_PUNCH_HOLE |
  FALLOC_FL_KEEP_SIZE)`` (``kernel.fs_punch_hole_cycles``);
* ``ftruncate`` -- a write is ``ftruncate(fd, offset)`` (the block size is ignored; fio fails other
  directions with EINVAL: the parser refuses them): ``kernel.fs_truncate_cycles``;
* ``filecreate`` -- each file's open is ``open(O_CREAT)`` (and its close): ``kernel.fs_create_cycles``;
  a later pass over the same files opens existing ones (``kernel.fs_open_cycles``);
* ``filestat`` -- ``stat()`` of each file, never opened: ``kernel.fs_stat_cycles``;
* ``filedelete`` -- ``unlink()`` of each file fio laid out before the run: ``kernel.fs_unlink_cycles``;
  a second pass finds them gone (fio's unlink fails with ENOENT and the job ends): the job ends
  after one pass;
* ``dircreate`` -- each file's open is ``mkdir()`` of a directory of that name (fio_mkdir in
  open_file; fio's FIO_DISKLESSIO: nothing laid out before): ``kernel.fs_mkdir_cycles``; a second
  pass finds them there (mkdir fails with EEXIST, td_verror ends the job): one pass;
* ``dirstat`` -- ``stat()`` of each directory (the engine's ``setup_dirs`` made them before the run):
  the path walk and getattr of a file's stat, ``kernel.fs_stat_cycles`` (vfs_statx does not look at
  the inode's type); fio's ``stat_type`` (stat, lstat, statx) is priced as stat;
* ``dirdelete`` -- ``rmdir()`` of each directory ``setup_dirs`` made: ``kernel.fs_rmdir_cycles``; a
  second pass finds them gone (ENOENT): one pass.

An IO is fio's user work, the system call's entry, the file system's work and the exit, one CPU
segment on the thread's CPU; its latency is that segment (fio's clat: around the call). None of them
reaches the block layer: ext4 journals the metadata in memory and jbd2 commits it every 5 s (the
``commit=`` mount option), a device write not modelled, so a run longer than the commit interval
misses those journal writes. For the file engines fio counts one latency sample per file (its clat
from ``add_clat_sample``; FIO_NOSTATS keeps the no-op block IOs out), so here one IO per file, of
0 bytes, in the direction the job names (read unless it writes); falloc and ftruncate IOs carry
their block size, as fio counts them.
"""

from __future__ import annotations

from models.ioengines import FILE_OP_ENGINES
from models.ioengines.host import EngineHost
from models.ioengines.job import FioJob
from models.ioengines.sync_io import SyncThread

#: the engines whose second pass fails (the files or directories are gone, or already there): one pass
_ONE_PASS = ("filedelete", "dircreate", "dirdelete")


class FsMetaThread(SyncThread):
    """One fio thread of a metadata engine: :class:`SyncThread`'s job control, pacing and offsets,
    with each IO one system call that completes inside its own CPU segment (no block layer)."""

    def __init__(self, host: EngineHost, job: FioJob, job_idx: int, clone: int, cpu: int, end_ns: float, stream):
        super().__init__(host, job, job_idx, clone, cpu, end_ns, stream)
        k = self.k
        engine = job.ioengine
        self._complete_cycles = 0.0  # the op's segment includes its return
        self._per_file = engine in FILE_OP_ENGINES
        self._files_per_pass = job.nrfiles
        self._file_ops = 0
        self._fs_cycles: dict[str, float] = (
            {"read": k.fs_fallocate_cycles, "write": k.fs_fallocate_cycles, "trim": k.fs_punch_hole_cycles}
            if engine == "falloc"
            else {"write": k.fs_truncate_cycles}
            if engine == "ftruncate"
            else {"read": self._file_cycles(engine, 0), "write": self._file_cycles(engine, 0)}
        )
        if self._per_file:  # each IO is one file's open hook: the size bounds files, not bytes
            self.size_limit = None
            self._passes = job.loops if not job.time_based else 0

    def _file_cycles(self, engine: str, npass: int) -> float:
        k = self.k
        if engine == "filecreate":
            return k.fs_create_cycles if npass == 0 else k.fs_open_cycles
        if engine in ("filestat", "dirstat"):
            return k.fs_stat_cycles
        return {"filedelete": k.fs_unlink_cycles, "dircreate": k.fs_mkdir_cycles}.get(engine, k.fs_rmdir_cycles)

    def _next_io(self, op):
        op, bs, off = super()._next_io(op)
        if op == "trim" and self.job.ioengine != "falloc":
            op = "write"
        if not self._per_file:
            return op, bs, off
        n = self._file_ops
        self._file_ops += 1
        npass = n // self._files_per_pass
        if n % self._files_per_pass == 0 and npass:
            cyc = self._file_cycles(self.job.ioengine, npass)
            self._fs_cycles = {"read": cyc, "write": cyc}
            self._costs.clear()
            self._memo_cost = None
        return op, 0, off

    def _finished(self, now: float) -> bool:
        if self._per_file and self._file_ops >= self._files_per_pass * max(1, self._passes):
            if self._passes or self.job.ioengine in _ONE_PASS:  # (their second pass fails)
                return True
        return super()._finished(now)

    def _submit_cost(self, op: str, nbytes: int, with_completion: bool):
        """The whole call: fio's user work, syscall entry, the file system's work, syscall exit."""
        key = (op, nbytes, False)
        cost = self._costs.get(key)
        if cost is None:
            k = self.k
            cost = self._costs[key] = self.host.costs.get(
                f"{self.job.ioengine}_{op}",
                user=k.user_io_cycles,
                syscall=k.syscall_entry_cycles + k.syscall_exit_cycles,
                fs=self._fs_cycles[op],
            )
        return cost

    def _doorbell(self) -> None:
        """The call returned: no request reached the block layer."""
        req = self.req
        assert req is not None
        req.done = True
        self._issue(True)

    def _exit(self, with_completion: bool) -> None:
        super()._exit(False)  # (the last call's return was in its segment)

    def _nanosleep(self, with_completion: bool, delay_ns, then) -> None:
        super()._nanosleep(False, delay_ns, then)

    def _flow_held(self, with_completion: bool) -> None:
        super()._flow_held(False)
