"""Re-make the three outputs docs/validate-your-hardware.md quotes (validate --trace on the stock
platform, calibrate --trace, validate --trace on the calibrated platform) from the synthetic
sample, and write them into the page. Run after the model or the sample changes:

    python -m scenarios.data.traces.make_timed_sample && python tools/trace_docs_quotes.py

tests/test_trace_validate.py checks the quoted lines against the real outputs.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import sys
import tempfile
from pathlib import Path

from stacksim import cli

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "validate-your-hardware.md"
SAMPLE = ROOT / "scenarios" / "data" / "traces" / "blkparse_qdc_sample.txt"
POLLED = ["--set", "replay.hipri=1", "--set", "queue.io_poll=1"]


def _run(args: list[str]) -> list[str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        cli.main(args)
    return out.getvalue().splitlines()


def _section(lines: list[str], head: str) -> list[str]:
    i = next(k for k, ln in enumerate(lines) if ln.startswith(head))
    j = i + 1
    while j < len(lines) and lines[j].startswith(" "):
        j += 1
    return lines[i:j]


def _all_mean(section: list[str]) -> str:
    return next(ln for ln in section if ln.startswith("  all") and " mean " in ln)


def _replace_block(text: str, first_line: str, block: list[str]) -> str:
    i = text.index(first_line)
    j = text.index("\n```", i)
    return text[:i] + "\n".join(block) + text[j:]


# long: three runs and the three quoted blocks, in the page's order
def main() -> int:
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(SAMPLE, tmp)
        os.chdir(tmp)
        try:
            name = SAMPLE.name
            v1 = _run(["validate", "--trace", name, *POLLED, "--max-error", "5"])
            c1 = _run(["calibrate", "--trace", name, *POLLED, "-o", "my-ssd.yaml", "--name", "my-ssd"])
            v2 = _run(
                [
                    "validate",
                    "--trace",
                    name,
                    *POLLED,
                    "--platform",
                    "my-ssd.yaml",
                    "--max-error",
                    "5",
                    "--html",
                    "after.html",
                ]
            )
        finally:
            os.chdir(cwd)
    qc, qd, dc = (_section(v1, h) for h in ("Q->C", "Q->D", "D->C"))
    r4 = next(k for k, ln in enumerate(qc) if ln.startswith("  read 4k"))
    fail = next(ln for ln in v1 if ln.startswith("FAIL"))
    b1 = [
        "$ cp scenarios/data/traces/blkparse_qdc_sample.txt .      # from the repository",
        f"$ stacksim validate --trace {name} --set replay.hipri=1 --set queue.io_poll=1 --max-error 5",
        v1[0],
        v1[1],
        qc[0],
        qc[1],
        qc[r4],
        qc[r4 + 1],
        "...",
        _all_mean(qc),
        "...",
        qd[0],
        "...",
        _all_mean(qd),
        "...",
        dc[0],
        "...",
        _all_mean(dc),
        "...",
        next(ln for ln in v1 if ln.startswith("error over time")),
        fail[: fail.index(":") + 1] + " ...",
        "$ echo $?",
        "1",
    ]
    b2 = [
        f"$ stacksim calibrate --trace {name} --set replay.hipri=1 --set queue.io_poll=1 -o my-ssd.yaml --name my-ssd",
        *c1,
    ]
    b3 = [
        f"$ stacksim validate --trace {name} --set replay.hipri=1 --set queue.io_poll=1 --platform my-ssd.yaml "
        "--max-error 5 --html after.html",
        "...",
        _all_mean(_section(v2, "Q->C")),
        "...",
        next(ln for ln in v2 if ln.startswith("error over time")),
        next(ln for ln in v2 if ln.startswith(("PASS", "FAIL"))),
        next(ln for ln in v2 if ln.startswith("wrote")),
    ]
    text = PAGE.read_text()
    text = _replace_block(text, "$ cp scenarios/data/traces/blkparse_qdc_sample.txt .", b1)
    text = _replace_block(text, f"$ stacksim calibrate --trace {name}", b2)
    text = _replace_block(
        text, f"$ stacksim validate --trace {name} --set replay.hipri=1 --set queue.io_poll=1 --platform", b3
    )
    PAGE.write_text(text)
    print(f"{PAGE.relative_to(ROOT)}: quoted outputs re-made")
    return 0


if __name__ == "__main__":
    sys.exit(main())
