"""``stacksim list NAME`` for a built-in scenario or sweep: its description and its whole
configuration as the file gives it (platform, ``set`` overrides, jobs or workload, axes), and for
a host scenario the policies the run resolves to (completion per job, IO scheduler, interrupt
generation, cpufreq and cpuidle governors) and the command that runs it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["config_lines"]


def _value(v: Any) -> str:
    """A YAML value on one line: ``{a: 1, b: x}``, ``[1, 2]``, or the scalar."""
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k}: {_value(x)}" for k, x in v.items()) + "}"
    if isinstance(v, list):
        return "[" + ", ".join(_value(x) for x in v) + "]"
    return str(v)


def _file_lines(data: dict) -> list[str]:
    """The file's configuration, one line per top-level key (a job per line)."""
    out = []
    for key, v in data.items():
        if key in ("name", "description", "kind"):
            continue
        if key == "jobs" and isinstance(v, list):
            for job in v:
                opts = dict(job)
                name = opts.pop("name", "")
                out.append(f"  job {name}: " + " ".join(f"{k}={_value(x)}" for k, x in opts.items()))
        elif isinstance(v, dict) and len(_value(v)) > 90:
            out.append(f"  {key}:")
            out.extend(f"    {k}: {_value(x)}" for k, x in v.items())
        else:
            out.append(f"  {key}: {_value(v)}")
    return out


def _host_policies(name: str) -> list[str]:
    """The policies a host scenario's run resolves to, and the command that runs it."""
    from models.ioengines import select_policy_name
    from scenarios.config.host import resolve
    from scenarios.run.iosched_switch import switched_queue

    cfg = resolve(scenario=name)
    plat = cfg.platform
    completion = ", ".join(f"{select_policy_name(cfg.queue, j.hipri, j.ioengine)} (job {j.name})" for j in cfg.jobs)
    return [
        f"  platform: {plat.name} ({plat.description})",
        f"  policies: completion {completion}; IO scheduler {switched_queue(cfg.queue, cfg.jobs).scheduler};"
        f" interrupt generation {plat.nvme.irq}; cpufreq {plat.cpu.cpufreq_governor};"
        f" cpuidle {plat.cpu.cpuidle_governor}",
        f"  run it: stacksim run --scenario {name}   (--set KEY=VALUE changes any of it)",
    ]


def config_lines(name: str, heading: str) -> list[str]:
    """The configuration lines of the built-in scenario or sweep ``name`` listed under ``heading``
    (none for other kinds: platforms, presets)."""
    from scenarios.config.registry import builtin_scenarios
    from scenarios.studies.sweep import builtin_sweeps
    from simcore.config import load_data_file

    kind = heading.split(" (")[0]
    files: dict[str, dict[str, Path]] = {
        "scenarios": builtin_scenarios("host"),
        "server scenarios": builtin_scenarios("server"),
        "sweeps": builtin_sweeps(),
    }
    path = files.get(kind, {}).get(name)
    if path is None:
        return []
    lines = _file_lines(load_data_file(path) or {})
    if kind == "scenarios":  # the platform named, with its description
        described = _host_policies(name)
        lines = [described[0] if line.startswith("  platform: ") else line for line in lines] + described[1:]
    elif kind == "sweeps":
        lines.append(f"  run it: stacksim sweep {name} -o {name}.csv")
    return lines
