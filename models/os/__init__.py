"""The kernel: Linux's IO path, laid out as its source tree (docs/architecture.md has the table from
Linux's files to these modules).

==================  =======================================================  ======================
package             what it models                                           Linux
==================  =======================================================  ======================
``sched/``          the per-CPU runner chain (segments and CPU time, busy    ``kernel/sched/``
                    polling, the idle loop and tick, CFS and context
                    switches, wake-ups and placement), tasks, load
                    balancing, the stopper thread
``time/``           a CPU's hrtimers (a level of the runner chain)           ``kernel/time/``
``irq/``            hard-IRQ entry and exit (a level of the runner chain),   ``kernel/irq*``,
                    interrupt work, IPIs                                     ``kernel/softirq.c``
``locking/``        spinlocks, their waiters and cache-line hand-offs        ``kernel/locking/``
``block/``          blk-mq, the elevator interface, plugging, kblockd,       ``block/``
                    requests, queue settings and maps, the completion
                    rule, zone reports, calibrated-interrupt annotations
``drivers/``        the NVMe PCI driver, vfio-pci                            ``drivers/nvme``,
                                                                             ``drivers/vfio``
``mm/``             page cache, readahead, writeback, reclaim, folio waits   ``mm/``
``fs/``             file layout and extent lookups; libaio's kernel side     ``fs/``, ``fs/aio.c``
``io_uring/``       rings, the SQPOLL thread, io-wq                          ``io_uring/``
``costs/``          cost bundles, the platform's kernel costs, memory ops    (the cost tables)
==================  =======================================================  ======================

``interfaces`` is the header of what one part needs of another (the runner, the balancer, a queue
view, a driver), declared below both so that imports run one way; ``kernel_version`` gates the
features by release. Layers, bottom to top (setup.cfg ``[importlinter:contract:kernel-tree]``):
kernel_version < costs | interfaces < locking < sched : irq : time < block < drivers < mm < fs <
io_uring.
"""
