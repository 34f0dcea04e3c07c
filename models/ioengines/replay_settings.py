"""How a block trace is replayed (models.ioengines.replay), as configuration data."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from simcore.config import Model

__all__ = ["ReplaySettings"]


class ReplaySettings(Model):
    """How the trace is replayed (``--set replay.KEY=VALUE``)."""

    threads: int | None = Field(
        None,
        ge=1,
        le=4096,
        description="submitter threads (default: one per logical CPU, at most 4096 as fio's jobs); thread i runs"
        " on CPU i % cpus",
    )
    hipri: bool = Field(
        False, description="poll for completions (io_uring IOPOLL, RWF_HIPRI semantics; needs queue.io_poll=1)"
    )
    assign: Literal["round-robin", "volume"] = Field(
        "round-robin",
        description="which thread submits a batch: round-robin over threads, or one thread per trace volume",
    )
    lookahead: int | None = Field(
        None, ge=1, le=4096, description="batches read ahead of the submissions (default: one per thread)"
    )
    timer_slack_ns: float = Field(
        0.0, ge=0, description="slack added to the timeout of a thread waiting for its next due IO, ns"
    )
    think_sleep_min_ns: float = Field(
        50_000.0,
        ge=0,
        description=(
            "closed replay: a think time (the trace's gap from an IO's completion to its stream's next issue, "
            "less the path the model runs itself) at least this long is slept (nanosleep until the IO is due), a "
            "shorter one computed in user space (fio's thinktime_spin), ns. Estimate: Linux's default timer slack "
            "of a task is 50 us (init_task.timer_slack_ns), so an application that sleeps overshoots by up to that "
            "much: a shorter gap was most likely work, not a sleep"
        ),
    )
    registerfiles: bool = Field(False, description="io_uring registered files (no fget/fput per IO)")
    fixedbufs: bool = Field(False, description="io_uring fixed buffers (no page pinning per IO)")
