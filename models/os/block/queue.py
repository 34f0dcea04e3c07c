"""Per-device block-queue settings, named after ``/sys/block/<dev>/queue/*``."""

from __future__ import annotations

from typing import Literal, Union

from pydantic import Field, field_validator

from simcore.config import Model


class QueueConfig(Model):
    io_poll: bool = Field(False, description="queue/io_poll: HIPRI requests may poll (polled hardware queues exist)")
    io_poll_delay: int = Field(
        -1, description="queue/io_poll_delay: -1 classic polling, 0 adaptive hybrid, N>0 fixed N us sleep"
    )
    scheduler: str = Field("none", description="queue/scheduler: the blk-mq IO scheduler")
    iosched: dict[str, Union[int, float, str]] = Field(
        default_factory=dict, description="queue/iosched/* tunables of the scheduler"
    )
    nr_requests: int = Field(
        1023,
        ge=1,
        le=10240,
        description="queue/nr_requests: driver tags per hardware queue (at most"
        " BLK_MQ_MAX_DEPTH = 10240, blk-mq's limit)",
    )
    max_sectors_kb: int = Field(128, ge=4, description="queue/max_sectors_kb: largest request merging may build, KiB")
    read_ahead_kb: int = Field(
        128,
        ge=0,
        description="queue/read_ahead_kb: the largest readahead window of a buffered reader, KiB (the"
        " bdi's ra_pages; include/linux/pagemap.h VM_READAHEAD_PAGES = 128 KiB); 0: no readahead",
    )
    nomerges: int = Field(
        0, ge=0, le=2, description="queue/nomerges: 0 all merges, 1 only simple one-hit merges, 2 none"
    )
    completion: str = Field(
        "auto",
        description="'auto' = Linux rules (io_poll, io_poll_delay, hipri); or a registered completion policy name",
    )
    completion_params: dict[str, Union[int, float, str, bool]] = Field(
        default_factory=dict,
        description="parameters of the completion policy that 'completion' names, by the names of its"
        " Params model (a plug-in's: queue.completion_params.NAME=VALUE)",
    )
    sched_dispatch: Literal["kblockd", "direct"] = Field(
        "kblockd",
        description="with an IO scheduler, an unplugged request (fewer than 3 submitted together) is dispatched"
        " from the kblockd worker of its CPU, as in 5.x (blk_mq_sched_insert_request(..., async=true):"
        " a kworker wake-up and switch before the doorbell); 'direct': from the submitting context,"
        " as a plugged batch is",
    )
    hybrid_stats: Literal["rearm", "once"] = Field(
        "rearm",
        description="hybrid polling statistics: 'rearm' a 100 ms window whenever none is active (5.x),"
        " or collect 'once'",
    )

    @field_validator("io_poll_delay")
    @classmethod
    def _delay(cls, v: int) -> int:
        if v < -1:
            raise ValueError("io_poll_delay must be -1 (classic), 0 (adaptive) or a positive number of us")
        return v
