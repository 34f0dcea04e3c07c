"""Storage-server scenarios: an NVMe-oF target (SPDK-style reactors or the kernel target, modelled in
:mod:`models.server`) with many cores and SSDs, an open-loop client (:mod:`.workloads`), and
core-scheduling policies (``policies/core_scheduling``).

Entry points (:mod:`.run`): :func:`~scenarios.server.run.resolve_server` (scenario name + ``--set``
overrides -> config) and :func:`scenarios.simulate.simulate` (config -> result); built-in
scenarios ``server-stable``, ``server-burst`` and ``server-trace`` (trace replay). See docs/server.md.
"""
