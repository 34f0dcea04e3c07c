"""fio's steadystate detection (models/ioengines/steadystate.py, issue 18)."""

from __future__ import annotations

import pytest

from scenarios.config.host import resolve
from scenarios.inputs.fio.parser import parse_fio_text
from scenarios.run.simulate import simulate
from simcore.errors import ConfigError


def _run(**sets):
    cfg = resolve(scenario="default", sets={"runtime": "2s", "ramp_time": "0", **sets})
    res = simulate(cfg, keep_model=True)
    return cfg, res


def test_a_steady_job_ends_once_its_window_is_steady():
    """4 KiB random reads on one thread are steady within a few percent from the start: with
    iops:5% over a 50 ms window of 10 ms measurements (after 20 ms of ramp) the job ends at the
    first full window, long before its 2 s runtime, and fio's JSON says it attained."""
    cfg, res = _run(
        steadystate="iops:5%",
        steadystate_duration="50ms",
        steadystate_ramp_time="20ms",
        steadystate_check_interval="10ms",
    )
    ((_ji, threads, check),) = res.run.steady
    assert check.attained and len(check.window) == 5
    mean = sum(check.window) / 5
    assert all(abs(x - mean) <= 0.05 * mean for x in check.window)
    assert res["sim"]["measured_s"] < 0.2  # ended around 20 + 50 ms, not at 2 s (fio's runtime ends with the job)
    assert res["summary"]["iops"] == pytest.approx(mean, rel=0.05)
    ss = res["jobs"][0]["steadystate"]
    assert ss["attained"] == 1 and ss["ss"] == "iops:5%" and ss["max_deviation"] == check.value


def test_an_impossible_criterion_runs_to_the_end_unattained():
    cfg, res = _run(
        runtime="200ms", steadystate="lat:0", steadystate_duration="50ms", steadystate_check_interval="10ms"
    )
    ((_ji, _threads, check),) = res.run.steady
    assert not check.attained  # random service times never give identical mean latencies
    assert res["jobs"][0]["steadystate"]["attained"] == 0


def test_slope_criterion_uses_the_least_squares_slope():
    from models.ioengines.steadystate import SteadyState

    class _Eng:
        def call_at(self, *a):
            pass

    s = SteadyState(_Eng(), [], "iops_slope", 1.0, False, 4e9, 0.0, 1e9, 0.0)
    s.window.extend([10.0, 12.0, 14.0, 16.0])
    assert not s._steady() and s.value == pytest.approx(2.0)
    s.window.extend([10.0, 10.5, 11.0, 11.5])
    assert s._steady() and s.value == pytest.approx(0.5)


@pytest.mark.parametrize(
    "text, words",
    [
        ("steadystate=iops", "criterion:limit"),
        ("steadystate=speed:1", "criterion:limit"),
        ("steadystate=iops:abc", "not a number"),
    ],
)
def test_bad_steadystate_values_are_refused(text, words):
    base = "[j]\nioengine=psync\ndirect=1\nrw=randread\nruntime=1s\n"
    with pytest.raises(ConfigError, match=words):
        parse_fio_text(base + text + "\n")
