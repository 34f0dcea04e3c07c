"""A measured point: one configuration measured on a real machine and what was measured there
(:mod:`scenarios.studies.validation` simulates and compares them)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

__all__ = ["Point"]


@dataclass(frozen=True)
class Point:
    """One measured configuration (see the module docstring)."""

    label: str
    config: dict[str, Any]
    metrics: dict[str, float]
    job_file: str | None = None
    platform: str | None = None
    """The platform the measurement belongs to (built-in suites), unless ``--platform`` overrides."""
    runtime_ms: float | None = None
    ramp_ms: float | None = None
    env: dict[str, str] | None = None
    """Environment variables for the job file's ``${VAR}`` (on top of the process's)."""
    fio_job: bool = False
    """``config`` is a whole fio job (the options of a fio JSON): it is simulated on its own, with
    fio's defaults for what it does not set, not on top of the base job."""
    fio_jobs: tuple[Mapping[str, str], ...] = ()
    """Several whole fio jobs (each one's options, ``name`` among them), run together on their own:
    ``config``'s fio options are their global options (as a job file's ``[global]``), its dotted keys
    the platform's."""
    tolerance: Mapping[str, float] | None = None
    """metric -> the relative error the point must stay within (``stacksim validate`` marks each
    value pass or fail); a metric without one is reported only."""
