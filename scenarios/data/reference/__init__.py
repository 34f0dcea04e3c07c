"""The published figures stacksim is calibrated and validated against, shipped with the package.

One YAML file per study in this directory (package data, read with :mod:`importlib.resources`):
the paper (``source``: authors, title, venue, year), the measured system and workload, and the
``figures`` the calibrations (``stacksim calibrate --study NAME``), the validation suites
(``stacksim validate --suite NAME``) and the tests use, each with ``where`` in the paper it is
(table or figure), ``what`` it measures, its ``units`` and its ``values``.

    values("poll_vs_interrupt_energy", "latency_iops_4k_1_thread")["interrupt"]["iops"]  # 96722
    cite("poll_vs_interrupt_energy", "latency_iops_4k_1_thread")  # 'Harris & Altiparmak, ... Table 1'
"""

from __future__ import annotations

import copy
from functools import lru_cache
from importlib import resources
from typing import Any

from pydantic import Field

from simcore.config import Model, validate
from simcore.errors import ConfigError
from simcore.yaml_loader import load_yaml

__all__ = ["Source", "Figure", "Study", "STUDIES", "study", "values", "cite"]

#: the reference files (stems of ``scenarios/data/reference/*.yaml``)
STUDIES = (
    "poll_vs_interrupt_energy",
    "io_schedulers_ull",
    "calibrated_interrupts",
    "sandman_polling_server",
    "optane_ssd",
)


class Source(Model):
    """The publication a file's figures come from."""

    authors: list[str] = Field(min_length=1, description="surnames, in the paper's order")
    title: str
    venue: str
    year: int

    def __str__(self) -> str:
        names = self.authors[0] if len(self.authors) == 1 else ", ".join(self.authors[:-1]) + " & " + self.authors[-1]
        return f'{names}, "{self.title}", {self.venue} {self.year}'


class Figure(Model):
    """One published figure or table."""

    where: str = Field(description="where in the paper: 'Table 1', or the measurement when no number is recorded")
    what: str
    units: str | dict[str, str]
    values: Any


class Study(Model):
    """One reference file."""

    source: Source
    measured_on: str
    workload: str
    figures: dict[str, Figure]


@lru_cache(maxsize=None)
def study(name: str) -> Study:
    """The reference file ``name`` (one of :data:`STUDIES`), validated."""
    if name not in STUDIES:
        raise ConfigError(f"unknown reference study {name!r} (shipped: {', '.join(STUDIES)})")
    text = resources.files(__name__).joinpath(f"{name}.yaml").read_text(encoding="utf-8")
    where = f"scenarios/data/reference/{name}.yaml"
    return validate(Study, load_yaml(text, where), where=where)


def _figure(name: str, figure: str) -> Figure:
    figs = study(name).figures
    if figure not in figs:
        raise ConfigError(f"reference study {name} has no figure {figure!r} (has: {', '.join(figs)})")
    return figs[figure]


def values(name: str, figure: str) -> Any:
    """The values of ``figure`` in study ``name`` (a copy: callers may change it)."""
    return copy.deepcopy(_figure(name, figure).values)


def cite(name: str, figure: str | None = None) -> str:
    """The citation of study ``name`` (and where ``figure`` is in it)."""
    src = str(study(name).source)
    return src if figure is None else f"{src}, {_figure(name, figure).where}"
