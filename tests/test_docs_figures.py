"""Figures the docs quote in prose are today's: each is computed here from the model (a platform
value, a run's per-IO records) or read from a quoted command output that tests/test_docs_quotes.py
checks against the model (the tutorial's ``$ stacksim explain`` block), and must appear in the
page as written. A changed model fails here until the page says what the model does."""

from __future__ import annotations

import contextlib
import csv
import os
import re
import statistics as st
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PLATFORM = "optane900p-e3-1230v5"


def _page(name: str) -> str:
    return re.sub(r"\s+", " ", (DOCS / name).read_text(encoding="utf-8"))  # prose wraps anywhere


def _explain_table() -> dict[str, list[str]]:
    """The tutorial's quoted ``explain`` output: each table row's values (interrupt, classic-poll,
    hybrid-poll) by row name, and each policy's waterfall segments by ``policy/segment``."""
    text = (DOCS / "tutorial-one-io.md").read_text(encoding="utf-8")
    block = re.search(r"^```\n\$ stacksim explain (.*?)^```", text, re.S | re.M).group(1)
    rows, policy = {}, ""
    for line in block.splitlines():
        head = re.match(r"(interrupt|classic-poll|hybrid-poll)\b.*latency ([\d.]+) us", line)
        if head:
            policy = head.group(1)
            rows[f"{policy}/latency"] = [head.group(2)]
        m = re.match(r"  (\S.*?)\s{2,}(-?[\d,.]+%?)\s+(-?[\d,.]+%?)(?:\s+(-?[\d,.]+%?))?\s*(\|.*)?$", line)
        if m and m.group(5):  # a waterfall segment: start, ns
            rows[f"{policy}/{m.group(1)}"] = [m.group(2), m.group(3)]
        elif m:
            rows[m.group(1)] = [v for v in m.group(2, 3, 4) if v]
    return rows


def _n(value: str) -> float:
    return float(value.replace(",", "").rstrip("%"))


def test_the_tutorial_and_completion_prose_quote_the_explain_output():
    t = _explain_table()
    sched, poll, timer = t["scheduler"], t["polling"], t["timer"]
    util = t["CPU utilization (all logical CPUs)"]
    found = t["hybrid-poll/completion found: a poll (after the hrtimer sleep) observes the CQE, reaps it"]
    interrupt_lat, classic_lat, hybrid_lat = (
        t[f"{p}/latency"][0] for p in ("interrupt", "classic-poll", "hybrid-poll")
    )
    tutorial, completion = _page("tutorial-one-io.md"), _page("completion.md")
    expected = {
        "tutorial-one-io.md": [
            f"{_n(sched[0]):,.0f} ns of `scheduler` per IO",
            f"{_n(t['idle (CPUs of the job idle while IO is pending)'][0]):,.0f} ns of `idle`",
            f"{_n(poll[1]):,.0f} ns of `polling`, so CPU 0 is busy",
            f"({util[1]} of the 8 logical CPUs",
            f"{classic_lat} instead of {interrupt_lat} us",
            f"as fast as the classic one ({hybrid_lat} us)",
            "the task's hrtimer is set for {:,.0f} ns".format(
                _n(t["hybrid-poll/task: hrtimer sleep (armed for 3,396 ns)"][1])
            ),
            "switches back in, {:,.0f} ns".format(_n(t["hybrid-poll/task: wake-up: hrtimer interrupt, switch in"][1])),
            "it spins in `blk_poll` for {:,.0f} ns".format(_n(t["hybrid-poll/task: spins in blk_poll"][1])),
            f"`timer` interrupt ({_n(timer[2]):,.0f} ns per IO)",
            f"({_n(sched[2]):,.0f} ns of `scheduler`)",
            f"only {_n(poll[2]):,.0f} ns of `polling`",
        ],
        "completion.md": [
            f"Utilization is {util[2]} vs {util[1]} of the 8 CPUs",
            f"polls about {_n(poll[2]) / 1000:.1f} us instead of {_n(poll[1]) / 1000:.1f} us",
            f"classic latency ({classic_lat} us)",
        ],
    }
    assert found  # the hybrid waterfall was read
    missing = [
        (p, f)
        for p, figs in expected.items()
        for f in figs
        if f not in {"tutorial-one-io.md": tutorial, "completion.md": completion}[p]
    ]
    assert missing == []


def test_the_tutorials_other_figures_are_its_outputs():
    """Section 3-6's comparisons: from the quoted explain outputs (the 4 KiB one and the 64 KiB one
    of section 6) and the platform's frequency."""
    from scenarios.config.host import platform_by_name

    ghz = platform_by_name(PLATFORM).cpu.max_freq_ghz
    t = _explain_table()
    text = (DOCS / "tutorial-one-io.md").read_text(encoding="utf-8")
    big = re.search(r"^\$ stacksim explain .*?--set bs=64k.*?^```", text, re.S | re.M).group(0)
    seg = dict(re.findall(r"^  (\S.*?)\s{2,}-?\d+\s+(\d+)\s+\|", big, re.M))
    lat64 = dict(re.findall(r"^(interrupt|classic-poll)\b.*latency ([\d.]+) us", big, re.M))
    iops = [_n(v) for v in t["IOPS"]]
    lat = {p: float(t[f"{p}/latency"][0]) for p in ("interrupt", "classic-poll")}
    arm = next(_n(v[0]) for k, v in t.items() if k.startswith("hybrid-poll/task: hrtimer sleep"))
    submit = next(_n(v[1]) for k, v in t.items() if k.startswith("hybrid-poll/submit"))
    found = next(_n(v[1]) for k, v in t.items() if k.startswith("interrupt/completion found"))
    page = _page("tutorial-one-io.md")
    expected = [
        f"about {round(_n(t['scheduler'][0]) * ghz, -1):,.0f} cycles",
        f"So classic polling is {lat['interrupt'] - lat['classic-poll']:.1f} us faster per IO",
        f"{iops[1] / 1000:.0f}K instead of {iops[0] / 1000:.0f}K IOPS",
        f"after {arm - submit:.0f} ns of arming it",
        f"= {_n(seg['SSD: data transfer (data path, link)']):,.0f} ns",
        f"jumped from {found:.0f} to {_n(next(v for k, v in seg.items() if k.startswith('completion found'))):,.0f} ns",
        f"Polling does not pay it ({lat64['classic-poll']} us",
    ]
    assert [f for f in expected if f not in page] == []


def test_the_tutorials_walk_through_follows_its_waterfalls():
    """Section 3 and 4 of the tutorial narrate the quoted interrupt and classic-poll waterfalls."""
    t = _explain_table()

    def seg(policy: str, prefix: str) -> tuple[int, int]:
        start, ns = next(v for k, v in t.items() if k.startswith(f"{policy}/{prefix}"))
        return int(_n(start)), int(_n(ns))

    fetch, media = seg("interrupt", "SSD: command fetch"), seg("interrupt", "SSD: media service")
    found, ret = seg("interrupt", "completion found"), seg("interrupt", "return")
    end = ret[0] + ret[1]
    page = _page("tutorial-one-io.md")
    expected = [
        f"**Submit, 0 to {fetch[0]:,}.**",
        f"**The SSD, {fetch[0]:,} to {found[0]:,}.**",
        f"this IO drew {media[1]:,})",
        f"That is `t_cqe`, {found[0] - fetch[0]:,} ns after the doorbell",
        f"**Completion found, {found[0]:,} to {found[0] + found[1]:,}.**",
        f"cycles = {found[1]} ns. That is `t_reaped`",
        f"**Return, {ret[0]:,} to {end:,}.**",
        f"cycles = {ret[1]:,} ns. At `t_complete`",
        f"**Completion found: {seg('classic-poll', 'completion found')[1]} ns.**",
        f"**Return: {seg('classic-poll', 'return')[1]} ns.**",
    ]
    assert [f for f in expected if f not in page] == []


def test_the_context_switch_the_docs_quote_is_the_platforms():
    from scenarios.config.host import platform_by_name

    plat = platform_by_name(PLATFORM)
    cycles = plat.kernel.ctx_switch_cycles
    ghz = plat.cpu.max_freq_ghz
    page = _page("tutorial-one-io.md")
    quoted = re.findall(r"`kernel\.ctx_switch_cycles` = ([\d,]+)|the ([\d,]+)-cycle context switch", page)
    assert len(quoted) == 2
    assert {_n(a or b) for a, b in quoted} == {round(cycles)}
    saved = (cycles - 2000) / ghz
    assert f"by ({round(cycles):,} - 2,000) / {ghz:g} = {saved:.0f} ns" in page


def _records(tmp_path_factory, *argv: str) -> list[dict[str, str]]:
    """The per-IO records of ``stacksim run ARGV`` (300 ms after the 110 ms ramp unless ARGV says)."""
    from stacksim.cli import main

    path = tmp_path_factory.mktemp("records") / "ios.csv"
    window = ["--set", "runtime=300ms", "--set", "ramp_time=110ms"]
    assert main(["run", *window, *argv, "--records", str(path), "--quiet"]) == 0  # ARGV's --set last
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    """Per-IO records of index.md's run: the default scenario (one pvsync2 thread, interrupts),
    300 ms after the 110 ms ramp, as docs/quickstart.md's per-IO records section runs it."""
    return _records(tmp_path_factory)


#: completion.md's command (one thread of the tutorial's job), without its polling settings
POLLED_JOB = [
    "examples/randread-4k-hipri.fio",
    "--platform",
    PLATFORM,
    "--set",
    "numjobs=1",
    "--set",
    "queue.io_poll=1",
]


@pytest.fixture(scope="module")
def hybrid(tmp_path_factory):
    """completion.md's hybrid-polling run (adaptive sleep), 300 ms, per-IO records."""
    return _records(tmp_path_factory, *POLLED_JOB, "--set", "queue.io_poll_delay=0")


@pytest.fixture(scope="module")
def classic(tmp_path_factory):
    """The same job classic-polled."""
    return _records(tmp_path_factory, *POLLED_JOB, "--set", "queue.io_poll_delay=-1")


def _mean(rows: list[dict[str, str]], a: str, b: str) -> float:
    """Mean of ``b - a`` over the IOs (``t_`` and ``_ns`` implied)."""
    return st.mean(float(r[f"t_{b}_ns"]) - float(r[f"t_{a}_ns"]) for r in rows)


def test_index_md_splits_the_device_time_as_the_model_does(records):
    def mean(a: str, b: str) -> float:
        return st.mean(float(r[b]) - float(r[a]) for r in records)

    media = st.mean(float(r["device_service_ns"]) for r in records)
    fetch, post = mean("t_dispatch_ns", "t_dev_start_ns"), mean("t_dev_end_ns", "t_cqe_ns")
    data = mean("t_dev_start_ns", "t_dev_end_ns") - media
    cqe, reaped, done = (
        mean("t_dispatch_ns", "t_cqe_ns"),
        mean("t_dispatch_ns", "t_reaped_ns"),
        mean("t_dispatch_ns", "t_complete_ns"),
    )
    text = (DOCS / "index.md").read_text(encoding="utf-8")
    prose = re.sub(r"\s+", " ", text)
    assert f"command fetch {fetch:.0f} ns, media service about {round(media, -1):,.0f} ns" in prose
    assert f"= {data:,.0f} ns" in prose and f"completion posting {post:.0f} ns" in prose
    assert f"visible about {round(cqe, -1):,.0f} ns after the doorbell" in prose
    diagram = re.search(r"^\*\*Interrupt\*\*.*?```\n(.*?)```", text, re.S | re.M).group(1)
    cpu, cpu_t, ssd, ssd_t, lat = diagram.splitlines()[:5]
    assert f"media {media:.0f}" in ssd and f"data path {data:.0f}" in ssd
    assert ssd_t.split() == [f"{v:.0f}" for v in (0, fetch, fetch + media, fetch + media + data, cqe)]
    assert {f"{cqe:.0f}", f"{reaped:.0f}", f"{done:.0f}"} <= set(cpu_t.split())
    assert f"+ {done:.0f} = " in lat


@pytest.mark.parametrize("policy", ["classic-poll", "hybrid-poll"])
def test_polling_without_polled_queues_is_refused_as_completion_md_says(policy, capsys):
    """completion.md: a polling policy without queue.io_poll=1 is refused with the message it quotes
    (not left to spin on a queue that has no polled pair)."""
    from stacksim.cli import main

    quoted = re.search(
        r"\"completion policy 'min-hybrid' (polls, but the queue has no polled queues)\"", _page("completion.md")
    )
    assert quoted and "as it is for `classic-poll` and `hybrid-poll`" in _page("completion.md")
    assert main(["run", "--set", f"queue.completion={policy}", "--set", "runtime=1ms"]) == 2
    assert f"completion policy '{policy}' {quoted.group(1)}" in capsys.readouterr().err


def _hybrid_path(hybrid) -> dict[str, float]:
    """The hybrid IO's steps in ns from the doorbell, means of the run, and the costs that join
    them (the platform's kernel costs at its frequency)."""
    from models.os.block.queue import QueueConfig
    from scenarios.config.host import platform_by_name
    from scenarios.run.assembly import build_host

    plat = platform_by_name(PLATFORM)
    k, ghz = plat.kernel, plat.cpu.max_freq_ghz
    host = build_host(plat, QueueConfig(io_poll=1, io_poll_delay=0), 1)
    timer, wake = host.timer_cost.cycles, host.runners[0].cost_wakeup.cycles
    p = {
        "arm_cycles": k.hybrid_stats_cycles + k.hrtimer_start_cycles,
        "timer_cycles": timer,
        "wake_cycles": wake,
        "arm": _mean(hybrid, "dispatch", "sleep"),
        "sleep": _mean(hybrid, "sleep", "timer"),
        "timer": _mean(hybrid, "dispatch", "timer"),
        "woken": _mean(hybrid, "dispatch", "woken"),
        "cqe": _mean(hybrid, "dispatch", "cqe"),
        "reaped": _mean(hybrid, "dispatch", "reaped"),
        "done": _mean(hybrid, "dispatch", "complete"),
        "irq_wake": (timer + wake) / ghz,  # the timer interrupt's handler and the wake-up
        "switch_in": k.switch_from_idle_cycles() / ghz,
    }
    # the task's switch out: its dequeue (PELT, PSI) and schedule() to the idle loop
    p["idle"] = p["arm"] + (k.accounting_cycles() + k.switch_to_idle_cycles()) / ghz
    # the model's wake-up is these costs: the records' timer-to-running gap is their sum
    assert _mean(hybrid, "timer", "woken") == pytest.approx(p["irq_wake"] + p["switch_in"], abs=2)
    p["late"] = sum(float(r["t_woken_ns"]) > float(r["t_cqe_ns"]) for r in hybrid)
    return p


def test_index_md_draws_the_polled_ios_as_the_model_runs_them(classic, hybrid):
    text = (DOCS / "index.md").read_text(encoding="utf-8")

    def diagram(title: str) -> tuple[list[str], str]:
        lines = re.search(rf"^\*\*{title}\*\*.*?```\n(.*?)```", text, re.S | re.M).group(1).splitlines()
        return lines[1].split(), re.sub(r"\s+", " ", " ".join(lines[2:]))

    marks, rest = diagram("Classic polling")
    cqe, reaped, done = (_mean(classic, "dispatch", b) for b in ("cqe", "reaped", "complete"))
    assert marks == [f"{v:.0f}" for v in (0, cqe, reaped, done)]
    lat = _mean(classic, "submit", "complete") / 1000
    assert f"+ {done:.0f} = {lat:.2f} us" in rest
    p = _hybrid_path(hybrid)
    marks, rest = diagram("Hybrid polling")
    steps = ("arm", "idle", "timer", "irq_wake", "woken", "cqe", "reaped", "done")
    assert marks == ["0"] + [f"{p[s] + (p['timer'] if s == 'irq_wake' else 0):.0f}" for s in steps]
    assert f"latency = {_mean(hybrid, 'submit', 'complete') / 1000:.2f} us" in rest
    assert f"polling again about {(p['cqe'] - p['woken']) / 1000:.1f} us before the CQE" in rest
    assert f"(about {p['sleep']:,.0f} ns here)" in _page("index.md")


def _wake_up_path(p: dict[str, float]) -> tuple[list[int], int]:
    """arm + timer IRQ and wake-up + switch in, each as the pages round it, and their sum."""
    parts = [round(p["arm"]), round(p["irq_wake"]), round(p["switch_in"])]
    return parts, sum(parts)


#: a fixed hybrid sleep keeps no statistics: a short run and ramp give its mean latency
FIXED_WINDOW = ("--set", "runtime=50ms", "--set", "ramp_time=5ms")


def test_completion_md_explains_hybrid_polling_with_todays_figures(hybrid, tmp_path_factory):
    p = _hybrid_path(hybrid)
    _parts, w = _wake_up_path(p)
    fixed = _records(tmp_path_factory, *POLLED_JOB, "--set", "queue.io_poll_delay=6", *FIXED_WINDOW)
    page = _page("completion.md")
    expected = [
        f"800 cycles = {p['arm']:.0f} ns" if p["arm_cycles"] == 800 else "arm cycles changed",
        f"(`timer_irq`, {p['timer_cycles']:,.0f} cycles) wakes the task (`wakeup`, {p['wake_cycles']:,.0f}",
        f"cycles): {p['irq_wake']:.0f} ns in all. The task switches in ({p['switch_in']:,.0f} ns)",
        f"the adaptive sleep is about {p['sleep']:,.0f} ns",
        f"(arm + timer IRQ + switch in) adds {w:,} ns",
        f"polling {p['woken'] / 1000:.2f} us after the doorbell, while the CQE arrives at {p['cqe'] / 1000:.2f} us",
        f"the mean latency is {_mean(fixed, 'submit', 'complete') / 1000:.2f} us",
    ]
    assert [f for f in expected if f not in page] == []


def test_calibration_md_times_the_hybrid_io_as_the_model_does(hybrid):
    from scenarios.config.host import platform_by_name

    p = _hybrid_path(hybrid)
    parts, w = _wake_up_path(p)
    mean = 2 * p["sleep"] - 1  # the sleep is (mean + 1) / 2
    text = (DOCS / "calibration.md").read_text(encoding="utf-8")
    timeline = re.search(r"^```\n0 +doorbell(.*?)^```", text, re.S | re.M).group(0).splitlines()[1:-1]
    assert [line.split()[0] for line in timeline] == [
        f"{v:,.0f}" for v in (0, p["arm"], p["idle"], p["timer"], p["woken"], p["cqe"])
    ]
    body = " ".join(timeline)
    for fig in (
        f"({p['arm_cycles']:,.0f} cycles = {p['arm']:.0f})",
        f"(mean + 1)/2 = {p['sleep']:,.0f}",
        f"(mean {mean:,.0f}:",
        f"({p['timer_cycles']:,.0f} + {p['wake_cycles']:,.0f} cycles = {p['irq_wake']:.0f})",
        f"(ctx_switch + idle_exit = {p['switch_in']:,.0f})",
    ):
        assert fig in body
    page = _page("calibration.md")
    sd = platform_by_name(PLATFORM).ssd.read.sd_ns
    expected = [
        f"here {' + '.join(f'{v:,}' for v in parts)} = {w:,} < {p['sleep']:,.0f}",
        f"It holds with {(p['sleep'] - w) / 1000:.1f} us to spare",
        f"(sd {sd:.0f} ns) almost never closes the gap ({p['late']} of {len(hybrid):,} IOs)",
        f"`W` of about {(mean + 400) / 2000:.2f} us instead of {w / 1000:.2f} us",
    ]
    assert [f for f in expected if f not in page] == []


def test_calibration_md_quotes_the_platforms_values():
    """calibration.md's fitted and set kernel costs, in cycles and in time at the frequency each
    platform's cores run at (its cpufreq governor's)."""
    from models.os.block.queue import QueueConfig
    from scenarios.config.host import platform_by_name
    from scenarios.run.assembly import build_host

    page = _page("calibration.md")

    def at_speed(name: str) -> tuple[float, float, float]:
        plat = platform_by_name(name)
        ghz = build_host(plat, QueueConfig(), 1).cpufreq.initial_freq_ghz()
        return plat.kernel.ctx_switch_cycles, ghz, plat.kernel.ctx_switch_cycles / ghz / 1000

    here, e5 = at_speed(PLATFORM), at_speed("optane-p4800x-e5-2660v4")
    assert at_speed("p3700-e5-2660v4") == e5  # "the two E5 platforms"
    k = platform_by_name(PLATFORM).kernel
    user_ns = k.user_io_cycles / here[1]
    expected = [
        f"`ctx_switch_cycles` = {e5[0]:,.1f} ({e5[2]:.2f} us at {e5[1]:.1f} GHz), against {here[0]:,.1f} "
        f"({here[2]:.2f} us at {here[1]:.1f} GHz)",
        f"`ctx_switch_cycles` = {here[0]:,.1f} ({here[2]:.2f} us at {here[1]:.1f} GHz,",
        f"fit gives {e5[0]:,.1f} ({e5[2]:.2f} us at {e5[1]:.1f} GHz,",
        f"| {k.user_io_cycles:,.1f} cycles ({user_ns:.0f} ns) |",
        f"| {here[0]:,.1f} cycles ({here[2]:.2f} us) |",
        f"its gap is {user_ns:.0f} ns in every mode",
        f"`kernel.irq_entry_cycles = {k.irq_entry_cycles:.0f}`",
        f"entry/exit {k.irq_entry_cycles:.0f} + CQ reap {k.nvme_complete_cycles:.0f} (`nvme_complete_cycles`) + "
        f"request completion {k.blk_complete_cycles:.0f} (`blk_complete_cycles`) + waking the blocked task "
        f"{k.wakeup_cycles:.0f} (`wakeup_cycles`)",
    ]
    assert k.irq_entry_cycles + k.nvme_complete_cycles + k.blk_complete_cycles + k.wakeup_cycles == 1500
    assert [f for f in expected if f not in page] == []


def test_power_md_prices_a_core_as_the_platform_does():
    """power.md's core powers per state, from the CPU's formula at 3.8 GHz and its C-state table,
    and the comparison below its generated energy table (checked by tests/test_docs_defaults.py)."""
    from scenarios.config.host import platform_by_name

    cpu = platform_by_name(PLATFORM).cpu
    act = cpu.activity
    state = {s.name: s.power_w for s in cpu.cstates}
    w = {a: cpu.busy_power_w(cpu.max_freq_ghz, act[a]) for a in ("kernel", "poll", "spin")}
    page = _page("power.md")
    assert (
        f"at {cpu.max_freq_ghz:g} GHz, a core costs {w['kernel']:.1f} W running kernel code, {w['poll']:.1f} W in "
        f"`blk_poll`, {w['spin']:.1f} W spinning in POLL, {state['C1']:.1f} W in C1, and {state['C8']:.2f} W in C8. "
        f"The uncore costs {cpu.uncore_active_w:g} W." in page
    )
    iops = dict(re.findall(r"^\| (classic polling|interrupt) \| ([\d,]+) \|", (DOCS / "power.md").read_text(), re.M))
    more = _n(iops["classic polling"]) / _n(iops["interrupt"]) - 1
    assert f"about the same power, {100 * more:.0f}% more IOs" in page
    # the kernel code interrupt mode adds per IO: the tutorial's explain output (busy CPU but polling)
    t = _explain_table()
    busy, poll = t["total CPU busy (all layers but idle)"], t["polling"]
    extra = (_n(busy[0]) - _n(poll[0])) - (_n(busy[1]) - _n(poll[1]))
    assert f"interrupt mode runs about {extra / 1000:.1f} us more kernel code per IO" in page


def test_ssd_md_times_a_read_as_index_md_does(records):
    from scenarios.config.host import platform_by_name

    read = platform_by_name(PLATFORM).ssd.read
    cqe = st.mean(float(r["t_cqe_ns"]) - float(r["t_dispatch_ns"]) for r in records)
    data = st.mean(
        float(r["t_dev_end_ns"]) - float(r["t_dev_start_ns"]) - float(r["device_service_ns"]) for r in records
    )
    page = _page("ssd.md")
    assert f"media about {read.base_ns:,.0f} (sd {read.sd_ns:.0f}) + data path {data:,.0f}" in page
    assert f"the CQE appears about {cqe / 1000:.1f} us after the doorbell" in page


def _fio_summary(text: str, **sets) -> dict:
    """The summary of the fio job ``text`` on the platform."""
    from scenarios.config.host import resolve
    from scenarios.inputs.fio.parser import parse_fio_text
    from scenarios.run.simulate import simulate

    cfg = resolve(jobs=list(parse_fio_text(text).jobs), platform=PLATFORM, sets=sets)
    return simulate(cfg).summary


def _psync(rw: str, runtime: str, size: str = "64m", bs: str = "4k", extra: str = "") -> str:
    return f"[j]\nioengine=psync\nrw={rw}\nbs={bs}\nsize={size}\nruntime={runtime}\ntime_based=1\n{extra}\n"


#: pagecache.md's io-wq table: (kernel column, kernel.version, bs, extra job lines)
IOWQ_ROWS = (
    ("6.6", "6.6", "4k", ""),
    ("5.15", "5.15", "4k", ""),
    ("5.15, a regular file (`filename=data.bin`)", "5.15", "4k", "filename=data.bin"),
    ("6.6, `bs=2k`", "6.6", "2k", ""),
)


def test_pagecache_md_io_uring_write_table_and_sync_figures_are_the_models(tmp_path):
    """pagecache.md's io-wq table (four 10 ms runs of 4 KiB random writes, io_uring QD16) and its
    fsync=8 example (20 ms): IOPS, inline / punted writes and workers as the runs give them."""
    page = (DOCS / "pagecache.md").read_text(encoding="utf-8")
    flat = _page("pagecache.md")
    runtime = re.search(r"\(`optane900p-e3-1230v5`, (\d+) ms; the platform's own kernel", page).group(1)
    table = dict(re.findall(r"^\| (\d\.\d+[^|]*?) \| [^|]+ \| ([^|]+ \| [^|]+ \| [^|]+ \| [^|]+) \|$", page, re.M))
    workers = set()
    with _chdir(tmp_path):  # filename=data.bin: a file of the run's own
        for label, version, bs, extra in IOWQ_ROWS:
            s = _fio_summary(
                _psync("randwrite", f"{runtime}ms", bs=bs, extra="ioengine=io_uring\niodepth=16\n" + extra),
                **{"kernel.version": version},
            )
            w = s["pagecache"]["io_uring_writes"]
            n = w["inline"] + w["punted_to_iowq"]

            def share(k: int) -> str:
                return "all" if k == n else "0" if k == 0 else f"{100 * k / n:.0f}%"

            want = f"{s['iops']:,.0f} | {share(w['inline'])} | {share(w['punted_to_iowq'])} | {w['iowq_workers']}"
            assert table.get(label) == want, f"pagecache.md io-wq row {label}: {table.get(label)} != {want}"
            if label == "5.15":
                workers.add(w["iowq_workers"])
    (many,) = workers
    assert f"{_WORDS.get(many, str(many))} of them share the four cores" in flat
    s = _fio_summary(_psync("write", "20ms", size="1g", extra="fsync=8"))
    sync = s["sync"]
    assert (
        f"`fsync=8` with psync (as in the table below, 20 ms): {sync['total_ios']} syncs,"
        f" {sync['latency_us']['mean']:.0f} us mean each (median {sync['latency_us']['p50']:.0f} us:" in flat
    )
    assert f"the slowest, {sync['latency_us']['max']:.0f} us, pull the mean up" in flat
    assert f"while the writes complete in about {s['latency_us']['mean']:.0f} us" in flat


_WORDS = {8: "eight", 10: "ten", 12: "twelve", 16: "sixteen"}


@contextlib.contextmanager
def _chdir(path):
    old = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def test_pagecache_md_prose_follows_its_prediction_table():
    """The comparisons below pagecache.md's prediction table (tools/pagecache_table.py makes it)
    are the table's own figures."""
    page = (DOCS / "pagecache.md").read_text(encoding="utf-8")
    body = re.search(r"<!-- pagecache-table -->\n(.*?)<!-- end pagecache-table -->", page, re.S).group(1)
    rows = {}
    for line in body.splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[2].startswith("(refused"):
            continue
        rows[(cells[0], cells[1])] = [_n(c) for c in cells[2:]]
    iops, lat, pagecache = 0, 1, 2
    fsync, write = rows[("write, fsync=8", "buffered")], rows[("sequential write", "buffered")]
    uring, direct = rows[("random read, io_uring QD16", "buffered")], rows[("random read, io_uring QD16", "direct")]
    flat = _page("pagecache.md")
    assert f"not in the writes' {fsync[lat]:.2f} us mean" in flat
    assert f"which leaves the job about {_fraction(fsync[iops] / write[iops])} of its IOPS" in flat
    assert f"carries the page cache's work (~{uring[pagecache] / 1000:.1f} us)" in flat
    assert f"stays ~{100 * (1 - uring[iops] / direct[iops]):.0f}% below direct IO" in flat


def _fraction(x: float) -> str:
    return min(
        {"a quarter": 0.25, "a third": 1 / 3, "half": 0.5, "a fifth": 0.2}.items(), key=lambda kv: abs(kv[1] - x)
    )[0]
