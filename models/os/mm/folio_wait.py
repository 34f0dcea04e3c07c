"""A task asleep until some bios are done: ``folio_wait_locked`` on the pages a read needs
(mm/filemap.c, Linux 6.1: ``folio_wait_bit_common`` puts the task to sleep in ``io_schedule`` until
the read's end_io unlocks the folio) and ``filemap_fdatawait`` on a file's writeback
(``__filemap_fdatawait_range``: ``folio_wait_writeback`` on each folio under writeback).

Mixed into the class of a task's owner (a buffered fio thread, an io-wq worker): it has ``runner``
(the CPU's runner it runs on) and ``task``, and binds ``_batch_done_cb = self._batch_done`` once.
"""

from __future__ import annotations


class BioWaits:
    """A task that sleeps in io_schedule until some bios are done (folio_wait_locked on the pages
    a call needs, filemap_fdatawait on a file's writeback), mixed into a thread's class: each bio's
    completion counts down, the last one wakes the task. The class binds ``_batch_done_cb`` once."""

    def _wait_bios(self, bios, then) -> None:
        """``then`` once every one of ``bios`` is done: at once if none is pending, else after a sleep."""
        waits = [b for b in bios if not b.done]
        if not waits:
            then()
            return
        self._waits = len(waits)
        for b in waits:
            b.waiters.append(self._batch_done_cb)
        self.runner.sleep(then, True)

    def _batch_done(self, runner) -> None:
        self._waits -= 1
        if self._waits == 0:
            runner.wake(self.task)
