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
