"""Hostile inputs and faults (issue 47): each case ends cleanly, with one ``stacksim: error:`` line and
exit status 2, nothing partial and the inputs unchanged, or with a correct result. Every limit is
lowered here through its environment variable (or a module constant) so that no test allocates
more than a few MiB or takes more than a few seconds.

1. a cut-off sweep store, 2. journal entries that are JSON but no row, 3. bomb traces (sparse NUL
files, gzip/bzip2/xz bombs), 4. YAML alias bombs, 5. plug-ins named by a result file, 6. numbers
that would exhaust memory, 7. one huge trace line, 8. duplicate YAML/JSON keys, 9. temporaries of
a killed run, 10. non-finite metrics in an analysis; then the further battery (other fields,
other formats)."""

from __future__ import annotations

import bz2
import csv
import gzip
import json
import lzma
import os
import signal
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import pytest

from scenarios.inputs.traces import open_trace, sniff_format
from scenarios.studies.sweep import load_sweep, plan
from scenarios.studies.sweeps.rows import make_row
from scenarios.studies.sweeps.runner import execute
from scenarios.studies.sweeps.store import journal_dir, load_store, read_results
from simcore import bounded, outfile
from simcore.config import load_data_file, parse_scalar
from simcore.errors import ConfigError
from stacksim.cli import main

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "scenarios/data/traces/msr_sample.csv"
QUICK = ["--set", "runtime=1ms", "--set", "ramp_time=0", "--quiet"]
TINY = """
name: tiny
base: {scenario: default}
set: {runtime: 1ms, ramp_time: 0, queue.io_poll: 1}
axes:
  bs: [4k, 16k]
  hipri: [0, 1]
replicates: 2
seed: 3
"""


def refused(capsys, args: list[str], *needles: str) -> str:
    """Run the CLI; assert exit 2 and one ``stacksim: error:`` line naming ``needles``."""
    rc = main(args)
    cap = capsys.readouterr()
    assert rc == 2, (rc, cap.err[-2000:])
    lines = [ln for ln in cap.err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("stacksim: error: "), cap.err
    for n in needles:
        assert n in cap.err, (n, cap.err)
    return cap.err


# -- sweep stores (items 1, 2) ---------------------------------------------------------------------
def fake_row(task) -> dict:
    """A row made at once (the store's logic, not the simulation, is under test)."""
    summary = {"iops": 1000.0 + task.index, "bytes_per_joule": 1e6 * (2 + task.index % 3) + task.replicate}
    return make_row(task, {"summary": summary, "jobs": []})


@pytest.fixture
def tiny(tmp_path):
    p = tmp_path / "tiny.yaml"
    p.write_text(TINY)
    sweep, where = load_sweep(p)
    tasks = plan(sweep, where=where)
    full = tmp_path / "full.csv"
    execute(tasks, full, jobs=1, progress=False, fn=fake_row)
    return p, tasks, full


def cut_at(full: Path, out: Path, row: int, where: str) -> None:
    """``full`` cut in data row ``row`` (1-based): inside its ``config`` column, inside a metric, or
    just after its line end."""
    data = full.read_bytes()
    lines = data.split(b"\r\n")
    start = sum(len(ln) + 2 for ln in lines[:row])
    text = lines[row]
    cut = {"config": start + text.rfind(b'"{') + 200, "metric": start + 60, "line end": start + len(text) + 2}[where]
    out.write_bytes(data[:cut])


def rows_of(path: Path) -> list[dict]:
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


@pytest.mark.parametrize("where", ["config", "metric"])
def test_a_cut_off_store_is_recomputed_not_accepted(tiny, tmp_path, where):
    _sweep, tasks, full = tiny
    cut = tmp_path / "cut.csv"
    cut_at(full, cut, 7, where)
    rows, damage = load_store(cut)
    assert len(rows) == 6 and len(damage) == 1 and damage[0].where == "line 8", damage
    assert damage[0].key == (tasks[6].point, tasks[6].replicate)
    with pytest.raises(ConfigError, match="1 damaged stored row: line 8 .*resume the sweep|Resume the sweep"):
        read_results(cut)
    ran = []
    outcome = execute(tasks, cut, jobs=1, progress=False, fn=lambda t: ran.append(t.index) or fake_row(t))
    assert ran == [6, 7] and outcome.damaged == 1 and outcome.reused == 6
    assert rows_of(cut) == rows_of(full)  # the damaged row is whole again, its config as computed


def test_a_store_cut_at_a_line_end_is_whole_and_a_cut_header_holds_nothing(tiny, tmp_path):
    _sweep, tasks, full = tiny
    cut = tmp_path / "cut.csv"
    cut_at(full, cut, 7, "line end")
    assert [len(x) for x in load_store(cut)] == [7, 0]
    cut.write_bytes(full.read_bytes()[:30])
    rows, damage = load_store(cut)
    assert not rows and "header" in damage[0].why
    assert execute(tasks, cut, jobs=1, progress=False, fn=fake_row).computed == 8


def test_the_cli_says_what_it_recomputed_and_analyze_refuses_a_damaged_store(tiny, tmp_path, capsys, monkeypatch):
    sweep, _tasks, full = tiny
    cut = tmp_path / "cut.csv"
    cut_at(full, cut, 3, "config")
    before = cut.read_bytes()
    refused(capsys, ["analyze", "efficiency", str(cut)], "1 damaged stored row", "line 4", "cut off", "stacksim sweep")
    refused(capsys, ["report", str(cut), "-o", str(tmp_path / "r.html")], "damaged")
    assert cut.read_bytes() == before and not (tmp_path / "r.html").exists()
    monkeypatch.setattr("scenarios.studies.sweeps.runner.run_task", fake_row)
    assert main(["sweep", str(sweep), "-o", str(cut), "-j", "1"]) == 0
    cap = capsys.readouterr()
    assert "6 computed (1 replacing damaged rows), 2 already stored" in cap.out
    assert "1 damaged stored row recomputed: line 4" in cap.err
    assert main(["analyze", "efficiency", str(cut), "--x", "bs", "--y", "hipri"]) == 0


@pytest.mark.parametrize(
    "entry, why",
    [
        ("{}", "no sweep column"),
        ("[1, 2]", "not a row (a JSON list)"),
        ('"str"', "not a row (a JSON str)"),
        ("7", "not a row (a JSON int)"),
        ("null", "not a row (a JSON NoneType)"),
        ('{"sweep": "tiny", "point": "x", "replicate": "a"}', "replicate is not a whole number ('a')"),
        ('{"sweep": "tiny", "point": "x", "replicate": 0, "config_sha": 5}', "config_sha is not text"),
        ("[" * 100_000, "nested too deeply"),
        ('{"a": 1' + "9" * 5000 + "}", "not valid JSON"),
    ],
)
def test_a_journal_entry_that_is_no_row_blocks_nothing(tiny, tmp_path, capsys, entry, why):
    _sweep, tasks, full = tiny
    store = tmp_path / "j.csv"
    store.write_bytes(full.read_bytes())
    journal_dir(store).mkdir()
    (journal_dir(store) / "a.json").write_text(entry)
    refused(capsys, ["analyze", "efficiency", str(store)], "journal entry a.json", why)
    outcome = execute(tasks, store, jobs=1, progress=False, fn=fake_row)
    assert outcome.computed == 0 and "dropped: journal entry a.json" in capsys.readouterr().err
    assert not journal_dir(store).exists() and rows_of(store) == rows_of(full)


def test_a_damaged_journal_entry_of_a_stored_run_is_recomputed(tiny, tmp_path, capsys):
    _sweep, tasks, full = tiny
    store = tmp_path / "j.csv"
    store.write_bytes(full.read_bytes())
    journal_dir(store).mkdir()
    row = fake_row(tasks[2])
    row["config"] = row["config"][:100]
    row["cdf"] = "{"
    (journal_dir(store) / "b.json").write_text(json.dumps(row))
    ran = []
    execute(tasks, store, jobs=1, progress=False, fn=lambda t: ran.append(t.index) or fake_row(t))
    assert ran == [2] and "config column is cut off" in capsys.readouterr().err
    assert rows_of(store) == rows_of(full)


def test_rows_of_wrong_kinds_in_other_columns_are_damage(tiny, tmp_path):
    _sweep, tasks, full = tiny
    store = tmp_path / "j.csv"
    store.write_bytes(full.read_bytes())
    journal_dir(store).mkdir()
    for i, (key, value) in enumerate(
        [("iops", [1, 2]), ("cdf", "[1]"), ("replicate", True), ("point", ""), ("config", "{}")]
    ):
        row = fake_row(tasks[i])
        row[key] = value
        (journal_dir(store) / f"{i}.json").write_text(json.dumps(row))
    rows, damage = load_store(store)
    assert len(rows) == 5 and len(damage) == 5, damage  # (two name no run: their stored rows stay)
    whys = " | ".join(d.why for d in damage)
    for needle in ("holds a list", "cdf column is not a JSON object", "replicate", "no point", "config_sha"):
        assert needle in whys


# -- bomb traces (items 3, 7) ----------------------------------------------------------------------
def test_a_sparse_file_of_nul_bytes_is_refused_at_once(tmp_path, capsys):
    sparse = tmp_path / "sparse.csv"
    with open(sparse, "wb") as fh:
        fh.truncate(256 << 20)  # no block on disk
    t0 = time.perf_counter()
    refused(capsys, ["replay", str(sparse), "--quiet"], "sparse.csv line 1", "NUL byte", "not a text trace")
    refused(capsys, ["replay", str(sparse), "--format", "msr", "--quiet"], "NUL byte")
    assert time.perf_counter() - t0 < 5


def test_a_gzip_of_nul_bytes_is_refused_at_once(tmp_path, capsys):
    bomb = tmp_path / "bomb.csv.gz"
    with gzip.open(bomb, "wb", compresslevel=9) as fh:
        fh.write(SAMPLE.read_bytes()[:500] + b"\0" * (8 << 20))
    refused(capsys, ["replay", str(bomb), "--format", "msr", "--quiet"], "bomb.csv.gz line ", "NUL byte")


def _text_bomb(path: Path, opener, megabytes: int = 4) -> None:
    line = SAMPLE.read_text().splitlines()[0].encode() + b"\n"
    with opener(path, "wb") as fh:
        for _ in range(megabytes):
            fh.write(line * ((1 << 20) // len(line)))


@pytest.mark.parametrize("opener, name", [(gzip.open, "b.gz"), (bz2.open, "b.bz2"), (lzma.open, "b.xz")])
def test_a_decompression_bomb_is_stopped_by_its_ratio(tmp_path, capsys, monkeypatch, opener, name):
    bomb = tmp_path / name
    _text_bomb(bomb, opener)
    monkeypatch.setattr(bounded, "RATIO_FLOOR_BYTES", 1 << 20)
    err = refused(capsys, ["replay", str(bomb), "--format", "msr", "--quiet"], "decompression bomb")
    assert "STACKSIM_MAX_INFLATE_RATIO" in err
    monkeypatch.setenv("STACKSIM_MAX_INFLATE_RATIO", "100000")
    monkeypatch.setenv("STACKSIM_MAX_INFLATED_BYTES", "2M")
    refused(
        capsys,
        ["replay", str(bomb), "--format", "msr", "--quiet"],
        "inflates to more than 2 MiB",
        "STACKSIM_MAX_INFLATED_BYTES",
    )


@pytest.mark.parametrize("opener", [gzip.open, bz2.open, lzma.open])
def test_compressed_traces_read_as_the_plain_one(tmp_path, opener):
    packed = tmp_path / "t.csv.z"
    with opener(packed, "wb") as fh:
        fh.write(SAMPLE.read_bytes())
    assert sniff_format(packed) == "msr"
    assert list(open_trace(packed)) == list(open_trace(SAMPLE))


def test_zstd_and_bad_limits_are_said(tmp_path, capsys, monkeypatch):
    z = tmp_path / "t.zst"
    z.write_bytes(b"\x28\xb5\x2f\xfd" + b"x" * 64)
    refused(capsys, ["replay", str(z), "--quiet"], "zstd-compressed trace: not supported")
    monkeypatch.setenv("STACKSIM_MAX_LINE_BYTES", "lots")
    refused(capsys, ["replay", str(SAMPLE), "--quiet"], "STACKSIM_MAX_LINE_BYTES='lots'")


def test_one_huge_trace_line_costs_a_buffer_not_its_size(tmp_path, capsys, monkeypatch):
    long = tmp_path / "long.csv"
    long.write_bytes(b"1" * (24 << 20) + b"\n")
    tracemalloc.start()
    with pytest.raises(ConfigError, match=r"line 1: a line longer than 1 MiB.*STACKSIM_MAX_LINE_BYTES"):
        sniff_format(long)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 12 << 20, peak  # was ~6x the line
    monkeypatch.setenv("STACKSIM_MAX_LINE_BYTES", "64k")
    good = tmp_path / "good.csv"
    good.write_bytes(SAMPLE.read_bytes() + b"0," * 40_000 + b"\n")
    refused(
        capsys,
        ["replay", str(good), "--format", "msr", "--quiet"],
        f"good.csv line {len(SAMPLE.read_text().splitlines()) + 1}",
        "64 KiB",
    )


# -- YAML (items 4, 8) -----------------------------------------------------------------------------
def lol(levels: int) -> str:
    text = 'a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n'
    for i in range(1, levels):
        text += f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n"
    return text


def test_an_alias_bomb_is_refused_before_it_is_walked(tmp_path, capsys):
    bomb = tmp_path / "lol.yaml"
    bomb.write_text(lol(9))
    t0 = time.perf_counter()
    refused(capsys, ["run", str(bomb), *QUICK], "lol.yaml", "more than 200,000 nodes", "STACKSIM_MAX_YAML_NODES")
    bomb.write_text(lol(6))  # 531,441 nodes: took 3.8 s and 140 MB
    refused(capsys, ["run", str(bomb), *QUICK], "alias bomb")
    assert time.perf_counter() - t0 < 3
    bomb.write_text("a: &a [1, *a]\n")
    refused(capsys, ["run", str(bomb), *QUICK], "recursive")
    flow = (
        "[&a0 [1, 1, 1, 1, 1, 1, 1, 1, 1], "
        + ", ".join(f"&a{i} [{', '.join([f'*a{i - 1}'] * 9)}]" for i in range(1, 9))
        + "]"
    )
    with pytest.raises(ConfigError, match="--set value .*alias bomb"):
        parse_scalar(flow)  # a --set value is YAML too


def test_the_node_budget_is_configurable(tmp_path, monkeypatch):
    p = tmp_path / "s.yaml"
    p.write_text(lol(3))
    assert len(load_data_file(p)["a2"]) == 9
    monkeypatch.setenv("STACKSIM_MAX_YAML_NODES", "50")
    with pytest.raises(ConfigError, match="more than 50 nodes"):
        load_data_file(p)


def test_duplicate_keys_are_refused_naming_the_key_and_both_lines(tmp_path, capsys):
    scen = tmp_path / "dup.yaml"
    base = (ROOT / "scenarios/data/builtin/default.yaml").read_text()
    scen.write_text(base + "jobs:\n  - {name: b, rw: randwrite}\n")
    first = next(i for i, ln in enumerate(base.splitlines(), 1) if ln.startswith("jobs:"))
    last = len(base.splitlines()) + 1
    refused(capsys, ["run", str(scen), *QUICK], "key 'jobs' is given twice", f"lines {first} and {last}")
    sweep = tmp_path / "sw.yaml"
    sweep.write_text(TINY + "replicates: 3\n")
    refused(capsys, ["sweep", str(sweep), "-o", str(tmp_path / "r.csv")], "key 'replicates' is given twice")
    assert not (tmp_path / "r.csv").exists()
    for text, key in (("a: 1\n1.0: 2\n1: 3\n", "1"), ("x: {b: 1, b: 2}\n", "'b'"), ("? [1]\n: 1\n", None)):
        (tmp_path / "k.yaml").write_text(text)
        if key is None:
            with pytest.raises(ConfigError, match="not valid YAML"):  # an unhashable key: the loader's own error
                load_data_file(tmp_path / "k.yaml")
            continue
        with pytest.raises(ConfigError, match=f"key {key} is given twice"):
            load_data_file(tmp_path / "k.yaml")
    (tmp_path / "m.yaml").write_text("base: &b {x: 1, y: 2}\nc:\n  <<: *b\n  x: 3\n")
    assert load_data_file(tmp_path / "m.yaml")["c"] == {"x": 3, "y": 2}  # a merged key may be overridden
    (tmp_path / "p.json").write_text('{"name": "a", "name": "b"}')
    with pytest.raises(ConfigError, match="key 'name' is given twice"):
        load_data_file(tmp_path / "p.json")
    refused(capsys, ["run", "--set", "cpu.cstates={a: 1, a: 2}", *QUICK], "--set value", "key 'a' is given twice")


# -- plug-ins named by a result file (item 5) ------------------------------------------------------
MARKER_PLUGIN = "from pathlib import Path\nPath({marker!r}).write_text('ran')\n"


def test_a_result_file_runs_no_plugin_unless_the_command_line_says_so(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    marker = tmp_path / "ran.txt"
    Path("marker_plugin.py").write_text(MARKER_PLUGIN.format(marker=str(marker)))

    def fresh():
        marker.unlink(missing_ok=True)
        for mod in [m for m in sys.modules if "marker_plugin" in m]:
            del sys.modules[mod]

    assert main(["run", "--plugin", "marker_plugin.py", *QUICK, "--json", "a.json"]) == 0 and marker.exists()
    fresh()
    refused(
        capsys,
        ["run", "--rerun", "a.json", "--quiet"],
        "plug-in marker_plugin.py",
        "--plugin marker_plugin.py",
        "--trust-plugins",
    )
    assert not marker.exists()
    refused(capsys, ["run", "--rerun", "a.json", "--quiet", "--plugin", "other.py"], "not a plug-in of the run")
    assert main(["run", "--rerun", "a.json", "--quiet", "--plugin", "marker_plugin.py"]) == 0 and marker.exists()
    assert "running plug-in marker_plugin.py (named by --plugin)" in capsys.readouterr().err
    fresh()
    assert main(["run", "--rerun", "a.json", "--quiet", "--trust-plugins"]) == 0 and marker.exists()
    assert "running plug-in marker_plugin.py (named by the results file, --trust-plugins)" in capsys.readouterr().err
    # a plug-in slipped into the recorded configuration, with no --plugin at all
    fresh()
    assert main(["run", *QUICK, "--json", "b.json"]) == 0
    doc = json.loads(Path("b.json").read_text())
    doc["provenance"]["config"]["plugins"] = [str(tmp_path / "marker_plugin.py")]
    Path("c.json").write_text(json.dumps(doc))
    refused(capsys, ["run", "--rerun", "c.json", "--quiet"], "marker_plugin.py", "--trust-plugins")
    assert not marker.exists()
    for field, value in (("plugins", "x"), ("cli_plugins", [1]), ("inputs", [])):
        bad = json.loads(Path("b.json").read_text())
        bad["provenance"][field] = value
        Path("d.json").write_text(json.dumps(bad))
        refused(capsys, ["run", "--rerun", "d.json", "--quiet"], f"provenance.{field}")
    Path("e.json").write_text("[" * 100_000)
    refused(capsys, ["run", "--rerun", "e.json", "--quiet"], "nested too deeply")
    refused(capsys, ["run", "--trust-plugins", *QUICK], "--trust-plugins goes with --rerun")


# -- numbers that would exhaust memory (item 6) ----------------------------------------------------
@pytest.mark.parametrize(
    "args, needles",
    [
        (["--set", "nrfiles=100000000", "--set", "directory=/tmp", "--set", "size=1g"], ["nrfiles", "65.2 GiB"]),
        (
            [
                "--platform",
                "zn540-e5-2660v4",
                "--set",
                "ssd.zoned.zone_size_bytes=4096",
                "--set",
                "ssd.zoned.zone_capacity_bytes=4096",
            ],
            ["ssd.zoned.zone_size_bytes", "zones of 4 KiB"],
        ),
        (
            [
                "--set",
                "ssd.ftl.enabled=true",
                "--set",
                "ssd.ftl.span_bytes=68719476736",
                "--set",
                "ssd.ftl.page_bytes=512",
            ],
            ["ssd.ftl.span_bytes"],
        ),
    ],
)
def test_one_number_cannot_exhaust_memory(capsys, args, needles):
    t0 = time.perf_counter()
    refused(capsys, ["run", *args, *QUICK], "of memory, more than 4 GiB", "STACKSIM_MAX_MEMORY_BYTES", *needles)
    assert time.perf_counter() - t0 < 5


def test_the_memory_limit_is_configurable(capsys, monkeypatch, tmp_path):
    args = ["run", "--set", "nrfiles=2000", "--set", f"directory={tmp_path}", "--set", "size=64m", *QUICK]
    monkeypatch.setenv("STACKSIM_MAX_MEMORY_BYTES", "1M")
    refused(capsys, args, "about 1.34 MiB", "more than 1 MiB", "nrfiles (job")
    monkeypatch.setenv("STACKSIM_MAX_MEMORY_BYTES", "2M")
    assert main(args) == 0


# -- temporaries of a killed writer (item 9) -------------------------------------------------------
WRITER = """
import sys, time
from simcore.outfile import Outputs
with Outputs() as out:
    def slow(fh):
        fh.write("partial")
        print("staged", flush=True)
        time.sleep(60)
    out.write(sys.argv[1], slow)
"""


def test_a_killed_writers_temporary_is_removed_by_the_next_write_a_live_ones_is_not(tmp_path, monkeypatch, capsys):
    target = tmp_path / "r.json"
    child = subprocess.Popen([sys.executable, "-c", WRITER, str(target)], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    try:
        assert child.stdout.readline().strip() == "staged"
        monkeypatch.setattr(outfile, "STALE_AFTER_S", 0.0)
        (tmp_stage,) = outfile.stale_temporaries(target)
        assert outfile.remove_stale_temporaries(target) == 0 and tmp_stage.exists()  # its writer lives
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    assert tmp_stage.exists() and not target.exists()  # what a kill leaves
    assert main(["run", *QUICK, "--json", str(target)]) == 0
    assert "removed 1 temporary file" in capsys.readouterr().err
    assert outfile.stale_temporaries(target) == [] and json.loads(target.read_text())["summary"]


# -- non-finite metrics (item 10) ------------------------------------------------------------------
@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "abc", "1" * 5000])
def test_analyze_leaves_out_non_finite_metrics_and_refuses_when_none_is_left(tiny, tmp_path, capsys, value):
    _sweep, _tasks, full = tiny
    rows = rows_of(full)
    for some in (True, False):
        for i, r in enumerate(rows):
            if not some or i % 4 == 0:
                r["bytes_per_joule"] = value
        path = tmp_path / f"m{some}.csv"
        with open(path, "w", newline="") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
        args = ["analyze", "efficiency", str(path), "--x", "bs", "--y", "hipri", "--json", str(tmp_path / "t.json")]
        if some:
            assert main(args) == 0
            err = capsys.readouterr().err
            assert "2 runs have a bytes_per_joule that is not a finite number" in err and "Warning" not in err
            assert all(t["best_mean"] == t["best_mean"] for t in json.loads((tmp_path / "t.json").read_text()))
        else:
            refused(capsys, args, "metric 'bytes_per_joule': no run has a finite value")


# -- the further battery: the same kinds of input in other places ------------------------------------
def test_a_tar_bomb_given_as_a_saved_machine_tree_is_refused_before_it_inflates(tmp_path, capsys):
    import io
    import tarfile

    bomb = tmp_path / "tree.tar.gz"
    with tarfile.open(bomb, "w:gz") as tar:
        info = tarfile.TarInfo("proc/cpuinfo")
        info.size = 64 << 20
        tar.addfile(info, io.BytesIO(bytes(info.size)))
    t0 = time.perf_counter()
    refused(capsys, ["probe", "--root", str(bomb)], "more than a saved tree holds", "decompression bomb")
    assert time.perf_counter() - t0 < 3


def test_thousands_of_threads_that_exit_at_once_run(capsys):
    """4,096 fio jobs of one IO each: their exits nest (each runs the next task of its CPU); this
    ended in a RecursionError."""
    assert main(["run", "--set", "numjobs=4096", "--set", "size=4k", "--set", "time_based=0", *QUICK]) == 0
    assert "Traceback" not in capsys.readouterr().err
    for key in ("threads", "lookahead"):
        refused(capsys, ["replay", str(SAMPLE), "--set", f"replay.{key}=100000000", "--quiet"], key, "4096")


def test_a_results_file_with_a_column_twice_or_a_cdf_of_text_is_refused(tiny, tmp_path, capsys):
    _sweep, tasks, full = tiny
    text = full.read_text()
    twice = tmp_path / "twice.csv"
    twice.write_text(text.replace("sweep,point,", "sweep,point,point,", 1))
    refused(capsys, ["analyze", "efficiency", str(twice)], "column 'point' is named twice")
    store = tmp_path / "cdf.csv"
    store.write_bytes(full.read_bytes())
    journal_dir(store).mkdir()
    row = fake_row(tasks[0])
    row["cdf"] = json.dumps({"pct": ["a"], "read_us": [1.0]})
    (journal_dir(store) / "c.json").write_text(json.dumps(row))
    refused(
        capsys, ["report", str(store), "-o", str(tmp_path / "r.html")], "cdf column's 'pct' is not a list of numbers"
    )


@pytest.mark.parametrize(
    "text, needle",
    [
        ('{"fio version": "fio-3.33", "jobs": [{"ctx": ' + "9" * 5000 + "}]}", "invalid fio JSON"),
        ('{"fio version": "fio-3.33", "jobs": ' + "[" * 100_000, "invalid fio JSON"),
    ],
)
def test_fio_json_measurements_with_a_huge_integer_or_deep_nesting(tmp_path, capsys, text, needle):
    path = tmp_path / "m.json"
    path.write_text(text)
    refused(capsys, ["validate", "--platform", "optane900p-e3-1230v5", "--measured", str(path)], needle)


def test_deeply_nested_configuration_files_of_either_kind(tmp_path, capsys):
    deep = tmp_path / "p.json"
    deep.write_text("[" * 200_000 + "]" * 200_000)
    refused(capsys, ["run", "--platform", str(deep), *QUICK], "p.json: not valid JSON: nested too deeply")
    block = tmp_path / "s.yaml"
    block.write_text("\n".join(" " * i + f"k{i}:" for i in range(3000)) + " 1\n")
    refused(capsys, ["run", str(block), *QUICK], "s.yaml: not valid YAML: nested too deeply")
