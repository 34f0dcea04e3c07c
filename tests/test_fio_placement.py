"""fio's CPU placement of job threads: cpus_allowed / cpumask with cpus_allowed_policy=split (fio's
fio_cpus_split: one CPU per thread by fio's thread number) or shared (the kernel's fork balancing:
idlest physical core, then idlest CPU); without a CPU set, round-robin over all CPUs."""

import pytest

from scenarios.config.host import resolve
from scenarios.inputs.fio.parser import parse_fio_text
from scenarios.run.simulate import simulate

PLATFORM = "optane900p-e3-1230v5"  # 4 cores, SMT: CPU i and i + 4 are siblings
_HEAD = "[global]\nioengine=psync\ndirect=1\nrw=randread\nruntime=1ms\ntime_based\n"


def _cpus(body):
    jobs = list(parse_fio_text(_HEAD + body, path="t.fio").jobs)
    res = simulate(resolve(jobs=jobs, platform=PLATFORM), keep_model=True)
    return [th.placed_cpu for th in res.run.threads]  # where each started (the scheduler may move them later)


def test_no_cpu_set_is_round_robin_over_all_cpus():
    assert _cpus("[a]\nnumjobs=3\n[b]\nnumjobs=2\n") == [0, 1, 2, 3, 4]


def test_split_gives_each_thread_the_next_cpu_by_thread_number():
    # fio_cpus_split(mask, thread_number - 1): thread numbers run over all jobs
    assert _cpus(
        "[a]\nnumjobs=2\ncpus_allowed=0-3\ncpus_allowed_policy=split\n"
        "[b]\nnumjobs=3\ncpus_allowed=0-3\ncpus_allowed_policy=split\n"
    ) == [0, 1, 2, 3, 0]
    assert _cpus("[a]\nnumjobs=4\ncpumask=0x6\ncpus_allowed_policy=split\n") == [1, 2, 1, 2]


def test_shared_spreads_over_idle_cores_first():
    # the set is all 8 CPUs: one thread per physical core before any SMT sibling
    assert _cpus("[a]\nnumjobs=5\ncpus_allowed=0-7\n") == [0, 1, 2, 3, 4]
    # CPU 0 is busy with job a: the shared job goes to idle core 1 first, then to the idle sibling
    # of the equally loaded core with the lower number (4), then to core 1's sibling
    assert _cpus("[a]\ncpus_allowed=0\n[b]\nnumjobs=3\ncpus_allowed=0,4,1,5\n") == [0, 1, 4, 5]


def test_shared_on_two_siblings_fills_both():
    assert _cpus("[a]\nnumjobs=3\ncpus_allowed=4,0\n") == [0, 4, 0]


@pytest.mark.parametrize("policy", ["split", "shared"])
def test_placement_is_deterministic(policy):
    body = f"[a]\nnumjobs=6\ncpus_allowed=1-6\ncpus_allowed_policy={policy}\n"
    assert _cpus(body) == _cpus(body)
