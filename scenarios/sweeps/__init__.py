"""Sweep files (``*.yaml``: see :mod:`scenarios.sweep`) and the sweep helpers: result rows,
storage, executors, progress, the efficiency analysis and the HTML report."""
