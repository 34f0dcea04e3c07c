"""Which command-line arguments name files that the command reads and which name files it writes.

Each such argument is declared with ``type=reads("OPTION")`` or ``type=writes("OPTION")``: its value
is then a :class:`FileArg` that knows its option and its role. :func:`check_file_args` runs once,
in ``stacksim.cli.main``, before any command starts: no output may be one of the command's inputs
or another of its outputs (:func:`simcore.outfile.check_distinct`: resolved paths and inodes, so
symbolic and hard links count), and at most one output may be standard output (``-``).
"""

from __future__ import annotations

import argparse
from typing import Any, Callable

from simcore.errors import ConfigError
from simcore.outfile import STDOUT, check_distinct
from simcore.spool import STDIN, spooled


class FileArg(str):
    """A file named on the command line: the text as given, the ``option`` that named it, whether
    the command ``writes`` it (else it reads it), and for an input read more than once whether a
    stream (``-``, a pipe) is first copied to a temporary file (``stream``)."""

    option: str
    writes: bool
    stream: bool


def _role(option: str, writes: bool, stream: bool = False) -> Callable[[str], FileArg]:
    def make(text: str) -> FileArg:
        arg = FileArg(text)
        arg.option, arg.writes, arg.stream = option, writes, stream
        return arg

    make.__name__ = "output file" if writes else "input file"  # (argparse names the type in its errors)
    return make


def reads(option: str) -> Callable[[str], FileArg]:
    """``type=`` of an argument naming a file the command reads (or a built-in name: only an
    existing file counts as an input)."""
    return _role(option, writes=False)


def reads_stream(option: str) -> Callable[[str], FileArg]:
    """``type=`` of an input that may also be standard input (``-``) or a pipe: a block trace, which
    its reader reads more than once (:func:`simcore.spool.spooled` copies the stream once)."""
    return _role(option, writes=False, stream=True)


def writes(option: str) -> Callable[[str], FileArg]:
    """``type=`` of an argument naming a file the command writes (``-``: standard output)."""
    return _role(option, writes=True)


def file_args(args: argparse.Namespace) -> tuple[list[FileArg], list[FileArg]]:
    """The (inputs, outputs) named in ``args``, in the order of its fields."""
    inputs: list[FileArg] = []
    outputs: list[FileArg] = []
    for value in vars(args).values():
        for item in value if isinstance(value, list) else (value,):
            if isinstance(item, FileArg):
                (outputs if item.writes else inputs).append(item)
    return inputs, outputs


def check_file_args(args: argparse.Namespace) -> bool:
    """Refuse a command whose outputs would destroy one of its inputs or each other (one message,
    before anything runs), make every file argument a plain ``str`` again, and tell whether an
    output is standard output."""
    inputs, outputs = file_args(args)
    dashes = [o.option for o in outputs if o == STDOUT]
    if len(dashes) > 1:
        raise ConfigError(f"only one output can go to standard output ('-'), not {' and '.join(dashes)}")
    check_distinct([(str(i), i.option) for i in inputs if i != STDIN], [(str(o), o.option) for o in outputs])
    for name, value in vars(args).items():
        if isinstance(value, FileArg):
            setattr(args, name, spooled(str(value)) if value.stream else str(value))
        elif isinstance(value, list) and any(isinstance(v, FileArg) for v in value):
            setattr(args, name, [str(v) if isinstance(v, FileArg) else v for v in value])
    return bool(dashes)


def add_plugin_option(parser: Any) -> None:
    """``--plugin FILE.py|MODULE`` (repeatable) on ``parser`` (a parser or an argument group): a plug-in
    the command imports first."""
    parser.add_argument(
        "--plugin",
        action="append",
        default=[],
        metavar="FILE.py|MODULE",
        type=reads("--plugin"),
        help="import a policy plug-in first (Python code, runs with your rights; a .py path "
        "relative to the current directory, or a module name)",
    )


def add_measured_option(parser: Any) -> None:
    """``--measured FILE...`` on ``parser`` (a parser or an argument group): measured points (CSV, fio
    JSON) the command reads."""
    parser.add_argument(
        "--measured",
        nargs="+",
        action="extend",
        metavar="FILE",
        type=reads("--measured"),
        help="measured-points CSV(s) and/or fio --output-format=json file(s)",
    )


def check_scenario_inputs(scenario: str | None, outputs: list[tuple[str, str]]) -> None:
    """A scenario file's own inputs (its ``job_file``, its ``plugins``) are inputs of the command too:
    none of ``outputs`` ((path, flag) pairs) may be one of them (the command line's files are
    checked by their own argument types)."""
    from scenarios.config.registry import locate_scenario
    from simcore.config import load_data_file

    if not scenario or not outputs:
        return
    path = locate_scenario(scenario)
    data = load_data_file(path)
    named = [data.get("job_file")] + list(data.get("plugins") or []) if isinstance(data, dict) else []
    inputs = [(str(path.parent / n), f"{path.name}'s input") for n in named if isinstance(n, str)]
    check_distinct(inputs, outputs)
