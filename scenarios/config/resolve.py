"""Any run's configuration from its sources: :func:`resolve_run`, what ``stacksim run``, sweeps and
explain call. The kind of run is decided once, by the scenario (:func:`scenarios.config.registry.scenario_kind`):
a host scenario or a fio job file gives a :class:`~scenarios.config.host.RunConfig`, a server
scenario a :class:`~scenarios.config.server.ServerRunConfig`; both run through
:func:`scenarios.run.simulate.simulate`.
"""

from __future__ import annotations

from typing import Any

from scenarios.config.host import RunConfig, resolve
from scenarios.config.registry import scenario_kind
from scenarios.config.server import ServerRunConfig, resolve_server
from simcore.errors import ConfigError

__all__ = ["resolve_run"]


def resolve_run(
    *,
    scenario: str | None = None,
    job_file: str | None = None,
    platform: str | None = None,
    sets: dict[str, Any] | None = None,
    seed: int | None = None,
) -> RunConfig | ServerRunConfig:
    """The configuration of ``scenario`` (a built-in name or a scenario file, of either kind) or of
    the fio job file ``job_file`` (on ``platform``), with ``--set`` overrides ``sets``; neither
    source: the built-in ``default`` scenario. Every error is a :class:`ConfigError`."""
    if scenario is not None and job_file is not None:
        raise ConfigError("give either a job file / scenario file or --scenario, not both")
    if scenario is not None and scenario_kind(scenario) == "server":
        return resolve_server(scenario, sets, seed=seed, platform=platform)
    return resolve(scenario=scenario, job_file=job_file, platform=platform, sets=sets, seed=seed)
