"""Third-party measurements shipped with stacksim, each in a directory of its own with its source, its
licence and a README: ``cheops23/`` (Linux IO engines on Optane SSDs, CHEOPS'23, MIT licence), read
by the ``cheops23`` validation suite (:mod:`scenarios.studies.suite_cheops23`)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["MEASUREMENTS_DIR", "CHEOPS23_DIR"]

MEASUREMENTS_DIR = Path(__file__).resolve().parent
#: CHEOPS'23: ``qd1/``, ``saturation/``, ``depth128_1thread/`` (fio job files and JSON results),
#: ``perf_stat.csv``, ``README.md``, ``LICENSE``
CHEOPS23_DIR = MEASUREMENTS_DIR / "cheops23"
