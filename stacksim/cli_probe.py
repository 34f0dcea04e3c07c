"""``stacksim probe``: a platform file for the machine it runs on (or a saved tree of one)."""

from __future__ import annotations

import sys

from simcore.errors import ConfigError
from stacksim.fileargs import reads, writes

TAR_SUFFIXES = (".tar.gz", ".tgz")


def add_subcommands(subparsers, commands: dict | None = None) -> dict:
    """Add the probe sub-command; its handler is added to ``commands`` when given, and returned."""
    pr = subparsers.add_parser(
        "probe",
        help="write a platform YAML for this machine, read from /proc and /sys (docs/validate-your-hardware.md)",
        description="Write a platform YAML for the machine it runs on: CPU topology, cpufreq, cpuidle, RAPL,"
        " NVMe devices and block queues and the kernel release, read from /proc and /sys. What they cannot"
        " tell (watts per state, device service times, kernel cycle costs) comes from the presets, matched by"
        " model name, and is marked as an estimate in the file.",
    )
    pr.add_argument(
        "-o",
        "--output",
        default="-",
        metavar="FILE.yaml",
        type=writes("-o"),
        help="platform file to write (default '-': standard output)",
    )
    pr.add_argument(
        "--root",
        metavar="DIR",
        type=reads("--root"),
        help="read a saved tree instead of this machine: a directory holding its proc/ and sys/, or the"
        " .tar.gz that --save wrote",
    )
    pr.add_argument(
        "--save",
        metavar="FILE.tar.gz",
        type=writes("--save"),
        help="also save every file the probe read (to probe a lab machine and simulate elsewhere: --root FILE)",
    )
    pr.add_argument(
        "--ssd",
        metavar="NAME",
        help="SSD preset (`stacksim list`) for what /sys cannot tell of the SSD; needed where there is no NVMe"
        " device (default: the preset of the NVMe model's name)",
    )
    pr.add_argument(
        "--cpu",
        metavar="NAME",
        help="CPU preset (`stacksim list`) for what /sys cannot tell of the CPU (default: the preset of the"
        " model name, else of the nearest generation)",
    )
    handlers = {"probe": cmd_probe}
    if commands is not None:
        commands.update(handlers)
    return handlers


def _check_outputs(args) -> None:
    from simcore.outfile import check_output

    if args.output != "-" and not args.output.lower().endswith((".yaml", ".yml")):
        raise ConfigError(f"-o {args.output}: write the platform to a .yaml file")
    if args.save and not args.save.lower().endswith(TAR_SUFFIXES):
        raise ConfigError(f"--save {args.save}: the saved tree is a .tar.gz file")
    if args.save:
        check_output(args.save, "--save")
    check_output(args.output, "-o")


def cmd_probe(args) -> int:
    from pathlib import Path

    from scenarios.config.platform_file import platform_yaml
    from scenarios.config.probe import NoNvmeError, probe_header, probe_platform
    from scenarios.inputs.machine.read import read_machine
    from scenarios.inputs.machine.tree import open_tree
    from simcore.outfile import Outputs, write_file

    _check_outputs(args)
    name = Path(args.output).stem if args.output != "-" else "probed"
    source = f"the saved tree {args.root}" if args.root else "/proc and /sys of this machine"
    with open_tree(args.root) as tree:
        machine = read_machine(tree)
        try:
            probed = probe_platform(machine, name=name, cpu=args.cpu, ssd=args.ssd)
        except NoNvmeError:
            if args.save:  # what was read is worth keeping: probe it elsewhere with --root and --ssd
                write_file(args.save, tree.save, binary=True, what="--save")
                print(f"saved the {len(tree.files)} files read to {args.save}", file=sys.stderr)
            raise
        text = platform_yaml(probed.platform, probe_header(probed, source, args.output), probed.sources.comment)
        with Outputs() as out:
            if args.save:
                out.write(args.save, tree.save, binary=True, what="--save")
            out.text(args.output, text, what="-o")
    for note in probed.notes:
        print(f"stacksim probe: {note}", file=sys.stderr)
    if args.save:
        print(f"saved the {len(tree.files)} files read to {args.save} (probe them elsewhere: --root)", file=sys.stderr)
    if args.output != "-":
        print(f"wrote {args.output}: platform {probed.platform.name} (use --platform {args.output})", file=sys.stderr)
    return 0
