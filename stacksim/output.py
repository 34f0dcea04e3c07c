"""Terminal output: the readable summaries of a run, a replay and a server run, and where the
command's text goes when a data output is standard output. Data outputs (JSON, per-IO records)
are :mod:`scenarios.run.outputs`."""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path

from models.cpu.power_limit import format_limit
from simcore.outfile import data_to_stdout
from simcore.stats import PLAT_REL_ERROR
from stacksim.fileargs import check_file_args


def stdout_outputs(args):
    """A context for running a sub-command: first its file arguments are checked (no output is one
    of its inputs or another output, at most one is standard output: :mod:`stacksim.fileargs`);
    with an output on standard output ('-'), the command's own text (summary, tables) goes to
    standard error."""
    return data_to_stdout() if check_file_args(args) else contextlib.nullcontext()


def _f(value, fmt: str) -> str:
    """``value`` formatted, or ``n/a`` for a figure the run could not measure (None)."""
    return "n/a" if value is None else format(value, fmt)


def latency_line(s: dict) -> str:
    """The latency line; a second line when a tail percentile shows below the mean by less than
    a histogram bucket (percentiles are fio's histogram buckets' values, simcore/stats.py: a
    near-constant latency can put the p99's bucket middle under the exact mean)."""
    lat = s["latency_us"]
    line = (
        f"  latency us: mean {_f(lat['mean'], '.2f')}  p50 {_f(lat['p50'], '.2f')}  p90 {_f(lat['p90'], '.2f')}"
        f"  p99 {_f(lat['p99'], '.2f')}  p99.9 {_f(lat['p99_9'], '.2f')}  max {_f(lat['max'], '.2f')}"
    )
    mean = lat["mean"]
    below = [
        name
        for name, key in (("p90", "p90"), ("p99", "p99"), ("p99.9", "p99_9"))
        if mean is not None and lat[key] is not None and mean * (1 - PLAT_REL_ERROR) <= lat[key] < mean
    ]
    if below:
        line += (
            f"\n  ({', '.join(below)} below the mean by less than a histogram bucket: percentiles are the"
            f" values of fio's latency-histogram buckets, each within {100 * PLAT_REL_ERROR:.2f}% of the exact"
            " one; the mean is exact)"
        )
    return line


def power_energy_lines(s: dict) -> list[str]:
    pw = s["power_w"]
    return [
        f"  power W: CPU {pw['cpu']:.1f}  SSD {pw['ssd']:.1f}  DRAM {pw['dram']:.1f}  other {pw['other']:.1f}"
        f"  system {pw['system']:.1f}",
        f"  energy {s['energy_j']:.2f} J   {s['bytes_per_joule'] / 1e6:.2f} MB/J"
        f"   {_f(s['energy_j_per_million_ios'], '.1f')} J per million IOs",
    ]


def perf_line(s: dict) -> str:
    """Instructions and IPC per IO, as ``perf stat -a`` counts them (all CPUs; the POLL spin counts,
    halted idle does not), and the IPC of the layers that retire most."""
    top = sorted(s["perf_by_layer"].items(), key=lambda kv: -kv[1]["instructions_per_io"])[:4]
    by = "  ".join(f"{k} {row['ipc']:.2f}" for k, row in top if row["instructions_per_io"] >= 0.5)
    return (
        f"  perf stat -a per IO: instructions {s['instructions_per_io']:,.0f}   cycles {s['cycles_per_io']:,.0f}"
        f"   IPC {s['ipc']:.2f}" + (f"   (IPC by layer: {by})" if by else "")
    )


def _media(v) -> str:
    return "n/a" if v is None else f"{v:.3f}" if isinstance(v, float) else f"{v:,}"


def _media_item(key: str, v) -> str:
    """``gc_copies 1,234``; a time in ns (``gc_ns``) as ms: ``gc_ms 8.9``."""
    if key.endswith("_ns") and v is not None:
        return f"{key[:-3]}_ms {v / 1e6:,.1f}"
    return f"{key} {_media(v)}"


def _policies(s: dict, io_scheduler: str | None, plugins: tuple[str, ...]) -> str:
    """``policies: interrupt, IO scheduler mq-deadline; plug-ins: min_hybrid.py``: the completion
    policies the run used, the IO scheduler of its devices and the plug-ins loaded for it."""
    text = "policies: " + ", ".join(s["completion_policies"])
    if io_scheduler is not None:
        text += f", IO scheduler {io_scheduler}"
    return text + (f"; plug-ins: {', '.join(plugins)}" if plugins else "")


def _plugin_names(result: dict, own: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The plug-ins of a run by name: the configuration's (``own``) and the ``--plugin`` files of
    its provenance, each once (a file by its base name)."""
    prov = result.get("provenance") or {}
    paths = [*own, *(str(p.get("path")) for p in prov.get("cli_plugins") or [] if isinstance(p, dict))]
    return tuple(dict.fromkeys(Path(p).name if p.endswith(".py") else p for p in paths))


def format_summary(
    result: dict, io_scheduler: str | None = None, plugins: tuple[str, ...] = (), power_note: str | None = None
) -> str:
    """A readable terminal summary of one run (``io_scheduler``: the devices' scheduler, after
    fio's ``ioscheduler``; ``plugins``: the configuration's plug-ins; ``power_note``: what the
    platform says of its power figures when they are estimates, printed under them)."""
    s = result["summary"]
    sim = result["sim"]
    out = [
        f"stacksim {result['scenario']} on {result['platform']}"
        f" (seed {result['seed']}, {_policies(s, io_scheduler, _plugin_names(result, plugins))})",
        f"  IOPS {s['iops']:,.0f}   bandwidth {s['bandwidth_mb_s']:,.1f} MB/s   IOs {s['ios']:,}",
        latency_line(s),
        f"  CPU utilization {100 * s['cpu_utilization']:.1f}% of all logical CPUs"
        f"   context switches/IO {_f(s['context_switches_per_io'], '.3f')}"
        f"   interrupts/IO {_f(s['interrupts_per_io'], '.3f')}",
        *power_energy_lines(s),
        *([f"  ({power_note})"] if power_note else []),
        "  CPU time per IO by layer (ns): "
        + ("  ".join(f"{k} {v:.0f}" for k, v in s["layers"].items() if v >= 0.5) if s["layers"] else "n/a (no IO)"),
    ]
    if s.get("instructions_per_io") is not None:  # (None: no IO measured)
        out.append(perf_line(s))
    if s.get("pagecache"):  # a buffered run (docs/pagecache.md)
        pc = s["pagecache"]
        keys = ("read_pages", "written_back_pages", "dirty_pages", "reclaimed_pages", "kswapd_reclaimed_pages")
        mb = {k: pc[k] * 4096 / 1e6 for k in keys}
        out.append(
            f"  page cache (whole run): hit ratio {pc['hit_ratio']:.3f}   read from SSD {mb['read_pages']:,.1f} MB"
            f"   written back {mb['written_back_pages']:,.1f} MB   dirty at end {mb['dirty_pages']:,.1f} MB"
            f"   throttled {pc['throttle_paused_ms']:,.1f} ms   reclaimed: by tasks {mb['reclaimed_pages']:,.1f} MB"
            f", by kswapd {mb['kswapd_reclaimed_pages']:,.1f} MB"
        )
    if s.get("sync"):  # fio's fsync=N / fdatasync=N / end_fsync, apart from the IOs (as fio reports them)
        lat = s["sync"]["latency_us"]
        out.append(
            f"  syncs {s['sync']['total_ios']:,}   latency (us): mean {lat['mean']:,.1f}   p99 {lat['p99']:,.1f}"
            f"   max {lat['max']:,.1f}"
        )
    if s.get("freq_transitions"):
        freqs = "  ".join(f"{core} {ghz:.2f}" for core, ghz in list(s["freq_ghz_mean"].items())[:8])
        out.append(f"  CPU frequency (GHz, mean): {freqs}   P-state transitions {s['freq_transitions']:,}")
    if format_limit(s):
        out.append(format_limit(s))
    busy = [(cpu, row) for cpu, row in s["cstate_residency"].items() if row.get("C0", 0) > 0.001]
    for cpu, row in busy[:8]:
        out.append(f"  {cpu} residency: " + "  ".join(f"{k} {100 * v:.1f}%" for k, v in row.items() if v >= 0.0005))
    out += _job_lines(result)
    for dev, m in (s.get("ssd_media") or {}).items():
        out.append(f"  {dev} media: " + "  ".join(_media_item(k, v) for k, v in m.items()))
    if result.get("ignored_fio_options"):
        out.append(
            "  fio options accepted without effect on the simulation: " + ", ".join(result["ignored_fio_options"])
        )
    rtf = sim["real_time_factor"]
    out.append(
        f"  simulated {sim['simulated_s']:.3f} s in {sim['wall_s']:.2f} s wall ({sim['events']:,} events, "
        f"{(rtf or 0):.3f} simulated s per wall s, {sim['ios_per_wall_s'] or 0:,.0f} IOs per wall s)"
    )
    return "\n".join(out)


def _job_lines(result: dict) -> list[str]:
    """The jobs that ended with an error (as fio reports them), and each verify's count."""
    out = []
    for job in result.get("jobs") or ():
        if job.get("error"):
            err = job["error"]
            what = (
                f"{errno.errorcode[err]}: {os.strerror(err)}"
                if err in errno.errorcode
                else f"device error {err:#x}: an NVMe status through io_uring_cmd"
            )
            out.append(f"  job {job['jobname']}: ended with error {err} ({what}), as fio would")
    for name, v in (result["summary"].get("verify") or {}).get("jobs", {}).items():
        out.append(
            f"  verify ({v['type']}) job {name}: {v['blocks_verified']:,} blocks read back and checked"
            f" of {v['blocks_logged']:,} written; passed by construction (the data is not simulated)"
        )
    return out


def format_replay(result: dict, io_scheduler: str | None = None, plugins: tuple[str, ...] = ()) -> str:
    """The terminal summary of a replay: ``stacksim run``'s (``io_scheduler``: the devices'
    scheduler, ``platform.queue.scheduler``; ``plugins``: the ``--plugin`` files) plus what was
    replayed."""
    s, r = result["summary"], result["replay"]
    skipped = ", ".join(f"{n} {why}" for why, n in sorted(s["skipped"].items())) or "none"
    vols = ", ".join(f"{v}->{d}" for v, d in list(r["volumes"].items())[:8])
    if len(r["volumes"]) > 8:
        vols += f", ... ({len(r['volumes'])} volumes)"
    lag = r.get("issue_lag_us")
    how = (
        f"issue lag us mean {lag['mean']:.2f} p99 {lag['p99']:.2f} max {lag['max']:.2f}"
        if lag is not None
        else f"think times computed {r['think']['computed']:,}, slept {r['think']['slept']:,}"
    )
    return "\n".join(
        [
            format_summary(result, io_scheduler=io_scheduler, plugins=plugins),
            f"  trace {r['trace']} ({r['format']}): {r['lines_read']:,} lines read,"
            f" {s['trace_ios']:,} IOs in the window, {s['completed_ios']:,} completed,"
            f" {s['bad_lines']} bad lines skipped; not replayed: {skipped}",
            f"  replay: {r.get('mode', 'open')}, speed x{r['speed']:g}, {r['threads']} submitter threads, "
            f"{r['completion']} completion, volumes {vols}; {how}",
        ]
    )


def format_run(cfg):
    """The terminal summary of a run of ``cfg``, by its kind (host or server)."""
    if cfg.kind == "server":
        return format_server_summary
    from scenarios.config.probe_power import power_note
    from scenarios.run.iosched_switch import switched_queue

    sched = switched_queue(cfg.queue, cfg.jobs).scheduler
    note = power_note(cfg.platform.power)
    return lambda result: format_summary(result, io_scheduler=sched, plugins=tuple(cfg.plugins), power_note=note)


def format_server_summary(result: dict) -> str:
    """A readable terminal summary of one server run (the CLI's counterpart of ``format_summary``)."""
    s = result["summary"]
    sim = result["sim"]
    bd = s["burst_detection"]
    out = [
        f"stacksim {result['scenario']} on {result['platform']} (seed {result['seed']}, policy {result['policy']})",
        f"  IOPS {s['iops']:,.0f} (offered {s['offered_iops']:,.0f})   bandwidth {s['bandwidth_mb_s']:,.1f} MB/s"
        f"   IOs {s['ios']:,}",
        latency_line(s),
        *power_energy_lines(s),
        f"  active cores {s['active_cores_mean']:.1f} logical / {s['active_physical_cores_mean']:.1f} physical at"
        f" {s['active_freq_ghz_mean']:.2f} GHz   reactor utilization {100 * s['cpu_utilization']:.1f}%",
        f"  thread migrations {s['thread_migrations']:,} ({s['thread_migrations_per_s']:,.0f}/s)   reactor wake-ups"
        f" {s['reactor_wakeups']:,}   frequency transitions {s['freq_transitions']:,}",
    ]
    if format_limit(s):
        out.append(format_limit(s))
    if bd["true_bursts"] or bd["decisions"]:
        lat_us = bd.get("mean_detection_latency_us")
        out.append(
            f"  bursts: {bd['true_bursts']} true, {bd['decisions']} decisions, detected {bd['detected']},"
            f" false positives {bd['false_positives']}"
            + (f", mean detection latency {lat_us:.1f} us" if lat_us is not None else "")
        )
    if "trace_ios" in s:
        rp = result["replay"]
        ops = s["ops"]
        skipped = ", ".join(f"{n} {why}" for why, n in sorted(s["skipped"].items())) or "none"
        out.append(
            f"  trace {rp['trace']} ({rp['format']}): {s['trace_ios']:,} IOs in the window, {s['completed_ios']:,}"
            f" completed ({ops['read']['ios']:,} reads p99 {ops['read']['latency_us']['p99']:.1f} us,"
            f" {ops['write']['ios']:,} writes p99 {ops['write']['latency_us']['p99']:.1f} us in the measured"
            f" interval), {s['bad_lines']} bad lines skipped, {s['late_arrivals']} late; not replayed: {skipped}"
        )
    out.append(
        f"  simulated {sim['simulated_s']:.3f} s in {sim['wall_s']:.2f} s wall ({sim['events']:,} events,"
        f" {sim['events_per_io']:.2f} per IO)"
    )
    return "\n".join(out)
