"""``stacksim sweep``, ``stacksim analyze efficiency`` and ``stacksim report``.

Wired into :mod:`stacksim.cli` by :func:`add_subcommands`; every handler takes the parsed
arguments, returns the exit status and raises :class:`ConfigError` on bad input (exit 2).
"""

from __future__ import annotations

import argparse
import json
import sys

from simcore.errors import ConfigError, error_line
from stacksim.fileargs import reads, writes


def add_subcommands(subparsers, commands: dict | None = None) -> dict:
    """Add the sweep, analyze and report sub-commands; their handlers are added to ``commands``
    (the CLI's name -> handler table) when given, and returned."""
    _add_sweep_parser(subparsers)
    an = subparsers.add_parser("analyze", help="analyse sweep results")
    an_sub = an.add_subparsers(dest="analysis", required=True, metavar="ANALYSIS")
    eff = an_sub.add_parser("efficiency", help="per tile, the policy with the most bytes per joule (with significance)")
    eff.add_argument("results", type=reads("results"), help="results file written by `stacksim sweep`")
    _add_axis_args(eff)
    eff.add_argument("--long", action="store_true", help="one line per tile with every policy's mean and p-value")
    eff.add_argument(
        "--json",
        dest="json_out",
        metavar="OUT",
        type=writes("--json"),
        help="also write the tiles as JSON ('-': standard output, the table then goes to stderr)",
    )

    rep = subparsers.add_parser("report", help="write a self-contained interactive HTML report of sweep results")
    rep.add_argument("results", type=reads("results"), help="results file written by `stacksim sweep`")
    rep.add_argument(
        "-o",
        "--output",
        default="report.html",
        metavar="HTML",
        type=writes("-o"),
        help="output file (default report.html)",
    )
    rep.add_argument("--title", help="page title")
    _add_axis_args(rep)

    handlers = {"sweep": cmd_sweep, "analyze": cmd_analyze, "report": cmd_report}
    if commands is not None:
        commands.update(handlers)
    return handlers


def _add_sweep_parser(subparsers) -> None:
    """The ``sweep`` sub-command's arguments: the sweep, the results file, overrides, replicates and seed,
    and where the points run (local processes or a Dask cluster)."""
    sw = subparsers.add_parser("sweep", help="run a parameter sweep (cartesian product of axes x replicates)")
    sw.add_argument(
        "sweep", type=reads("sweep"), help="sweep YAML file, or the name of a built-in sweep (scenarios/data/sweeps/)"
    )
    sw.add_argument(
        "-o",
        "--output",
        default="RESULTS.csv",
        metavar="RESULTS",
        type=writes("-o"),
        help="results file, .csv or .parquet (default RESULTS.csv); existing runs are skipped",
    )
    sw.add_argument(
        "--set",
        dest="sets",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra fixed override for every point (e.g. runtime=100ms)",
    )
    sw.add_argument("--replicates", type=int, help="replicates per point (default: the sweep file's)")
    sw.add_argument("--seed", type=int, help="base seed (default: the sweep file's)")
    sw.add_argument("--fresh", action="store_true", help="discard stored results and recompute everything")
    sw.add_argument("--dry-run", action="store_true", help="validate and list the points, run nothing")
    where = sw.add_mutually_exclusive_group()
    where.add_argument("-j", "--jobs", type=int, help="local worker processes (default: one per CPU)")
    where.add_argument("--scheduler", metavar="tcp://HOST:PORT", help="run on this Dask distributed scheduler")
    where.add_argument("--local-cluster", type=int, metavar="N", help="start a local Dask cluster of N workers")
    sw.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="progress bar on stderr (default: when stderr is a terminal)",
    )


def _add_axis_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--panels",
        "--x",
        dest="x",
        metavar="COLUMN",
        help="one report panel (analysis tile row) per value of this column (default bs; for a sweep "
        "that varies only one of bs and numjobs, or has neither, chosen from the axes it varies); "
        "--x is its old name",
    )
    p.add_argument(
        "--along",
        "--y",
        dest="y",
        metavar="COLUMN",
        help="the column along each panel's horizontal axis, the metric being on the vertical one "
        "(default numjobs; else the sweep's next axis); --y is its old name",
    )
    p.add_argument(
        "--policy-axis",
        action="append",
        metavar="COLUMN[,COLUMN]",
        help="policy column(s); several make a combined policy (default: the derived "
        "'completion' = interrupt/classic/hybrid, or a server sweep's server.policy)",
    )
    p.add_argument(
        "--metric", default="bytes_per_joule", help="efficiency metric (default bytes_per_joule, higher is better)"
    )
    p.add_argument(
        "--lower-is-better",
        action="store_true",
        help="the metric improves downwards (energy_j_per_million_ios, latency)",
    )
    p.add_argument("--alpha", type=float, default=0.05, help="significance level of the tie test (default 0.05)")


def _axes(args, rows) -> tuple[str, str, tuple[str, ...]]:
    """--panels (--x), --along (--y) and --policy-axis, the missing ones chosen from the results (said on stderr when
    they are not the host defaults bs x numjobs)."""
    from scenarios.studies.sweeps.groups import DEFAULT_X, DEFAULT_Y, choose_axes, policy_of

    x, y, policy = choose_axes(rows, args.x, args.y, args.policy_axis)
    if (args.x is None or args.y is None) and (x, y) != (DEFAULT_X, DEFAULT_Y):
        print(
            f"axes chosen from the results: --panels {x} --along {y} --policy-axis {','.join(policy)}",
            file=sys.stderr,
        )
    labels = {policy_of(r, policy) for r in rows}
    if len(labels) == 1:
        print(
            f"note: one policy in these results ({','.join(policy)} = {labels.pop()}); "
            f"name the compared columns with --policy-axis",
            file=sys.stderr,
        )
    return x, y, policy


def _say_unusable(rows, metric: str) -> None:
    """Say on stderr how many runs have a ``metric`` that is no finite number (left out)."""
    from scenarios.studies.sweeps.groups import unusable_note

    if any(metric in r for r in rows):
        note = unusable_note(rows, metric)
        if note:
            print(note, file=sys.stderr)


#: sweeps of at least this many runs say their size and start at once (each point resolved as it is
#: reached); smaller ones resolve every point before the first run
SAY_COUNT_FROM = 200


def cmd_sweep(args) -> int:
    from scenarios.config.sets import parse_sets
    from scenarios.studies.sweep import count_points, load_sweep, plan_stream
    from scenarios.studies.sweeps.runner import SweepInterrupted, execute
    from scenarios.studies.sweeps.store import check_results_path

    check_results_path(args.output)
    sweep, where = load_sweep(args.sweep)
    nrep = sweep.replicates if args.replicates is None else args.replicates
    npoints = count_points(sweep)
    # the axes are checked here; each point is resolved when its runs are reached (a sweep of a
    # million points starts at once)
    tasks = plan_stream(sweep, where=where, sets=parse_sets(args.sets), replicates=args.replicates, seed=args.seed)
    if npoints * nrep < SAY_COUNT_FROM:
        tasks = list(tasks)  # a small sweep: every point resolved (and checked) before the first run
    if args.dry_run:
        last = None
        for t in tasks:
            if t.point != last:
                print(t.point)
                last = t.point
        print(f"{npoints} points x {nrep} replicates = {npoints * nrep} runs")
        return 0
    if npoints * nrep >= SAY_COUNT_FROM:
        print(
            f"sweep {sweep.name}: {npoints} points x {nrep} replicates = {npoints * nrep} runs, each point"
            " resolved as it is reached; the progress line gives the rate and the ETA",
            file=sys.stderr,
            flush=True,
        )
    try:
        outcome = execute(
            tasks,
            args.output,
            jobs=args.jobs,
            scheduler=args.scheduler,
            local_cluster=args.local_cluster,
            fresh=args.fresh,
            progress=args.progress,
            total=npoints * nrep,
            desc=sweep.name,
        )
    except SweepInterrupted as stop:
        print(f"stacksim: {stop}", file=sys.stderr)
        return 130
    replacing = [f"{outcome.stale} replacing rows of another simulator version"] * bool(outcome.stale) + [
        f"{outcome.damaged} replacing damaged rows"
    ] * bool(outcome.damaged)
    print(
        f"{outcome.path}: {outcome.total} runs of sweep {sweep.name} ({npoints} points), "
        f"{outcome.computed} computed"
        + (f" ({', '.join(replacing)})" if replacing else "")
        + f", {outcome.reused} already stored"
    )
    return 0


def cmd_analyze(args) -> int:
    from scenarios.studies.sweeps.efficiency import efficiency_map, format_long, format_table
    from scenarios.studies.sweeps.store import read_results
    from simcore.outfile import check_output, write_text

    if not 0 < args.alpha < 1:
        raise ConfigError(f"--alpha must be between 0 and 1, got {args.alpha}")
    if args.json_out:
        check_output(args.json_out, "--json")
    rows = read_results(args.results)
    x, y, policy = _axes(args, rows)
    _say_unusable(rows, args.metric)
    tiles = efficiency_map(
        rows, x=x, y=y, policy=policy, metric=args.metric, alpha=args.alpha, lower_is_better=args.lower_is_better
    )
    print(format_table(tiles, x=x, y=y, metric=args.metric, alpha=args.alpha, lower_is_better=args.lower_is_better))
    if args.long:
        print(format_long(tiles, x=x, y=y, lower_is_better=args.lower_is_better))
    if args.json_out:
        write_text(args.json_out, json.dumps(tiles, indent=2, default=str) + "\n", what="--json")
    return 0


def cmd_report(args) -> int:
    from scenarios.studies.sweeps.report import write_report
    from scenarios.studies.sweeps.store import read_results
    from simcore.outfile import check_output

    if not args.output.endswith((".html", ".htm")):
        raise ConfigError(f"report file {args.output}: use an .html name")
    if not 0 < args.alpha < 1:
        raise ConfigError(f"--alpha must be between 0 and 1, got {args.alpha}")
    check_output(args.output, "-o")
    rows = read_results(args.results)
    x, y, policy = _axes(args, rows)
    _say_unusable(rows, args.metric)
    n = write_report(
        rows,
        args.output,
        title=args.title,
        x=x,
        y=y,
        policy=policy,
        metric=args.metric,
        alpha=args.alpha,
        lower_is_better=args.lower_is_better,
    )
    print(f"{args.output}: {n} figures from {len(rows)} runs")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry point with the CLI's error handling (``python -m stacksim.cli_sweep``)."""
    ap = argparse.ArgumentParser(prog="stacksim")
    add_subcommands(ap.add_subparsers(dest="cmd", required=True))
    args = ap.parse_args(argv)
    handler = {"sweep": cmd_sweep, "analyze": cmd_analyze, "report": cmd_report}[args.cmd]
    from stacksim.output import stdout_outputs

    try:
        with stdout_outputs(args):
            return handler(args)
    except ConfigError as err:
        print(error_line(err), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("stacksim: interrupted (finished runs are stored; run again to resume)", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
