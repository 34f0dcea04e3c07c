"""Memory benchmark: peak Python memory of the default job against its simulated length (run by
hand, not in the test suite).

    python benchmarks/bench_memory.py [--short-ms 1000] [--long-ms 10000]

Runs the default scenario (``stacksim run``: 4 KiB random reads, one thread, interrupts) through
:func:`scenarios.run.simulate.simulate` for a short and a long runtime under :mod:`tracemalloc` and
prints each run's IOs and peak traced memory, then the difference in MB and in MB per million IOs:
what a longer run costs beyond the short one. Issue 17's target: the 10 s run uses < 40 MB more
than the 1 s run (the statistics are streamed; per-IO records only with ``records=True``).
"""

from __future__ import annotations

import argparse
import gc
import tracemalloc

from scenarios.config.host import resolve
from scenarios.run.simulate import simulate


def peak_mb(runtime_ms: int, records: bool = False) -> tuple[float, int]:
    """(peak traced MB, measured IOs) of the default scenario run for ``runtime_ms``."""
    gc.collect()
    tracemalloc.start()
    try:
        r = simulate(resolve(sets={"runtime": f"{runtime_ms}ms"}), records=records)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak / 1e6, r.summary["ios"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--short-ms", type=int, default=1000)
    ap.add_argument("--long-ms", type=int, default=10000)
    args = ap.parse_args()
    simulate(resolve(sets={"runtime": "5ms"}))  # imports, caches and built-in data loaded before measuring
    (m0, n0), (m1, n1) = peak_mb(args.short_ms), peak_mb(args.long_ms)
    print(f"{'runtime':>10s} {'IOs':>10s} {'peak MB':>9s}")
    print(f"{args.short_ms:>8d}ms {n0:10,d} {m0:9.1f}")
    print(f"{args.long_ms:>8d}ms {n1:10,d} {m1:9.1f}")
    extra = m1 - m0
    print(
        f"longer run: {extra:+.1f} MB for {n1 - n0:,d} more IOs"
        f" = {extra / max(n1 - n0, 1) * 1e6:.2f} MB per million IOs"
    )


if __name__ == "__main__":
    main()
