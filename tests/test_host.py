"""The host is a typed assembly (models/host.py, issue 29): every field it has is declared, typed, in
its class body; no other module adds one at run time; fio's run of its jobs lives apart from it
(models/ioengines/fio_run.py) and learns task exits through the host's kernel-terms hook."""

from __future__ import annotations

import typing
from pathlib import Path

from models.host import Host
from models.ioengines.fio_run import FioRun
from scenarios.config.host import resolve
from scenarios.data.traces import make_samples
from scenarios.inputs.fio.parser import parse_fio_text
from scenarios.run.assembly import build_run
from scenarios.run.replay import resolve_replay
from scenarios.run.simulate import simulate

PLAT = "optane900p-e3-1230v5"
MSR = Path(make_samples.__file__).parent / "msr_sample.csv"


def test_every_field_is_declared_with_a_type():
    hints = typing.get_type_hints(Host)  # each declaration resolves to a type
    assert set(hints) == set(Host.__annotations__) and len(hints) > 20
    assert typing.Any not in hints.values()


def _fields_after(result) -> set[str]:
    host = result.model
    assert isinstance(host, Host)
    return set(vars(host))


def test_a_fio_run_adds_no_field_to_the_host():
    """A run with what touched the host most (job control waits and ends, steady state, SQPOLL,
    placement by the scheduler) leaves it with exactly its declared fields, none of them fio's."""
    text = (
        "[global]\ndirect=1\nbs=4k\nrw=randread\nfilename=/dev/nvme0n1\nruntime=5ms\ntime_based\n"
        "[a]\nioengine=pvsync2\nnumjobs=2\nexitall\n"
        "[b]\nioengine=io_uring\nsqthread_poll=1\niodepth=4\nstonewall\nsteadystate=iops:50%\n"
        "steadystate_duration=2ms\nsteadystate_check_interval=1ms\n"
    )
    cfg = resolve(jobs=list(parse_fio_text(text, path="t.fio").jobs), platform=PLAT, sets={"sched.placement": "cfs"})
    res = simulate(cfg, keep_model=True)
    assert _fields_after(res) == set(Host.__annotations__)
    assert not any("fio" in name or name in ("threads", "steady", "job_control") for name in vars(res.model))
    fio = res.run
    assert isinstance(fio, FioRun) and len(fio.threads) == 3 and len(fio.steady) == 1
    assert fio.live == 0 and fio.job_control.exited_ns[1] is not None  # every thread exited; 'b' ran after 'a'


def test_a_replay_adds_no_field_to_the_host():
    res = simulate(resolve_replay(str(MSR), "msr", platform=PLAT, sets={"replay.threads": 2}), keep_model=True)
    assert _fields_after(res) == set(Host.__annotations__)
    assert res.run is None  # the replayer has its own threads; no fio run


def test_fio_s_run_registers_for_the_kernel_s_task_exits():
    """The kernel tells ``Host.on_task_exit`` that a task exited; fio's run counts its threads down
    and ends the run with the last one."""
    cfg = resolve(scenario="default", sets={"runtime": "1ms", "ramp_time": "0", "numjobs": "2"})
    host, fio, _ramp, _end = build_run(cfg)
    assert host.on_task_exit == fio.task_exited
    ended = []
    fio.on_all_exited = ended.append
    tasks = [th.task for th in fio.threads]
    host.task_exited(1000.0, tasks[0])
    assert fio.live == 1 and ended == []
    host.task_exited(2000.0, tasks[1])
    assert fio.live == 0 and ended == [2000.0]
    assert fio.job_control.exited_ns == [2000.0]  # the job's end: its last thread's exit
