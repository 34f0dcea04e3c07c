"""Errors that reach the user as one clear message (exit status 2), never a traceback."""


class ConfigError(Exception):
    """Bad user input: unknown key, bad value, missing file, malformed line.

    The message must name the offending field/option/file (and line, where there is one).
    """


class SimulationError(Exception):
    """An internal invariant was violated while simulating (a bug, not bad input)."""
