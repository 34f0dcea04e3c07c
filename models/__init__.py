"""The component models: CPUs, the OS IO stack, the SSDs, the storage server."""

import simcore  # noqa: F401  (simcore decides first whether the compiled hot path runs: simcore.compiled)
