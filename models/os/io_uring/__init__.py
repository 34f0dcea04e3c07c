"""``io_uring/``: the kernel side of io_uring: its SQPOLL thread (``sqpoll.c``) and io-wq, the
workers that run a request that would block (``io-wq.c``)."""
