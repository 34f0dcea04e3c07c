"""User-space IO engines: the fio job threads that submit IOs and wait for or reap their
completions (synchronous ``psync``/``sync``/``pvsync2`` in :mod:`.sync_io`, asynchronous ``libaio``
and ``io_uring`` in :mod:`.async_io`, fio's kernel-less ``null`` in :mod:`.null_io`), and the trace
replayer (:mod:`.replay`). They run on the
host's CPUs as tasks of :mod:`models.os.sched` and issue requests into :mod:`models.os.blk`."""

#: engines whose call waits for the IO (one IO in flight per thread; fio's iodepth does not apply)
SYNC_ENGINES = ("psync", "sync", "pvsync2")
#: engines that submit and reap separately (their completions are reaped by the engine, not waited
#: for by a sleeping task)
ASYNC_ENGINES = ("libaio", "io_uring", "io_uring_cmd", "null")
#: every modelled fio ioengine
MODELLED_ENGINES = SYNC_ENGINES + ASYNC_ENGINES
