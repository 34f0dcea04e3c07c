"""Parse fio job files (INI) into validated :class:`FioJob` descriptions.

fio behaviours mirrored: ``[global]`` sets defaults for the job sections that follow it (a
later ``[global]`` affects only later jobs); a job's own options override them and, within a
section, the last occurrence of an option wins; ``;`` and ``#`` start comments (anywhere on a line,
as fio strips them); fio's set-type options (``time_based``, ``group_reporting``, ``fixedbufs``,
...) may be given without a value (= 1) while plain booleans (``direct``) need one, as in fio 3.33;
``include`` lines, ``${VAR}`` expansion, reserved keywords and arithmetic are handled as fio does
(:mod:`.language`); ``stonewall``, ``wait_for``, ``new_group`` and ``exitall`` become job fields
(scenarios/run/assembly.py orders the jobs' starts); ``numjobs`` is kept, not expanded. All bad
input raises ConfigError naming the file, job, option and line. Units of the resulting fields are in
their names (``_ns``, ``_bytes``).

This module reads the file: its lines and ``include`` directives, its sections and ``[global]``'s
inheritance, fio's ``wait_for`` rules across jobs. The parts behind it: :mod:`.items` (an option as
written), :mod:`.handlers` (the option table: each option's conversion into the job's fields),
:mod:`.build` and :mod:`.checks` (one job from its options, checked as a whole), and the job itself,
:class:`models.ioengines.job.FioJob` (what the job threads read; importable from here too).
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterator, Mapping

from pydantic import BaseModel, ConfigDict

from models.ioengines.job import ENGINE_MAX_DEPTH, FIO_MAX_JOBS, MAX_RW_BYTES, FioJob
from simcore.config import read_text_file
from simcore.errors import ConfigError

from . import options as opts
from .build import build_job
from .items import UNKNOWN, Item, make_item

__all__ = [
    "ENGINE_MAX_DEPTH",
    "FIO_MAX_JOBS",
    "MAX_INCLUDE_DEPTH",
    "MAX_RW_BYTES",
    "FioJob",
    "FioJobFile",
    "apply_overrides",
    "job_from_options",
    "parse_fio_file",
    "parse_fio_text",
]


class FioJobFile(BaseModel):
    """A parsed job file: jobs in file order, and the union of their ignored options."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str
    jobs: tuple[FioJob, ...]
    ignored_options: tuple[str, ...] = ()


def _strip_comment(line: str) -> str:
    cut = min((i for i in (line.find(";"), line.find("#")) if i >= 0), default=len(line))
    return line[:cut].strip()


#: Deepest nesting of ``include`` directives (an include cycle stops here with a message).
MAX_INCLUDE_DEPTH = 16


def _lines(text: str, path: str, depth: int = 0) -> Iterator[tuple[str, str]]:
    """``(line, where)`` for each non-empty line, ``include FILE`` lines replaced by the
    lines of FILE (relative paths: to the including file's directory, as fio resolves them)."""
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = _strip_comment(raw)
        if not line:
            continue
        where = f"{path} line {lineno}"
        parts = line.split(None, 1)
        if parts[0] == "include" and "=" not in line:
            if len(parts) < 2:
                raise ConfigError(f"'include' needs a file name ({where})")
            if depth >= MAX_INCLUDE_DEPTH:
                raise ConfigError(f"include nested deeper than {MAX_INCLUDE_DEPTH} files ({where}): an include cycle?")
            base = Path(path).parent if not path.startswith("<") else Path(".")
            target = Path(parts[1].strip())
            target = target if target.is_absolute() else base / target
            sub = read_text_file(target, what=f"included file (include at {where})")
            for item in _lines(sub, str(target), depth + 1):
                if item[0].startswith("["):
                    raise ConfigError(
                        f"included file {target} has a section header {item[0]} ({item[1]}); "
                        "fio does not allow [sections] in included files"
                    )
                yield item
            continue
        yield line, where


def parse_fio_text(
    text: str,
    *,
    path: str = "<string>",
    keywords: Mapping[str, int] | None = None,
    env: Mapping[str, str] | None = None,
) -> FioJobFile:
    """Parse fio job-file text; ``path`` is used in messages and ``FioJob.source``.

    ``keywords``: values of fio's reserved keywords (``$ncpus``: :func:`language.platform_keywords`);
    ``env``: the environment for ``${VAR}`` (default: the process environment, as fio).
    """
    global_items: list[Item] = []
    jobs: list[tuple[str, list[Item], list[Item]]] = []  # name, inherited globals, own items
    current: list[Item] | None = None
    section = ""
    for line, where in _lines(text, path):
        if line.startswith("["):
            section = line[1:-1].strip() if line.endswith("]") else ""
            if not section:
                raise ConfigError(f"malformed section header '{line}' ({where})")
            if section == "global":
                current = global_items
            else:
                current = []
                jobs.append((section, list(global_items), current))
            continue
        key, eq, value = line.partition("=")
        key = key.strip()
        if current is None:
            raise ConfigError(f"option '{key}' outside of any [section] ({where}); fio would reject it too")
        if section == "global":
            where += " [global]"
        try:
            item = make_item(
                key, value.strip() if eq else None, section=section, where=where, keywords=keywords, env=env
            )
        except ConfigError as exc:
            if opts.lookup(key) is not None:
                raise
            item = Item(key, None, UNKNOWN, where, exc)  # an engine's option: its engine may be refused first
        current.append(item)
    if not jobs:
        unknown = next((it.error for it in global_items if it.error is not None), None)
        raise unknown or ConfigError(f"no job sections in {path} (only [global] or nothing); fio would run no job")
    built = [build_job(name, [*inherited, *own], source=f"{path}:[{name}]") for name, inherited, own in jobs]
    _check_waits(built)
    ignored = sorted({n for job in built for n in job.ignored_options})
    return FioJobFile(path=path, jobs=tuple(built), ignored_options=tuple(ignored))


def _check_waits(jobs: list[FioJob]) -> None:
    """fio's wait_for rules: the waitee is an earlier job (no forward references), with a unique
    name, and not the job itself."""
    for i, job in enumerate(jobs):
        if job.wait_for is None:
            continue
        names = [j.name for j in jobs[:i]]
        if job.wait_for == job.name:
            raise ConfigError(f"{job.source}: option 'wait_for={job.wait_for}': a job cannot wait for itself")
        if job.wait_for not in names:
            later = any(j.name == job.wait_for for j in jobs[i + 1 :])
            raise ConfigError(
                f"{job.source}: option 'wait_for={job.wait_for}': "
                + (
                    "the waitee must be defined before the waiter (fio allows no forward references)"
                    if later
                    else f"no earlier job is named '{job.wait_for}' (jobs before it: {', '.join(names) or 'none'})"
                )
            )
        if names.count(job.wait_for) > 1:
            raise ConfigError(
                f"{job.source}: option 'wait_for={job.wait_for}': several jobs have that name; "
                "fio needs a unique waitee"
            )


def parse_fio_file(
    path: str | Path, *, keywords: Mapping[str, int] | None = None, env: Mapping[str, str] | None = None
) -> FioJobFile:
    """Read and parse a fio job file (see :func:`parse_fio_text`)."""
    return parse_fio_text(read_text_file(path, what="job file"), path=str(path), keywords=keywords, env=env)


def job_from_options(options: dict[str, str], *, name: str = "job", source: str = "<set>") -> FioJob:
    """Build one job from fio ``key: value`` options (e.g. ``--set`` style); ``None``/"" = no value."""
    items = [
        make_item(k, None if v is None or str(v) == "" else str(v), section=name, where=source)
        for k, v in options.items()
    ]
    return build_job(name, items, source=source)


def apply_overrides(job: FioJob, overrides: dict[str, str]) -> FioJob:
    """Return ``job`` with fio-key overrides (e.g. ``{"bs": "8k", "numjobs": "4"}``) applied on
    top of its resolved values, validated like a job file."""
    items = [
        make_item(k, None if v is None or str(v) == "" else str(v), section=job.name, where="override")
        for k, v in overrides.items()
    ]
    base = job.model_dump(exclude={"name", "ignored_options", "source"})
    new = build_job(job.name, items, source=job.source, base=base)
    ignored = tuple(sorted(set(job.ignored_options) | set(new.ignored_options)))
    return new.model_copy(update={"ignored_options": ignored})
