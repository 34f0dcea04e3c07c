"""Every fenced code block of the docs (README.md and docs/*.md), classified and run the way a
reader would: tests/test_docs_blocks.py uses it.

* **shell** (```sh / bash / shell / console, or an untagged block whose first line starts with
  ``stacksim ``): each command, after joining ``\\`` continuations and dropping ``#`` comments, is
  run with ``cwd`` a scratch directory of its page (so that a later command finds what an earlier
  one wrote). ``stacksim ...`` runs in this process (:func:`stacksim.cli.main`); ``python -c`` and
  ``python3 - <<'EOF'`` run their Python here too. A usage synopsis (``[--seed N]``,
  ``NAME|FILE.yaml``) is not run: each ``--option`` it names must be one the sub-command takes.
* **python**: executed, in page order, in the page's scratch directory (a block the page says to
  save as a file, :data:`FILES`, is written there instead; a plug-in is loaded by the command that
  names it).
* **yaml / json**: validated by the pydantic model of what it is: a sweep (``axes``), a platform
  (``cpu``), a scenario otherwise (``stacksim schema`` prints each).
* **fio** (```ini): parsed by stacksim's fio parser.
* **quote** (untagged ``$ ...``): command output, checked by tools/doc_quotes.py;
  **text** (other untagged blocks): diagrams and formulas, not code.

The scratch directory links the repository's ``examples``, ``scenarios`` and ``tests``; the inputs
a reader brings (their own job file, a trace of their device) are stood in for by repository files
(:data:`STAND_INS`), named so in the test's report.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import io
import os
import re
import shlex
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```", re.S | re.M)
KINDS = {"sh": "shell", "bash": "shell", "shell": "shell", "console": "shell", "python": "python"}
KINDS.update({"yaml": "yaml", "yml": "yaml", "json": "json", "ini": "fio", "fio": "fio"})

#: (page, first line of the block) -> the file name the page tells the reader to save it as
FILES = {
    ("completion.md", '"""min-hybrid: io_uring-style hybrid polling'): "min_hybrid.py",
    ("io-schedulers.md", "# my_sched.py -- a shortest-seek-first IO scheduler"): "my_sched.py",
    ("cpu.md", "# timer_only.py: a cpuidle governor plug-in"): "timer_only.py",
    ("cpu.md", "# race_to_idle.py: a cpufreq governor plug-in"): "race_to_idle.py",
    ("quickstart.md", "name: classic4"): "classic4.yaml",
}

#: inputs a reader brings, stood in for by a file of the repository (the same format)
STAND_INS = {
    "job.fio": "examples/randread-4k-hipri.fio",
    "my-job.fio": "examples/randread-4k-hipri.fio",
    "j.fio": "examples/randread-4k-hipri.fio",
    "run.txt": "scenarios/data/traces/blkparse_qdc_sample.txt",
}
#: inputs a reader makes with their own tools, made here by a stacksim command (in the scratch
#: directory of a page that names them): fio's latency log of j.fio, another machine's platform
MADE = {
    "j_lat.1.log": "stacksim run j.fio --platform optane900p-e3-1230v5 --records j_lat.log --quiet "
    "--set runtime=10ms --set ramp_time=1ms",
    "other.yaml": "stacksim platform new --cpu xeon-silver-4210r --ssd samsung-980pro --ssds 1 -o other.yaml",
}
_LINKED = ("examples", "scenarios", "tests")


@dataclass
class CodeBlock:
    page: Path
    line: int  # line of the opening fence
    lang: str
    text: str

    @property
    def first(self) -> str:
        return next((s.strip() for s in self.text.splitlines() if s.strip()), "")

    @property
    def key(self) -> tuple[str, str]:
        return self.page.name, self.first

    @property
    def kind(self) -> str:
        if self.lang:
            return KINDS.get(self.lang, f"unknown language '{self.lang}'")
        if self.first.startswith("stacksim "):
            return "shell"
        return "quote" if self.first.startswith("$ ") else "text"

    @property
    def saved_as(self) -> str | None:
        return next((f for (p, head), f in FILES.items() if p == self.page.name and self.first.startswith(head)), None)

    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


@dataclass
class Command:
    block: CodeBlock
    text: str  # the command as one line, without its comment
    heredoc: str | None = None
    argv: list[str] = field(default_factory=list)

    @property
    def key(self) -> tuple[str, str]:
        return self.block.page.name, self.text

    @property
    def synopsis(self) -> bool:
        """A usage line (``[--seed N]``, ``NAME|FILE.yaml``, ``TRACE``), not a command."""
        if self.argv[0] != "stacksim":
            return False
        return bool(re.search(r"\[-|\w\|\w|\b[A-Z]{3,}\b", self.text))


def code_blocks() -> list[CodeBlock]:
    out = []
    for page in DOCS:
        text = page.read_text(encoding="utf-8")
        for m in _FENCE.finditer(text):
            out.append(CodeBlock(page, text.count("\n", 0, m.start()) + 1, m.group(1).strip(), m.group(2)))
    return out


def commands(block: CodeBlock) -> list[Command]:
    """The block's commands: continuations joined, comments dropped, a here-document kept."""
    lines = block.text.splitlines()
    out = []
    while lines:
        parts = [lines.pop(0)]
        while lines and (parts[-1].rstrip().endswith("\\") or lines[0][:1].isspace()):
            parts[-1] = parts[-1].rstrip().removesuffix("\\")
            parts.append(lines.pop(0))  # a continued line, or an indented one (a synopsis goes on)
        words = _split(parts, lines)
        if not words:
            continue
        heredoc = None
        if "<<'EOF'" in parts[-1]:
            body = []
            while lines and lines[0].strip() != "EOF":
                body.append(lines.pop(0))
            lines = lines[1:]
            heredoc = "\n".join(body) + "\n"
        words = [w for w in words if w != "<<EOF"]
        out.append(Command(block, " ".join(words), heredoc, words))
    return out


def _split(parts: list[str], lines: list[str]) -> list[str]:
    """The words of ``parts``; a quoted word that goes on to the next line takes it too."""
    while True:
        try:
            return shlex.split(" ".join(p.strip() for p in parts), comments=True)
        except ValueError:  # no closing quotation
            if not lines:
                raise
            parts.append(lines.pop(0))


def unknown_options(cmd: Command) -> list[str]:
    """The ``--options`` of a synopsis that its sub-command does not take."""
    from stacksim import cli

    sub = cmd.argv[1]
    parser = cli.build_parser()._subparsers._group_actions[0].choices[sub]
    known = {o for a in parser._actions for o in a.option_strings}
    named = re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", cmd.text)
    return [o for o in named if o not in known]


@contextlib.contextmanager
def scratch(tmp: Path, page: Path | None = None):
    """``tmp`` as the working directory, with the repository's inputs linked, the stand-ins copied
    and what ``page`` names of :data:`MADE` made; the plug-ins registered while in it are
    unregistered after."""
    for name in _LINKED:
        (tmp / name).symlink_to(ROOT / name)
    for name, src in STAND_INS.items():
        shutil.copy(ROOT / src, tmp / name)
    modules = set(sys.modules)
    old = os.getcwd()
    os.chdir(tmp)
    try:
        with _registrations_kept():
            text = page.read_text(encoding="utf-8") if page else ""
            for name, command in MADE.items():
                if name in text:
                    rc, out = run_command(Command(CodeBlock(page, 0, "sh", command), command, None, command.split()))
                    if rc != 0:
                        raise RuntimeError(f"making the stand-in {name}: {command} -> exit {rc}\n{out}")
            yield tmp
    finally:
        os.chdir(old)
        for name in set(sys.modules) - modules:
            if name.startswith("stacksim_plugin_"):
                del sys.modules[name]


def _registries():
    import policies  # noqa: F401  (registers the built-in policies)
    from simcore.plugins import Registry

    return [o for o in gc.get_objects() if isinstance(o, Registry)]


@contextlib.contextmanager
def _registrations_kept():
    """The policies registered while in it are unregistered after (every registry as it was)."""
    registries = _registries()
    before = {id(r): dict(r._items) for r in registries}
    try:
        yield
    finally:
        for r in registries:
            r._items.clear()
            r._items.update(before[id(r)])


#: (argv, the files of the directory) -> (exit status, output, the files the command wrote)
_DONE: dict[tuple, tuple[int, str, dict[str, bytes]]] = {}


def run_command(cmd: Command) -> tuple[int, str]:
    """Run one command in the current directory: its exit status and its output (stdout+stderr).
    The same command on the same input files (another page's copy of it) is run once: the second
    time gets the first one's output and the files it wrote."""
    before = _files()
    named = tuple(sorted((n, h) for n, h in before.items() if n in cmd.argv))  # its input files
    key = (tuple(cmd.argv), cmd.heredoc, named)
    if key not in _DONE:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = _run(cmd)
        after = _files()
        wrote = {n: Path(n).read_bytes() for n, h in after.items() if before.get(n) != h}
        _DONE[key] = (rc, out.getvalue() + err.getvalue(), wrote)
    rc, output, wrote = _DONE[key]
    for name, data in wrote.items():
        Path(name).write_bytes(data)
    return rc, output


def _files() -> dict[str, str]:
    """The regular files of the current directory (not the linked repository) by content hash."""
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in Path(".").iterdir()
        if p.is_file() and not p.is_symlink()
    }


def _run(cmd: Command) -> int:
    words = cmd.argv
    if words[0] == "stacksim":
        from stacksim import cli

        try:
            return cli.main(words[1:]) or 0
        except SystemExit as e:
            return e.code if isinstance(e.code, int) else 1
    if words[0] in ("python", "python3") and words[1:2] == ["-c"]:
        exec(compile(words[2], cmd.block.where(), "exec"), {"__name__": "__main__"})
        return 0
    if words[0] in ("python", "python3") and words[1:2] == ["-"] and cmd.heredoc is not None:
        exec(compile(cmd.heredoc, cmd.block.where(), "exec"), {"__name__": "__main__"})
        return 0
    raise ValueError(f"{cmd.block.where()}: not a command this runner knows: {cmd.text}")


def run_python(block: CodeBlock) -> str:
    """Execute a python block in the current directory; what it printed. A policy the block
    registers is unregistered after it (a reader runs a plug-in shown on a page from its file, with
    ``--plugin``: the page's command imports that file, which would register the name again)."""
    out = io.StringIO()
    with _registrations_kept(), contextlib.redirect_stdout(out):
        exec(compile(block.text, block.where(), "exec"), {"__name__": "__docs__"})
    return out.getvalue()


def validate_config(block: CodeBlock) -> str:
    """Validate a yaml/json block by the model of what it is; which model that was."""
    import json

    import yaml

    from models.platform import PlatformConfig
    from scenarios.config.host import ScenarioFile
    from scenarios.studies.sweep import SweepFile
    from simcore.config import validate

    data = json.loads(block.text) if block.kind == "json" else yaml.safe_load(block.text)
    if "axes" in data:
        model = SweepFile
    elif "cpu" in data:
        model = PlatformConfig
    else:
        model = ScenarioFile
    validate(model, data, where=block.where())
    return model.__name__


def parse_fio(block: CodeBlock):
    from scenarios.inputs.fio.parser import parse_fio_text

    text = block.text if block.first.startswith("[") else "[job]\n" + block.text
    return parse_fio_text(text, path=block.where())
