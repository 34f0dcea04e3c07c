"""Pluggable policies: completion, interrupt generation, IO scheduling, CPU power, core scheduling."""

import simcore  # noqa: F401  (simcore decides first whether the compiled hot path runs: simcore.compiled)
