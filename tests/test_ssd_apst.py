"""models/ssd/apst.py: autonomous power state transitions of an idle NVMe controller."""

from __future__ import annotations

import numpy as np
import pytest

from models.ssd.apst import ApstState, apst_steps
from models.ssd.config import ApstConfig, PowerStateConfig
from models.ssd.presets import optane_900p
from scenarios.config.host import resolve
from scenarios.run.simulate import simulate
from simcore.errors import ConfigError

MS = 1e6
PS3 = PowerStateConfig(name="PS3", power_w=0.05, entry_latency_ns=2 * MS, exit_latency_ns=10 * MS)  # 12 ms total
PS4 = PowerStateConfig(name="PS4", power_w=0.005, entry_latency_ns=10 * MS, exit_latency_ns=40 * MS)  # 50 ms
PS5 = PowerStateConfig(name="PS5", power_w=0.001, entry_latency_ns=50 * MS, exit_latency_ns=100 * MS)  # 150 ms
STATES = (
    "[{name: PS3, power_w: 0.05, entry_latency_ns: 2e6, exit_latency_ns: 1e7}, "
    "{name: PS4, power_w: 0.005, entry_latency_ns: 1e7, exit_latency_ns: 4e7}]"
)


def device(*states, **apst):
    return optane_900p().model_copy(update={"power_states": states, "apst": ApstConfig(**apst)})


def test_linux_programs_a_primary_and_a_secondary_target():
    steps = apst_steps(device(PS3, PS4, PS5))
    # PS5 (150 ms) exceeds the secondary tolerance (100 ms): unused; PS4 (50 ms) is the secondary
    assert [(w / MS, ps.name) for w, ps in steps] == [(100.0, "PS3"), (2000.0, "PS4")]
    assert [ps.name for _w, ps in apst_steps(device(PS4))] == ["PS4"]  # no primary: PS0 -> PS4 after 2 s
    assert apst_steps(device(PS4))[0][0] == 2000 * MS
    assert [ps.name for _w, ps in apst_steps(device(PS3, PS4, ps_max_latency_us=20_000))] == ["PS3"]
    assert apst_steps(device(PS3, PS4, enabled=False)) == [] and apst_steps(device()) == []
    assert [ps.name for _w, ps in apst_steps(device(PS3, PS4, secondary_timeout_ms=0))] == ["PS3"]


def test_wake_delay_residency_and_credit_through_an_idle_period():
    cfg = device(PS3, PS4)
    a = ApstState(cfg, apst_steps(cfg))
    a.on_submit(0.0)
    a.on_complete(1.0 * MS, media_free_at=0.5 * MS)  # idle from 1 ms
    assert a.credit_j_at(50 * MS) == 0.0  # still in PS0
    # PS3 entry runs 101..103 ms; in PS3 from 103 ms; PS4 entry from 2103 ms, in PS4 from 2113 ms
    assert a.residency_ns_at(1103 * MS) == {"PS3": 1000 * MS, "PS4": 0.0}
    assert a.credit_j_at(1103 * MS) == pytest.approx((cfg.idle_w - 0.05) * 1.0)
    assert a.on_submit(102 * MS) == pytest.approx(102 * MS + 1 * MS + 10 * MS)  # finish the entry, then exit
    a.on_complete(113.01 * MS, media_free_at=0.0)
    t = 113.01 * MS + 2200 * MS  # idle long enough for PS4
    assert a.on_submit(t) == pytest.approx(t + 40 * MS)
    assert a.wakeups == {"PS3": 1, "PS4": 1}
    assert a.residency_ns["PS4"] == pytest.approx(2200 * MS - 2112 * MS)  # in PS4 from 2112 ms after the idle start
    assert a.on_submit(t + 1 * MS) == pytest.approx(t + 40 * MS)  # a second command waits for the same wake-up


def test_idleness_starts_when_the_media_is_done():
    cfg = device(PS3)
    a = ApstState(cfg, apst_steps(cfg))
    a.on_submit(0.0)
    a.on_complete(1 * MS, media_free_at=5 * MS)  # a cached write still programming until 5 ms
    assert a.on_submit(104 * MS) == 104 * MS  # 99 ms of idleness: still PS0
    a.on_complete(105 * MS, media_free_at=0.0)
    assert a.on_submit(206 * MS) == pytest.approx(206 * MS + 1 * MS + 10 * MS)  # entering PS3 (205..207 ms)


def test_thinktime_workload_pays_exit_latency_and_saves_power():
    """fio with 150 ms of thinktime: each IO finds the SSD in PS3 (entered after 100 ms idle + 2 ms)
    and waits its 10 ms exit; the SSD spends ~30% of the time at 0.05 W."""
    sets = {"runtime": "2s", "ramp_time": "0", "thinktime": "150ms", "ssd.power_states": STATES}
    r = simulate(resolve(sets=sets), records=True)
    s = r["summary"]
    ps = s["ssd_power_states"]["ssd0"]
    assert ps["PS4"] == {"residency": 0.0, "wakeups": 0}
    assert ps["PS3"]["wakeups"] == s["ios"] - 1  # all but the first IO
    # the 10 ms wait also lets the IO thread's CPU reach its deepest C-state (C8: 200 us exit);
    # medians of the exact latencies (the summary's come from a histogram 1/128 coarse)
    c8_exit_us = resolve(sets={}).platform.cpu.cstates[-1].exit_latency_ns / 1e3
    assert median_latency_us(r) == pytest.approx(10_000 + c8_exit_us + run_plain_latency_us(), abs=5)
    idle_w = resolve(sets={}).platform.ssd.idle_w
    busy_w = s["power_w"]["ssd"] - idle_w * (1 - ps["PS3"]["residency"]) - 0.05 * ps["PS3"]["residency"]
    assert 0 <= busy_w < 0.01  # what is left is the media's few busy microseconds


def median_latency_us(result) -> float:
    rec = result.records
    return float(np.median(rec["t_complete_ns"] - rec["t_submit_ns"])) / 1e3


def run_plain_latency_us() -> float:
    return median_latency_us(simulate(resolve(sets={"runtime": "20ms"}), records=True))


def test_no_power_states_no_apst_section():
    r = simulate(resolve(sets={"runtime": "5ms"}))
    assert "ssd_power_states" not in r["summary"]


def test_bad_power_state_is_a_config_error():
    with pytest.raises(ConfigError, match="power_w"):
        resolve(sets={"ssd.power_states": "[{name: PS3, power_w: -1, entry_latency_ns: 1, exit_latency_ns: 1}]"})
