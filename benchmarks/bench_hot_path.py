"""Hot-path benchmark: simulated IOs per wall-clock second (run by hand, not in the test suite).

    python benchmarks/bench_hot_path.py [--runtime-ms 1000] [--repeat 3] [--profile] [--both] [--cases TEXT]

It times the code the install runs (``stacksim --version``: the mypyc-compiled hot path or pure
Python) and says which; ``--both`` times it, then pure Python in a child process (STACKSIM_PURE=1).
Last, the default job's peak memory per million simulated IOs (bench_memory.py's measure at 200 ms
and 1 s).

Cases: the built-in default scenario (1 thread, 4 KiB random reads, interrupts), the same with
classic and hybrid polling, 8 jobs with hybrid polling or interrupts, and the replay of a bursty
block trace on the interrupt path with deep C-states (issue 17's target: >= 0.1 of the bare loop;
bursts of 2,000 reads at 200K IOPS every 15 ms, the CPUs idle in between; timed with its summary), and
an MSR-style trace of bursts from three volumes with 2 s idle gaps (issue 32's target: >= 0.15 of the
bare loop: an idle gap must cost O(1) events, not work per tick).
Reports the simulation loop alone (build + run, without summarising), events per IO, and each case's
ratio to a bare simpy loop with two events per IO timed in the same process (issue 17's yardstick:
default >= 0.4, classic >= 0.5, hybrid and 8 synchronous threads >= 0.25; issue 30's 20 io_uring
threads over 7 devices at depth 128 on cheops23-optane >= 0.2). Target (issue 2):
>= 100,000 simulated IOs per wall second on one core for 4 KiB random reads with interrupts, all
accounting on. Each case runs ``--repeat`` times, each right after a short bare loop, and reports
the fastest run's IOs per wall second (timeit's convention) and the median of the runs' ratios to
their own bare loop (the machine's speed drifts; a yardstick timed next to each run drifts with it).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import statistics
import subprocess
import sys
import time

from scenarios.config.host import resolve
from scenarios.run.assembly import build_run

#: the two trace-replay cases' names (issue 17's bursty trace; issue 32's MSR-style trace with idle gaps)
REPLAY_CASE = "bursty trace replay (interrupt)"
IDLE_GAPS_CASE = "MSR-style bursts, 2 s idle gaps"
#: a case's key naming the built-in scenario it runs (default: ``default``)
SCENARIO = "scenario"
#: a case's key naming the platform it runs on (default: the scenario's)
PLATFORM = "platform"
CASES = {
    "default (interrupt, 1 thread)": {},
    "classic polling, 1 thread": {"queue.io_poll": "1", "hipri": "1"},
    "hybrid polling, 1 thread": {"queue.io_poll": "1", "queue.io_poll_delay": "0", "hipri": "1"},
    "hybrid polling, 8 jobs": {"queue.io_poll": "1", "queue.io_poll_delay": "0", "hipri": "1", "numjobs": "8"},
    "interrupt, 8 jobs": {"numjobs": "8"},
    # issue 30: 20 io_uring threads over 7 devices at depth 128 on the 2-socket CHEOPS'23 host; >= 0.2
    "20 threads x 7 SSDs, depth 128": {SCENARIO: "cheops23-depth", "numjobs": "20", "numa_cpu_nodes": "0-1"},
    # issue 45: flash (the 980 PRO's read-ahead): random reads miss it, sequential reads hit it
    "flash random reads, 1 thread": {PLATFORM: "icpe24-980pro"},
    "flash sequential reads, 1 thread": {PLATFORM: "icpe24-980pro", "rw": "read"},
    # issue 45: flash writes (the 980 PRO's DRAM write buffer and SLC cache)
    "flash random writes, 1 thread": {PLATFORM: "icpe24-980pro", "rw": "randwrite"},
    "flash sequential writes, 1 thread": {PLATFORM: "icpe24-980pro", "rw": "write"},
}


def bench(sets: dict, runtime_ms: int, repeat: int = 1) -> tuple[float, int, int, float]:
    """One fio case: (IOs per wall s, IOs, events, wall s) of the fastest of ``repeat`` runs."""
    return _fastest(lambda: _bench_once(sets, runtime_ms), repeat)


def _bench_once(sets: dict, runtime_ms: int) -> tuple[float, int, int, float]:
    fio = {k: v for k, v in sets.items() if k not in (SCENARIO, PLATFORM)}
    runtime = {"runtime": f"{runtime_ms}ms", "ramp_time": "0"}
    cfg = resolve(scenario=sets.get(SCENARIO), platform=sets.get(PLATFORM), sets={**fio, **runtime})
    t0 = time.perf_counter()
    host, _fio, ramp, end = build_run(cfg)
    host.engine.run(end)
    wall = time.perf_counter() - t0
    n = host.completed_ios
    return (n / wall, n, host.engine.events_processed, wall)


def _fastest(run_once, repeat: int) -> tuple[float, int, int, float]:
    return min((run_once() for _ in range(max(1, repeat))), key=lambda r: r[3])


def paired(run_once, repeat: int, bare_ios: int = 100_000) -> tuple[tuple[float, int, int, float], float, float]:
    """``repeat`` runs of a case, each right after a bare-loop run of ``bare_ios`` IOs: (the
    fastest run, the median of the runs' ratios to their own bare loop, the median bare rate).
    On a shared machine whose speed drifts by tens of percent within minutes (a VM beside noisy
    neighbours), a ratio taken against a yardstick timed once for the whole benchmark swings with
    the drift; timed next to each run, yardstick and run see the same machine."""
    runs, ratios, bares = [], [], []
    for _ in range(max(1, repeat)):
        bare = bare_simpy_ios_per_s(bare_ios, repeat=1)
        r = run_once()
        runs.append(r)
        bares.append(bare)
        ratios.append(r[0] / bare)
    return min(runs, key=lambda r: r[3]), statistics.median(ratios), statistics.median(bares)


def bursty_trace(
    path: str, bursts: int, per_burst: int = 2000, rate_iops: float = 200_000.0, gap_ms: float = 5.0
) -> int:
    """Write an MSR Cambridge trace of ``bursts`` bursts of ``per_burst`` 4 KiB random reads at
    ``rate_iops``, ``gap_ms`` of idle between them; returns the IOs written."""
    import numpy as np

    rng = np.random.default_rng(1)
    burst_ns = per_burst / rate_iops * 1e9
    lines = []
    for b in range(bursts):
        t0 = b * (burst_ns + gap_ms * 1e6)
        times = t0 + np.sort(rng.uniform(0.0, burst_ns, per_burst))
        offs = rng.integers(0, 2**26, per_burst) * 4096
        base = 128166372000000000
        lines += [f"{base + int(t // 100)},bench,0,Read,{o},4096,100" for t, o in zip(times, offs)]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return len(lines)


def idle_gaps_trace(path: str, bursts: int, per_burst: int = 1000, gap_s: float = 2.0) -> int:
    """Write an MSR Cambridge trace the way a production server's looks (issue 32): ``bursts``
    bursts of ``per_burst`` IOs, ``gap_s`` of idle between them (minutes in the real traces, so that
    an idle second must cost a few events, not work per tick). Each burst comes from one of three
    volumes (host_disk) at 50K to 200K IO/s, 70% reads, sizes of 4 to 64 KiB, and sequential runs
    as well as random offsets; returns the IOs written."""
    import numpy as np

    rng = np.random.default_rng(32)
    base = 128166372000000000  # a FILETIME in 2007, as in the MSR traces
    lines = []
    t0 = 0.0
    for _b in range(bursts):
        host, disk = [("hm", 0), ("src1", 2), ("proj", 1)][int(rng.integers(0, 3))]
        rate = rng.uniform(50_000.0, 200_000.0)
        times = t0 + np.sort(rng.uniform(0.0, per_burst / rate * 1e9, per_burst))
        sizes = rng.choice([4096, 8192, 16384, 65536], per_burst, p=[0.6, 0.2, 0.1, 0.1])
        offs = rng.integers(0, 2**24, per_burst) * 4096
        seq = rng.random(per_burst) < 0.3  # a third continues where the previous IO ended
        offs[1:][seq[1:]] = offs[:-1][seq[1:]] + sizes[:-1][seq[1:]]
        ops = np.where(rng.random(per_burst) < 0.7, "Read", "Write")
        resp = rng.integers(80, 400, per_burst)  # 8 to 40 us, in 100 ns ticks
        lines += [
            f"{base + int(t // 100)},{host},{disk},{op},{o},{n},{r}"
            for t, op, o, n, r in zip(times, ops, offs, sizes, resp)
        ]
        t0 = times[-1] + gap_s * 1e9
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return len(lines)


def bench_replay(bursts: int, repeat: int = 1, paired_runs: bool = False, idle_gaps: bool = False):
    """The bursty-trace replay case: (IOs per wall s, IOs, events, wall s), the fastest run (with
    ``paired_runs``: :func:`paired`'s answer); ``idle_gaps``: :func:`idle_gaps_trace`'s trace."""
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as d:
        path = str(Path(d) / "bursty.csv")
        (idle_gaps_trace if idle_gaps else bursty_trace)(path, bursts)
        once = lambda: _replay_once(path)  # noqa: E731
        return paired(once, repeat) if paired_runs else _fastest(once, repeat)


def _replay_once(path: str) -> tuple[float, int, int, float]:
    from scenarios.run.replay import resolve_replay
    from scenarios.run.simulate import simulate

    cfg = resolve_replay(path, "msr")
    t0 = time.perf_counter()
    res = simulate(cfg)  # (not keep_model: it keeps every request, as tests want, and a run does not)
    wall = time.perf_counter() - t0
    n = res["summary"]["ios"]
    return (n / wall, n, res["sim"]["events"], wall)


def bare_simpy_ios_per_s(n_ios: int = 200_000, repeat: int = 3) -> float:
    """The yardstick of issue 17: a bare simpy loop with two events per IO (a submit delay and a
    device delay, fixed lengths), timed in this process: IOs per wall second, the fastest of
    ``repeat`` runs. A case's ratio to it says how much Python work the model adds per IO on this
    machine and interpreter, independently of how fast the machine is."""
    import simpy

    def io_loop(env, n):
        for _ in range(n):
            yield env.timeout(1_000)  # the host's submit path
            yield env.timeout(6_000)  # the device

    best = 0.0
    for _ in range(max(1, repeat)):
        env = simpy.Environment()
        env.process(io_loop(env, n_ios))
        t0 = time.perf_counter()
        env.run()
        best = max(best, n_ios / (time.perf_counter() - t0))
    return best


def memory_line(short_ms: int = 200, long_ms: int = 1000) -> str:
    """Peak traced memory of the default job per million more simulated IOs (bench_memory.py's
    measure, at shorter lengths): flat in the run's length means about 0."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from bench_memory import peak_mb

    peak_mb(5)  # caches and built-in data loaded before measuring
    (m0, n0), (m1, n1) = peak_mb(short_ms), peak_mb(long_ms)
    return (
        f"memory: default job {short_ms} ms -> {long_ms} ms: peak {m0:.1f} -> {m1:.1f} MB, "
        f"{(m1 - m0) / max(n1 - n0, 1) * 1e6:+.2f} MB per million IOs"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runtime-ms", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3, help="runs per case; the fastest is reported (default 3)")
    ap.add_argument("--profile", action="store_true", help="profile the default case instead")
    ap.add_argument("--both", action="store_true", help="then the same in pure Python (a child process)")
    ap.add_argument(
        "--cases", default="", help="run only the cases whose name contains this text (e.g. 'replay,idle'; comma: any)"
    )
    args = ap.parse_args()
    if args.profile:
        cProfile.runctx("bench({}, args.runtime_ms)", globals(), locals(), "/tmp/stacksim.prof")
        pstats.Stats("/tmp/stacksim.prof").sort_stats("tottime").print_stats(25)
        return
    from simcore.compiled import describe

    print(f"code: {describe()}")
    print(
        "each run is timed right after a bare simpy loop (2 events per IO); 'vs bare' is the median of\n"
        "the runs' ratios to their own bare loop, 'bare' the median bare-loop rate (IOs per wall s)"
    )
    print(
        f"{'case':32s} {'IOs/wall s':>12s} {'vs bare':>8s} {'bare':>9s} {'IOs':>9s} {'events/IO':>10s} {'wall s':>7s}"
    )

    def line(name: str, result) -> None:
        (rate, n, ev, wall), ratio, bare = result
        print(
            f"{name:32s} {rate:12,.0f} {ratio:8.3f} {bare:9,.0f} {n:9,d} {ev / max(n, 1):10.2f} {wall:7.2f}", flush=True
        )

    wanted = [w.strip() for w in args.cases.split(",") if w.strip()]

    def chosen(name: str) -> bool:
        return not wanted or any(w in name for w in wanted)

    for name, sets in CASES.items():
        if chosen(name):
            line(name, paired(lambda: _bench_once(sets, args.runtime_ms), args.repeat))
    bursts = max(1, args.runtime_ms // 20)
    for name, idle_gaps in ((REPLAY_CASE, False), (IDLE_GAPS_CASE, True)):
        if chosen(name):
            line(name, bench_replay(bursts, args.repeat, paired_runs=True, idle_gaps=idle_gaps))
    if not wanted:
        print(memory_line())
    if args.both:
        print(flush=True)
        subprocess.run(
            [sys.executable, __file__, "--runtime-ms", str(args.runtime_ms), "--repeat", str(args.repeat)]
            + (["--cases", args.cases] if wanted else []),
            env={**os.environ, "STACKSIM_PURE": "1"},
            check=True,
        )


if __name__ == "__main__":
    main()
