"""Configuration of a storage-server run: platform, target (:class:`~models.server.config.ServerConfig`),
policy, workload, metrics, seed.

Every section is a frozen pydantic model with ``extra="forbid"`` (a misspelt key is an error that
names it). Policy parameters are validated by the selected policy's own ``Params`` model.
"""

from __future__ import annotations

from typing import Annotated, Any, Union

from pydantic import Field

from models.platform import PlatformConfig
from models.server.config import ServerConfig
from scenarios.config.server_workloads import BurstWorkload, StableWorkload, TraceWorkload
from simcore.config import Model, Seed


class MetricsConfig(Model):
    bin_ms: float = Field(10.0, gt=0, description="timeline bin, ms")


WorkloadField = Annotated[Union[StableWorkload, BurstWorkload, TraceWorkload], Field(discriminator="kind")]


class ServerRunConfig(Model):
    """Everything one storage-server run needs (fully resolved)."""

    name: str = "server"
    platform: PlatformConfig
    server: ServerConfig = ServerConfig()
    policy: dict[str, Any] = Field(default_factory=dict, description="parameters of the selected policy")
    workload: WorkloadField
    metrics: MetricsConfig = MetricsConfig()
    seed: Seed = 1
    drain_s: float = Field(0.0, ge=0, description="after the measured window, keep simulating this long without new"
                           " arrivals (in-flight requests complete; not in the statistics)")
    plugins: tuple[str, ...] = ()
