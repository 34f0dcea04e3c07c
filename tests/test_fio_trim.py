"""fio's trim workloads (issue 18): rw=trim/randtrim/trimwrite/randtrimwrite, the BLKDISCARD path
on the host (a blocking ioctl, completed by interrupt) and the device's deallocation work
(models/ssd/config.py TrimConfig: apart from the media units, one command at a time)."""

from __future__ import annotations

import pytest

from scenarios.config.host import resolve
from scenarios.inputs.fio.parser import parse_fio_text
from scenarios.run.simulate import simulate
from simcore.errors import ConfigError

PLATFORM = "optane900p-e3-1230v5"


def _cfg(body: str, engine: str = "psync", sets: dict | None = None):
    text = f"[global]\nioengine={engine}\ndirect=1\nbs=4k\nfilename=/dev/nvme0n1\n[j]\n{body}"
    return resolve(jobs=list(parse_fio_text(text, path="t.fio").jobs), platform=PLATFORM, sets=sets)


def _run(body: str, engine: str = "psync", sets: dict | None = None, **kw):
    return simulate(_cfg(body, engine, sets), **kw)


def test_trim_latency_follows_the_devices_deallocation_time():
    body = "rw=randtrim\nruntime=10ms\ntime_based=1\n"
    base = _run(body)["summary"]["latency_us"]["mean"]
    slow = _run(body, sets={"ssd.trim.base_ns": "15000"})["summary"]["latency_us"]["mean"]
    assert slow - base == pytest.approx(10.0, abs=0.5)  # +10 us of controller work per trim


def test_a_large_trim_is_one_command_and_costs_per_mib():
    recs = _run("rw=randtrim\nbs=4k,4k,8m\nnumber_ios=20\nsize=1g\n", keep_model=True).model.records
    assert all(r.op == "trim" and r.nbytes == 8 << 20 and not r.splits for r in recs)
    per_mib = 2000.0  # TrimConfig.per_mib_ns default
    for r in recs:
        assert r.device_service_ns == pytest.approx(5000.0 + per_mib * (8 - 1 / 256))


def test_trims_complete_by_interrupt_even_in_a_polled_job():
    s = _run("rw=randtrim\nhipri=1\nruntime=10ms\ntime_based=1\n", engine="pvsync2", sets={"queue.io_poll": "1"})[
        "summary"
    ]
    assert s["interrupts_per_io"] == pytest.approx(1.0, abs=0.01)  # submit_bio_wait never polls


def test_trimwrite_trims_each_block_then_writes_it():
    recs = sorted(
        _run("rw=randtrimwrite\nnumber_ios=40\nsize=64m\n", keep_model=True).model.records, key=lambda r: r.id
    )
    ops = [r.op for r in recs]
    assert ops == ["trim", "write"] * 20
    assert all(recs[i].offset == recs[i + 1].offset for i in range(0, 40, 2))
    seq = sorted(_run("rw=trimwrite\nnumber_ios=6\nsize=64m\n", keep_model=True).model.records, key=lambda r: r.id)
    assert [(r.op, r.offset) for r in seq] == [
        ("trim", 0),
        ("write", 0),
        ("trim", 4096),
        ("write", 4096),
        ("trim", 8192),
        ("write", 8192),
    ]


def test_the_controller_deallocates_one_command_at_a_time():
    """Passthrough queues DSM commands at depth 4; they serialise on the mapping-table work
    (never two at once on the device), so IOPS stay near 1 / base_ns however deep the queue.
    The idle states beyond C1 are disabled: with them the waiting thread's CPU, its tick stopped,
    now and then picks C8 (menu uses the next timer then) and its 200 us exit, not the device,
    sets the pace."""
    text = (
        "[global]\nioengine=io_uring_cmd\ndirect=1\nfilename=/dev/ng0n1\nbs=4k\n"
        "[j]\nrw=randtrim\niodepth=4\nruntime=10ms\ntime_based=1\n"
    )
    sets = {"cpu.cpuidle_disable": "[C1E, C3, C6, C7s, C8]"}
    res = simulate(
        resolve(jobs=list(parse_fio_text(text, path="t.fio").jobs), platform=PLATFORM, sets=sets), keep_model=True
    )
    spans = sorted((r.t_dev_start, r.t_dev_end) for r in res.model.records)
    assert all(a[1] <= b[0] + 1e-6 for a, b in zip(spans, spans[1:]))
    assert 0.95 * 2e5 < res["summary"]["iops"] <= 1.01 * 2e5


@pytest.mark.parametrize("engine", ["libaio", "io_uring"])
def test_async_engines_issue_trims_synchronously(engine):
    """fio's do_io_u_trim: the job thread blocks in the ioctl, so its trims never overlap."""
    recs = _run("rw=randtrim\niodepth=8\nnumber_ios=50\nsize=64m\n", engine=engine, keep_model=True).model.records
    spans = sorted((r.t_dispatch, r.t_cqe) for r in recs)
    assert len(spans) == 50
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))


def test_trims_fill_fios_trim_section():
    res = _run("rw=randtrim\nnumber_ios=100\nsize=64m\n")
    job = res.to_dict()["jobs"][0]
    assert job["trim"]["total_ios"] == 100 and job["trim"]["io_bytes"] == 100 * 4096
    assert job["read"]["total_ios"] == 0 and job["write"]["total_ios"] == 0


def test_trims_of_regular_files_fail_at_the_first_trim_as_fios_blkdiscard_does():
    """fio 3.41 trims a regular file with BLKDISCARD on its descriptor: -ENOTTY, the job ends
    (its sync engines and libaio); io_uring's async discard on a file is refused."""
    text = "[j]\nioengine=psync\ndirect=1\nrw=randtrim\ndirectory=/mnt\nsize=1m\n"
    res = simulate(resolve(jobs=list(parse_fio_text(text, path="t.fio").jobs), platform=PLATFORM), keep_model=True)
    (th,) = res.run.threads
    assert th.failed and th.task.error == 25 and res.summary["ios"] == 0
    with pytest.raises(ConfigError, match="io_uring"):
        parse_fio_text(text.replace("psync", "io_uring"), path="t.fio")


def test_trimwrite_over_two_devices_writes_each_block_where_it_trimmed_it():
    text = (
        "[global]\nioengine=psync\ndirect=1\nbs=4k\n[j]\nrw=randtrimwrite\nfilename=/dev/nvme0n1:/dev/nvme1n1\n"
        "size=64m\nnumber_ios=40\n"
    )
    cfg = resolve(jobs=list(parse_fio_text(text, path="t.fio").jobs), platform=PLATFORM, sets={"ssd_count": "2"})
    recs = sorted(simulate(cfg, keep_model=True).model.records, key=lambda r: r.id)
    pairs = [(recs[i], recs[i + 1]) for i in range(0, 40, 2)]
    assert all(
        t.op == "trim" and w.op == "write" and t.offset == w.offset and t.qp.device is w.qp.device for t, w in pairs
    )
    assert len({t.qp.device.index for t, _w in pairs}) == 2  # the files (devices) take turns
