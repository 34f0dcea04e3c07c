"""The simulation engine: clock, events, RNG streams, statistics, configuration schema, tracing."""

from simcore import compiled as _compiled

# before any module of the compiled hot path is imported: compiled or pure-Python sources
_compiled.activate()
