"""``stacksim explain``: where the nanoseconds of one typical IO go, per completion policy.

For each completion policy the job's engine can use (pvsync2: interrupt, classic polling, hybrid
polling; io_uring: interrupt, IOPOLL; others: interrupt), the job's own policy first, the job
runs briefly (``runtime_ms`` after a warm-up of 110 ms when hybrid polling is shown, its
statistics window being 100 ms, else 10 ms), and the IO whose latency is the median of the run
is laid out as a waterfall from its per-IO record (fio's latency: ``t_submit`` to ``t_complete``):

====================  ==========================================================================
segment               from the record
====================  ==========================================================================
submit                ``t_submit`` -> ``t_dispatch``: syscall entry, fs, blk-mq, NVMe command
                      and doorbell (one CPU segment; for async engines, until the batch's doorbell)
SSD fetch + queue     ``t_dispatch`` -> ``t_dev_start``: command fetch, waiting for a media unit
                      (writes: their data DMA)
SSD media             ``t_dev_start`` + ``device_service_ns``
SSD data transfer     -> ``t_dev_end``: read data through the media data path and over the link
                      (cut through each other; and waiting for them)
SSD completion post   ``t_dev_end`` -> ``t_cqe``: CQE written; on an interrupt-driven queue the
                      MSI-X sent (a polled queue has no interrupt vector: nothing is raised)
completion found      ``t_cqe`` -> ``t_reaped``: interrupt delivery (C-state exit) and handler, or
                      a poll of the CQ observing the CQE, then the driver reaping it
return to the app     ``t_reaped`` -> ``t_complete``: wake-up and switch in (when the task slept),
                      direct-IO completion, syscall exit (async: until fio reaps the event)
====================  ==========================================================================

For a synchronous engine, rows below them say what the submitting task did meanwhile, by what its
record shows: asleep until the interrupt; spinning in blk_poll from the doorbell to the CQE; or,
when it slept on a hybrid poll's hrtimer (``t_sleep`` -> ``t_timer`` -> ``t_woken``), that sleep,
the wake-up (timer interrupt, switch in) and the spin after it.

Beside it, the CPU time per IO of each stack layer (``summary.layers``) says what the CPUs spent,
including what the IO's own timeline hides (idle time, polling, the context switch out).
"""

from __future__ import annotations

import html
import sys
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from models.ioengines import SYNC_ENGINES, USERSPACE_ENGINES
from policies.completion import COMPLETION_POLICIES, select_policy_name
from scenarios.config.registry import scenario_kind, source_args
from scenarios.config.resolve import resolve_run
from scenarios.inputs.fio.units import ms_time
from scenarios.run.simulate import simulate
from simcore.errors import ConfigError
from simcore.outfile import write_text

__all__ = [
    "POLICY_SETS",
    "Waterfall",
    "device_rows",
    "PAGE_NAMES",
    "Explanation",
    "explain",
    "format_explanation",
    "waterfall_figure",
    "layers_figure",
    "explanation_figures",
    "write_html",
]

#: --set keys that select each completion policy the Linux way (hipri + queue settings)
POLICY_SETS: dict[str, dict[str, Any]] = {
    "interrupt": {"hipri": "0", "queue.completion": "auto"},
    "classic-poll": {"hipri": "1", "queue.io_poll": True, "queue.io_poll_delay": -1, "queue.completion": "auto"},
    "hybrid-poll": {"hipri": "1", "queue.io_poll": True, "queue.io_poll_delay": 0, "queue.completion": "auto"},
}
#: warm-up when hybrid polling is shown: past its first 100 ms statistics window (for every policy
#: alike); otherwise a short one
RAMP_MS = 110
SHORT_RAMP_MS = 10
HIPRI_ENGINES = ("pvsync2", "io_uring")
_ALIASES = {"classic": "classic-poll", "hybrid": "hybrid-poll", "irq": "interrupt"}

#: the one way a user-space driver's engine (ioengine=spdk) completes: its own polling
USER_POLL = "user-poll"
_FOUND = {
    USER_POLL: "the thread's getevents loop over its qpairs finds the CQE",
    "interrupt": "MSI-X interrupt: C-state exit, IRQ handler reaps the CQE",
    "classic-poll": "a poll of the CQ observes the CQE, reaps it",
    "hybrid-poll": "a poll (after the hrtimer sleep) observes the CQE, reaps it",
}
#: the SSD's completion post, by whether the IO's queue has an interrupt vector
_POST = {
    True: "SSD: completion entry posted (polled queue: no interrupt)",
    False: "SSD: completion entry + MSI-X interrupt sent",
    None: "SSD: completion entry posted",
}
_RETURN_SYNC = {
    "interrupt": "wake-up, switch in, dio completion, syscall exit",
    "classic-poll": "dio completion, syscall exit",
    "hybrid-poll": "dio completion, syscall exit",
}
_CPU_MEANWHILE_ASYNC = {
    "interrupt": "the thread waits for completions in io_getevents / io_uring_enter, sleeping until an IRQ "
    "handler posts enough of them (with other IOs in flight it may be busy instead)",
    "classic-poll": "the thread polls the device queue in io_uring_enter(GETEVENTS) (IOPOLL)",
    USER_POLL: "the thread spins in the plugin's getevents over its qpairs, in user space (no sleep, no interrupt)",
}
_CPU_MEANWHILE = {
    "interrupt": "the task sleeps; the CPU switches to idle and enters a C-state",
    "classic-poll": "the task spins in blk_poll on its CPU",
    "hybrid-poll": "the task sleeps on an hrtimer for half the mean completion time, then spins in blk_poll",
}


@dataclass
class Waterfall:
    """One policy's typical IO and the run around it."""

    policy: str
    own: bool
    io: dict
    """The record of the median-latency IO (times in ns, absolute)."""
    segments: list[tuple[str, float, float]]
    """(label, start, duration), ns from ``t_submit``: the IO's path, end to end."""
    task_segments: list[tuple[str, float, float]]
    """What the submitting task did meanwhile (synchronous engines), as ``segments``."""
    latency_ns: float
    layers_ns: dict[str, float]
    summary: dict
    meanwhile: str
    n_ios: int
    device: list[tuple[str, float]] = field(default_factory=list)
    """The device's share of the IO's latency by stage (:func:`device_rows`), (label, ns)."""


@dataclass
class Explanation:
    job_file: str
    platform: str
    engine: str
    waterfalls: list[Waterfall] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _polled(policy: str) -> bool | None:
    """Whether ``policy``'s IOs go to polled queues (no interrupt vector); None: not known."""
    if policy == USER_POLL:
        return True
    return bool(COMPLETION_POLICIES.get(policy).polled) if policy in COMPLETION_POLICIES else None


#: page type names by bits per cell (models.ssd.media.PAGE_TYPES): lower, centre, upper (most
#: significant) and, for QLC, top page
PAGE_NAMES = {1: ("SLC",), 2: ("LSB", "MSB"), 3: ("LSB", "CSB", "MSB"), 4: ("LSB", "CSB", "MSB", "TSB")}

DEV_FETCH = "SSD: command fetch (doorbell to SQ entry fetched; a low-power state's exit)"
DEV_FIRMWARE = "SSD: firmware (its serial stage: parsing, mapping lookup; waiting for a core)"
DEV_CONTROLLER = "SSD: controller (mapping, ECC: the read's calibrated share)"
DEV_DIE_WAIT = "SSD: die wait (behind other reads, programs, erases on its die)"
DEV_SUSPEND = "SSD: suspend wait (a program or erase suspended for it)"
DEV_TR = "SSD: tR, {} page (NAND array read)"
DEV_CHANNEL = "SSD: channel transfer (+ waiting for the channel)"
DEV_DATAPATH = "SSD: data path (controller's media data path)"
DEV_LINK = "SSD: link (PCIe data DMA)"
DEV_RA_WAIT = "SSD: read-ahead: waiting for its prefetch"
DEV_RA_HIT = "SSD: read-ahead hit (data from the controller's DRAM)"
DEV_ADMIT = "SSD: write buffer: waiting for room (and the zone / FTL stage)"
DEV_BUFFERED = "SSD: buffered write (acknowledged from the DRAM buffer)"
DEV_UNIT_FETCH = "SSD: command fetch (+ queueing)"
DEV_UNIT = "SSD: media service"
DEV_UNIT_XFER = "SSD: data transfer (data path, link)"
DEV_OTHER = "SSD: device ({} service)"
DEV_POST = "SSD: completion entry posted"


def device_rows(rec: dict, page_names: tuple[str, ...] = PAGE_NAMES[3]) -> list[tuple[str, float]]:
    """The device's share of one IO's latency, from its record: (label, ns) rows in pipeline order
    from the doorbell (``t_dispatch``) to the completion entry (``t_cqe``), by how the device
    served it (``dev_path``): the NAND media (fetch, firmware, controller, die wait, suspend wait,
    tR by page type, channel, data path, link), a read-ahead hit, a buffered write, a unit's own
    media model (the 3D XPoint presets: one media share, with the fetch and the waits before it,
    the data transfer after it, as their records have always said), or another command (one row);
    the completion post is the last row. They sum to ``t_cqe - t_dispatch``. Empty when the record has
    no device fields (a storage server's)."""
    path = rec.get("dev_path", "")
    if not path:
        return []
    g = rec.get
    d, fetched, fw, cqe, dev_end = g("t_dispatch_ns"), g("t_fetched_ns"), g("t_fw_ns"), g("t_cqe_ns"), g("t_dev_end_ns")
    stage, xfer, mend = g("t_stage_ns"), g("t_xfer_ns"), g("t_media_end_ns")
    wait, susp, tr = g("dev_wait_ns"), g("dev_suspend_ns"), g("dev_tr_ns")
    if path == "unit":  # a service time per command: its own media model, one share
        start = g("t_dev_start_ns")
        mend = start + g("device_service_ns")
        return [
            (DEV_UNIT_FETCH, start - d),
            (DEV_UNIT, mend - start),
            (DEV_UNIT_XFER, dev_end - mend),
            (DEV_POST, cqe - dev_end),
        ]
    rows = [(DEV_FETCH, fetched - d), (DEV_FIRMWARE, fw - fetched)]
    op = rec.get("op", "")
    if path == "media":
        pt = int(rec.get("dev_page_type", -1))
        name = page_names[pt] if 0 <= pt < len(page_names) else f"type {pt}"
        rows += [
            (DEV_CONTROLLER, stage - fw),
            (DEV_DIE_WAIT, wait),
            (DEV_SUSPEND, susp),
            (DEV_TR.format(name), tr),
            (DEV_CHANNEL, mend - stage - wait - susp - tr),
            (DEV_DATAPATH, xfer - mend),
            (DEV_LINK, dev_end - xfer),
        ]
    elif path == "readahead":
        rows += [
            (DEV_RA_WAIT, wait),
            (DEV_RA_HIT, mend - fw - wait),
            (DEV_DATAPATH, xfer - mend),
            (DEV_LINK, dev_end - xfer),
        ]
    elif path == "buffer":
        rows += [(DEV_ADMIT, stage - fw), (DEV_LINK, xfer - stage), (DEV_BUFFERED, dev_end - xfer)]
    else:
        rows += [(DEV_OTHER.format(op or "command"), dev_end - fw)]
    rows.append((DEV_POST, cqe - dev_end))
    return rows


def _page_names(cfg) -> tuple[str, ...]:
    """The page type names of the run's SSD (its media's cell; TLC's without NAND media)."""
    media = getattr(getattr(getattr(cfg, "platform", None), "ssd", None), "media", None)
    from models.ssd.media import PAGE_TYPES

    return PAGE_NAMES[PAGE_TYPES[media.cell]] if media is not None else PAGE_NAMES[3]


def _segments(
    rec: dict, policy: str, sync: bool, page_names: tuple[str, ...] = PAGE_NAMES[3]
) -> list[tuple[str, float, float]]:
    t0 = rec["t_submit_ns"]
    user = policy == USER_POLL
    dev = device_rows(rec, page_names)
    if dev:  # the device's rows, laid end to end from the doorbell (they sum to its time)
        dev_marks = []
        t = rec["t_dispatch_ns"]
        unit = rec.get("dev_path") == "unit"
        for label, ns in dev[:-1]:
            if unit or abs(ns) >= 0.5:  # (stages it did not pass through, or passed at no cost: not shown)
                dev_marks.append((label, t, t + ns))
            t += ns
        dev_marks.append((_POST[_polled(policy)], rec["t_dev_end_ns"], rec["t_cqe_ns"]))
    else:
        media_end = rec["t_dev_start_ns"] + rec["device_service_ns"]
        dev_marks = [
            ("SSD: command fetch (+ queueing)", rec["t_dispatch_ns"], rec["t_dev_start_ns"]),
            ("SSD: media service", rec["t_dev_start_ns"], media_end),
            ("SSD: data transfer (data path, link)", media_end, rec["t_dev_end_ns"]),
            (_POST[_polled(policy)], rec["t_dev_end_ns"], rec["t_cqe_ns"]),
        ]
    marks = [
        (
            "submit: syscall entry, fs, blk-mq, NVMe command + doorbell"
            if sync
            else "submit: SPDK's command in the SQ; its doorbell at the next getevents"
            if user
            else "submit: io_uring/libaio enter, fs, blk-mq, NVMe command + doorbell",
            rec["t_submit_ns"],
            rec["t_dispatch_ns"],
        ),
        *dev_marks,
        (
            "completion found: " + _FOUND.get(policy, f"{policy}: the completion is found and reaped"),
            rec["t_cqe_ns"],
            rec["t_reaped_ns"],
        ),
        (
            "return: "
            + (
                _RETURN_SYNC.get(policy, "back to the application")
                if sync
                else "SPDK completes the request, fio handles the event"
                if user
                else "completion posted to the ring, the thread reaps it"
            ),
            rec["t_reaped_ns"],
            rec["t_complete_ns"],
        ),
    ]
    return [(label, a - t0, max(0.0, b - a)) for label, a, b in marks]


#: the submitting task's rows (a hybrid sleep's armed time is filled in)
TASK_ASLEEP = "task: asleep (switched out) until the interrupt"
TASK_SPIN = "task: spins in blk_poll"
TASK_SPIN_NO_SLEEP = "task: spins in blk_poll (no hrtimer sleep: no completion statistics yet)"
TASK_HRTIMER = "task: hrtimer sleep (armed for {:,.0f} ns)"
TASK_WAKE = "task: wake-up: hrtimer interrupt, switch in"


def _task_segments(rec: dict, polled: bool | None, hybrid: bool = False) -> list[tuple[str, float, float]]:
    """The submitting task's rows of a synchronous IO from its record: a hybrid poll's sleep, its
    wake-up and the spin after it when the task slept on an hrtimer; else the spin of a polled
    queue (``hybrid``: a hybrid poll that did not sleep) or the sleep of an interrupt-driven one,
    from the doorbell to the CQE."""
    t0, doorbell, cqe = rec["t_submit_ns"], rec["t_dispatch_ns"], rec["t_cqe_ns"]
    sleep = rec.get("t_sleep_ns", float("nan"))
    if sleep == sleep:  # (not NaN) it slept; it may be woken before the timer's expiry
        woken = rec["t_woken_ns"]
        expiry = min(rec["t_timer_ns"], woken)
        marks = [
            (TASK_HRTIMER.format(rec["t_timer_ns"] - sleep), sleep, expiry),
            (TASK_WAKE, expiry, woken),
            (TASK_SPIN, woken, max(woken, cqe)),
        ]
    elif polled:
        marks = [(TASK_SPIN_NO_SLEEP if hybrid else TASK_SPIN, doorbell, cqe)]
    elif polled is False:
        marks = [(TASK_ASLEEP, doorbell, cqe)]
    else:
        return []
    return [(label, a - t0, max(0.0, b - a)) for label, a, b in marks]


def _median_io(records: np.ndarray) -> dict:
    lat = records["t_complete_ns"] - records["t_submit_ns"]
    order = np.argsort(lat, kind="stable")
    row = records[order[(len(order) - 1) // 2]]
    return {name: (row[name].item() if hasattr(row[name], "item") else row[name]) for name in records.dtype.names}


def _own_policy(cfg) -> str:
    job = cfg.jobs[0]
    if job.ioengine in USERSPACE_ENGINES:
        return USER_POLL
    return select_policy_name(cfg.queue, job.hipri, job.ioengine)


def _shown_policies(engine: str, own: str, policies: list[str] | None, notes: list[str]) -> list[str]:
    """The completion policies to show for ``engine``: ``policies`` (aliases allowed; each one the
    engine can run, or the job's ``own``), by default the job's own then the others available. Why
    some are unavailable goes to ``notes``."""
    if engine == "pvsync2":
        available = list(POLICY_SETS)
    elif engine == "io_uring":
        available = ["interrupt", "classic-poll"]
        notes.append("hybrid polling applies to synchronous HIPRI IO only (io_uring IOPOLL polls classically)")
    elif engine in USERSPACE_ENGINES:
        available = [USER_POLL]
        notes.append(f"ioengine={engine} polls its own queues in user space: no kernel completion policy applies")
    else:
        available = ["interrupt"]
        notes.append(
            f"ioengine={engine} cannot poll (no hipri): it completes by interrupt only; pvsync2 or io_uring can"
        )
    wanted = [_ALIASES.get(p, p) for p in policies] if policies else [own] + [p for p in available if p != own]
    for p in wanted:
        if p not in available and p != own:
            raise ConfigError(
                f"--policies {p}: not available for ioengine={engine} (available: {', '.join(available)})"
            )
    return wanted


def explain(
    job_file: str,
    platform: str | None,
    *,
    sets: dict[str, Any] | None = None,
    seed: int | None = None,
    runtime_ms: float = 50.0,
    policies: list[str] | None = None,
    progress: bool = False,
) -> Explanation:
    """Run ``job_file`` (a fio job file, a scenario YAML or a built-in scenario name, as ``stacksim
    run`` reads it) briefly under each completion policy and pick each run's median IO
    (``progress``: say on stderr which policy runs, with the run's progress line)."""
    source = source_args(job_file)
    if "scenario" in source and scenario_kind(source["scenario"]) != "host":
        raise ConfigError(f"{job_file} is a storage-server scenario; explain takes a fio job file or a host scenario")
    if not runtime_ms > 0:
        raise ConfigError(f"--runtime-ms must be > 0, got {runtime_ms}")
    sets = dict(sets or {})
    length = {
        "runtime": ms_time(runtime_ms, option="--runtime-ms"),
        "ramp_time": f"{SHORT_RAMP_MS}ms",
        "time_based": "1",
    }
    base = resolve_run(**source, platform=platform, sets={**sets, **length}, seed=seed)
    job = base.jobs[0]
    engine = job.ioengine
    sync = engine in SYNC_ENGINES
    own = _own_policy(base)
    expl = Explanation(job_file=str(job_file), platform=base.platform.name, engine=engine)
    if len(base.jobs) > 1:
        expl.notes.append(
            f"{len(base.jobs)} jobs: the typical IO is taken over all of them; the "
            f"policies are chosen by the first job's engine ({engine})"
        )
    wanted = _shown_policies(engine, own, policies, expl.notes)
    if "hybrid-poll" in wanted:
        length["ramp_time"] = f"{RAMP_MS}ms"  # for every policy alike
    shown = list(dict.fromkeys(wanted))
    for i, policy in enumerate(shown, 1):
        if progress:
            print(f"explain: simulating {policy} ({i} of {len(shown)})", file=sys.stderr, flush=True)
        is_own = policy == own
        extra = (
            {} if is_own else {k: v for k, v in POLICY_SETS[policy].items() if k != "hipri" or engine in HIPRI_ENGINES}
        )
        cfg = resolve_run(**source, platform=platform, sets={**sets, **extra, **length}, seed=seed)
        result = simulate(cfg, records=True, progress=progress)
        if len(result.records) == 0:
            raise ConfigError(f"{policy}: no IO completed in {runtime_ms:g} ms; give a longer --runtime-ms")
        expl.waterfalls.append(_waterfall(policy, is_own, sync, result, _page_names(cfg)))
    return expl


def _waterfall(policy: str, own: bool, sync: bool, result, page_names: tuple[str, ...] = PAGE_NAMES[3]) -> Waterfall:
    """The waterfall of the median IO of one policy's run (``result``, with its records)."""
    records = result.records
    io = _median_io(records)
    s = result["summary"]
    return Waterfall(
        policy=policy,
        own=own,
        io=io,
        device=device_rows(io, page_names),
        segments=_segments(io, policy, sync, page_names),
        task_segments=_task_segments(io, _polled(policy), hybrid=policy == "hybrid-poll") if sync else [],
        latency_ns=io["t_complete_ns"] - io["t_submit_ns"],
        layers_ns=dict(s["layers"]),
        summary=s,
        meanwhile=(_CPU_MEANWHILE if sync else _CPU_MEANWHILE_ASYNC).get(policy, ""),
        n_ios=len(records),
    )


# ------------------------------------------------------------------------------------------------ terminal
def _bar(start: float, dur: float, scale: float, width: int) -> str:
    a = int(round(start * scale))
    b = max(a + 1, int(round((start + dur) * scale))) if dur > 0 else a
    a, b = min(a, width), min(b, width)
    cells = [" "] * width
    for i in range(a, b):
        cells[i] = "#"
    if dur > 0 and a == b and a < width:
        cells[a] = "|"
    return "".join(cells)


def format_explanation(expl: Explanation, width: int = 44) -> str:
    out = [
        f"One typical IO of {expl.job_file} on {expl.platform} (ioengine={expl.engine}): the median-latency IO "
        f"of a short run per completion policy; times in ns from fio's submit timestamp."
    ]
    for note in expl.notes:
        out.append(f"note: {note}")
    out += _waterfall_lines(expl, width)
    out.append("")
    out += _layer_table(expl)
    return "\n".join(out)


def _waterfall_lines(expl: Explanation, width: int) -> list[str]:
    """Each policy's waterfall: the IO's segments, its total, then what the submitting task did."""
    span = max(w.latency_ns for w in expl.waterfalls)
    scale = width / span if span > 0 else 0.0
    lw = max(len(label) for w in expl.waterfalls for label, _, _ in w.segments + w.task_segments)
    out = []
    for w in expl.waterfalls:
        io = w.io
        out.append("")
        out.append(
            f"{w.policy}{' (the job' + chr(39) + 's own policy)' if w.own else ''}: IO {io['io']} "
            f"({io['op']} {io['bytes']} B on cpu {io['cpu']}), latency {w.latency_ns / 1e3:.2f} us "
            f"= median of {w.n_ios:,} IOs"
        )
        out.append(
            f"  {'segment':{lw}s}  {'start':>7s}  {'ns':>7s}"
            f"  |{'0'.ljust(width - len(f'{span / 1e3:.1f} us'))}{span / 1e3:.1f} us|"
        )
        row = "  {:%ds}  {:7.0f}  {:7.0f}  |{}|" % lw
        for label, start, dur in w.segments:
            out.append(row.format(label, start, dur, _bar(start, dur, scale, width)))
        out.append(f"  {'total (fio latency)':{lw}s}  {'':7s}  {w.latency_ns:7.0f}")
        if w.device:
            dev_ns = sum(ns for _label, ns in w.device)
            share = 100 * dev_ns / w.latency_ns if w.latency_ns > 0 else 0.0
            out.append(
                f"  the SSD's share (doorbell to completion entry; served: {io.get('dev_path', '')}):"
                f" {dev_ns:,.0f} ns, {share:.0f}% of the latency"
            )
        if w.meanwhile:
            out.append(f"  meanwhile on the submitting CPU: {w.meanwhile}")
        for label, start, dur in w.task_segments:
            out.append(row.format(label, start, dur, _bar(start, dur, scale, width)))
    return out


def _layer_table(expl: Explanation) -> list[str]:
    """The CPU time per IO of each layer and the run's figures, the policies side by side."""
    out = []
    names = [w.policy for w in expl.waterfalls]
    cw = max(12, *(len(n) for n in names))
    layers = _layers(expl)
    out.append(
        f"{'CPU time per IO by stack layer (ns, mean of each run)':54s}" + "".join(f"{n:>{cw + 2}s}" for n in names)
    )
    for k in layers:
        label = "idle (CPUs of the job idle while IO is pending)" if k == "idle" else k
        out.append(f"  {label:52s}" + "".join(f"{w.layers_ns.get(k, 0.0):{cw + 2}.0f}" for w in expl.waterfalls))
    busy = [sum(v for k, v in w.layers_ns.items() if k != "idle") for w in expl.waterfalls]
    out.append(f"  {'total CPU busy (all layers but idle)':52s}" + "".join(f"{b:{cw + 2}.0f}" for b in busy))
    rows = [
        ("mean latency (us)", lambda s: s["latency_us"]["mean"], "{:.2f}"),
        ("IOPS", lambda s: s["iops"], "{:,.0f}"),
        ("context switches per IO", lambda s: s["context_switches_per_io"], "{:.3f}"),
        ("interrupts per IO", lambda s: s["interrupts_per_io"], "{:.3f}"),
        ("CPU utilization (all logical CPUs)", lambda s: 100 * s["cpu_utilization"], "{:.1f}%"),
    ]
    for label, get, fmt in rows:
        out.append(f"  {label:52s}" + "".join(f"{fmt.format(get(w.summary)):>{cw + 2}s}" for w in expl.waterfalls))
    return out


def _layers(expl: Explanation) -> list[str]:
    """The layers any policy's run spent CPU time in (>= 0.5 ns per IO)."""
    return [k for k in expl.waterfalls[0].layers_ns if any(w.layers_ns.get(k, 0) >= 0.5 for w in expl.waterfalls)]


# ------------------------------------------------------------------------------------------------ plotly
#: the waterfalls' kinds of segment (legend entry, colour), by the label's start: the host CPU's
#: work in dark blue, the SSD's stages in greys, the completion found in pink; the submitting
#: task's rows: asleep light, spinning orange, a hybrid poll's hrtimer sleep purple, its wake-up red
_KINDS = (
    ("submit", "host CPU: submit", "#2F4B7C"),
    ("SSD: command", "SSD: fetch + queueing", "#A0A0A0"),
    ("SSD: firmware", "SSD: firmware, controller", "#8C8C8C"),
    ("SSD: controller", "SSD: firmware, controller", "#8C8C8C"),
    ("SSD: die wait", "SSD: waiting (die, suspend, unit, buffer)", "#F2B701"),
    ("SSD: suspend", "SSD: waiting (die, suspend, unit, buffer)", "#F2B701"),
    ("SSD: waiting", "SSD: waiting (die, suspend, unit, buffer)", "#F2B701"),
    ("SSD: write buffer: waiting", "SSD: waiting (die, suspend, unit, buffer)", "#F2B701"),
    ("SSD: read-ahead: waiting", "SSD: waiting (die, suspend, unit, buffer)", "#F2B701"),
    ("SSD: tR", "SSD: media", "#7A7A7A"),
    ("SSD: media", "SSD: media", "#7A7A7A"),
    ("SSD: device", "SSD: media", "#7A7A7A"),
    ("SSD: read-ahead hit", "SSD: media", "#7A7A7A"),
    ("SSD: buffered", "SSD: media", "#7A7A7A"),
    ("SSD: channel", "SSD: data transfer", "#A0A0A0"),
    ("SSD: data", "SSD: data transfer", "#A0A0A0"),
    ("SSD: link", "SSD: data transfer", "#A0A0A0"),
    ("SSD: completion", "SSD: completion entry", "#5A5A5A"),
    ("completion found", "completion found", "#D45087"),
    ("return", "host CPU: return", "#665191"),
    (TASK_ASLEEP, "task asleep", "#C9D6E8"),
    (TASK_SPIN, "task spinning (blk_poll)", "#F58518"),
    (TASK_HRTIMER.split("(")[0], "task: hrtimer sleep", "#B279A2"),
    (TASK_WAKE, "task: wake-up", "#E45756"),
)
_LAYER_COLORS = {
    "user": "#4C78A8",
    "syscall": "#72B7B2",
    "fs": "#54A24B",
    "block": "#EECA3B",
    "iosched": "#B279A2",
    "driver": "#FF9DA6",
    "irq": "#E45756",
    "scheduler": "#F58518",
    "timer": "#9D755D",
    "polling": "#BAB0AC",
    "smt_contention": "#D67195",
    "idle": "#E8E8E8",
}


def _kind(label: str) -> tuple[str, str]:
    """(legend entry, colour) of a waterfall row by its label."""
    for start, name, color in _KINDS:
        if label.startswith(start):
            return name, color
    return "other", "#BBBBBB"


def waterfall_figure(expl: Explanation):
    """A plotly figure: one waterfall per policy on a shared time axis (us): the IO's segments,
    then the submitting task's rows; its legend names the kinds of segment."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    n = len(expl.waterfalls)
    titles = [
        f"{w.policy}{' (job' + chr(39) + 's own)' if w.own else ''}: IO {w.io['io']},"
        f" latency {w.latency_ns / 1e3:.2f} us"
        for w in expl.waterfalls
    ]
    fig = make_subplots(rows=n, cols=1, subplot_titles=titles, vertical_spacing=0.3 / n, shared_xaxes=True)
    span = max(w.latency_ns for w in expl.waterfalls) / 1e3
    shown: set[str] = set()
    for i, w in enumerate(expl.waterfalls, 1):
        rows = w.segments + w.task_segments
        for label, start, dur in rows:
            kind, color = _kind(label)
            fig.add_trace(
                go.Bar(
                    y=[label],
                    x=[dur / 1e3],
                    base=[start / 1e3],
                    orientation="h",
                    marker_color=color,
                    name=kind,
                    legendgroup=kind,
                    showlegend=kind not in shown,
                    hovertemplate=f"{label}<br>start {start:.0f} ns, {dur:.0f} ns<extra>{w.policy}</extra>",
                ),
                row=i,
                col=1,
            )
            shown.add(kind)
        fig.update_yaxes(categoryorder="array", categoryarray=[r[0] for r in rows], autorange="reversed", row=i, col=1)
        fig.update_xaxes(range=[0, span * 1.02], row=i, col=1)
    fig.update_xaxes(title_text="us from fio's submit timestamp", row=n, col=1)
    fig.update_layout(
        barmode="overlay", template="plotly_white", height=300 * n + 80, legend_title_text="segment", bargap=0.25
    )
    return fig


def layers_figure(expl: Explanation):
    """A plotly figure: the CPU time per IO of each layer, stacked bars per policy; its legend
    names the layers."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for k in _layers(expl):
        fig.add_trace(
            go.Bar(
                x=[w.policy for w in expl.waterfalls],
                y=[w.layers_ns.get(k, 0.0) for w in expl.waterfalls],
                name=k,
                marker_color=_LAYER_COLORS.get(k),
            )
        )
    fig.update_layout(
        barmode="stack", template="plotly_white", height=460, legend_title_text="layer", yaxis_title="ns per IO"
    )
    return fig


def explanation_figures(expl: Explanation) -> list:
    """The page's figures as (heading, figure): the waterfalls, then the CPU time by layer; each
    figure has its own legend, beside it."""
    return [
        ("the typical IO per policy: its segments and the submitting task", waterfall_figure(expl)),
        ("CPU time per IO by stack layer (ns, mean of each run)", layers_figure(expl)),
    ]


def write_html(expl: Explanation, path: str, embed_plotlyjs: bool = False) -> None:
    """The HTML page of the figures, plotly.js loaded from its CDN (``embed_plotlyjs``: inlined,
    about 4.7 MB, for offline use)."""
    from scenarios.run.outputs import figures_page

    title = f"One typical IO of {expl.job_file} on {expl.platform} ({expl.engine})"
    intro = [f"<p>{html.escape(note)}</p>" for note in expl.notes]
    page = figures_page(title, intro, explanation_figures(expl), plotlyjs="inline" if embed_plotlyjs else "cdn")
    write_text(path, page, what="-o")
