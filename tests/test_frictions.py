"""Frictions a new user met (#31, class 8): every sub-command's --help says what it does; a name that
is both a built-in and a local file is refused rather than guessed; files saved with a UTF-8
byte-order mark read as without."""

from __future__ import annotations

from pathlib import Path

import pytest

from scenarios.data import TRACES_DIR
from scenarios.inputs.measurements import read_points_csv
from stacksim import cli


def run(args, capsys):
    rc = cli.main(args)
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_every_subcommand_help_says_what_it_does():
    ap = cli.build_parser()
    sub = next(a for a in ap._actions if a.dest == "cmd")
    for name, parser in sub.choices.items():
        assert parser.description and len(parser.description) > 15, name
        assert parser.format_help().split("\n\n")[1].strip() == parser.description.strip()[:60] or (
            parser.description.split()[0] in parser.format_help()
        )


@pytest.mark.parametrize(
    "args,name,what",
    [
        (["run", "default"], "default", "scenario"),
        (["run", "--scenario", "hybrid8"], "hybrid8", "scenario"),
        (["run", "--platform", "optane900p-e3-1230v5", "job.fio"], "optane900p-e3-1230v5", "platform"),
        (["sweep", "queue_depth", "-o", "r.csv", "--dry-run"], "queue_depth", "sweep"),
    ],
)
def test_a_name_both_built_in_and_a_file_here_is_refused(tmp_path, monkeypatch, capsys, args, name, what):
    monkeypatch.chdir(tmp_path)
    Path("job.fio").write_text("[j]\nrw=randread\nruntime=1ms\ntime_based=1\n")
    Path(name).write_text("not what the user meant\n")
    rc, _, err = run(args, capsys)
    assert rc == 2 and f"'{name}' is both a built-in {what} and a file here: write ./{name}" in err


def test_a_byte_order_mark_is_not_part_of_the_first_column(tmp_path):
    csv = tmp_path / "m.csv"
    csv.write_bytes(b"\xef\xbb\xbflabel,bs,metric.iops\np1,4k,90000\n")
    (row,) = list(read_points_csv(csv))
    assert row["config"] == {"label": "p1", "bs": "4k"} and row["metrics"] == {"iops": 90000.0}


def test_a_trace_and_a_job_file_with_a_byte_order_mark_run(tmp_path, capsys):
    trace = tmp_path / "t.csv"
    trace.write_bytes(b"\xef\xbb\xbf" + (TRACES_DIR / "msr_sample.csv").read_bytes())
    assert run(["replay", str(trace), "--quiet"], capsys)[0] == 0
    job = tmp_path / "j.fio"
    job.write_bytes(b"\xef\xbb\xbf[j]\nrw=randread\ndirect=1\nioengine=psync\nruntime=1ms\ntime_based=1\n")
    rc, _, err = run(["run", str(job), "--platform", "optane900p-e3-1230v5", "--quiet"], capsys)
    assert rc == 0, err


def test_a_trace_from_standard_input_or_a_pipe_is_read_once(tmp_path, monkeypatch, capsys):
    import io
    import os

    data = (TRACES_DIR / "msr_sample.csv").read_bytes()
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))
    rc, _, err = run(["replay", "-", "--quiet", "--json", str(tmp_path / "a.json")], capsys)
    assert rc == 0 and "trace read from standard input" in err
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    pid = os.fork()
    if pid == 0:  # the writer end of a pipe, as a process substitution would be
        with open(fifo, "wb") as w:
            w.write(data)
        os._exit(0)
    rc, _, err = run(["replay", str(fifo), "--quiet", "--json", str(tmp_path / "b.json")], capsys)
    os.waitpid(pid, 0)
    assert rc == 0 and f"trace read from {fifo}" in err
    a, b = ((tmp_path / n).read_text() for n in ("a.json", "b.json"))
    assert '"trace_ios"' in a and a.split('"summary"')[1][:400] == b.split('"summary"')[1][:400]


def test_an_endless_stream_stops_at_its_bound_and_leaves_no_partial_copy(monkeypatch, capsys):
    """``yes | stacksim replay -`` must not fill the disk: the copy stops at its bound (free space
    less a reserve; STACKSIM_SPOOL_MAX_BYTES here) with one message, and the partial copy is gone."""
    import io

    from simcore import spool

    class Endless(io.RawIOBase):
        def readable(self):
            return True

        def readinto(self, b):
            b[:] = b"y\n" * (len(b) // 2) + b"y" * (len(b) % 2)
            return len(b)

    monkeypatch.setenv("STACKSIM_SPOOL_MAX_BYTES", str(3 << 20))
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BufferedReader(Endless())))
    before = set(spool._spool_dir().iterdir())
    rc, _, err = run(["replay", "-", "--quiet"], capsys)
    assert rc == 2 and "standard input: the trace stream is larger than" in err and "write it to a file" in err
    assert set(spool._spool_dir().iterdir()) == before
    monkeypatch.setenv("STACKSIM_SPOOL_MAX_BYTES", "lots")
    assert run(["replay", "-", "--quiet"], capsys)[0] == 2


@pytest.mark.parametrize("path,what", [("/dev/zero", "a character device"), ("/tmp", "a directory")])
def test_a_trace_that_is_not_a_file_says_what_it_is(capsys, path, what):
    rc, _, err = run(["replay", path], capsys)
    assert rc == 2 and f"{path}: is {what}, not a trace file" in err


def test_a_scenarios_job_file_is_an_input_no_output_may_overwrite(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    job = "[j]\nrw=randread\ndirect=1\nruntime=1ms\ntime_based=1\n"
    Path("job.fio").write_text(job)
    Path("s.yaml").write_text("name: s\nplatform: optane900p-e3-1230v5\njob_file: job.fio\n")
    rc, _, err = run(["run", "s.yaml", "--json", "job.fio"], capsys)
    assert rc == 2 and "same file as the input job.fio (s.yaml's input)" in err
    assert Path("job.fio").read_text() == job


def test_explain_may_not_write_over_a_scenarios_input(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    Path("plug.html").write_text("x = 1\n")  # (a plug-in file whatever its name: an input all the same)
    Path("s.yaml").write_text("name: s\nplatform: optane900p-e3-1230v5\nplugins: [plug.html]\n")
    rc, _, err = run(["explain", "s.yaml", "-o", "plug.html"], capsys)
    assert rc == 2 and "s.yaml's input" in err and Path("plug.html").read_text() == "x = 1\n"


def test_a_server_trace_from_standard_input(monkeypatch, capsys):
    import io

    data = (TRACES_DIR / "msr_sample.csv").read_bytes()
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(data)))
    rc, out, err = run(["run", "--scenario", "server-trace", "--set", "workload.trace=-"], capsys)
    assert rc == 0 and "trace read from standard input" in err and "300 IOs in the window" in out
