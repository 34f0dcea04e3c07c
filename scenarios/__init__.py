"""Runnable experiments: fio jobs, scenarios, replays, sweeps, studies, and their outputs."""

import simcore  # noqa: F401  (simcore decides first whether the compiled hot path runs: simcore.compiled)
