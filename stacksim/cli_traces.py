"""``stacksim replay``, ``stacksim calibrate``, ``stacksim validate`` and ``stacksim explain``.

Wired into :mod:`stacksim.cli` by :func:`add_subcommands`; every handler takes the parsed
arguments, returns the exit status and raises :class:`ConfigError` on bad input (exit 2).
``validate`` returns 1 when an error exceeds ``--max-error``.
"""

from __future__ import annotations

import argparse
import sys

from simcore.errors import ConfigError, error_line
from stacksim.cli_latencies import cmd_calibrate_latencies, cmd_validate_latencies
from stacksim.cli_latencies import not_latencies as _not_latencies
from stacksim.fileargs import add_measured_option, add_plugin_option, check_scenario_inputs, reads, reads_stream, writes

EXIT_OUT_OF_BOUND = 1


def _add_sets(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE", help=what)


def _load_plugins(args) -> None:
    from simcore.plugins import load_plugin

    for spec in args.plugin:
        load_plugin(spec)


def _add_point_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--metrics",
        metavar="M1,M2",
        help="compare only these metrics (dotted summary paths, "
        "e.g. latency_us.mean,iops; default: every measured one)",
    )
    _add_sets(p, "applied to every point before its own config (fio option, queue.*, kernel.*, ...)")
    p.add_argument(
        "--job",
        metavar="BASE.fio",
        type=reads("--job"),
        help="base fio job file of the points (default: the built-in "
        "default scenario's job; a CSV 'job' column overrides)",
    )
    p.add_argument("--runtime-ms", type=float, help="simulated run time per point, ms (default 100; suites: their own)")
    p.add_argument(
        "--ramp-ms", type=float, help="warm-up per point, ms (default 110 with adaptive hybrid polling, else 10)"
    )
    p.add_argument("--seed", type=int, help="seed of every simulation (default 7; with --trace: 1, as for replay)")
    _add_latency_kind(p)


def _add_latencies(p, help_text: str) -> None:
    p.add_argument("--latencies", metavar="FILE", type=reads("--latencies"), help=help_text)


def _add_latency_kind(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--latency-kind",
        choices=["lat", "clat"],
        help="--latencies: fio's lat (submission to completion) or clat (issue to completion); default: from the"
        " file (fio's log name, the JSON's percentiles), else lat",
    )
    p.add_argument(
        "--latency-op",
        choices=["read", "write"],
        help="--latencies: the direction the latencies were measured for; default: from the file (a fio log's"
        " direction column, the JSON's first direction with IO), else read",
    )


def _add_trace_format(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--format",
        dest="trace_format",
        choices=["blkparse", "msr", "fiolog"],
        help="--trace: the trace's format (default: sniffed from the first lines)",
    )
    p.add_argument(
        "--skip-bad-lines", action="store_true", help="--trace: count and skip malformed lines instead of failing"
    )


#: options that mean nothing with --trace (validate and calibrate)
_NOT_WITH_TRACE = (
    ("measured", "--measured"),
    ("suite", "--suite"),
    ("fit", "--fit"),
    ("study", "--study"),
    ("metrics", "--metrics"),
    ("job", "--job"),
    ("runtime_ms", "--runtime-ms"),
    ("ramp_ms", "--ramp-ms"),
)


def _trace_mode(args) -> bool:
    """``--trace`` given: refuse the options of the other modes; without it, refuse the trace options."""
    if getattr(args, "trace", None) is None:
        given = [
            f
            for n, f in (
                ("trace_format", "--format"),
                ("skip_bad_lines", "--skip-bad-lines"),
                ("html", "--html"),
                ("replay", "--replay"),
            )
            if getattr(args, n, None)
        ]
        if given:
            raise ConfigError(f"{', '.join(given)} {'applies' if len(given) == 1 else 'apply'} to --trace FILE only")
        return False
    given = [f for n, f in _NOT_WITH_TRACE if getattr(args, n, None)]
    if given:
        raise ConfigError(
            f"--trace replays the trace itself (its IOs, sizes and arrival times); "
            f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} for measured points or studies"
        )
    return True


# long: the argument table of four sub-commands, one line per option
def add_subcommands(subparsers, commands: dict | None = None) -> dict:
    """Add the replay, calibrate, validate and explain sub-commands; their handlers are added to
    ``commands`` (the CLI's name -> handler table) when given, and returned."""
    rp = subparsers.add_parser(
        "replay", help="replay a block trace: open loop (IOs at their timestamps) or as the application ran (closed)"
    )
    rp.add_argument(
        "trace",
        type=reads_stream("trace"),
        help="trace file (plain or .gz): Alibaba, Tencent, MSR Cambridge, blkparse text or fio iolog",
    )
    rp.add_argument(
        "--format",
        choices=["msr", "alibaba", "tencent", "blkparse", "iolog"],
        help="trace format (default: sniffed from the first lines)",
    )
    rp.add_argument(
        "--platform",
        type=reads("--platform"),
        help="built-in platform name or platform YAML file (default: the default scenario's, as for `stacksim run`)",
    )
    rp.add_argument("--speed", type=float, default=1.0, help="time scale: 2 replays twice as fast (default 1)")
    rp.add_argument(
        "--window", metavar="START:END", help="trace seconds to replay (from the first record), either side optional"
    )
    rp.add_argument(
        "--volumes",
        metavar="A,B",
        help="replay only these trace volumes (MSR host_disk, Alibaba/Tencent ids, blkparse maj,min)",
    )
    rp.add_argument("--skip-bad-lines", action="store_true", help="count and skip malformed lines instead of failing")
    rp.add_argument(
        "--blk-action", choices=["Q", "D"], default="Q", help="blkparse: replay issue (Q) or dispatch (D) events"
    )
    rp.add_argument(
        "--replay",
        choices=["open", "closed", "auto"],
        default="open",
        help="open (default: IOs at their recorded times), closed (each of the trace's processes a synchronous "
        "thread: next IO when the previous one returned, plus the recorded think time; blkparse with C events "
        "or MSR) or auto (per stream: closed when it never had two IOs in flight, else open; the choice is "
        "printed on stderr)",
    )
    _add_sets(rp, "replay.threads=4, replay.hipri=1 (with queue.io_poll=1), replay.assign=volume, or platform keys")
    rp.add_argument("--seed", type=int, help="random seed (default 1)")
    rp.add_argument(
        "--json",
        dest="json_out",
        metavar="OUT",
        type=writes("--json"),
        help="write the full result as JSON ('-': standard output, the summary then goes to stderr)",
    )
    rp.add_argument("--quiet", action="store_true", help="no terminal summary (and no progress line)")
    rp.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress line on stderr while replaying (default: when stderr is a terminal and not --quiet)",
    )
    add_plugin_option(rp)

    ca = subparsers.add_parser(
        "calibrate",
        help="fit platform parameters to your measurements (write a platform YAML), or re-run a built-in "
        "calibration against published figures (--study NAME)",
        description="Either fit --platform's parameters (--fit) to your measurements (--measured) and write the new "
        "platform (-o NEW.yaml), or re-run a built-in calibration (--study NAME; --list-studies) against the "
        "published figures shipped with stacksim.",
    )
    ca.add_argument(
        "--study",
        metavar="NAME",
        help="re-run a built-in calibration (see --list-studies); its runs use "
        "the study's own configurations and seeds",
    )
    ca.add_argument("--list-studies", action="store_true", help="list the built-in calibration studies and exit")
    ca.add_argument(
        "--trace",
        metavar="FILE",
        type=reads_stream("--trace"),
        help="fit the SSD's media service (per direction: base, per-KiB, "
        "spread) to a timed trace: blkparse with D/C events, or a depth-1 "
        "MSR trace or fio latency log (docs/validate-your-hardware.md)",
    )
    _add_trace_format(ca)
    _add_latencies(
        ca,
        "fit the SSD's media service (base and spread of the direction measured) to per-IO "
        "latencies without timestamps (fio latency log, latency CSV, fio JSON) of a depth-1 --job",
    )
    ca.add_argument(
        "--max-iterations",
        type=int,
        metavar="N",
        help="stop after N iterations (a quick result, marked not converged when it is): --study and"
        " --measured: least-squares iterations (default: scipy's); --latencies: simulated runs while the"
        " fitted values settle (default 4); --trace: replays (default 8). At least 1",
    )
    ca.add_argument("--platform", type=reads("--platform"), help="platform to start from (name or YAML)")
    add_measured_option(ca)
    ca.add_argument(
        "--fit",
        action="append",
        metavar="PARAM=LO:HI[:START]",
        help="platform parameter to fit within bounds, e.g. ssd.read.base_ns=4000:9000 (repeat)",
    )
    ca.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        type=writes("-o"),
        help="platform file to write (NEW_PLATFORM.yaml); with --study: the result as .json, or the "
        "calibrated platform as .yaml",
    )
    ca.add_argument("--name", help="name of the new platform (default: BASE-calibrated)")
    ca.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress on stderr (default: on; with --study: when stderr is a terminal)",
    )
    ca.add_argument("--quiet", action="store_true", help="no progress on stderr")
    _add_point_args(ca)

    va = subparsers.add_parser("validate", help="compare the simulator with measurements (table of errors)")
    va.add_argument(
        "--platform",
        type=reads("--platform"),
        help="platform (name or YAML); required with --measured, overrides a suite's",
    )
    src = va.add_mutually_exclusive_group(required=True)
    add_measured_option(src)
    src.add_argument(
        "--suite",
        help="built-in suite of published figures and measurements (shipped with stacksim): poll-vs-interrupt,"
        " io-schedulers (the platforms were calibrated on these two: `calibrated`), cheops23 (third-party fio"
        " runs: 3 of its 16 points calibrate the host, the rest predicted), icpe24 (third-party fio runs of the"
        " IO schedulers under 1-15 processes and kyber's targets, all predicted), cluster23-zns (third-party fio"
        " runs of a ZN540 ZNS SSD: its preset's media and firmware were fitted to them), all",
    )
    src.add_argument(
        "--trace",
        metavar="FILE",
        nargs="+",
        type=reads_stream("--trace"),
        help="replay a trace with measured per-IO timing (blkparse Q/D/C, MSR "
        "with response times, fio latency log; several files: one run's fio logs, one per job) and compare IO by IO",
    )
    _add_latencies(
        src,
        "compare per-IO latencies without timestamps (fio latency log, latency CSV, percentile"
        " table, fio JSON) with the distribution the --job predicts: percentiles, KS distance",
    )
    _add_trace_format(va)
    va.add_argument(
        "--replay",
        choices=["closed", "open", "auto"],
        default=None,
        help="--trace: closed (each of the trace's processes a synchronous thread: next IO when the previous one "
        "returned, plus the recorded think time), open (IOs at their recorded times) or auto (default: per "
        "stream, closed when it never had two IOs in flight, else open; the choice is printed on stderr)",
    )
    va.add_argument(
        "--html",
        metavar="OUT.html",
        type=writes("--html"),
        help="--trace, --latencies: also write an interactive HTML report (plotly)",
    )
    va.add_argument("--max-error", type=float, metavar="PCT", help="exit 1 when any relative error exceeds PCT percent")
    va.add_argument(
        "--json",
        dest="json_out",
        metavar="OUT",
        type=writes("--json"),
        help="write the table and summary as JSON ('-': standard output, the table then goes to stderr)",
    )
    _add_point_args(va)

    ex = subparsers.add_parser("explain", help="where the nanoseconds of one typical IO go, per completion policy")
    ex.add_argument(
        "job",
        nargs="?",
        type=reads("job"),
        help="fio job file, scenario YAML or built-in scenario name (as for run; default: the default scenario)",
    )
    ex.add_argument(
        "--platform",
        type=reads("--platform"),
        help="built-in platform name or platform YAML file (default: the scenario's)",
    )
    _add_sets(ex, "override (as for run); the policy keys (hipri, queue.io_poll, ...) are set per policy")
    ex.add_argument("--seed", type=int, help="random seed (default 1)")
    ex.add_argument(
        "--runtime-ms",
        type=float,
        default=50.0,
        help="simulated run time per policy, after a warm-up of 110 ms when hybrid polling"
        " is shown, else 10 ms (default 50)",
    )
    ex.add_argument(
        "--policies",
        metavar="P1,P2",
        help="policies to show (interrupt, classic, hybrid; default: the job's own and the others)",
    )
    ex.add_argument(
        "-o",
        "--output",
        metavar="HTML",
        type=writes("-o"),
        help="also write the waterfall as an HTML page (plotly; plotly.js loaded from its CDN)",
    )
    ex.add_argument(
        "--embed-plotlyjs",
        action="store_true",
        help="inline plotly.js in the -o page (about 4.7 MB more) so that it works offline",
    )
    ex.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress on stderr: which policy is simulated, and its progress line (default: on a terminal)",
    )
    add_plugin_option(ex)

    handlers = {"replay": cmd_replay, "calibrate": cmd_calibrate, "validate": cmd_validate, "explain": cmd_explain}
    if commands is not None:
        commands.update(handlers)
    return handlers


def _sets(items) -> dict:
    from scenarios.config.sets import parse_sets

    return parse_sets(items)


def _csv_list(text: str | None) -> list[str] | None:
    if text is None:
        return None
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise ConfigError(f"expected a comma-separated list, got {text!r}")
    return items


def _check_out(path: str | None, what: str) -> None:
    """Fail before any simulation when the output ``path`` cannot be written."""
    from simcore.outfile import check_output

    if path:
        check_output(path, what)


def cmd_replay(args) -> int:
    from scenarios.config.checks import print_warnings, queue_warnings
    from scenarios.run.outputs import write_json
    from scenarios.run.replay import resolve_replay
    from scenarios.run.simulate import simulate
    from simcore.outfile import check_output
    from simcore.progress import progress_enabled
    from stacksim.output import format_replay

    _load_plugins(args)
    if args.json_out:  # fail before reading the trace and running
        check_output(args.json_out, "--json")
    cfg = resolve_replay(
        args.trace,
        args.format,
        platform=args.platform,
        speed=args.speed,
        window=args.window,
        sets=_sets(args.sets),
        seed=args.seed,
        skip_bad_lines=args.skip_bad_lines,
        volumes=_csv_list(args.volumes),
        blk_action=args.blk_action,
        mode=args.replay,
    )
    print_warnings(queue_warnings(cfg.queue, cfg.replay.hipri, who="replay.hipri is not set"))
    result = simulate(cfg, progress=progress_enabled(args.progress, args.quiet))
    if args.replay != "open":
        print(result["replay"]["mode_reason"], file=sys.stderr)
    if args.json_out:
        write_json(args.json_out, result)
    if not args.quiet:
        print(format_replay(result, io_scheduler=cfg.queue.scheduler, plugins=tuple(args.plugin)))
    print_warnings(result.get("warnings") or ())
    return 0


def _runner(args):
    from scenarios.studies.validation import PointRunner

    for name in ("runtime_ms", "ramp_ms"):
        v = getattr(args, name)
        if v is not None and not (v > 0 if name == "runtime_ms" else v >= 0):
            raise ConfigError(
                f"--{name.replace('_', '-')} must be {'> 0' if name == 'runtime_ms' else '>= 0'}, got {v:g}"
            )
    if args.job is not None:
        from pathlib import Path

        if not Path(args.job).exists():  # (a directory, device or FIFO is the reader's to name)
            raise ConfigError(f"job file not found: {args.job}")
    return PointRunner(
        platform=args.platform,
        sets=_sets(args.sets),
        job_file=args.job,
        runtime_ms=args.runtime_ms,
        ramp_ms=args.ramp_ms,
        seed=7 if args.seed is None else args.seed,
    )


#: calibrate options that belong to fitting your own measurements (not to --study)
_MEASURED_MODE = (
    ("platform", "--platform"),
    ("measured", "--measured"),
    ("fit", "--fit"),
    ("name", "--name"),
    ("metrics", "--metrics"),
    ("sets", "--set"),
    ("job", "--job"),
    ("ramp_ms", "--ramp-ms"),
)


def cmd_calibrate(args) -> int:
    from scenarios.studies.calibrate_measured import (
        calibrate,
        calibrated_platform,
        format_calibration,
        parse_fit,
        write_platform,
    )
    from scenarios.studies.fitting import check_max_iterations
    from scenarios.studies.validation import load_measured

    check_max_iterations(args.max_iterations)  # one check and message for every mode
    if args.latencies:
        return cmd_calibrate_latencies(args)
    _not_latencies(args)
    if _trace_mode(args):
        return cmd_calibrate_trace(args)
    if args.list_studies or args.study is not None:
        return cmd_study(args)
    missing = [
        flag
        for name, flag in (("platform", "--platform"), ("measured", "--measured"), ("fit", "--fit"), ("output", "-o"))
        if not getattr(args, name)
    ]
    if missing:
        raise ConfigError(
            f"calibrate needs {', '.join(missing)} to fit your measurements (e.g. --platform NAME "
            f"--measured points.csv --fit ssd.read.base_ns=4000:9000 -o new.yaml), or --study NAME to "
            f"re-run a built-in calibration (--list-studies)"
        )
    if args.quiet:
        args.progress = False
    params = [parse_fit(f) for f in args.fit]
    if not args.output.lower().endswith((".yaml", ".yml")):
        raise ConfigError(f"-o {args.output}: write the platform to a .yaml file")
    _check_out(args.output, "-o")
    runner = _runner(args)
    points = load_measured(args.measured, echo=lambda line: print(f"read {line}"), base_job=args.job)
    cal = calibrate(
        points,
        params,
        runner,
        metrics=_csv_list(args.metrics),
        progress=args.progress,
        max_iterations=args.max_iterations,
    )
    print(format_calibration(cal))
    plat = calibrated_platform(
        args.platform,
        cal,
        sets=runner.sets,
        name=args.name,
        sources=list(args.measured),
        seed=runner.seed,
        runtime_ms=args.runtime_ms,
    )
    write_platform(args.output, plat)
    print(f"wrote {args.output}: platform {plat.name} (use --platform {args.output})")
    return 0


def cmd_study(args) -> int:
    """``calibrate --study NAME`` / ``--list-studies``: the built-in calibrations (:mod:`scenarios.studies.builtin`)."""
    from scenarios.studies.builtin import STUDIES, check_study_output, format_study, get_study, run_study, write_study

    given = [flag for name, flag in _MEASURED_MODE if getattr(args, name)]
    if given:
        raise ConfigError(
            f"--study runs a built-in calibration with its own platform, figures and settings; "
            f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} for fitting your own measurements "
            f"(without --study)"
        )
    if args.list_studies:
        if args.study is not None:
            raise ConfigError("give --study NAME or --list-studies, not both")
        w = max(map(len, STUDIES))
        for spec in STUDIES.values():
            print(f"  {spec.name:{w}s}  {spec.description} ({spec.runtime_ms:g} ms per run)")
        return 0
    get_study(args.study)
    if args.output:
        check_study_output(args.output, args.study)
        _check_out(args.output, "-o")
    progress = False if args.quiet else sys.stderr.isatty() if args.progress is None else args.progress
    res = run_study(args.study, runtime_ms=args.runtime_ms, max_iterations=args.max_iterations, progress=progress)
    print(format_study(res))
    if args.output:
        what = write_study(args.output, res)
        print(f"wrote {args.output}: {what}")
    return 0


def cmd_validate(args) -> int:
    from scenarios.studies.validation import (
        format_validation,
        load_measured,
        suite_points,
        validate_points,
        write_validation_json,
    )

    if args.max_error is not None and not args.max_error >= 0:
        raise ConfigError(f"--max-error must be a percentage >= 0, got {args.max_error:g}")
    if args.latencies:
        return cmd_validate_latencies(args)
    _not_latencies(args)
    if _trace_mode(args):
        return cmd_validate_trace(args)
    if args.measured and not args.platform:
        raise ConfigError("--platform NAME is required with --measured (the platform to compare)")
    _check_out(args.json_out, "--json")
    runner = _runner(args)
    if args.suite:
        points = suite_points(args.suite)
        print(f"suite {args.suite}: {len(points)} points from the published figures shipped with stacksim")
    else:
        points = load_measured(args.measured, echo=lambda line: print(f"read {line}"), base_job=args.job)
    v = validate_points(points, runner, metrics=_csv_list(args.metrics), max_error_pct=args.max_error)
    print(format_validation(v))
    if args.json_out:
        write_validation_json(args.json_out, v)
    return 0 if v.passed else EXIT_OUT_OF_BOUND


def cmd_validate_trace(args) -> int:
    """``validate --trace FILE``: :mod:`scenarios.studies.trace_compare` (and :mod:`scenarios.studies.trace_report`)."""
    from scenarios.run.outputs import write_json
    from scenarios.studies.trace_compare import exceeding, format_trace_validation, validate_trace
    from simcore.progress import progress_enabled

    if args.html and not args.html.lower().endswith((".html", ".htm")):
        raise ConfigError(f"--html {args.html}: use an .html file name")
    _check_out(args.json_out, "--json")
    _check_out(args.html, "--html")
    v = validate_trace(
        args.trace,
        args.trace_format,
        platform=args.platform,
        sets=_sets(args.sets),
        seed=args.seed,
        skip_bad_lines=args.skip_bad_lines,
        progress=progress_enabled(None),
        mode=args.replay or "auto",
    )
    print(v["replay"]["mode_reason"], file=sys.stderr)
    print(format_trace_validation(v, args.max_error))
    if args.json_out:
        write_json(args.json_out, {k: x for k, x in v.items() if k != "samples"})
    if args.html:
        from scenarios.studies.trace_report import write_trace_report

        n = write_trace_report(v, args.html)
        print(f"wrote {args.html}: {n} figures")
    failed = args.max_error is not None and exceeding(v, args.max_error)
    return EXIT_OUT_OF_BOUND if failed else 0


def cmd_calibrate_trace(args) -> int:
    """``calibrate --trace FILE -o NEW.yaml``: :mod:`scenarios.studies.trace_calibrate`."""
    from scenarios.studies.calibrate_measured import write_platform
    from scenarios.studies.trace_calibrate import calibrate_trace, format_trace_calibration, trace_calibrated_platform

    if not args.output:
        raise ConfigError("calibrate --trace needs -o NEW_PLATFORM.yaml (the platform with the fitted device)")
    if not args.output.lower().endswith((".yaml", ".yml")):
        raise ConfigError(f"-o {args.output}: write the platform to a .yaml file")
    _check_out(args.output, "-o")
    quiet = args.quiet or args.progress is False
    cal = calibrate_trace(
        args.trace,
        args.trace_format,
        platform=args.platform,
        sets=_sets(args.sets),
        seed=args.seed,
        skip_bad_lines=args.skip_bad_lines,
        echo=None if quiet else (lambda line: print(line, file=sys.stderr)),
        max_iterations=args.max_iterations,
    )
    print(format_trace_calibration(cal))
    plat = trace_calibrated_platform(cal, name=args.name)
    write_platform(args.output, plat)
    print(f"wrote {args.output}: platform {plat.name} (use --platform {args.output})")
    return 0


def cmd_explain(args) -> int:
    from scenarios.studies.explain import explain, format_explanation, write_html
    from simcore.progress import progress_enabled

    if args.output and not args.output.lower().endswith((".html", ".htm")):
        raise ConfigError(f"-o {args.output}: use an .html file name")
    if args.embed_plotlyjs and not args.output:
        raise ConfigError("--embed-plotlyjs: there is no page to embed it in; give -o PAGE.html")
    _check_out(args.output, "-o")
    _load_plugins(args)
    from scenarios.config.host import DEFAULT_SCENARIO
    from scenarios.config.registry import source_args

    if args.job and args.output:
        check_scenario_inputs(source_args(args.job).get("scenario"), [(args.output, "-o")])

    expl = explain(
        args.job or DEFAULT_SCENARIO,
        args.platform,
        sets=_sets(args.sets),
        seed=args.seed,
        runtime_ms=args.runtime_ms,
        policies=_csv_list(args.policies),
        progress=progress_enabled(args.progress),
    )
    print(format_explanation(expl))
    if args.output:
        write_html(expl, args.output, embed_plotlyjs=args.embed_plotlyjs)
        print(f"wrote {args.output}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry point with the CLI's error handling (``python -m stacksim.cli_traces``)."""
    ap = argparse.ArgumentParser(prog="stacksim")
    handlers = add_subcommands(ap.add_subparsers(dest="cmd", required=True))
    args = ap.parse_args(argv)
    from stacksim.output import stdout_outputs

    try:
        with stdout_outputs(args):
            return handlers[args.cmd](args)
    except ConfigError as err:
        print(error_line(err), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("stacksim: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `stacksim replay ... | head`
        sys.stderr.close()
        return 0


if __name__ == "__main__":
    sys.exit(main())
