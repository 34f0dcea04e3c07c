"""The summary of a host run (``stacksim run``, a trace replay): counters at the start of the
measured interval (:class:`Snapshot`), and everything reported as end minus snapshot
(:func:`summarize_host_run`): throughput and latency, CPU time per stack layer and per CPU, context
switches and interrupts, power and energy, C-state residency, frequencies, per-job sections and
the fio-shaped ``jobs`` and ``disk_util``."""

from __future__ import annotations

import numpy as np

from models.cpu.power_limit import limit_reading, limit_summary
from models.host import Host
from models.ioengines.fio_run import FioRun
from models.ioengines.iostats import IoStats
from models.os.costs import memops
from models.os.costs.bundle import OPTIONAL_LAYERS
from models.os.costs.tables import ACTION_INDEX, ACTIONS, LAYERS, SUB_ACTIONS
from models.power import average_power, read_energy
from scenarios.config.host import RunConfig
from scenarios.inputs.fio.output import disk_util, fio_header, fio_jobs, sync_latencies
from simcore.stats import LatencyStats


class Snapshot:
    """Counters at the start of the measured interval (the end of fio's ramp_time, or t = 0 for a
    trace replay); `summarize_host_run` reports end minus snapshot."""

    def __init__(self, host: Host, now: float):
        host.pkg.settle(now)
        self.t = now
        self.counts = [dict(r.counts) for r in host.runners]
        self.poll = [r.poll_cycles for r in host.runners]
        self.lock_cycles = [list(r.lock_cycles) for r in host.runners]
        self.layer_ns = [r.layer_ns() for r in host.runners]
        self.spin_cycles = [r.spin_cycles(now) for r in host.runners]
        self.ghz_ns = [c.ghz_ns_at(now) for c in host.pkg.cores]
        self.freq_transitions = sum(c.transitions for c in host.pkg.cores)
        self.smt = [r.smt_stall_ns for r in host.runners]
        self.cstate_exit = [r.cstate_exit_ns for r in host.runners]
        self.irqs = [dict(r.irq_kinds) for r in host.runners]
        self.busy = [c.busy_ns for c in host.pkg.cpus]
        self.cstate = [list(c.cstate_ns) for c in host.pkg.cpus]
        self.energy = read_energy(host, now)
        self.power_limit = limit_reading(host.pkg, now)
        self.apst = [
            (d.apst.residency_ns_at(now), dict(d.apst.wakeups)) if d.apst is not None else None for d in host.devices
        ]
        self.media = [media_counters(d) for d in host.devices]
        self.hybrid_sleeps = sum(getattr(p, "sleeps", 0) for p in host.policies.values())
        # the exec time of tasks running right now is charged when they leave the CPU
        host.charge_running(now)
        self.tasks = {t.tid: t.counters() for t in host.all_tasks}
        self.irq_gen = {
            (d.index, qp.qid): (qp.irq_gen.interrupts, qp.irq_gen.completions)
            for d in host.devices
            for qp in d.qps
            if qp.irq_gen is not None
        }
        self.reaped_by_irq = host.driver.completions_reaped_by_irq
        self.cq_doorbells = host.driver.cq_doorbells
        self.commands = sum(d.commands for d in host.devices)
        self.migrations = host.balancer.migrations
        self.locks = {id(k): lock_counters(k) for k in host.blk.locks()}
        for d in host.devices:  # completion inter-arrival gaps from here on
            for qp in d.qps:
                qp.restart_gaps()


def summarize_host_run(
    cfg: RunConfig, host: Host, s: Snapshot, stats: IoStats, end: float, wall_s: float, fio: FioRun | None = None
) -> dict:
    """The result of a host run measured from snapshot ``s`` to ``end`` (ns), from the run's
    streaming statistics ``stats`` (measured window ``[s.t, end]``): fio-shaped ``jobs`` and
    ``disk_util``, stacksim's ``summary`` and the ``sim`` block (``wall_s``: wall time of the run).
    ``fio``: fio's run of the jobs (job control, steady state, latency targets); None for a trace
    replay (its pseudo job has none of them)."""
    host.charge_running(end)  # the exec time of tasks still on a CPU
    dur_ns = end - s.t
    stats.finish()
    summary, layer_cycles = _cpu_and_io_summary(cfg, host, s, stats, end)
    _add_mechanism_metrics(summary, cfg, host, s, stats, layer_cycles, end)
    verify = verify_summary(cfg, fio)
    if verify:
        summary["verify"] = verify
    _iowq_summary(summary, fio)
    syncs = sync_latencies(fio.threads, s.t, end) if fio is not None else None
    if syncs is not None and syncs.n:  # fio's sync statistics (fsync=N / fdatasync=N, end_fsync)
        summary["sync"] = {"total_ios": syncs.n, "latency_us": syncs.summary_us()}
    warning = no_io_warning(summary, dur_ns * 1e-9)
    return {
        **fio_header(cfg.jobs),
        "stacksim_version": "0.1.0",
        "scenario": cfg.name,
        "platform": cfg.platform.name,
        "seed": cfg.seed,
        "ignored_fio_options": sorted({o for j in cfg.jobs for o in j.ignored_options}),
        "jobs": fio_jobs(cfg.jobs, host, fio, stats, s.tasks, dur_ns, end * 1e-9),
        "disk_util": disk_util(host, stats, s.t, end),
        "summary": summary,
        "sim": {
            "simulated_s": end * 1e-9,
            "measured_s": dur_ns * 1e-9,
            "events": host.engine.events_processed,
            "wall_s": wall_s,
            "real_time_factor": (end * 1e-9) / wall_s if wall_s > 0 else None,
            "ios_per_wall_s": host.completed_ios / wall_s if wall_s > 0 else None,
        },
        "warnings": [warning] if warning else [],
    }


def verify_summary(cfg: RunConfig, fio: FioRun | None) -> dict | None:
    """fio's verify over the whole run (models/ioengines/verify.py), per verifying job: the blocks
    logged by writes and those read back and checked. The data is not simulated: a verify passes by
    construction (no mismatch can happen); its IO and CPU work are what is modelled."""
    if fio is None or all(j.verify == "none" for j in cfg.jobs):
        return None
    jobs: dict[str, dict] = {}
    for th in fio.threads:
        plan = getattr(th, "verify", None)
        if plan is None:
            continue
        entry = jobs.setdefault(th.job.name, {"type": plan.kind, "blocks_logged": 0, "blocks_verified": 0})
        entry.setdefault("bytes_verified", 0)
        for key, n in plan.report().items():
            entry[key] += n
    return {
        "jobs": jobs,
        "mismatches": 0,
        "passed": True,
        "note": "stacksim does not simulate the data: every verify passes by construction; its reads and"
        " its checksum work are modelled",
    }


def io_and_energy(n: int, nbytes: int, lat: LatencyStats, dur_s: float, power_w: dict) -> dict:
    """The figures every run reports, host or server, from the IOs counted in a measured interval of
    ``dur_s`` seconds (``n`` of them, ``nbytes`` bytes; ``lat`` the statistics of the latencies of
    those measured: percentiles from fio's histogram for both)
    and the average power by component (W, with ``system``): IOs, IOPS, bandwidth (MB/s), latency
    (us), power, energy (J), bytes per joule and joules per million IOs."""
    energy = power_w["system"] * dur_s
    return {
        "ios": n,
        "iops": n / dur_s,
        "bandwidth_mb_s": nbytes / dur_s / 1e6,
        # no IO measured: no latency and no energy per IO (null, not a 0 that reads as a result)
        "latency_us": lat.summary_us() if n else dict.fromkeys(lat.summary_us()),
        "power_w": power_w,
        "energy_j": energy,
        "bytes_per_joule": nbytes / energy if energy > 0 else 0.0,
        "energy_j_per_million_ios": energy / n * 1e6 if n else None,
    }


def no_io_warning(summary: dict, measured_s: float) -> str | None:
    """When the measured window holds no IO: every per-IO figure of ``summary`` set to None (in
    place) and the warning to show; else None."""
    if summary["ios"]:
        return None
    for key in list(summary):
        if key.endswith("_per_io") or key in (
            "layers",
            "completions_per_interrupt",
            "cq_doorbells_per_interrupt",
            "ipc",
            "perf_by_layer",
        ):
            summary[key] = None
    return (
        f"no IO completed in the measured window ({measured_s * 1e3:g} ms after the ramp): latency and the"
        " per-IO figures are null; lengthen runtime, shorten ramp_time, or check the job's rate and size"
    )


def layer_work(host: Host, s: Snapshot) -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    """CPU work by stack layer since ``s``: cycles (from the cost bundles charged and the polling
    cycles), ns (at the frequency each piece ran at, :meth:`CpuRunner.layer_ns`), and ns per CPU."""
    bundles = host.costs.bundles
    layer_cycles = np.zeros(len(LAYERS))
    layer_ns = np.zeros(len(LAYERS))
    per_cpu_layers = []
    for i, r in enumerate(host.runners):
        lc = np.zeros(len(LAYERS))
        before = s.counts[i]
        for idx, cnt in r.counts.items():
            d = cnt - before.get(idx, 0)
            if d:
                lc += d * np.asarray(bundles[idx].layer_cycles)
        lc[LAYERS.index("polling")] += r.poll_cycles - s.poll[i]
        lc += np.asarray(r.lock_cycles) - np.asarray(s.lock_cycles[i])  # spinning on locks, fetching their lines
        layer_cycles += lc
        ns = np.asarray(r.layer_ns()) - np.asarray(s.layer_ns[i])
        per_cpu_layers.append(ns)
        layer_ns += ns
    return layer_cycles, layer_ns, per_cpu_layers


def _switches_and_interrupts(host: Host, s: Snapshot) -> tuple[dict, int, int]:
    """Interrupts by kind, voluntary and involuntary context switches since ``s``."""
    irq_total = {}
    for i, r in enumerate(host.runners):
        for k, v in r.irq_kinds.items():
            irq_total[k] = irq_total.get(k, 0) + v - s.irqs[i].get(k, 0)
    ctx_v = ctx_i = 0
    for t in host.all_tasks:
        b = s.tasks.get(t.tid, (0, 0, 0.0, 0.0, 0.0))
        ctx_v += t.nvcsw - b[0]
        ctx_i += t.nivcsw - b[1]
    return irq_total, ctx_v, ctx_i


def _cstate_residency(plat, host: Host, s: Snapshot, busy_ns: list, dur_ns: float) -> dict:
    """Per logical CPU: fraction of the measured time in C0 and in each C-state."""
    names = [st.name for st in plat.cpu.cstates]
    residency = {}
    for i, c in enumerate(host.pkg.cpus):
        row = {"C0": busy_ns[i] / dur_ns}
        for j, nm in enumerate(names):
            row[nm] = (c.cstate_ns[j] - s.cstate[i][j]) / dur_ns
        residency[f"cpu{c.id}"] = row
    return residency


def _cpu_and_io_summary(cfg: RunConfig, host: Host, s: Snapshot, stats: IoStats, end: float) -> tuple[dict, np.ndarray]:
    """The core of ``summary``: IOs, latency, CPU use, switches, interrupts, power and energy,
    residency and the per-layer time per IO; also returns the cycles per layer."""
    dur_ns = end - s.t
    dur_s = dur_ns * 1e-9
    n = stats.ios()
    lat = stats.latency()
    nbytes = stats.nbytes()
    plat = cfg.platform
    cpus = host.pkg.cpus
    ncpu = len(cpus)
    layer_cycles, layer_ns, per_cpu_layers = layer_work(host, s)
    idle_ns = [sum(c.cstate_ns) - sum(s.cstate[i]) for i, c in enumerate(cpus)]
    busy_ns = [c.busy_ns - s.busy[i] for i, c in enumerate(cpus)]
    per_io = max(n, 1)
    layers = {name: float(layer_ns[j] / per_io) for j, name in enumerate(LAYERS)}
    layers["smt_contention"] = float(sum(r.smt_stall_ns - s.smt[i] for i, r in enumerate(host.runners)) / per_io)
    # idle wait: idle time of the CPUs that run IO threads (other CPUs' idleness is not this IO's)
    io_cpus = {t.cpu for t in host.all_tasks}
    layers["idle"] = float(sum(idle_ns[i] for i in io_cpus) / per_io)
    irq_total, ctx_v, ctx_i = _switches_and_interrupts(host, s)
    nirq = sum(irq_total.values())
    power = average_power(plat, host.devices, s.energy, read_energy(host, end))
    summary = {
        **io_and_energy(n, nbytes, lat, dur_s, power),
        "cpu_utilization": sum(busy_ns) / (ncpu * dur_ns),
        "context_switches_per_io": (ctx_v + ctx_i) / per_io,
        "voluntary_context_switches_per_io": ctx_v / per_io,
        "involuntary_context_switches_per_io": ctx_i / per_io,
        "interrupts_per_io": nirq / per_io,
        "interrupts": irq_total,
        "cstate_residency": _cstate_residency(plat, host, s, busy_ns, dur_ns),
        "layers_ns_per_io": layers,
        "layers_ns_per_io_per_cpu": {
            f"cpu{i}": {name: float(ns[j] / per_io) for j, name in enumerate(LAYERS)}
            for i, ns in enumerate(per_cpu_layers)
        },
        "completion_policies": sorted(host.policies),
        "hybrid_sleeps_per_io": sum(getattr(p, "sleeps", 0) for p in host.policies.values()) / per_io
        - s.hybrid_sleeps / per_io,
    }
    summary["layers"] = summary["layers_ns_per_io"]
    return summary, layer_cycles


def _add_mechanism_metrics(
    summary: dict, cfg: RunConfig, host: Host, s: Snapshot, stats: IoStats, layer_cycles: np.ndarray, end: float
) -> None:
    """The rest of ``summary``: device commands per IO, frequencies and P-state transitions, the
    power limit, SSD power states, interrupt metrics, cycles and memory operations per second,
    and the per-job sections."""
    dur_ns = end - s.t
    dur_s = dur_ns * 1e-9
    per_io = max(stats.ios(), 1)
    plat = cfg.platform
    # C0 time of C-state exits (waking up: part of the CPUs' busy time, not of any stack layer)
    summary["cstate_exit_ns_per_io"] = (
        sum(r.cstate_exit_ns - s.cstate_exit[i] for i, r in enumerate(host.runners)) / per_io
    )
    # device commands per fio IO: > 1 when IOs are split at max_sectors_kb, < 1 when bios merge
    summary["device_commands_per_io"] = (sum(d.commands for d in host.devices) - s.commands) / per_io
    # tasks moved to another CPU by the scheduler (perf's cpu-migrations; models.os.sched.placement)
    summary["cpu_migrations"] = host.balancer.migrations - s.migrations
    summary["cpu_migrations_per_io"] = summary["cpu_migrations"] / per_io
    io_cores = sorted({host.pkg.cpus[t.cpu].core.index for t in host.all_tasks})
    summary["freq_ghz_mean"] = {  # time-weighted, per physical core that runs IO threads
        f"core{i}": (host.pkg.cores[i].ghz_ns_at(end) - s.ghz_ns[i]) / dur_ns for i in io_cores
    }
    summary["freq_transitions"] = sum(c.transitions for c in host.pkg.cores) - s.freq_transitions
    if host.pkg.limiter is not None:
        summary["cpu_power_limit"] = limit_summary(host.pkg, s.power_limit, limit_reading(host.pkg, end), dur_ns)
    if any(d.apst is not None for d in host.devices):
        summary["ssd_power_states"] = ssd_power_states(host, s, end, dur_ns)
    media = ssd_media(host, s)
    if media:
        summary["ssd_media"] = media
    summary.update(interrupt_metrics(host, s, end, dur_s))
    summary["cycles_per_s"] = cycles_per_s(host, layer_cycles, s, end, dur_s)
    smt = smt_stall_cycles(host, s, end)
    summary.update(perf_stat(plat, summary["cycles_per_s"], layer_instructions(host, s), smt, dur_s, per_io))
    actions_per_s = kernel_actions_per_s(host, s, dur_s)
    summary["kernel_actions_per_io"] = {a: actions_per_s[a] * dur_s / per_io for a in ACTIONS}
    k = plat.kernel
    if k.mem_ops_per_cycle or k.mem_ops_per_action:
        # the parts of actions counted for their memory operations (models.os.costs.tables.SUB_ACTIONS)
        summary["kernel_sub_actions_per_io"] = {a: actions_per_s[a] * dur_s / per_io for a in SUB_ACTIONS}
        summary["mem_ops_per_s"] = memops.rates_per_s(
            k.mem_ops_per_cycle,
            non_action_cycles(k, summary["cycles_per_s"], actions_per_s),
            k.mem_ops_per_action,
            actions_per_s,
        )
    locks = lock_summary(host, s, per_io)
    if locks:
        summary["locks"] = locks
    summary["per_job"] = per_job_metrics(cfg, host, stats, s, dur_s)
    if host.filemap is not None:
        summary["pagecache"] = pagecache_summary(host)
    _drop_unused_layers(summary)


def _iowq_summary(summary: dict, fio: FioRun | None) -> None:
    """io_uring's buffered writes over the whole run (models/ioengines/buffered_uring.py): those
    completed in the submitting call (IOCB_NOWAIT) and those punted to io-wq, and its workers."""
    rings = [th for th in (fio.threads if fio is not None else ()) if getattr(th, "iowq", None) is not None]
    writes = sum(th.inline_writes + th.iowq.punted for th in rings)
    if "pagecache" in summary and writes:
        summary["pagecache"]["io_uring_writes"] = {
            "inline": sum(th.inline_writes for th in rings),
            "punted_to_iowq": sum(th.iowq.punted for th in rings),
            "iowq_workers": sum(len(th.iowq.workers) for th in rings),
        }


#: the figures of a lock the summary reports per IO, in :func:`lock_counters`' order
LOCK_FIGURES = ("acquisitions", "handoffs", "contended", "spin_ns", "transfer_ns")


def lock_counters(lock) -> tuple[int, int, int, float, float]:
    """A lock's counters (models.os.locking.spinlock.SpinLock), as :data:`LOCK_FIGURES` names them:
    acquisitions, hand-offs (lines fetched from another CPU), contended ones, ns spun, ns fetching
    lines."""
    return (lock.acquisitions, lock.transfers, lock.contended, lock.spin_ns, lock.transfer_ns)


def lock_summary(host: Host, s: Snapshot, per_io: int) -> dict:
    """The block layer's locks over the measured interval, by kernel name (instances of one name,
    e.g. each hardware context's tags, summed): acquisitions, hand-offs (the lock's lines came from
    another CPU) and contended acquisitions per IO, and the ns per IO spent spinning and fetching
    the lines (a cause of CPU per IO, not an outcome). Locks never taken are left out."""
    out: dict[str, dict[str, float]] = {}
    for lock in host.blk.locks():
        now = lock_counters(lock)
        was = s.locks.get(id(lock), (0, 0, 0, 0.0, 0.0))
        delta = [a - b for a, b in zip(now, was)]
        if not delta[0]:  # never taken in the interval
            continue
        row = out.setdefault(lock.name, dict.fromkeys(LOCK_FIGURES, 0.0))
        for key, v in zip(LOCK_FIGURES, delta):
            row[key] += v / per_io
    return {name: {f"{k}_per_io": v for k, v in row.items()} for name, row in out.items()}


def pagecache_summary(host: Host) -> dict:
    """A buffered run's page cache over the whole run (ramp included): bytes the reads found
    uptodate or waited for, pages read from and written back to the SSDs, reclaimed (by the
    allocating tasks, by kswapd), faulted (mmap), dirty and free at the end, the watermarks,
    balance_dirty_pages pauses."""
    pc = host.filemap.cache
    wb = host.writeback
    out = dict(pc.stats())
    total = pc.hit_bytes + pc.miss_bytes
    out["hit_ratio"] = pc.hit_bytes / total if total else 0.0
    out["faults"] = pc.faults
    out["writeback_pages"] = pc.nr_writeback
    out["dirty_background_thresh_pages"] = wb.bg_thresh
    out["dirty_thresh_pages"] = wb.thresh
    out["throttle_pauses"] = wb.pauses
    out["throttle_paused_ms"] = wb.paused_ns * 1e-6
    out["free_pages"] = pc.free_pages
    out["watermark_pages"] = {"min": pc.wmark_min, "low": pc.wmark_low, "high": pc.wmark_high}
    out["kswapd_wakeups"] = wb.kswapd.wakeups
    out["vmscan_flusher_wakeups"] = wb.vmscan_wakeups
    return out


def _drop_unused_layers(summary: dict) -> None:
    """The layers of :data:`OPTIONAL_LAYERS` (the page cache's) appear only in runs that used them:
    a direct-IO run's summary keeps its keys."""
    used = {name for name in OPTIONAL_LAYERS if summary["cycles_per_s"].get(name)}
    rows = [summary["layers_ns_per_io"], summary["cycles_per_s"], *summary["layers_ns_per_io_per_cpu"].values()]
    for name in OPTIONAL_LAYERS:
        if name not in used:
            for row in rows:
                row.pop(name, None)


def media_counters(d) -> dict[str, float] | None:
    """An SSD's read-ahead, write buffer (hits, full waits; SLC and native bytes with an SLC cache),
    FTL and zone counters (monotonic), None when it has none of them."""
    out: dict[str, float] = {}
    ra = d.readahead
    if ra is not None:
        out.update(readahead_hits=ra.hits, readahead_waits=ra.waits, prefetch_reads=ra.prefetch_reads)
    wb = d.write_buffer
    if wb is not None:
        out.update(wb.counters())
    m = d.media
    if m is not None:  # reads on the NAND dies: suspends, waits for the die and the channel
        out.update(m.counters())
    f = d.ftl
    if f is not None:
        out.update(
            host_pages=f.host_pages, nand_pages=f.nand_pages, gc_copies=f.gc_copies, erases=f.erases, gc_ns=f.gc_ns
        )
        used = [h for h, pages in enumerate(f.handle_pages) if pages]
        if len(used) > 1:  # flexible data placement: per reclaim unit handle the host wrote with
            for h in used:
                out[f"ruh{h}_host_pages"] = f.handle_pages[h]
                out[f"ruh{h}_gc_copies"] = f.handle_copies[h]
                out[f"ruh{h}_reclaim_units"] = f.handle_units[h]
    if getattr(d, "nvm_used", False):
        out.update(d.nvm_commands.counters())
    z = d.zones
    if z is not None:
        out.update(
            zone_resets=z.resets, zone_finishes=z.finishes, zone_errors=z.errors, implicit_closes=z.implicit_closes
        )
        zm = getattr(d, "zoned_media", None)
        if zm is not None:
            out.update(zone_media_ns=zm.media_ns)  # die time of resets' erases and finishes' padding
            if zm.media is not None:  # on NAND media: the erases and padding programs booked on the dies
                out.update(zone_erases=zm.erases, zone_pad_programs=zm.pad_programs)
    fw = getattr(d, "firmware", None)
    if fw is not None:
        out.update(firmware_busy_ns=fw.busy_ns, firmware_wait_ns=fw.wait_ns)
    return out or None


def ssd_media(host: Host, s: Snapshot) -> dict:
    """Per SSD with read-ahead, an FTL or zones, over the measured window: read-ahead hits (reads
    served from prefetched data; those that waited for it) and prefetch media reads, writes the
    write buffer took at once and those that waited for room, bytes programmed at the SLC and the
    native rate, write
    amplification (NAND pages programmed per page the host wrote; host writes and GC copies),
    erases, GC time (``gc_ns``: the media unit time of GC's copies and erases), the NAND media's
    reads, programs and erases (``media_reads``, ``media_programs``: the write buffer's multi-plane
    programs and GC's copies, ``media_erases``), suspends and waits for the die and the channel
    (``models.ssd.media``), the write buffer's waits for room (``buffer_wait_ns``), with flexible data
    placement each reclaim unit handle's host pages, GC copies of its data, reclaim units opened
    and write amplification (``ruhN_*``), the Write Zeroes, Write Uncorrectable and Verify commands
    and the reads that met an uncorrectable block (:mod:`models.ssd.nvm_commands`), zone resets,
    finishes, errors and implicit closes, the dies' time on resets and finishes (``zone_media_ns``),
    and the firmware's busy time and the commands' waits for it (``firmware_busy_ns``,
    ``firmware_wait_ns``)."""
    out = {}
    for d, before in zip(host.devices, s.media):
        now = media_counters(d)
        if now is None:
            continue
        before = before or {}  # (the command counters start with the device's first such command)
        delta = {k: v - before.get(k, 0) for k, v in now.items()}
        if "host_pages" in delta:
            delta["write_amplification"] = delta["nand_pages"] / delta["host_pages"] if delta["host_pages"] else None
        for k in [k for k in delta if k.endswith("_gc_copies") and k.startswith("ruh")]:
            h = k[: -len("_gc_copies")]
            pages = delta[f"{h}_host_pages"]
            delta[f"{h}_write_amplification"] = (pages + delta[k]) / pages if pages else None
        out[f"ssd{d.index}"] = delta
    return out


def ssd_power_states(host: Host, s: Snapshot, end: float, dur_ns: float) -> dict:
    """Per SSD with APST: fraction of the measured time in each low-power state, and wake-ups
    from it (commands that found the device there)."""
    out = {}
    for i, d in enumerate(host.devices):
        if d.apst is None:
            continue
        res0, wk0 = s.apst[i]
        res1 = d.apst.residency_ns_at(end)
        out[f"ssd{d.index}"] = {
            name: {"residency": (res1[name] - res0[name]) / dur_ns, "wakeups": d.apst.wakeups[name] - wk0[name]}
            for name in res1
        }
    return out


def cycles_per_s(host: Host, layer_cycles, s: Snapshot, end: float, dur_s: float) -> dict:
    """CPU cycles per second of each source of work: the stack layers and the cpuidle POLL spin."""
    out = {name: float(layer_cycles[j] / dur_s) for j, name in enumerate(LAYERS)}
    spin = sum(r.spin_cycles(end) - s.spin_cycles[i] for i, r in enumerate(host.runners))
    out["idle_spin"] = spin / dur_s
    return out


def layer_instructions(host: Host, s: Snapshot) -> np.ndarray:
    """Instructions retired by stack layer since ``s``: the cost bundles charged x the instructions
    each retires, and the poll loops' cycles at the polling layer's CPI."""
    bundles = host.costs.bundles
    out = np.zeros(len(LAYERS))
    for i, r in enumerate(host.runners):
        before = s.counts[i]
        for idx, cnt in r.counts.items():
            d = cnt - before.get(idx, 0)
            if d:
                out += d * np.asarray(bundles[idx].layer_instructions)
    polling = LAYERS.index("polling")
    out[polling] += (
        sum(r.poll_cycles - s.poll[i] for i, r in enumerate(host.runners)) / host.kcosts.cpi_by_layer["polling"]
    )
    return out


def smt_stall_cycles(host: Host, s: Snapshot, end: float) -> float:
    """Cycles the logical CPUs spent waiting on their SMT sibling since ``s`` (each CPU's stall time
    at its core's mean frequency over the interval)."""
    dur = end - s.t
    out = 0.0
    for i, r in enumerate(host.runners):
        core = host.pkg.cpus[r.id].core
        ghz = (core.ghz_ns_at(end) - s.ghz_ns[core.index]) / dur if dur > 0 else r.freq
        out += (r.smt_stall_ns - s.smt[i]) * ghz
    return out


def perf_stat(
    plat, cycles_per_s: dict[str, float], layer_ins: np.ndarray, smt_cycles: float, dur_s: float, per_io: int
) -> dict:
    """What ``perf stat -a`` counts over the measured interval, per IO: every CPU's unhalted cycles
    (the stack layers, refetch stalls, SMT contention and the cpuidle POLL spin; a halted C-state
    and its exit count none) and instructions retired (the POLL loop at one iteration of
    ``kernel.poll_idle_loop_instructions`` per ``cpu.pause_cycles``), their ratio (IPC), and both by
    source (``perf_by_layer``: the layers, ``smt_contention`` and ``idle_spin``)."""
    spin_ipc = plat.kernel.poll_idle_loop_instructions / plat.cpu.pause_cycles
    rows = {}
    for j, name in enumerate(LAYERS):
        rows[name] = (cycles_per_s[name] * dur_s, float(layer_ins[j]))
    rows["smt_contention"] = (smt_cycles, 0.0)  # the same instructions, stretched by the sibling
    spin = cycles_per_s["idle_spin"] * dur_s
    rows["idle_spin"] = (spin, spin * spin_ipc)
    cycles = sum(c for c, _ in rows.values())
    ins = sum(i for _, i in rows.values())
    return {
        "cycles_per_io": cycles / per_io,
        "instructions_per_io": ins / per_io,
        "ipc": ins / cycles if cycles > 0 else 0.0,
        "perf_by_layer": {
            name: {"cycles_per_io": c / per_io, "instructions_per_io": i / per_io, "ipc": i / c if c > 0 else 0.0}
            for name, (c, i) in rows.items()
            if c > 0 or i > 0
        },
    }


def kernel_actions_per_s(host: Host, s: Snapshot, dur_s: float) -> dict[str, float]:
    """Executions per second of each kernel action and sub-action (models.os.costs.tables.ACTIONS,
    SUB_ACTIONS) since ``s``: the cost bundles charged x the actions each executes."""
    bundles = host.costs.bundles
    counts = [0.0] * len(ACTION_INDEX)
    for i, r in enumerate(host.runners):
        before = s.counts[i]
        for idx, cnt in r.counts.items():
            d = cnt - before.get(idx, 0)
            if d:
                for a, times in bundles[idx].actions:
                    counts[a] += d * times
    return {name: counts[j] / dur_s for name, j in ACTION_INDEX.items()}


def non_action_cycles(k, cycles_per_s: dict[str, float], actions_per_s: dict[str, float]) -> dict[str, float]:
    """Cycles per second of each source minus those of its layer's kernel actions (charged per
    action instead: models.os.costs.memops)."""
    out = dict(cycles_per_s)
    for layer, cyc in k.action_cycles(actions_per_s).items():
        out[layer] = max(0.0, out.get(layer, 0.0) - cyc)
    return out


def interrupt_metrics(host: Host, s: Snapshot, end: float, dur_s: float) -> dict:
    """Interrupt rates per CPU, completions per interrupt, completion inter-arrival percentiles."""
    per_cpu = {}
    for i, r in enumerate(host.runners):
        n = sum(r.irq_kinds.values()) - sum(s.irqs[i].values())
        if n:
            per_cpu[f"cpu{r.id}"] = n / dur_s
    nvme_irqs = sum(r.irq_kinds.get("nvme", 0) - s.irqs[i].get("nvme", 0) for i, r in enumerate(host.runners))
    reaped = host.driver.completions_reaped_by_irq - s.reaped_by_irq
    parts = []
    for d in host.devices:
        for qp in d.qps:
            qp.fold_posts()
            parts.append(qp.post_gaps)
    gaps = LatencyStats().merged(*parts)
    pcts = (10, 25, 50, 75, 90, 95, 99)
    inter = {f"p{p}": v / 1e3 for p, v in zip(pcts, gaps.percentiles(pcts))}
    return {
        "interrupts_per_s_per_cpu": per_cpu,
        "completions_per_interrupt": reaped / nvme_irqs if nvme_irqs else None,
        "cq_doorbells_per_interrupt": (host.driver.cq_doorbells - s.cq_doorbells) / nvme_irqs if nvme_irqs else None,
        "completion_interarrival_us": inter,
    }


def per_job_metrics(cfg: RunConfig, host: Host, stats: IoStats, s: Snapshot, dur_s: float) -> list[dict]:
    """Per job section: throughput and latency apart (sync latency vs async throughput in mixed
    runs) and the CPU share of its threads (time on a CPU / elapsed: includes IRQs that hit them)."""
    out = []
    for ji, job in enumerate(cfg.jobs):
        lat = stats.latency(ji)
        tasks = [t for t in host.all_tasks if t.job == ji]
        exec_ns = sum(t.exec_ns - s.tasks.get(t.tid, (0, 0, 0.0, 0.0, 0.0))[4] for t in tasks)
        out.append(
            {
                "name": job.name,
                "ioengine": job.ioengine,
                "iops": lat.n / dur_s,
                "latency_us": lat.summary_us() if lat.n else dict.fromkeys(lat.summary_us()),
                "cpu_share": exec_ns / (dur_s * 1e9),
            }
        )
    return out
