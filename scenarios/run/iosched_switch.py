"""fio's ``ioscheduler``: before a job runs, fio switches the devices of its files to the named IO
scheduler (fio's backend.c ``switch_ioscheduler``: it writes the name to
``/sys/block/<dev>/queue/scheduler`` and reads the file back, failing the job with "unable to set
io scheduler" when the name is not bracketed there: a scheduler the kernel does not have).

In Linux the write is ``elevator_change`` (block/elevator.c): the same scheduler again is no
change (its tunables stay); another one frees the old elevator and starts the new one with its
defaults, so the platform's ``queue.iosched`` tunables are dropped. fio skips the switch for
engines without a block device: ``null`` and ``cpuio`` (FIO_DISKLESSIO), SPDK's user-space driver
and ``io_uring_cmd``'s NVMe character device (FIO_TYPE_CHAR).

stacksim has one block-queue configuration for all SSDs of a run, so the job's scheduler replaces
the platform's ``queue.scheduler`` (:func:`switched_queue`) and a run whose SSDs would end up with
different schedulers is refused (:func:`check_scheduled_devices`): jobs naming different ones, or a
job that does not switch on an SSD no switching job uses.
"""

from __future__ import annotations

from models.os.block.queue import QueueConfig
from policies.io_scheduler import IO_SCHEDULERS
from simcore.errors import ConfigError

__all__ = ["NO_BLOCK_DEVICE_ENGINES", "check_scheduled_devices", "switched_queue"]

#: engines whose jobs fio does not switch (no block device under their files)
NO_BLOCK_DEVICE_ENGINES = ("null", "cpuio", "spdk", "io_uring_cmd")


def _switching(jobs) -> list:
    """The jobs whose ``ioscheduler`` fio applies."""
    return [j for j in jobs if j.ioscheduler is not None and j.ioengine not in NO_BLOCK_DEVICE_ENGINES]


def switched_queue(queue: QueueConfig, jobs) -> QueueConfig:
    """The block queue the run's SSDs have once fio has switched them: ``queue`` unchanged when no
    job sets ``ioscheduler`` (or names the scheduler ``queue`` has), else the jobs' scheduler with
    its default tunables. ConfigError for an unknown scheduler (after the plug-ins are loaded: a
    plug-in may register one) and for jobs naming different schedulers."""
    switching = _switching(jobs)
    if not switching:
        return queue
    first = switching[0]
    for j in switching:
        if j.ioscheduler not in IO_SCHEDULERS:
            known = ", ".join(IO_SCHEDULERS.names())
            raise ConfigError(
                f"job '{j.name}': ioscheduler={j.ioscheduler}: no such IO scheduler (fio: unable to set io"
                f" scheduler); known: {known} (a plug-in registers more: docs/io-schedulers.md)"
            )
        if j.ioscheduler != first.ioscheduler:
            raise ConfigError(
                f"jobs '{first.name}' and '{j.name}' set different IO schedulers (ioscheduler={first.ioscheduler},"
                f" ioscheduler={j.ioscheduler}): stacksim runs one IO scheduler on all SSDs of a run"
            )
    name = first.ioscheduler
    if name == queue.scheduler:
        return queue  # elevator_change: the same elevator is no switch (its tunables stay)
    return queue.model_copy(update={"scheduler": name, "iosched": {}})


def check_scheduled_devices(threads, jobs, platform_queue: QueueConfig, queue: QueueConfig) -> None:
    """Refuse a run in which a job that does not switch uses an SSD that keeps the platform's
    scheduler (no switching job uses it) while the others were switched to another one: stacksim
    would run it with the switched scheduler. ``threads``: the run's job threads (``job_idx``,
    ``devices_used()``)."""
    if queue.scheduler == platform_queue.scheduler:
        return
    switching = {id(j) for j in _switching(jobs)}
    switched: set[int] = set()
    for th in threads:
        if id(jobs[th.job_idx]) in switching:
            switched |= th.devices_used()
    for th in threads:
        job = jobs[th.job_idx]
        if id(job) in switching or job.ioengine in NO_BLOCK_DEVICE_ENGINES:
            continue
        kept = sorted(th.devices_used() - switched)
        if kept:
            raise ConfigError(
                f"job '{job.name}' sets no ioscheduler and uses SSD {kept[0]}, which no job switches: it would"
                f" keep the platform's scheduler ({platform_queue.scheduler}) while the others run"
                f" {queue.scheduler}; stacksim runs one IO scheduler on all SSDs of a run: set ioscheduler in"
                " every job ([global]) or in none"
            )
