"""fio's ``ioscheduler`` (issue 46): fio switches the job's devices to the scheduler before the run;
stacksim runs the job with it in place of the platform's, its tunables at their defaults."""

from __future__ import annotations

import pytest

from scenarios.config.host import resolve
from scenarios.inputs.fio.parser import job_from_options
from scenarios.run.iosched_switch import switched_queue
from scenarios.run.simulate import simulate
from simcore.errors import ConfigError
from tests.conftest import make_cfg

SHORT = {"runtime": "8ms", "ramp_time": "2ms", "time_based": "1", "iodepth": "4"}


def _job_file(tmp_path, text: str) -> str:
    p = tmp_path / "j.fio"
    p.write_text(text)
    return str(p)


def test_the_option_is_parsed_and_echoed():
    cfg = make_cfg(extra={"ioscheduler": "mq-deadline"})
    assert cfg.jobs[0].ioscheduler == "mq-deadline"
    assert make_cfg().jobs[0].ioscheduler is None
    with pytest.raises(ConfigError, match="ioscheduler"):
        make_cfg(extra={"ioscheduler": " "})


def test_a_jobs_scheduler_runs_as_the_platforms_would():
    """ioscheduler=mq-deadline in the job gives the run the platform with queue.scheduler=mq-deadline
    gives: the same figures, IO for IO (and not those of the platform's own 'none')."""
    extra = {**SHORT, "ioengine": "io_uring", "rw": "randread"}
    r = simulate(make_cfg(extra={**extra, "ioscheduler": "mq-deadline"}), keep_model=True)
    assert r.model.queue.scheduler == "mq-deadline"
    cfg = make_cfg(extra=extra)
    by_job, by_platform = r.summary, simulate(cfg.with_queue(scheduler="mq-deadline")).summary
    plain = simulate(cfg).summary
    assert by_job["ios"] == by_platform["ios"] and by_job["latency_us"] == by_platform["latency_us"]
    assert by_job["latency_us"] != plain["latency_us"]  # kblockd dispatch and the elevator's cycles


def test_a_switch_resets_the_tunables_and_the_same_scheduler_keeps_them():
    cfg = make_cfg(extra={**SHORT, "ioscheduler": "mq-deadline"})
    kyber = cfg.queue.model_copy(update={"scheduler": "kyber", "iosched": {"read_lat_nsec": 500_000}})
    q = switched_queue(kyber, cfg.jobs)
    assert (q.scheduler, q.iosched) == ("mq-deadline", {})  # kyber's tunable would be refused by mq-deadline
    tuned = kyber.model_copy(update={"scheduler": "mq-deadline", "iosched": {"read_expire": 7}})
    assert switched_queue(tuned, cfg.jobs) is tuned  # elevator_change: the same one is no switch
    # the run itself starts (kyber's tunable left behind, not refused by mq-deadline)
    r = simulate(cfg.with_queue(scheduler="kyber", iosched={"read_lat_nsec": 500_000}), keep_model=True)
    assert r.model.queue.scheduler == "mq-deadline" and r.summary["ios"] > 0


def test_an_unknown_scheduler_is_one_clear_error():
    with pytest.raises(ConfigError) as e:
        simulate(make_cfg(extra={**SHORT, "ioscheduler": "deadline"}))
    msg = str(e.value)
    assert "job 'interrupt': ioscheduler=deadline: no such IO scheduler" in msg
    assert "mq-deadline" in msg and "kyber" in msg


def test_engines_without_a_block_device_are_not_switched():
    cfg = make_cfg()
    job = job_from_options({"ioengine": "null", "ioscheduler": "nosuch", "runtime": "1ms"}, name="n")
    assert switched_queue(cfg.queue, (job,)) is cfg.queue


def test_jobs_with_different_schedulers_are_refused(tmp_path):
    f = _job_file(
        tmp_path,
        "[global]\nrw=randread\nruntime=5ms\ntime_based\n[a]\nioscheduler=mq-deadline\n[b]\nioscheduler=kyber\n",
    )
    with pytest.raises(ConfigError, match="jobs 'a' and 'b' set different IO schedulers"):
        simulate(resolve(job_file=f, platform="optane900p-e3-1230v5"))


def test_a_job_that_does_not_switch_on_a_device_of_its_own_is_refused(tmp_path):
    jobs = (
        "[global]\nrw=randread\nruntime=5ms\ntime_based\nsize=64m\n"
        "[a]\nioscheduler=mq-deadline\nfilename=/dev/nvme0n1\n[b]\nfilename=/dev/nvme{}n1\n"
    )
    with pytest.raises(ConfigError, match="job 'b' sets no ioscheduler and uses SSD 1"):
        simulate(
            resolve(
                job_file=_job_file(tmp_path, jobs.format(1)), platform="optane900p-e3-1230v5", sets={"ssd_count": 2}
            )
        )
    # on the device job a switched, job b runs with mq-deadline too (as with fio)
    r = simulate(
        resolve(job_file=_job_file(tmp_path, jobs.format(0)), platform="optane900p-e3-1230v5", sets={"ssd_count": 2}),
        keep_model=True,
    )
    assert r.model.queue.scheduler == "mq-deadline"
