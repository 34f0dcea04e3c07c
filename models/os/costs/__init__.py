"""The cost tables: what each stretch of kernel code costs in cycles and instructions.

``bundle`` is the hot path's cost bundle (per-layer cycles of one uninterrupted stretch of code),
``tables`` the platform's ``kernel`` settings (:class:`~models.os.costs.tables.KernelCosts`, each
field's default sourced in its description; its fields in groups by layer, one base class each:
``io_path`` (system calls, file system, blk-mq, NVMe, io_uring and libaio, polling), ``scheduling``
(IRQ entry, the scheduler, IPIs, timers), ``user_space`` (fio's SPDK engine, verify, protection
information)) and the run's table of bundles built from them, ``memops`` the memory operations each
kind of work touches, by kernel source directory.
"""
