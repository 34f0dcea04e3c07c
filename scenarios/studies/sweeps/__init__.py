"""The sweep helpers (sweep files: :mod:`scenarios.studies.sweep`; the built-in ones are in
``scenarios/data/sweeps/``): result rows, storage, executors, progress, the efficiency analysis
and the HTML report."""
