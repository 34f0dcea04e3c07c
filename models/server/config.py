"""Configuration of the NVMe-oF target runtime (SPDK-style reactors and lightweight threads).

A frozen pydantic model with ``extra="forbid"``; the run configuration
(:class:`scenarios.config.server.ServerRunConfig`) holds it as its ``server`` section.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from simcore.config import Model

#: SANDMAN's measured costs (scenarios/data/reference/sandman_polling_server.yaml, "scheduler_overheads",
#: "software_wakeup_us"); tests/test_server.py checks these against the file.
THREAD_MOVE_NS = 106.52
STATS_FILL_NS = 79.03
SCHEDULER_RUN_NS = 1990.0
KERNEL_WAKEUP_US = 27.0


class ServerConfig(Model):
    """The NVMe-oF target (SPDK-style): reserved cores, lightweight threads, per-request cycles."""

    policy: str = Field("spdk-static", description="core scheduling policy (policies/core_scheduling)")
    cores: int = Field(
        48,
        ge=1,
        description="reserved logical cores (one reactor each), taken as SMT pairs: physical"
        " cores 0..cores/2-1 and their siblings",
    )
    threads: int = Field(48, ge=1, description="lightweight threads (NVMe-oF poll groups)")
    rx_cycles: float = Field(
        1800.0,
        ge=0,
        description="target-side work per request on receive: RDMA completion, capsule"
        " parse, bdev + NVMe submit (cycles)",
    )
    cq_cycles: float = Field(
        1260.0,
        ge=0,
        description="target-side work per request on completion: NVMe completion,"
        " response capsule, RDMA data write + send (cycles)",
    )
    thread_poll_cycles: float = Field(
        150.0, ge=0, description="one empty pass of a thread's pollers: RDMA CQ, message ring, timers (cycles)"
    )
    qpair_poll_cycles: float = Field(
        16.0, ge=0, description="checking one NVMe CQ (phase bit, cached while empty) in a thread's poll pass (cycles)"
    )
    reactor_loop_cycles: float = Field(
        300.0, ge=0, description="reactor loop overhead per iteration: event ring, bookkeeping (cycles)"
    )
    thread_move_ns: float = Field(
        THREAD_MOVE_NS, ge=0, description="moving a thread between reactors via the event queue, ns"
    )
    stats_fill_ns: float = Field(
        STATS_FILL_NS, ge=0, description="each awake reactor filling its statistics per scheduling period, ns"
    )
    scheduler_run_ns: float = Field(
        SCHEDULER_RUN_NS, ge=0, description="the scheduling algorithm on the main core per period, ns"
    )
    kernel_wakeup_us: float = Field(
        KERNEL_WAKEUP_US,
        ge=0,
        description="waking a reactor sleeping in the kernel (epoll): syscalls, interrupt, scheduler, us",
    )
    commit_horizon_us: float = Field(
        30.0,
        gt=0,
        description="a reactor takes work at most this far ahead; beyond it"
        " requests wait in their thread's queues (and move with the thread)",
    )
    poll_batch: int = Field(
        32, ge=1, description="items a saturated reactor takes from one thread per turn (poller batch)"
    )
    in_capsule_bytes: int = Field(
        4096,
        ge=0,
        description="in-capsule data size (SPDK's RDMA default): a larger write's"
        " data is pulled by an RDMA READ (a network round trip + transfer) before the NVMe submit",
    )
    processing_activity: float | None = Field(
        None,
        ge=0,
        description="dynamic-power activity of request processing on a reactor (None: the poll-loop activity,"
        " as measured: busy polling draws the same power at any load)",
    )

    @model_validator(mode="after")
    def _check(self):
        if self.cores % 2:
            raise ValueError("cores must be even (reserved as SMT pairs)")
        return self
