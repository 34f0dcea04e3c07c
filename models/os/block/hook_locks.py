"""The locks a blk-mq hardware context's hooks take (models.os.block.blk_mq): each as a compiled
:class:`LockTake`, built once when the context is set up, and the elevator's lock uses
(``IoScheduler.merge_locks`` ... ``complete_locks``: :class:`~models.os.block.elevator.LockUse`)
turned into them by scope: one lock per device and name (bfq's ``bfqd->lock``, mq-deadline's
``dd->lock``), else one per hardware context (and ``:ctx`` for a CPU's software context)."""

from __future__ import annotations

from typing import Any, Final

from models.os.block.elevator import CTX, DEVICE, IoScheduler, LockUse
from models.os.costs.bundle import LAYER_INDEX
from models.os.locking.spinlock import SpinLock

#: cache lines a hand-off of each blk-mq / driver lock moves: the tag sbitmap word (the allocation
#: hint is per CPU), and nvmeq->sq_lock with the queue's tail fields (the SQ slot itself was last
#: read by the device, not written by another CPU)
TAG_LINES: Final = 1.0
SQ_LOCK_LINES: Final = 2.0


class LockTake:
    """One lock a hook takes per request, with what each take needs fixed when the hardware
    context is set up: the ``lock``, the cycles it is held (``hold_cycles``), the data ``items`` its
    section touches (:meth:`SpinLock.data`), whether the use is an ``atomic`` on the lock's data
    from outside the lock, and the stack ``layer`` its waits are charged to (the lock's). A compiled
    object of typed fields: the hot path reads each as a native value (a tuple of them would be
    type-checked and unboxed item by item at every take)."""

    __slots__ = ("lock", "hold_cycles", "items", "atomic", "layer")

    def __init__(self, lock: SpinLock, hold_cycles: float, items: tuple[int, ...] = (0,), atomic: bool = False):
        self.lock = lock
        self.hold_cycles = hold_cycles
        self.items = items
        self.atomic = atomic
        self.layer: int = lock.layer


#: a hook's locks, as blk-mq acquires them, in turn
Locks = tuple[LockTake, ...]


def walks(u: LockUse) -> bool:
    """Whether the section of lock use ``u`` walks the scheduler's tree: its own ``walk``, or any of
    its data items' lines per level (bfq's service tree is one of the items its hooks touch)."""
    if u.walk:
        return True
    for item in u.data:
        if item[2]:
            return True
    return False


def new_lock(u: LockUse, pkg: Any, elv: IoScheduler) -> SpinLock:
    """The lock of scheduler lock use ``u``, walking ``elv``'s tree if the use says so. (A module
    function: a second closure in hook_locks would make a reference cycle of the compiled closures.)"""
    return SpinLock(u.name, LAYER_INDEX["iosched"], u.lines, pkg, u.walk, elv.tree_levels if walks(u) else None)


def hook_locks(blk: Any, h: Any, dev: int) -> None:
    """The locks of hardware context ``h`` (of device ``dev``) of blk-mq ``blk``: its elevator
    hooks' (``h.merge``, ``h.ins``, ``h.disp``, ``h.done``), by scope."""
    pkg = blk.host.pkg
    own: dict[str, SpinLock] = {}
    elv = h.elv

    def locks(uses: tuple[LockUse, ...], cycles: float) -> Locks:
        out = []
        for u in uses:
            if u.scope == DEVICE:
                key = (dev, u.name)
                lock = blk._dev_locks.get(key)
                if lock is None:
                    lock = blk._dev_locks[key] = new_lock(u, pkg, elv)
            else:  # HCTX, or CTX (a CPU's software context: one per hardware context here)
                key2 = u.name + (":ctx" if u.scope == CTX else "")
                lock = own.get(key2) or own.setdefault(key2, new_lock(u, pkg, elv))
            if lock.levels is None and walks(u):  # a later use of the lock walks the tree
                lock.levels = elv.tree_levels
            out.append(LockTake(lock, u.held * cycles, lock.data(u.data), u.atomic))
        return tuple(out)

    cls = blk._sched_cls
    h.merge = locks(cls.merge_locks, blk.insert_cycles)
    h.ins = locks(cls.insert_locks, blk.insert_cycles)
    h.disp = locks(cls.dispatch_locks, blk.dispatch_cycles)
    h.done = locks(cls.complete_locks, blk.complete_cycles)
