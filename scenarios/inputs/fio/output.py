"""The fio-shaped part of a run's JSON: what ``fio --output-format=json`` (fio 3.x) writes.

Top level: ``fio version`` (stacksim's own, marked fio-compatible), ``timestamp``,
``timestamp_ms``, ``time`` (wall clock when the file is written: :func:`stamped`; the result of a
simulation itself depends only on configuration and seed), ``global options``, ``jobs`` and
``disk_util``. Every number comes from the simulated IOs of the measured window (ramp excluded):

* one ``jobs[]`` entry per job section with ``group_reporting``, else one per clone (as fio);
* per direction (``read``, ``write``, ``trim``, and ``sync``): bytes,
  bandwidth (``bw`` KiB/s), ``iops``, ``runtime`` ms, ``total_ios``, ``slat_ns``/``clat_ns``/``lat_ns``
  and the ``bw_*``/``iops_*`` statistics of fio's 500 ms samples (``bwavgtime``/``iopsavgtime``);
* ``slat``/``clat``/``lat`` as fio defines them: for the asynchronous engines (libaio, io_uring)
  slat runs from fio's submit timestamp to the return of the submitting call (io_submit /
  io_uring_enter; with SQPOLL, the SQ tail write), clat from there until fio reaps the completion,
  lat = slat + clat. Synchronous engines record no slat (``N`` 0) and clat = lat (the call);
* ``latency_ns``/``latency_us``/``latency_ms``: percent of IOs per clat bucket (fio's
  io_u_lat_n/u/m), ``iodepth_level``: percent of IOs by fio's queue depth (IOs queued and not yet
  reaped, this one included) when they were submitted;
* ``disk_util``: per SSD, the NVMe commands (a split IO counts its pieces, a merged bio counts as a
  merge), sectors, ``*_ticks``/``in_queue`` (ms from the doorbell to the driver's completion) and
  ``util`` (percent of the window with a command outstanding).

Every figure is accumulated as IOs complete (:mod:`models.ioengines.iostats`): counts, bytes, min, max and
mean are exact; percentiles come, as in fio, from fio's log-linear latency histogram (64 buckets
per power of two, the bucket's middle reported: within 1/128 of the exact value,
:class:`simcore.stats.LatencyStats`), the same histogram as the ``summary``'s. Integer fields are
integers as in fio (latencies in whole ns, rounded); ``mean``/``stddev`` and ``iops`` are floats.
"""

from __future__ import annotations

import time

import numpy as np

from models.host import Host
from models.ioengines import ASYNC_ENGINES
from models.ioengines.fio_run import FioRun
from models.ioengines.iostats import DEPTHS, LAT_EDGES, LAT_MS_EDGES, SAMPLE_WINDOW_NS, DirStats, EntryStats, IoStats
from models.ioengines.job_control import group_ids
from models.os.sched.task import Task
from simcore.stats import FIO_PERCENTILES, LatencyStats

__all__ = [
    "FIO_VERSION",
    "fio_header",
    "sync_latencies",
    "stamped",
    "fio_jobs",
    "disk_util",
    "fio_options",
    "global_options",
    "SAMPLE_WINDOW_NS",
    "ASYNC_ENGINES",
]

FIO_VERSION = "stacksim-0.1.0 (fio-3.x compatible)"
_DIRS = ("read", "write", "trim")


# ------------------------------------------------------------------------------------------------ options
def _time(ns: int) -> str:
    for unit, scale in (("s", 10**9), ("ms", 10**6), ("us", 10**3)):
        if ns % scale == 0:
            return f"{ns // scale}{unit}"
    return f"{round(ns / 1000)}us"


def _pair(r, w, fmt=str) -> str:
    return fmt(r) if r == w else f"{fmt(r)},{fmt(w)}"


def fio_options(job) -> dict[str, str]:
    """The fio options (strings, as fio's ``job options``) of a resolved :class:`FioJob`: what
    was simulated, ``--set`` overrides included; options at fio's default are left out, except
    the ones a reader needs (rw, bs, ioengine, iodepth, direct, numjobs). Reading them back with
    ``scenarios.inputs.fio.parser.job_from_options`` gives the same job."""
    o = {"rw": job.rw}
    if job.rw in ("rw", "readwrite", "randrw") or job.rwmixread != 50:
        o["rwmixread"] = str(job.rwmixread)
    o["bs"] = _pair(job.bs_read_bytes, job.bs_write_bytes)
    if job.bs_trim_bytes != job.bs_write_bytes:
        o["bs"] = f"{job.bs_read_bytes},{job.bs_write_bytes},{job.bs_trim_bytes}"
    if job.bssplit_read or job.bssplit_write:
        o["bssplit"] = _pair(job.bssplit_read, job.bssplit_write, lambda s: ":".join(f"{b}/{p:g}" for b, p in s))
    if job.bsrange_read or job.bsrange_write:
        o["bsrange"] = _pair(job.bsrange_read, job.bsrange_write, lambda r: f"{r[0]}-{r[1]}" if r else "")
    o["ioengine"] = job.ioengine
    o["iodepth"] = str(job.iodepth)
    if job.iodepth_batch_submit != 1:
        o["iodepth_batch_submit"] = str(job.iodepth_batch_submit)
    if job.iodepth_batch_complete_min != 1:
        o["iodepth_batch_complete_min"] = str(job.iodepth_batch_complete_min)
    if job.iodepth_batch_complete_max != job.iodepth_batch_complete_min:
        o["iodepth_batch_complete_max"] = str(job.iodepth_batch_complete_max)
    if 0 < job.iodepth_low < job.iodepth:
        o["iodepth_low"] = str(job.iodepth_low)
    o["direct"] = "1" if job.direct else "0"
    o["numjobs"] = str(job.numjobs)
    if job.runtime_ns:
        o["runtime"] = _time(job.runtime_ns)
    if job.time_based:
        o["time_based"] = "1"
    if job.ramp_time_ns:
        o["ramp_time"] = _time(job.ramp_time_ns)
    if job.size_bytes:
        o["size"] = str(job.size_bytes)
    if job.offset_bytes:
        o["offset"] = str(job.offset_bytes)
    if job.cpus_allowed:
        o["cpus_allowed"] = ",".join(map(str, job.cpus_allowed))
    if job.cpus_allowed_policy != "shared":
        o["cpus_allowed_policy"] = job.cpus_allowed_policy
    if job.rate_iops_read or job.rate_iops_write:
        o["rate_iops"] = _pair(job.rate_iops_read or 0, job.rate_iops_write or 0)
    if job.rate_read_bps or job.rate_write_bps:
        o["rate"] = _pair(job.rate_read_bps or 0, job.rate_write_bps or 0)
    if job.rate_process != "linear":
        o["rate_process"] = job.rate_process
    if job.rate_min_read_bps or job.rate_min_write_bps:
        o["rate_min"] = _pair(job.rate_min_read_bps or 0, job.rate_min_write_bps or 0)
    if job.rate_iops_min_read or job.rate_iops_min_write:
        o["rate_iops_min"] = _pair(job.rate_iops_min_read or 0, job.rate_iops_min_write or 0)
    if job.rate_cycle_ms != 1000:
        o["rate_cycle"] = str(job.rate_cycle_ms)
    if job.thinktime_ns:
        o["thinktime"] = _time(job.thinktime_ns)
    _workload_options(job, o)
    for flag in ("hipri", "sqthread_poll", "registerfiles", "fixedbufs", "nowait"):
        if getattr(job, flag):
            o[flag] = "1"
    if job.sqthread_poll_cpu is not None:
        o["sqthread_poll_cpu"] = str(job.sqthread_poll_cpu)
    _stacksim_options(job, o)
    if "group_reporting" in job.ignored_options:
        o["group_reporting"] = "1"
    return o


def _stacksim_options(job, o: dict[str, str]) -> None:
    """stacksim's own job options, when not at their defaults (and fio's ioscheduler)."""
    if job.ioscheduler is not None:
        o["ioscheduler"] = job.ioscheduler
    if job.stacksim_irq_hint != "default":
        o["stacksim_irq_hint"] = job.stacksim_irq_hint
    if job.stacksim_fio_version != "3.42":
        o["stacksim_fio_version"] = job.stacksim_fio_version


def _workload_options(job, o: dict[str, str]) -> None:
    """Random offsets (random_distribution, random_generator, percentage_random) as fio prints them."""
    dist = job.random_distribution
    if dist in ("zoned", "zoned_abs"):
        fmt = (
            (lambda z: ":".join(f"{a:g}/{s:g}" for a, s in z))
            if dist == "zoned"
            else (lambda z: ":".join(f"{a:g}/{int(s)}" for a, s in z))
        )
        o["random_distribution"] = f"{dist}:{_pair(job.zones_read, job.zones_write, fmt)}"
    elif dist == "sequence":
        o["random_distribution"] = "sequence:" + ",".join(map(str, job.random_sequence))
    elif dist != "random":
        center = job.random_distribution_center
        o["random_distribution"] = f"{dist}:{job.random_distribution_value:g}" + (
            "" if center is None else f":{center:g}"
        )
    if job.random_sequence_stride:
        o["random_sequence_stride"] = "1"
    if job.random_generator != "tausworthe":
        o["random_generator"] = job.random_generator
    if job.percentage_random_read != 100 or job.percentage_random_write != 100:
        o["percentage_random"] = _pair(job.percentage_random_read, job.percentage_random_write)
    if job.rw_modifier:
        o["rw"] = f"{job.rw}:{job.rw_modifier}"
    if job.rw_sequencer != "sequential":
        o["rw_sequencer"] = job.rw_sequencer
    for name, default in (("number_ios", 0), ("loops", 1), ("offset_increment_bytes", 0)):
        if getattr(job, name) != default:
            o[name.removesuffix("_bytes")] = str(getattr(job, name))
    if job.startdelay_ns or job.startdelay_max_ns is not None:
        o["startdelay"] = _time(job.startdelay_ns) + (
            "" if job.startdelay_max_ns is None else "-" + _time(job.startdelay_max_ns)
        )
    for name in ("prio", "prioclass"):
        if getattr(job, name) is not None:
            o[name] = str(getattr(job, name))
    if job.cmdprio_percentage_read or job.cmdprio_percentage_write:
        o["cmdprio_percentage"] = _pair(job.cmdprio_percentage_read, job.cmdprio_percentage_write)
        o["cmdprio_class"] = _pair(job.cmdprio_class_read, job.cmdprio_class_write)
        o["cmdprio"] = _pair(job.cmdprio_read, job.cmdprio_write)


def global_options(jobs) -> dict[str, str]:
    """The options every job has with the same value (fio's ``global options``)."""
    opts = [fio_options(j) for j in jobs]
    return {k: v for k, v in opts[0].items() if all(o.get(k) == v for o in opts[1:])}


def fio_header(jobs) -> dict:
    """The top-level fields fio writes before ``jobs`` (the wall-clock ones are added when the
    file is written: :func:`stamped`, so that a result depends only on configuration and seed)."""
    return {"fio version": FIO_VERSION, "global options": global_options(jobs)}


def stamped(result: dict, now: float | None = None) -> dict:
    """``result`` with fio's ``timestamp``, ``timestamp_ms`` and ``time`` (wall clock ``now``,
    default the current time) after ``fio version``; unchanged if it is not fio-shaped."""
    if "fio version" not in result:
        return result
    now = time.time() if now is None else now
    out = {
        "fio version": result["fio version"],
        "timestamp": int(now),
        "timestamp_ms": int(now * 1000),
        "time": time.ctime(now),
    }
    out.update((k, v) for k, v in result.items() if k not in out)
    return out


# ------------------------------------------------------------------------------------------------ statistics
def lat_object(st: LatencyStats) -> dict:
    """fio's ``*_lat_ns`` object from a latency series: integer min/max (ns), mean, stddev (n-1), N,
    percentiles at fio's default list from fio's histogram (omitted without samples, as fio does)."""
    if st.n == 0:
        return {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0}
    return {
        "min": int(round(st.min)),
        "max": int(round(st.max)),
        "mean": st.mean,
        "stddev": st.stddev,
        "N": st.n,
        "percentile": {f"{p:.6f}": int(round(v)) for p, v in zip(FIO_PERCENTILES, st.percentiles(FIO_PERCENTILES))},
    }


def _samples(d: DirStats, dur_ns: float) -> tuple[np.ndarray, np.ndarray]:
    """Per full 500 ms window from the window start: bandwidth (KiB/s) and IOPS samples, as fio's
    integer ``delta * 1000 / spent`` (a trailing partial window is not sampled, as in fio)."""
    nwin = int(dur_ns // SAMPLE_WINDOW_NS)
    if nwin == 0:
        return np.zeros(0), np.zeros(0)
    ios = np.zeros(nwin)
    b = np.zeros(nwin)
    k = min(nwin, d.win_ios.size)
    ios[:k] = d.win_ios[:k]
    b[:k] = d.win_bytes[:k]
    ms = SAMPLE_WINDOW_NS / 1e6
    return np.floor(b * 1000 / ms / 1024), np.floor(ios * 1000 / ms)


def _sample_stats(x: np.ndarray) -> tuple[int, int, float, float, int]:
    if x.size == 0:
        return 0, 0, 0.0, 0.0, 0
    return int(x.min()), int(x.max()), float(x.mean()), float(x.std(ddof=1)) if x.size > 1 else 0.0, int(x.size)


def _percent(counts, total: int) -> list[float]:
    return [100.0 * c / total if total else 0.0 for c in counts]


def _lat_buckets(counts: np.ndarray, n: int) -> dict:
    """fio's latency_ns / latency_us / latency_ms: percent of IOs whose (integer ns) clat falls in
    each bucket (:attr:`EntryStats.lat_buckets`); a key is the bucket's upper bound (``"250"`` in
    us = 100 to 249 us)."""
    k = len(LAT_EDGES)
    return {
        "latency_ns": dict(zip(map(str, LAT_EDGES), _percent(counts[:k], n))),
        "latency_us": dict(zip(map(str, LAT_EDGES), _percent(counts[k : 2 * k], n))),
        "latency_ms": dict(zip([*map(str, LAT_MS_EDGES), ">=2000"], _percent(counts[2 * k :], n))),
    }


def _direction(d: DirStats, dur_ns: float) -> dict:
    n = d.n
    nb = d.nbytes
    dur_s = dur_ns * 1e-9
    ran = n > 0
    bw_s, iops_s = _samples(d, dur_ns)
    bmin, bmax, bmean, bdev, bn = _sample_stats(bw_s)
    imin, imax, imean, idev, inn = _sample_stats(iops_s)
    return {
        "io_bytes": nb,
        "io_kbytes": nb // 1024,
        "bw_bytes": int(nb / dur_s) if ran else 0,
        "bw": int(nb / 1024 / dur_s) if ran else 0,
        "iops": n / dur_s if ran else 0.0,
        "runtime": int(dur_ns / 1e6) if ran else 0,
        "total_ios": n,
        "short_ios": 0,
        "drop_ios": 0,
        "slat_ns": lat_object(d.slat),
        "clat_ns": lat_object(d.clat),
        "lat_ns": lat_object(d.lat),
        "bw_min": bmin,
        "bw_max": bmax,
        "agg_pct": 0.0,
        "bw_mean": bmean,
        "bw_dev": bdev,
        "bw_samples": bn,
        "iops_min": imin,
        "iops_max": imax,
        "iops_mean": imean,
        "iops_stddev": idev,
        "iops_samples": inn,
    }


def sync_latencies(threads, t0: float, t1: float) -> LatencyStats:
    """The latencies of the syncs of ``threads`` (fio's DDIR_SYNC io_us: ``fsync=N`` /
    ``fdatasync=N``, ``end_fsync``; each thread's ``sync_log`` of (submit, return) pairs, ns) that
    return in the measured window [``t0``, ``t1``], as its IOs (fio accounts a sync at its completion:
    io_u.c ``io_completed``)."""
    lats = []
    for th in threads:
        log = getattr(th, "sync_log", None)
        if log:
            pairs = np.asarray(log, dtype=np.float64).reshape(-1, 2)
            keep = (pairs[:, 1] >= t0) & (pairs[:, 1] <= t1)
            lats.append(pairs[keep, 1] - pairs[keep, 0])
    return LatencyStats.of(np.concatenate(lats)) if lats else LatencyStats()


def _sync_object(st: LatencyStats) -> dict:
    """fio's ``sync`` object (stat.c ``add_ddir_status_json`` for DDIR_SYNC): ``total_ios`` and
    ``lat_ns`` (submit to return of each fsync / fdatasync)."""
    return {"total_ios": st.n, "lat_ns": lat_object(st)}


def _entry(
    name: str,
    job,
    glob: dict,
    e: EntryStats | None,
    tasks: list,
    snap_tasks: dict,
    dur_ns: float,
    elapsed_s: float,
    is_async: bool,
    sync: LatencyStats | None = None,
) -> dict:
    e = e if e is not None else EntryStats(-1, None, is_async)
    own = {k: v for k, v in fio_options(job).items() if glob.get(k) != v}  # fio: the section's own options
    entry = {
        "jobname": name,
        "groupid": 0,
        "error": max((t.error for t in tasks), default=0),
        "eta": 0,
        "elapsed": int(round(elapsed_s)),
        "job options": {"name": name, **own},
    }
    for op in _DIRS:
        entry[op] = _direction(e.dirs[op], dur_ns)
    entry["sync"] = _sync_object(sync if sync is not None else LatencyStats())
    entry["job_runtime"] = int(dur_ns / 1e6)
    usr = sys_ = ctx = 0.0
    for t in tasks:
        b = snap_tasks.get(t.tid, (0, 0, 0.0, 0.0, 0.0))
        usr += t.usr_ns - b[2]
        sys_ += t.sys_ns - b[3]
        ctx += t.nvcsw + t.nivcsw - b[0] - b[1]
    denom = dur_ns * max(len(tasks), 1)
    entry["usr_cpu"] = 100.0 * usr / denom if denom else 0.0
    entry["sys_cpu"] = 100.0 * sys_ / denom if denom else 0.0
    entry["ctx"] = int(ctx)
    entry["majf"] = 0
    entry["minf"] = 0
    n = e.n
    entry["iodepth_level"] = dict(zip([str(d) for d in DEPTHS[:-1]] + [">=64"], _percent(e.depths, n)))
    entry.update(_lat_buckets(e.lat_buckets, n))
    return entry


def _steady(entry: dict, job, ji: int, fio: FioRun, task: Task | None) -> None:
    """fio's ``steadystate`` object of a job entry (the check of the job, or of the entry's thread)."""
    for j, threads, check in fio.steady:
        if j == ji and (task is None or any(th.task is task for th in threads)):
            crit, limit, pct = job.steadystate
            entry["steadystate"] = check.report(
                f"{crit}:{limit:g}{'%' if pct else ''}", job.ss_dur_ns / 1e9, job.ss_ramp_ns / 1e9
            )
            return


def _latency_target(entry: dict, job, threads: list) -> None:
    """fio's latency-target fields of a job entry: the depth the search reached (the deepest of the
    entry's threads), the target and window (ns) and the percentile."""
    if not job.latency_target_ns:
        return
    depths = [th.lat.qd for th in threads if getattr(th, "lat", None) is not None]
    entry["latency_depth"] = max(depths, default=1)
    entry["latency_target"] = job.latency_target_ns
    entry["latency_percentile"] = job.latency_percentile
    entry["latency_window"] = job.latency_window_ns


def fio_jobs(
    jobs, host: Host, fio: FioRun | None, stats: IoStats, snap_tasks: dict, dur_ns: float, elapsed_s: float
) -> list[dict]:
    """``jobs[]``: per job section with ``group_reporting`` (its clones together), else per clone
    (one entry per thread, all named after the section, as fio prints them). Each job reports its
    own runtime, as fio does: from its start + ramp_time (the run's ramp for jobs that start at
    once) to its last thread's exit (at most the run's end). ``fio``: fio's run of the jobs (their
    threads, job control and steady-state checks); None: jobs without any (a trace replay's)."""
    out = []
    glob = global_options(jobs)
    groups = group_ids(jobs)
    control = fio.job_control if fio is not None else None
    threads = fio.threads if fio is not None else []
    for ji, job in enumerate(jobs):
        tasks = [t for t in host.all_tasks if t.job == ji]
        is_async = job.ioengine in ASYNC_ENGINES
        first = len(out)
        job_ns = dur_ns
        if control is not None:  # fio's runtime of a job: from its start + ramp_time to its end
            t0, t_end = stats.t0, stats.t0 + dur_ns
            start = control.measure_from_ns(ji, t0)
            stop = min(control.exited_ns[ji] if control.exited_ns[ji] is not None else t_end, t_end)
            job_ns = stop - start if start < stop else 0.0
        t0, t1 = stats.t0, stats.t0 + dur_ns
        if "group_reporting" in job.ignored_options or job.numjobs == 1:
            syncs = sync_latencies([th for th in threads if th.job_idx == ji], t0, t1)
            out.append(
                _entry(
                    job.name, job, glob, stats.entries.get(ji), tasks, snap_tasks, job_ns, elapsed_s, is_async, syncs
                )
            )
            _latency_target(out[-1], job, [th for th in threads if th.job_idx == ji])
            if fio is not None:
                _steady(out[-1], job, ji, fio, None)
        else:
            for t in tasks:
                out.append(
                    _entry(
                        job.name,
                        job,
                        glob,
                        stats.entries.get((ji, t.tid)),
                        [t],
                        snap_tasks,
                        job_ns,
                        elapsed_s,
                        is_async,
                        sync_latencies([th for th in threads if th.task is t], t0, t1),
                    )
                )
                _latency_target(out[-1], job, [th for th in threads if th.task is t])
                if fio is not None:
                    _steady(out[-1], job, ji, fio, t)
        for e in out[first:]:
            e["groupid"] = groups[ji]
    for op in _DIRS:  # agg_pct: the entry's mean sampled bandwidth in percent of the group's
        agg = sum(e[op]["bw"] for e in out)
        for e in out:
            e[op]["agg_pct"] = 100.0 * e[op]["bw_mean"] / agg if agg else 0.0
    return out


# ------------------------------------------------------------------------------------------------ disks
def disk_util(host: Host, stats: IoStats, t0: float, t1: float) -> list[dict]:
    """fio's ``disk_util`` (from /proc/diskstats) per SSD, over the measured window."""
    out = []
    span = t1 - t0
    for d in host.devices:
        s = stats.disks[d.index]
        out.append(
            {
                "name": f"nvme{d.index}n1",
                "read_ios": s.ios["read"],
                "write_ios": s.ios["write"],
                "read_sectors": s.sectors["read"],
                "write_sectors": s.sectors["write"],
                "read_merges": s.merges["read"],
                "write_merges": s.merges["write"],
                "read_ticks": int(s.ticks["read"] / 1e6),
                "write_ticks": int(s.ticks["write"] / 1e6),
                "in_queue": int((s.ticks["read"] + s.ticks["write"]) / 1e6),
                "util": 100.0 * s.busy() / span if span > 0 else 0.0,
            }
        )
    return out
