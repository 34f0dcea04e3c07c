"""The docs' quoted command outputs (``$ stacksim ...`` blocks) match what the commands print now
(tools/doc_quotes.py re-makes them). Blocks whose inputs the reader makes first are listed here with
where they are checked instead, so that a new unchecked quote does not go unnoticed."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import doc_quotes  # noqa: E402

#: (page, command) -> why it is not run here
NOT_RUN_HERE = {
    ("validate-your-hardware.md", "calibrate"): "checked by tests/test_trace_validate.py (tools/trace_docs_quotes.py)",
    ("validate-your-hardware.md", "validate"): "checked by tests/test_trace_validate.py (tools/trace_docs_quotes.py)",
}


def test_every_runnable_quoted_output_is_what_the_command_prints():
    blocks = doc_quotes.blocks()
    runnable = [b for b in blocks if not b.missing]
    assert runnable, "no quoted command output found"
    for b in runnable:
        stale = doc_quotes.stale_lines(b, doc_quotes.run(b))
        assert not stale, f"{b.page.name}: $ stacksim {' '.join(b.argv)}: run python tools/doc_quotes.py\n" + "\n".join(
            stale
        )


def test_the_quotes_not_run_here_are_the_known_ones():
    skipped = {(b.page.name, b.argv[0]) for b in doc_quotes.blocks() if b.missing}
    assert skipped == set(NOT_RUN_HERE)
