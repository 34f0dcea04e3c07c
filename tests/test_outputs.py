"""Output files: unwritable outputs fail before the run with one message (exit 2), files are written
all-or-nothing and respect the umask, ``--json -`` is clean JSON on stdout, and a sweep killed
with SIGKILL leaves no worker, lock or temporary file behind and resumes to identical rows."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import scenarios.run.outputs
import simcore.outfile as outfile
from scenarios.studies.sweeps.rows import TIMING_COLUMNS
from scenarios.studies.sweeps.store import ResultStore, journal_dir, lock_path, read_results
from simcore.errors import ConfigError
from simcore.outfile import OutputError, Outputs, check_output, write_file, write_text
from stacksim.cli import main

REPO = Path(__file__).resolve().parents[1]
FAST = ["--set", "runtime=2ms", "--set", "ramp_time=1ms"]
PLAT = "optane900p-e3-1230v5"
MSR = REPO / "scenarios" / "data" / "traces" / "msr_sample.csv"
JOB = REPO / "examples" / "randread-4k-hipri.fio"
LINUX = sys.platform.startswith("linux")


def cli(argv, capsys):
    rc = main([str(a) for a in argv])
    out = capsys.readouterr()
    return rc, out.out, out.err


# every command that writes a file: (argv with OUT for the output path, suffix the name needs)
WRITERS = {
    "run --json": (["run", *FAST, "--quiet", "--json", "OUT"], ".json"),
    "run --records": (["run", *FAST, "--quiet", "--records", "OUT"], ".csv"),
    "run --trace": (["run", *FAST, "--quiet", "--trace", "OUT"], ".json"),
    "server run --json": (
        ["run", "--scenario", "server-stable", "--set", "workload.duration_s=0.002", "--quiet", "--json", "OUT"],
        ".json",
    ),
    "replay --json": (["replay", MSR, "--platform", PLAT, "--quiet", "--json", "OUT"], ".json"),
    "validate --json": (["validate", "--platform", PLAT, "--measured", "m.csv", "--json", "OUT"], ".json"),
    "explain -o": (["explain", JOB, "--platform", PLAT, "-o", "OUT"], ".html"),
    "calibrate -o": (
        ["calibrate", "--platform", PLAT, "--measured", "m.csv", "--fit", "ssd.read.base_ns=4000:9000", "-o", "OUT"],
        ".yaml",
    ),
    "calibrate --study -o": (["calibrate", "--study", "poll-energy", "-o", "OUT"], ".json"),
    "report -o": (["report", "results.csv", "-o", "OUT"], ".html"),
    "sweep -o": (["sweep", "poll_energy_small", "-o", "OUT"], ".csv"),
    "analyze --json": (["analyze", "efficiency", "results.csv", "--json", "OUT"], ".json"),
}


def _bad_paths(tmp_path: Path, suffix: str) -> dict[str, tuple[Path, str]]:
    """Unwritable output paths -> (path, the reason the message must give)."""
    (tmp_path / f"adir{suffix}").mkdir()
    (tmp_path / "afile").write_text("x")
    return {
        "missing directory": (tmp_path / "nope" / f"out{suffix}", f"directory {tmp_path / 'nope'} does not exist"),
        "directory in place of the file": (tmp_path / f"adir{suffix}", "it is a directory"),
        "a file in place of the directory": (tmp_path / "afile" / f"out{suffix}", "is not a directory"),
        "/proc": (Path(f"/proc/out{suffix}"), "/proc is a kernel file system"),
        "/sys": (Path(f"/sys/out{suffix}"), "/sys is a kernel file system"),
    }


@pytest.mark.parametrize(
    "kind", ["missing directory", "directory in place of the file", "a file in place of the directory", "/proc", "/sys"]
)
@pytest.mark.parametrize("writer", list(WRITERS))
def test_unwritable_output_fails_before_running(writer, kind, tmp_path, capsys, monkeypatch):
    """One message naming the path and the reason, exit 2, nothing simulated, nothing written."""
    if kind in ("/proc", "/sys") and not LINUX:
        pytest.skip("Linux kernel file systems")
    argv, suffix = WRITERS[writer]
    path, reason = _bad_paths(tmp_path, suffix)[kind]
    before = sorted(tmp_path.rglob("*"))
    monkeypatch.chdir(tmp_path)
    import scenarios.run.simulate
    import scenarios.studies.sweeps.runner

    def no_simulation(*a, **k):
        raise AssertionError("simulated although the output cannot be written")

    monkeypatch.setattr(scenarios.run.simulate, "simulate", no_simulation)
    monkeypatch.setattr(scenarios.studies.sweeps.runner, "simulate", no_simulation)
    rc, out, err = cli([str(path) if a == "OUT" else a for a in argv], capsys)
    assert rc == 2, err
    assert err.startswith("stacksim: error: cannot write") and err.count("\n") == 1, err
    assert str(path) in err and reason in err
    assert "Traceback" not in err and out == ""
    assert sorted(tmp_path.rglob("*")) == before


def test_proc_file_and_dev_full(tmp_path, capsys):
    """An existing kernel file is refused before the run; a device that fails at write time
    (/dev/full: ENOSPC) gives the same kind of message, and the other outputs are not written."""
    if not LINUX:
        pytest.skip("Linux special files")
    rc, out, err = cli(["run", *FAST, "--json", "/proc/version"], capsys)
    assert rc == 2 and out == "" and "cannot write --json /proc/version: /proc is a kernel file system" in err
    good = tmp_path / "r.json"
    rc, out, err = cli(["run", *FAST, "--quiet", "--json", good, "--trace", "/dev/full"], capsys)
    assert rc == 2, err
    assert err == "stacksim: error: cannot write --trace /dev/full: No space left on device\n"
    assert list(tmp_path.iterdir()) == []  # all or nothing: --json was not written either


def test_write_time_errors_are_reported_too(tmp_path, capsys, monkeypatch):
    """Without the check before the run (the directory vanished meanwhile), the write itself
    still fails with one message and no temporary file."""
    monkeypatch.setattr(outfile, "check_output", lambda *a, **k: None)
    monkeypatch.setattr(scenarios.run.outputs, "check_output", lambda *a, **k: None)
    gone = tmp_path / "gone"
    rc, out, err = cli(["run", *FAST, "--quiet", "--json", gone / "r.json"], capsys)
    assert (
        rc == 2 and err == f"stacksim: error: cannot write --json {gone / 'r.json'}: directory {gone} does not exist\n"
    )
    (tmp_path / "d.json").mkdir()
    rc, out, err = cli(
        ["run", *FAST, "--quiet", "--records", tmp_path / "r.csv", "--json", tmp_path / "d.json"], capsys
    )
    assert rc == 2 and "cannot write --json" in err and "it is a directory" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.json"]  # no records, no temporary file


# -- all or nothing -------------------------------------------------------------------------------
def test_failed_or_interrupted_writes_leave_the_old_files_and_no_temporaries(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.csv"
    a.write_text("old a")

    def interrupted(fh):
        fh.write("partial")
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        with Outputs() as out:
            out.text(a, "new a")
            out.write(b, interrupted)
    assert a.read_text() == "old a" and not b.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json"]
    with pytest.raises(OutputError, match="No space left on device"):
        with Outputs() as out:
            out.text(a, "new a")
            out.text("/dev/full", "x" * 100_000)
    assert a.read_text() == "old a" and sorted(p.name for p in tmp_path.iterdir()) == ["a.json"]
    with Outputs() as out:
        out.text(a, "new a")
        out.text(b, "new b")
    assert (a.read_text(), b.read_text()) == ("new a", "new b")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.csv"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(
            st.text(st.characters(blacklist_categories=("Cs",)), max_size=200),
            st.sampled_from(["ok", "OSError", "Ctrl-C"]),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_outputs_are_all_new_or_all_old(tmp_path_factory, outputs):
    """Whatever fails while writing several outputs, either every target has its new content or
    every target keeps its old one, and no temporary file remains."""
    d = tmp_path_factory.mktemp("all_or_nothing")
    paths = [d / f"out{i}.txt" for i in range(len(outputs))]
    for i, p in enumerate(paths[::2]):
        p.write_text(f"old {i}")
    before = {p: p.read_bytes().decode() if p.exists() else None for p in paths}

    def writer(text, fate):
        def write(fh):
            fh.write(text[: len(text) // 2])
            if fate == "OSError":
                raise OSError(28, "No space left on device")
            if fate == "Ctrl-C":
                raise KeyboardInterrupt
            fh.write(text[len(text) // 2 :])

        return write

    failed = any(fate != "ok" for _, fate in outputs)
    try:
        with Outputs() as out:
            for p, (text, fate) in zip(paths, outputs):
                out.write(p, writer(text, fate))
    except (OutputError, KeyboardInterrupt):
        assert failed
    after = {p: p.read_bytes().decode() if p.exists() else None for p in paths}
    assert after == (before if failed else {p: text for p, (text, _) in zip(paths, outputs)})
    assert sorted(x.name for x in d.iterdir()) == sorted(p.name for p in paths if after[p] is not None)


def test_symlink_is_kept_and_its_target_replaced(tmp_path):
    target = tmp_path / "real.json"
    target.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    write_text(link, "new")
    assert link.is_symlink() and target.read_text() == "new"


def test_check_output_on_a_fifo_does_not_block(tmp_path):
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    check_output(fifo, "--json")  # would block if it opened the FIFO
    with pytest.raises(OutputError, match="not a regular file"):
        check_output(fifo, "results file", stream_ok=False)


# -- modes and standard output --------------------------------------------------------------------
@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600), (0o002, 0o664)])
def test_new_files_respect_the_umask(umask, mode, tmp_path, capsys):
    old = os.umask(umask)
    try:
        rc, _, err = cli(
            [
                "run",
                *FAST,
                "--quiet",
                "--json",
                tmp_path / "r.json",
                "--records",
                tmp_path / "r.csv",
                "--trace",
                tmp_path / "t.json",
            ],
            capsys,
        )
        write_file(tmp_path / "r.parquet", lambda fh: fh.write(b"PAR1"), binary=True)
    finally:
        os.umask(old)
    assert rc == 0, err
    for name in ("r.json", "r.csv", "t.json", "r.parquet"):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == mode, name


def test_replaced_file_keeps_its_mode_and_owner(tmp_path):
    p = tmp_path / "keep.json"
    p.write_text("old")
    p.chmod(0o600)
    if os.geteuid() == 0:
        os.chown(p, 4321, 4322)
    write_text(p, "new")
    assert stat.S_IMODE(p.stat().st_mode) == 0o600 and p.read_text() == "new"
    if os.geteuid() == 0:
        assert (p.stat().st_uid, p.stat().st_gid) == (4321, 4322)


def test_json_to_stdout_is_parseable_and_the_summary_goes_to_stderr(capsys):
    rc, out, err = cli(["run", *FAST, "--json", "-"], capsys)
    assert rc == 0, err
    result = json.loads(out)
    assert result["summary"]["ios"] > 0
    assert "IOPS" in err and "latency us" in err  # the terminal summary, on stderr
    rc, out, err = cli(["run", *FAST, "--quiet", "--records", "-"], capsys)
    assert rc == 0 and out.startswith("io,job,") and len(out.splitlines()) > 10 and err == ""


def test_replay_json_to_stdout(capsys):
    rc, out, err = cli(["replay", MSR, "--platform", PLAT, "--window", ":0.02", "--json", "-"], capsys)
    assert rc == 0, err
    assert json.loads(out)["summary"]["trace_ios"] > 0 and err


def test_two_outputs_on_stdout_are_refused(capsys):
    rc, out, err = cli(["run", *FAST, "--json", "-", "--trace", "-"], capsys)
    assert rc == 2 and out == "" and "only one output can go to standard output" in err


# -- outputs never clobber inputs ------------------------------------------------------------------
def _same_file_cases(tmp_path):
    """(argv, file that must survive) for each command that reads a file and writes one."""
    job = tmp_path / "job.fio"
    job.write_text(JOB.read_text())
    trace = tmp_path / "t.csv"
    trace.write_text(MSR.read_text())
    (tmp_path / "link.json").symlink_to(job)
    os.link(job, tmp_path / "hard.json")
    return [
        (["run", job, "--json", job], job),
        (["run", job, "--json", tmp_path / "link.json"], job),  # a symbolic link to the input
        (["run", job, "--json", tmp_path / "hard.json"], job),  # a hard link to the input
        (["run", job, "--records", tmp_path / "sub" / ".." / "job.fio"], job),  # the same path, spelt otherwise
        (["replay", trace, "--json", trace], trace),
        (["analyze", "efficiency", trace, "--json", trace], trace),
        (["report", trace, "-o", trace], trace),
        (["validate", "--trace", trace, "--html", trace], trace),
        (["calibrate", "--measured", trace, "--platform", PLAT, "-o", trace], trace),
        (["explain", job, "-o", job], job),
        (["sweep", job, "-o", job], job),
    ]


def test_an_output_that_is_an_input_is_refused_and_the_input_survives(tmp_path, capsys):
    (tmp_path / "sub").mkdir()
    for argv, survivor in _same_file_cases(tmp_path):
        before = survivor.read_bytes()
        rc, out, err = cli(argv, capsys)
        assert rc == 2 and "it is the same file as the input" in err and err.count("\n") == 1, (argv, err)
        assert survivor.read_bytes() == before, argv


def test_two_outputs_that_are_one_file_are_refused(tmp_path, capsys):
    a = tmp_path / "x.csv"
    rc, _out, err = cli(["run", *FAST, "--json", a, "--records", a], capsys)
    assert rc == 2 and "same file as the output" in err and not a.exists()
    a.write_text("keep")
    (tmp_path / "y.csv").symlink_to(a)
    rc, _out, err = cli(["run", *FAST, "--json", a, "--records", tmp_path / "y.csv"], capsys)
    assert rc == 2 and "same file as the output" in err and a.read_text() == "keep"


def test_distinct_files_and_builtin_names_pass_the_check(tmp_path):
    job = tmp_path / "job.fio"
    job.write_text("x")
    outfile.check_distinct(
        [(str(job), "job"), ("default", "--scenario"), ("-", "trace")],
        [(str(tmp_path / "a.json"), "--json"), ("-", "--records"), ("/dev/null", "--trace")],
    )
    with pytest.raises(OutputError, match="same file as the input"):
        outfile.check_distinct([(str(job), "job")], [(str(tmp_path / "." / "job.fio"), "--json")])


def test_os_errors_on_an_output_path_are_one_message(tmp_path, capsys):
    long_name = tmp_path / ("a" * 300 + ".json")
    for argv in (
        ["run", *FAST, "--json", long_name],
        ["report", MSR, "-o", long_name.with_suffix(".html")],
        ["run", *FAST, "--json", long_name / "x.json"],
    ):
        rc, out, err = cli(argv, capsys)
        assert rc == 2 and err.startswith("stacksim: error: cannot write") and "too long" in err, err
        assert "Traceback" not in err and err.count("\n") == 1
    assert list(tmp_path.iterdir()) == []


# -- killed sweeps ----------------------------------------------------------------------------------
SWEEP = """
name: killme
base: {scenario: default}
set: {runtime: 60ms, ramp_time: 1ms, queue.io_poll: 1}
axes:
  bs: [4k, 8k, 16k, 32k]
  hipri: [0, 1]
replicates: 1
seed: 5
"""


def _group(pgid: int) -> list[int]:
    """Live (non-zombie) processes of process group ``pgid``."""
    pids = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            fields = (d / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] not in ("Z", "X"):
            pids.append(int(d.name))
    return pids


def _rows(path: Path) -> dict:
    return {
        (r["point"], r["replicate"]): {k: v for k, v in r.items() if k not in TIMING_COLUMNS}
        for r in read_results(path)
    }


@pytest.mark.skipif(not LINUX, reason="scans /proc for the sweep's processes")
def test_sigkilled_sweep_leaves_no_process_lock_or_temporary_and_resumes_identically(tmp_path, capsys):
    sweep = tmp_path / "killme.yaml"
    sweep.write_text(SWEEP)
    killed = tmp_path / "killed" / "r.csv"
    killed.parent.mkdir()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "stacksim.cli_sweep",
            "sweep",
            str(sweep),
            "-o",
            str(killed),
            "-j",
            "2",
            "--no-progress",
        ],
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and proc.poll() is None:
            if journal_dir(killed).is_dir() and any(journal_dir(killed).glob("*.json")) and len(_group(proc.pid)) >= 3:
                break
            time.sleep(0.01)
        assert proc.poll() is None, "the sweep finished before it could be killed"
        assert len(_group(proc.pid)) >= 3  # the sweep and its two workers
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        deadline = time.monotonic() + 5
        while _group(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _group(proc.pid) == [], "worker processes outlived the killed sweep"
    finally:
        for pid in _group(proc.pid):
            os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    stored = len(read_results(killed))
    assert 1 <= stored < 8
    assert lock_path(killed).exists()  # left by the killed sweep: taken over below
    rc, out, err = cli(["sweep", sweep, "-o", killed, "-j", "2", "--no-progress"], capsys)
    assert rc == 0, err
    assert f"{8 - stored} computed" in out and f"{stored} already stored" in out
    clean = tmp_path / "clean" / "r.csv"
    clean.parent.mkdir()
    rc, out, err = cli(["sweep", sweep, "-o", clean, "-j", "1", "--no-progress"], capsys)
    assert rc == 0, err
    assert _rows(killed) == _rows(clean) and len(_rows(clean)) == 8
    assert [r["point"] for r in read_results(killed)] == [r["point"] for r in read_results(clean)]  # plan order
    assert sorted(p.name for p in killed.parent.iterdir()) == ["r.csv"]  # no journal, lock or temporary file


def test_live_lock_is_refused_naming_its_holder_and_a_dead_one_taken_over(tmp_path):
    out = tmp_path / "r.csv"
    holder = ResultStore(out)
    try:
        with pytest.raises(ConfigError, match=rf"another sweep \(pid {os.getpid()}\) is writing"):
            ResultStore(out)
    finally:
        holder.close()
    # a lock file and temporary files left by a process that died (no flock held any more)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    lock_path(out).write_text(dead.stdout)
    (tmp_path / f".{out.name}.tmp-deadbeef").write_text("half a table")
    journal_dir(out).mkdir()
    (journal_dir(out) / ".0123.json.tmp-cafebabe").write_text("{")
    store = ResultStore(out)
    try:
        assert lock_path(out).read_text().strip() == str(os.getpid())
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted([".r.csv.lock", "r.csv.journal"])
        assert list(journal_dir(out).iterdir()) == []
    finally:
        store.close()


def test_sweep_results_must_be_a_regular_file(tmp_path, capsys):
    """Sweep results are read back to resume: a FIFO or a file in place of the journal is refused."""
    fifo = tmp_path / "r.csv"
    os.mkfifo(fifo)
    rc, _, err = cli(["sweep", "poll_energy_small", "-o", fifo], capsys)
    assert rc == 2 and f"cannot write results file {fifo}: not a regular file" in err
    (tmp_path / "s.csv.journal").write_text("x")
    rc, _, err = cli(["sweep", "poll_energy_small", "-o", tmp_path / "s.csv"], capsys)
    assert rc == 2 and "(its journal) is not a directory" in err
