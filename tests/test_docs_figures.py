"""Figures the docs quote in prose are today's: each is computed here from the model (a platform
value, a run's per-IO records) or read from a quoted command output that tests/test_docs_quotes.py
checks against the model (the tutorial's ``$ stacksim explain`` block), and must appear in the
page as written. A changed model fails here until the page says what the model does."""

from __future__ import annotations

import csv
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


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    """Per-IO records of index.md's run: the default scenario (one pvsync2 thread, interrupts),
    300 ms after the 110 ms ramp, as docs/quickstart.md's per-IO records section runs it."""
    from stacksim.cli import main

    path = tmp_path_factory.mktemp("index") / "ios.csv"
    assert main(["run", "--set", "runtime=300ms", "--set", "ramp_time=110ms", "--records", str(path), "--quiet"]) == 0
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


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
