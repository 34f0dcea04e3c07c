"""Runnable experiments, by concern:

* :mod:`scenarios.config` -- what a run is: a host run (:class:`~scenarios.config.host.RunConfig`,
  from a built-in scenario, a fio job file or a scenario YAML, with ``--set`` overrides), a storage
  server run, the platform files, and the settings that are valid but do nothing;
* :mod:`scenarios.run` -- running one configuration: the simulation API
  (:func:`scenarios.run.simulate.simulate` -> :class:`~scenarios.run.result.Result`), the assembly
  of a system from its configuration, trace replay, the summaries and the output files;
* :mod:`scenarios.inputs` -- the input formats: fio job files, block traces, measurements;
* :mod:`scenarios.studies` -- what is built from many runs: sweeps, calibration, validation,
  ``stacksim explain``, trace comparison;
* :mod:`scenarios.data` -- the data shipped with the package: built-in scenarios and sweeps,
  published reference figures, sample traces, fio's option catalogue.
"""

import simcore  # noqa: F401  (simcore decides first whether the compiled hot path runs: simcore.compiled)
