"""Rendering an HTML report in a real browser (headless Chromium) for the report tests: the page
loads without console errors and every plotly figure draws its SVG and traces."""

from __future__ import annotations

import html.parser
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

VOID_TAGS = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class _PlotScan(html.parser.HTMLParser):
    """Per plotly div of a rendered DOM: the number of main-svg elements and of drawn traces."""

    def __init__(self):
        super().__init__()
        self.stack: list[str | None] = []
        self.plots: dict[str, dict[str, int]] = {}

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        cls = set((a.get("class") or "").split())
        owner = self.stack[-1] if self.stack else None
        if "plotly-graph-div" in cls:
            owner = a.get("id")
            self.plots[owner] = {"main-svg": 0, "traces": 0}
        elif owner is not None:
            self.plots[owner]["main-svg"] += "main-svg" in cls
            self.plots[owner]["traces"] += bool({"trace", "hm"} & cls)
        if tag not in VOID_TAGS:
            self.stack.append(owner)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID_TAGS:
            self.stack.pop()

    def handle_endtag(self, tag):
        if tag not in VOID_TAGS and self.stack:
            self.stack.pop()


def assert_plots_render(page: Path, figures: int) -> None:
    """Load ``page`` in headless Chromium (skip the test without it): no console errors, and each
    of its ``figures`` plotly divs drew its SVG and at least one trace."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("chromium is not installed (Debian: apt-get install -y chromium)")
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.run(
            [
                chromium,
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                f"--user-data-dir={profile}",
                "--enable-logging=stderr",
                "--v=0",
                "--virtual-time-budget=15000",
                "--dump-dom",
                page.as_uri(),
            ],
            check=False,
            capture_output=True,
            text=True,
            timeout=180,
        )
    assert proc.returncode == 0, proc.stderr[-2000:]
    console = [ln for ln in proc.stderr.splitlines() if "CONSOLE" in ln or "Uncaught" in ln]
    assert not console, console
    scan = _PlotScan()
    scan.feed(proc.stdout)
    assert len(scan.plots) == figures
    for div, seen in scan.plots.items():
        assert seen["main-svg"] >= 2 and seen["traces"] >= 1, (div, seen)
