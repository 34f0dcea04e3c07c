"""Many tenants (issue 44 item 4): one job's fio options from ``--set job.NAME.OPTION``, and the
built-in ``tenants`` scenario, a latency-sensitive job beside throughput jobs on shared CPUs and a
shared SSD, each reported apart as fio does."""

from __future__ import annotations

import re

import pytest

from scenarios.config.host import resolve
from scenarios.run.simulate import simulate
from simcore.errors import ConfigError

SHORT = {"runtime": "15ms", "ramp_time": "3ms"}


def _jobs(sets: dict) -> dict:
    return {j.name: j for j in resolve(scenario="tenants", sets={**SHORT, **sets}).jobs}


def test_a_set_for_one_job_changes_only_that_job():
    jobs = _jobs({"job.tput.numjobs": "5", "job.tput.iodepth": "8", "bs": "8k"})
    assert jobs["tput"].numjobs == 5 and jobs["tput"].iodepth == 8
    assert jobs["lat"].numjobs == 1 and jobs["lat"].iodepth == 1
    assert jobs["lat"].bs_read_bytes == jobs["tput"].bs_read_bytes == 8192  # an all-jobs option


def test_numjobs_zero_leaves_the_tenant_out_and_bad_names_are_refused():
    assert set(_jobs({"job.tput.numjobs": "0"})) == {"lat"}
    with pytest.raises(ConfigError, match="no job named 'scan'.*jobs: lat, tput"):
        _jobs({"job.scan.numjobs": "2"})
    with pytest.raises(ConfigError, match="leaves no job"):
        _jobs({"job.tput.numjobs": "0", "job.lat.numjobs": "0"})
    with pytest.raises(ConfigError, match="job.tput.iodepth|iodepth"):
        _jobs({"job.tput.iodepth": "-3"})


def _lat(n: int, sched: str = "none") -> tuple[dict, dict]:
    out = simulate(resolve(scenario="tenants", sets={**SHORT, "job.tput.numjobs": str(n), "queue.scheduler": sched}))
    jobs = {j["jobname"]: j for j in out["jobs"]}
    return jobs["lat"]["read"], out["summary"]


def test_the_latency_tenant_waits_behind_the_throughput_tenants():
    """Alone, the latency job sees the device's read time; with throughput jobs on its CPUs and its
    device its mean and tail grow (their IOs queue ahead of its reads in the device and their
    completions' interrupts and run time take its CPUs), and its IOPS fall; fio reports each job."""
    alone, _ = _lat(0)
    busy, summary = _lat(4)
    assert busy["lat_ns"]["mean"] > 1.3 * alone["lat_ns"]["mean"]
    p99 = lambda r: float(r["clat_ns"]["percentile"]["99.000000"])  # noqa: E731
    assert p99(busy) > 1.5 * p99(alone)
    assert busy["iops"] < alone["iops"]
    assert summary["iops"] > 10 * busy["iops"]  # the scan's IOs dominate the device


def test_scaling_md_quotes_the_tenant_mix_per_fair_class():
    """docs/scaling.md's table of the latency tenant beside 4 scans on CFS (6.3), EEVDF (6.6) and
    6.12's EEVDF: each row as the model gives it."""
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "docs" / "scaling.md").read_text(encoding="utf-8")
    names = {"6.3": "CFS", "6.6": "EEVDF", "6.12": "EEVDF + DELAY_DEQUEUE, PREEMPT_SHORT"}
    for version, name in names.items():
        out = simulate(resolve(scenario="tenants", sets={**SHORT, "job.tput.numjobs": "4", "kernel.version": version}))
        lat = {j["jobname"]: j for j in out["jobs"]}["lat"]["read"]
        mean_us = lat["lat_ns"]["mean"] / 1000
        p99_us = float(lat["clat_ns"]["percentile"]["99.000000"]) / 1000
        row = f"| {version} | {name} | {mean_us:.0f} us | {p99_us:.0f} us | {round(lat['iops']):,} |"
        assert row in page, row
    alone = {}
    for version in names:
        out = simulate(resolve(scenario="tenants", sets={**SHORT, "job.tput.numjobs": "0", "kernel.version": version}))
        alone[version] = f"{out['jobs'][0]['read']['lat_ns']['mean'] / 1000:.0f} us"
    assert alone["6.3"] == alone["6.6"]
    quoted = f"{alone['6.12']} mean alone against {alone['6.3']} on 6.3 and 6.6"
    assert quoted in re.sub(r"\s+", " ", page), quoted


def test_tails_beside_n_scans_grow_with_the_scans():
    """scenarios/studies/tenant_tails.py (docs/scaling.md, "Tails beside N scans"): with the `none`
    scheduler the reader's mean, p99 and p99.9 grow as scans join it; its percentiles are ordered."""
    from scenarios.studies.tenant_tails import markdown, tenant_tails

    alone, busy = tenant_tails(scans=(0, 4), schedulers=("none",), sets=SHORT)
    for key in ("mean_us", "p99_us", "p99.9_us"):
        assert busy[key] > 1.3 * alone[key], key
    for r in (alone, busy):
        assert r["p50_us"] <= r["p90_us"] <= r["p99_us"] <= r["p99.9_us"] <= r["max_us"]
    assert alone["scan_iops"] == 0 and busy["scan_iops"] > 10 * busy["iops"]
    assert "| none | 4 |" in markdown([alone, busy])


def test_the_first_wake_of_the_reader_waits_at_most_the_slices_ahead_of_it():
    """mq-deadline, 4 scans on CFS (6.3): the reader's first read completes at once, but it woke
    with a vruntime above the scans' (no sleeper credit yet) and not far enough below the running
    scan's to preempt it, so it waits its turn: the running scan's slice (24 ms / 3 runnable = 8
    ms, ending at the next 4 ms tick) and, ahead of it in vruntime, the other scan queued on its
    CPU: 24 ms at most. (Before, a slice check armed for the reader itself, which had gone to sleep,
    kept the running scan's check from being armed, and the reader waited 32 ms.) EEVDF (6.6)
    takes it after the running request (3 ms base slice) and one other: under 12 ms."""
    from scenarios.studies.tenant_tails import tail_row

    sets = {"ramp_time": "0", "runtime": "30ms"}
    cfs = tail_row("mq-deadline", 4, {**sets, "kernel.version": "6.3"})
    eevdf = tail_row("mq-deadline", 4, {**sets, "kernel.version": "6.6"})
    assert 16 < cfs["stall_ms"] <= 24.5 and cfs["max_us"] / 1e3 == pytest.approx(cfs["stall_ms"], abs=0.2)
    assert eevdf["stall_ms"] < 12
