"""Job files in the style of fio's examples/ for every item of issue #33 (tests/fio_examples/):
buffered IO and fsync, zoned namespaces, FDP, verify, the engines that reach NVMe through a
library (xnvme, libblkio), io_uring_cmd, sg and other refused engines, and ``threads=1``.

Each file says on its first line what stacksim does with it today:

* ``; expect: run``: it runs unchanged;
* ``; expect: refuse OWNER "TEXT"``: it is refused with one message containing TEXT. OWNER
  ``pagecache`` (buffered IO, fsync) and ``zoned`` (zonemode=zbd, FDP) are the branches of #33
  that model them: when one merges, its files start to run and :func:`test_how_many_run` says
  which; flip their first line to ``; expect: run``. ``permanent``: refused on purpose.

Optional lines after it: ``; platform: NAME`` (default :data:`PLATFORM`: a zoned job needs a zoned
device, FDP an FTL) and ``; set: KEY=VALUE ...`` (``--set`` keys: the FTL switched on, a short
``runtime`` for jobs that would write whole 2 GiB zones).
"""

import re
from pathlib import Path

import pytest

from scenarios.config.host import resolve
from scenarios.run.simulate import simulate
from simcore.errors import ConfigError

EXAMPLES = Path(__file__).parent / "fio_examples"
FILES = sorted(EXAMPLES.glob("*.fio"))
PLATFORM = "optane900p-e3-1230v5"
_EXPECT = re.compile(r'^; expect: (?:(?P<run>run)|refuse (?P<owner>pagecache|zoned|permanent) "(?P<text>[^"]+)")\s*$')


def _expect(path: Path) -> re.Match:
    m = _EXPECT.match(path.read_text().splitlines()[0])
    assert m, f"{path.name}: the first line must be '; expect: run' or '; expect: refuse OWNER \"TEXT\"'"
    return m


def _resolve(path: Path):
    platform, sets = PLATFORM, {}
    for line in path.read_text().splitlines()[1:3]:
        if line.startswith("; platform:"):
            platform = line.split(":", 1)[1].strip()
        elif line.startswith("; set:"):
            sets = dict(kv.split("=", 1) for kv in line.split(":", 1)[1].split())
    return resolve(job_file=str(path), platform=platform, sets=sets)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_example(path):
    m = _expect(path)
    if m["run"]:
        s = simulate(_resolve(path)).summary
        assert s["ios"] > 0
        return
    with pytest.raises(ConfigError) as e:
        _resolve(path)
    assert m["text"] in str(e.value) and "\n" not in str(e.value).strip()


def test_how_many_run(capsys):
    """Reports how many of the job files are accepted today, by #33 item owner, and fails when a
    file's first line no longer says what happens (a branch merged: flip it)."""
    runs, refused, wrong = [], {}, []
    for path in FILES:
        m = _expect(path)
        try:
            _resolve(path)
            ok = True
        except ConfigError:
            ok = False
        if ok:
            runs.append(path.name)
        else:
            refused.setdefault(m["owner"] or "?", []).append(path.name)
        if ok != bool(m["run"]):
            wrong.append(path.name)
    with capsys.disabled():
        print(
            f"\nfio examples: {len(runs)} of {len(FILES)} run; refused: "
            + ", ".join(f"{owner} {len(names)}" for owner, names in sorted(refused.items()))
        )
    assert not wrong, f"these files now {'run' if wrong[0] in runs else 'are refused'}: flip their expect line: {wrong}"
    assert len(runs) >= 29  # today (the pagecache and zoned branches merged)


def test_corpus_covers_issue_33():
    text = {p.name: p.read_text() for p in FILES}
    every = "".join(text.values())
    for needle in (
        "direct=0",
        "fsync=",
        "zonemode=zbd",
        "fdp=1",
        "verify_backlog=",
        "verify_only",
        "ioengine=xnvme",
        "ioengine=libblkio",
        "ioengine=io_uring_cmd",
        "ioengine=sg",
        "threads=1",
        "ioengine=mmap",
    ):
        assert needle in every, needle
    for name, t in text.items():
        assert t.startswith("; expect:") and "[global]" in t, name
