"""Settings that are valid but have no effect: warnings, not errors.

Linux polls for a completion only when the request asks for it (``RWF_HIPRI`` / io_uring IOPOLL:
fio's ``hipri``) *and* the queue has polled hardware queues (``queue/io_poll``). With no polling
job, ``io_poll=1`` changes nothing (every IO completes by interrupt), and ``io_poll_delay``
only chooses how polling is done, so without ``io_poll`` it changes nothing either. The CLI prints
each message as ``stacksim: warning: ...`` on stderr and runs anyway.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable

from models.os.block.queue import QueueConfig

__all__ = ["queue_warnings", "run_warnings", "print_warnings"]


def queue_warnings(queue: QueueConfig, polling_requested: bool, *, who: str = "no job sets hipri=1") -> list[str]:
    """Warnings for ``queue`` when ``polling_requested`` says whether any IO asks to be polled
    (``who`` explains why none does). A completion policy chosen by name (``queue.completion``)
    decides itself, so it gets no warning."""
    if queue.completion != "auto":
        return []
    out = []
    if queue.io_poll and not polling_requested:
        out.append(
            f"queue.io_poll=1 has no effect: {who}, so every IO completes by interrupt "
            "(Linux polls only for HIPRI requests)"
        )
    if queue.io_poll_delay != -1 and not queue.io_poll:
        out.append(
            f"queue.io_poll_delay={queue.io_poll_delay} has no effect without queue.io_poll=1 "
            "(it only selects how polled requests are polled)"
        )
    return out


def run_warnings(cfg) -> list[str]:
    """Warnings for a run's configuration (``stacksim run``): a host's
    (:class:`~scenarios.config.host.RunConfig`); a storage server has none of these settings."""
    if cfg.kind != "host":
        return []
    return queue_warnings(cfg.queue, any(j.hipri for j in cfg.jobs))


def print_warnings(messages: Iterable[str], file=None) -> None:
    """Print each message as ``stacksim: warning: MESSAGE`` (stderr by default)."""
    out = sys.stderr if file is None else file
    for m in messages:
        print(f"stacksim: warning: {m}", file=out)
