"""docs/validate-your-hardware.md's walk-through, step by step, on shipped data: a saved /proc and
/sys tree (tests/data/probe/xeon2s, hand-written from the kernel's documented layout), the synthetic
blkparse sample (scenarios/data/traces/blkparse_qdc_sample.txt) and fio latency logs written by a
stacksim run."""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

from scenarios.data import TRACES_DIR
from stacksim.cli import main

TREE = Path(__file__).parent / "data" / "probe" / "xeon2s"
POLLED = ["--set", "replay.hipri=1", "--set", "queue.io_poll=1"]


def test_probe_calibrate_validate_and_read_the_report(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    shutil.copy(TRACES_DIR / "blkparse_qdc_sample.txt", "sample.txt")
    # 1. the machine
    assert main(["probe", "--root", str(TREE), "-o", "lab.yaml"]) == 0
    assert yaml.safe_load(Path("lab.yaml").read_text())["cpu"]["sockets"] == 2
    # 2. the device, from one trace: the fitted read time is the sample's media time (12 us) less
    # what this host's longer path already takes
    rc = main(["calibrate", "--trace", "sample.txt", "--platform", "lab.yaml", *POLLED, "-o", "cal.yaml"])
    assert rc == 0
    base = yaml.safe_load(Path("cal.yaml").read_text())["ssd"]["read"]["base_ns"]
    assert 9_000 < base < 13_000
    # 3. the check, with its report: the device stage now agrees, the host's block layer does not
    capsys.readouterr()
    rc = main(["validate", "--trace", "sample.txt", "--platform", "cal.yaml", *POLLED, "--json", "v.json"])
    out = capsys.readouterr().out
    assert rc == 0 and "D->C" in out and "Q->D" in out
    rc = main(["validate", "--trace", "sample.txt", "--platform", "cal.yaml", *POLLED, "--html", "r.html"])
    assert rc == 0 and "Latency CDF" in Path("r.html").read_text()
    # 4. latencies kept without times, against the job that made them
    Path("j.fio").write_text(
        "[j]\nrw=randread\nbs=4k\ndirect=1\nioengine=psync\niodepth=1\nruntime=10ms\nramp_time=1ms\ntime_based=1\n"
    )
    assert main(["run", "j.fio", "--platform", "cal.yaml", "--records", "j_lat.log", "--quiet"]) == 0
    logs = sorted(Path(".").glob("j_lat*.log"))
    assert logs
    rc = main(["validate", "--latencies", str(logs[0]), "--job", "j.fio", "--platform", "cal.yaml"])
    assert rc == 0 and "Kolmogorov-Smirnov" in capsys.readouterr().out
