"""A storage-server run's configuration: platform, target (:class:`~models.server.config.ServerConfig`),
policy, workload, metrics, seed; from a server scenario (a built-in name such as ``server-stable``,
``server-burst`` and ``server-trace``, or a YAML file with ``kind: server``) and ``--set`` overrides
(:func:`resolve_server`).

Every section is a frozen pydantic model with ``extra="forbid"`` (a misspelt key is an error that
names it). Policy parameters are validated by the selected policy's own ``Params`` model.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, Union

from pydantic import Field, create_model

from models.platform import PlatformConfig
from models.server.config import ServerConfig
from policies.core_scheduling import CORE_SCHEDULING
from scenarios.config.platform_file import load_platform
from scenarios.config.registry import builtin_scenarios, load_scenario
from scenarios.config.server_workloads import BurstWorkload, StableWorkload, TraceWorkload
from scenarios.config.sets import PLATFORM_PREFIXES, apply_sets, set_value
from simcore.config import Model, Seed, load_data_file, set_path, validate
from simcore.errors import ConfigError
from simcore.spool import STDIN

#: the platform of the built-in server scenarios: SANDMAN's storage node
DEFAULT_PLATFORM = "epyc9454p-16xpm1743"
#: workload keys whose ``--set`` value is text as given (YAML would read ``0:30`` as a number)
TEXT_KEYS = ("workload.trace", "workload.trace_format", "workload.trace_window", "workload.trace_volumes")
#: the workload kinds a server scenario may name, and their models
WORKLOADS = {"stable": StableWorkload, "burst": BurstWorkload, "trace": TraceWorkload}


class MetricsConfig(Model):
    bin_ms: float = Field(10.0, gt=0, description="timeline bin, ms")


WorkloadField = Annotated[Union[StableWorkload, BurstWorkload, TraceWorkload], Field(discriminator="kind")]


class ServerRunConfig(Model):
    """Everything one storage-server run needs (fully resolved)."""

    kind: ClassVar[str] = "server"
    """the kind of run (:data:`scenarios.config.registry.KINDS`)"""
    name: str = "server"
    platform: PlatformConfig
    server: ServerConfig = ServerConfig()
    policy: dict[str, Any] = Field(default_factory=dict, description="parameters of the selected policy")
    workload: WorkloadField
    metrics: MetricsConfig = MetricsConfig()
    seed: Seed = 1
    drain_s: float = Field(
        0.0,
        ge=0,
        description="after the measured window, keep simulating this long without new"
        " arrivals (in-flight requests complete; not in the statistics)",
    )
    plugins: tuple[str, ...] = ()

    @property
    def warmup_ns(self) -> float:
        """Where the measured interval begins (ns): the workload's warm-up."""
        return self.workload.warmup_ns


class ServerScenarioFile(Model):
    """A storage-server scenario (YAML, ``kind: server``): platform, the client's workload kind,
    settings, and the policies' parameters that differ from their defaults in this scenario."""

    kind: Literal["server"] = Field(description="the kind of scenario (scenarios.config.registry)")
    name: str
    description: str = ""
    platform: str = Field(DEFAULT_PLATFORM, description="platform name or platform file (--platform overrides it)")
    workload: Literal["stable", "burst", "trace"] = Field(
        description="the client's workload kind (its settings: --set workload.*)"
    )
    set: dict[str, Any] = Field(default_factory=dict, description="--set style overrides applied first")
    policy_defaults: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="core-scheduling policy name -> parameters (policy.*) this scenario sets unless --set gives them",
    )
    seed: Seed = 1


def server_scenarios() -> dict[str, str]:
    """name -> description of the built-in server scenarios."""
    return {
        name: validate(ServerScenarioFile, load_data_file(path), where=str(path)).description
        for name, path in builtin_scenarios("server").items()
    }


def resolve_server(
    scenario_name: str, sets: dict[str, Any] | None = None, seed: int | None = None, platform: str | None = None
) -> ServerRunConfig:
    """Build a :class:`ServerRunConfig` from a server scenario (a built-in name or a YAML file) and
    ``--set KEY=VALUE`` overrides.

    Keys: ``server.*`` (:class:`ServerConfig`, including ``server.policy``), ``policy.*`` (the
    selected policy's parameters), ``workload.*`` (``rate_iops`` for server-stable, ``time_scale``
    for server-burst, ...), ``metrics.*``, and the platform's keys as for a host run
    (:mod:`scenarios.config.sets`: ``cpu.*``, ``ssd.*``, ``kernel.*``, ``power.*``, ...). ``platform``:
    a built-in platform name or a platform YAML file, resolved as for ``stacksim run`` (default: the
    scenario's, SANDMAN's storage node for the built-in ones). Every error is a :class:`ConfigError`
    naming the bad key.

    ``server-trace`` needs ``workload.trace=PATH`` (a relative path is taken from the current
    directory and stored absolute); ``workload.trace_window`` is ``START:END`` in seconds.
    """
    raw, path = load_scenario(scenario_name, "server")
    scen = validate(ServerScenarioFile, raw, where=str(path))
    kind = scen.workload
    wl = (TraceWorkload.model_construct if kind == "trace" else WORKLOADS[kind])()
    data: dict[str, Any] = {
        "name": scen.name,
        "platform": load_platform(platform or scen.platform).model_dump(),
        "server": ServerConfig().model_dump(),
        "policy": {},
        "workload": wl.model_dump(),
        "metrics": MetricsConfig().model_dump(),
        "seed": scen.seed if seed is None else seed,
    }
    apply_sets(
        data["platform"], {**scen.set, **(sets or {})}, functools.partial(_set_server_key, data, kind, scenario_name)
    )
    pname = data["server"].get("policy")
    defaults = scen.policy_defaults.get(pname, {}) if isinstance(pname, str) else {}
    data["policy"] = {**defaults, **data["policy"]}
    cfg = validate(ServerRunConfig, data, where=scenario_name)
    pcls = CORE_SCHEDULING.get(cfg.server.policy)
    validate(
        _policy_section(pcls.Params),
        {"policy": dict(cfg.policy)},
        where=f"{scenario_name} (policy {cfg.server.policy})",
    )
    return cfg


def _set_server_key(data: dict[str, Any], kind: str, scenario_name: str, key: str, raw: Any) -> None:
    """Apply one non-platform ``--set`` (``server.*``, ``policy.*``, ``workload.*``, ``metrics.*``) to the
    raw run configuration ``data`` of a ``kind`` workload: ``workload.trace`` is made absolute; a key of no
    section, or naming no field, is a :class:`ConfigError`."""
    if key in TEXT_KEYS:
        if kind != "trace":
            raise ConfigError(
                f"--set {key}: trace replay is the server-trace scenario"
                f" (--scenario server-trace --set workload.trace=PATH)"
            )
        value = raw.strip() if isinstance(raw, str) else raw
        if key == "workload.trace" and isinstance(value, str) and value and value != STDIN:
            value = str(Path(value).expanduser().resolve())
    else:
        value = set_value(raw)
    head, _, rest = key.partition(".")
    if head == "policy":
        if not rest or "." in rest:
            raise ConfigError(f"--set {key}: name one policy parameter, e.g. policy.hybrid_polling=true")
        data["policy"][rest] = value
    elif head in ("server", "workload", "metrics"):
        if not rest:
            raise ConfigError(f"--set {key}: name a field, e.g. {head}.<field>=VALUE")
        if head == "workload" and rest == "kind":
            raise ConfigError(f"--set {key}: the workload kind is fixed by the scenario ({scenario_name})")
        set_path(data, key, value)
    else:
        raise ConfigError(
            f"--set {key}: unknown section '{head}' (use server., policy., workload., metrics.,"
            f" or {', '.join(h + '.' for h in PLATFORM_PREFIXES[:5])})"
        )


@functools.lru_cache(maxsize=None)
def _policy_section(params: type) -> type:
    """A model with one field ``policy`` of type ``params``: errors name the key as ``policy.NAME``."""
    return create_model(f"{params.__name__}Section", policy=(params, ...))
