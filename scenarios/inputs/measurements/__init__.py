"""Readers of real measurements to compare the simulator with.

* :func:`read_fio_json` -- fio ``--output-format=json`` results (:mod:`.fio_json`);
* :func:`read_power_log` -- powerstat, ``ipmitool dcmi power reading`` or ``time,watts`` CSV
  (:mod:`.power`);
* :func:`read_points_csv` -- measured points: config columns + ``metric.*``/``measured.*``
  columns (:mod:`.points`).

Each returns an object with ``describe()`` (a one-line summary of what was understood) and
raises :class:`simcore.errors.ConfigError` naming file and line on malformed input.
"""

from .fio_json import DirStats, FioResult, FioResults, LatStats, read_fio_json
from .points import METRIC_PREFIXES, MeasuredPoints, read_points_csv
from .power import POWER_FORMATS, PowerLog, read_power_log

__all__ = [
    "read_fio_json",
    "FioResult",
    "FioResults",
    "DirStats",
    "LatStats",
    "read_power_log",
    "PowerLog",
    "POWER_FORMATS",
    "read_points_csv",
    "MeasuredPoints",
    "METRIC_PREFIXES",
]
