"""Memory-operation attribution: calibrated on the interrupt and classic-polling columns of
table 2 (4 KiB, 32 threads); hybrid polling's column follows from its mechanism."""

import pytest

from models.os.memops import KEYS, rates_per_s
from models.platforms import POLL_ENERGY_FIT
from scenarios.calibrate_memops import table2
from scenarios.calibrate_poll_energy import run_mode


@pytest.fixture(scope="module")
def runs():
    return {m: run_mode(POLL_ENERGY_FIT, m, runtime_ms=40, threads=32) for m in ("interrupt", "classic_polling", "hybrid_polling")}


def test_keys_and_totals(runs):
    m = runs["interrupt"]["mem_ops_per_s"]
    assert list(m)[: len(KEYS)] == list(KEYS) and "total" in m
    assert m["total"] == pytest.approx(m["block/"] + m["drivers/nvme/host/"] + m["kernel/sched/"] + m["kernel/time/"] + m["other"])
    assert m["blk_poll"] + m["blk_mq_*"] <= m["block/"] + 1


def test_calibrated_columns_agree_in_total_and_in_the_defining_groups(runs):
    meas = table2()
    for mode in ("interrupt", "classic_polling"):
        m = runs[mode]["mem_ops_per_s"]
        assert m["total"] / 1e6 == pytest.approx(meas[mode]["total"], rel=0.15), mode
    # the groups that define each mode
    assert runs["classic_polling"]["mem_ops_per_s"]["blk_poll"] / 1e6 == pytest.approx(meas["classic_polling"]["blk_poll"], rel=0.15)
    assert runs["interrupt"]["mem_ops_per_s"]["blk_poll"] == 0 == meas["interrupt"]["blk_poll"]
    assert runs["interrupt"]["mem_ops_per_s"]["__schedule"] / 1e6 == pytest.approx(meas["interrupt"]["__schedule"], rel=0.15)
    assert runs["classic_polling"]["mem_ops_per_s"]["__schedule"] / 1e6 < 1


def test_hybrid_column_follows_from_timer_sleep_and_partial_polling(runs):
    h = runs["hybrid_polling"]["mem_ops_per_s"]
    i = runs["interrupt"]["mem_ops_per_s"]
    c = runs["classic_polling"]["mem_ops_per_s"]
    assert h["*hrtimer*"] > max(i["*hrtimer*"], c["*hrtimer*"])  # only hybrid arms a timer per IO
    assert 0 < h["blk_poll"] < c["blk_poll"]  # it polls, but only after its sleep
    assert h["__schedule"] > c["__schedule"]  # one context switch per IO


def test_rates_scale_with_cycles():
    intensity = {"polling": {"blk_poll": 0.01}}
    assert rates_per_s(intensity, {"polling": 2e9})["blk_poll"] == pytest.approx(2e7)
