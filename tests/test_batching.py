"""Batching where the kernel and fio really batch (issue 30): fio's default one-IO-per-call loop,
io_uring's system-call-free reap, plug thresholds, nvme_irq's one doorbell per call, batched
request completion, one CQ flush per task-work run, DEFER_TASKRUN and the kernel-version gates."""

import pytest

from models.os.costs.bundle import LAYER_INDEX
from models.os.costs.tables import KernelCosts
from models.os.kernel_version import FEATURES, defer_taskrun, has, uring_plug_min
from models.platforms import optane_p4801x_e3_1230
from scenarios.config.host import RunConfig
from scenarios.config.resolve import resolve_run
from scenarios.inputs.fio.parser import job_from_options
from scenarios.run.assembly import build_run
from simcore.errors import ConfigError

BASE = {"rw": "randread", "bs": "4k", "direct": "1", "time_based": "1", "runtime": "15ms", "ramp_time": "2ms"}


def _host(opts: dict, *, version="6.6", scheduler="none", ssd_count=1, extra_kernel=None):
    plat = optane_p4801x_e3_1230()
    plat = plat.model_copy(
        update={
            "ssd_count": ssd_count,
            "kernel": plat.kernel.model_copy(update={"version": version, **(extra_kernel or {})}),
        }
    )
    queue = plat.queue.model_copy(update={"scheduler": scheduler, "io_poll": opts.get("hipri") == "1"})
    cfg = RunConfig(name="t", platform=plat, queue=queue, jobs=(job_from_options({**BASE, **opts}, name="j"),))
    host, fio, _ramp, end = build_run(cfg, keep_requests=True)
    host.engine.run(end + 20e6)
    return host, fio.threads[0]


def test_fio_defaults_libaio_makes_one_submit_and_one_reap_system_call_per_io_at_depth_128():
    """iodepth_batch_submit = complete_min = complete_max = 1: io_submit(1) after every IO and
    io_getevents(1, 1) for every completion, even with 128 in flight."""
    host, t = _host({"ioengine": "libaio", "iodepth": "128"})
    reaped = len(host.records)
    assert reaped > 500
    assert t.syscalls == t.issued_ios + reaped


def test_io_uring_reaps_from_the_ring_without_a_system_call_when_cqes_are_there():
    """At depth 128 the CQ ring always holds CQEs: fio_ioring_getevents reads them and enters
    the kernel only to submit; at depth 1 every reap waits in io_uring_enter(GETEVENTS)."""
    host, t = _host({"ioengine": "io_uring", "iodepth": "128"})
    assert t.syscalls < 1.02 * t.issued_ios
    host1, t1 = _host({"ioengine": "io_uring", "iodepth": "1"})
    assert t1.syscalls == t1.issued_ios + len(host1.records)


def test_plug_thresholds_by_kernel():
    """io_uring plugs more than 2 SQEs on 6.6 (io_submit_state_start), more than 1 on 5.15
    (io_init_req); libaio more than AIO_PLUG_THRESHOLD = 2."""
    assert uring_plug_min((6, 6)) == 3 and uring_plug_min((5, 15)) == 2
    _, t = _host({"ioengine": "libaio", "iodepth": "4"}, version="5.15")
    assert t.plug_min == 3


def _reap_layers(host, n: int, irq: bool = True):
    cost = host.driver._reap_cost(n, irq)
    return cost.layer_cycles[LAYER_INDEX["driver"]], cost.layer_cycles[LAYER_INDEX["block"]]


def test_one_cq_doorbell_per_handler_and_batched_completion_only_without_a_scheduler_from_5_16():
    """nvme_poll_cq reaps every CQE and writes the CQ head once; blk_mq_end_request_batch frees
    tags in groups, not with an IO scheduler (RQF_SCHED_TAGS) and not before 5.16."""
    host, _ = _host({"ioengine": "libaio", "iodepth": "1"}, version="6.6")
    k = host.kcosts
    driver1, block1 = _reap_layers(host, 1)
    assert driver1 == k.nvme_complete_cycles and block1 == k.blk_complete_cycles  # depth-1 totals kept
    driver4, block4 = _reap_layers(host, 4)
    assert driver4 == pytest.approx(4 * k.nvme_complete_cycles - 3 * k.nvme_cq_doorbell_cycles)
    assert block4 == pytest.approx(4 * k.blk_complete_cycles - 3 * k.blk_complete_batch_cycles)
    assert _reap_layers(host, 40)[1] == pytest.approx(40 * k.blk_complete_cycles - 38 * k.blk_complete_batch_cycles)
    for version, scheduler in (("6.6", "mq-deadline"), ("5.15", "none")):
        h, _ = _host({"ioengine": "libaio", "iodepth": "1"}, version=version, scheduler=scheduler)
        assert _reap_layers(h, 4)[1] == 4 * k.blk_complete_cycles
        assert _reap_layers(h, 4)[0] == driver4  # the doorbell is per call in every version


def test_a_pending_vector_merges_further_messages_into_one_handler():
    """A slow handler on a busy queue: the device's messages for a vector already pending set the
    same IRR bit, so handlers are fewer than messages and every handler finds entries."""
    host, _ = _host({"ioengine": "libaio", "iodepth": "32"}, extra_kernel={"irq_entry_cycles": 30000})
    handlers = sum(r.irq_kinds["nvme"] for r in host.runners)
    messages = sum(qp.hw.irq_gen.interrupts for qp in host.driver.queues)
    assert handlers < 0.8 * messages
    assert host.driver.cq_doorbells == handlers  # no handler found an empty CQ
    assert host.driver.completions_reaped_by_irq / handlers > 1.2


def test_one_cq_flush_per_task_work_run_and_defer_taskrun_posts_at_the_enters():
    """io_uring posts the completions a task-work run found under one CQ lock: a reap that finds
    its CQE already posted pays no flush. With DEFER_TASKRUN (fio >= 3.33, kernel >= 6.1) the
    enters with GETEVENTS post them, and fio sees every completion only after such an enter."""
    _, t = _host({"ioengine": "io_uring", "iodepth": "1", "stacksim_fio_version": "3.32"})
    assert not t.defer_tw
    one = t._reap_cost(1, False, 1).cycles
    assert t._reap_cost(1, False, 0).cycles == one - t.k.uring_cq_flush_cycles
    assert t._reap_cost(4, False, 1).cycles == pytest.approx(4 * one - 3 * t.k.uring_cq_flush_cycles)
    host, t = _host({"ioengine": "io_uring", "iodepth": "16", "stacksim_fio_version": "3.33"})
    assert t.defer_tw
    flushes = sum(
        r.counts.get(b.idx, 0) for r in host.runners for b in host.costs.bundles if b.name == "uring_cq_flush"
    )
    assert 0 < flushes <= len(host.records)
    assert t.visible <= len(t.ring)


@pytest.mark.parametrize(
    "kernel, fio, expected", [((6, 6), (3, 32), False), ((6, 6), (3, 33), True), ((6, 0), (3, 42), False)]
)
def test_defer_taskrun_needs_fio_3_33_and_kernel_6_1(kernel, fio, expected):
    assert defer_taskrun(kernel, fio) is expected


def test_kernel_version_gates_and_validation():
    assert not has((5, 15), "io_comp_batch") and not has((5, 15), "plug_rq_cache") and not has((5, 15), "queue_rqs")
    assert all(has((6, 6), f) for f in FEATURES if FEATURES[f] <= (6, 6))  # what 6.6 had, it has
    assert not any(has((6, 6), f) for f in FEATURES if FEATURES[f] > (6, 6))
    assert all(has((6, 12), f) for f in FEATURES)  # the newest release modelled has every feature
    assert has((6, 11), "rwf_atomic") and not has((6, 10), "rwf_atomic")  # RWF_ATOMIC came with 6.11
    assert KernelCosts(version="6.10").release == (6, 10)
    assert KernelCosts(version="6.6.9").version == "6.6"
    with pytest.raises(ConfigError, match="kernel.version"):
        resolve_run(scenario="default", sets={"kernel.version": "six"})
    with pytest.raises(ValueError, match="part of nvme_complete_cycles"):
        KernelCosts(nvme_cq_doorbell_cycles=400)
    cfg = resolve_run(scenario="default", sets={"kernel.version": "6.10"})
    assert cfg.platform.kernel.release == (6, 10)  # kept as text: not 6.1


def test_io_uring_needs_a_kernel_with_io_uring():
    with pytest.raises(ConfigError, match="kernel.version 5.0"):
        _host({"ioengine": "io_uring", "iodepth": "1"}, version="5.0")


def test_existing_platforms_state_their_studies_kernels():
    from models.platforms import PLATFORMS

    versions = {name: make().kernel.version for name, make in PLATFORMS.items()}
    assert versions == {
        "optane900p-e3-1230v5": "5.15",
        "optane-p4801x-e3-1230": "5.18",
        "optane-p4800x-e5-2660v4": "5.0",
        "p3700-e5-2660v4": "5.0",
        "epyc9454p-16xpm1743": "6.8",
        "cheops23-optane": "5.15",  # not stated by the study: an estimate (models/platforms.py)
        "zn540-e5-2660v4": "5.15",  # NVMe ZNS needs 5.9+ (models/platforms.py)
        "icpe24-980pro": "6.3",  # the study's 6.3.8 (its artifact's README)
    }


def _reqs(host, devices):
    from models.os.block.request import Request

    out = []
    for i, dev in enumerate(devices):
        r = Request(i + 1, None, 0, "read", 4096, 4096 * i, 0, False)
        r.qp = host.driver.irq_qps[(dev, 0)]
        out.append(r)
    return out


def test_a_plugged_batch_shares_doorbell_sq_lock_and_tags_as_its_kernel_does():
    """One SQ doorbell per hardware queue (bd->last); queue_rqs (5.17, none, one device) one
    sq_lock; the plug's request cache (5.16) for consecutive requests to the same device; nothing
    for a call below the plug threshold."""
    host, _ = _host({"ioengine": "libaio", "iodepth": "1"}, ssd_count=2)
    blk = host.blk
    assert blk.plug_savings(_reqs(host, [0] * 8), 8, 3) == (7, 7, 7)
    assert blk.plug_savings(_reqs(host, [0, 1] * 4), 8, 3) == (6, 0, 0)  # striped: no cached request fits
    assert blk.plug_savings(_reqs(host, [0, 0]), 2, 3) == (0, 0, 0)  # unplugged: each rings its own
    old, _ = _host({"ioengine": "libaio", "iodepth": "1"}, version="5.15")
    assert old.blk.plug_savings(_reqs(old, [0] * 8), 8, 3) == (7, 0, 0)
    sched, _ = _host({"ioengine": "libaio", "iodepth": "1"}, scheduler="mq-deadline")
    assert sched.blk.plug_savings(_reqs(sched, [0] * 8), 8, 3) == (7, 0, 7)


def test_defer_taskrun_wait_finds_completions_that_came_before_the_enter():
    """io_cqring_wait runs the work list before it sleeps: completions queued there before the
    enter satisfy the wait. Draining at the end, with nothing left in flight, nothing else would
    wake the thread: every IO is reaped and the thread exits."""
    opts = {"ioengine": "io_uring", "iodepth": "16", "stacksim_fio_version": "3.33", "time_based": "0", "size": "2m"}
    host, t = _host(opts)
    assert t.defer_tw
    assert len(host.records) == 512 and t.inflight == 0 and not t.ring
    assert t.task.state == "dead"


def test_iodepth_low_reaps_a_full_queue_down_before_refilling():
    """fio's wait_for_completions loops while the queue was full and cur_depth > iodepth_low: with
    iodepth=16, iodepth_low=4 the thread reaps down to 4 (one io_getevents per event), then
    refills one io_submit per IO, so its IOs are committed at every depth from 5 to 16 (always 16
    without it)."""
    host, t = _host({"ioengine": "libaio", "iodepth": "16", "iodepth_low": "4"})
    depths = [r.depth for r in host.records[100:]]
    assert min(depths) == 5 and max(depths) == 16
    assert depths.count(5) == pytest.approx(depths.count(16), abs=2)
    assert t.syscalls == t.issued_ios + len(host.records)
    host, _ = _host({"ioengine": "libaio", "iodepth": "16"})
    assert {r.depth for r in host.records[100:]} == {16}
