"""How a block trace is replayed (models.ioengines.replay), as configuration data."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from simcore.config import Model

__all__ = ["ReplaySettings"]


class ReplaySettings(Model):
    """How the trace is replayed (``--set replay.KEY=VALUE``)."""

    threads: int | None = Field(
        None, ge=1, description="submitter threads (default: one per logical CPU); thread i runs on CPU i % cpus"
    )
    hipri: bool = Field(
        False, description="poll for completions (io_uring IOPOLL, RWF_HIPRI semantics; needs queue.io_poll=1)"
    )
    assign: Literal["round-robin", "volume"] = Field(
        "round-robin",
        description="which thread submits a batch: round-robin over threads, or one thread per trace volume",
    )
    lookahead: int | None = Field(
        None, ge=1, description="batches read ahead of the submissions (default: one per thread)"
    )
    timer_slack_ns: float = Field(
        0.0, ge=0, description="slack added to the timeout of a thread waiting for its next due IO, ns"
    )
    registerfiles: bool = Field(False, description="io_uring registered files (no fget/fput per IO)")
    fixedbufs: bool = Field(False, description="io_uring fixed buffers (no page pinning per IO)")
