"""The command outputs the docs quote: every fenced block whose first line is ``$ stacksim ...``
(continued with a trailing ``\\``) and whose input files are in the repository. Each quoted line
must be a line of the command's output as it is now, but for ``...`` (lines left out) and the
wall-clock line (``simulated ... wall``); the repository's own absolute path is quoted relative.
tests/test_docs_quotes.py checks them; after the model changes, re-make them:

    python tools/doc_quotes.py            # rewrite the quoted lines from fresh runs
    python tools/doc_quotes.py --check    # list the stale ones (exit 1)
    python tools/doc_quotes.py scaling.md # only the pages named

Blocks whose inputs are made by the reader first (a file the page has them write) are not run;
:func:`blocks` says which are skipped and why.
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_FENCE = re.compile(r"^```[^\n]*\n(\$ stacksim .*?)^```", re.S | re.M)
#: quoted lines not compared: an elision, and the run's wall-clock figures
_SKIP = re.compile(r"^\s*\.\.\.\s*$|\bwall\b")
#: a fit's elapsed seconds (``(76 simulations, 6.4 s)``): compared as ``_``, the rest of the line as is
_ELAPSED = re.compile(r"(simulations, )\d+(?:\.\d+)?( s\))")
#: the options whose value is a file the command writes
_OUTPUTS = ("--json", "-o", "--records", "--html", "--trace-out")


@dataclass
class Block:
    page: Path
    start: int  # offset of the block's text in the page
    end: int
    argv: list[str]
    quoted: list[str]
    missing: list[str]  # input files of the command that are not in the repository


def blocks() -> list[Block]:
    """Every ``$ stacksim`` block of the docs."""
    out = []
    for page in DOCS:
        text = page.read_text(encoding="utf-8")
        for m in _FENCE.finditer(text):
            lines = m.group(1).splitlines()
            cmd = []
            while lines:
                line = lines.pop(0)
                cmd.append(line.rstrip("\\").strip())
                if not line.endswith("\\"):
                    break
            argv = shlex.split(" ".join(cmd))[2:]  # after "$ stacksim"
            missing = [a for a in argv if re.search(r"\.(csv|txt|fio|yaml|json)$", a) and not _inputs_ok(a, argv)]
            out.append(Block(page, m.start(1), m.end(1), argv, lines, missing))
    return out


def _inputs_ok(arg: str, argv: list[str]) -> bool:
    i = argv.index(arg)
    if i > 0 and argv[i - 1] in _OUTPUTS:
        return True  # an output
    return (ROOT / arg.split("=", 1)[-1]).exists()  # a file, or a --set KEY=FILE value


def run(block: Block) -> list[str]:
    """The command's output lines (stdout then stderr), run from the repository's root."""
    from stacksim import cli

    out, err = io.StringIO(), io.StringIO()
    written = [ROOT / b for a, b in zip(block.argv, block.argv[1:]) if a in _OUTPUTS and not (ROOT / b).exists()]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), _chdir(ROOT):
            cli.main(block.argv)
    finally:
        for path in written:  # what the command wrote into the checkout (-o my-box.yaml)
            path.unlink(missing_ok=True)
    # a path the command prints absolute (a trace file) is quoted relative to the repository
    return (out.getvalue() + err.getvalue()).replace(f"{ROOT}/", "").splitlines()


@contextlib.contextmanager
def _chdir(path: Path):
    import os

    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def stale_lines(block: Block, output: list[str]) -> list[str]:
    """The quoted lines the output no longer has (a line quoted more often than the output has it
    counts: a block of one line repeated is stale)."""
    have = Counter(_ELAPSED.sub(r"\1_\2", o) for o in output)
    stale = []
    for q in block.quoted:
        if _SKIP.search(q):
            continue
        q = _ELAPSED.sub(r"\1_\2", q)
        if have[q] > 0:
            have[q] -= 1
        else:
            stale.append(q)
    return stale


#: a whole token that is a number as the outputs print them: 94630, 96,533, +2.24%, 1.0685e+05
_NUMBER = re.compile(r"[-+]?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?%?")


def _key(line: str) -> str:
    """What identifies a quoted line: its text up to its first number token (``cheops23 qd1 psync
    iops`` of a suite row, ``cpu10 residency: C0`` of a residency line)."""
    for tok in re.finditer(r"\S+", line):
        if _NUMBER.fullmatch(tok.group(0)):
            return line[: tok.start()]
    return line


def _refreshed(block: Block, output: list[str]) -> list[str]:
    """The quoted lines re-made: each kept line replaced by the output line that starts like it
    (each output line used once)."""
    new = []
    used: set[int] = set()
    for q in block.quoted:
        if _SKIP.search(q):
            new.append(q)
            continue
        key = _key(q)
        i = next((i for i, o in enumerate(output) if i not in used and _key(o) == key), None)
        if i is None:
            new.append(q)
        else:
            used.add(i)
            new.append(output[i])
    return new


def main(argv: list[str]) -> int:
    """``[--check] [PAGE.md ...]``: every page, or only those named."""
    check = "--check" in argv
    only = {a for a in argv if a.endswith(".md")}
    stale = 0
    for page in DOCS:
        if only and page.name not in only:
            continue
        text = original = page.read_text(encoding="utf-8")
        edits = []
        for b in (b for b in blocks() if b.page == page and not b.missing):
            output = run(b)
            bad = stale_lines(b, output)
            if not bad:
                continue
            stale += 1
            print(f"{page.relative_to(ROOT)}: $ stacksim {' '.join(b.argv)}: {len(bad)} stale lines")
            if not check:
                head = text[b.start : b.end].splitlines(keepends=True)
                ncmd = len(head) - len(b.quoted)
                edits.append((b.start, b.end, "".join(head[:ncmd]) + "".join(x + "\n" for x in _refreshed(b, output))))
        for start, end, new in reversed(edits):
            text = text[:start] + new + text[end:]
        if edits:
            if page.read_text(encoding="utf-8") != original:
                print(f"{page.relative_to(ROOT)}: edited while its commands ran; not rewritten (run again)")
                return 1
            page.write_text(text, encoding="utf-8")
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
