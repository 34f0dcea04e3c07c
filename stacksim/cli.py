"""The ``stacksim`` command line.

Bad input (unknown key, platform or policy, bad value, missing file) prints one message naming the
problem and exits with status 2: no traceback, no partial output file.
"""

from __future__ import annotations

import argparse
import json
import math
import sys

from simcore.errors import ConfigError, error_line
from stacksim.fileargs import add_plugin_option, check_scenario_inputs, reads, writes

EXIT_BAD_INPUT = 2


def _add_run_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--platform",
        type=reads("--platform"),
        help="built-in platform name (see `stacksim list`) or platform YAML file",
    )
    p.add_argument(
        "--set",
        dest="sets",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override: queue.io_poll=1, queue.io_poll_delay=0, kernel.ctx_switch_cycles=3000, or a fio option (bs=8k)",
    )
    p.add_argument("--seed", type=int, help="random seed (default: the scenario's, else 1)")
    p.add_argument(
        "--json",
        dest="json_out",
        metavar="OUT",
        type=writes("--json"),
        help="write the full result as JSON ('-': standard output, the summary then goes to stderr)",
    )
    add_plugin_option(p)


def _version() -> str:
    from simcore.compiled import describe, package_version

    return f"stacksim {package_version()}: {describe()}"


class _VersionAction(argparse.Action):
    """``--version``: which code runs is found out (every compiled source hashed) only when asked."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help=None):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        print(_version())
        parser.exit()


def _add_records_options(run: argparse.ArgumentParser) -> None:
    """``run --records FILE`` and its ``--records-format``."""
    run.add_argument(
        "--records",
        metavar="OUT",
        type=writes("--records"),
        help="write per-IO records (.csv or .parquet; '-': CSV on standard output), or as a trace: .blkparse "
        "(blkparse text, Q/D/C), .log (fio latency log, one per thread), or any name with --records-format",
    )
    run.add_argument(
        "--records-format",
        choices=["csv", "parquet", "blkparse", "fiolog", "msr"],
        help="--records: the format (default: by the file's extension); blkparse, fiolog and msr are traces "
        "that validate --trace reads back (docs/traces-and-calibration.md)",
    )


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="stacksim",
        description="Cycle-level simulator of a host CPU, its OS IO stack and its SSDs.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument(
        "--version",
        action=_VersionAction,
        help="print the version and which code runs (compiled hot path or pure Python)",
    )
    sub = ap.add_subparsers(dest="cmd")
    run = sub.add_parser("run", help="simulate a fio job file or a scenario (default: the built-in default scenario)")
    run.add_argument(
        "job", nargs="?", type=reads("job"), help="fio job file (.fio/.ini), scenario YAML or built-in scenario name"
    )
    run.add_argument("--scenario", type=reads("--scenario"), help="built-in scenario name or scenario YAML path")
    _add_records_options(run)
    run.add_argument(
        "--rerun",
        metavar="OUT.json",
        type=reads("--rerun"),
        help="run again the run recorded in a --json output (its resolved configuration, seed and plug-ins),"
        " bit for bit when the code is the same; the plug-ins it names run only when named again with --plugin"
        " or confirmed by --trust-plugins",
    )
    run.add_argument(
        "--trust-plugins",
        action="store_true",
        help="with --rerun: run the plug-ins (Python code) the results file names without naming each with --plugin",
    )
    run.add_argument("--quiet", action="store_true", help="no terminal summary (and no progress line)")
    run.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress line on stderr while simulating (default: when stderr is a terminal and not --quiet)",
    )
    run.add_argument(
        "--trace",
        metavar="OUT.json",
        type=writes("--trace"),
        help="write a Chrome trace-event timeline (open in Perfetto / chrome://tracing)",
    )
    run.add_argument(
        "--trace-window", metavar="START:END", help="trace window in ms of simulated time (default: 2 ms after warm-up)"
    )
    run.add_argument("--trace-ios", type=int, default=2000, metavar="N", help="trace at most N IOs (default 2000)")
    _add_run_args(run)
    lst = sub.add_parser("list", help="list built-in scenarios, platforms and policies")
    lst.add_argument("name", nargs="?", help="show this scenario, platform or sweep with its whole description")
    sch = sub.add_parser("schema", help="print the JSON schema of a configuration model")
    sch.add_argument("what", nargs="?", default="scenario", choices=["scenario", "platform", "queue", "run", "sweep"])
    from stacksim import cli_platform, cli_probe, cli_sweep, cli_traces

    for module in (cli_traces, cli_sweep, cli_probe, cli_platform):
        module.add_subcommands(sub, COMMANDS)
    describe_subcommands(sub)
    return ap


def describe_subcommands(sub) -> None:
    """Give each sub-command's own ``--help`` page its one-line summary from the command list as its
    description, where it has none of its own (``stacksim run --help`` says what run does)."""
    summaries = {a.dest: a.help for a in sub._choices_actions}
    for name, parser in sub.choices.items():
        if parser.description is None and summaries.get(name):
            text = summaries[name]
            parser.description = text[:1].upper() + text[1:] + ("" if text.endswith(".") else ".")


def cmd_run(args) -> int:
    from scenarios.config.checks import print_warnings, run_warnings
    from scenarios.config.registry import source_args
    from scenarios.config.resolve import resolve_run
    from scenarios.config.sets import parse_sets
    from scenarios.run.provenance import file_record, provenance
    from scenarios.run.simulate import simulate
    from simcore.plugins import load_plugin
    from simcore.progress import progress_enabled
    from stacksim.output import format_run

    check_run_outputs(args)
    if args.trust_plugins and not args.rerun:
        raise ConfigError("--trust-plugins goes with --rerun (a plug-in of a new run is named with --plugin)")
    if args.rerun:
        rerun = _rerun_config(args)
        cfg, plugins, inputs = (
            rerun.cfg,
            rerun.cli_plugins,
            {"rerun_of": file_record(args.rerun), **(rerun.record.get("inputs") or {})},
        )
        for p in plugins:
            load_plugin(p)
    else:
        plugins = list(args.plugin)
        for p in plugins:
            load_plugin(p)
        if args.job and args.scenario:
            raise ConfigError("give either a job file / scenario file or --scenario, not both")
        source = source_args(args.job) if args.job else {"scenario": args.scenario}
        cfg = resolve_run(**source, platform=args.platform, sets=parse_sets(args.sets), seed=args.seed)
        _check_scenario_inputs(args, source)
        inputs = _run_inputs(args, source)
    print_warnings(run_warnings(cfg))
    tracer = _make_tracer(args, cfg.warmup_ns) if args.trace else None
    result = simulate(
        cfg, tracer=tracer, records=_record_sink(args), progress=progress_enabled(args.progress, args.quiet)
    )
    result.data["provenance"] = provenance(cfg, argv=args.argv, inputs=inputs, cli_plugins=plugins)
    _emit(args, result, format_run(cfg), cfg.platform.cpu.logical_cpus)
    print_warnings(result.get("warnings") or ())
    return 0


def _rerun_config(args):
    """--rerun OUT.json: the recorded run (alone: its configuration is the whole input)."""
    from scenarios.run.provenance import load_rerun

    given = [
        o
        for o, v in (
            ("JOB", args.job),
            ("--scenario", args.scenario),
            ("--platform", args.platform),
            ("--set", args.sets),
            ("--seed", args.seed),
        )
        if v
    ]
    if given:
        raise ConfigError(f"--rerun runs the recorded configuration as it was: drop {', '.join(given)}")
    rerun = load_rerun(args.rerun)
    _confirm_plugins(args, rerun)
    for w in rerun.warnings:
        print(f"stacksim: warning: {w}", file=sys.stderr)
    return rerun


def _confirm_plugins(args, rerun) -> None:
    """A results file is data: the plug-ins it names (code) run only when the command line names
    each one again (``--plugin``) or confirms them all (``--trust-plugins``); stderr says which run."""
    import os

    def same(spec: str) -> str:
        return os.path.realpath(spec) if spec.endswith(".py") else spec

    recorded = rerun.plugins
    known = {same(r) for r in recorded}
    for p in args.plugin:
        if same(p) not in known:
            shown = ", ".join(recorded) if recorded else "none"
            raise ConfigError(f"--plugin {p}: not a plug-in of the run recorded in {args.rerun} (it loaded: {shown})")
    named = {same(p) for p in args.plugin}
    missing = [r for r in recorded if same(r) not in named]
    if missing and not args.trust_plugins:
        raise ConfigError(
            f"--rerun {args.rerun}: the recorded run loaded the plug-in{'s' * (len(missing) > 1)} {', '.join(missing)}:"
            " Python code that a results file only names, which runs only when you say so: add "
            + " ".join(f"--plugin {m}" for m in missing)
            + ", or --trust-plugins to run every plug-in it names"
        )
    for r in recorded:
        how = "named by the results file, --trust-plugins" if r in missing else "named by --plugin"
        print(f"stacksim: note: --rerun {args.rerun}: running plug-in {r} ({how})", file=sys.stderr)


def _check_scenario_inputs(args, source: dict[str, str]) -> None:
    """No output of ``run`` may be one of a scenario file's own inputs (fileargs.check_scenario_inputs)."""
    outputs = [
        (o, w) for o, w in ((args.json_out, "--json"), (args.records, "--records"), (args.trace, "--trace")) if o
    ]
    check_scenario_inputs(source.get("scenario"), outputs)


def _run_inputs(args, source: dict[str, str]) -> dict:
    """What the run was given, for its provenance: files by path, hash and text; names as names."""
    from pathlib import Path

    from scenarios.run.provenance import file_record

    def given(value: str | None):
        return file_record(value) if value and Path(value).is_file() else value

    return {
        "job_file": given(source.get("job_file")),
        "scenario": given(source.get("scenario")),
        "platform": given(args.platform),
        "sets": list(args.sets),
        "seed": args.seed,
    }


def _record_sink(args):
    """--records: the per-IO rows are spooled to a temporary file as the run goes (then written)."""
    if not args.records:
        return False
    from simcore.stats import RecordChunks

    return RecordChunks(spool=True)


def check_run_outputs(args) -> None:
    """Before simulating: --json, --records and --trace can be written (else exit 2 at once)."""
    from scenarios.run.outputs import check_records_path
    from simcore.outfile import check_output

    if args.json_out:
        check_output(args.json_out, "--json")
    if getattr(args, "records_format", None) and not args.records:
        raise ConfigError("--records-format applies to --records FILE only")
    if args.records:
        check_records_path(args.records, getattr(args, "records_format", None))
    if args.trace:
        check_output(args.trace, "--trace")


def _emit(args, result, format_fn, ncpus: int) -> None:
    """The outputs of a run (a :class:`scenarios.run.result.Result`): terminal summary, then --json,
    --records and --trace all-or-nothing (none is written unless all can be)."""
    from scenarios.run.outputs import json_text, stage_records
    from simcore.outfile import Outputs

    trace = result.trace
    if not args.quiet:
        print(format_fn(result))
    with Outputs() as out:
        if args.json_out:
            out.text(args.json_out, json_text(result), what="--json")
        if args.records:
            stage_records(out, args.records, result.records, getattr(args, "records_format", None))
        if trace is not None:
            out.text(args.trace, trace.to_json(ncpus), what="--trace")


def _make_tracer(args, warmup_ns: float):
    """The --trace tracer: window --trace-window (ms), default the 2 ms after warm-up."""
    from simcore.tracing import ChromeTracer

    t0, t1 = warmup_ns, warmup_ns + 2e6
    if args.trace_window:
        try:
            a, b = args.trace_window.split(":")
            t0 = float(a) * 1e6 if a else 0.0
            t1 = float(b) * 1e6 if b else float("inf")
        except ValueError:
            raise ConfigError(f"--trace-window {args.trace_window!r}: expected START:END in ms, e.g. 100:102") from None
        if math.isnan(t0) or math.isnan(t1) or t0 < 0:
            raise ConfigError(f"--trace-window {args.trace_window!r}: START and END must be numbers of ms >= 0")
        if t1 <= t0:
            raise ConfigError(f"--trace-window {args.trace_window!r}: END must be after START")
    if args.trace_ios <= 0:
        raise ConfigError("--trace-ios must be positive")
    return ChromeTracer(t0, t1, max_ios=args.trace_ios)


def _described() -> dict[str, dict[str, str]]:
    """The built-in things that have a description, by heading: {heading: {name: description}}."""
    from models.platforms import PLATFORMS
    from scenarios.config.registry import builtin_scenarios
    from scenarios.config.server import server_scenarios
    from scenarios.studies.sweep import builtin_sweeps
    from simcore.config import load_data_file
    from stacksim.cli_platform import preset_entries

    def from_files(files: dict) -> dict[str, str]:
        return {name: str((load_data_file(path) or {}).get("description", "")) for name, path in files.items()}

    return {
        "scenarios (--scenario NAME)": from_files(builtin_scenarios("host")),
        "server scenarios (--scenario NAME)": dict(server_scenarios()),
        "platforms (--platform NAME)": {name: fn().description for name, fn in PLATFORMS.items()},
        "sweeps (stacksim sweep NAME)": from_files(builtin_sweeps()),
        **preset_entries(),
    }


def cmd_list(args) -> int:
    from policies.completion import COMPLETION_POLICIES
    from policies.core_scheduling import CORE_SCHEDULING
    from policies.cpu_power import CPUFREQ_GOVERNORS
    from policies.interrupt_generation import IRQ_GENERATION
    from policies.io_scheduler import IO_SCHEDULERS

    described = _described()
    if args.name:
        return _describe_one(args.name, described)
    for heading, entries in described.items():
        print(heading + ":")
        for name, desc in entries.items():
            print(list_line(name, desc))
    print("completion policies: " + ", ".join(COMPLETION_POLICIES.names()))
    print("IO schedulers (queue.scheduler): " + ", ".join(IO_SCHEDULERS.names()))
    print("interrupt generation (nvme.irq): " + ", ".join(IRQ_GENERATION.names()))
    print("cpufreq governors (cpu.cpufreq_governor): " + ", ".join(CPUFREQ_GOVERNORS.names()))
    from policies.cpu_idle import CPUIDLE_GOVERNORS

    print("cpuidle governors (cpu.cpuidle_governor): " + ", ".join(CPUIDLE_GOVERNORS.names()))
    print("core scheduling policies (server.policy): " + ", ".join(CORE_SCHEDULING.names()))
    from scenarios.studies.builtin import STUDIES

    print("calibration studies (stacksim calibrate --study NAME): " + ", ".join(STUDIES))
    return 0


def _describe_one(name: str, described: dict[str, dict[str, str]]) -> int:
    """``stacksim list NAME``: every built-in thing of that name, with its whole description."""
    import textwrap

    found = [(heading, entries[name]) for heading, entries in described.items() if name in entries]
    if not found:
        known = sorted({n for entries in described.values() for n in entries})
        raise ConfigError(f"nothing built in is named '{name}' (named: {', '.join(known)})")
    from stacksim.cli_describe import config_lines
    from stacksim.cli_platform import describers

    own = describers()  # presets and overviews describe themselves
    for heading, desc in found:
        if heading in own:
            own[heading](name)
            continue
        print(f"{name}: {heading.split(' (')[0].rstrip('s')}")
        print(
            textwrap.fill(desc, width=100, initial_indent="  ", subsequent_indent="  ")
            if desc
            else "  (no description)"
        )
        for line in config_lines(name, heading):  # a scenario's or sweep's whole configuration
            print(line)
    return 0


def list_line(name: str, description: str, columns: int | None = None) -> str:
    """``  NAME  description`` for `stacksim list`, the description shortened at a word boundary
    (with " ...") to fit ``columns`` (default: the terminal's width, else 120)."""
    import shutil
    import textwrap

    columns = columns or shutil.get_terminal_size((120, 24)).columns
    head = f"  {name:28s} "
    width = max(columns - len(head), 20)
    return (
        head + textwrap.shorten(description, width=width, placeholder=" ...") if description.strip() else head.rstrip()
    )


def cmd_schema(args) -> int:
    from models.os.block.queue import QueueConfig
    from models.platform import PlatformConfig
    from scenarios.config.host import RunConfig, ScenarioFile
    from scenarios.studies.sweep import SweepFile

    models = {"scenario": ScenarioFile, "platform": PlatformConfig, "queue": QueueConfig, "run": RunConfig}
    model = {**models, "sweep": SweepFile}[args.what]
    print(json.dumps(model.model_json_schema(), indent=2))
    return 0


COMMANDS = {"run": cmd_run, "list": cmd_list, "schema": cmd_schema}


def main(argv: list[str] | None = None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    args.argv = ["stacksim", *(sys.argv[1:] if argv is None else argv)]  # the command, for provenance
    if args.cmd is None:
        ap.print_help()
        return EXIT_BAD_INPUT
    from stacksim.output import stdout_outputs

    try:
        from simcore.config import check_seed

        check_seed(getattr(args, "seed", None), "--seed")
        with stdout_outputs(args):
            return COMMANDS[args.cmd](args)
    except ConfigError as err:
        print(error_line(err), file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("stacksim: interrupted", file=sys.stderr)
        return 130
    except Exception as err:  # raised in a user's plug-in outside a simulation (else: a bug, shown as one)
        from simcore.plugins import plugin_error

        found = plugin_error(err)
        if found is None:
            raise
        print(error_line(found), file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:  # e.g. `stacksim run | head`
        sys.stderr.close()
        return 0
    except Exception as err:  # (pydantic imported here: `--version` and `--help` do without it)
        from pydantic import ValidationError

        if not isinstance(err, ValidationError):
            raise
        from simcore.config import format_validation_error

        # a model built without simcore.config.validate: still bad input
        print(error_line(format_validation_error(err, where=err.title)), file=sys.stderr)
        return EXIT_BAD_INPUT


if __name__ == "__main__":
    sys.exit(main())
