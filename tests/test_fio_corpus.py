"""A corpus of fio job files in the style of fio's examples/ (tests/fio_corpus/*.fio), each
parsed and run unchanged: the catalogue, the job-file language and the modelled options together.

Each file runs a few milliseconds of simulated time; ``BS``/``QD`` are set for env-vars.fio.
"""

from pathlib import Path

import pytest

from scenarios.config.host import resolve
from scenarios.inputs.fio.parser import parse_fio_file
from scenarios.run.simulate import simulate

CORPUS = Path(__file__).parent / "fio_corpus"
FILES = sorted(CORPUS.glob("*.fio"))
PLATFORM = "optane900p-e3-1230v5"  # 4 cores, 8 logical CPUs: $ncpus = 8
#: platform settings a file needs, as its machine would (io_uring IOPOLL needs NVMe poll queues)
PLATFORM_SETS = {"io_uring-poll.fio": {"queue.io_poll": "1"}}


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    monkeypatch.setenv("BS", "8k")
    monkeypatch.setenv("QD", "4")


def test_corpus_size():
    assert len(FILES) >= 40


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_corpus_file_parses_and_runs(path):
    cfg = resolve(job_file=str(path), platform=PLATFORM, sets=PLATFORM_SETS.get(path.name))
    result = simulate(cfg)
    s = result.summary
    assert s["ios"] > 0 and s["iops"] > 0
    # options accepted without effect stay visible in the results (stacksim run prints them)
    expected = sorted({n for j in cfg.jobs for n in j.ignored_options})
    assert result.to_dict()["ignored_fio_options"] == expected


def _jobs(name):
    return resolve(job_file=str(CORPUS / name), platform=PLATFORM).jobs


def test_corpus_language_values():
    assert [(j.bs_read_bytes, j.iodepth) for j in _jobs("env-vars.fio")] == [(8192, 4)]
    assert [j.numjobs for j in _jobs("ncpus-keyword.fio")] == [2]  # $ncpus/4 on 8 logical CPUs
    (a,) = _jobs("arithmetic.fio")
    assert (a.bs_read_bytes, a.iodepth, a.size_bytes, a.offset_bytes) == (4096, 8, 64 << 20, 1 << 20)
    assert (a.runtime_ns, a.ramp_time_ns) == (2_500_000, 500_000)  # expression times: microseconds
    (inc,) = _jobs("include-common.fio")
    assert inc.direct and inc.time_based and inc.runtime_ns == 3_000_000 and "group_reporting" in inc.ignored_options
    assert [j.iodepth for j in _jobs("two-globals.fio")] == [2, 16]  # a later [global]: later jobs only
    (t,) = _jobs("timeout-alias.fio")
    assert (t.runtime_ns, t.rw, t.bs_read_bytes) == (2_000_000, "randread", 4096)
    (e,) = _jobs("env-default-global.fio")
    assert (e.iodepth, e.bs_read_bytes) == (16, 8192)
    (lp,) = _jobs("loops-time-based.fio")
    assert lp.loops > 1 and lp.time_based  # fio's keep_running: time_based runs until runtime
    (k,) = _jobs("kb-base.fio")
    assert (k.bs_read_bytes, k.size_bytes) == (4096, 1 << 20)


def test_corpus_files_are_fio_style():
    """Comments and a [global] section, as fio's examples are written; included files have no
    sections (fio's rule) and are not job files of their own."""
    for path in FILES:
        text = path.read_text()
        assert text.lstrip().startswith(";") and "[global]" in text, path.name
        assert parse_fio_file(path, keywords={"ncpus": 8, "pagesize": 4096}).jobs
    for inc in (CORPUS / "include").glob("*.fio"):
        assert "[" not in inc.read_text()


def test_corpus_workload_features():
    (z,) = _jobs("zipf-hot-blocks.fio")
    assert (z.random_distribution, z.random_distribution_value) == ("zipf", 1.2)
    (zo,) = _jobs("zoned-abs-per-direction.fio")
    assert zo.zones_write == ((100.0, 128 << 20),) and len(zo.zones_read) == 2
    (p,) = _jobs("poisson-arrivals.fio")
    assert (p.rate_process, p.rate_iops_read) == ("poisson", 20000)
    (c,) = _jobs("cmdprio-percentage.fio")
    assert (c.prioclass, c.cmdprio_percentage_read, c.cmdprio_class_read) == (3, 20, 1)
    (h,) = _jobs("read-with-holes.fio")
    assert (h.rw, h.rw_modifier) == ("read", 12 << 10)
    (d,) = _jobs("disjoint-clones.fio")
    assert (d.offset_increment_bytes, d.number_ios, d.loops) == (256 << 20, 64, 2)
    assert [j.startdelay_ns for j in _jobs("staggered-start.fio")] == [0, 1_000_000]
