"""EEVDF's arithmetic (Linux 6.6+, 6.12 ``kernel/sched/fair.c``): the weighted average virtual
time of a run queue, eligibility, the virtual deadline, the pick and the placement of a woken task.

The run queue level (models.os.sched.cfs) keeps its entities in three places: the queued tasks
(``rq``), the tasks whose dequeue is delayed (DELAY_DEQUEUE, 6.12: asleep, still competing) and the
running task, whose virtual time runs on between charges (``cur_v``: its ``vruntime`` plus its time
on the CPU since it was last charged, scaled by its weight). The kernel keeps them in an rb-tree
ordered by deadline (6.8+; by vruntime in 6.6, with the earliest deadline of each subtree
augmented) and ``cfs_rq->avg_vruntime`` / ``avg_load`` updated at each enqueue and dequeue; a run
queue here holds a handful of tasks, so each of these functions scans them (the same answer as
the tree's heap search: the eligible entity with the earliest deadline, the first queued on a tie).

- **Weighted average** V = sum w_i v_i / sum w_i over the queued entities and the running one
  (``avg_vruntime``); kept as the sum of w_i (v_i - v0) and the sum of w_i against a base ``v0``.
- **Eligible** (``vruntime_eligible``): lag_i = w_i (V - v_i) >= 0, tested as the kernel does without
  the division: sum w_j (v_j - v0) >= (v_i - v0) sum w_j.
- **Deadline** (``update_deadline``, ``place_entity``): vd_i = v_i + r_i / w_i, the request r_i the
  base slice (``sysctl_sched_base_slice``) or the task's own (``sched_attr.sched_runtime``, 6.12).
- **Lag** (``entity_lag``): V - v_i at dequeue, clamped to +-max(2 r_i, TICK_NSEC) / w_i.
- **Placement** (``place_entity``, PLACE_LAG): v_i = V - vl_i (W + w_i) / W, the lag inflated so that
  it is still vl_i once the task's own weight is in the average; on an empty queue the lag is
  dropped (V is the queue's base). A new task's first deadline is half a request away
  (PLACE_DEADLINE_INITIAL).
"""

from __future__ import annotations

from models.os.sched.task import NICE_0_LOAD, Task

__all__ = ["entity_lag", "is_eligible", "pick_eevdf", "place", "queue_sums"]


def queue_sums(
    queued: list[Task], delayed: list[Task], cur: Task | None, cur_v: float, v0: float
) -> tuple[float, float]:
    """(sum of w_i (v_i - v0), sum of w_i) over the queued, delayed and running (``cur`` at virtual
    time ``cur_v``, if any) entities: ``cfs_rq->avg_vruntime`` and ``avg_load`` with the current
    entity added, as ``avg_vruntime`` and ``vruntime_eligible`` add it."""
    avg = 0.0
    load = 0.0
    for t in queued:
        w = NICE_0_LOAD / t.vscale
        avg += (t.vruntime - v0) * w
        load += w
    for t in delayed:
        w = NICE_0_LOAD / t.vscale
        avg += (t.vruntime - v0) * w
        load += w
    if cur is not None:
        w = NICE_0_LOAD / cur.vscale
        avg += (cur_v - v0) * w
        load += w
    return avg, load


def is_eligible(avg: float, load: float, v: float, v0: float) -> bool:
    """vruntime_eligible: an entity at virtual time ``v`` has received no more than its share
    (V >= v), for sums ``avg``, ``load`` from :func:`queue_sums`."""
    return avg >= (v - v0) * load


def entity_lag(avg: float, load: float, v0: float, task: Task, v: float, tick_ns: float) -> float:
    """entity_lag: V - v, clamped to +-calc_delta_fair(max(2 slice, TICK_NSEC))."""
    lag = (v0 + avg / load if load > 0.0 else v0) - v
    limit = max(2.0 * task.slice_ns, tick_ns) * task.vscale
    return min(max(lag, -limit), limit)


def pick_eevdf(
    queued: list[Task], delayed: list[Task], cur: Task | None, cur_v: float, v0: float, protect: bool
) -> Task | None:
    """pick_eevdf: the eligible entity with the earliest virtual deadline. The running task ``cur``
    (at ``cur_v``) takes part while it is eligible, and wins outright if ``protect`` (RUN_TO_PARITY)
    and its slice is still protected (``Task.protect``: set when it was picked, lost when its
    request is renewed). Without any eligible entity (rounding) the lowest vruntime is taken, as
    6.6's "EEVDF scheduling fail, picking leftmost"."""
    n = len(queued) + len(delayed) + (1 if cur is not None else 0)
    if n == 0:
        return None
    if n == 1:  # "skip eligibility check if there is only one entity"
        if cur is not None:
            return cur
        return queued[0] if queued else delayed[0]
    avg, load = queue_sums(queued, delayed, cur, cur_v, v0)
    if cur is not None and not is_eligible(avg, load, cur_v, v0):
        cur = None
    if protect and cur is not None and cur.protect:
        return cur
    best: Task | None = None
    for group in (queued, delayed):
        for t in group:
            if (best is None or t.deadline < best.deadline) and is_eligible(avg, load, t.vruntime, v0):
                best = t
    if cur is not None and (best is None or cur.deadline < best.deadline):
        return cur
    if best is None:
        for group in (queued, delayed):
            for t in group:
                if best is None or t.vruntime < best.vruntime:
                    best = t
    return best


def place(
    task: Task,
    queued: list[Task],
    delayed: list[Task],
    cur: Task | None,
    cur_v: float,
    v0: float,
    slice_ns: float,
    initial: bool = False,
) -> None:
    """place_entity with PLACE_LAG: ``task`` joins a queue of the given entities (itself not among
    them) with its saved lag ``Task.vlag`` (inflated by (W + w) / W), its request ``slice_ns``
    (Task.slice_ns) and deadline v + r / w (half a request for a new task, PLACE_DEADLINE_INITIAL)."""
    avg, load = queue_sums(queued, delayed, cur, cur_v, v0)
    vruntime = v0 + avg / load if load > 0.0 else v0
    if load > 0.0:
        w = NICE_0_LOAD / task.vscale
        vruntime -= task.vlag * (load + w) / load
    task.vruntime = vruntime
    task.slice_ns = slice_ns
    vslice = slice_ns * task.vscale
    if initial:
        vslice /= 2.0
    task.deadline = vruntime + vslice
    task.protect = False
