"""Instructions per simulated IO in the event loop, counted by valgrind's callgrind (run by hand).

    python benchmarks/bench_instructions.py [--cases TEXT] [--runtime-ms N] [--top K]

The wall-clock benchmark (bench_hot_path.py) is what users feel, but on a shared machine its ratios
drift by a third from run to run, more than most single changes move them. This one counts the
machine instructions that ``Engine.run`` executes (callgrind's ``--toggle-collect``: building the
run and summarising it are left out) and divides by the IOs it completed: the same build and case
give the same count to a fraction of a percent, so a change's effect is read from one run. A case
runs ~50x slower under valgrind than natively (the default runtimes keep each under ~2 minutes).

It measures the code the install runs (``stacksim --version``: compiled or pure Python). With
``--top K`` it also lists the K compiled functions with the most instructions of their own per IO,
C-API calls they make included (``CPyDef_*``: the mypyc-compiled hot path; a generic C-API call,
``PyNumber_*``, ``CPyObject_GetAttr``, ``PyFloat_FromDouble``, usually means a value the compiler
could not type).

Needs ``valgrind`` (and ``callgrind_annotate``) on the PATH; cases as in bench_hot_path.py.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_hot_path import CASES  # noqa: E402

#: simulated ms per case: enough IOs (~10-50K) that set-up and warm-up are a small share
DEFAULT_MS = {"20 threads x 7 SSDs, depth 128": 10, "hybrid polling, 8 jobs": 50, "interrupt, 8 jobs": 50}
LOOP = "CPyDef_engine___Engine___run"  # the compiled event loop (pure Python: Engine.run's frame)
_CHILD = """
import json, sys
sys.path.insert(0, {bench!r})
from bench_hot_path import CASES, _bench_once
rate, ios, events, wall = _bench_once(CASES[{name!r}], {ms})
print(json.dumps({{"ios": ios, "events": events}}))
"""


def measure(name: str, runtime_ms: int, out: Path) -> dict:
    """Run case ``name`` for ``runtime_ms`` simulated ms under callgrind; its IOs, events and
    instructions in the event loop."""
    code = _CHILD.format(bench=str(Path(__file__).resolve().parent), name=name, ms=runtime_ms)
    cmd = ["valgrind", "--tool=callgrind", f"--toggle-collect={LOOP}", f"--callgrind-out-file={out}"]
    # str hashes are salted per process: set and dict probes (an op name in a set) then take a
    # different number of steps from run to run, ~0.2% of the count; a fixed seed makes it repeatable
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    done = subprocess.run([*cmd, sys.executable, "-c", code], capture_output=True, text=True, env=env)
    if done.returncode:
        raise SystemExit(f"bench_instructions: {name}: valgrind failed:\n{done.stderr[-2000:]}")
    res = json.loads(done.stdout.strip().splitlines()[-1])
    total = re.search(r"Collected : (\d+)", done.stderr)
    res["instructions"] = int(total.group(1)) if total else 0
    return res


def own_costs(out: Path, ios: int, top: int) -> list[tuple[float, str]]:
    """The ``top`` compiled functions by instructions per IO of their own (their C-API calls
    included, the other compiled functions and Python calls they make excluded)."""
    text = subprocess.run(
        ["callgrind_annotate", "--tree=calling", "--inclusive=yes", str(out)], capture_output=True, text=True
    ).stdout
    callee = re.compile(
        r"\s*([\d,]+) \(\s*[\d.]+%\)\s+>\s+\S*?(CPyDef_|CPyPy_|0x|\S*[Vv]ectorcall|\S*_PyEval|\S*Object_Call)"
    )
    rows = []
    for block in text.split("\n\n"):
        head = re.search(r"([\d,]+) \(.*\*  \S*?(CPyDef_\w+)", block)
        if not head:
            continue
        own = int(head.group(1).replace(",", ""))
        for line in block.splitlines():
            m = callee.match(line)
            if m:
                own -= int(m.group(1).replace(",", ""))
        rows.append((own / ios, head.group(2)[len("CPyDef_") :]))
    return sorted(rows, reverse=True)[:top]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cases", default="default", help="cases whose name contains this text (comma: any)")
    ap.add_argument("--runtime-ms", type=int, default=0, help="simulated ms per case (default: per case)")
    ap.add_argument("--top", type=int, default=0, help="also list the K costliest compiled functions")
    args = ap.parse_args()
    if not (shutil.which("valgrind") and shutil.which("callgrind_annotate")):
        raise SystemExit("bench_instructions: needs valgrind and callgrind_annotate on the PATH")
    wanted = [w.strip() for w in args.cases.split(",") if w.strip()]
    print(f"{'case':32s} {'IOs':>8s} {'events/IO':>10s} {'instructions/IO':>16s}")
    with tempfile.TemporaryDirectory() as d:
        for name in CASES:
            if wanted and not any(w in name for w in wanted):
                continue
            out = Path(d) / "callgrind.out"
            res = measure(name, args.runtime_ms or DEFAULT_MS.get(name, 100), out)
            ios = max(res["ios"], 1)
            print(f"{name:32s} {ios:8,d} {res['events'] / ios:10.2f} {res['instructions'] / ios:16,.0f}", flush=True)
            for per_io, fn in own_costs(out, ios, args.top):
                print(f"    {per_io:9,.0f}  {fn}")


if __name__ == "__main__":
    main()
