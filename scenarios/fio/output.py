"""The fio-shaped part of a run's JSON: what ``fio --output-format=json`` (fio 3.x) writes.

Top level: ``fio version`` (stacksim's own, marked fio-compatible), ``timestamp``,
``timestamp_ms``, ``time`` (wall clock when the file is written: :func:`stamped`; the result of a
simulation itself depends only on configuration and seed), ``global options``, ``jobs`` and
``disk_util``. Every number comes from the simulated IOs of the measured window (ramp excluded):

* one ``jobs[]`` entry per job section with ``group_reporting``, else one per clone (as fio);
* per direction (``read``, ``write``, ``trim`` (never simulated: zeros), and ``sync``): bytes,
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

Integer fields are integers as in fio (latencies in whole ns, rounded); ``mean``/``stddev`` and
``iops`` are floats. Percentiles use the same interpolation as the ``summary`` (so they agree with
it to the rounding of 0.5 ns); fio itself reports bin values of its latency histogram.
"""

from __future__ import annotations

import time

import numpy as np

from models.ioengines import ASYNC_ENGINES
from simcore.stats import FIO_PERCENTILES

__all__ = ["FIO_VERSION", "fio_header", "stamped", "fio_jobs", "disk_util", "fio_options", "global_options",
           "SAMPLE_WINDOW_NS", "ASYNC_ENGINES"]

FIO_VERSION = "stacksim-0.1.0 (fio-3.x compatible)"
SAMPLE_WINDOW_NS = 500_000_000  # fio's bwavgtime / iopsavgtime default (500 ms)
_DIRS = ("read", "write", "trim")
_LAT_EDGES = (2, 4, 10, 20, 50, 100, 250, 500, 750, 1000)  # fio's labels: upper bounds
_LAT_MS_EDGES = (*_LAT_EDGES, 2000)
_DEPTHS = (1, 2, 4, 8, 16, 32, 64)  # iodepth_level keys "1" ... "32", ">=64"


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
    ``scenarios.fio.parser.job_from_options`` gives the same job."""
    o = {"rw": job.rw}
    if job.rw in ("rw", "readwrite", "randrw") or job.rwmixread != 50:
        o["rwmixread"] = str(job.rwmixread)
    o["bs"] = _pair(job.bs_read_bytes, job.bs_write_bytes)
    if job.bssplit_read or job.bssplit_write:
        o["bssplit"] = _pair(job.bssplit_read, job.bssplit_write,
                             lambda s: ":".join(f"{b}/{p:g}" for b, p in s))
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
    if job.stacksim_irq_hint != "default":
        o["stacksim_irq_hint"] = job.stacksim_irq_hint
    if "group_reporting" in job.ignored_options:
        o["group_reporting"] = "1"
    return o


def _workload_options(job, o: dict[str, str]) -> None:
    """Random offsets (random_distribution, random_generator, percentage_random) as fio prints them."""
    dist = job.random_distribution
    if dist in ("zoned", "zoned_abs"):
        fmt = (lambda z: ":".join(f"{a:g}/{s:g}" for a, s in z)) if dist == "zoned" else \
            (lambda z: ":".join(f"{a:g}/{int(s)}" for a, s in z))
        o["random_distribution"] = f"{dist}:{_pair(job.zones_read, job.zones_write, fmt)}"
    elif dist != "random":
        center = job.random_distribution_center
        o["random_distribution"] = f"{dist}:{job.random_distribution_value:g}" + \
            ("" if center is None else f":{center:g}")
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
            "" if job.startdelay_max_ns is None else "-" + _time(job.startdelay_max_ns))
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
    out = {"fio version": result["fio version"], "timestamp": int(now), "timestamp_ms": int(now * 1000),
           "time": time.ctime(now)}
    out.update((k, v) for k, v in result.items() if k not in out)
    return out


# ------------------------------------------------------------------------------------------------ statistics
def lat_object(ns: np.ndarray) -> dict:
    """fio's ``*_lat_ns`` object: integer min/max (ns), mean, stddev (n-1), N, percentiles at
    fio's default list (omitted without samples, as fio does)."""
    if ns.size == 0:
        return {"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0}
    pct = np.percentile(ns, FIO_PERCENTILES)
    return {
        "min": int(round(float(ns.min()))),
        "max": int(round(float(ns.max()))),
        "mean": float(ns.mean()),
        "stddev": float(ns.std(ddof=1)) if ns.size > 1 else 0.0,
        "N": int(ns.size),
        "percentile": {f"{p:.6f}": int(round(float(v))) for p, v in zip(FIO_PERCENTILES, pct)},
    }


def _samples(t_done: np.ndarray, nbytes: np.ndarray, t0: float, dur_ns: float) -> tuple[np.ndarray, np.ndarray]:
    """Per full 500 ms window from ``t0``: bandwidth (KiB/s) and IOPS samples, as fio's integer
    ``delta * 1000 / spent`` (a trailing partial window is not sampled, as in fio)."""
    nwin = int(dur_ns // SAMPLE_WINDOW_NS)
    if nwin == 0:
        return np.zeros(0), np.zeros(0)
    idx = ((t_done - t0) // SAMPLE_WINDOW_NS).astype(np.int64)
    keep = (idx >= 0) & (idx < nwin)
    ios = np.bincount(idx[keep], minlength=nwin)
    b = np.bincount(idx[keep], weights=nbytes[keep], minlength=nwin)
    ms = SAMPLE_WINDOW_NS / 1e6
    return np.floor(b * 1000 / ms / 1024), np.floor(ios * 1000 / ms)


def _sample_stats(x: np.ndarray) -> tuple[int, int, float, float, int]:
    if x.size == 0:
        return 0, 0, 0.0, 0.0, 0
    return int(x.min()), int(x.max()), float(x.mean()), float(x.std(ddof=1)) if x.size > 1 else 0.0, int(x.size)


def _percent(counts, total: int) -> list[float]:
    return [100.0 * c / total if total else 0.0 for c in counts]


def _lat_buckets(clat_ns: np.ndarray) -> dict:
    """fio's latency_ns / latency_us / latency_ms: percent of IOs whose (integer ns) clat falls in
    each bucket; a key is the bucket's upper bound (``"250"`` in us = 100 to 249 us)."""
    n = clat_ns.size
    ns = np.floor(clat_ns).astype(np.int64)
    out = {}
    for name, lo, hi, div, edges in (("latency_ns", 0, 1000, 1, _LAT_EDGES),
                                     ("latency_us", 1000, 1_000_000, 1000, _LAT_EDGES),
                                     ("latency_ms", 1_000_000, None, 1_000_000, _LAT_MS_EDGES)):
        sel = ns[(ns >= lo) & ((ns < hi) if hi is not None else True)] // div
        # bucket i holds values in [edges[i-1], edges[i]); the first from 0
        idx = np.searchsorted(np.asarray(edges), sel, side="right")
        counts = np.bincount(idx, minlength=len(edges) + 1)
        keys = [str(e) for e in edges] + ([">=2000"] if name == "latency_ms" else [])
        out[name] = dict(zip(keys, _percent(counts[: len(keys)], n)))
    return out


def _depth_levels(depths: np.ndarray) -> dict:
    idx = np.searchsorted(np.asarray(_DEPTHS), depths, side="right") - 1
    counts = np.bincount(np.clip(idx, 0, len(_DEPTHS) - 1), minlength=len(_DEPTHS))
    keys = [str(d) for d in _DEPTHS[:-1]] + [">=64"]
    return dict(zip(keys, _percent(counts, depths.size)))


def _direction(mine: list, is_async: bool, t0: float, dur_ns: float) -> dict:
    n = len(mine)
    sub = np.fromiter((r.t_submit for r in mine), float, n)
    done = np.fromiter((r.t_complete for r in mine), float, n)
    nbytes = np.fromiter((r.own_bytes for r in mine), float, n)
    lat = done - sub
    if is_async:
        issued = np.fromiter((r.t_issued for r in mine), float, n)
        slat, clat = issued - sub, done - issued
    else:  # fio records no slat for synchronous engines; clat is the call
        slat, clat = np.zeros(0), lat
    nb = int(nbytes.sum())
    dur_s = dur_ns * 1e-9
    ran = n > 0
    bw_s, iops_s = _samples(done, nbytes, t0, dur_ns)
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
        "slat_ns": lat_object(slat),
        "clat_ns": lat_object(clat),
        "lat_ns": lat_object(lat),
        "bw_min": bmin, "bw_max": bmax, "agg_pct": 0.0, "bw_mean": bmean, "bw_dev": bdev, "bw_samples": bn,
        "iops_min": imin, "iops_max": imax, "iops_mean": imean, "iops_stddev": idev, "iops_samples": inn,
    }


def _entry(name: str, job, glob: dict, recs: list, tasks: list, snap_tasks: dict, t0: float, dur_ns: float,
           elapsed_s: float) -> dict:
    is_async = job.ioengine in ASYNC_ENGINES
    own = {k: v for k, v in fio_options(job).items() if glob.get(k) != v}  # fio: the section's own options
    entry = {"jobname": name, "groupid": 0, "error": max((t.error for t in tasks), default=0), "eta": 0, "elapsed": int(round(elapsed_s)),
             "job options": {"name": name, **own}}
    for op in _DIRS:
        entry[op] = _direction([r for r in recs if r.op == op], is_async, t0, dur_ns)
    entry["sync"] = {"total_ios": 0, "lat_ns": lat_object(np.zeros(0))}
    entry["job_runtime"] = int(dur_ns / 1e6)
    usr = sys_ = ctx = 0.0
    for t in tasks:
        b = snap_tasks.get(t.tid, (0, 0, 0.0, 0.0, 0.0))
        usr += t.usr_ns - b[2]
        sys_ += t.sys_ns - b[3]
        ctx += t.nvcsw + t.nivcsw - b[0] - b[1]
    denom = dur_ns * max(len(tasks), 1)
    entry["usr_cpu"] = 100.0 * usr / denom
    entry["sys_cpu"] = 100.0 * sys_ / denom
    entry["ctx"] = int(ctx)
    entry["majf"] = 0
    entry["minf"] = 0
    entry["iodepth_level"] = _depth_levels(np.fromiter((r.depth for r in recs), np.int64, len(recs)))
    clat = np.fromiter(((r.t_complete - (r.t_issued if is_async else r.t_submit)) for r in recs), float, len(recs))
    entry.update(_lat_buckets(clat))
    return entry


def fio_jobs(jobs, host, recs: list, snap_tasks: dict, t0: float, dur_ns: float, elapsed_s: float) -> list[dict]:
    """``jobs[]``: per job section with ``group_reporting`` (its clones together), else per clone
    (one entry per thread, all named after the section, as fio prints them)."""
    out = []
    glob = global_options(jobs)
    by_job: dict[int, list] = {}
    for r in recs:
        by_job.setdefault(r.job, []).append(r)
    for ji, job in enumerate(jobs):
        mine = by_job.get(ji, [])
        tasks = [t for t in host.all_tasks if t.job == ji]
        if "group_reporting" in job.ignored_options or job.numjobs == 1:
            out.append(_entry(job.name, job, glob, mine, tasks, snap_tasks, t0, dur_ns, elapsed_s))
            continue
        for t in tasks:
            out.append(_entry(job.name, job, glob, [r for r in mine if r.task is t], [t], snap_tasks, t0, dur_ns,
                              elapsed_s))
    for op in _DIRS:  # agg_pct: the entry's mean sampled bandwidth in percent of the group's
        agg = sum(e[op]["bw"] for e in out)
        for e in out:
            e[op]["agg_pct"] = 100.0 * e[op]["bw_mean"] / agg if agg else 0.0
    return out


# ------------------------------------------------------------------------------------------------ disks
def disk_util(host, recs: list, t0: float, t1: float) -> list[dict]:
    """fio's ``disk_util`` (from /proc/diskstats) per SSD, over the measured window."""
    merged = {m.id for r in recs for p in (r.splits or (r,)) for m in (p.merged or ())}
    per_dev: dict[int, dict] = {d.index: {"ios": {"read": 0, "write": 0}, "sectors": {"read": 0, "write": 0},
                                          "merges": {"read": 0, "write": 0}, "ticks": {"read": 0.0, "write": 0.0},
                                          "spans": []} for d in host.devices}
    for r in recs:
        for c in (r.splits or (r,)):
            d = per_dev[c.qp.device.index]
            if c.id in merged:
                d["merges"][c.op] += 1
                continue
            d["ios"][c.op] += 1
            d["sectors"][c.op] += c.nbytes // 512  # a command's bytes include the bios merged into it
            d["ticks"][c.op] += c.t_reaped - c.t_dispatch
            d["spans"].append((c.t_dispatch, c.t_reaped))
    out = []
    span = t1 - t0
    for d in host.devices:
        s = per_dev[d.index]
        busy = _union_ns(s["spans"], t0, t1)
        out.append({
            "name": f"nvme{d.index}n1",
            "read_ios": s["ios"]["read"], "write_ios": s["ios"]["write"],
            "read_sectors": s["sectors"]["read"], "write_sectors": s["sectors"]["write"],
            "read_merges": s["merges"]["read"], "write_merges": s["merges"]["write"],
            "read_ticks": int(s["ticks"]["read"] / 1e6), "write_ticks": int(s["ticks"]["write"] / 1e6),
            "in_queue": int((s["ticks"]["read"] + s["ticks"]["write"]) / 1e6),
            "util": 100.0 * busy / span if span > 0 else 0.0,
        })
    return out


def _union_ns(spans: list, t0: float, t1: float) -> float:
    """Length of the union of the intervals ``spans`` clipped to [t0, t1]."""
    total = 0.0
    cur_a = cur_b = None
    for a, b in sorted(spans):
        a, b = max(a, t0), min(b, t1)
        if b <= a:
            continue
        if cur_b is None or a > cur_b:
            if cur_b is not None:
                total += cur_b - cur_a
            cur_a, cur_b = a, b
        else:
            cur_b = max(cur_b, b)
    if cur_b is not None:
        total += cur_b - cur_a
    return total
