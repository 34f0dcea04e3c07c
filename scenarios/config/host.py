"""A host run's configuration: platform + queue settings + fio jobs + seed, from a fio job file, a
host scenario (a built-in name or a YAML file, :mod:`scenarios.config.registry`) and ``--set``
overrides.

``--set KEY=VALUE`` keys: the platform's (:mod:`scenarios.config.sets`: ``queue.*`` (sysfs queue
attributes), ``cpu.*``, ``ssd.*``, ``kernel.*``, ``sched.*``, ``power.*``, ``ssd_count``, ...), or a
plain fio option (no dot: ``bs=8k``, ``numjobs=4``, ``hipri=1``) applied to every job.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field, model_validator

from models.os.block.queue import QueueConfig
from models.os.fs.filesystem import EXTENT_ALIGN_BYTES, is_device
from models.platform import PlatformConfig
from scenarios.config.platform_file import load_platform
from scenarios.config.registry import builtin_scenarios, load_scenario
from scenarios.config.sets import apply_sets
from scenarios.inputs.fio.language import platform_keywords
from scenarios.inputs.fio.parser import FIO_MAX_JOBS, FioJob, apply_overrides, job_from_options, parse_fio_file
from scenarios.inputs.fio.protection import resolve_protection
from scenarios.inputs.fio.zoned import resolve_zoned
from simcore.config import Model, Seed, check_seed, load_data_file, validate
from simcore.errors import ConfigError

DEFAULT_SCENARIO = "default"


class RunConfig(Model):
    """Everything one simulation run needs (fully resolved). The block queue's settings live in
    one place, ``platform.queue``; ``RunConfig(..., queue=Q)`` stores ``Q`` there."""

    kind: ClassVar[str] = "host"
    """the kind of run (:data:`scenarios.config.registry.KINDS`)"""
    name: str = "run"
    platform: PlatformConfig
    jobs: tuple[FioJob, ...] = Field(min_length=1)
    seed: Seed = 1
    plugins: tuple[str, ...] = ()

    @model_validator(mode="before")
    @classmethod
    def _queue_into_platform(cls, data: Any) -> Any:
        if isinstance(data, dict) and "queue" in data:
            data = dict(data)
            queue, plat = data.pop("queue"), data.get("platform")
            if isinstance(plat, PlatformConfig):
                data["platform"] = plat.model_copy(update={"queue": QueueConfig.model_validate(queue)})
            elif isinstance(plat, dict):
                data["platform"] = {**plat, "queue": queue}
        return data

    @property
    def queue(self) -> QueueConfig:
        """The block queue's settings (``platform.queue``)."""
        return self.platform.queue

    @property
    def warmup_ns(self) -> float:
        """Where the measured interval begins (ns): the jobs' longest ``ramp_time``."""
        return max(j.ramp_time_ns for j in self.jobs)

    def with_queue(self, **changes: Any) -> "RunConfig":
        """A copy with queue settings changed, e.g. ``cfg.with_queue(io_poll=False)``."""
        return self.model_copy(
            update={"platform": self.platform.model_copy(update={"queue": self.queue.model_copy(update=changes)})}
        )


class ScenarioFile(Model):
    """A host scenario (YAML): a platform name, settings, and fio jobs (inline options or a job file)."""

    kind: Literal["host"] = Field("host", description="the kind of scenario (scenarios.config.registry)")
    name: str
    description: str = ""
    platform: str
    set: dict[str, Any] = Field(default_factory=dict, description="--set style overrides applied first")
    job_file: str | None = Field(None, description="fio job file, relative to the scenario file")
    jobs: list[dict[str, Any]] = Field(default_factory=list, description="fio jobs as option dicts (name + options)")
    seed: Seed = 1
    plugins: list[str] = Field(
        default_factory=list,
        description=(
            "plug-ins imported before the run: .py files (relative to the scenario file) or module names "
            "(from Python's import path); Python code that runs with your rights"
        ),
    )

    @model_validator(mode="after")
    def _one_source_of_jobs(self):
        if self.job_file is not None and self.jobs:
            raise ValueError("give either job_file or jobs, not both (the jobs of one would be dropped)")
        return self


def platform_by_name(name: str) -> PlatformConfig:
    """A built-in platform by name, or a platform YAML/JSON file (as `stacksim calibrate` writes)."""
    return load_platform(name)


def default_platform_name() -> str:
    """The platform of the built-in default scenario: what ``stacksim run`` (no arguments) runs on,
    and the platform of commands whose input names none (``stacksim replay`` without ``--platform``)."""
    return validate(
        ScenarioFile, load_data_file(builtin_scenarios()[DEFAULT_SCENARIO]), where=DEFAULT_SCENARIO
    ).platform


def resolve(
    *,
    job_file: str | None = None,
    scenario: str | None = None,
    platform: str | None = None,
    sets: dict[str, Any] | None = None,
    seed: int | None = None,
    jobs: list[FioJob] | None = None,
    env: dict[str, str] | None = None,
) -> RunConfig:
    """Build a :class:`RunConfig`; every error is a :class:`ConfigError` naming the bad input.
    ``jobs``: fio jobs already built (e.g. from a fio JSON's options) instead of a job file or
    scenario. ``env``: environment variables for the job file's ``${VAR}``, over the process's."""
    sets = dict(sets or {})
    scen: ScenarioFile | None = None
    base_dir = Path.cwd()
    given_jobs = jobs
    if job_file is None and scenario is None and given_jobs is None:
        scenario = DEFAULT_SCENARIO
    if scenario is not None:
        data, path = load_scenario(scenario, "host")
        scen = validate(ScenarioFile, data, where=str(path))
        base_dir = path.parent
        sets = {**scen.set, **sets}
    pname = platform or (scen.platform if scen else None)
    if pname is None:
        raise ConfigError("--platform NAME is required with a job file (see `stacksim list`)")
    pdata = platform_by_name(pname).model_dump(mode="json")  # tuples as lists: cpu.cstates.1.power_w=...
    fio_sets = _apply_platform_sets(pdata, sets)
    plat = validate(PlatformConfig, pdata, where=f"platform {pname}")
    jobs = _jobs(scen, base_dir, job_file, given_jobs, plat, env)
    if fio_sets:
        jobs = _override_jobs(jobs, fio_sets)
    jobs = [_numa_nodes(_size_share(resolve_protection(resolve_zoned(j, plat.ssd), plat), plat), plat) for j in jobs]
    _check_jobs(jobs, plat)
    check_seed(seed, "--seed")
    return RunConfig(
        name=scen.name if scen else Path(job_file).stem if job_file else jobs[0].name,
        platform=plat,
        jobs=tuple(jobs),
        seed=seed if seed is not None else (scen.seed if scen else 1),
        plugins=tuple(str(base_dir / p) if p.endswith(".py") else p for p in scen.plugins) if scen else (),
    )


#: ``--set job.NAME.OPTION=VALUE``: the fio option of the job (section) NAME only
JOB_PREFIX = "job."


def _override_jobs(jobs: list[FioJob], fio_sets: dict[str, str]) -> list[FioJob]:
    """fio options from ``--set``: ``OPTION=VALUE`` for every job, ``job.NAME.OPTION=VALUE`` for the
    job named NAME (a tenant of a multi-job run: ``job.tput.numjobs=4``), applied after the
    all-jobs ones; ``job.NAME.numjobs=0`` leaves the job out (the tenant absent: a sweep's zero
    point; fio itself takes numjobs >= 1)."""
    common = {k: v for k, v in fio_sets.items() if not k.startswith(JOB_PREFIX)}
    per_job: dict[str, dict[str, str]] = {}
    for key, v in fio_sets.items():
        if key.startswith(JOB_PREFIX):
            name, option = key[len(JOB_PREFIX) :].rsplit(".", 1)
            per_job.setdefault(name, {})[option] = v
    names = [j.name for j in jobs]
    for name in per_job:
        if name not in names:
            raise ConfigError(f"--set job.{name}.*: no job named '{name}' (jobs: {', '.join(names)})")
    out = []
    for j in jobs:
        own = per_job.get(j.name, {})
        if own.get("numjobs", "").strip() == "0":
            continue
        opts = {**common, **own}
        out.append(apply_overrides(j, opts) if opts else j)
    if not out:
        raise ConfigError("--set job.*.numjobs=0 leaves no job to run")
    return out


def _apply_platform_sets(pdata: dict, sets: dict[str, Any]) -> dict[str, str]:
    """Apply the platform keys of ``sets`` (``queue.*``, ``cpu.*``, ...) to the platform data
    ``pdata`` in place; return the rest: fio options (text, as a job file would give them)."""
    fio_sets: dict[str, str] = {}

    def fio_option(key: str, raw: Any) -> None:
        # job.NAME.OPTION: one job's option (_override_jobs); any other dotted key is no fio option
        if "." in key and not (key.startswith(JOB_PREFIX) and key.count(".") >= 2):
            raise ConfigError(
                f"--set {key}: unknown section '{key.split('.', 1)[0]}' (use queue., nvme., cpu., ssd., pagecache., "
                f"kernel., sched., power., job.NAME., or a fio option)"
            )
        fio_sets[key] = raw if isinstance(raw, str) else str(int(raw) if isinstance(raw, bool) else raw)

    apply_sets(pdata, sets, fio_option)
    return fio_sets


def _jobs(
    scen: ScenarioFile | None,
    base_dir: Path,
    job_file: str | None,
    given_jobs,
    plat: PlatformConfig,
    env: dict[str, str] | None = None,
) -> list[FioJob]:
    """The fio jobs: given ones, the scenario's job file or inline jobs, or the job file (``env``:
    its ``${VAR}`` values over the process environment's)."""
    if given_jobs is not None:
        jobs = list(given_jobs)
    elif scen is not None and scen.job_file:
        jobs = list(
            parse_fio_file(
                base_dir / scen.job_file, keywords=platform_keywords(plat.cpu.logical_cpus, plat.memory_bytes)
            ).jobs
        )
    elif scen is not None:
        if not scen.jobs:
            raise ConfigError(f"scenario {scen.name}: no jobs (give 'jobs' or 'job_file')")
        jobs = []
        for i, opts in enumerate(scen.jobs):
            opts = {str(k): ("1" if v is True else "0" if v is False else str(v)) for k, v in opts.items()}
            name = opts.pop("name", f"job{i}")
            jobs.append(job_from_options(opts, name=name, source=f"{scen.name}:jobs[{i}]"))
    else:
        keywords = platform_keywords(plat.cpu.logical_cpus, plat.memory_bytes)
        environ = {**os.environ, **env} if env else None
        jobs = list(parse_fio_file(job_file, keywords=keywords, env=environ).jobs)
    return jobs


def _size_share(job: FioJob, plat: PlatformConfig) -> FioJob:
    """fio's ``size=N%`` and ``offset=N%``: shares of the device's capacity, the size rounded down to
    the job's largest block size (fio works in whole blocks), the offset aligned down to its
    smallest one (fio's default offset_align)."""
    if job.size_percent is None and job.offset_percent is None:
        return job
    cap = plat.ssd.capacity_bytes
    if cap is None:
        what = f"size={job.size_percent:g}%" if job.size_percent is not None else f"offset={job.offset_percent:g}%"
        raise ConfigError(
            f"job '{job.name}': {what} needs the device's capacity: set ssd.capacity_bytes ({plat.ssd.model} has none)"
        )
    update: dict = {"size_percent": None, "offset_percent": None}
    if job.size_percent is not None:
        bs = max(job.bs_read_bytes, job.bs_write_bytes, 512)
        size = int(cap * job.size_percent / 100.0) // bs * bs
        if job.fill_device:  # fio's fill_device: up to the device's end (ENOSPC), past the offset;
            # a file: the file system's free space, whole extents (models.os.fs.filesystem's layout)
            on_file = bool(job.directory) or any(not is_device(n) for n in job.filename)
            grain = EXTENT_ALIGN_BYTES if on_file else 1
            size = (cap - job.offset_bytes) // grain * grain // bs * bs
        if size <= 0:
            raise ConfigError(f"job '{job.name}': size={job.size_percent:g}% of {cap} bytes is less than one block")
        update["size_bytes"] = size
    if job.offset_percent is not None:
        align = min([b for b in (job.bs_read_bytes, job.bs_write_bytes) if b] or [512])
        update["offset_bytes"] = int(cap * job.offset_percent / 100.0) // align * align
    return job.model_copy(update=update)


def _numa_nodes(job: FioJob, plat: PlatformConfig) -> FioJob:
    """fio's ``numa_cpu_nodes``: the job runs on the CPUs of these nodes (libnuma's
    numa_run_on_node_mask, an affinity like cpus_allowed's); node n is socket n of the platform
    (``cpu.sockets``), its CPUs as Linux numbers them (``CpuConfig.node_cpus``). A job that also
    sets ``cpus_allowed`` keeps the CPUs of its list inside those nodes. ``numa_mem_policy``'s nodes
    must exist too."""
    sockets = plat.cpu.sockets
    pol = job.numa_mem_policy
    for n in pol[1] if pol is not None else ():
        if n >= sockets:
            raise ConfigError(
                f"job '{job.name}': numa_mem_policy names node {n}; the platform ({plat.cpu.model}) has "
                f"{sockets} NUMA node(s): 0-{sockets - 1}"
            )
    nodes = job.numa_cpu_nodes
    if nodes is None:
        return job
    bad = next((n for n in nodes if n != -1 and not 0 <= n < sockets), None)
    if bad is not None:
        one = " (one socket, one NUMA node)" if sockets == 1 else ""
        raise ConfigError(
            f"job '{job.name}': numa_cpu_nodes names node {bad}; the platform ({plat.cpu.model}) has "
            f"{sockets} NUMA node(s): 0-{sockets - 1}{one}"
        )
    chosen = range(sockets) if -1 in nodes else sorted(set(nodes))
    node_cpus = tuple(c for n in chosen for c in plat.cpu.node_cpus(n))
    cpus = tuple(c for c in (job.cpus_allowed or sorted(node_cpus)) if c in node_cpus)
    if not cpus:
        raise ConfigError(f"job '{job.name}': cpus_allowed has no CPU on the nodes of numa_cpu_nodes")
    return job.model_copy(update={"cpus_allowed": cpus, "numa_cpu_nodes": None})


def _check_jobs(jobs: list[FioJob], plat: PlatformConfig) -> None:
    """Every job ends, names CPUs the platform has, and fio would start them all."""
    for j in jobs:
        if j.time_based and j.runtime_ns is None:  # (after --set: `--set runtime=20ms` completes the job)
            raise ConfigError(
                f"job '{j.name}': option 'time_based' needs runtime > 0 (fio warns 'time_based requires a"
                " runtime/timeout setting' and runs until it is stopped)"
            )
        if j.ioengine == "cpuio" and j.runtime_ns is None:
            raise ConfigError(
                f"job '{j.name}': ioengine=cpuio needs runtime > 0: it does no IO, so no size ends it"
                " (fio's cpuio job runs until stopped)"
            )
        if j.runtime_ns is None and j.size_bytes is None and j.filesize_bytes is None and j.io_size_bytes is None:
            raise ConfigError(f"job '{j.name}': set runtime (or size) so the run ends")
        for cpu in j.cpus_allowed or ():
            if cpu >= plat.cpu.logical_cpus:
                raise ConfigError(f"job '{j.name}': cpus_allowed names CPU {cpu}, platform has {plat.cpu.logical_cpus}")
    threads = sum(j.numjobs for j in jobs)
    if threads > FIO_MAX_JOBS:
        raise ConfigError(
            f"{threads} jobs in all (numjobs added up over the job sections): fio runs at most "
            f"{FIO_MAX_JOBS} (its default --max-jobs)"
        )
