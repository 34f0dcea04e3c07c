"""fio's files of one job thread (``filename``, ``directory``, ``filename_format``, ``nrfiles``,
``filesize``) and its choice of the file for each IO (``file_service_type``), as fio 3.41 does
them (filesetup.c add_file/setup_files, init.c make_filename, io_u.c __get_next_file; semantics
in fio's HOWTO):

* ``filename=a:b`` names the files (``\\:`` escapes a colon); every clone uses the same ones, and
  ``nrfiles`` is ignored. Relative names are under the first ``directory``;
* without ``filename``, each clone makes ``nrfiles`` files named by ``filename_format`` (default
  ``$jobname.$jobnum.$filenum``; ``$jobnum`` is the clone's number), in the directories of
  ``directory`` taken in turn by clone number;
* each file's size is ``filesize`` (a range: drawn per file, rounded down to the largest block
  size), else ``size`` divided by the number of files; the thread IO amount is ``size`` (else the
  files' sizes together);
* ``file_service_type``: ``roundrobin`` (default), ``random`` or ``sequential`` with ``:N`` IOs
  per turn (default 1; ``sequential`` stays on a file until its region is done), or ``zipf``,
  ``pareto``, ``normal``/``gauss`` over the file numbers with ``:value`` as the skew (defaults
  1.1, 0.2, 0 as fio's).

:class:`JobFiles` is one thread's files (fio's ``td->files``): each file's region and position (a
:class:`models.ioengines.io_offsets.FileState`), the bytes issued to each in the pass, and the file
of the next IO (fio's get_next_file after each IO; the thread swaps the file in before it draws the
IO's offset; the current file's device stays the thread's native ``dev``, read by every engine per
IO). Where the files lie on the SSDs is :mod:`models.os.fs.filesystem`'s.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from models.ioengines.io_offsets import FileState, IoOffsets
from models.ioengines.job import FioJob
from models.ioengines.offsets import Normal, Pareto, Zipf
from simcore.rng import BatchedDraws

#: fio's FIO_DEF_ZIPF / FIO_DEF_PARETO, and the normal deviation (percent) it takes without a value
DEFAULT_SKEW = {"zipf": 1.1, "pareto": 0.2, "normal": 0.0}


def thread_files(job: FioJob, clone: int, gen: np.random.Generator) -> list[tuple[str, int | None]] | None:
    """The (path, size in bytes or None) of a thread's files; None when the job names no file or
    directory (the thread IOs to the raw device, as stacksim's default)."""
    if not job.filename and not job.directory:
        return None
    dirs = job.directory or ("",)
    if job.filename:
        names = [n if n.startswith("/") or not dirs[0] else f"{dirs[0].rstrip('/')}/{n}" for n in job.filename]
    else:
        d = dirs[clone % len(dirs)]
        names = []
        for i in range(job.nrfiles):
            n = (
                job.filename_format.replace("$jobname", job.name)
                .replace("$jobnum", str(clone))
                .replace("$filenum", str(i))
                .replace("$clientuid", "localhost")
            )
            names.append(n if n.startswith("/") or not d else f"{d.rstrip('/')}/{n}")
    bs_max = max(job.bs_read_bytes, job.bs_write_bytes)
    out = []
    for n in names:
        if job.filesize_bytes is not None:
            lo, hi = job.filesize_bytes
            size = lo if lo == hi else int(gen.integers(lo, hi + 1)) // bs_max * bs_max
        elif job.size_bytes:
            size = job.size_bytes // len(names)
        else:
            size = None
        out.append((n, None if size is None else size + job.offset_bytes))
    return out


class FileService:
    """fio's choice of the file for the next IO among ``nfiles`` (``step`` per IO)."""

    def __init__(self, kind: str, value: float | None, nfiles: int, gen: np.random.Generator):
        self.kind = kind
        self.n = nfiles
        self.per_turn = int(value) if kind in ("roundrobin", "random", "sequential") and value else 1
        self.left = self.per_turn
        self._u = BatchedDraws(gen, lambda g, k: g.random(k)).next
        skew = DEFAULT_SKEW.get(kind, 0.0) if value is None else value
        self._pick: Callable[[float], int] | None = None
        if kind == "zipf":
            self._pick = Zipf(nfiles, skew, None, gen).block
        elif kind == "pareto":
            self._pick = Pareto(nfiles, skew, None, gen).block
        elif kind == "normal":
            self._pick = Normal(nfiles, skew, None, self._u).block

    def first(self) -> int:
        """The file of the thread's first IO (fio's first __get_next_file: file 0 in turn, else drawn)."""
        if self.kind in ("roundrobin", "sequential"):
            return 0
        if self.kind == "random":
            return min(self.n - 1, int(self._u() * self.n))
        return self._drawn()

    def step(self, cur: int, cur_done: bool) -> int:
        """The file of the next IO, after an IO to file ``cur`` (``cur_done``: its region is done)."""
        kind = self.kind
        if kind == "sequential":
            return (cur + 1) % self.n if cur_done else cur
        self.left -= 1
        if self.left > 0:
            return cur
        self.left = self.per_turn
        if kind == "roundrobin":
            return (cur + 1) % self.n
        if kind == "random":
            return min(self.n - 1, int(self._u() * self.n))
        return self._drawn()

    def _drawn(self) -> int:
        """A file drawn from the zipf, pareto or normal distribution over the file numbers."""
        pick = self._pick
        assert pick is not None  # (set for those kinds)
        return pick(self._u())


class JobFiles:
    """One fio thread's files (fio's filesetup.c setup_files for a thread): the region of each
    (from the file's start, past the job's ``offset``; a block device named without ``size``:
    the device's from there), its position and random picker, and the file of each IO
    (``service``: fio's __get_next_file)."""

    def __init__(
        self,
        offs: IoOffsets,
        regions: list,
        service: FileService,
        job: FioJob,
        capacity: int | None,
        stream: Callable[[str], np.random.Generator],
    ) -> None:
        #: a clone whose region does not fit its device: fio's setup error (empty: none)
        self.error = ""
        offset = offs.base_offset
        states: list[FileState] = []
        for i, reg in enumerate(regions):
            span = offs.span
            if reg.is_file and reg.size_bytes is not None:
                span = reg.size_bytes - offset
            elif not job.size_bytes:  # (a namespace's region: its own size; else the device's)
                cap = reg.size_bytes if reg.size_bytes is not None else capacity
                span = self._device_span(job, reg.name, offset, cap, max(offs.bs.values()), span)
            offs.set_region(reg.start_bytes + offset, span)
            if offs.picker is not None:
                offs.use_picker(stream("offset" if i == 0 else f"f{i}.offset"))
            states.append(FileState(offs, reg.dev))
        self.states = states
        self.issued: list[int] = [0] * len(states)  # bytes issued to each file in this pass (sequential)
        self.service = service
        self.cur: int = service.first() if len(states) > 1 else 0
        self.next: int = self.cur
        offs.load(states[self.cur])

    def _device_span(self, job: FioJob, path: str, offset: int, capacity: int | None, bs: int, span: int) -> int:
        """A block device named without ``size``: fio's size is the device's from the clone's start
        offset (filesetup.c setup_files: ``io_size = real_file_size - file_offset``); a start past the
        device's end fails the clone's setup ("you need to specify valid offset=", err_offset), too
        little room for one block too ("blocksize is larger than data set range"): fio reaps that
        clone without IO and runs the others (the thread fails with :attr:`error`)."""
        if capacity is None:
            return span
        room = capacity - offset
        if room >= bs:
            return room
        why = "you need to specify valid offset=" if room < 0 else "blocksize is larger than data set range"
        self.error = f"{job.name}: {why} ({path}: offset {offset} of {capacity} bytes)"
        return bs

    def select(self, offs: IoOffsets, dev: int) -> int:
        """Before an IO: make the file fio's service chose after the previous IO current (the switch
        happens here, so the previous IO kept its file's device); ``dev``: the current file's
        device. Returns the device of the IO's file."""
        nxt = self.next
        if nxt == self.cur:
            return dev
        states = self.states
        st = states[self.cur]
        offs.save(st)
        st.dev = dev
        new = states[nxt]
        offs.load(new)
        self.cur = nxt
        return new.dev

    def issued_to(self, nbytes: int, span: int) -> None:
        """An IO of ``nbytes`` to the current file (of ``span`` bytes): the file of the next IO."""
        cur = self.cur
        issued = self.issued
        n = issued[cur] + nbytes  # (not ``+=`` on the item: compiled, that is a generic in-place add)
        done = n >= span
        issued[cur] = 0 if done else n
        self.next = self.service.step(cur, done)

    def devices(self) -> set[int]:
        """The SSDs (indices) of the files."""
        return {st.dev for st in self.states}

    def total_span(self) -> int:
        """The files' regions together, bytes (fio's size when the job gives none)."""
        return sum(st.span for st in self.states)
