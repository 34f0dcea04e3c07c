"""fio's job synchronization (issue 18): stonewall, wait_for, new_group and exitall
(models/ioengines/job_control.py), on simulated runs."""

from __future__ import annotations

import pytest

from scenarios.config.host import resolve
from scenarios.inputs.fio.parser import parse_fio_text
from scenarios.run.simulate import simulate
from simcore.errors import ConfigError

PLATFORM = "optane900p-e3-1230v5"
HEAD = "[global]\nioengine=psync\ndirect=1\nbs=4k\nfilename=/dev/nvme0n1\nsize=64m\n"


def _run(body: str):
    cfg = resolve(jobs=list(parse_fio_text(HEAD + body, path="t.fio").jobs), platform=PLATFORM)
    return simulate(cfg, keep_model=True)


def _spans(res) -> dict[int, tuple[float, float]]:
    """Per job: (first submission, last completion) of its IOs, ns."""
    out: dict[int, list[float]] = {}
    for r in res.model.records:
        lo, hi = out.setdefault(r.job, [float("inf"), 0.0])
        out[r.job] = [min(lo, r.t_submit), max(hi, r.t_complete)]
    return {j: (a, b) for j, (a, b) in out.items()}


def test_stonewall_starts_a_job_after_every_job_before_it():
    res = _run(
        "[a]\nrw=randread\nnumber_ios=200\n[b]\nrw=randread\nnumber_ios=300\nnumjobs=2\n"
        "[c]\nstonewall\nrw=randwrite\nnumber_ios=100\n"
    )
    sp = _spans(res)
    assert sp[2][0] > max(sp[0][1], sp[1][1])  # c after both a and b
    assert sp[1][0] < sp[0][1]  # a and b ran together
    groups = [e["groupid"] for e in res.to_dict()["jobs"]]
    assert groups == [0, 0, 0, 1]  # b has two clones (two entries); the stonewall opens group 1


def test_wait_for_waits_for_the_named_job_only():
    res = _run(
        "[slow]\nrw=randread\nnumber_ios=600\n[fast]\nrw=randread\nnumber_ios=50\n"
        "[after-fast]\nwait_for=fast\nrw=randread\nnumber_ios=50\n"
    )
    sp = _spans(res)
    assert sp[1][1] <= sp[2][0] < sp[0][1]  # starts once 'fast' is done, while 'slow' still runs


def test_runtime_and_ramp_count_from_the_jobs_own_start():
    res = _run(
        "[a]\nrw=randread\nruntime=4ms\ntime_based\n[b]\nstonewall\nrw=randread\nruntime=3ms\n"
        "ramp_time=1ms\ntime_based\n"
    )
    sp = _spans(res)
    d = res.to_dict()
    b_start = res.run.job_control.start_ns[1]  # when 'a' exited (its first IO: after a C-state exit)
    assert b_start == pytest.approx(4e6, abs=50e3) and sp[1][0] >= b_start
    assert sp[1][1] == pytest.approx(b_start + 4e6, abs=50e3)  # ramp 1 ms + runtime 3 ms
    b = d["jobs"][1]
    assert b["job_runtime"] == 3  # ms, measured after its own ramp
    measured = [r for r in res.model.records if r.job == 1 and r.t_submit >= b_start + 1e6]
    assert b["read"]["total_ios"] == pytest.approx(len(measured), abs=1)


def test_exitall_ends_the_group_when_one_thread_finishes():
    res = _run("[short]\nrw=randread\nnumber_ios=100\nexitall\n[long]\nrw=randread\nruntime=50ms\ntime_based\n")
    sp = _spans(res)
    assert sp[1][1] < sp[0][1] + 30e3  # 'long' stops right after 'short' finished, not at 50 ms


def test_exit_what_all_cancels_jobs_that_have_not_started():
    res = _run(
        "[short]\nrw=randread\nnumber_ios=100\nexitall\nexit_what=all\n[long]\nrw=randread\nruntime=50ms\n"
        "time_based\n[later]\nstonewall\nrw=randread\nnumber_ios=100\n"
    )
    assert 2 not in _spans(res)  # 'later' never ran
    assert res["summary"]["ios"] < 200 + 50


def test_a_job_without_exitall_does_not_end_the_others():
    res = _run("[short]\nrw=randread\nnumber_ios=100\n[long]\nrw=randread\nruntime=5ms\ntime_based\n")
    sp = _spans(res)
    assert sp[1][1] > 4.5e6


@pytest.mark.parametrize(
    "body, words",
    [
        ("[a]\nrw=read\nwait_for=b\n[b]\nrw=read\n", "defined before the waiter"),
        ("[a]\nrw=read\nwait_for=zz\n", "no earlier job is named 'zz'"),
        ("[a]\nrw=read\nwait_for=a\n", "cannot wait for itself"),
        ("[a]\nrw=read\n[a]\nrw=write\n[c]\nrw=read\nwait_for=a\n", "unique waitee"),
        ("[a]\nrw=read\nexitall\nexit_what=some\n", "exit_what"),
    ],
)
def test_bad_waits_are_refused(body, words):
    with pytest.raises(ConfigError, match=words):
        parse_fio_text(HEAD + body, path="t.fio")


def test_a_waiting_job_with_several_threads_starts_on_idle_cpus():
    """Regression: starting a waiting job's threads (here an offload job: its thread and 4 workers)
    on CPUs that sleep must not switch a CPU in twice (two tasks added while it leaves its C-state)."""
    res = _run(
        "[a]\nrw=randread\nnumber_ios=100\n[b]\nwait_for=a\nrw=randwrite\nio_submit_mode=offload\n"
        "iodepth=4\nnumber_ios=200\n"
    )
    sp = _spans(res)
    assert sp[1][0] >= sp[0][1]
    assert sum(1 for r in res.model.records if r.job == 1) == 200


def test_the_nvme_generic_device_takes_only_passthrough():
    with pytest.raises(ConfigError, match="takes only io_uring_cmd"):
        parse_fio_text(HEAD.replace("/dev/nvme0n1", "/dev/ng0n1") + "[a]\nrw=read\n", path="t.fio")


def test_a_job_that_ends_early_reports_its_own_runtime():
    """fio's runtime is each job's own: a job that stops after 300 IOs while another runs 20 ms
    reports its IOPS over its own few milliseconds, not over the run."""
    res = _run("[short]\nrw=randread\nnumber_ios=300\n[long]\nrw=randread\nruntime=20ms\ntime_based\n")
    short, long_ = res.to_dict()["jobs"]
    sp = _spans(res)
    assert short["read"]["total_ios"] == 300
    own_ms = (sp[0][1]) / 1e6
    assert short["read"]["runtime"] == int(own_ms)
    assert short["read"]["iops"] == pytest.approx(300 / (own_ms / 1e3), rel=0.1)
    assert long_["job_runtime"] == 20
