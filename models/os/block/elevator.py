"""The IO-scheduler interface of blk-mq (struct elevator_mq_ops, reduced); implementations live in
``policies/io_scheduler/`` and are registered there by name.

A scheduler instance is the elevator of one request queue (the kernel keeps one per device and
shares it between the device's hardware queues; one per hardware queue also works, with fairness
and token pools then scoped to that queue). blk-mq drives it with:

* ``try_merge(req, max_bytes)`` (optional, before insert): return the queued request that ``req``
  was merged into (then ``req`` is not inserted and completes with that request), or None;
* ``insert(req)`` when a request arrives, then ``dispatch()`` repeatedly while driver tags are
  free until it returns None;
* ``completed(req)`` when a dispatched request finishes (frees kyber tokens, feeds statistics);
* ``has_work()``: requests are queued (dispatch may still return None: throttled or idling);
* ``on_ready``: a callback blk-mq sets; the scheduler calls it (through ``kick()``) when it can
  dispatch again without a new insert or completion (bfq's idle timer fired, kyber's depth grew).
  ``kick()`` is only called from the scheduler's own timer callbacks, never from inside
  insert/dispatch/completed, so ``on_ready`` may run the queue directly.

Locks (``merge_locks``, ``insert_locks``, ``dispatch_locks``, ``complete_locks``): what each hook
holds per request (:class:`LockUse`), as a share of the hook's cycles; blk-mq turns each into a
:class:`~models.os.locking.spinlock.SpinLock` of the right scope (one per device's elevator, per hardware
context, or per software context) and acquires it where the hook runs, so contention costs (spin,
cache-line hand-offs) emerge from the CPUs that take it. The merge attempt (``bio_merge``, taken
for every bio while an elevator is attached) is priced out of the insert hook's cycles.

Tunables are the scheduler's sysfs attributes (``/sys/block/<dev>/queue/iosched/*``), given in the
kernel's sysfs units; each class declares them in ``TUNABLES`` and finds the parsed values in
``self.params``. ``insert_cycles``/``dispatch_cycles``/``complete_cycles`` are the CPU cost per
request, charged to the ``iosched`` layer (platform calibration parameters, not tunables).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Optional

from simcore.errors import ConfigError

if TYPE_CHECKING:
    from models.os.block.host import BlockHost

SECTOR = 512
"""Bytes per sector: the unit of positions, budgets and merges in the block layer."""

REQ_ASYNC = 1 << 0
"""``Request.flags`` bit of an asynchronous write (buffered writeback). Reads, and writes of the
O_DIRECT engines (which set REQ_SYNC in the kernel), are synchronous: ``flags`` 0 means sync."""


#: IO priority classes (include/uapi/linux/ioprio.h): a priority value is class << 13 | level
IOPRIO_CLASS_NONE, IOPRIO_CLASS_RT, IOPRIO_CLASS_BE, IOPRIO_CLASS_IDLE = 0, 1, 2, 3
IOPRIO_CLASS_SHIFT = 13
#: the level of a task without an explicit priority (IOPRIO_NORM; nice 0)
IOPRIO_NORM = 4


def ioprio_value(cls: int, level: int) -> int:
    """``IOPRIO_PRIO_VALUE(class, level)``."""
    return cls << IOPRIO_CLASS_SHIFT | level


def ioprio_class(req) -> int:
    """The request's effective class: its own, else its task's (blk-mq's bio_set_ioprio takes the
    io_context's priority for a bio without one), NONE counting as best effort."""
    value = req.ioprio or getattr(req.task, "ioprio", 0)  # (a task key without one: none)
    return (value >> IOPRIO_CLASS_SHIFT) or IOPRIO_CLASS_BE


def ioprio_level(value: int) -> int:
    """The level of a priority value (IOPRIO_NORM for none)."""
    return value & ((1 << IOPRIO_CLASS_SHIFT) - 1) if value >> IOPRIO_CLASS_SHIFT else IOPRIO_NORM


def is_sync(req) -> bool:
    """``op_is_sync``: reads always; writes unless flagged asynchronous."""
    return req.op == "read" or not (req.flags & REQ_ASYNC)


#: the hardware contexts a completion runs (:meth:`IoScheduler.restart_scope`): none, the completed
#: request's, every one of the device's
RUN_NONE, RUN_HCTX, RUN_DEVICE = 0, 1, 2

#: scopes of a scheduler's lock: one per device (the request queue's elevator, shared by every
#: CPU), per hardware context, per software context (a CPU's ``blk_mq_ctx``; this model maps each
#: CPU to its own hardware context, so a software context is its hardware context's)
DEVICE, HCTX, CTX = "device", "hctx", "ctx"


#: block-layer data an elevator's merge, insert and dispatch sections touch under its lock (items of
#: :attr:`LockUse.data`): q->last_merge (read by elv_merge, set by the insert, cleared when its request
#: leaves; a line of struct request_queue) and the request's bucket of the elevator's merge hash
#: (elv_rqhash_find / _add / _del, Linux 6.1 block/elevator.c: 64 buckets, 8 lines)
LAST_MERGE = ("q->last_merge", 1.0, 0.0)
MERGE_HASH = ("elevator hash", 1.0, 0.0)


@dataclass(frozen=True)
class LockUse:
    """One lock a scheduler hook takes per request: the kernel's ``name`` for it (uses of one name
    and scope share the lock), its ``scope`` (:data:`DEVICE`, :data:`HCTX`, :data:`CTX`), the share of
    the hook's per-request cycles spent holding it (``held``, 0..1), the cache ``lines`` its
    section writes, which follow the lock to the next holder's CPU, and ``walk``: the lines per
    level of the scheduler's tree (:meth:`IoScheduler.tree_levels`) the section walks, which follow
    it too (the nodes are requests that other CPUs wrote). Uses of one name share one lock, with
    the first use's ``lines`` and ``walk``."""

    name: str
    scope: str
    held: float
    lines: float = 1.0
    walk: float = 0.0
    #: the data the section touches, item by item: (name, lines, lines per tree level); items of
    #: one name are one piece of data of the lock (each moves to the CPU that touches it, whoever
    #: holds the lock); empty: the lock's ``lines`` and ``walk``, moved with every hand-off
    data: tuple[tuple[str, float, float], ...] = ()
    #: not a section under the lock: an atomic update of its ``data`` from outside it (the CPU
    #: fetches the items' lines and holds them after, no one waits)
    atomic: bool = False


@dataclass(frozen=True)
class Tunable:
    """One sysfs attribute: integer default in ``unit``, accepted range [lo, hi]."""

    default: int
    unit: str
    doc: str
    lo: int = 0
    hi: Optional[int] = None


class IoScheduler:
    name = "abstract"
    insert_cycles = 0.0
    dispatch_cycles = 0.0
    complete_cycles = 0.0
    #: locks held per request by the merge attempt (a share of insert_cycles), the insert, the
    #: dispatch and the completion hooks (see the module docstring); none by default
    merge_locks: tuple[LockUse, ...] = ()
    insert_locks: tuple[LockUse, ...] = ()
    dispatch_locks: tuple[LockUse, ...] = ()
    complete_locks: tuple[LockUse, ...] = ()
    TUNABLES: dict[str, Tunable] = {}
    """sysfs name -> :class:`Tunable`; anything else in the tunables dict is a ConfigError."""
    zone_bytes: int = 0
    """The device's zone size when it is zoned (the queue's ``chunk_sectors``, set by blk-mq for a
    zoned namespace), 0 otherwise: schedulers that lock zones for writes read it."""

    def __init__(self, host: BlockHost, tunables: dict):
        self.host = host
        self.params = self.parse_tunables(tunables or {})
        #: Set by blk-mq: "run the hardware queue(s) again". Called via :meth:`kick`.
        self.on_ready: Optional[Callable[[], None]] = None

    # ------------------------------------------------------------- interface
    def insert(self, req) -> None:
        raise NotImplementedError

    def dispatch(self):
        raise NotImplementedError

    def dispatch_ready(self):
        """:meth:`dispatch` when :meth:`has_work` has just said there is work (blk-mq asks it so
        for a scheduler that issues directly, ``direct_issue``): a scheduler may make it a cheaper
        callable that assumes the work is there."""
        return self.dispatch()

    def completed(self, req) -> None:
        pass

    def has_work(self) -> bool:
        raise NotImplementedError

    def tree_levels(self) -> float:
        """The depth of the request tree the scheduler's locked sections walk, now (log2 of the
        requests in an rb-tree: ``elv_rb_add`` / ``elv_rb_find`` descend one node per level);
        priced per :attr:`LockUse.walk` on every hand-off of the lock. 0 for a scheduler without."""
        return 0.0

    def restart_scope(self, req) -> int:
        """After :meth:`completed` (``req``): the hardware contexts the completion must run for the
        queued requests to go on, a ``RUN_*``. A completion does not dispatch by itself in the
        kernel (6.1 ``blk_mq_free_request``: ``blk_mq_sched_restart`` runs the context only when its
        SCHED_RESTART bit is set, which blk-mq handles); a scheduler that holds requests back asks
        for a run in its own completion hook (bfq's ``bfq_schedule_dispatch``, kyber's token
        wake-up). Default, for a plug-in: every context of the device while requests are queued
        (never stalls)."""
        return RUN_DEVICE if self.has_work() else RUN_NONE

    def try_merge(self, req, max_bytes: Optional[int] = None):
        """Merge ``req`` into a queued request and return that request, or None (no merge);
        ``max_bytes`` is the queue's ``max_sectors_kb`` limit in bytes (None: no limit)."""
        return None

    # ------------------------------------------------------------- helpers
    @property
    def now(self) -> float:
        """Current simulated time in ns."""
        return self.host.engine.now

    def kick(self) -> None:
        """Ask blk-mq to run the queue again (blk_mq_run_hw_queues)."""
        if self.on_ready is not None:
            self.on_ready()

    @classmethod
    def parse_tunables(cls, tunables: dict) -> dict[str, int]:
        """Defaults overridden by ``tunables``; ConfigError on an unknown name or a bad value.
        blk-mq may call it at configuration time to reject bad input before the run."""
        params = {k: t.default for k, t in cls.TUNABLES.items()}
        for key, raw in tunables.items():
            spec = cls.TUNABLES.get(key)
            if spec is None:
                valid = ", ".join(sorted(cls.TUNABLES)) or "none"
                close = difflib.get_close_matches(key, cls.TUNABLES, n=1)
                hint = f"; did you mean '{close[0]}'?" if close else ""
                raise ConfigError(f"queue.iosched.{key}: unknown {cls.name} tunable (valid: {valid}){hint}")
            params[key] = _to_int(cls.name, key, raw, spec)
        return params


def _to_int(sched: str, key: str, raw, spec: Tunable) -> int:
    """sysfs stores parse decimal integers; reject anything else and values out of range."""
    if isinstance(raw, bool):
        value = int(raw)
    elif isinstance(raw, int):
        value = raw
    elif isinstance(raw, float) and raw.is_integer():
        value = int(raw)
    elif isinstance(raw, str) and raw.strip().lstrip("+-").isdigit():
        value = int(raw.strip())
    else:
        raise ConfigError(f"queue.iosched.{key}: {sched} expects an integer ({spec.unit}), got {raw!r}")
    if value < spec.lo or (spec.hi is not None and value > spec.hi):
        rng = f"[{spec.lo}, {spec.hi}]" if spec.hi is not None else f">= {spec.lo}"
        raise ConfigError(f"queue.iosched.{key}: {value} out of range {rng} ({spec.unit})")
    return value
