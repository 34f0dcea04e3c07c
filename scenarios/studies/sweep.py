"""Parameter sweeps: the cartesian product of named axes x replicates, run in parallel and stored
as one row per replicate.

A sweep file (YAML) names a base (a scenario, or a fio job file + platform), fixed ``set``
overrides, ordered ``axes`` and a number of replicates::

    name: poll_energy_small
    base: {scenario: default}
    set: {runtime: 20ms, ramp_time: 110ms}
    axes:
      bs: [4k, 64k]                  # any fio option or --set key, with a list of values
      numjobs: [1, 4]
      mode:                          # a bundle axis: label -> several --set keys at once
        interrupt: {hipri: 0}
        classic: {hipri: 1, queue.io_poll: 1, queue.io_poll_delay: -1}
        hybrid: {hipri: 1, queue.io_poll: 1, queue.io_poll_delay: 0}
    replicates: 2
    seed: 1

A base may also be a storage-server scenario (``base: {scenario: server-stable}``, ``server-burst``
or ``server-trace``, see docs/server.md): every point of either kind is resolved by
:func:`scenarios.config.resolve.resolve_run` (a server's keys: ``server.*``, ``policy.*``,
``workload.*``, ...) and run by :func:`~scenarios.run.simulate.simulate`; the rows have the same shape (the
``completion`` column holds the core-scheduling policy). A relative ``workload.trace`` is taken
from the sweep file's directory when the file is there.

Every run is a pure function of its resolved :class:`RunConfig` (seed included), so the executor
(in-process, process pool, Dask) never changes a result. A replicate's seed is derived from the
base seed, the point key and the replicate number only: adding a value to an axis does not move
the seeds (nor invalidate the stored results) of the other points.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, Union

import numpy as np
from pydantic import Field, field_validator, model_validator

from scenarios.config.host import RunConfig
from scenarios.config.resolve import resolve_run
from scenarios.data import SWEEPS_DIR
from scenarios.studies.sweeps.runner import execute
from simcore.config import Model, Seed, load_data_file, refuse_ambiguous, validate
from simcore.errors import ConfigError

Scalar = Union[bool, int, float, str]
AxisValues = Union[list[Scalar], dict[str, dict[str, Scalar]]]

#: row columns written by the sweep itself; an axis may not take one of these names
RESERVED_COLUMNS = ("sweep", "point", "replicate", "seed", "completion", "config_sha", "code_sha", "config", "cdf")


class SweepBase(Model):
    """What every point starts from: a scenario (built-in name or YAML path), or a fio job file
    and a platform. Relative paths are taken from the sweep file's directory, then the cwd."""

    scenario: str | None = Field(None, description="built-in scenario name or scenario YAML path")
    job_file: str | None = Field(None, description="fio job file (needs platform)")
    platform: str | None = Field(None, description="platform name (required with job_file; overrides the scenario's)")

    @model_validator(mode="after")
    def _one_source(self) -> "SweepBase":
        if (self.scenario is None) == (self.job_file is None):
            raise ValueError("give exactly one of 'scenario' or 'job_file'")
        if self.job_file is not None and self.platform is None:
            raise ValueError("'platform' is required with 'job_file'")
        return self


class SweepFile(Model):
    """A sweep: base configuration, fixed overrides, ordered axes, replicates and base seed."""

    name: str
    description: str = ""
    base: SweepBase
    set: dict[str, Scalar] = Field(default_factory=dict, description="--set style overrides applied to every point")
    axes: dict[str, AxisValues] = Field(
        min_length=1,
        description="ordered axes: KEY -> list of values (KEY a --set key or fio option), or "
        "LABEL_AXIS -> {label: {KEY: value, ...}} to set several keys together",
    )
    replicates: int = Field(1, ge=1, description="independent runs (seeds) per point")
    seed: Seed = Field(1, description="base seed; replicate seeds are derived from it")

    @field_validator("axes", mode="before")
    @classmethod
    def _axes_shape(cls, axes: Any) -> Any:
        if isinstance(axes, dict):
            for name, values in axes.items():
                if not isinstance(values, (list, dict)):
                    raise ValueError(f"axis '{name}': give a list of values, or a mapping label -> {{KEY: value, ...}}")
        return axes

    @field_validator("axes")
    @classmethod
    def _check_axes(cls, axes: dict[str, AxisValues]) -> dict[str, AxisValues]:
        bundle_keys: dict[str, str] = {}
        for name, values in axes.items():
            if name in RESERVED_COLUMNS:
                raise ValueError(f"axis '{name}': the name is reserved for a result column")
            if not values:
                raise ValueError(f"axis '{name}': no values")
            if isinstance(values, dict):
                for label, bundle in values.items():
                    if not bundle:
                        raise ValueError(f"axis '{name}': value '{label}' sets nothing")
                    for key in bundle:
                        bundle_keys.setdefault(key, name)
            elif len({_text(v) for v in values}) != len(values):
                raise ValueError(f"axis '{name}': repeated values")
        for key, owner in bundle_keys.items():
            if key in axes:
                raise ValueError(f"axis '{owner}' sets '{key}', which is also an axis")
        return axes


@dataclass(frozen=True)
class Task:
    """One run of a sweep: a point (axis values) and a replicate, with its resolved config."""

    index: int
    """position in the plan (axis order, replicates innermost)"""
    sweep: str
    point: str
    """canonical point key, e.g. ``bs=4k|numjobs=8|mode=hybrid``"""
    axes: dict[str, Scalar]
    replicate: int
    seed: int
    config: RunConfig
    """the resolved configuration (a :class:`~scenarios.config.server.ServerRunConfig` for a server base)"""
    config_json: str
    """canonical JSON of ``config`` (sorted keys), stored with the results"""
    config_sha: str


def builtin_sweeps() -> dict[str, Path]:
    """Sweep files shipped in ``scenarios/data/sweeps/`` by name."""
    return {p.stem: p for p in sorted(SWEEPS_DIR.glob("*.yaml"))}


def load_sweep(name_or_path: str | Path) -> tuple[SweepFile, Path]:
    """Load a sweep file (a path, or the name of a built-in sweep); returns (sweep, its directory)."""
    refuse_ambiguous(str(name_or_path), builtin_sweeps(), "sweep")
    path = Path(name_or_path)
    if not path.is_file():
        path = builtin_sweeps().get(str(name_or_path), path)
    if not path.is_file():
        raise ConfigError(f"unknown sweep '{name_or_path}' (built-in: {', '.join(builtin_sweeps())}; or a YAML path)")
    data = load_data_file(path)
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping at the top level")
    return validate(SweepFile, data, where=str(path)), path.parent


def point_key(axes: dict[str, Scalar]) -> str:
    """Canonical, human-readable key of a point: ``name=value`` joined by ``|`` in axis order."""
    return "|".join(f"{k}={_text(v)}" for k, v in axes.items())


def replicate_seed(base_seed: int, point: str, replicate: int) -> int:
    """Seed of one replicate: independent streams from numpy's SeedSequence keyed by the base seed,
    a hash of the point key and the replicate number (stable across axis changes and machines)."""
    words = np.frombuffer(hashlib.sha256(point.encode("utf-8")).digest()[:16], dtype="<u4")
    ss = np.random.SeedSequence(entropy=int(base_seed), spawn_key=(*(int(w) for w in words), int(replicate)))
    return int(ss.generate_state(1, dtype=np.uint64)[0] >> np.uint64(1))  # 63 bits, non-negative


def iter_combinations(sweep: SweepFile) -> Iterator[dict[str, Scalar]]:
    """The points of ``sweep``, one at a time: the cartesian product of its axes, first axis outermost."""
    names = list(sweep.axes)
    levels = [list(v) if isinstance(v, dict) else v for v in sweep.axes.values()]
    return (dict(zip(names, combo)) for combo in itertools.product(*levels))


def combinations(sweep: SweepFile) -> list[dict[str, Scalar]]:
    """The points of ``sweep`` (:func:`iter_combinations` as a list)."""
    return list(iter_combinations(sweep))


def count_points(sweep: SweepFile) -> int:
    """How many points ``sweep`` has, without making them (the product of the axes' lengths)."""
    return math.prod(len(v) for v in sweep.axes.values())


def point_sets(sweep: SweepFile, axes: dict[str, Scalar], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The ``--set`` overrides of one point: sweep ``set``, then ``extra``, then the axis values."""
    sets: dict[str, Any] = {**sweep.set, **(extra or {})}
    for name, value in axes.items():
        spec = sweep.axes[name]
        if isinstance(spec, dict):
            sets.update(spec[value])
        else:
            sets[name] = value
    return sets


def plan(
    sweep: SweepFile,
    *,
    where: Path | str = ".",
    sets: dict[str, Any] | None = None,
    replicates: int | None = None,
    seed: int | None = None,
) -> list[Task]:
    """Resolve every point of ``sweep`` (without running anything) and expand replicates
    (:func:`plan_stream`, as a list)."""
    return list(plan_stream(sweep, where=where, sets=sets, replicates=replicates, seed=seed))


def plan_stream(
    sweep: SweepFile,
    *,
    where: Path | str = ".",
    sets: dict[str, Any] | None = None,
    replicates: int | None = None,
    seed: int | None = None,
) -> Iterator[Task]:
    """The runs of ``sweep``, resolved one point at a time as they are asked for (a sweep of a
    million points starts running at once), replicates expanded.

    Every axis key is first checked on its own, before the first task (an error names the axis and
    value); then each combination is resolved when it is reached (an error names the point).
    ``sets`` are extra fixed overrides (the command line's ``--set``); ``replicates`` and ``seed``
    override the file's.
    """
    where = Path(where)
    base = _base_args(sweep.base, where)
    resolve_point = _resolver(base, where)
    label = f"sweep {sweep.name}"
    try:
        resolve_point(point_sets(sweep, {}, sets))
    except ConfigError as err:
        raise ConfigError(f"{label}: base/set: {err}") from None
    for name, spec in sweep.axes.items():
        for value in spec:
            try:
                resolve_point(point_sets(sweep, {name: value}, sets))
            except ConfigError as err:
                raise ConfigError(f"{label}: axis '{name}' = {_text(value)}: {err}") from None
    nrep = sweep.replicates if replicates is None else replicates
    if nrep < 1:
        raise ConfigError(f"{label}: replicates must be >= 1, got {nrep}")
    base_seed = sweep.seed if seed is None else seed
    return _tasks(sweep, sets, resolve_point, label, nrep, base_seed)


def _tasks(sweep: SweepFile, sets, resolve_point, label: str, nrep: int, base_seed: int) -> Iterator[Task]:
    """:func:`plan_stream`'s tasks, point by point (its checks done)."""
    index = 0
    for axes in iter_combinations(sweep):
        key = point_key(axes)
        try:
            cfg = resolve_point(point_sets(sweep, axes, sets))
        except ConfigError as err:
            raise ConfigError(f"{label}: point {key}: {err}") from None
        for rep in range(nrep):
            s = replicate_seed(base_seed, key, rep)
            c = cfg.model_copy(update={"seed": s})
            cj = json.dumps(c.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
            yield Task(
                index, sweep.name, key, dict(axes), rep, s, c, cj, hashlib.sha256(cj.encode("utf-8")).hexdigest()[:16]
            )
            index += 1


def _resolver(base: dict[str, Any], where: Path):
    """``sets -> config`` for the sweep's base, of either kind (seed 0; the plan sets each
    replicate's seed). A relative ``workload.trace`` (a server scenario's trace file) is taken from
    the sweep file's directory when the file is there."""

    def resolve_point(sets: dict[str, Any]):
        trace = sets.get("workload.trace")
        if isinstance(trace, str) and trace and not Path(trace).is_absolute() and (where / trace).is_file():
            sets = {**sets, "workload.trace": str(where / trace)}
        return resolve_run(**base, sets=sets, seed=0)

    return resolve_point


def _base_args(base: SweepBase, where: Path) -> dict[str, Any]:
    def locate(p: str) -> str:
        cand = where / p
        return str(cand) if cand.is_file() else p

    if base.job_file is not None:
        job = locate(base.job_file)
        if not Path(job).is_file():
            raise ConfigError(f"base.job_file: file not found: {base.job_file}")
        return {"job_file": job, "platform": base.platform}
    scen = base.scenario
    if scen.endswith((".yaml", ".yml")):
        scen = locate(scen)
    return {"scenario": scen, "platform": base.platform}


def _text(value: Scalar) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


def run_sweep(
    name_or_path: str | Path,
    results: str | Path,
    *,
    sets: dict[str, Any] | None = None,
    replicates: int | None = None,
    seed: int | None = None,
    **execute_kw,
):
    """Load, plan (validating every point) and execute a sweep; see
    :func:`scenarios.studies.sweeps.runner.execute` for the execution options."""
    sweep, where = load_sweep(name_or_path)
    tasks = plan(sweep, where=where, sets=sets, replicates=replicates, seed=seed)
    return execute(tasks, results, **execute_kw)
