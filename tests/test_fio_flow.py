"""fio's flow control between jobs (issue 18): flow/flow_id/flow_sleep (models/ioengines/flow.py)."""

from __future__ import annotations

import pytest

from models.ioengines.flow import Flow, FlowMember
from scenarios.config.host import resolve
from scenarios.inputs.fio.parser import parse_fio_text
from scenarios.run.simulate import simulate
from simcore.errors import ConfigError

PLATFORM = "optane900p-e3-1230v5"
HEAD = "[global]\nioengine={engine}\ndirect=1\nbs=4k\nfilename=/dev/nvme0n1\nsize=64m\nruntime=10ms\ntime_based\n"


def _jobs(body: str, engine: str = "psync") -> list[dict]:
    cfg = resolve(jobs=list(parse_fio_text(HEAD.format(engine=engine) + body, path="t.fio").jobs), platform=PLATFORM)
    return simulate(cfg).to_dict()["jobs"]


def _ios(entry: dict) -> int:
    return entry["read"]["total_ios"] + entry["write"]["total_ios"]


def test_counters_keep_the_ratio_of_the_weights():
    f = Flow()
    a, b = FlowMember(f, 3), FlowMember(f, 1)
    a.join()
    b.join()
    went = {"a": 0, "b": 0}
    for _ in range(400):  # both try in turn; only the one within its share goes
        for name, m in (("a", a), ("b", b)):
            if m.take():
                went[name] += 1
    assert went["a"] == pytest.approx(3 * went["b"], rel=0.02)


@pytest.mark.parametrize("engine", ["psync", "libaio"])
def test_jobs_share_ios_by_weight(engine):
    heavy, light = _jobs("[heavy]\nrw=randread\nflow=3\niodepth=4\n[light]\nrw=randread\nflow=1\niodepth=4\n", engine)
    assert _ios(heavy) / _ios(light) == pytest.approx(3.0, rel=0.05)


def test_a_held_back_thread_spins_in_user_space():
    heavy, light = _jobs("[heavy]\nrw=randread\nflow=3\n[light]\nrw=randread\nflow=1\n")
    assert light["usr_cpu"] > 40  # fio's loop spins while the flow holds it back


def test_flow_sleep_sleeps_instead_of_spinning():
    heavy, light = _jobs("[heavy]\nrw=randread\nflow=3\n[light]\nrw=randread\nflow=1\nflow_sleep=20\n")
    assert light["usr_cpu"] < 10
    assert _ios(heavy) > 2.5 * _ios(light)  # it sleeps at least 20 us each time it is held


def test_separate_flow_ids_do_not_interact():
    a, b, c = _jobs("[a]\nrw=randread\nflow=3\nflow_id=1\n[b]\nrw=randread\nflow=1\nflow_id=2\n[c]\nrw=randread\n")
    assert _ios(a) == pytest.approx(_ios(b), rel=0.1) == pytest.approx(_ios(c), rel=0.1)


def test_a_job_that_ended_leaves_the_flow():
    short, long_ = _jobs("[short]\nrw=randread\nflow=10\nnumber_ios=50\ntime_based=0\n[long]\nrw=randread\nflow=1\n")
    assert _ios(short) == 50
    assert _ios(long_) > 500  # not held back at 1:10 once 'short' is gone


def test_negative_flow_is_refused():
    with pytest.raises(ConfigError, match="negative flow"):
        parse_fio_text(HEAD.format(engine="psync") + "[j]\nrw=read\nflow=-1\n", path="t.fio")
