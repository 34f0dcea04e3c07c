"""Errors that reach the user as one clear message (exit status 2), never a traceback."""

import re


class ConfigError(Exception):
    """Bad user input: unknown key, bad value, missing file, malformed line.

    The message must name the offending field/option/file (and line, where there is one).
    """


class SimulationError(Exception):
    """An internal invariant was violated while simulating (a bug, not bad input)."""


#: a run of more non-blank characters than this in a message is an echoed value (no path or name is
#: this long in practice), shortened when shown
LONG_WORD = 240


def error_line(message: object) -> str:
    """The one line the command line prints for a bad input: ``stacksim: error: MESSAGE``, with any
    echoed value longer than :data:`LONG_WORD` characters shortened to its head, its tail and its
    length (an option of 150 KB is named, not printed back)."""

    def shorten(m: re.Match) -> str:
        word = m.group(0)
        return f"{word[:40]}...{word[-12:]} ({len(word):,} characters)"

    return "stacksim: error: " + re.sub(r"\S{%d,}" % (LONG_WORD + 1), shorten, str(message))
