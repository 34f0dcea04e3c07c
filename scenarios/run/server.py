"""Run a storage-server configuration and summarise it (``summary`` + ``timeline`` + ``sim``):
:func:`simulate_server` (a :class:`~scenarios.config.server.ServerRunConfig`, from
:func:`scenarios.config.server.resolve_server`, -> result; called through
:func:`scenarios.run.simulate.simulate`).
Trace replay (``server-trace``) runs until every trace IO of the window has completed; its result
adds ``summary.trace_ios``, ``completed_ios``, ``ops`` (per direction) and a ``replay`` block.
"""

from __future__ import annotations

import time

import numpy as np

from models.cpu.power_limit import limit_summary
from models.power import EnergyReading, average_power
from models.server.target import Server
from scenarios.config.server import ServerRunConfig
from scenarios.run.assembly import build_server
from scenarios.run.result import Result
from scenarios.run.summary import io_and_energy
from simcore.errors import ConfigError
from simcore.plugins import load_plugin
from simcore.stats import LatencyStats, RecordChunks, record_sink, records_array, records_result

#: percentiles of the result's ``latency_cdf`` (fio's default list)
CDF_PERCENTILES = (1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95, 99.99)


# ---------------------------------------------------------------------------- running


def simulate_server(
    cfg: ServerRunConfig, tracer=None, records: bool | RecordChunks = False, keep_model: bool = False
) -> Result:
    """Run ``cfg`` (use :func:`scenarios.run.simulate.simulate`); the result has "scenario", "platform",
    "seed", "policy", "summary", "timeline", "sim", "latency_cdf" (trace replay: and "replay");
    ``result.records``: one row per measured request in the host's record format
    (:func:`server_records_table`; given a :class:`~simcore.stats.RecordChunks`, they go into it and
    ``result.records`` is that object, as for a host run)."""
    wall0 = time.perf_counter()
    for p in cfg.plugins:
        load_plugin(p)
    srv = build_server(cfg, tracer)
    sink = record_sink(records)
    if sink is not None:
        srv.keep_records()
    wl = cfg.workload
    if tracer is not None:
        tracer.power_counter(srv.engine, srv.pkg.power_w, wl.end_ns if srv.trace is None else tracer.t1)
    warm = wl.warmup_ns
    bin_ns = cfg.metrics.bin_ms * 1e6
    snaps: dict[float, dict] = {}
    if srv.trace is not None:
        end = _run_trace(srv, warm, bin_ns, snaps)
    else:
        end = _run_timed(srv, warm, bin_ns, snaps, wl.end_ns, cfg.drain_s)
    wall = time.perf_counter() - wall0
    srv.trace_finish(srv.engine.now)
    data = summarize_server_run(cfg, srv, snaps, warm, end, wall)
    if sink is not None:
        sink(server_records_table(srv, warm, end))
    return Result(data, records=records_result(records, sink), trace=tracer, model=srv if keep_model else None)


def _run_timed(srv: Server, warm: float, bin_ns: float, snaps: dict, end: float, drain_s: float) -> float:
    """Run a stable or burst workload to ``end`` (ns), snapshots every ``bin_ns`` from 0 and at
    ``warm``; then ``drain_s`` more without arrivals (not measured). Returns ``end``."""
    marks = sorted({min(k * bin_ns, end) for k in range(int(end // bin_ns) + 1)} | {warm})
    marks = [t for t in marks if t < end]

    def take(i: int) -> None:
        snaps[marks[i]] = srv.snapshot()
        if i + 1 < len(marks):
            srv.engine.call_at(marks[i + 1], take, i + 1)

    srv.engine.call_at(marks[0], take, 0)
    srv.engine.run(end)
    snaps[end] = srv.snapshot()
    if drain_s > 0:
        srv.engine.run(end + drain_s * 1e9)
    return end


def _run_trace(srv: Server, warm: float, bin_ns: float, snaps: dict) -> float:
    """Run a trace replay until its last IO has reached the client; returns that time (the end of
    the measured interval). Snapshots every ``bin_ns`` from 0 and at ``warm``, taken lazily."""
    eng = srv.engine

    def take_bin(k: int) -> None:
        snaps[k * bin_ns] = srv.snapshot()
        eng.call_at((k + 1) * bin_ns, take_bin, k + 1)

    def take_warm() -> None:
        snaps[warm] = srv.snapshot()

    snaps[0.0] = srv.snapshot()  # now, before the first arrival (at t = 0: the window's first record)
    eng.call_at(bin_ns, take_bin, 1)
    if warm > 0 and warm % bin_ns:
        eng.call_at(warm, take_warm)
    try:
        eng.run(srv.drained)
    except RuntimeError as err:
        if "until" not in str(err):
            raise
        # simpy: the queue ran dry with requests outstanding (a model bug, not bad input)
        raise RuntimeError(
            f"trace replay stalled: {srv.n_done} of {srv.n_offered} requests completed ({err})"
        ) from None
    now = eng.now
    end = max(float(np.frombuffer(srv.rec_done, dtype=float).max()), now)
    if end > now:
        eng.run(end)
    for t in [t for t in snaps if t >= end]:
        del snaps[t]
    snaps[end] = srv.snapshot()
    if warm >= end:
        raise ConfigError(
            f"workload.warmup_s={warm / 1e9:g}: the replay ends at {end / 1e9:.6g} s, before the warm-up does"
        )
    return end


def latency_cdf(lat_ns: np.ndarray, write: np.ndarray | None = None, op: str = "read") -> dict:
    """Latency percentiles (us) at :data:`CDF_PERCENTILES` per direction, in the shape of the sweep
    rows' ``cdf`` column: ``{"pct": [...], "read_us": [...], "write_us": [...]}``; from fio's
    histogram, as a host run's (:class:`simcore.stats.LatencyStats`)."""
    out: dict[str, list] = {}
    parts = {op: lat_ns} if write is None else {"read": lat_ns[write == 0], "write": lat_ns[write != 0]}
    for name in ("read", "write"):
        lat = parts.get(name)
        if lat is not None and lat.size:
            out[f"{name}_us"] = [round(float(v) / 1e3, 3) for v in LatencyStats.of(lat).percentiles(CDF_PERCENTILES)]
    if out:
        out["pct"] = list(CDF_PERCENTILES)
    return out


def power_between(cfg: ServerRunConfig, srv: Server, a: dict, b: dict) -> dict:
    """Power breakdown (W) between two snapshots, through the platform's power model."""
    dur_ns = b["t"] - a["t"]
    if dur_ns <= 0:
        return {k: 0.0 for k in ("cpu", "ssd", "dram", "other", "others", "system")}
    p = average_power(cfg.platform, srv.devices, _energy_reading(a), _energy_reading(b))
    return {
        "cpu": p["cpu"],
        "ssd": p["ssd"],
        "dram": p["dram"],
        "other": p["other"],
        "others": p["dram"] + p["other"],  # SANDMAN's "others": everything but CPU package and SSDs
        "system": p["system"],
    }


def _energy_reading(snap: dict) -> EnergyReading:
    """The energy accounts of a server snapshot (:meth:`Server.snapshot`)."""
    return EnergyReading(snap["t"], snap["cpu_j"], snap["ssd_busy"], snap["acc"][0], snap["acc"][1])


def burst_accuracy(
    decisions: list[float], windows: list[tuple[float, float]], t0: float, t1: float, grace_ns: float = 1e6
) -> dict:
    """Detection accuracy against the true burst windows (decisions = times a burst was acted on).

    A burst is detected if a decision falls inside it; its detection latency is the first such
    decision minus the burst start. A decision is a true positive if it falls in a burst or
    within ``grace_ns`` after one ended (the tail of the surge), else a false positive."""
    dec = [d for d in decisions if t0 <= d <= t1]
    wins = [(a, b) for a, b in windows if a < t1 and b > t0]
    out = {"decisions": len(dec), "true_bursts": len(wins)}
    if not wins:
        out.update(
            {
                "detected": None,
                "recall": None,
                "precision": None,
                "false_positives": len(dec),
                "detection_latency_us": [],
                "mean_detection_latency_us": None,
            }
        )
        return out
    lat = []
    for a, b in wins:
        first = next((d for d in dec if a <= d <= b), None)
        if first is not None:
            lat.append((first - a) / 1e3)
    tp = sum(1 for d in dec if any(a <= d <= b + grace_ns for a, b in wins))
    quiet_s = max((t1 - t0) - sum(min(b, t1) - max(a, t0) for a, b in wins), 0.0) * 1e-9
    out.update(
        {
            "detected": len(lat),
            "recall": len(lat) / len(wins),
            "precision": tp / len(dec) if dec else None,
            "false_positives": len(dec) - tp,
            "false_positives_per_quiet_s": (len(dec) - tp) / quiet_s if quiet_s > 0 else None,
            "detection_latency_us": lat,
            "mean_detection_latency_us": float(np.mean(lat)) if lat else None,
        }
    )
    return out


# long: one flat table of the summary's figures, one line each (the steps are helpers below)
def summarize_server_run(
    cfg: ServerRunConfig, srv: Server, snaps: dict, warm: float, end: float, wall_s: float
) -> dict:
    """The result of a server run measured from ``warm`` to ``end`` (ns): ``summary`` (client-side
    latency, throughput, power and energy, active cores, migrations, residency, burst detection),
    ``timeline`` (per bin), ``sim`` and ``latency_cdf``; trace replay adds per-direction figures and
    ``replay``."""
    a, b = snaps[warm], snaps[end]
    dur_ns = end - warm
    dur_s = dur_ns * 1e-9
    arr = np.frombuffer(srv.rec_arr, dtype=float)
    done = np.frombuffer(srv.rec_done, dtype=float)
    half = srv.half_rtt
    # latency: requests that arrived in the window and completed before its end; throughput:
    # every completion in the window (an open-loop client keeps offering load when the server lags)
    sel = (arr >= warm) & (done <= end)
    lat = done[sel] - arr[sel] + half
    counted = (done > warm) & (done <= end)
    n = int(counted.sum())
    wl = cfg.workload
    trace = srv.trace
    if trace is not None:
        nbytes = int(np.frombuffer(srv.rec_nb, dtype=np.int64)[counted].sum())
    else:
        nbytes = n * wl.bs
    pw = power_between(cfg, srv, a, b)
    decisions = list(getattr(srv.policy, "burst_decisions", ()))
    in_flight = srv.n_offered - int((done <= srv.engine.now).sum())
    summary = {
        "policy": cfg.server.policy,
        **io_and_energy(n, nbytes, LatencyStats.of(lat), dur_s, pw),
        "offered_iops": (b["offered"] - a["offered"]) / dur_s,
        "thread_migrations": b["migrations"] - a["migrations"],
        "thread_migrations_per_s": (b["migrations"] - a["migrations"]) / dur_s,
        **_active_cores(a, b, dur_ns),
        "cpu_utilization": (b["reactor_busy"] - a["reactor_busy"]) / (len(srv.reactors) * dur_ns),
        "reactor_wakeups": b["wakes"] - a["wakes"],
        "freq_transitions": b["freq_transitions"] - a["freq_transitions"],
        "cstate_residency": _residency(srv, a, b, dur_ns),
        "burst_detection": burst_accuracy(decisions, wl.windows(), warm, end),
        "requests": {"offered": srv.n_offered, "completed": srv.n_offered - in_flight, "in_flight": in_flight},
        "policy_stats": srv.policy.summary(),
    }
    if srv.pkg.limiter is not None:
        summary["cpu_power_limit"] = limit_summary(srv.pkg, a["power_limit"], b["power_limit"], dur_ns)
    if trace is not None:
        summary.update(_trace_figures(srv, sel, counted, lat))
        cdf = latency_cdf(lat, np.frombuffer(srv.rec_wr, dtype=np.int8)[sel])
    else:
        cdf = latency_cdf(lat, op=wl.op)
    result = {
        "stacksim_version": "0.1.0",
        "scenario": cfg.name,
        "platform": cfg.platform.name,
        "seed": cfg.seed,
        "policy": cfg.server.policy,
        "summary": summary,
        "timeline": timeline(cfg, srv, snaps, arr, done, end),
        "sim": _sim_block(srv, end, dur_s, wall_s),
        "latency_cdf": cdf,
    }
    if trace is not None:
        result["replay"] = trace.describe()
    return result


def _active_cores(a: dict, b: dict, dur_ns: float) -> dict:
    """Mean logical and physical cores in C0, their mean clock, and the C0 GHz summed over
    logical cores, from the package's C0 accounts between snapshots ``a`` and ``b``."""
    acc0, acc1 = a["acc"], b["acc"]
    phys_ns = acc1[0] - acc0[0]
    return {
        "active_cores_mean": (acc1[2] - acc0[2]) / dur_ns,
        "active_physical_cores_mean": phys_ns / dur_ns,
        "active_freq_ghz_mean": (acc1[1] - acc0[1]) / phys_ns if phys_ns > 0 else 0.0,
        "compute_capacity_ghz_mean": (acc1[3] - acc0[3]) / dur_ns,
    }


def _residency(srv: Server, a: dict, b: dict, dur_ns: float) -> dict:
    """Fraction of the measured time in C0 and in each C-state, averaged over the logical CPUs."""
    ncpu = len(srv.cpus)
    residency = {"C0": (b["c0_busy_ns"] - a["c0_busy_ns"]) / (ncpu * dur_ns)}
    for j, st in enumerate(srv.ccfg.cstates):
        residency[st.name] = (b["cstate_ns"][j] - a["cstate_ns"][j]) / (ncpu * dur_ns)
    return residency


def _trace_figures(srv: Server, sel: np.ndarray, counted: np.ndarray, lat: np.ndarray) -> dict:
    """Trace replay: IOs read and completed, late arrivals, bad lines, what was not replayed, and
    per direction the IOs and bytes completed in the window and their latency (``sel``: requests
    that arrived and completed in it, ``lat`` their latencies; ``counted``: completed in it)."""
    trace = srv.trace
    nb = np.frombuffer(srv.rec_nb, dtype=np.int64)
    wr = np.frombuffer(srv.rec_wr, dtype=np.int8)
    w_sel = wr[sel]
    ops = {}
    for name, flag in (("read", 0), ("write", 1)):
        m = counted & (wr == flag)
        ops[name] = {
            "ios": int(m.sum()),
            "bytes": int(nb[m].sum()),
            "latency_us": LatencyStats.of(lat[w_sel == flag]).summary_us(),
        }
    return {
        "trace_ios": trace.ios,
        "completed_ios": srv.n_done,
        "late_arrivals": trace.late,
        "bad_lines": trace.reader.bad_lines,
        "skipped": trace.skipped(),
        "ops": ops,
    }


def _sim_block(srv: Server, end: float, dur_s: float, wall_s: float) -> dict:
    """What the simulation cost: simulated and measured seconds, events, wall time and speed."""
    events = srv.engine.events_processed
    return {
        "simulated_s": end * 1e-9,
        "measured_s": dur_s,
        "events": events,
        "events_per_io": events / max(srv.n_offered, 1),
        "wall_s": wall_s,
        "real_time_factor": end * 1e-9 / wall_s if wall_s > 0 else None,
        "ios_per_wall_s": srv.n_offered / wall_s if wall_s > 0 else None,
    }


def timeline(cfg: ServerRunConfig, srv: Server, snaps: dict, arr: np.ndarray, done: np.ndarray, end: float) -> dict:
    """Per-bin metrics (bins of ``metrics.bin_ms``; the warm-up is included)."""
    ts = sorted(t for t in snaps)
    half = srv.half_rtt
    order = np.argsort(done, kind="stable")
    d_sorted = done[order]
    lat_sorted = (d_sorted - arr[order] + half) / 1e3
    edges = np.searchsorted(d_sorted, ts)
    wins = cfg.workload.windows()
    out: dict[str, list] = {
        k: []
        for k in (
            "t_s",
            "iops",
            "latency_p50_us",
            "latency_p99_us",
            "latency_p99_9_us",
            "power_cpu_w",
            "power_ssd_w",
            "power_system_w",
            "active_cores",
            "active_physical_cores",
            "active_freq_ghz",
            "compute_capacity_ghz",
            "thread_migrations",
            "burst_decisions",
            "true_burst",
        )
    }
    for i in range(len(ts) - 1):
        t0, t1 = ts[i], ts[i + 1]
        a, b = snaps[t0], snaps[t1]
        dt = t1 - t0
        if dt <= 0:
            continue
        seg = lat_sorted[edges[i] : edges[i + 1]]
        pw = power_between(cfg, srv, a, b)
        phys = b["acc"][0] - a["acc"][0]
        out["t_s"].append(t0 * 1e-9)
        out["iops"].append(seg.size / (dt * 1e-9))
        if seg.size:
            p50, p99, p999 = np.percentile(seg, [50, 99, 99.9])
        else:
            p50 = p99 = p999 = None
        out["latency_p50_us"].append(None if p50 is None else float(p50))
        out["latency_p99_us"].append(None if p99 is None else float(p99))
        out["latency_p99_9_us"].append(None if p999 is None else float(p999))
        out["power_cpu_w"].append(pw["cpu"])
        out["power_ssd_w"].append(pw["ssd"])
        out["power_system_w"].append(pw["system"])
        out["active_cores"].append((b["acc"][2] - a["acc"][2]) / dt)
        out["active_physical_cores"].append(phys / dt)
        out["active_freq_ghz"].append((b["acc"][1] - a["acc"][1]) / phys if phys > 0 else 0.0)
        out["compute_capacity_ghz"].append((b["acc"][3] - a["acc"][3]) / dt)
        out["thread_migrations"].append(b["migrations"] - a["migrations"])
        out["burst_decisions"].append(b["decisions"] - a["decisions"])
        out["true_burst"].append(sum(max(0.0, min(w1, t1) - max(w0, t0)) for w0, w1 in wins) / dt)
    out["bin_ms"] = cfg.metrics.bin_ms
    return out


# ---------------------------------------------------------------------------- CLI helpers


def server_records_table(srv: Server, warm: float, end: float) -> np.ndarray:
    """The requests measured from ``warm`` to ``end`` (ns; those that arrived in the window and
    completed before its end, like the summary's latency) in the host's record format
    (:data:`simcore.stats.RECORD_FIELDS`): the client sends a request half a round trip before it
    reaches the target (``t_submit_ns``) and gets the response at ``t_complete_ns``, so
    ``t_complete_ns - t_submit_ns`` is the client-side latency; ``t_dispatch_ns`` is the NVMe
    submit, ``t_reaped_ns`` when a reactor began its completion, ``thread`` its lightweight thread,
    ``cpu`` that reactor's CPU; ``job`` is 0 (one workload)."""
    reqs = [q for q in srv.records if q.t_arr >= warm and q.t_complete <= end]
    half = srv.half_rtt
    cols = {
        "io": [q.id for q in reqs],
        "job": [0] * len(reqs),
        "thread": [q.thread.idx for q in reqs],
        "cpu": [q.cpu for q in reqs],
        "op": [q.op for q in reqs],
        "bytes": [q.nbytes for q in reqs],
        "t_submit_ns": [q.t_arr - half for q in reqs],
    }
    for name, attr in (
        ("t_dispatch_ns", "t_submit"),
        ("t_dev_start_ns", "t_dev_start"),
        ("t_dev_end_ns", "t_dev_end"),
        ("t_cqe_ns", "t_cqe"),
        ("t_reaped_ns", "t_reaped"),
        ("t_complete_ns", "t_complete"),
        ("device_service_ns", "device_service_ns"),
    ):
        cols[name] = [getattr(q, attr) for q in reqs]
    return records_array(cols)
