"""Same configuration and seed: identical results, bit for bit."""

import json

from scenarios.run.simulate import simulate
from tests.conftest import make_cfg


def _strip(result):
    result = dict(result)
    result["sim"] = {k: v for k, v in result["sim"].items() if k in ("simulated_s", "events", "measured_s")}
    return json.dumps(result, sort_keys=True)


def test_same_seed_identical_json():
    for mode in ("interrupt", "hybrid"):
        a = simulate(make_cfg(mode, threads=4, runtime_ms=10, seed=11))
        b = simulate(make_cfg(mode, threads=4, runtime_ms=10, seed=11))
        assert _strip(a) == _strip(b)


def test_different_seed_differs():
    a = simulate(make_cfg("interrupt", runtime_ms=10, seed=1))
    b = simulate(make_cfg("interrupt", runtime_ms=10, seed=2))
    assert a["summary"]["latency_us"] != b["summary"]["latency_us"]
