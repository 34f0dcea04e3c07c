"""fio's file jobs on direct IO (issue 18): filename/directory/filename_format/nrfiles/filesize lay
files out on the simulated SSD (models/os/fs/filesystem.py), file_service_type picks the file of each
IO (models/ioengines/files.py), and a regular file adds the file system's extent lookup per IO."""

from __future__ import annotations

from collections import Counter

import pytest

from models.os.costs.tables import KernelCosts
from models.os.fs.filesystem import EXTENT_ALIGN_BYTES
from scenarios.config.host import resolve
from scenarios.inputs.fio.parser import parse_fio_text
from scenarios.run.assembly import build_run
from scenarios.run.simulate import simulate
from simcore.errors import ConfigError

PLATFORM = "optane900p-e3-1230v5"
HEAD = "[global]\nioengine=psync\ndirect=1\nbs=4k\n"


def _cfg(body: str, **kw):
    return resolve(jobs=list(parse_fio_text(HEAD + body, path="t.fio").jobs), platform=PLATFORM, **kw)


def _records(body: str, **kw):
    return simulate(_cfg(body, **kw), keep_model=True).model.records


def _regions(body: str):
    host, fio, _ramp, _end = build_run(_cfg(body))
    return host, [(th.files.states, th) for th in fio.threads]


def _file_of(off: int, starts: list[int], size: int) -> int:
    for i, s in enumerate(starts):
        if s <= off < s + size:
            return i
    raise AssertionError(f"offset {off} in no file")


def test_generated_files_are_laid_out_one_after_another_per_clone():
    host, threads = _regions("[j]\nrw=randread\ndirectory=/mnt/a\nnrfiles=3\nsize=3m\nnumjobs=2\nnumber_ios=4\n")
    starts = [st.base_offset for files, _th in threads for st in files]
    assert starts == [i * EXTENT_ALIGN_BYTES for i in range(6)]  # 1 MiB files, 1 MiB aligned, distinct
    assert all(st.span == 1 << 20 and st.dev == 0 for files, _th in threads for st in files)


def test_named_files_are_shared_by_clones_and_jobs():
    host, threads = _regions(
        "[a]\nrw=randread\nfilename=/mnt/x:/mnt/y\nsize=2m\nnumjobs=2\nnumber_ios=4\n"
        "[b]\nrw=randread\nfilename=/mnt/y\nsize=4m\nnumber_ios=4\n"
    )
    a0, a1, b = ([st.base_offset for st in files] for files, _th in threads)
    assert a0 == a1 == [0, EXTENT_ALIGN_BYTES]
    assert b == [EXTENT_ALIGN_BYTES]  # /mnt/y: one file, grown to the larger job's need (4 MiB)


def test_roundrobin_takes_the_files_in_turn_and_each_keeps_its_sequential_position():
    recs = _records("[j]\nrw=read\ndirectory=/mnt\nnrfiles=3\nsize=3m\nnumber_ios=9\n")
    offs = [r.offset for r in recs]
    mib = EXTENT_ALIGN_BYTES
    assert offs == [0, mib, 2 * mib, 4096, mib + 4096, 2 * mib + 4096, 8192, mib + 8192, 2 * mib + 8192]


def test_random_service_with_n_ios_per_turn_stays_n_ios_on_a_file():
    recs = _records("[j]\nrw=randread\ndirectory=/mnt\nnrfiles=4\nsize=4m\nfile_service_type=random:8\nnumber_ios=64\n")
    files = [r.offset // EXTENT_ALIGN_BYTES for r in recs]
    runs = [files[i : i + 8] for i in range(0, 64, 8)]
    assert all(len(set(run)) == 1 for run in runs)
    assert len({run[0] for run in runs}) > 1  # the turns go to different files


def test_sequential_service_finishes_a_file_before_the_next():
    recs = _records("[j]\nrw=read\ndirectory=/mnt\nnrfiles=2\nsize=128k\nfile_service_type=sequential\n")
    files = [r.offset // EXTENT_ALIGN_BYTES for r in recs]
    assert files == [0] * 16 + [1] * 16  # 64 KiB files, 4 KiB reads; size-bounded: 128 KiB in all


def test_zipf_file_service_skews_the_accesses():
    recs = _records(
        "[j]\nrw=randread\ndirectory=/mnt\nnrfiles=16\nsize=16m\nfile_service_type=zipf:1.2\nnumber_ios=3000\n"
    )
    counts = Counter(r.offset // EXTENT_ALIGN_BYTES for r in recs)
    assert sum(counts.values()) == 3000
    top = counts.most_common(1)[0][1] / 3000
    assert top > 0.25  # zipf(1.2) over 16: the hottest file takes ~32%; uniform would give 6%


def test_filesize_range_draws_each_file_in_it_in_whole_blocks():
    host, threads = _regions("[j]\nrw=randread\ndirectory=/mnt\nnrfiles=8\nfilesize=64k-1m\nnumber_ios=4\n")
    spans = [st.span for files, _th in threads for st in files]
    assert all(64 << 10 <= s <= 1 << 20 and s % 4096 == 0 for s in spans)
    assert len(set(spans)) > 1
    th = threads[0][1]
    assert th.size_limit == sum(spans)  # no size: the files together


def test_random_offsets_stay_inside_the_file_past_the_job_offset():
    body = "[j]\nrw=randread\ndirectory=/mnt\nnrfiles=2\nsize=2m\noffset=256k\nnumber_ios=400\n"
    recs = _records(body)
    mib = EXTENT_ALIGN_BYTES
    starts = [0, 2 * mib]  # each file is offset + its 1 MiB share = 1.25 MiB: the next starts 1 MiB-aligned
    _host, threads = _regions(body)
    assert [st.base_offset for st in threads[0][0]] == [s + (256 << 10) for s in starts]
    hit = Counter()
    for r in recs:
        f = _file_of(r.offset, starts, 2 * mib)
        hit[f] += 1
        lo = starts[f] + (256 << 10)
        assert lo <= r.offset and r.offset + r.nbytes <= lo + mib, r.offset
    assert hit[0] == hit[1] == 200  # round robin


def test_a_regular_file_adds_the_extent_lookup_to_every_io():
    body = "[j]\nrw=randread\nruntime=20ms\ntime_based=1\n"
    dev = simulate(_cfg(body + "filename=/dev/nvme0n1\n"))["summary"]
    fil = simulate(_cfg(body + "filename=/mnt/data\nsize=1g\n"))["summary"]
    cfg = _cfg(body + "filename=/mnt/data\nsize=1g\n")
    extra_ns = KernelCosts().fs_file_extent_cycles / (cfg.platform.cpu.base_freq_ghz)
    extra_fs = fil["layers"]["fs"] - dev["layers"]["fs"]
    assert extra_fs == pytest.approx(extra_ns, rel=0.15)
    assert fil["latency_us"]["mean"] > dev["latency_us"]["mean"] + 0.5 * extra_ns / 1000


def test_nvme_device_names_pick_the_ssd():
    cfg = resolve(
        jobs=list(parse_fio_text(HEAD + "[j]\nrw=randread\nfilename=/dev/nvme1n1\nsize=1m\n", path="t.fio").jobs),
        platform=PLATFORM,
        sets={"ssd_count": "2"},
    )
    _host, fio, _r, _e = build_run(cfg)
    assert fio.threads[0].dev == 1


@pytest.mark.parametrize(
    "body, words",
    [
        ("rw=randread\ndirectory=/mnt\nruntime=1ms\n", "needs size= or filesize="),
        ("rw=randread\nfilename=/dev/nvme0n1:/mnt/f\nsize=1m\n", "mixes block devices and regular files"),
        ("rw=randread\ndirectory=/mnt\nsize=1m\nioengine=io_uring_cmd\n", "character device"),
        ("rw=randread\ndirectory=/mnt\nsize=300g\n", "capacity"),
        ("rw=randread\nopendir=/mnt\n", "not modelled yet"),
        ("rw=randread\nfilename=/mnt/f\nsize=1m\nfile_service_type=zipf:1\n", "zipf theta"),
        ("rw=randread\nfilename=/mnt/f\nsize=1m\nfile_service_type=lru\n", "unknown value"),
        ("rw=randread\nfilename=/mnt/f\nfilesize=1m-64k\n", "ends before it starts"),
    ],
)
def test_bad_file_jobs_get_one_clear_message(body, words):
    with pytest.raises(ConfigError, match=words):
        simulate(_cfg("[j]\nnumber_ios=4\n" + body))


def test_escaped_colons_stay_in_the_name_and_nrfiles_alias_parses():
    job = parse_fio_text(HEAD + "[j]\nfilename=/mnt/a\\:b:/mnt/c\nnr_files=3\n", path="t.fio").jobs[0]
    assert job.filename == ("/mnt/a:b", "/mnt/c") and job.nrfiles == 3
