"""One job from its options: the items of its section (``[global]``'s first, then its own, or
``--set`` options, or overrides on a job already built) applied in order on fio's defaults, the
last of each option winning (:func:`build_job`), then the whole job checked (:mod:`.checks`) and
validated (:class:`models.ioengines.job.FioJob`), every error naming the file, line and job."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from models.ioengines.job import FIO_MAX_JOBS, MAX_RW_BYTES, FioJob
from simcore.errors import ConfigError

from . import options as opts
from .checks import check_job
from .handlers import HANDLERS, set_ioengine
from .items import Fail, Item, empty_number
from .units import parse_bool, parse_int, parse_size, parse_time_ns

__all__ = ["JOB_FIELDS", "build_job"]

_FIELD_OPTION = {
    "bs_read_bytes": "bs",
    "bs_write_bytes": "bs",
    "numjobs": "numjobs",
    "runtime_ns": "runtime",
    "ramp_time_ns": "ramp_time",
    "size_bytes": "size",
    "offset_bytes": "offset",
    "thinktime_ns": "thinktime",
    "iodepth": "iodepth",
}
_LIMIT_REASON = {
    "bs": f"the kernel's largest single transfer (MAX_RW_COUNT = {MAX_RW_BYTES} bytes = 2 GiB - 4 KiB)",
    "numjobs": f"fio's limit of {FIO_MAX_JOBS} jobs (its default --max-jobs)",
}
JOB_FIELDS = {
    name: f.default for name, f in FioJob.model_fields.items() if name not in ("name", "ignored_options", "source")
}


def _normalise(item: Item, kb: int) -> str:
    """Canonical text of a limited option's value, for comparison with its neutral values."""
    s, v = item.spec, item.value
    if s.kind in ("bool", "flag"):
        return "1" if parse_bool(v, option=item.key, flag=s.kind == "flag") else "0"
    if s.kind == "int":
        return str(parse_int(v, option=item.key))
    if s.kind == "size":
        return str(parse_size(v, option=item.key, kb_base=kb, allow_zero=True))
    if s.kind == "time":
        return str(parse_time_ns(v, option=item.key))
    if v is None or not v.strip():
        raise ConfigError(f"option '{item.key}' needs a value")
    return "".join(v.split()).lower()


def build_job(name: str, items: list[Item], *, source: str, base: dict[str, Any] | None = None) -> FioJob:
    """Apply ``items`` in order (last wins) on top of ``base`` (fio defaults) and validate."""
    job = f"job '{name}'"
    last: dict[str, Item] = {}
    for it in items:
        last[it.spec.name] = it

    def fail(msg: str, it: Item | None) -> ConfigError:
        return ConfigError(f"{it.where}, {job}: {msg}" if it else f"{job} ({source}): {msg}")

    _engine_first(last, fail)
    unknown = next((it.error for it in items if it.error is not None), None)
    if unknown is not None:
        raise unknown
    kb = _kb_base(last, fail)
    state: dict[str, Any] = dict(JOB_FIELDS if base is None else base)
    ignored = _apply_items(items, last, state, kb, fail)
    check_job(items, last, state, kb, fail)
    try:
        return FioJob(name=name, source=source, ignored_options=tuple(sorted(ignored)), **state)
    except ValidationError as exc:  # limits of the kernel and fio (MAX_RW_BYTES, FIO_MAX_JOBS, ...)
        err = exc.errors()[0]
        option = _FIELD_OPTION.get(str(err["loc"][0]) if err["loc"] else "", "")
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "less_than_equal" and option in _LIMIT_REASON:
            msg = f"{err['input']} is above {_LIMIT_REASON[option]}"
        elif err["type"] in ("less_than_equal", "greater_than", "greater_than_equal"):
            msg = f"{msg} (got {err['input']})"
        it = last.get(option) or last.get("ioengine") if option else None
        raise fail(f"option '{option}': {msg}" if option else msg, it) from None


def _engine_first(last: dict[str, Item], fail: Fail) -> None:
    """A job on an engine stacksim does not run is refused for its engine first: its other options
    (the engine's own, of an older fio, or not modelled) are moot."""
    it = last.get("ioengine")
    if it is not None:
        try:
            set_ioengine({}, it.value, 1024)
        except ConfigError as exc:
            raise fail(str(exc), it) from None


def _kb_base(last: dict[str, Item], fail: Fail) -> int:
    """fio's ``kb_base`` (1024 unless the job says 1000)."""
    if "kb_base" not in last:
        return 1024
    it = last["kb_base"]
    try:
        kb = parse_int(it.value, option="kb_base")
    except ConfigError as exc:
        raise fail(str(exc), it) from None
    if kb not in (1000, 1024):
        raise fail(f"option 'kb_base': must be 1000 or 1024, got {kb}", it)
    return kb


def _apply_items(items: list[Item], last: dict[str, Item], state: dict[str, Any], kb: int, fail: Fail) -> set[str]:
    """Modelled options update ``state``; the others are checked (a value where fio needs one, a
    neutral value for options not modelled yet) and returned as the ignored ones."""
    ignored: set[str] = set()
    for it in items:
        try:
            if it.spec.status == "used":
                if it.value is None and it.spec.kind not in ("bool", "flag") and it.spec.name != "ignore_error":
                    raise ConfigError(f"option '{it.key}' needs a value")
                HANDLERS[it.spec.name](state, it.value, kb)
                continue
            ignored.add(it.key)
            if it.spec.kind in ("bool", "flag"):
                parse_bool(it.value, option=it.key, flag=it.spec.kind == "flag")
            elif it.value is None and it.spec.name not in opts.OPTIONAL_VALUE:
                raise ConfigError(f"option '{it.key}' needs a value (fio would reject it too)")
            if it.spec.status == "limited" and last[it.spec.name] is it:
                value = _normalise(it, kb)
                if value not in it.spec.neutral:
                    ok = (
                        "; remove it"
                        if not it.spec.neutral
                        else "; stacksim accepts only " + " or ".join(f"{it.key}={n}" for n in it.spec.neutral)
                    )
                    given = it.key if it.value is None else f"{it.key}={it.value}"
                    raise ConfigError(
                        f"option '{given}' is accepted by fio but not modelled yet by stacksim: {it.spec.reason}{ok}"
                    )
        except ConfigError as exc:
            raise fail(empty_number(it.key, it.raw) if it.raw is not None else str(exc), it) from None
    return ignored
