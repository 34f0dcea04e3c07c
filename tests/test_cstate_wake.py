"""A C-state's wake-up time (``wake_ns``) apart from the worst case its driver declares
(``exit_latency_ns``): the governors and PM QoS choose by the declared latency, an interrupt or a
wake-up waits for the core's real exit (models/cpu/config.py CStateConfig, models/os/sched/idle.py,
models/os/irq/entry.py)."""

from __future__ import annotations

import pytest

from models.cpu.config import CStateConfig
from models.cpu.presets import CPU_CATALOGUE
from models.platforms import CHEOPS23_C1_WAKE_NS, PLATFORMS, optane900p_e3_1230v5
from scenarios.config.host import RunConfig
from scenarios.inputs.fio.parser import job_from_options
from scenarios.run.simulate import simulate
from simcore.config import validate
from simcore.errors import ConfigError


def _run(wake_us: float | None) -> dict:
    """libaio at depth 1 (its thread waits outside IO wait: the menu governor picks C1 between IOs)
    on a CPU with POLL and C1 only, C1 waking in ``wake_us`` (None: its declared 2 us)."""
    plat = optane900p_e3_1230v5()
    cstates = list(plat.cpu.cstates[:2])
    cstates[1] = cstates[1].model_copy(update={"wake_ns": None if wake_us is None else wake_us * 1e3})
    plat = plat.model_copy(update={"cpu": plat.cpu.model_copy(update={"cstates": tuple(cstates)})})
    opts = {"rw": "randread", "bs": "4k", "direct": "1", "ioengine": "libaio", "iodepth": "1"}
    job = job_from_options({**opts, "runtime": "20ms", "time_based": "1", "cpus_allowed": "1"}, name="j")
    return simulate(RunConfig(name="t", platform=plat, queue=plat.queue, jobs=(job,), seed=5)).summary


def test_an_interrupt_waits_for_the_cores_exit_not_the_declared_worst_case():
    declared, real = _run(None), _run(0.5)
    for s in (declared, real):  # the governor chose C1 for almost every wait, both times
        assert s["cstate_residency"]["cpu1"]["C1"] > 0.2
    per_io = {k: s["cstate_exit_ns_per_io"] for k, s in (("declared", declared), ("real", real))}
    assert per_io["declared"] == pytest.approx(2000.0, rel=0.05)
    assert per_io["real"] == pytest.approx(500.0, rel=0.05)
    # the 1.5 us saved per wake-up is on each IO's path
    gain_us = declared["latency_us"]["mean"] - real["latency_us"]["mean"]
    assert gain_us == pytest.approx(1.5, rel=0.15)


def test_the_governor_still_chooses_by_the_declared_latency():
    """PM QoS and the menu governor compare exit_latency_ns: C1's residency is the same whether it
    wakes in 0.5 or 2 us, apart from the shorter IO cycle."""
    declared, real = _run(None), _run(0.5)
    assert declared["cstate_residency"]["cpu1"].get("POLL", 0.0) == pytest.approx(
        real["cstate_residency"]["cpu1"].get("POLL", 0.0), abs=0.02
    )


C1 = {"name": "C1", "exit_latency_ns": 2000, "target_residency_ns": 2000, "power_w": 1}


def test_a_wake_time_longer_than_the_declared_worst_case_is_refused():
    with pytest.raises(ConfigError) as e:
        validate(CStateConfig, {**C1, "wake_ns": 3000}, where="cstates[1]")
    assert "wake_ns" in str(e.value)


def test_presets_wake_in_the_declared_latency_unless_calibrated():
    """No preset states a wake time of its own (no published split of C1's exit from the software
    path): the declared worst case; a platform states its estimate (cheops23-optane's C1)."""
    for name, preset in CPU_CATALOGUE.items():
        assert all(s.wake_ns is None for s in preset.make().cstates), name
    c1 = PLATFORMS["cheops23-optane"]().cpu.cstates[1]
    assert c1.name == "C1" and c1.wake_ns == CHEOPS23_C1_WAKE_NS < c1.exit_latency_ns
