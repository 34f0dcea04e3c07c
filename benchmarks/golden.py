"""Golden figures: every built-in scenario, the server scenarios and the validation suites, to full
precision, so a refactor that must not change results can prove it did not.

    python benchmarks/golden.py --record        # write tests/golden/golden.json from this checkout
    python benchmarks/golden.py --check         # recompute every case, report each figure that moved
    python benchmarks/golden.py --check --fast  # only the fast subset (what tests/test_golden.py runs)

A case is one simulation through the public API (``scenarios.run.simulate.simulate``,
``scenarios.studies.validation.PointRunner``); its result is
flattened to ``path.to.figure -> value`` with floats as ``repr`` (exact), without wall-clock
figures (``sim.wall_s`` and the speeds derived from it). Cases marked ``fast`` (a few seconds
together) are the built-in scenarios at their own settings when they take under ~2 s, else at a
shortened runtime recorded in the case's ``sets``. The full set also runs every scenario at its
own settings and the validation suites (``stacksim validate --suite all``).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
GOLDEN = REPO / "tests" / "golden" / "golden.json"

#: wall-clock figures: they differ from run to run by nature
WALL_CLOCK = {"sim.wall_s", "sim.real_time_factor", "sim.ios_per_wall_s"}

SERVER_POLICIES = ("spdk-static", "linux", "governor", "dpdk-empty-poll", "dynamic", "hybrid", "sandman")
TRACES = {"msr": "scenarios/data/traces/msr_sample.csv", "alibaba": "scenarios/data/traces/alibaba_sample.csv"}


@dataclass(frozen=True)
class Case:
    """One simulation: ``kind`` is ``run`` (a built-in YAML scenario), ``server`` (a server
    scenario) or ``validate`` (a validation suite); ``sets`` are ``--set`` overrides."""

    name: str
    kind: str
    scenario: str
    sets: dict = field(default_factory=dict)
    fast: bool = False


def _builtin_names() -> list[str]:
    from scenarios.config.registry import builtin_scenarios

    return sorted(builtin_scenarios("host"))


#: built-in scenarios that take more than ~2 s at their own settings: their fast variant
SHORT = {
    "default": {"runtime": "100ms", "ramp_time": "20ms"},
    "hybrid8": {"runtime": "30ms", "ramp_time": "20ms"},
    "iosched-multi-mixed": {"runtime": "40ms", "ramp_time": "10ms"},
}


#: the runs quoted in docs/ (default scenario, 300 ms measured): name -> --set overrides
DOC_RUNS = {
    "interrupt": {},
    "classic-poll": {"queue.io_poll": "1", "hipri": "1", "queue.io_poll_delay": "-1"},
    "hybrid-poll": {"queue.io_poll": "1", "hipri": "1", "queue.io_poll_delay": "0"},
    "no-poll-state": {"cpu.cpuidle_disable": "[POLL]"},
    "idle-poll": {"cpu.cpuidle_disable": "[C1,C1E,C3,C6,C7s,C8]"},
    "turbo-off": {"cpu.turbo": "false"},
    "ondemand": {"cpu.cpufreq_governor": "ondemand"},
    "ondemand-io-not-busy": {"cpu.cpufreq_governor": "ondemand", "cpu.cpufreq.io_is_busy": "false"},
    "schedutil": {"cpu.cpufreq_governor": "schedutil"},
    "schedutil-no-boost": {"cpu.cpufreq_governor": "schedutil", "cpu.cpufreq.iowait_boost": "false"},
    "powersave": {"cpu.cpufreq_governor": "powersave"},
}


def cases() -> list[Case]:
    out = []
    for name in _builtin_names():
        out.append(Case(f"run/{name}", "run", name, fast=name not in SHORT))
        if name in SHORT:
            out.append(Case(f"run/{name}@short", "run", name, dict(SHORT[name]), fast=True))
    # mechanisms the built-in scenarios do not exercise, on the default scenario shortened
    short = {"runtime": "50ms", "ramp_time": "10ms"}
    variants = {
        "classic-poll": {"queue.io_poll": "1", "hipri": "1"},
        "hybrid-fixed-5us": {"queue.io_poll": "1", "queue.io_poll_delay": "5", "hipri": "1"},
        "libaio-qd8": {"ioengine": "libaio", "iodepth": "8"},
        "io_uring-qd4-2jobs": {"ioengine": "io_uring", "iodepth": "4", "numjobs": "2", "runtime": "20ms"},
        "ondemand": {"cpu.cpufreq_governor": "ondemand", "cpu.turbo": "false"},
        "schedutil": {"cpu.cpufreq_governor": "schedutil"},
        "powersave": {"cpu.cpufreq_governor": "powersave"},
        "randwrite-64k": {"rw": "randwrite", "bs": "64k"},
        "rate-limited": {"rate_iops": "20000"},
    }
    for vname, sets in variants.items():
        out.append(Case(f"run/default+{vname}", "run", "default", {**short, **sets}, fast=True))
    # the runs docs/ quotes (tools/docs_defaults.py makes the pages' tables and figures from them):
    # the default scenario for 300 ms after its 100 ms ramp, per completion mode, idle setting and
    # cpufreq governor
    for dname, sets in DOC_RUNS.items():
        out.append(Case(f"docs/{dname}", "run", "default", {"runtime": "300ms", **sets}, fast=True))
    for sched in ("mq-deadline", "kyber", "bfq"):
        out.append(
            Case(
                f"run/iosched-single+{sched}",
                "run",
                "iosched-single",
                {"queue.scheduler": sched, "runtime": "40ms"},
                fast=True,
            )
        )
    for irq in ("none", "adaptive", "cinterrupts"):
        out.append(
            Case(f"run/ci-batched+irq-{irq}", "run", "ci-batched", {"nvme.irq": irq, "runtime": "40ms"}, fast=True)
        )
    # server scenarios: each at its default settings (burst: time_scale 0.05, the README's), then
    # every core-scheduling policy on a short stable and burst run
    out.append(Case("server/server-stable", "server", "server-stable"))
    out.append(Case("server/server-burst@0.05", "server", "server-burst", {"workload.time_scale": "0.05"}))
    for pol in SERVER_POLICIES:
        out.append(
            Case(
                f"server/server-stable+{pol}@short",
                "server",
                "server-stable",
                {"server.policy": pol, "workload.duration_s": "0.02", "workload.warmup_s": "0.005"},
                fast=True,
            )
        )
        out.append(
            Case(
                f"server/server-burst+{pol}@0.005",
                "server",
                "server-burst",
                {"server.policy": pol, "workload.time_scale": "0.005"},
                fast=pol in ("sandman", "dynamic"),
            )
        )
    for tname, path in TRACES.items():
        out.append(
            Case(
                f"server/server-trace+{tname}+sandman",
                "server",
                "server-trace",
                {"workload.trace": path, "server.policy": "sandman"},
                fast=tname == "msr",
            )
        )
    for suite in ("poll-vs-interrupt", "io-schedulers"):
        out.append(Case(f"validate/{suite}", "validate", suite))
    return out


# ------------------------------------------------------------------------------------------------ flattening
def flatten(obj, prefix: str = "", out: dict | None = None) -> dict:
    """``{"a": {"b": [1.5]}}`` -> ``{"a.b.0": "1.5"}``: floats as ``repr`` strings (exact, and NaN
    and infinities survive JSON), ints and bools as they are, ``None`` as null."""
    out = {} if out is None else out
    if isinstance(obj, Mapping):
        for k, v in obj.items():
            key = f"{prefix}.{k}" if prefix else str(k)
            if str(k).startswith("_") or key in WALL_CLOCK:
                continue
            flatten(v, key, out)
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            flatten(v, f"{prefix}.{i}", out)
    elif hasattr(obj, "tolist"):  # numpy scalar or array
        flatten(obj.tolist(), prefix, out)
    elif isinstance(obj, bool) or obj is None:
        out[prefix] = obj
    elif isinstance(obj, int):
        out[prefix] = int(obj)
    elif isinstance(obj, float):
        out[prefix] = repr(float(obj))
    elif isinstance(obj, str):
        out[prefix] = obj.replace(str(REPO), "<repo>")  # paths (e.g. a trace's) independent of the checkout
    else:
        raise TypeError(f"{prefix}: cannot record a {type(obj).__name__}")
    return out


def _with_repo_paths(sets: dict) -> dict:
    return {k: str(REPO / v) if k == "workload.trace" else v for k, v in sets.items()}


def run_case(case: Case) -> dict:
    """The flattened figures of ``case``."""
    if case.kind == "run":
        from scenarios.config.host import resolve
        from scenarios.run.simulate import simulate

        return flatten(simulate(resolve(scenario=case.scenario, sets=dict(case.sets))))
    if case.kind == "server":
        from scenarios.config.server import resolve_server
        from scenarios.run.simulate import simulate

        return flatten(simulate(resolve_server(case.scenario, _with_repo_paths(case.sets))))
    if case.kind == "validate":
        from scenarios.studies.validation import PointRunner, metric_value, suite_points

        runner = PointRunner(platform=None)
        out = {}
        for p in suite_points(case.scenario):
            summary = runner.summary(p)
            for m, measured in p.metrics.items():
                out[f"{p.label}.measured.{m}"] = repr(float(measured))
                out[f"{p.label}.predicted.{m}"] = repr(float(metric_value(summary, m)))
            flatten(summary, f"{p.label}.summary", out)
        return out
    raise ValueError(f"unknown case kind {case.kind!r}")


# ------------------------------------------------------------------------------------------------ comparing
def _close_repr(a, b) -> str:
    """How far apart two recorded values are, for the report."""
    try:
        fa, fb = float(a), float(b)
    except (TypeError, ValueError):
        return ""
    if math.isfinite(fa) and math.isfinite(fb) and fa != 0:
        return f" ({100 * (fb / fa - 1):+.3g}%)"
    return ""


def diff(name: str, want: dict, got: dict, limit: int = 40) -> list[str]:
    """One line per figure of case ``name`` that moved, appeared or disappeared."""
    lines = []
    for key in sorted(set(want) | set(got)):
        if key not in got:
            lines.append(f"{name}: {key} missing (was {want[key]!r})")
        elif key not in want:
            lines.append(f"{name}: {key} new (= {got[key]!r})")
        elif want[key] != got[key]:
            lines.append(f"{name}: {key} moved {want[key]!r} -> {got[key]!r}{_close_repr(want[key], got[key])}")
    if len(lines) > limit:
        lines = lines[:limit] + [f"{name}: ... and {len(lines) - limit} more"]
    return lines


def load() -> dict:
    return json.loads(GOLDEN.read_text())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    mode = ap.add_mutually_exclusive_group(required=True)
    mode.add_argument("--record", action="store_true", help=f"(re)write {GOLDEN.relative_to(REPO)}")
    mode.add_argument("--check", action="store_true", help="recompute and compare with the recorded figures")
    ap.add_argument("--fast", action="store_true", help="only the fast subset")
    ap.add_argument("--only", help="only cases whose name contains this text")
    ap.add_argument("--commit", help="with --record: the commit the figures come from (stored in the file)")
    args = ap.parse_args(argv)
    todo = [c for c in cases() if (c.fast or not args.fast) and (args.only is None or args.only in c.name)]
    if args.record:
        old = load()["cases"] if GOLDEN.is_file() and (args.fast or args.only) else {}
        figures = dict(old)
        for c in todo:
            t0 = time.perf_counter()
            figures[c.name] = run_case(c)
            print(f"{c.name}: {len(figures[c.name])} figures ({time.perf_counter() - t0:.1f} s)", flush=True)
        doc = {
            "commit": args.commit,
            "note": "written by benchmarks/golden.py --record; floats are repr() strings",
            "cases": {c.name: figures[c.name] for c in cases() if c.name in figures},
        }
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(json.dumps(doc, indent=0, sort_keys=False) + "\n")
        print(f"wrote {GOLDEN.relative_to(REPO)}: {len(doc['cases'])} cases")
        return 0
    recorded = load()["cases"]
    bad = 0
    for c in todo:
        t0 = time.perf_counter()
        if c.name not in recorded:
            print(f"{c.name}: not recorded")
            bad += 1
            continue
        lines = diff(c.name, recorded[c.name], run_case(c))
        print(
            f"{c.name}: {'OK' if not lines else f'{len(lines)} figures moved'} ({time.perf_counter() - t0:.1f} s)",
            flush=True,
        )
        for line in lines:
            print("  " + line)
        bad += bool(lines)
    print("all figures identical" if not bad else f"{bad} of {len(todo)} cases differ")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
