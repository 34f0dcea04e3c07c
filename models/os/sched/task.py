"""Threads (tasks) as the per-CPU scheduler sees them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Final

if TYPE_CHECKING:
    from models.os.interfaces import RunQueue

RUNNING: Final = "running"
RUNNABLE: Final = "runnable"
SLEEPING: Final = "sleeping"
#: woken from another CPU, on its way to that CPU's runqueue (the IPI or wake list in flight):
#: Linux's TASK_WAKING, which a second try_to_wake_up finds not sleeping and leaves alone
WAKING: Final = "waking"
DEAD: Final = "dead"

#: sched_prio_to_weight (kernel/sched/core.c): the CFS load weight of nice -20 .. 19 (each step
#: ~1.25x, so one nice level is ~10% of CPU between two busy tasks)
NICE_WEIGHTS = (
    88761,
    71755,
    56483,
    46273,
    36291,
    29154,
    23254,
    18705,
    14949,
    11916,
    9548,
    7620,
    6100,
    4904,
    3906,
    3121,
    2501,
    1991,
    1586,
    1277,
    1024,
    820,
    655,
    526,
    423,
    335,
    272,
    215,
    172,
    137,
    110,
    87,
    70,
    56,
    45,
    36,
    29,
    23,
    18,
    15,
)
NICE_0_LOAD: Final = 1024


def nice_vscale(nice: int) -> float:
    """A task's vruntime per ns of CPU time at ``nice`` (-20..19): NICE_0_LOAD / its load weight."""
    return NICE_0_LOAD / NICE_WEIGHTS[nice + 20]


def task_load(task: Task) -> float:
    """The task's load weight (sched_prio_to_weight: 1024 at nice 0)."""
    return NICE_0_LOAD / task.vscale


def kernel_thread(all_tasks: list, name: str, cpu: int, nice: int = -20) -> Task:
    """A per-CPU kernel thread (a kworker, the stopper), asleep since boot, pinned to ``cpu`` and
    added to ``all_tasks`` (the host's list; its index is the thread's id). Its first wake-up
    places it at the queue's ``min_vruntime`` minus the sleeper credit (CFS place_entity), as for
    any long sleeper, or with no lag at the queue's average (EEVDF). At nice -20 (WQ_HIGHPRI
    workers; the stop class, which runs before any CFS task) it preempts a nice-0 task at its next
    preemption point on CFS; on EEVDF when it is the pick: its deadline, a request at 1/87 of the
    nice-0 weight, is the earliest, unless the running task is eligible and still protected
    (RUN_TO_PARITY)."""
    task = Task(len(all_tasks), name, cpu, job=-1)
    task.kthread = True
    task.vscale = nice_vscale(nice)
    task.state = SLEEPING
    task.vruntime = -1e18
    all_tasks.append(task)
    return task


class Task:
    """A thread. Its program is a chain of callbacks: whenever the scheduler switches it in, it
    calls ``resume`` (set by whoever put the task to sleep or preempted it)."""

    __slots__ = (
        "tid",
        "name",
        "job",
        "cpu",
        "state",
        "resume",
        "iowait",
        "vruntime",
        "ran_since",
        "nvcsw",
        "nivcsw",
        "usr_ns",
        "sys_ns",
        "exec_ns",
        "ioprio",
        "error",
        "affinity",
        "owner",
        "nr_migrations",
        "last_ran",
        "slept_on",
        "kthread",
        "vscale",
        "io_tid",
        "warm_cpu",
        "warm_mark",
        "deadline",
        "vlag",
        "slice_ns",
        "custom_slice_ns",
        "protect",
        "delayed",
    )

    def __init__(self, tid: int, name: str, cpu: int, job: int | None = None):
        self.tid = tid
        self.name = name
        self.job = job  # the fio job index of its thread (-1: a kernel thread; None: neither)
        self.io_tid = tid  # the thread its IOs are accounted to (itself; a submit worker: the submitter)
        self.cpu = cpu  # the CPU whose runqueue holds the task
        #: CPUs the task may run on (sched_setaffinity); None: pinned to ``cpu`` (kernel threads,
        #: fio's cpus_allowed_policy=split, engines whose requests are bound to the CPU's queues)
        self.affinity: frozenset[int] | None = None
        #: the engine thread behind the task (``can_migrate()``, ``migrated(runner)``), if movable
        self.owner: Any = None
        self.nr_migrations = 0  # se.nr_migrations
        self.last_ran = 0.0  # when it last left a CPU (task_hot: cache-hot for migration_cost_ns)
        #: cache warmth: the CPU it last left and that CPU's cumulative task run time then
        #: (Cfs.run_ns_total): the other work since is what displaced its lines there
        self.warm_cpu = -1
        self.warm_mark = 0.0
        self.slept_on: RunQueue | None = None  # the runner whose nr_iowait counts it while it sleeps in IO wait
        #: a kernel thread (kworker, io_uring SQ thread): switching to or from it needs no address
        #: space switch (lazy TLB), see KernelCosts.kthread_switch_cycles
        self.kthread = False
        #: vruntime per ns of CPU time: NICE_0_LOAD / the task's load weight (1 at nice 0; a nice -20
        #: kworker of a WQ_HIGHPRI workqueue: 1024 / 88761, sched_prio_to_weight)
        self.vscale = 1.0
        self.state = RUNNABLE
        self.resume: Callable | None = None
        self.iowait = False
        self.vruntime = 0.0  # ns of CPU time received, x vscale (CFS)
        # EEVDF (Linux 6.6+, models.os.sched.eevdf): the virtual deadline v + r / w of the current
        # request, the lag V - v saved at dequeue (se->vlag), the request r (se->slice), a request
        # of the task's own (sched_attr.sched_runtime, 6.12; 0: the base slice), RUN_TO_PARITY's
        # protection of its slice (set at its pick), and its dequeue delayed (DELAY_DEQUEUE, 6.12:
        # asleep, still on its queue until it is picked or woken)
        self.deadline = 0.0
        self.vlag = 0.0
        self.slice_ns = 0.0
        self.custom_slice_ns = 0.0
        self.protect = False
        self.delayed = False
        self.ran_since = 0.0
        self.ioprio = 0  # the io_context's IO priority (ioprio_set); 0: none (best effort, level 4)
        self.error = 0  # errno the job ended with (fio's td->error; 0: none)
        self.nvcsw = 0  # voluntary context switches (getrusage ru_nvcsw)
        self.nivcsw = 0  # involuntary context switches (ru_nivcsw)
        self.usr_ns = 0.0  # CPU time in user code at the frequency it ran at (getrusage ru_utime)
        self.sys_ns = 0.0  # in the kernel for this task: syscalls, its switches, polling (ru_stime)
        self.exec_ns = 0.0  # time on a CPU (sum_exec_runtime: includes IRQs that hit it)

    def counters(self) -> tuple:
        return (self.nvcsw, self.nivcsw, self.usr_ns, self.sys_ns, self.exec_ns)
