"""``kernel/sched``: the per-CPU runner chain (segments of work and CPU-time accounting, busy
polling, the idle loop and the tick, the CFS run queue and context switches, wake-ups and where a
woken task runs), tasks, scheduler-wide load balancing and the stopper thread.

The runner is one object per logical CPU built as a single-inheritance chain, one module per seam
(:mod:`models.os.sched.execution` has the table); two of its levels are other subsystems' and live in
their packages: the hrtimer level (:mod:`models.os.time.hrtimer`) and the hard-IRQ level
(:mod:`models.os.irq.entry`). The chain imports downward only: a level names the levels above it
through the hooks :class:`~models.os.sched.execution.Execution` declares, and the other subsystems
through the header :mod:`models.os.interfaces`.
"""
