"""Generate the synthetic sample traces in ``scenarios/data/traces/``.

    python -m scenarios.data.traces.make_samples [OUT_DIR]     # default: the samples/ directory

The samples are synthetic (not copied from any real trace) and deterministic: the same numpy
seed gives the same bytes, which the tests check. Workload, per sample:

* arrivals: a two-state Markov-modulated Poisson process (bursts of 20 000 IO/s lasting
  ~5 ms on average, separated by quiet periods of 400 IO/s lasting ~30 ms on average);
* 35 % reads; sizes 4 KiB to 64 KiB in 512-byte multiples, with a third of the IOs exactly 4 KiB;
* 3 volumes with weights 0.5/0.3/0.2; offsets 4 KiB aligned within 16 GiB, and 30 % of the IOs
  continue sequentially after the volume's previous IO.

Files: ``msr_sample.csv`` (MSR Cambridge columns, FILETIME base 2007-02-22, volumes hm_0, hm_1,
src1_2, synthetic response times) and ``alibaba_sample.csv`` (Alibaba columns, volumes 12, 419,
733, timestamps in us from 2020-01-01).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

SAMPLES_DIR = Path(__file__).resolve().parent
N_IOS = 300
MSR_SEED = 20240601
ALIBABA_SEED = 20240602
MSR_FILETIME_BASE = 128_166_372_000_000_000  # 100 ns ticks since 1601 (2007-02-22)
ALIBABA_US_BASE = 1_577_836_800_000_000  # us since 1970 (2020-01-01)


def synth_ios(rng: np.random.Generator, n: int) -> list[tuple[int, bool, int, int, int]]:
    """``n`` IOs as ``(t_ns, is_read, offset_bytes, nbytes, volume_index)``."""
    rates, mean_stay_s = (20_000.0, 400.0), (0.005, 0.030)
    t, state, leave_at = 0.0, 0, rng.exponential(mean_stay_s[0])
    last_end = [0, 0, 0]
    out = []
    for _ in range(n):
        t += rng.exponential(1.0 / rates[state])
        while t >= leave_at:  # state change: redraw the arrival from the new state's rate
            t = leave_at + rng.exponential(1.0 / rates[1 - state])
            state = 1 - state
            leave_at += rng.exponential(mean_stay_s[state])
        vol = int(rng.choice(3, p=[0.5, 0.3, 0.2]))
        is_read = bool(rng.random() < 0.35)
        nbytes = 4096 if rng.random() < 1 / 3 else 512 * int(rng.integers(8, 129))
        if rng.random() < 0.3:
            offset = last_end[vol]
        else:
            offset = 4096 * int(rng.integers(0, (16 << 30) // 4096 - 16))
        last_end[vol] = offset + nbytes
        out.append((int(t * 1e9), is_read, offset, nbytes, vol))
    return out


def msr_lines() -> list[str]:
    rng = np.random.default_rng(MSR_SEED)
    volumes = (("hm", 0), ("hm", 1), ("src1", 2))
    lines = []
    for t_ns, is_read, offset, nbytes, vol in synth_ios(rng, N_IOS):
        host, disk = volumes[vol]
        resp_ticks = int(rng.lognormal(np.log(800.0), 0.6))  # ~80 us
        lines.append(
            f"{MSR_FILETIME_BASE + t_ns // 100},{host},{disk},"
            f"{'Read' if is_read else 'Write'},{offset},{nbytes},{resp_ticks}"
        )
    return lines


def alibaba_lines() -> list[str]:
    rng = np.random.default_rng(ALIBABA_SEED)
    devices = (12, 419, 733)
    return [
        f"{devices[vol]},{'R' if is_read else 'W'},{offset},{nbytes},{ALIBABA_US_BASE + t_ns // 1000}"
        for t_ns, is_read, offset, nbytes, vol in synth_ios(rng, N_IOS)
    ]


def write_samples(out_dir: str | Path = SAMPLES_DIR) -> list[Path]:
    """Write both samples into ``out_dir`` (created if needed); return their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, lines in (("msr_sample.csv", msr_lines()), ("alibaba_sample.csv", alibaba_lines())):
        path = out / name
        path.write_bytes(("\n".join(lines) + "\n").encode("ascii"))
        paths.append(path)
    return paths


if __name__ == "__main__":
    for p in write_samples(sys.argv[1] if len(sys.argv) > 1 else SAMPLES_DIR):
        print(p)
