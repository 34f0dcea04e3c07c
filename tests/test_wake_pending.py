"""A wake-up on its way through another CPU's wake list makes that CPU busy to select_idle_sibling
(6.1 kernel/sched/core.c idle_cpu: ``rq->ttwu_pending``). Without it, wake-ups that land within one
IPI's flight all pick the same idle CPU and stack tasks there while other CPUs idle."""

from __future__ import annotations

from models.os.sched.placement import is_idle
from models.platforms import compose_platform
from scenarios.config.host import RunConfig
from scenarios.inputs.fio.parser import job_from_options
from tests.test_async_io import cfg, run_to_completion


def _jobs(n: int):
    opts = {
        "rw": "randread",
        "bs": "4k",
        "direct": "1",
        "runtime": "8ms",
        "ramp_time": "2ms",
        "time_based": "1",
        "ioengine": "io_uring",
        "iodepth": "128",
    }
    return tuple(job_from_options(opts, name=f"j{i}") for i in range(n))


def test_a_cpu_with_a_pending_remote_wakeup_is_not_idle():
    host = run_to_completion(cfg({"ioengine": "psync"}, runtime_ms=1))
    r = host.runners[3]
    assert is_idle(r)
    r.ttwu_pending += 1
    assert not is_idle(r)
    r.ttwu_pending -= 1


def test_woken_threads_spread_over_idle_cpus_not_stacked():
    """Ten io_uring processes at depth 128 on one SSD with kyber, a 10-core Xeon Silver 4210R with SMT
    and Linux 6.6 (every insert run by kblockd, whose worker preempts each thread): their first
    completions wake them within microseconds of each other, each from its own CPU; each goes to an
    idle CPU of its own, none shares one with another fio thread (they stacked three to a CPU, with
    the device and the CPUs both far from busy, when the wake list was not counted)."""
    plat, _sources = compose_platform(cpu="xeon-silver-4210r", sockets=1, ssd="samsung-980pro", ssds=1, kernel="6.6")
    queue = plat.queue.model_copy(update={"scheduler": "kyber"})
    host = run_to_completion(RunConfig(name="t", platform=plat, queue=queue, jobs=_jobs(10), seed=3))
    fio = [t for t in host.all_tasks if t.job is not None and t.owner is not None and not t.kthread]
    cpus = [t.cpu for t in fio]
    assert len(fio) == 10 and len(set(cpus)) == 10, cpus
    assert all(r.ttwu_pending == 0 for r in host.runners)  # every queued wake-up arrived
