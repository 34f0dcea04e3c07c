"""Third-party measurements shipped with stacksim, each in a directory of its own with its source, its
licence and a README: ``cheops23/`` (Linux IO engines on Optane SSDs, CHEOPS'23, MIT licence), read
by the ``cheops23`` validation suite (:mod:`scenarios.studies.suite_cheops23`); ``icpe24/`` (Linux IO
schedulers on Samsung 980 PRO SSDs, ICPE'24, MIT licence), read by the ``icpe24`` suite
(:mod:`scenarios.studies.suite_icpe24`); ``cluster23zns/`` (a WD ZN540 ZNS SSD, SPDK vs io_uring,
CLUSTER'23, MIT licence), read by the ``cluster23-zns`` suite (:mod:`scenarios.studies.suite_cluster23zns`)."""

from __future__ import annotations

from pathlib import Path

__all__ = ["MEASUREMENTS_DIR", "CHEOPS23_DIR", "ICPE24_DIR", "CLUSTER23ZNS_DIR"]

MEASUREMENTS_DIR = Path(__file__).resolve().parent
#: CHEOPS'23: ``qd1/``, ``saturation/``, ``depth128_1thread/`` (fio job files and JSON results),
#: ``perf_stat.csv``, ``README.md``, ``LICENSE``
CHEOPS23_DIR = MEASUREMENTS_DIR / "cheops23"
#: ICPE'24: ``fig-7-tapp-scal-1-ssd/``, ``table-2/``, ``table-3-4/`` (fio JSON outputs, the command
#: log), ``README.md``, ``LICENSE``
ICPE24_DIR = MEASUREMENTS_DIR / "icpe24"
#: CLUSTER'23 (ZNS): ``summary.csv`` (every fio run of the artifact), ``zn540.fio`` (the suite's job),
#: ``README.md``, ``LICENSE``
CLUSTER23ZNS_DIR = MEASUREMENTS_DIR / "cluster23zns"
