"""Trace replay through the storage-server model (issue 6, "trace replay through the trace
readers"): the ``server-trace`` scenario streams a block trace (``scenarios.inputs.traces``) into the
NVMe-oF target open loop, each request with its own direction and size, the trace's volumes on the
server's SSDs; every IO of the window completes exactly once; malformed lines name file:line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import scenarios.config.server_workloads as workloads
from scenarios.config.server import resolve_server
from scenarios.config.server_workloads import TraceFeed
from scenarios.inputs.traces import open_trace, select
from scenarios.run.simulate import simulate
from scenarios.studies.sweep import load_sweep, plan
from scenarios.studies.sweeps.runner import execute
from scenarios.studies.sweeps.store import read_results
from simcore.errors import ConfigError
from stacksim import cli

SAMPLES = Path(__file__).resolve().parents[1] / "scenarios" / "data" / "traces"
SAMPLE_FILES = {"msr": SAMPLES / "msr_sample.csv", "alibaba": SAMPLES / "alibaba_sample.csv"}


def replay(trace, policy: str = "spdk-static", seed: int = 2, **sets) -> dict:
    cfg = resolve_server(
        "server-trace",
        {"workload.trace": str(trace), "server.policy": policy, **{f"workload.{k}": str(v) for k, v in sets.items()}},
        seed=seed,
    )
    return simulate(cfg, records=True, keep_model=True)


def arrivals(result) -> np.ndarray:
    """When each recorded request reached the target (ns): the client sent it half a round trip before."""
    return result.records["t_submit_ns"] + result.model.half_rtt


def msr_line(t_us: float, op: str, nbytes: int, disk: int = 0, offset: int = 0) -> str:
    return f"{128166372000000000 + int(t_us * 10)},hm,{disk},{op},{offset},{nbytes},100\n"


@pytest.mark.parametrize("fmt", sorted(SAMPLE_FILES))
@pytest.mark.parametrize("policy", ["spdk-static", "sandman", "linux"])
def test_sample_replay_conserves_every_io_and_mixes_reads_and_writes(fmt, policy):
    path = SAMPLE_FILES[fmt]
    trace = list(open_trace(path))
    r = replay(path, policy)
    s, rec = r["summary"], r.records
    assert s["trace_ios"] == s["completed_ios"] == s["requests"]["offered"] == len(trace) == 300
    assert s["requests"]["in_flight"] == 0 and s["bad_lines"] == 0 and s["late_arrivals"] == 0
    # every IO exactly once, at its trace time (open loop), with its own direction and size
    assert sorted(rec["io"].tolist()) == list(range(300))
    order = np.argsort(rec["io"])
    assert arrivals(r)[order].tolist() == [float(io.t_ns) for io in trace]
    assert rec["op"][order].tolist() == [io.op for io in trace]
    assert rec["bytes"][order].tolist() == [io.nbytes for io in trace]  # the samples are 512 B multiples
    # causality, stage by stage: client send < NVMe submit <= device start < end <= CQE <= reaped < response
    for a, b in (("t_submit_ns", "t_dispatch_ns"), ("t_dev_end_ns", "t_cqe_ns"), ("t_reaped_ns", "t_complete_ns")):
        assert np.all(rec[a] < rec[b]) if a != "t_dev_end_ns" else np.all(rec[a] <= rec[b])
    assert np.all(rec["t_dispatch_ns"] <= rec["t_dev_start_ns"]) and np.all(rec["t_dev_start_ns"] < rec["t_dev_end_ns"])
    assert np.all(rec["t_cqe_ns"] <= rec["t_reaped_ns"])
    assert np.all(rec["cpu"] >= 0) and np.all(rec["thread"] >= 0)
    reads = sum(io.op == "read" for io in trace)
    assert s["ops"]["read"]["ios"] == r["replay"]["reads"] == reads > 50
    assert s["ops"]["write"]["ios"] == r["replay"]["writes"] == 300 - reads > 50
    assert s["ios"] == 300 and s["bandwidth_mb_s"] > 0
    assert r["sim"]["measured_s"] * s["bandwidth_mb_s"] * 1e6 == pytest.approx(sum(io.nbytes for io in trace))
    # NAND reads are slower than writes acknowledged from the SSD's DRAM
    assert s["ops"]["read"]["latency_us"]["p50"] > s["ops"]["write"]["latency_us"]["p50"] + 20
    # three volumes, three SSDs (round-robin in order of first appearance)
    assert sorted(r["replay"]["volumes"].values()) == ["ssd0", "ssd1", "ssd2"]
    cdf = r["latency_cdf"]
    assert len(cdf["read_us"]) == len(cdf["write_us"]) == len(cdf["pct"])
    json.dumps({k: v for k, v in r.items() if not k.startswith("_")})


def test_window_and_speed_select_and_scale_the_arrivals():
    path = SAMPLE_FILES["alibaba"]
    r = replay(path, trace_window="0.01:0.06", trace_speed=2)
    want = list(select(open_trace(path), window_ns=(10_000_000, 60_000_000), speed=2.0))
    s, rec = r["summary"], r.records
    assert s["trace_ios"] == s["completed_ios"] == len(want) > 50
    order = np.argsort(rec["io"])
    assert arrivals(r)[order].tolist() == [float(io.t_ns) for io in want]
    assert arrivals(r).max() < 25e6  # 50 ms of trace at twice the speed
    assert s["skipped"]["before window"] > 0 and s["skipped"]["after window"] > 0
    assert r["replay"]["window_s"] == [0.01, 0.06]


def test_volume_selection_and_ssd_mapping():
    path = SAMPLE_FILES["alibaba"]
    want = [io for io in open_trace(path) if io.volume in ("12", "419")]
    cfg = resolve_server(
        "server-trace", {"workload.trace": str(path), "workload.trace_volumes": "12,419", "workload.ssds": "[5, 9]"}
    )
    assert cfg.workload.trace_volumes == ("12", "419")
    r = simulate(cfg)
    assert r["summary"]["trace_ios"] == r["summary"]["completed_ios"] == len(want)
    assert r["summary"]["skipped"] == {"volume": 300 - len(want)}
    assert r["replay"]["volumes"] == {"12": "ssd5", "419": "ssd9"}


def test_sizes_round_up_to_512_bytes_and_large_writes_are_pulled(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text(
        msr_line(0, "Write", 4096)
        + msr_line(2000, "Write", 65536)
        + msr_line(4000, "Read", 1000)
        + msr_line(6000, "Write", 1)
    )
    r = replay(path, trace_format="msr")
    rec = r.records
    order = np.argsort(rec["io"])
    assert rec["bytes"][order].tolist() == [4096, 65536, 1024, 512]
    lat = (rec["t_complete_ns"] - arrivals(r))[order]
    # a 64 KiB write waits for its RDMA READ: a 5 us round trip + 2.6 us at 200 Gb/s (plus PCIe)
    assert lat[1] - lat[0] > 5000 + 65536 * 8 / 200
    assert r["summary"]["trace_ios"] == r["summary"]["completed_ios"] == 4


def test_fixed_size_workloads_move_their_data_too():
    def p50(**wl) -> float:
        sets = {
            "workload.rate_iops": "50000",
            "workload.duration_s": "0.006",
            "workload.warmup_s": "0.001",
            **{f"workload.{k}": str(v) for k, v in wl.items()},
        }
        return simulate(resolve_server("server-stable", sets, seed=4))["summary"]["latency_us"]["p50"]

    # 64 KiB writes are pulled by an RDMA READ; 64 KiB reads return 60 KiB more data (2.5 us)
    assert p50(op="write", bs=65536) - p50(op="write", bs=4096) > 5.0 + 65536 * 8 / 200e3
    assert p50(bs=65536) > p50(bs=4096) + 2.4


def test_out_of_order_records_arrive_late_and_still_complete(tmp_path):
    path = tmp_path / "ooo.csv"
    path.write_text(
        msr_line(0, "Read", 4096)
        + msr_line(500, "Write", 8192)
        + msr_line(300, "Read", 4096)
        + msr_line(900, "Read", 4096, disk=1)
    )
    r = replay(path)
    s = r["summary"]
    assert s["trace_ios"] == s["completed_ios"] == 4 and s["late_arrivals"] == 1
    assert r["replay"]["max_late_us"] == pytest.approx(200.0)
    order = np.argsort(r.records["io"])
    assert arrivals(r)[order].tolist() == [0.0, 500e3, 500e3, 900e3]


def test_malformed_line_names_file_and_line(tmp_path, monkeypatch):
    lines = SAMPLE_FILES["msr"].read_text().splitlines(keepends=True)
    lines[149] = "128166372000000492,hm,0,Write,notanumber,4096,978\n"
    bad = tmp_path / "bad.csv"
    bad.write_text("".join(lines))
    with pytest.raises(ConfigError, match=rf"{bad}:150: msr: offset 'notanumber'"):
        replay(bad)
    # the same when the line is reached during the run (the trace is read a batch at a time)
    monkeypatch.setattr(workloads, "TRACE_BATCH", 16)
    with pytest.raises(ConfigError, match=rf"{bad}:150:"):
        replay(bad)
    r = replay(bad, trace_skip_bad_lines="true")
    assert r["summary"]["bad_lines"] == 1 and r["summary"]["trace_ios"] == r["summary"]["completed_ios"] == 299


def test_the_trace_is_streamed_not_loaded():
    cfg = resolve_server("server-trace", {"workload.trace": str(SAMPLE_FILES["msr"])})
    feed = TraceFeed(cfg.workload, 16, np.random.default_rng(1), batch=32)
    first = next(feed.batches)
    assert len(first[0]) == 32 and feed.reader.lines_read == 32 and feed.ios == 32
    assert set(first[3]) == {"read", "write"}
    assert sum(len(b[0]) for b in feed.batches) == 300 - 32 and feed.ios == 300


@pytest.mark.parametrize(
    "sets, needle",
    [
        ({}, "workload.trace.trace: .*--set workload.trace=PATH"),
        ({"workload.trace": "/no/such/trace.csv"}, "trace file not found"),
        ({"workload.trace": str(SAMPLE_FILES["msr"]), "workload.trace_format": "csv"}, "unknown trace format 'csv'"),
        (
            {"workload.trace": str(SAMPLE_FILES["msr"]), "workload.trace_window": "2:1"},
            "trace_window: .*end must be after start",
        ),
        ({"workload.trace": str(SAMPLE_FILES["msr"]), "workload.trace_speed": "0"}, "trace_speed"),
    ],
)
def test_bad_trace_settings_name_the_key(sets, needle):
    with pytest.raises(ConfigError, match=needle):
        resolve_server("server-trace", sets)


def test_trace_keys_belong_to_server_trace_and_empty_windows_fail():
    with pytest.raises(ConfigError, match="server-trace scenario"):
        resolve_server("server-stable", {"workload.trace": str(SAMPLE_FILES["msr"])})
    with pytest.raises(ConfigError, match="no read/write IO in the window"):
        replay(SAMPLE_FILES["msr"], trace_window="10:")


def test_cli_run_server_trace(tmp_path, capsys):
    out, recs = tmp_path / "r.json", tmp_path / "rec.csv"
    assert (
        cli.main(
            [
                "run",
                "--scenario",
                "server-trace",
                "--set",
                f"workload.trace={SAMPLE_FILES['alibaba']}",
                "--set",
                "workload.trace_format=alibaba",
                "--set",
                "server.policy=sandman",
                "--json",
                str(out),
                "--records",
                str(recs),
            ]
        )
        == 0
    )
    text = capsys.readouterr().out
    assert "300 IOs in the window, 300 completed" in text
    r = json.loads(out.read_text())
    assert r["summary"]["trace_ios"] == r["summary"]["completed_ios"] == 300 and r["replay"]["format"] == "alibaba"
    head = recs.read_text().splitlines()
    # the host's record format (one per-IO record for every kind of run)
    from simcore.stats import RECORD_FIELDS

    assert head[0] == ",".join(n for n, _ in RECORD_FIELDS) and len(head) == 301


def test_sweep_over_a_trace_replay(tmp_path):
    trace = tmp_path / "traces" / "t.csv"
    trace.parent.mkdir()
    trace.write_bytes(SAMPLE_FILES["msr"].read_bytes())
    sweep_file = tmp_path / "replay.yaml"
    sweep_file.write_text(
        "name: replay\nbase: {scenario: server-trace}\n"
        "set: {workload.trace: traces/t.csv, workload.trace_window: '0:0.03'}\n"
        "axes:\n  server.policy: [spdk-static, sandman]\n  workload.trace_speed: [1, 4]\n"
    )
    sweep, where = load_sweep(sweep_file)
    tasks = plan(sweep, where=where)
    assert {t.config.workload.trace for t in tasks} == {str(trace)}
    execute(tasks, tmp_path / "r.csv", jobs=1, progress=False)
    rows = read_results(tmp_path / "r.csv")
    assert len(rows) == 4
    for r in rows:
        assert r["trace_ios"] == r["completed_ios"] > 20 and r["ops.read.ios"] > 0 and r["ops.write.ios"] > 0
        assert r["completion"] == r["server.policy"]
