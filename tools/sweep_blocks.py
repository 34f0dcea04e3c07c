"""The blocks of docs pages that sweeps make, ``<!-- sweep: NAME -->`` ... ``<!-- end sweep -->``,
and their ``<!-- made at commit HASH by COMMAND -->`` lines: found and rewritten here for the tools
that make them (predictions_tables.py, iopoll_tables.py, server_tables.py)."""

from __future__ import annotations

import re
from pathlib import Path

BLOCK = re.compile(r"(<!-- sweep: (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- end sweep -->)", re.S)
MADE = re.compile(r"<!-- made at commit \w+ by (?P<cmd>[^>]*?) -->")


def replace_blocks(text: str, made: dict[str, str]) -> tuple[str, set[str]]:
    """``text`` with the body of each block named in ``made`` replaced by ``made[name]`` (the others
    kept), and the names replaced."""
    seen: set[str] = set()

    def repl(m: re.Match) -> str:
        if m["name"] not in made:
            return m.group(0)
        seen.add(m["name"])
        return m.group(1) + made[m["name"]] + "\n" + m.group(4)

    return BLOCK.sub(repl, text), seen


def stamp_commit(text: str, commit: str | None) -> str:
    """Every made-at line of ``text`` pointed at ``commit`` (unchanged without one)."""
    if not commit:
        return text
    return MADE.sub(lambda m: f"<!-- made at commit {commit} by {m['cmd']} -->", text)


def rewrite_page(path: Path, made: dict[str, str], commit: str | None) -> set[str]:
    """Rewrite the blocks of page ``path`` named in ``made`` and its made-at lines; the names found."""
    text, seen = replace_blocks(path.read_text(), made)
    path.write_text(stamp_commit(text, commit))
    return seen
