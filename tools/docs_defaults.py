"""Keep the defaults and figures quoted in docs/ true. Made from the code: the KernelCosts table of
docs/os.md (``models.os.costs.tables.KernelCosts`` defaults and the calibrated ``optane900p-e3-1230v5``)
and every ``<!-- generated: ... -->`` table of any page (``tools/docs_tables.py``: presets,
platforms, the golden set's ``docs/*`` runs); checked against the code: the values quoted in prose
(:func:`prose_checks`).

    python tools/docs_defaults.py          # rewrite the generated tables
    python tools/docs_defaults.py --check  # exit 1 and list what differs

tests/test_docs_defaults.py runs the check, so a changed default without a regenerated page fails.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from models.os.costs.tables import KernelCosts
from models.platforms import optane900p_e3_1230v5
from scenarios.studies.calibrate_poll_energy import FIT_BOUNDS

sys.path.insert(0, str(Path(__file__).resolve().parent))
import docs_tables  # noqa: E402  (tools/ is not a package)

ROOT = Path(__file__).resolve().parents[1]
OS_MD = ROOT / "docs" / "os.md"
ROW = re.compile(r"^\| `(?P<field>\w+)` \| (?P<default>[^|]*) \| (?P<calibrated>[^|]*) \|(?P<rest>.*)$")


def _num(value) -> str:
    if isinstance(value, dict):
        return "{}" if not value else "(per scheduler)"
    v = float(value)
    text = f"{v:,.0f}" if v == int(v) else f"{v:,.1f}"
    return text


def cells(field: str) -> tuple[str, str]:
    """The Default and Calibrated cells of ``field`` from the code."""
    default = KernelCosts.model_fields[field].get_default(call_default_factory=True)
    value = getattr(optane900p_e3_1230v5().kernel, field)
    unit = " ns" if field.endswith("_ns") else ""
    if field == "cpi_by_layer":  # a CPI per stack layer (models.os.costs.tables.WARM_CPI)
        return "`WARM_CPI`", "`WARM_CPI`" if value == default else "(set)"
    cal = _num(value) + unit
    if value != default:
        cal += " (fitted)" if f"kernel.{field}" in FIT_BOUNDS else " (set)"
    return _num(default) + unit, cal


def regenerate(text: str) -> tuple[str, list[str]]:
    """``text`` with every KernelCosts row's numbers from the code, and the rows that changed."""
    out, changed = [], []
    for line in text.splitlines():
        m = ROW.match(line)
        if m and m["field"] in KernelCosts.model_fields:
            d, c = cells(m["field"])
            new = f"| `{m['field']}` | {d} | {c} |{m['rest']}"
            if new != line:
                changed.append(f"{m['field']}: {m['default'].strip()} / {m['calibrated'].strip()} -> {d} / {c}")
            line = new
        out.append(line)
    return "\n".join(out) + "\n", changed


def _c(v: float, decimals: int = 1) -> str:
    return f"{v:,.{decimals}f}"


def prose_checks() -> list[tuple[str, str]]:
    """(page, text that must appear in it): fitted values and model results quoted in prose, with
    the text made from the code (the fits in models/platforms.py, the default scenario's golden
    figures in tests/golden/golden.json)."""
    import json

    from models.platforms import CINTERRUPTS_FIT, POLL_ENERGY_FIT

    pe, ci = POLL_ENERGY_FIT, CINTERRUPTS_FIT
    ctx, user, base = pe["kernel.ctx_switch_cycles"], pe["kernel.user_io_cycles"], pe["ssd.read.base_ns"]
    e3 = optane900p_e3_1230v5()
    ghz = e3.cpu.top_freq_ghz
    golden = json.loads((ROOT / "tests" / "golden" / "golden.json").read_text())["cases"]["run/default"]
    sched_ns = float(golden["summary.layers_ns_per_io.scheduler"])
    return [
        ("calibration.md", f"| `ssd.read.base_ns` | 4,000-9,000 | {_c(base)} ns |"),
        ("calibration.md", f"| `kernel.user_io_cycles` | 100-3,000 | {_c(user)} cycles ({user / ghz:.0f} ns) |"),
        (
            "calibration.md",
            f"| `kernel.ctx_switch_cycles` | 1,000-10,000 | {_c(ctx)} cycles ({ctx / ghz / 1e3:.2f} us) |",
        ),
        (
            "calibration.md",
            f"`ctx_switch_cycles` = {_c(ci['kernel.ctx_switch_cycles'])}"
            f" ({ci['kernel.ctx_switch_cycles'] / 2e3:.2f} us at 2.0 GHz),"
            f" against {_c(ctx)} ({ctx / ghz / 1e3:.2f} us",
        ),
        ("os.md", f"2 x {_c(ctx)} cycles"),
        ("os.md", f"`layers.scheduler` ({sched_ns:,.0f} ns per IO in the"),
        (
            "os.md",
            "syscall {syscall:.0f} fs {fs:.0f} block {block:.0f} driver {driver:.0f} irq {irq:.0f}"
            " scheduler {scheduler:.0f} idle {idle:.0f}`".format(
                **{
                    k.rsplit(".", 1)[1]: float(v)
                    for k, v in golden.items()
                    if k.startswith("summary.layers_ns_per_io.")
                }
            ),
        ),
        ("os.md", f"including the {e3.kernel.wakeup_cycles:,.0f}-cycle wakeup"),
        (
            "cpu.md",
            "scenario: `cpu0 residency: C0 {:.1%}  POLL {:.1%}`".format(
                *(float(golden[f"summary.cstate_residency.cpu0.{st}"]) for st in ("C0", "POLL"))
            ),
        ),
        ("ssd.md", f"with the fitted {_c(base)} ns"),
        ("index.md", f"fio's user work ({user:.0f})"),
        ("index.md", f"media service about {round(base, -1):,.0f} ns"),
        ("index.md", f" = {float(golden['summary.latency_us.mean']):.2f} us; 1 voluntary context switch"),
        *_index_path_prose(e3),
        *_power_prose(e3),
        *_idle_and_clock_prose(),
        *_latency_sizing_prose(),
        *_ftl_program_prose(),
        *_write_buffer_prose(),
        *_cheops23_prose(),
        *_os_costs_prose(e3),
        *_predictions_prose(e3),
        *_server_defaults_prose(),
        *_cpu_constants_prose(),
    ]


def _cpu_constants_prose() -> list[tuple[str, str]]:
    """docs/cpu.md's governor and limiter constants (policies/cpu_idle/menu.py, models/cpu/)."""
    from models.cpu.config import CpuConfig
    from models.cpu.cpuidle import NO_TIMER_NS
    from models.cpu.presets import CPU_PRESETS
    from policies.cpu_idle.menu import RESIDENCY_THRESHOLD_NS

    control_us = CpuConfig.model_fields["power_limit_control_us"].default
    intel = {CPU_PRESETS[n]().pstate_transition_ns for n in ("xeon-e3-1230-v5", "xeon-silver-4210r")}
    (lat_ns,) = intel
    return [
        ("cpu.md", f"(`NO_TIMER_NS` = {NO_TIMER_NS / 1e6:g} ms"),
        ("cpu.md", f"`RESIDENCY_THRESHOLD_NS` ({RESIDENCY_THRESHOLD_NS / 1e3:g} us,"),
        ("cpu.md", f"Every `power_limit_control_us` ({control_us / 1e3:g} ms)"),
        (
            "cpu.md",
            f"({lat_ns / 1e3:g} us x 1000 -> {min(lat_ns * 1000, 10e6) / 1e6:g} ms on the Intel presets)",
        ),
    ]


def _server_defaults_prose() -> list[tuple[str, str]]:
    """docs/server.md's defaults of the server model and its two workloads (models/server/config.py,
    scenarios/config/server_workloads.py)."""
    from models.platforms_server import epyc9454p_16xpm1743
    from models.server.config import ServerConfig
    from scenarios.config.server_workloads import BurstWorkload, StableWorkload

    srv, st, bu = ServerConfig(), StableWorkload(), BurstWorkload()
    ssds = epyc9454p_16xpm1743().ssd_count
    return [
        ("server.md", f"`server.cores` reserved logical cores (default {srv.cores})"),
        ("server.md", f"(default {srv.threads}, NVMe-oF poll groups)"),
        ("server.md", f"({srv.threads} x {ssds} queue pairs)"),
        ("server.md", f"`workload.connections` connections (default {st.connections})"),
        (
            "server.md",
            f"`workload.rate_iops` (default {st.rate_iops:,.0f}), {st.duration_s:g} s with"
            f" {st.warmup_s * 1e3:g} ms of warm-up",
        ),
        (
            "server.md",
            f"`low_fraction` ({bu.low_fraction:.0%}) of `ssd_max_iops` ({bu.ssd_max_iops / 1e6:g}M) for `low_s`"
            f" ({bu.low_s:g} s)",
        ),
    ]


def _predictions_prose(platform) -> list[tuple[str, str]]:
    """docs/predictions.md's device ceilings (the 900P's data path) and the server CPU's P-state
    transition and stall."""
    from models.platforms_server import epyc9454p_16xpm1743

    gbs = platform.ssd.datapath.read_gb_s
    per_io_ns, ceiling = 4096 / gbs, gbs * 1e9 / 4096
    cpu = epyc9454p_16xpm1743().cpu
    return [
        ("predictions.md", f"queue for its data path ({per_io_ns / 1e3:.1f} us per 4 KiB)"),
        ("predictions.md", f"data path's {gbs:g} GB/s / 4 KiB ({ceiling / 1e3:.0f}K IOPS)"),
        ("predictions.md", f"({gbs:g} GB/s / 4 KiB = {ceiling / 1e3:.0f}K,"),
        (
            "predictions.md",
            f"every change waits the {cpu.pstate_transition_ns / 1e3:.0f} us transition and then stalls its core"
            f" for {cpu.pstate_stall_ns / 1e3:.0f} us",
        ),
    ]


def _os_costs_prose(platform) -> list[tuple[str, str]]:
    """docs/os.md's prose on kernel costs of the calibrated platform: a poll iteration at its clock,
    the cold-switch refill, the IPI latency and the timer slack."""
    k, ghz = platform.kernel, platform.cpu.top_freq_ghz
    it_ns = k.poll_iteration_cycles / ghz
    return [
        (
            "os.md",
            f"`poll_iteration_cycles / GHz` ({k.poll_iteration_cycles:,.0f} cycles = {it_ns:.1f} ns at {ghz:g} GHz)",
        ),
        ("os.md", f"detection adds 0 to {it_ns:.1f} ns (mean {it_ns / 2:.1f})"),
        (
            "os.md",
            f"`cold_switch_refill_cycles` ({k.cold_switch_refill_cycles:,.0f},"
            f" ~{k.cold_switch_refill_cycles / 3.4e3:.1f} us at 3.4 GHz)",
        ),
        ("os.md", f"`ipi_latency_ns` ({k.ipi_latency_ns:,.0f} ns, plus"),
        ("os.md", f"pacing adds `timer_slack_ns` ({k.timer_slack_ns / 1e3:,.0f} us)"),
    ]


def _cheops23_prose() -> list[tuple[str, str]]:
    """The cheops23-optane platform's fitted values that async-io.md and os.md quote (CHEOPS23_FIT)
    beside the R730 platform's costs they replace."""
    from models.platforms import CHEOPS23_C1_WAKE_NS
    from models.platforms import CHEOPS23_FIT as fit
    from scenarios.config.host import platform_by_name

    r730 = platform_by_name("optane-p4800x-e5-2660v4").kernel
    fs, cpi = fit["kernel.fs_submit_cycles"], fit["kernel.cpi_by_layer.fs"]
    return [
        (
            "async-io.md",
            f"the doorbell ({fit['kernel.mmio_write_cycles']:,.0f} cycles) and the read time"
            f" ({fit['ssd.read.base_ns']:,.0f} ns) as above",
        ),
        (
            "async-io.md",
            f"({fs:,.0f} cycles at {cpi:.2f} cycles per instruction, where the R730's costs say"
            f" {r730.fs_submit_cycles:,.0f} at {r730.cpi_by_layer['fs']:g}",
        ),
        ("os.md", f"{fs:,.0f} at {cpi:.2f} cycles per instruction on the CHEOPS'23 host"),
        *(
            ("scaling.md", f"| `{key}` | {value:,.2f} |" if value < 10 else f"| `{key}` | {value:,.0f} |")
            for key, value in fit.items()
        ),
        ("scaling.md", f"C1's real exit is an estimate, {CHEOPS23_C1_WAKE_NS / 1e3:g} us"),
    ]


def _write_buffer_prose() -> list[tuple[str, str]]:
    """docs/ssd.md's write-buffer defaults: the chunk a unit programs and the buffer per die."""
    from models.ssd.controller_config import WriteBufferConfig
    from models.ssd.presets import BUFFER_BYTES_PER_UNIT

    chunk = WriteBufferConfig.model_fields["program_chunk_bytes"].default
    return [
        ("ssd.md", f"(`program_chunk_bytes`, {chunk // 1024} KiB: a 3D TLC page, recalled)"),
        ("ssd.md", f"{BUFFER_BYTES_PER_UNIT // 1024} KiB per die (estimate;"),
    ]


def _ftl_program_prose() -> list[tuple[str, str]]:
    """docs/zoned-fdp.md's derivation of pm1743-gc's program time from the PM1743's time per
    random write, its read time, block size and erase time (models/ssd/presets.py); the write
    amplification 4.15 is the FTL's (tests/test_ftl_steady.py measures it)."""
    from models.ssd.presets import pm1743, pm1743_gc

    base, gc = pm1743(), pm1743_gc()
    wa, ftl = 4.15, gc.ftl
    per_write_us, read_us = base.write_cache_program_ns / 1e3, gc.read.base_ns / 1e3
    erase_ms = ftl.erase_ns / 1e6
    p_us = (per_write_us - (wa - 1) * read_us - wa / ftl.pages_per_block * erase_ms * 1e3) / wa
    assert abs(p_us - gc.write_cache_program_ns / 1e3) < 0.05, "pm1743-gc's program time is not the derivation's"
    iops = base.parallel_units / base.write_cache_program_ns * 1e9
    return [
        (
            "zoned-fdp.md",
            f"`pm1743-gc` keeps of the PM1743's {per_write_us:,.0f} us per host write ({base.parallel_units} units /"
            f" {iops / 1e3:,.0f}K IOPS)",
        ),
        (
            "zoned-fdp.md",
            f"so {per_write_us:,.0f} = {wa:g} p + {wa - 1:g} x {read_us:g} us (copy reads) + {wa:g} /"
            f" {ftl.pages_per_block} x {erase_ms:g} ms (erases), a program time p of {p_us:.1f} us (derived)",
        ),
        ("zoned-fdp.md", f"(1 GiB span, {100 * ftl.spare_fraction:g}% spare;"),
    ]


def _latency_sizing_prose() -> list[tuple[str, str]]:
    """docs/validate-your-hardware.md's rule for how long ``validate --latencies`` simulates, from
    scenarios/studies/latency_sizing.py's constants."""
    from scenarios.studies import latency_sizing as ls
    from scenarios.studies.latency_compare import MeasuredLatencies

    p9999 = MeasuredLatencies("table", "lat", "read", None, ((50.0, 10_000.0), (99.99, 30_000.0)), None)
    return [
        (
            "validate-your-hardware.md",
            f"enough IOs for {ls.TAIL_IOS} beyond the highest percentile compared ({ls.ios_needed(p9999):,} for a"
            f" p99.99), at least {ls.MIN_IOS:,}, at the measured latency with a {ls.RUNTIME_MARGIN:g}x margin, after"
            f" a ramp of at most {ls.RAMP_MS:g} ms",
        )
    ]


def _index_path_prose(platform) -> list[tuple[str, str]]:
    """docs/index.md's walk through one IO: the kernel costs of the submit segment and the device's
    front end, data path, link and post times, and the sums made of them, from the calibrated platform."""
    k, d, ghz = platform.kernel, platform.ssd, platform.cpu.top_freq_ghz
    ret = k.fs_complete_cycles + k.syscall_exit_cycles
    submit = (
        k.syscall_entry_cycles + k.fs_submit_cycles + k.fs_per_page_cycles + k.blk_submit_cycles + k.nvme_submit_cycles
    )
    link = 4096 / d.link_gb_s
    path = 4096 / d.datapath.read_gb_s if d.datapath else 0.0
    xfer = max(link, path)  # the link cut through the data path
    return [
        ("index.md", f"the previous IO's direct-IO completion and syscall exit ({ret:,.0f}\n   cycles)"),
        (
            "index.md",
            f"syscall entry ({k.syscall_entry_cycles:,.0f}), file system ({k.fs_submit_cycles:,.0f} + "
            f"{k.fs_per_page_cycles:,.0f} per 4 KiB page),\n   blk-mq ({k.blk_submit_cycles:,.0f}), NVMe command and "
            f"doorbell ({k.nvme_submit_cycles:,.0f})",
        ),
        ("index.md", f"takes {submit:,.0f} cycles = {submit / ghz:,.0f} ns"),
        ("index.md", f"command fetch {d.fetch_ns:,.0f} ns"),
        ("index.md", f"(lognormal, sd {d.read.sd_ns:,.0f} ns)"),
        (
            "index.md",
            f"data path 4096 B / {d.datapath.read_gb_s:g} GB/s = {path:,.0f} ns (the link's 4096 B /"
            f" {d.link_gb_s:g} GB/s = {link:,.0f} ns\n   cut through it), completion posting {d.post_ns:,.0f} ns",
        ),
        (
            "index.md",
            f"visible about {round(d.fetch_ns + platform.ssd.read.base_ns + xfer + d.post_ns, -1):,.0f} ns"
            " after the doorbell",
        ),
        ("index.md", f"direct-IO completion and syscall exit, {ret:,.0f} cycles = {ret / ghz:,.0f} ns"),
    ]


def _power_prose(platform) -> list[tuple[str, str]]:
    """docs/power.md's per-state core powers of the E3 at its top clock, from the preset."""
    c = platform.cpu
    f = c.top_freq_ghz
    cs = {s.name: s.power_w for s in c.cstates}
    return [
        (
            "power.md",
            f"On the E3-1230 v5 at {f:g} GHz, a core costs {c.busy_power_w(f, c.activity['kernel']):.1f} W running"
            f" kernel code, {c.busy_power_w(f, c.activity['poll']):.1f} W in",
        ),
        (
            "power.md",
            f"{c.busy_power_w(f, c.activity['spin']):.1f} W spinning in POLL, {cs['C1']:g} W in C1, and"
            f" {cs['C8']:g} W in C8. The uncore costs {c.uncore_active_w:g} W.",
        ),
    ]


def _idle_and_clock_prose() -> list[tuple[str, str]]:
    """docs/cpu.md's figures for disabled idle states and lower clocks, from the golden docs runs."""
    base, nopoll, idle = (docs_tables.golden_run(n) for n in ("interrupt", "no-poll-state", "idle-poll"))
    turbo, save = docs_tables.golden_run("turbo-off"), docs_tables.golden_run("powersave")
    lat, iops, cpu_w = "summary.latency_us.mean", "summary.iops", "summary.power_w.cpu"
    return [
        (
            "cpu.md",
            f"mean latency {base[lat]:.2f} -> {nopoll[lat]:.2f} us,"
            f" {base[iops] / 1e3:.1f}K -> {nopoll[iops] / 1e3:.1f}K IOPS, CPU",
        ),
        ("cpu.md", f"power {base[cpu_w]:.1f} -> {nopoll[cpu_w]:.1f} W."),
        ("cpu.md", f"CPU power {base[cpu_w]:.1f} -> {idle[cpu_w]:.1f} W (the idle cores spin)"),
        ("cpu.md", f"mean latency {base[lat]:.2f} -> {idle[lat]:.2f} us."),
        ("cpu.md", f"scenario's mean latency from {base[lat]:.2f} to {turbo[lat]:.2f} us"),
        ("cpu.md", f"(0.8 GHz) to {save[lat]:.1f} us."),
    ]


def _flat(text: str) -> str:
    """Prose as one line: a quoted figure may wrap anywhere."""
    return " ".join(text.split())


def stale_prose() -> list[str]:
    out = []
    pages: dict[str, str] = {}
    for page, text in prose_checks():
        if page not in pages:
            pages[page] = _flat((ROOT / "docs" / page).read_text())
        if _flat(text) not in pages[page]:
            out.append(f"docs/{page} does not say (from the code): {text}")
    return out


def stale_tables() -> dict[Path, tuple[str, list[str]]]:
    """Per page whose generated tables differ from the code: its regenerated text and the tables."""
    out = {}
    for page in sorted((ROOT / "docs").glob("*.md")):
        text = page.read_text()
        new, changed = docs_tables.regenerate(text)
        if page == OS_MD:
            new, rows = regenerate(new)
            changed += [f"KernelCosts row {r}" for r in rows]
        if changed:
            out[page] = (new, changed)
    return out


def main(argv: list[str]) -> int:
    stale = stale_tables()
    if "--check" in argv:
        for page, (_new, changed) in stale.items():
            for c in changed:
                print(f"docs/{page.name}: table {c} is stale")
        prose = stale_prose()
        for line in prose:
            print(line)
        return 1 if stale or prose else 0
    for page, (new, changed) in stale.items():
        page.write_text(new)
        print(f"docs/{page.name}: {len(changed)} tables updated")
    for line in stale_prose():
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
