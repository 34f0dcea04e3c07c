"""The order of the kernel's cost fields (``kernel`` of a platform, :class:`KernelCosts`) is part of
its interface: ``model_fields``, the JSON schema (``stacksim schema platform``) and every dump
(provenance, sweeps' columns, ``--json``) list the fields in it. KernelCosts is assembled from
field groups, one base class each (models/os/costs/io_path.py, scheduling.py, user_space.py), and
pydantic orders the fields of base classes by the reversed MRO: this pins the order as it was
before the groups were split off (commit 69c812f), so a reordered base list fails here."""

from __future__ import annotations

import json

from models.os.costs.tables import KernelCosts
from models.platform import PlatformConfig
from models.platforms import optane900p_e3_1230v5

#: KernelCosts.model_fields as of commit 69c812f (one class body, before the split into groups)
FIELD_ORDER = [
    "version",
    "user_io_cycles",
    "syscall_entry_cycles",
    "syscall_exit_cycles",
    "fs_submit_cycles",
    "fs_per_page_cycles",
    "fs_file_extent_cycles",
    "discard_ioctl_cycles",
    "fs_fallocate_cycles",
    "fs_punch_hole_cycles",
    "fs_truncate_cycles",
    "fs_create_cycles",
    "fs_open_cycles",
    "fs_stat_cycles",
    "fs_unlink_cycles",
    "fs_mkdir_cycles",
    "fs_rmdir_cycles",
    "ioctl_enotty_cycles",
    "nvme_dsm_cycles",
    "fs_complete_cycles",
    "blk_submit_cycles",
    "blk_tag_batch_cycles",
    "blk_complete_cycles",
    "blk_complete_batch_cycles",
    "nvme_submit_cycles",
    "nvme_sq_doorbell_cycles",
    "nvme_sq_lock_cycles",
    "nvme_complete_cycles",
    "nvme_cq_doorbell_cycles",
    "nvme_completion_lines",
    "blk_tag_hold_cycles",
    "nvme_sq_lock_hold_cycles",
    "irq_entry_cycles",
    "ctx_switch_cycles",
    "kthread_switch_cycles",
    "wakeup_cycles",
    "cgroup_depth",
    "pelt_level_cycles",
    "psi_level_cycles",
    "idle_scan_cycles",
    "migrate_cycles",
    "newidle_balance_cycles",
    "load_balance_cycles",
    "kworker_run_cycles",
    "uring_cmd_cycles",
    "uring_cmd_done_cycles",
    "ipi_cycles",
    "ipi_latency_ns",
    "hrtimer_start_cycles",
    "hrtimer_expire_cycles",
    "sched_tick_cycles",
    "poll_iteration_cycles",
    "hybrid_stats_cycles",
    "aio_issue_cycles",
    "aio_reap_cycles",
    "uring_cq_flush_cycles",
    "io_uring_issue_cycles",
    "io_uring_enter_cycles",
    "fget_cycles",
    "sqe_write_cycles",
    "user_complete_cycles",
    "spin_iteration_cycles",
    "spdk_submit_cycles",
    "spdk_complete_cycles",
    "spdk_qpair_poll_cycles",
    "spdk_getevents_cycles",
    "mmio_write_cycles",
    "verify_checksum_cycles_per_byte",
    "verify_fill_cycles_per_byte",
    "verify_pattern_fill_cycles_per_byte",
    "verify_header_cycles",
    "verify_async_queue_cycles",
    "pi_crc16_cycles_per_byte",
    "pi_crc64_cycles_per_byte",
    "pi_tuple_cycles",
    "fsync_clean_cycles",
    "invalidate_cache_cycles",
    "timer_slack_ns",
    "sq_thread_idle_ns",
    "iosched_cycles",
    "iosched_cycles_scale",
    "mem_ops_per_cycle",
    "mem_ops_per_action",
    "cold_switch_refill_cycles",
    "cold_switch_evict_cycles",
    "cold_idle_refill_cycles",
    "cpi_by_layer",
    "poll_idle_loop_instructions",
    "idle_entry_cycles",
    "idle_exit_cycles",
]


def test_the_fields_keep_their_order():
    assert list(KernelCosts.model_fields) == FIELD_ORDER


def test_the_schema_and_the_dumps_keep_the_order():
    schema = KernelCosts.model_json_schema()
    assert list(schema["properties"]) == FIELD_ORDER
    assert schema["title"] == "KernelCosts"
    k = KernelCosts()
    assert list(k.model_dump()) == FIELD_ORDER
    assert list(json.loads(k.model_dump_json())) == FIELD_ORDER


def test_the_platform_schema_and_dump_keep_the_order():
    """``stacksim schema platform`` (the kernel's definition in it) and a platform's dump."""
    schema = PlatformConfig.model_json_schema()
    assert list(schema["$defs"]["KernelCosts"]["properties"]) == FIELD_ORDER
    calibrated = optane900p_e3_1230v5()  # its kernel costs are a model_copy with fitted values
    assert list(calibrated.model_dump()["kernel"]) == FIELD_ORDER
    assert list(json.loads(calibrated.model_dump_json())["kernel"]) == FIELD_ORDER
