"""fio's verify (``verify=TYPE``): what it adds to a job's IO and to its thread's CPU time.

What fio does (backend.c, io_u.c, verify.c):

* **Writes** carry a header (offset, length, write sequence, time, seed, its own crc32c) at the
  start of every ``verify_interval`` of the block (default: the block) and a checksum of the
  rest. With verify, fio refills each write buffer (fixup_options turns ``refill_buffers`` on):
  new random data, or ``verify_pattern``. Cost: fill + checksum per byte, a header per interval,
  before the write is submitted (populate_verify_io_u runs in get_io_u).
* **The log**: with ``do_verify`` (default 1) each write is logged as it is queued
  (log_io_piece), in write order (fio sorts the log by offset only for random jobs with
  ``overwrite=1``; stacksim keeps write order).
* **The verify phase**: after the job's writes (size, number_ios or runtime reached) fio waits
  for its IOs, fsyncs each file and invalidates its cache (do_verify: fio_io_sync, then
  file_invalidate_cache, "to make sure we really read from disk"), then reads every logged block
  back with the job's engine and depth, and checks each after its completion (verify_io_u: the
  header, then the checksum). The runtime bounds both phases: a time_based write job never
  reaches its verify phase (fio warns "verification read phase will never start").
* **verify_backlog=N**: while writing, whenever the log holds a multiple of N blocks and the last
  completed IO was not a read, the next ``verify_backlog_batch`` (default N) IOs are reads of the
  oldest logged blocks (check_get_verify); a block whose write is still in flight is not read yet
  (get_next_verify). These reads do not count against the job's size.
* **The write phase's budget** (backend.c ``do_io``): a write job with verify stops writing when the
  bytes it issued in the pass, its writes and its backlog's verify reads, reach ``size`` (twice
  ``size`` with ``verify_backlog``: "we may need up to twice the amount of bytes"; a random job with
  ``norandommap`` at least ``io_size``), or when its writes over all passes reach ``io_size`` x
  ``loops`` (io_issue_bytes_exceeded), or at the end of its region. So ``io_size`` larger than
  ``size`` does not make a sequential verify job wrap ("Don't break too early if io_size > size. The
  exception is when verify is enabled"). A time_based job is bounded by its runtime alone here.
* **Blocks written again** (``rw=...:N`` offsets, or ``norandommap``: fio's
  ``fio_offset_overlap_risk``; stacksim's uniform random offsets, drawn with replacement, keep every
  write's entry): fio keeps its log in an rbtree where a new write replaces the entry
  of the block it overwrites (log_io_piece), so a block is verified once, as last written; stacksim
  drops the older entry (and keeps write order, not fio's offset order: the same reads).
* **loops=N**: fio's thread_main runs do_io then do_verify N times (keep_running); each pass starts
  over at the job's first offset (clear_io_state). A time_based job ignores loops (keep_running
  returns before looking at them).
* **verify_only**: no writes; fio's dry run logs the blocks the writes would have written (one
  io_u's bookkeeping each), then the verify phase reads them.
* **A read-only job** with verify checks every block it reads (a file written earlier).
* **verify_async=N** (verify.c ``verify_async_init``, ``verify_async_thread``): fio starts N threads
  of its process per job thread; a completed io_u that needs checking is put on the job's verify list
  and one waiting thread is signalled (``pthread_cond_signal``), which checks it while the job thread
  goes on. Here each check is :class:`VerifyWorkers`' work: one queue, idle threads woken one at a
  time, each a task that competes for CPUs (fio's ``verify_async_cpus`` is not modelled: any CPU the
  job may use); the job thread pays the hand-off (``KernelCosts.verify_async_queue_cycles``). Not
  modelled: the io_u held until its check is done (fio's depth can shrink while checks queue up).

The data itself is not simulated, so every check passes by construction: the model prices the IO
and the CPU work of verifying, not its outcome. With direct IO fio's sync is priced as its system
calls on a file with no dirty pages (direct IO leaves none) and no flush reaching the device (the SSD
model has no volatile write cache: the kernel strips the flush of such a queue). On buffered files
(:class:`VerifyBufferedThread`) the sync writes back and waits for the dirty pages, and the
invalidation drops the clean ones, so the read-back misses the cache and reads the SSD. The costs are
``KernelCosts.verify_*`` (models/os/costs/tables.py), charged to the ``user`` layer (fio's own code).
"""

from __future__ import annotations

from collections import deque
from typing import Any, Callable

from models.ioengines.async_io import AsyncThread
from models.ioengines.buffered_io import BufferedThread
from models.ioengines.host import EngineHost
from models.ioengines.job import FioJob
from models.ioengines.sync_io import SyncThread
from models.os.costs.bundle import LAYERS
from models.os.mm.pagecache_config import PAGE_SHIFT
from models.os.sched.task import SLEEPING, kernel_thread

#: fio's verify types with no header (only the pattern is written and compared)
_NO_HEADER = ("pattern",)


class VerifyPlan:
    """One fio thread's verify state: the log of written blocks, the phase, the CPU work per IO
    (cycles), and what was verified."""

    def __init__(self, job: FioJob, k) -> None:
        self.kind: str = job.verify
        rate = k.verify_checksum_cycles_per_byte[self.kind]
        patterned = bool(job.verify_pattern) or self.kind in ("pattern", "pattern_hdr")
        fill = k.verify_pattern_fill_cycles_per_byte if patterned else k.verify_fill_cycles_per_byte
        self._check_rate = rate
        self._write_rate = rate + fill
        self._header = 0.0 if self.kind in _NO_HEADER else k.verify_header_cycles
        self._interval: int = job.verify_interval_bytes
        writes = job.rw not in ("read", "randread")
        self.logs: bool = writes and job.do_verify
        #: a read-only job checks every block it reads (fio verifies a file written before)
        self.checks_reads: bool = not writes
        self.backlog: int = job.verify_backlog if self.logs else 0
        self.batch: int = job.verify_backlog_batch or job.verify_backlog
        self.batch_left = 0
        #: logged blocks not verified yet: [offset, bytes, device, the write's Request or None]
        self.log: deque[list] = deque()
        self.new: list[list] = []  # entries logged by the IOs being prepared (async: their requests)
        #: "write" (the job's IO), "drain" (async: waiting for the writes), "verify"
        self.phase = "write"
        self.sync_pending = False  # fio's fsync + cache invalidation, before the first verify read
        self.last_read = False  # fio's last_ddir_completed == DDIR_READ
        self.home_dev = -1  # the device of the job's own next IO (a verify read may go elsewhere)
        self.verified_blocks = 0
        self.verified_bytes = 0
        self.logged_blocks = 0
        #: fio's do_io budget of one pass, in sizes (its bytes issued: writes and backlog reads; 0: none)
        self.pass_sizes = 0 if job.time_based or not self.logs else 2 if self.backlog else 1
        self.pass_bytes = 0
        #: passes of write + verify after this one (verify_only's are refused by the parser)
        self.loops_left = job.loops - 1 if self.logs and not job.time_based and not job.verify_only else 0
        #: fio_offset_overlap_risk (rw=...:N): a rewritten block replaces its log entry (by (device, offset))
        self.replaces = bool(job.rw_modifier)
        self._by_offset: dict[tuple[int, int], list] = {}

    # -- CPU work, cycles -----------------------------------------------------------------------
    def _chunks(self, nbytes: int) -> int:
        return -(-nbytes // self._interval) if self._interval else 1

    def write_cycles(self, nbytes: int) -> float:
        """fio's work on a write's buffer before it is queued: fill, checksum, headers."""
        return self._write_rate * nbytes + self._header * self._chunks(nbytes)

    def check_cycles(self, nbytes: int) -> float:
        """fio's work on a verify read after its completion: headers and checksum (counted)."""
        self.verified_blocks += 1
        self.verified_bytes += nbytes
        return self._check_rate * nbytes + self._header * self._chunks(nbytes)

    # -- the order of the IOs ---------------------------------------------------------------------
    def _backlog_due(self) -> bool:
        """fio's check_get_verify: a batch starts when the log holds a multiple of N blocks and the
        last completion was not a read; its head must have completed (get_next_verify)."""
        if not self.backlog or not self.log:
            return False
        if not self.batch_left and len(self.log) % self.backlog == 0 and not self.last_read:
            self.batch_left = self.batch
        if not self.batch_left:
            return False
        req = self.log[0][3]
        return req is None or req.t_complete > 0.0

    def next_io(self, th, op: str | None, base: Callable) -> tuple[tuple[str, int, int], bool]:
        """The thread's next IO, (direction, bytes, offset), and whether fio checks it after its
        completion: a verify read of the oldest logged block, or the job's own next IO (``base``)."""
        if self.phase == "verify" or self._backlog_due():
            off, nbytes, dev, _req = self.log.popleft()
            if self.phase != "verify":
                self.batch_left -= 1
            elif not self.log:
                th.offsets.region_end = True  # the last one: an async batch ends with it
            th.issued_bytes -= nbytes  # (not the job's own IO: its size and number_ios stay)
            th.issued_ios -= 1
            self.pass_bytes += nbytes
            if self.replaces:
                self._by_offset.pop((dev, off), None)
            if dev != th.dev:
                th.dev = dev
                th._qps = {}
            return ("read", nbytes, off), True
        if self.home_dev >= 0 and th.dev != self.home_dev:
            th.dev = self.home_dev  # back to the job's own device after a verify read elsewhere
            th._qps = {}
        io = base(th, op)
        self.home_dev = th.dev
        self.pass_bytes += io[1]
        if io[0] == "write" and self.logs:
            entry = [io[2], io[1], th.dev, None]
            if self.replaces:
                self._replace(entry)
            self.log.append(entry)
            self.new.append(entry)
            self.logged_blocks += 1
        return io, io[0] == "read" and self.checks_reads

    def _replace(self, entry: list) -> None:
        """log_io_piece's rbtree: the entry of the block this write overwrites leaves the log."""
        key = (entry[2], entry[0])
        old = self._by_offset.get(key)
        if old is not None:
            try:
                self.log.remove(old)
            except ValueError:
                pass  # (already taken by a verify read)
        self._by_offset[key] = entry

    def finished(self, th, now: float, base: Callable, then: str) -> bool:
        """fio's end of the thread's IO, with its verify phase: after the job's own IO is done
        (``base``, or the pass's budget), a verify phase follows (``then``: "verify", or "drain"
        first) while there are logged blocks and runtime left; with loops left the next pass then
        starts (an asynchronous thread drains its verify reads first: "loop")."""
        if self.phase == "verify":
            done = not self.log or now >= th.end_ns or th.failed
            if done and self.loops_left and not self.log and now < th.end_ns and not th.failed:
                if then == "drain":
                    self.phase = "loop"
                    return True
                self.next_pass(th)
                return False
            return done
        if self.phase in ("drain", "loop"):
            return True
        done = base(th, now) or (
            self.pass_sizes > 0 and self.pass_bytes >= self.pass_sizes * (th.job.size_bytes or _region_bytes(th))
        )
        if not done or not self.log or now >= th.end_ns or th.failed:
            return done
        self.phase = then
        self.sync_pending = then == "verify"
        th.max_ios = 0  # the log bounds the verify phase
        th.offsets.region_end = False
        return then == "drain"

    def next_pass(self, th) -> None:
        """fio's next loop (keep_running, clear_io_state): writes again from the job's first offset,
        with a fresh pass budget; the writes' total over the passes stays bounded (io_issue_bytes)."""
        self.loops_left -= 1
        self.phase = "write"
        self.pass_bytes = 0
        self._by_offset.clear()
        th.max_ios = th.job.number_ios
        th.offsets.region_end = False
        th.offsets.next_offset = th.offsets.base_offset
        if th.files is not None:
            for st in th.files.states:
                st.next_offset = st.base_offset

    def dry_run(self, th, base_next: Callable, base_finished: Callable) -> int:
        """verify_only: fio's do_dry_run logs the blocks the job's writes would write (no IO); the
        thread then starts in its verify phase. Returns the phantom IOs (fio's bookkeeping each)."""
        limit = th.size_limit or th.offsets.span  # (without a size, the job's span: fio's default size)
        n = 0
        while not base_finished(th, 0.0) and th.issued_bytes < limit:
            op, nbytes, off = base_next(th, None)
            th.issued_bytes += nbytes
            th.issued_ios += 1
            n += 1
            if op == "write":
                self.log.append([off, nbytes, th.dev, None])
                self.logged_blocks += 1
        th.issued_bytes = th.issued_ios = 0
        th.offsets.region_end = False
        th.max_ios = 0
        self.phase = "verify"
        self.sync_pending = True
        return n

    def sync_parts(self, k) -> dict[str, float]:
        """fio's sync before its verify phase: fsync(2) and the cache invalidation (an ioctl or
        posix_fadvise), each a system call on a file with nothing dirty or cached."""
        return {
            "syscall": 2 * (k.syscall_entry_cycles + k.syscall_exit_cycles),
            "fs": k.fsync_clean_cycles + k.invalidate_cache_cycles,
        }

    def report(self) -> dict[str, Any]:
        return {
            "blocks_logged": self.logged_blocks,
            "blocks_verified": self.verified_blocks,
            "bytes_verified": self.verified_bytes,
        }


class VerifyWorkers:
    """fio's verify_async threads of one job thread ``th``: a queue of checks (cycles each) and
    ``n`` threads that take them."""

    def __init__(self, th, n: int):
        self.host: EngineHost = th.host
        self.queue: deque[float] = deque()
        self.workers = [_VerifyWorker(self, th, i) for i in range(n)]
        self.checks = 0

    def enqueue(self, cycles: float, waker) -> None:
        """A completed read to check: onto the list, one idle thread signalled (``waker``: the
        runner the job thread runs on)."""
        self.queue.append(cycles)
        self.checks += 1
        for w in self.workers:
            if w.idle:
                w.wake(waker)
                return


class _VerifyWorker:
    """One verify_async thread: it sleeps on the job's condition variable, then checks queued
    reads one after another (the check's cycles in the ``user`` layer) until the list is empty."""

    def __init__(self, pool: VerifyWorkers, th, index: int):
        self.pool = pool
        host = pool.host
        task = kernel_thread(host.all_tasks, f"{th.task.name}.verify{index}", th.task.cpu, nice=th.job.nice)
        task.kthread = False  # a thread of fio's process
        task.affinity = th.task.affinity if th.task.affinity is not None else frozenset(range(len(host.runners)))
        task.owner = self
        self.task = task
        self.runner = host.runners[task.cpu]
        self.idle = True

    def can_migrate(self) -> bool:
        return True

    def migrated(self, runner) -> None:
        self.runner = runner

    def wake(self, waker) -> None:
        if self.task.state == SLEEPING:
            self.idle = False
            self.task.resume = self._next
            waker.wake(self.task)

    def _next(self) -> None:
        self.runner = runner = self.pool.host.runners[self.task.cpu]
        q = self.pool.queue
        if not q:
            self.idle = True
            runner.sleep(self._next, iowait=False)
            return
        runner.run(self.pool.host.costs.get("fio_verify_async_check", user=q.popleft()), self._next)


def _region_bytes(th) -> int:
    """fio's ``size`` when the job gives none: its files' sizes from their offsets (setup_files)."""
    files = th.files
    return files.total_span() if files is not None else th.offsets.span


def _with_parts(costs, name: str, base, extra: dict[str, float]):
    """The bundle ``base`` (a Cost) with ``extra`` cycles by layer added (actions: none)."""
    parts: dict[str, float] = {layer: c for layer, c in zip(LAYERS, base.layer_cycles) if c}
    for layer, c in extra.items():
        parts[layer] = parts.get(layer, 0.0) + c
    return costs.get(name, **parts)


class SyncVerify:
    """fio's verify in a synchronous thread (psync, sync, pvsync2; direct or buffered): its work on
    the data runs in the thread's one stretch of CPU between two IOs, where fio's do_io runs it
    (verify.c verify_io_u: the previous read's check after its return; populate_verify_io_u: the
    next write's fill and checksum before its system call; the submit timestamp after them, as fio
    stamps an IO as it queues it). ``base_issue`` and ``base_submit`` are the IO path this part
    verifies (the thread class's own ``_issue`` and ``_submit_cost``, called with the thread)."""

    def __init__(self, th, base_issue: Callable, base_submit: Callable) -> None:
        job: FioJob = th.job
        self.th = th
        self.base_issue = base_issue
        self.base_submit = base_submit
        th.verify = VerifyPlan(job, th.k)
        th.verify_workers = VerifyWorkers(th, job.verify_async) if job.verify_async else None
        self.parts: dict[str, float] = {}  # work before the next IO's system call, by layer
        self.checked = False  # the IO in flight is checked after its completion
        self.user = th._user_io_cycles
        self.bundles: dict = {}  # the IO path's own bundles, by (op, bytes, with_completion)

    def issue_first(self) -> None:
        th = self.th
        if th.job.verify_only:
            n = th.verify.dry_run(th, SyncThread._next_io, SyncThread._finished)
            cost = th.host.costs.get("fio_verify_dry_run", user=n * th.k.user_io_cycles)
            th.runner.run(cost, lambda: SyncThread._issue_first(th))
            return
        SyncThread._issue_first(th)

    def issue(self, with_completion: bool) -> None:
        th = self.th
        prev = th.req
        if with_completion and prev is not None:
            th.verify.last_read = prev.op == "read"
            if self.checked:
                self.add_user(self.check(th.verify.check_cycles(prev.nbytes)))
        self.checked = False
        th._memo_cost = None  # (the memo keys on the next IO alone; the work here depends on both)
        self.base_issue(th, with_completion)

    def add_user(self, cycles: float) -> None:
        self.parts["user"] = self.parts.get("user", 0.0) + cycles

    def check(self, cycles: float) -> float:
        """A read's check: this thread's work, or (verify_async) handed to a verify thread, this
        thread paying the hand-off."""
        th = self.th
        pool = th.verify_workers
        if pool is None:
            return cycles
        pool.enqueue(cycles, th.runner)
        return th.k.verify_async_queue_cycles

    def finished(self, now: float) -> bool:
        return self.th.verify.finished(self.th, now, SyncThread._finished, "verify")

    def next_io(self, op: str | None) -> tuple[str, int, int]:
        th = self.th
        v = th.verify
        io, checked = v.next_io(th, op, SyncThread._next_io)
        self.checked = checked
        if v.sync_pending:
            v.sync_pending = False
            for layer, c in v.sync_parts(th.k).items():
                self.parts[layer] = self.parts.get(layer, 0.0) + c
        if io[0] == "write":
            self.add_user(v.write_cycles(io[1]))
        th._user_io_cycles = self.user + sum(self.parts.values())  # the submit timestamp
        return io

    def submit_cost(self, op: str, nbytes: int, with_completion: bool):
        th = self.th
        key = (op, nbytes, with_completion)
        base = self.bundles.get(key)
        if base is None:
            base = self.bundles[key] = self.base_submit(th, op, nbytes, with_completion)
            th._costs.pop(key, None)  # (so that every IO comes here)
        if not self.parts:
            return base
        extra, self.parts = self.parts, {}
        return _with_parts(th.host.costs, f"{base.name}_verify", base, extra)


class VerifySyncThread(SyncThread):
    """A synchronous fio thread (psync, sync, pvsync2) with verify (:class:`SyncVerify`)."""

    def __init__(self, host: EngineHost, job: FioJob, job_idx: int, clone: int, cpu: int, end_ns: float, stream):
        super().__init__(host, job, job_idx, clone, cpu, end_ns, stream)
        self._sv = SyncVerify(self, SyncThread._issue, SyncThread._submit_cost)

    def _issue_first(self) -> None:
        self._sv.issue_first()

    def _issue(self, with_completion: bool) -> None:
        self._sv.issue(with_completion)

    def _finished(self, now: float) -> bool:
        return self._sv.finished(now)

    def _next_io(self, op: str | None = None) -> tuple[str, int, int]:
        return self._sv.next_io(op)

    def _submit_cost(self, op: str, nbytes: int, with_completion: bool):
        return self._sv.submit_cost(op, nbytes, with_completion)


class VerifyAsyncThread(AsyncThread):
    """An asynchronous fio thread (libaio, io_uring, io_uring_cmd) with verify: the writes' fill
    and checksum before the submitting call (each IO's submit timestamp after its own), the
    verify reads' checks after the reap that returns them, before fio queues more; the verify
    phase after the writes have drained."""

    def __init__(
        self, host: EngineHost, job: FioJob, job_idx: int, clone: int, cpu: int, end_ns: float, stream
    ) -> None:
        super().__init__(host, job, job_idx, clone, cpu, end_ns, stream)
        self.verify = VerifyPlan(job, self.k)
        self.verify_workers = VerifyWorkers(self, job.verify_async) if job.verify_async else None
        self._v_marks: list[tuple[bool, float]] = []  # per IO prepared: (checked, its write work)
        self._v_ids: set[int] = set()  # requests checked after their completion
        self._v_fill = 0.0  # write work of the IOs being submitted, cycles
        self._v_check = 0.0  # check work of the IOs just reaped, cycles

    def _issue_first(self) -> None:
        if self.job.verify_only:
            n = self.verify.dry_run(self, AsyncThread._next_io, AsyncThread._finished)
            cost = self.host.costs.get("fio_verify_dry_run", user=n * self.k.user_io_cycles)
            self.runner.run(cost, lambda: AsyncThread._issue_first(self))
            return
        AsyncThread._issue_first(self)

    def _finished(self, now: float) -> bool:
        return self.verify.finished(self, now, AsyncThread._finished, "drain")

    def _exit_if_drained(self) -> bool:
        v = self.verify
        if v.phase not in ("drain", "loop") or self.inflight or self.ring:
            return AsyncThread._exit_if_drained(self)
        self.stopping = False
        if v.phase == "loop":  # the pass's verify reads are reaped (do_verify's end): fio's next loop
            v.next_pass(self)
            self._fill()
            return True
        v.phase = "verify"  # fio's do_verify: its IO done, sync and invalidate, then read back
        self.runner.run(self.host.costs.get("fio_verify_sync", **v.sync_parts(self.k)), self._fill)
        return True

    def _next_io(self, op: str | None = None) -> tuple[str, int, int]:
        io, checked = self.verify.next_io(self, op, AsyncThread._next_io)
        self._v_marks.append((checked, self.verify.write_cycles(io[1]) if io[0] == "write" else 0.0))
        return io

    def _prepare(self, n: int, first: str | None, now: float) -> list:
        v = self.verify
        v.new.clear()
        self._v_marks.clear()
        ios = AsyncThread._prepare(self, n, first, now)
        new = iter(v.new)
        shift = 0.0
        freq = self.runner.freq
        for req, (checked, work) in zip(ios, self._v_marks):
            shift += work
            req.t_submit += shift / freq  # (fio's work on the buffer comes before it is queued)
            if checked:
                self._v_ids.add(req.id)
            if req.op == "write" and v.logs:
                next(new)[3] = req  # the log entry's write: in flight until it completes
        self._v_fill += shift
        return ios

    def _commit(self, ios: list) -> None:
        if not self._v_fill:
            AsyncThread._commit(self, ios)
            return
        cost = self.host.costs.get("fio_verify_fill", user=self._v_fill)
        self._v_fill = 0.0
        self.runner.run(cost, lambda: AsyncThread._commit(self, ios))

    def _take(self, syscall: bool, entered: bool = False) -> None:
        got = self.ring[: min(max(self.cmax, self._need()), self.visible)]  # (as AsyncThread._take)
        ids = self._v_ids
        v = self.verify
        for r in got:
            if r.id in ids:
                ids.discard(r.id)
                cycles = v.check_cycles(r.nbytes)
                if self.verify_workers is not None:  # verify_async: a verify thread checks it
                    self.verify_workers.enqueue(cycles, self.runner)
                    cycles = self.k.verify_async_queue_cycles
                self._v_check += cycles
        if got:
            v.last_read = got[-1].op == "read"
        AsyncThread._take(self, syscall, entered)

    def _fill(self) -> None:
        if self._v_check:  # fio checks what it reaped (verify_io_u) before it queues more
            cost = self.host.costs.get("fio_verify_check", user=self._v_check)
            self._v_check = 0.0
            self.runner.run(cost, self._fill)
            return
        AsyncThread._fill(self)


class VerifyBufferedThread(BufferedThread):
    """A synchronous fio thread with verify on buffered files (``direct=0``; psync, sync, pvsync2,
    and libaio, which Linux runs synchronously on a buffered file): the writes dirty the page
    cache; at the end of the write phase fio's ``do_verify`` syncs each file (``fio_io_sync``: a
    sync of fio's statistics, the file's dirty pages written back and waited for) and invalidates
    its cache (``file_invalidate_cache``: POSIX_FADV_DONTNEED, the clean pages dropped), so the
    verify reads go to the device through the page cache's read path (with readahead for a
    sequential job). With ``verify_backlog`` there is no sync nor invalidation before the reads:
    they find the pages just written in the cache (hits, no device read). Its verify is a
    :class:`SyncVerify` over the buffered IO path."""

    def __init__(self, host: EngineHost, job: FioJob, job_idx: int, clone: int, cpu: int, end_ns: float, stream):
        super().__init__(host, job, job_idx, clone, cpu, end_ns, stream)
        self._sv = SyncVerify(self, BufferedThread._issue, BufferedThread._submit_cost)

    def _issue_first(self) -> None:
        self._sv.issue_first()

    def _finished(self, now: float) -> bool:
        return self._sv.finished(now)

    def _submit_cost(self, op: str, nbytes: int, with_completion: bool):
        return self._sv.submit_cost(op, nbytes, with_completion)

    def _issue(self, with_completion: bool) -> None:
        """At the end of the write phase (fio's own IO done, the verify phase next): the sync and
        the invalidation before the first verify read."""
        v = self.verify
        prev = self.req
        if with_completion and v.phase == "write" and prev is not None and not self._sync_due:
            runner = self.runner
            t0 = runner.clock() + self._complete_cycles / runner.freq
            self._finished(t0)  # (fio's end of the writes: VerifyPlan.finished starts the verify phase)
            if v.sync_pending:
                v.sync_pending = False
                v.last_read = prev.op == "read"
                sv = self._sv
                if sv.checked:
                    sv.add_user(v.check_cycles(prev.nbytes))
                sv.checked = False
                self._io_completed(prev, t0)
                self._verify_files = list(self.mappings())
                k = self.k
                self._sync_start = t0 + k.user_io_cycles / runner.freq
                cost = self.host.costs.get(
                    "fio_verify_fsync", user=k.user_io_cycles, syscall=self._complete_cycles + k.syscall_entry_cycles
                )
                runner.run(cost, self._verify_sync_next)
                return
        self._sv.issue(with_completion)

    def _verify_sync_next(self) -> None:
        """fio_io_sync of the next file (each a sync of fio's statistics), then the invalidation."""
        files = self._verify_files
        if not files:
            self._verify_invalidate()
            return
        m = files.pop()
        runs = self._pc.take_dirty(m, len(m.dirty))
        self.fsyncs += 1
        self._wb.flushers[m.dev].write_pages(m, runs, self.runner, lambda: self._verify_sync_wait(m), self.task)

    def _verify_sync_wait(self, m) -> None:
        """filemap_fdatawait: the file's pages still under the flusher's writeback."""
        self._wait_bios(m.writing, self._verify_synced)

    def _verify_synced(self) -> None:
        k = self.k
        cost = self.host.costs.get("fio_verify_fsync_return", syscall=k.syscall_exit_cycles)

        def returned() -> None:
            self.sync_log.append(self._sync_start)
            self.sync_log.append(self.runner.clock())
            if self._verify_files:  # the next file's fsync system call
                self.runner.run(self._syscall_cost(), self._verify_next_file)
            else:
                self._verify_sync_next()

        self.runner.run(cost, returned)

    def _syscall_cost(self):
        k = self.k
        return self.host.costs.get("fio_verify_fsync_next", user=k.user_io_cycles, syscall=k.syscall_entry_cycles)

    def _verify_next_file(self) -> None:
        self._sync_start = self.runner.clock()
        self._verify_sync_next()

    def _verify_invalidate(self) -> None:
        """file_invalidate_cache: posix_fadvise(POSIX_FADV_DONTNEED) of each file (its clean pages
        dropped: invalidate_mapping_pages), then fio's first verify read."""
        dropped = self._invalidate_files()
        k = self.k
        c = self._pc.cfg
        cost = self.host.costs.get(
            "fio_verify_invalidate",
            syscall=len(self.mappings()) * (k.syscall_entry_cycles + k.syscall_exit_cycles),
            pagecache=k.invalidate_cache_cycles + c.reclaim_page_cycles * dropped,
        )
        self.runner.run(cost, lambda: self._issue(False))

    def _invalidate_files(self) -> int:
        pc = self._pc
        dropped = 0
        for m, (start, span) in zip(self.mappings(), self._ranges()):
            first = start >> PAGE_SHIFT
            dropped += pc.invalidate(m, first, (span + (1 << PAGE_SHIFT) - 1) >> PAGE_SHIFT)
        return dropped

    def _next_io(self, op: str | None = None) -> tuple[str, int, int]:
        if self.verify.sync_pending:  # the verify phase without writes before it (verify_only, a sync
            self._invalidate_files()  # just made by fsync=N): the files are clean; fio invalidates them
        return self._sv.next_io(op)
