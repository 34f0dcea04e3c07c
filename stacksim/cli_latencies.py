"""``stacksim validate --latencies FILE --job JOB.fio`` and ``calibrate --latencies FILE --job JOB.fio
-o NEW.yaml``: per-IO latencies without timestamps (:mod:`scenarios.studies.latency_compare`)."""

from __future__ import annotations

import sys

from simcore.errors import ConfigError

__all__ = ["cmd_validate_latencies", "cmd_calibrate_latencies", "not_latencies"]

EXIT_OUT_OF_BOUND = 1

#: options of the other modes that mean nothing with --latencies
_NOT_WITH_LATENCIES = (
    ("trace", "--trace"),
    ("measured", "--measured"),
    ("suite", "--suite"),
    ("fit", "--fit"),
    ("study", "--study"),
    ("metrics", "--metrics"),
    ("trace_format", "--format"),
    ("skip_bad_lines", "--skip-bad-lines"),
)


def not_latencies(args) -> None:
    """Without --latencies: refuse its own options."""
    for name, flag in (("latency_kind", "--latency-kind"), ("latency_op", "--latency-op")):
        if getattr(args, name, None):
            raise ConfigError(f"{flag} applies to --latencies FILE only")


def _check(args, what: str) -> dict:
    """The options of the --latencies mode; returns the --set keys (with --runtime-ms/--ramp-ms)."""
    from scenarios.config.sets import parse_sets
    from scenarios.inputs.fio.units import ms_time

    given = [f for n, f in _NOT_WITH_LATENCIES if getattr(args, n, None)]
    if given:
        raise ConfigError(f"--latencies compares one job's latencies; {', '.join(given)} belong to other modes")
    if not args.job:
        raise ConfigError(f"{what} --latencies needs --job JOB.fio (the workload the latencies were measured with)")
    if not args.platform:
        raise ConfigError(f"{what} --latencies needs --platform NAME (the platform to compare)")
    sets = parse_sets(args.sets)
    if args.runtime_ms is not None:
        sets["runtime"] = ms_time(args.runtime_ms, option="--runtime-ms")
    if args.ramp_ms is not None:
        sets["ramp_time"] = ms_time(args.ramp_ms, option="--ramp-ms")
    return sets


def cmd_validate_latencies(args) -> int:
    from scenarios.run.outputs import write_json
    from scenarios.studies.latency_compare import (
        compare_latencies,
        exceeding_rows,
        format_latency_comparison,
        read_latencies,
        simulated_latencies,
    )
    from simcore.outfile import check_output

    sets = _check(args, "validate")
    if args.html and not args.html.lower().endswith((".html", ".htm")):
        raise ConfigError(f"--html {args.html}: use an .html file name")
    for out, flag in ((args.json_out, "--json"), (args.html, "--html")):
        if out:
            check_output(out, flag)
    from scenarios.studies.latency_sizing import sized_sets

    m = read_latencies(args.latencies, kind=args.latency_kind, op=args.latency_op)
    sets, sized = sized_sets(m, args.job, args.platform, sets, seed=args.seed or 1)
    sim, _svc, cfg = simulated_latencies(
        args.job, args.platform, m.kind, m.op, sets, seed=args.seed or 1, progress=getattr(args, "progress", None)
    )
    v = compare_latencies(m, sim)
    v.update(job=args.job, platform=cfg.platform.name, seed=cfg.seed, simulated=sized)
    print(format_latency_comparison(v))
    if args.json_out:
        write_json(args.json_out, v)
    if args.html:
        from scenarios.studies.latency_report import write_latency_report

        write_latency_report(v, m, sim, args.html)
        print(f"wrote {args.html}")
    failed = args.max_error is not None and exceeding_rows(v, args.max_error)
    return EXIT_OUT_OF_BOUND if failed else 0


def cmd_calibrate_latencies(args) -> int:
    from scenarios.config.host import resolve
    from scenarios.config.sets import is_platform_key
    from scenarios.studies.calibrate_measured import write_platform
    from scenarios.studies.fitting import calibrated_name
    from scenarios.studies.latency_compare import calibrate_latencies, read_latencies
    from simcore.outfile import check_output

    sets = _check(args, "calibrate")
    if not args.output or not args.output.lower().endswith((".yaml", ".yml")):
        raise ConfigError("calibrate --latencies needs -o NEW_PLATFORM.yaml (the platform with the fitted device)")
    check_output(args.output, "-o")
    m = read_latencies(args.latencies, kind=args.latency_kind, op=args.latency_op)
    passes = 4 if args.max_iterations is None else args.max_iterations  # checked by cmd_calibrate
    cal = calibrate_latencies(m, args.job, args.platform, sets, seed=args.seed or 1, passes=passes)
    fitted = {k: float(f"{v:.6g}") for k, v in cal["values"].items()}
    platform_sets = {k: v for k, v in sets.items() if is_platform_key(k) and not k.startswith("queue.")}
    plat = resolve(platform=args.platform, sets={**platform_sets, **fitted}).platform
    what = ", ".join(f"{k}={v:g}" for k, v in fitted.items())
    note = (
        f"stacksim calibrate --latencies: from {plat.name}; the device's {m.op} service fitted to {m.path}"
        f" (fio's {m.kind}, {m.n or 'a table of'} IOs, job {args.job}, {cal['passes']} runs; simulated host path"
        f" {cal['host_path_us']:.3g} us"
        + (f"; with {', '.join(f'{k}={v}' for k, v in platform_sets.items())}" if platform_sets else "")
        + f"): {what}."
    )
    for note in cal["notes"]:
        print(f"stacksim: warning: {note}", file=sys.stderr)
    plat = plat.model_copy(update={"name": args.name or calibrated_name(plat.name), "calibration": note})
    print(f"fitted {what} (host path {cal['host_path_us']:.3g} us, {cal['passes']} runs)")
    write_platform(args.output, plat)
    print(f"wrote {args.output}: platform {plat.name} (use --platform {args.output})")
    return 0
