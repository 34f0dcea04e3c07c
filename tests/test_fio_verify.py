"""fio's verify (models/ioengines/verify.py): the read-back of what was written, after the writes
or interleaved every verify_backlog blocks, the checksum work per byte, and what fio refuses."""

import pytest

from models.os.costs.tables import KernelCosts
from scenarios.config.host import resolve
from scenarios.run.simulate import simulate
from stacksim.cli import main

PLAT = "optane900p-e3-1230v5"
HEAD = "[global]\ndirect=1\nsize=512k\nbs=4k\n[w]\nrw=randwrite\n"


def _run(tmp_path, body: str, sets=None, keep=False):
    path = tmp_path / "v.fio"
    path.write_text(HEAD + body)
    return simulate(resolve(job_file=str(path), platform=PLAT, sets=sets), keep_model=keep)


def _ops(result):
    reqs = sorted(result.model.records, key=lambda r: r.t_submit)
    return [(r.op, r.offset) for r in reqs], reqs


@pytest.mark.parametrize("engine", ["ioengine=psync", "ioengine=io_uring\niodepth=8"])
def test_every_written_block_is_read_back_after_the_writes(tmp_path, engine):
    res = _run(tmp_path, f"verify=crc32c\n{engine}\n", keep=True)
    ops, reqs = _ops(res)
    writes = [off for op, off in ops if op == "write"]
    reads = [off for op, off in ops if op == "read"]
    assert len(writes) == 128 and reads == writes  # fio's log: read back in write order
    last_write = max(r.t_complete for r in reqs if r.op == "write")
    assert min(r.t_submit for r in reqs if r.op == "read") > last_write  # drained, synced, then read
    v = res.summary["verify"]
    assert v["passed"] and v["mismatches"] == 0 and v["jobs"]["w"]["blocks_verified"] == 128


def test_backlog_interleaves_batches_of_reads(tmp_path):
    res = _run(tmp_path, "ioengine=psync\nverify=crc32c\nverify_backlog=8\nverify_backlog_batch=4\n", keep=True)
    ops, _ = _ops(res)
    kinds = "".join("w" if op == "write" else "r" for op, _ in ops)
    # 8 written: a batch of 4 reads of the oldest; from then on every 4 writes refill the log to 8
    assert kinds.startswith("w" * 8 + "r" * 4 + "w" * 4 + "r" * 4)
    assert kinds.count("r") == kinds.count("w") == 128  # the rest in the verify phase
    reads = [off for op, off in ops if op == "read"]
    assert sorted(reads) == sorted(off for op, off in ops if op == "write")


def test_checksum_work_is_priced_per_byte(tmp_path):
    """md5 and null differ only in the checksum: the user time per IO differs by md5's cycles per
    byte over one block (a write and a read each compute it once)."""
    user = {}
    for kind in ("md5", "null"):
        res = _run(tmp_path, f"ioengine=psync\nverify={kind}\n")
        s = res.summary
        user[kind] = s["layers"]["user"]
        ghz = next(iter(s["freq_ghz_mean"].values()))
    expected_ns = KernelCosts().verify_checksum_cycles_per_byte["md5"] * 4096 / ghz
    assert user["md5"] - user["null"] == pytest.approx(expected_ns, rel=0.03)


def test_write_latency_excludes_the_buffer_work(tmp_path):
    """fio stamps an IO as it queues it, after filling its buffer: write latency stays the device's."""
    lat = {}
    for kind in ("none", "sha256"):
        res = _run(tmp_path, f"ioengine=psync\nverify={kind}\n")
        lat[kind] = res.to_dict()["jobs"][0]["write"]["lat_ns"]["mean"]
    assert lat["sha256"] == pytest.approx(lat["none"], rel=0.02)


def test_time_based_writes_never_reach_the_verify_phase(tmp_path):
    res = _run(tmp_path, "ioengine=psync\nverify=md5\ntime_based\nruntime=2ms\n")
    job = res.to_dict()["jobs"][0]
    assert job["write"]["total_ios"] > 0 and job["read"]["total_ios"] == 0  # fio: "will never start"


def test_verify_only_reads_what_the_writes_would_write(tmp_path):
    res = _run(tmp_path, "ioengine=io_uring\niodepth=4\nverify=crc32c\nverify_only\n")
    job = res.to_dict()["jobs"][0]
    assert job["write"]["total_ios"] == 0 and job["read"]["total_ios"] == 128


def test_read_only_job_checks_each_read_without_more_io(tmp_path):
    path = tmp_path / "r.fio"
    path.write_text("[global]\ndirect=1\nsize=512k\n[r]\nrw=randread\nioengine=psync\nverify=md5\n")
    res = simulate(resolve(job_file=str(path), platform=PLAT))
    assert res.summary["ios"] == 128 and res.summary["verify"]["jobs"]["r"]["blocks_verified"] == 128


@pytest.mark.parametrize(
    "line,words",
    [
        ("verify=unknowntype", ["'verify'", "unknowntype"]),
        ("verify=md5\nverify_backlog=-1", ["verify_backlog", ">= 0"]),
        ("verify=md5\nverify_interval=8k", ["verify_interval", "smallest write"]),
        ("verify=md5\nverify_only\nloops=2", ["verify_only", "loops"]),
        ("verify=md5\nioengine=null", ["null"]),
        ("verify=md5\nverify_only\ntime_based\nruntime=1", ["verify_only", "time_based"]),
    ],
)
def test_bad_verify_input_is_one_message_and_exit_2(tmp_path, capsys, line, words):
    path = tmp_path / "bad.fio"
    path.write_text(HEAD + line + "\n")
    rc = main(["run", str(path), "--platform", PLAT])
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err and err.strip().count("\n") == 0
    for w in words:
        assert w in err, err


BUFFERED = "[global]\ndirect=0\nsize=512k\nbs=4k\nioengine=psync\n[w]\nrw=randwrite\nverify=crc32c\n"


def _buffered(tmp_path, body: str = ""):
    path = tmp_path / "b.fio"
    path.write_text(BUFFERED + body)
    res = simulate(resolve(job_file=str(path), platform=PLAT), keep_model=True)
    return res, res.model.filemap.cache


def test_buffered_verify_syncs_invalidates_then_reads_back_from_the_device(tmp_path):
    """direct=0: the writes dirty the cache; fio's do_verify then fsyncs (one sync of fio's
    statistics: every dirty page written back and waited for) and invalidates the file, so each
    page written is read back from the SSD once (FMODE_RANDOM: no readahead), its re-reads are hits,
    and no verify read starts before the sync has returned."""
    res, pc = _buffered(tmp_path)
    (th,) = res.run.threads
    distinct = pc.written_pages
    assert 0 < distinct <= 128 and pc.nr_dirty == 0
    assert res["jobs"][0]["sync"]["total_ios"] == 1 and res.summary["verify"]["jobs"]["w"]["blocks_verified"] == 128
    assert pc.read_pages == distinct and pc.hit_pages == 128 - distinct
    sync_end = th.sync_log[1]
    reads = [r for r in res.model.records if r.op == "read"]
    assert len(reads) == 128 and min(r.t_submit for r in reads) > sync_end
    assert res.summary["verify"]["passed"]


def test_buffered_verify_backlog_reads_hit_the_cache(tmp_path):
    """verify_backlog=8: the interleaved reads come before any sync or invalidation, so they find
    the pages just written (hits); only the blocks left for the final verify phase (after its sync
    and invalidation) are read from the SSD."""
    res, pc = _buffered(tmp_path, "verify_backlog=8\n")
    assert res.summary["verify"]["jobs"]["w"]["blocks_verified"] == 128
    assert pc.read_pages <= 8 and pc.hit_pages >= 120


@pytest.mark.parametrize("engine", ["io_uring", "mmap"])
def test_buffered_verify_on_io_uring_and_mmap_is_refused(tmp_path, engine):
    path = tmp_path / "b.fio"
    path.write_text(BUFFERED.replace("ioengine=psync", f"ioengine={engine}").replace("randwrite", "randread"))
    with pytest.raises(Exception, match="verify"):
        resolve(job_file=str(path), platform=PLAT)


def test_loops_write_then_verify_each_pass_from_the_first_offset(tmp_path):
    """loops=2 (fio's keep_running, clear_io_state): write the job's blocks, read them back, then a
    second pass from the job's first offset: write again, read back again."""
    res = _run(tmp_path, "ioengine=psync\nverify=crc32c\nloops=2\nrw=write\n", keep=True)
    ops, _ = _ops(res)
    kinds = "".join("w" if op == "write" else "r" for op, _ in ops)
    assert kinds == ("w" * 128 + "r" * 128) * 2
    assert ops[256][1] == ops[0][1] and res.summary["verify"]["jobs"]["w"]["blocks_verified"] == 256


@pytest.mark.parametrize("io_size,writes", [("128k", 32), ("2m", 128)])
def test_io_size_with_verify_bounds_the_writes_by_do_ios_budget(tmp_path, io_size, writes):
    """io_size below size: the writes stop at io_size (io_issue_bytes), then each is read back.
    Above size: a random verify job stops at size (do_io's total_bytes counts what it issued: fio
    does not let io_size stretch a verify job), not at io_size as it would without verify."""
    res = _run(tmp_path, f"ioengine=psync\nverify=crc32c\nio_size={io_size}\n", keep=True)
    ops, _ = _ops(res)
    assert sum(op == "write" for op, _ in ops) == writes and sum(op == "read" for op, _ in ops) == writes
    if writes == 128:
        plain = _run(tmp_path, f"ioengine=psync\nio_size={io_size}\n")
        assert plain.summary["ios"] == 512


def test_verify_backlog_budget_counts_the_reads_too(tmp_path):
    """verify_backlog: do_io's budget is twice size, reads included: with every write read back at
    once the job writes size bytes, then nothing is left for the verify phase."""
    res = _run(tmp_path, "ioengine=psync\nverify=crc32c\nverify_backlog=1\nio_size=4m\n", keep=True)
    ops, _ = _ops(res)
    kinds = "".join("w" if op == "write" else "r" for op, _ in ops)
    assert kinds == "wr" * 128


def test_a_rewritten_block_is_verified_once_as_last_written(tmp_path):
    """rw=write:4k (fio_offset_overlap_risk: the log is an rbtree): a time_based pass wraps and
    writes its 64 blocks again; each rewrite replaces the block's entry, so the log never holds more
    than the region's blocks."""
    res = _run(
        tmp_path,
        "ioengine=psync\nverify=crc32c\nrw=write:4k\nsize=512k\n",
        {"runtime": "2ms", "time_based": "1"},
        keep=True,
    )
    (th,) = res.run.threads
    v = th.verify
    assert v.logged_blocks > 2 * 64 and len(v.log) == 64


def test_clones_past_the_devices_end_fail_and_the_others_run(tmp_path):
    """A device without size= (fio's setup_files): each clone's size is the device's from its start;
    a clone whose start is past the end fails ("you need to specify valid offset=") with no IO."""
    body = "[j]\nfilename=/dev/nvme0n1\nrw=write\nbs=16k\noffset_increment=100g\nnumjobs=4\nruntime=1ms\n"
    path = tmp_path / "d.fio"
    path.write_text("[global]\ndirect=1\nioengine=psync\n" + body)
    res = simulate(resolve(job_file=str(path), platform=PLAT), keep_model=True)
    cap = 280_000_000_000  # the 900P's
    ths = res.run.threads
    assert [t.failed for t in ths] == [False, False, False, True]
    assert [t.offsets.span for t in ths[:3]] == [cap - k * (100 << 30) for k in range(3)]
    assert "you need to specify valid offset=" in ths[3].error_msg and ths[3].task.error == 22
    assert {r.offset // (100 << 30) for r in res.model.records} == {0, 1, 2}


def test_verify_async_threads_take_the_checks_off_the_job_thread(tmp_path):
    """verify_async=2: each read's check is handed to one of two verify threads of fio's process
    (tasks with CPU time of their own); the job thread pays only the hand-off, so its own time per
    verified block falls, and every block is still checked once."""
    body = "ioengine=psync\nverify=sha512\n"
    res = _run(tmp_path, body + "verify_async=2\n", keep=True)
    inline = _run(tmp_path, body, keep=True)
    (th,) = res.run.threads
    (th0,) = inline.run.threads
    assert th.verify_workers.checks == 128 and res.summary["verify"]["jobs"]["w"]["blocks_verified"] == 128
    assert all(w.task.name.startswith("w/0.verify") for w in th.verify_workers.workers)
    assert sum(w.task.exec_ns for w in th.verify_workers.workers) > 0
    assert th.task.exec_ns < th0.task.exec_ns
