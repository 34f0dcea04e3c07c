"""``io_uring/``: the kernel side of io_uring: its SQPOLL thread (``sqpoll.c``)."""
