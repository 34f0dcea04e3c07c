"""Device-side interrupt generation: each policy's defining timeline on hand-built completion
streams, the driver's out-of-order Urgent reaping, storm protection, OS annotations, and the
calibration of the two calibrated-interrupts platforms."""

import pytest

from models.os.block.request import Request
from policies.interrupt_generation import BARRIER, IRQ_GENERATION, URGENT, IrqConfig
from scenarios.config.host import RunConfig
from scenarios.inputs.fio.parser import job_from_options
from scenarios.run.assembly import build_run
from scenarios.run.simulate import simulate
from scenarios.studies.calibrate_cinterrupts import CINTERRUPTS_FIT, DEVICES, run_point, targets
from simcore.engine import Engine


class FakeQP:
    def __init__(self):
        self.fired = []  # (time, urgent_only)
        self.engine = None

    def on_irq(self, qp, urgent_only):
        self.fired.append((self.engine.now, urgent_only))


def stream(policy, cfg, events):
    """events: list of (time_ns, kind, flags, seq); kind 'submit' or 'complete'."""
    eng = Engine()
    qp = FakeQP()
    qp.engine = eng
    gen = IRQ_GENERATION.get(policy)(qp, cfg, eng)
    for t, kind, flags, seq in events:
        req = Request(seq, None, 0, "read", 4096, 0, 0, False)
        req.flags = flags
        req.sq_seq = seq
        eng.call_at(t, gen.on_submit if kind == "submit" else gen.on_completion, req)
    eng.run(10_000_000)
    return qp.fired, gen


def completions(times, flags=0):
    return [(t, "complete", flags, i) for i, t in enumerate(times)]


def test_none_fires_per_completion():
    fired, _ = stream("none", IrqConfig(), completions([1000, 2000, 2500]))
    assert [t for t, _ in fired] == [1000, 2000, 2500]


def test_nvme_fires_at_threshold_or_time():
    # threshold 0's based: irq_thr=3 -> 4 completions
    fired, _ = stream("nvme", IrqConfig(irq="nvme", irq_thr=3, irq_time_100us=2), completions([0, 10, 20, 30, 40]))
    assert fired[0] == (30, False)  # the 4th completion
    assert fired[1] == (40 + 200_000, False)  # the 5th waits for the 200 us aggregation time
    fired, _ = stream(
        "nvme", IrqConfig(irq="nvme", irq_thr=3, irq_time_100us=2, irq_vector_disable=True), completions([0, 10])
    )
    assert [t for t, _ in fired] == [0, 10]


def test_adaptive_fires_delta_after_the_last_completion_of_a_burst_or_at_thr():
    cfg = IrqConfig(irq="adaptive", irq_delta_us=6, irq_thr=4)
    fired, _ = stream("adaptive", cfg, completions([0, 2000, 4000]))  # one burst of 3
    assert fired == [(4000 + 6000, False)]
    fired, _ = stream("adaptive", cfg, completions([0, 1000, 2000, 3000, 4000]))
    assert fired[0] == (3000, False)  # thr reached at the 4th
    assert fired[1] == (4000 + 6000, False)


def test_cinterrupts_urgent_fires_at_once_and_ooo():
    cfg = IrqConfig(irq="cinterrupts", irq_delta_us=6, irq_thr=32, irq_ooo=True)
    ev = [(0, "complete", 0, 0), (1000, "complete", URGENT, 1)]
    fired, _ = stream("cinterrupts", cfg, ev)
    assert fired[0] == (1000, True)  # urgent-only interrupt at once
    assert fired[1] == (6000, False)  # the untagged one waits for its own (adaptive) interrupt


def test_cinterrupts_barrier_fires_when_its_batch_is_done():
    relaxed = IrqConfig(irq="cinterrupts", irq_delta_us=6, irq_thr=32)
    ev = [
        (0, "submit", 0, 0),
        (0, "submit", 0, 1),
        (0, "submit", BARRIER, 2),
        (1000, "complete", BARRIER, 2),
        (3000, "complete", 0, 0),
        (3500, "complete", 0, 1),
    ]
    fired, _ = stream("cinterrupts", relaxed, ev)
    assert fired[0] == (1000, False)  # relaxed Barrier behaves like Urgent
    strict = relaxed.model_copy(update={"irq_strict_barrier": True})
    fired, _ = stream("cinterrupts", strict, ev)
    assert fired[0] == (3500, False)  # strict: only when every earlier request of the SQ is done


def test_storm_protection_keeps_the_long_run_rate_under_the_maximum():
    cfg = IrqConfig(irq="cinterrupts", irq_delta_us=6, irq_thr=32, irq_max_rate=100_000)
    times = [i * 2000 for i in range(5000)]  # 500K urgent completions per second for 10 ms
    fired, gen = stream("cinterrupts", cfg, completions(times, URGENT))
    span_s = (times[-1] - times[0]) / 1e9
    assert len(fired) / span_s < 1.1 * 100_000
    assert gen.throttled > 0
    fired_off, _ = stream("cinterrupts", cfg.model_copy(update={"irq_max_rate": 0}), completions(times, URGENT))
    assert len(fired_off) == len(times)


def _cfg(platform, jobs_opts, runtime_ms=30, nvme=None):
    plat = platform
    if nvme:
        plat = plat.model_copy(update={"nvme": plat.nvme.model_copy(update=nvme)})
    base = {
        "rw": "randread",
        "bs": "4k",
        "direct": "1",
        "runtime": f"{runtime_ms}ms",
        "ramp_time": "5ms",
        "time_based": "1",
        "cpus_allowed": "0",
    }
    jobs = tuple(job_from_options({**base, **o}, name=n) for n, o in jobs_opts.items())
    return RunConfig(name="ci", platform=plat, queue=plat.queue, jobs=jobs, seed=3)


def test_os_annotations_and_ooo_reaping_in_a_mixed_run():
    from models.platforms import optane_p4800x_e5_2660v4

    c = _cfg(
        optane_p4800x_e5_2660v4(),
        {
            "sync": {"ioengine": "pvsync2"},
            "aio": {
                "ioengine": "libaio",
                "iodepth": "32",
                "iodepth_batch_submit": "16",
                "iodepth_batch_complete_min": "16",
                "iodepth_batch_complete_max": "32",
            },
        },
        nvme={"irq": "cinterrupts"},
    )
    host, _fio, ramp, end = build_run(c, keep_requests=True)
    host.engine.run(end + 5e6)
    sync = [r for r in host.records if r.job == 0]
    aio = [r for r in host.records if r.job == 1]
    assert all(r.flags & URGENT for r in sync)
    barriers = sum(1 for r in aio if r.flags & BARRIER)
    assert 0 < barriers < len(aio) / 4  # the last request of each batch of 16
    assert host.next_io_id == len(host.records)
    res = simulate(c)["summary"]
    assert res["per_job"][0]["latency_us"]["p50"] < res["per_job"][1]["latency_us"]["p50"]
    assert res["completions_per_interrupt"] > 1.0


def test_urgent_hint_override_and_metrics_shape():
    from models.platforms import optane_p4800x_e5_2660v4

    c = _cfg(
        optane_p4800x_e5_2660v4(),
        {"aio": {"ioengine": "libaio", "iodepth": "8", "stacksim_irq_hint": "untagged"}},
        nvme={"irq": "cinterrupts"},
    )
    s = simulate(c)["summary"]
    assert s["completions_per_interrupt"] > 1.5  # untagged: coalesced by the adaptive rule
    assert set(s["completion_interarrival_us"]) >= {"p50", "p90", "p99"}
    assert "cpu0" in s["interrupts_per_s_per_cpu"]


@pytest.mark.parametrize("device", list(DEVICES))
def test_calibration_sync_latency_within_5_percent(device):
    meas = targets()[device]
    for mode in ("interrupts", "polling"):
        s = run_point(CINTERRUPTS_FIT, device, mode, runtime_ms=150)
        assert s["mean"] == pytest.approx(meas[mode]["mean_us"], rel=0.05), (device, mode)


def test_interrupt_cost_is_the_published_1500_cycles():
    from models.platforms import optane_p4800x_e5_2660v4, p3700_e5_2660v4
    from scenarios.data import reference

    k = optane_p4800x_e5_2660v4().kernel
    # entry/exit + CQ reap + request completion + waking the blocked task
    total = k.irq_entry_cycles + k.nvme_complete_cycles + k.blk_complete_cycles + k.wakeup_cycles
    assert total == pytest.approx(reference.values("calibrated_interrupts", "interrupt_cost")["cycles"])
    chosen = reference.values("calibrated_interrupts", "chosen_parameters")
    for plat, device in ((optane_p4800x_e5_2660v4(), "optane"), (p3700_e5_2660v4(), "p3700")):
        assert (plat.nvme.irq_delta_us, plat.nvme.irq_thr) == (chosen[device]["delta_us"], chosen[device]["thr"])


def test_ooo_handler_reaps_only_urgent_entries_and_rings_the_doorbell_only_for_the_head():
    from models.os.drivers.nvme import NvmeIrq
    from models.platforms import optane_p4800x_e5_2660v4
    from scenarios.run.assembly import build_host

    plat = optane_p4800x_e5_2660v4()
    host = build_host(plat, plat.queue, seed=1, keep_requests=True)
    qp = host.driver.irq_qps[(0, 0)]
    reqs = []
    for i, flags in enumerate([0, URGENT, 0, URGENT]):
        r = Request(i, None, 0, "read", 4096, 0, 0, False)
        r.flags = flags
        r.qp = qp
        reqs.append(r)
    qp.hw.cq = list(reqs)  # posted on the device's side of the pair
    irq = NvmeIrq(host.driver, qp, urgent_only=True)
    irq.cost(host.runners[0])
    assert [r.id for r in irq.entries] == [1, 3]
    assert [r.id for r in qp.hw.cq] == [0, 2]  # the untagged ones wait
    assert host.driver.cq_doorbells == 0  # the head entry (0) is still unreaped
    irq2 = NvmeIrq(host.driver, qp)
    irq2.cost(host.runners[0])
    assert [r.id for r in irq2.entries] == [0, 2] and host.driver.cq_doorbells == 1


def test_completion_interarrival_matches_the_study_unbatched_and_shrinks_with_batching():
    """The study's basis for Delta (calibrated_interrupts.yaml): p90 of completion inter-arrival on
    the P4800X, libaio at depth 256: 6 us with unbatched submissions, 1 us batched. The model
    matches the unbatched figure; batched, its completions are paced by the SSD's data path
    (4 KiB / 2.4 GB/s = 1.7 us), not the measured 1 us (docs/interrupts.md): the test pins that
    floor, and that Delta = 6 us stays above both p90s."""
    from models.ssd.presets import optane_p4800x
    from scenarios.config.host import resolve
    from scenarios.data import reference

    pub = reference.values("calibrated_interrupts", "completion_interarrival_p90")
    p90 = {}
    for label, batch in (("unbatched_submission", 1), ("batched_submission", 16)):
        cfg = resolve(
            scenario="ci-batched",
            sets={
                "nvme.irq": "none",
                "numjobs": 1,
                "iodepth": 256,
                "runtime": "60ms",
                "iodepth_batch_submit": batch,
                "iodepth_batch_complete_max": 256,
            },
        )
        p90[label] = simulate(cfg)["summary"]["completion_interarrival_us"]["p90"]
    assert p90["unbatched_submission"] == pytest.approx(pub["unbatched_submission"], rel=0.15)
    floor = 4096 / optane_p4800x().datapath.read_gb_s / 1e3  # us
    assert floor <= p90["batched_submission"] < p90["unbatched_submission"] / 2
    delta = reference.values("calibrated_interrupts", "chosen_parameters")["optane"]["delta_us"]
    assert max(p90.values()) < delta
    # docs/interrupts.md quotes both
    from pathlib import Path

    page = (Path(__file__).resolve().parents[1] / "docs" / "interrupts.md").read_text(encoding="utf-8")
    quoted = f"The model gives about {p90['unbatched_submission']:.1f} us and {p90['batched_submission']:.1f} us"
    assert quoted in " ".join(page.split())
