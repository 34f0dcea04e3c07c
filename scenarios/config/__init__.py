"""What a run is: configurations and how they are resolved from their sources.

* :mod:`.host` -- a host run (:class:`~.host.RunConfig`: platform, queue, fio jobs, seed) from a
  built-in scenario, a fio job file or a scenario YAML, with ``--set`` overrides;
* :mod:`.server` -- a storage-server run (:class:`~.server.ServerRunConfig`) and its client
  workloads (:mod:`.server_workloads`);
* :mod:`.platform_file` -- platforms by name or from a file;
* :mod:`.checks` -- settings that are valid but have no effect (warnings).
"""
