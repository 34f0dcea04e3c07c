"""Every relative link and image in the docs and the README points at a file of the repository."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
PAGES = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md"]


def _targets(page: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)  # not inside code blocks
    return [t for t in LINK.findall(text) if not re.match(r"[a-z]+:", t) and not t.startswith("#")]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_relative_links_resolve(page):
    missing = [t for t in _targets(page) if not (page.parent / t.split("#", 1)[0]).exists()]
    assert missing == []


def test_the_predictions_page_shows_its_figures():
    """docs/predictions.md embeds the curves tools/predictions_figures.py draws."""
    images = [t for t in LINK.findall((ROOT / "docs" / "predictions.md").read_text()) if t.endswith(".svg")]
    assert sorted(images) == [
        "figures/queue-depth.svg",
        "figures/threads-energy.svg",
        "figures/threads-memops.svg",
        "figures/threads.svg",
    ]
