"""Storage-server scenarios: an NVMe-oF target (SPDK-style reactors or the kernel target) with many
cores and SSDs, an open-loop client, and core-scheduling policies (``policies/core_scheduling``).

Entry points: :func:`resolve_server` (scenario name + ``--set`` overrides -> config) and
:func:`simulate_server` (config -> result dict); built-in scenarios ``server-stable``,
``server-burst`` and ``server-trace`` (trace replay) (:data:`SERVER_SCENARIOS`). See docs/server.md.
"""


def __getattr__(name):  # lazy: policies import scenarios.server.reactor without pulling the model in
    if name in ("resolve_server", "simulate_server", "SERVER_SCENARIOS", "server_scenarios"):
        from scenarios.server import run

        return getattr(run, name)
    if name == "ServerRunConfig":
        from scenarios.server.config import ServerRunConfig

        return ServerRunConfig
    raise AttributeError(name)


__all__ = ["resolve_server", "simulate_server", "SERVER_SCENARIOS", "server_scenarios", "ServerRunConfig"]
