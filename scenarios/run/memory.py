"""One memory estimate for every configuration (a host run, a trace replay, a storage server):
the state that grows with a number of the configuration, estimated by the model that keeps it,
checked against ``STACKSIM_MAX_MEMORY_BYTES`` before anything is built (:mod:`simcore.memory`).

The parts: each SSD's zones (``ssd.zoned.zone_size_bytes``: one zone's state per zone of its
capacity), each SSD's FTL map (``ssd.ftl.span_bytes`` over ``ssd.ftl.page_bytes``), and each fio
job thread's files (``nrfiles``, or the names of ``filename``: a file's name, size, state and place
in the file service; models/ioengines/files.py and sync_io.py). Everything else a run holds is
bounded by the configuration's own limits (CPUs, SSDs, jobs, queue depths) or grows with simulated
time, as its results do.
"""

from __future__ import annotations

from models.ssd.ftl import ftl_state_bytes
from models.ssd.zones import ZONE_STATE_BYTES, zone_state_bytes
from simcore.limits import format_bytes
from simcore.memory import Need, check_memory

__all__ = ["FILE_STATE_BYTES", "memory_needs", "check_run_memory"]

#: memory of one file of a fio job thread, bytes (measured: 420 bytes a file as built, 650 at the
#: peak of building them: the generated name, its (path, size) tuple, the thread's file state)
FILE_STATE_BYTES = 700


def memory_needs(cfg) -> list[Need]:
    """The parts of ``cfg``'s memory that its numbers size (see the module docstring)."""
    needs: list[Need] = []
    platform = getattr(cfg, "platform", None)
    if platform is not None:
        ssd, n = platform.ssd, platform.ssd_count
        of = f"{n} SSD{'s' * (n > 1)}"
        if ssd.zoned is not None and ssd.capacity_bytes:
            zones = ssd.capacity_bytes // ssd.zoned.zone_size_bytes
            needs.append(
                Need(
                    n * zone_state_bytes(ssd.zoned, ssd.capacity_bytes),
                    f"the zones of {of} ({zones:,} zones of {format_bytes(ssd.zoned.zone_size_bytes)} each,"
                    f" {ZONE_STATE_BYTES} bytes a zone)",
                    "ssd.zoned.zone_size_bytes",
                )
            )
        if ssd.ftl.enabled:
            needs.append(
                Need(
                    n * ftl_state_bytes(ssd.ftl, ssd.capacity_bytes),
                    f"the FTL maps of {of} (pages of {format_bytes(ssd.ftl.page_bytes)} over"
                    f" {format_bytes(ssd.ftl.span_bytes)})",
                    "ssd.ftl.span_bytes or ssd.ftl.page_bytes",
                )
            )
    for job in getattr(cfg, "jobs", None) or ():
        files = _files_per_thread(job)
        if files:
            needs.append(
                Need(
                    files * job.numjobs * FILE_STATE_BYTES,
                    f"the files of job '{job.name}' ({job.numjobs:,} thread{'s' * (job.numjobs > 1)}"
                    f" x {files:,} files)",
                    f"nrfiles (job '{job.name}')" if not job.filename else f"filename (job '{job.name}')",
                )
            )
    return needs


def _files_per_thread(job) -> int:
    """The files one thread of ``job`` opens (models/ioengines/files.py's thread_files)."""
    if not getattr(job, "filename", None) and not getattr(job, "directory", None):
        return 0
    return len(job.filename) if job.filename else job.nrfiles


def check_run_memory(cfg) -> int:
    """The estimate of ``cfg``'s memory (bytes); ConfigError when it is over the limit."""
    return check_memory(memory_needs(cfg), where=f"{type(cfg).__name__.removesuffix('Config').lower()} configuration")
