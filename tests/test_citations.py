"""Every file the repository's prose names is there to follow.

A docstring, a comment or a page of the docs that names a file names one of two kinds:

- a file of this repository: a path (``models/os/sched/cfs.py``, ``docs/os.md``, ``scenarios/...``,
  ``tests/...``), a bare module or page name (``cfs.py``, ``engine.md``) or a dotted module name
  (``models.os.block.blk_mq``, ``simcore.engine.Handler``): it must exist, so that a path left
  behind by a move fails here;
- a public source: a Linux source path (``kernel/sched/fair.c``, ``block/blk-mq.c``,
  ``include/linux/blk-mq.h``, ``Documentation/...``), fio's or SPDK's (``engines/io_uring.c``,
  ``lib/scheduler/scheduler_dynamic.c``), recognised by its shape (a C, header or reST file, or
  a directory, under a top-level directory those projects have), or a URL.

Anything else that looks like a source path (a C file under a directory none of those projects
has) or a repository path that is not there (a module's name from before a move, a bare module
name that no file beside it has) is reported with the file and line that names it: the examples
are :func:`test_a_name_that_cannot_be_followed_is_flagged`'s.
"""

from __future__ import annotations

import ast
import fnmatch
import io
import re
import tokenize
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: the repository's own top-level entries: a path starting with one names a repository file
REPO_TOP = {
    ".ci",
    "benchmarks",
    "docs",
    "examples",
    "models",
    "policies",
    "scenarios",
    "simcore",
    "stacksim",
    "tests",
    "tools",
}
#: the Python packages a dotted name can start with
PACKAGES = ("simcore", "models", "policies", "scenarios", "stacksim")
#: top-level directories of the public sources cited: Linux, fio, SPDK (and DPDK inside it)
LINUX_TOP = {
    "Documentation", "arch", "block", "certs", "crypto", "drivers", "fs", "include", "init", "io_uring", "ipc",
    "kernel", "lib", "mm", "net", "rust", "samples", "scripts", "security", "sound", "tools", "usr", "virt",
}  # fmt: skip
FIO_TOP = {"crc", "engines", "examples", "lib", "os", "oslib", "t", "tools"}
SPDK_TOP = {"app", "doc", "dpdk", "examples", "include", "lib", "module", "scripts", "test"}
PUBLIC_TOP = LINUX_TOP | FIO_TOP | SPDK_TOP
#: the extensions of public source files (C, headers, assembly, reST docs, fio job files)
PUBLIC_EXT = {".c", ".h", ".S", ".cpp", ".rst", ".fio", ".sh"}
#: the extensions of the repository's own files
REPO_EXT = {".py", ".md", ".yaml", ".yml", ".json", ".csv", ".txt", ".svg", ".cfg", ".toml", ".fio"}
#: files the build makes (an install with a C compiler), named by the code that reads them
BUILT = {"simcore/_compiled_build.json"}
#: the owners a public path is attributed to just before it, where its top-level directory is
#: also one of the repository's (fio's ``examples/...``, the kernel's ``tools/...``)
OWNER = re.compile(r"\b(fio|SPDK|DPDK|Linux|kernel)\b")

#: names of files that the reader writes (examples in the docs), not files of the repository
READERS_FILES = {
    "my_policy.py": "a plug-in the reader writes (README.md, docs/quickstart.md, docs/server.md, simcore/plugins.py)",
    "my_sched.py": "the IO-scheduler plug-in example of docs/io-schedulers.md",
    "min_hybrid.py": "the completion-policy plug-in example of docs/completion.md",
    "race_to_idle.py": "the cpufreq-governor plug-in example of docs/cpu.md",
    "timer_only.py": "the cpuidle-governor plug-in example of docs/cpu.md",
    "half_cores.py": "the core-scheduling plug-in example of models/server/core_scheduling.py",
}

_PATH = re.compile(r"(?<![\w./<>@$~-])((?:[\w.*-]+/)+[\w.*-]*)")
_BARE = re.compile(r"(?<![\w./<>@$~-])([\w-]+\.(?:py|md))(?![\w/-])")
_DOTTED = re.compile(r"(?<![\w./-])((?:" + "|".join(PACKAGES) + r")(?:\.[A-Za-z_]\w*)+)")
_URL = re.compile(r"\b[a-z][a-z+]*://\S+")


# ------------------------------------------------------------------------------- the named texts
def prose(path: Path) -> list[tuple[int, str, str]]:
    """(line, text, context) of what a file says to its reader, in the pieces a bare file name is read in:
    a Python file's docstrings (every string that stands as a statement: modules', classes',
    functions', attributes') and its comments (a run of comment lines is one piece), a page by its
    paragraphs under their headings (:func:`_page_pieces`), a configuration file's comments. Each
    piece comes with its context: text whose paths locate its bare names but are not checked."""
    src = path.read_text(encoding="utf-8")
    if path.suffix == ".md":
        return _page_pieces(src)
    if path.suffix == ".yaml":
        return [(1, src, "")]
    if path.suffix == ".py":
        comments = [
            (t.start[0], t.string)
            for t in tokenize.generate_tokens(io.StringIO(src).readline)
            if t.type == tokenize.COMMENT
        ]
    else:  # setup.cfg, pyproject.toml, .ci/run: their comments
        comments = [(n, line) for n, line in enumerate(src.splitlines(), 1) if line.lstrip().startswith("#")]
    out: list[tuple[int, str]] = []
    last = -2
    for n, text in comments:
        if n == last + 1 and out:
            out[-1] = (out[-1][0], out[-1][1] + "\n" + text)
        else:
            out.append((n, text))
        last = n
    if path.suffix == ".py":
        out += [(node.lineno, node.value.value) for node in _statements(ast.parse(src).body) if _is_string(node)]
    return [(n, text, "") for n, text in out]


def _statements(body: list[ast.stmt]):
    """Every statement of ``body`` and of the blocks inside it (a docstring is one)."""
    for node in body:
        yield node
        for block in ("body", "orelse", "finalbody"):
            yield from _statements(getattr(node, block, []))
        for h in getattr(node, "handlers", []):
            yield from _statements(h.body)


def _is_string(node: ast.stmt) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def _page_pieces(src: str) -> list[tuple[int, str, str]]:
    """A page's headings, paragraphs and table rows (each row on its own), each with the headings
    it is under as its context (``# CPU (`models/cpu/`)`` names the directory of a table's bare
    module names)."""
    out = []
    headings: list[str] = []
    block: list[str] = []
    start = 0
    fenced = False
    for n, line in enumerate(src.splitlines() + [""], 1):
        fenced ^= line.startswith("```")
        heading = not fenced and re.match(r"#+ ", line)
        if block and (not line.strip() or line.startswith("|") or heading or block[-1].startswith("|")):
            out.append((start, "\n".join(block), "\n".join(headings)))
            block = []
        if heading:
            level = len(line) - len(line.lstrip("#"))
            headings = headings[: level - 1]
            out.append((n, line, "\n".join(headings)))
            headings.append(line)
        elif line.strip():
            start = start if block else n
            block.append(line)
    return out


def files() -> list[Path]:
    """The repository's Python files, pages and configuration that prose lives in."""
    out = [ROOT / n for n in ("README.md", "CHANGELOG.md", "setup.py", "setup.cfg", "pyproject.toml", ".ci/run")]
    for d in ("simcore", "models", "policies", "scenarios", "stacksim", "tests", "tools", "benchmarks", "docs"):
        out += sorted(p for p in (ROOT / d).rglob("*") if p.suffix in (".py", ".md") and "__pycache__" not in p.parts)
    out += sorted((ROOT / "scenarios" / "data").rglob("*.yaml"))
    return [p for p in out if p.is_file()]


# --------------------------------------------------------------------------- the repository's names
@cache
def _repo_files() -> tuple[str, ...]:
    skip = {".git", ".venv", "__pycache__", "build"}
    return tuple(
        p.relative_to(ROOT).as_posix()
        for p in ROOT.rglob("*")
        if not skip & set(p.relative_to(ROOT).parts) and not p.name.endswith(".egg-info")
    )


@cache
def _basenames() -> frozenset[str]:
    return frozenset(p.rsplit("/", 1)[-1] for p in _repo_files())


def _exists(rel: str) -> bool:
    """``rel`` (a path under the root, maybe with ``*``) names a file or directory."""
    rel = rel.rstrip("/")
    if "*" in rel:
        return any(True for _ in ROOT.glob(rel))
    return (ROOT / rel).exists() or (ROOT / (rel + ".py")).exists()


def _exists_below(rel: str) -> bool:
    """``rel`` is the tail of a repository path (``sched/cfs.py`` of ``models/os/sched/cfs.py``):
    how the docs name a file inside the package a sentence is about."""
    rel = rel.rstrip("/")
    return any(p == rel or fnmatch.fnmatchcase(p, rel) or fnmatch.fnmatchcase(p, "*/" + rel) for p in _repo_files())


@cache
def _names_of(module: Path) -> dict[str, frozenset[str]]:
    """The names a module defines at its top level, each with (for a class) the names its body
    and its methods' ``self.X`` define."""
    tree = ast.parse(module.read_text(encoding="utf-8"))
    out: dict[str, frozenset[str]] = {}

    def top(body):
        for node in body:
            if isinstance(node, ast.ClassDef):
                members = set()
                for sub in ast.walk(node):
                    if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                        members.add(sub.name)
                    elif isinstance(sub, ast.AnnAssign) and isinstance(sub.target, ast.Name):
                        members.add(sub.target.id)
                    elif isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                        members.add(sub.id)
                    elif isinstance(sub, ast.Attribute) and isinstance(sub.ctx, ast.Store):
                        members.add(sub.attr)
                out[node.name] = frozenset(members)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                out[node.name] = frozenset()
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    for n in ast.walk(t):
                        if isinstance(n, ast.Name):
                            out[n.id] = frozenset()
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for a in node.names:
                    out[(a.asname or a.name).split(".")[0]] = frozenset()
            elif isinstance(node, (ast.If, ast.Try)):
                top(
                    node.body + getattr(node, "orelse", []) + [s for h in getattr(node, "handlers", []) for s in h.body]
                )

    top(tree.body)
    return out


@cache
def _members_anywhere() -> frozenset[str]:
    """Every name a class of the packages defines (an inherited method named on a subclass)."""
    out: set[str] = set()
    for pkg in PACKAGES:
        for p in (ROOT / pkg).rglob("*.py"):
            for members in _names_of(p).values():
                out |= members
    return frozenset(out)


def dotted_is_known(name: str) -> bool:
    """``models.os.block.blk_mq.BlkMq.issue``: each package and module exists, the first name
    after the module is defined in it and, for a class, the next one in the class (or, inherited,
    in some class of the packages)."""
    parts = name.rstrip(".").split(".")
    here = ROOT / parts[0]
    rest = parts[1:]
    while rest and here.is_dir():
        if (here / rest[0]).is_dir() or (here / (rest[0] + ".py")).is_file():
            here = here / rest[0] if (here / rest[0]).is_dir() else here / (rest[0] + ".py")
            rest = rest[1:]
        else:
            break
    if not rest:
        return True
    module = here / "__init__.py" if here.is_dir() else here
    names = _names_of(module) if module.is_file() else {}
    if rest[0] not in names:
        return False
    if len(rest) == 1 or not names[rest[0]]:
        return True  # a function's attribute, a value's method: not followed
    return rest[1] in names[rest[0]] or rest[1] in _members_anywhere()


# ----------------------------------------------------------------------------------- the classifier
def path_problem(token: str, before: str = "", where: Path | None = None) -> str | None:
    """Why the path ``token`` (as written, with ``/``) cannot be followed, or None. ``before`` is
    the text just before it (an owner such as "fio's"), ``where`` the file that names it."""
    t = token.rstrip(".,;:)")
    if t.startswith("./"):
        t = t[2:]
    if not t or re.fullmatch(r"[A-Z_]+(/[A-Z_]*)*\.?\w*/?", t):
        return None  # a placeholder (NAME/, FILE.py); an absolute path (/proc/...) never matches _PATH
    head = t.split("/", 1)[0]
    ext = Path(t.rstrip("/")).suffix
    if head in REPO_TOP:
        if _exists(t):
            return None
        if t in BUILT or head in PUBLIC_TOP and ext not in (".py", ".md") and OWNER.search(before):
            return None  # fio's examples/..., the kernel's tools/...
        return "no such repository file"
    if ext in REPO_EXT:
        if where is not None and (where.parent / t).exists():
            return None
        return None if _exists_below(t) else "no repository file ends with this path"
    if head in PUBLIC_TOP:
        return None if ext in PUBLIC_EXT or ext == "" else "not a source file's shape"
    if ext in PUBLIC_EXT:
        return "a source path under no known top-level directory (Linux, fio, SPDK)"
    return None  # not a file's name: GB/s, read/write, cpuN/cpufreq/...


def bare_problem(
    token: str, where: Path | None = None, named: frozenset[str] = frozenset(), dirs_named: frozenset[str] = frozenset()
) -> str | None:
    """Why a bare ``NAME.py`` or ``NAME.md`` cannot be followed, or None: a page of the docs (or
    beside the file that names it); a module beside the file that names it, one whose whole path
    the same piece of text names (``models/os/sched/cfs.py`` ... ``cfs.py``) or one in a directory
    it names, or names a file of (``models/cpu/`` ... ``core.py``)."""
    if re.fullmatch(r"[A-Z_]+\.\w+", token) or token in READERS_FILES:
        return None
    if token.endswith(".md"):
        dirs = [ROOT, ROOT / "docs"] + ([where.parent] if where else [])
        return None if any((d / token).is_file() for d in dirs) else "no such page"
    if (ROOT / token).is_file() or where is not None and (where.parent / token).is_file() or token in named:
        return None
    if any((ROOT / d / token).is_file() for d in dirs_named):
        return None
    if token in _basenames():
        return "not beside this file, and its path is not named with it: which one?"
    return "no repository file of this name"


def problems_in(text: str, where: Path | None = None, context: str = "") -> list[tuple[int, str, str]]:
    """(line offset, name, why) for every name in ``text`` that cannot be followed (``context``'s
    paths, the headings a paragraph is under, locate its bare names too)."""
    text, context = (_URL.sub(lambda m: " " * len(m.group()), s) for s in (text, context))
    out = []
    named: set[str] = set()
    dirs: set[str] = set()
    for m in [*_PATH.finditer(context), *_PATH.finditer(text)]:
        why = path_problem(m.group(1), m.string[max(0, m.start() - 40) : m.start()], where)
        if why:
            if m.string is text:
                out.append((text.count("\n", 0, m.start()), m.group(1), why))
        else:
            t = m.group(1).rstrip(".,;:)")
            named.add(t.rsplit("/", 1)[-1])
            if t.split("/", 1)[0] in REPO_TOP and "*" not in t:
                dirs.add(t.rstrip("/") if (ROOT / t).is_dir() else t.rsplit("/", 1)[0])
    for m in _BARE.finditer(text):
        why = bare_problem(m.group(1), where, frozenset(named), frozenset(dirs))
        if why:
            out.append((text.count("\n", 0, m.start()), m.group(1), why))
    for m in _DOTTED.finditer(text):
        if not dotted_is_known(m.group(1)):
            out.append((text.count("\n", 0, m.start()), m.group(1), "no such module or name"))
    return out


# ------------------------------------------------------------------------------------------ tests
def test_every_named_file_exists_or_is_a_public_source():
    bad = []
    for path in files():
        for line, text, context in prose(path):
            for offset, name, why in problems_in(text, path, context):
                bad.append(f"{path.relative_to(ROOT)}:{line + offset}: {name}: {why}")
    assert bad == [], "\n".join(bad)


@pytest.mark.parametrize(
    "text",
    [
        "see models/os/sched/fairy.py",  # a made-up file in a real package
        "models/os/idle.py",  # where the idle loop was before the kernel's tree
        "the scheduler (sched.py)",  # a bare name no file has
        "docs/nowhere.md",
        "[the page](nowhere.md)",
        "models.os.sched.nothing",  # no such module
        "models.os.sched.runner.NoRunner",  # no such class in a real module
        "models.os.sched.runner.CpuRunner.fly",  # no such method, here or inherited
        "frobnicate/thing.c",  # a C file under a directory no cited project has
        "Linux's admin-guide/pm/cpuidle.rst",  # the kernel's doc without its Documentation/
        "block/blk_mq.py and block/iosched.py",  # a module's old name under a real package
        "tests/test_nothing.py::test_it",
    ],
)
def test_a_name_that_cannot_be_followed_is_flagged(text):
    assert problems_in(text), text


@pytest.mark.parametrize(
    "text",
    [
        "kernel/sched/fair.c (select_task_rq_fair), block/blk-mq.c, drivers/nvme/host/pci.c",
        "include/linux/blk-mq.h, io_uring/sqpoll.c, fs/aio.c, mm/readahead.c, Documentation/block/",
        "fio's engines/io_uring.c and examples/backwards-read.fio; SPDK's lib/scheduler/scheduler_dynamic.c",
        "https://example.org/a/b.c",
        "models/os/sched/cfs.py, sched/cfs.py, policies/io_scheduler/*, docs/os.md, engine.md, cfs.py",
        "models.os.block.blk_mq.BlkMq, simcore.engine.Handler, models.os.sched.runner.CpuRunner.run",
        "GB/s, read/write, /proc/sys/kernel/sched_migration_cost_ns, NAME.yaml, scenarios/data/builtin/*.yaml",
    ],
)
def test_a_name_that_can_be_followed_passes(text):
    assert problems_in(text) == []


def test_every_readers_file_is_still_named():
    """The list of the reader's files holds only names the prose still uses (a name dropped from
    the docs leaves the list, so it cannot hide a repository file of that name)."""
    text = "".join(t for path in files() for _, t, _ in prose(path))
    assert [n for n in READERS_FILES if n not in text] == []
