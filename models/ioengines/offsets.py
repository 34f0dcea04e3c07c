"""fio's offsets for random IO that is not plain uniform: ``random_distribution`` (zipf, pareto,
normal, zoned, zoned_abs, sequence), ``random_generator=lfsr`` and ``percentage_random``.

Everything works in blocks of the job's smallest block size (fio's ``rw_min_bs``): the job's range
(``size`` from ``offset``) has ``nranges = span // unit`` of them. The draws come from a stream of
the job clone's own (``jobJ.C.offset``), so a non-uniform job never shifts another stream's draws.
The plain uniform tausworthe job (fio's default) does not come here: its draws are unchanged.

The pickers follow fio 3.41 (lib/zipf.c, lib/gauss.c, io_u.c; semantics in fio's HOWTO,
``random_distribution``):

* ``zipf:theta`` -- rank ``k`` (1-based) with probability ``k**-theta / zeta(n, theta)``, drawn by
  Gray et al.'s method ("Quickly generating billion-record synthetic databases", SIGMOD 1994) as
  fio's zipf_next does, with ``zeta`` summed over at most fio's ZIPF_MAX_GEN = 10,000,000 ranks;
* ``pareto:h`` -- rank ``(n - 1) * u ** (log(h) / log(1 - h))`` (fio's pareto_next): the hottest
  fraction ``h`` of the blocks takes a fraction ``1 - h`` of the accesses;
* ``normal:dev`` -- a Gaussian of standard deviation ``dev`` percent of the range (at most half of
  it), as fio's gauss_next: a sum of 12 uniform deviates (Irwin-Hall), centred on ``center``
  (default 0.5), wrapped into the range;
* zipf and pareto scatter their ranks over the range with a 64-bit hash plus a random offset (fio's
  ``__hash_u64`` and ``rand_off``; here the splitmix64 finaliser, a bijection of 64-bit words); an
  explicit ``center`` puts the hottest rank at ``center x nranges`` instead, ranks following it;
* ``zoned`` / ``zoned_abs`` -- a zone by its access percentage, then a uniform block inside it
  (zones in percent of the range / in bytes), per direction;
* ``sequence:I,J,...`` -- the listed block indices in that order, repeated (with
  ``random_sequence_stride``: each repetition one sequence length further on);
* ``lfsr`` -- every block once per pass over the range in a scrambled order (fio uses a maximal
  LFSR; here a full-period LCG modulo the next power of two, Hull-Dobell, skipping values beyond
  the range: the same guarantee, never the same offset twice in a pass);
* ``percentage_random=p`` -- each IO is random with probability ``p`` percent (fio's
  should_do_random), else sequential from where the previous IO of the job ended.
"""

from __future__ import annotations

import math

import numpy as np

from models.ioengines.job import FioJob
from simcore.errors import ConfigError
from simcore.rng import BatchedDraws

#: fio's ZIPF_MAX_GEN: zeta(n, theta) is summed over at most this many ranks
ZIPF_MAX_GEN = 10_000_000
_M64 = (1 << 64) - 1


def mix64(x: int) -> int:
    """splitmix64's finaliser: a bijective 64-bit hash (stands in for fio's ``__hash_u64``)."""
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9 & _M64
    x = (x ^ (x >> 27)) * 0x94D049BB133111EB & _M64
    return x ^ (x >> 31)


def zeta(n: int, theta: float) -> float:
    """``sum_{k=1..min(n, ZIPF_MAX_GEN)} k**-theta`` (fio's zipf_update)."""
    total = 0.0
    top = min(n, ZIPF_MAX_GEN)
    for lo in range(1, top + 1, 1 << 20):
        k = np.arange(lo, min(top, lo + (1 << 20) - 1) + 1, dtype=np.float64)
        total += float(np.sum(k**-theta))
    return total


class _Ranked:
    """zipf / pareto: a rank from one uniform draw, scattered (hash + random offset) or placed
    from ``center``."""

    def __init__(self, nranges: int, center: float | None, gen: np.random.Generator):
        self.n = nranges
        self.hash = center is None
        self.off = int(gen.integers(0, 1 << 32)) if center is None else int(nranges * center)

    def place(self, rank: int) -> int:
        if self.hash:
            rank = mix64(rank)
        return (rank + self.off) % self.n


class Zipf(_Ranked):
    def __init__(self, nranges: int, theta: float, center: float | None, gen: np.random.Generator):
        super().__init__(nranges, center, gen)
        n = nranges
        self.theta = theta
        self.zetan = zeta(n, theta)
        zeta2 = 1.0 + 0.5**theta
        self.alpha = 1.0 / (1.0 - theta)
        self.eta = (1.0 - (2.0 / n) ** (1.0 - theta)) / (1.0 - zeta2 / self.zetan) if n > 2 else 0.0
        self.two = 1.0 + 0.5**theta

    def block(self, u: float) -> int:
        z = u * self.zetan
        if z < 1.0:
            rank = 0
        elif z < self.two:
            rank = 1
        else:
            rank = min(self.n - 1, int(self.n * (self.eta * u - self.eta + 1.0) ** self.alpha))
        return self.place(rank)


class Pareto(_Ranked):
    def __init__(self, nranges: int, h: float, center: float | None, gen: np.random.Generator):
        super().__init__(nranges, center, gen)
        self.power = math.log(h) / math.log(1.0 - h)

    def block(self, u: float) -> int:
        return self.place(int((self.n - 1) * u**self.power))


class Normal:
    """fio's gauss_next: 12 uniform deviates summed (Irwin-Hall: mean 6, variance 1)."""

    def __init__(self, nranges: int, dev_pct: float, center: float | None, draw):
        self.n = nranges
        self.sd = min(math.ceil(dev_pct / 100.0 * nranges), nranges // 2)
        self.mid = nranges * (0.5 if center is None else center)
        self.draw = draw

    def block(self, u: float) -> int:
        s = u + sum(self.draw() for _ in range(11))
        return int(math.floor(self.mid + (s - 6.0) * self.sd)) % self.n


class Zoned:
    """A zone by its access percentage, then a uniform block in it."""

    def __init__(self, zones: tuple[tuple[float, int, int], ...], draw):
        self.cum = []
        total = 0.0
        for pct, _start, _len in zones:
            total += pct
            self.cum.append(total)
        self.zones = zones
        self.draw = draw

    def block(self, u: float) -> int:
        x = u * 100.0
        for c, (_pct, start, length) in zip(self.cum, self.zones):
            if x < c:
                return start + int(self.draw() * length)
        _pct, start, length = self.zones[-1]
        return start + int(self.draw() * length)


class Lfsr:
    """Every block once per pass: a full-period LCG modulo 2**k >= nranges (values beyond skipped)."""

    def __init__(self, nranges: int, gen: np.random.Generator):
        self.n = nranges
        self.bits = max(1, (nranges - 1).bit_length())
        self.mask = (1 << self.bits) - 1
        self.c = int(gen.integers(0, 1 << 62)) * 2 + 1 & self.mask | 1  # odd increment
        self.x = int(gen.integers(0, 1 << 62)) & self.mask

    def block(self, u: float) -> int:
        while True:
            self.x = (self.x * 6364136223846793005 + self.c) & self.mask  # a = 1 mod 4
            if self.x < self.n:
                return self.x


class Sequence:
    """fio's ``sequence:I,J,...``: the listed block indices in turn, repeated; with
    ``random_sequence_stride`` each repetition is one sequence length further on (block group
    ``g`` takes ``g x len + I``, ...). An index past the range wraps to its start (the HOWTO does not
    say what fio does there; stacksim keeps the IO inside the job's range)."""

    def __init__(self, blocks: tuple[int, ...], stride: bool, nranges: int):
        self.blocks = blocks
        self.step = len(blocks) if stride else 0
        self.n = nranges
        self.i = 0
        self.base = 0

    def block(self, u: float) -> int:
        b = (self.base + self.blocks[self.i]) % self.n
        self.i += 1
        if self.i == len(self.blocks):
            self.i = 0
            self.base += self.step
        return b


def _zones(job: FioJob, op: str, nranges: int, unit: int) -> tuple[tuple[float, int, int], ...]:
    spec = job.zones_read if op == "read" else job.zones_write
    out = []
    start = 0
    for pct, size in spec:
        length = int(size / 100.0 * nranges) if job.random_distribution == "zoned" else int(size // unit)
        if start >= nranges:
            raise ConfigError(
                f"job '{job.name}': random_distribution={job.random_distribution}: a zone starts at "
                f"block {start}, beyond the job's range of {nranges} blocks of {unit} bytes"
            )
        length = max(1, min(length, nranges - start))
        out.append((pct, start, length))
        start += length
    return tuple(out)


class OffsetPicker:
    """A job clone's random block picks per direction, and whether an IO is random at all."""

    def __init__(self, job: FioJob, nranges: int, unit: int, gen: np.random.Generator):
        self.draw = BatchedDraws(gen, lambda g, n: g.random(n), batch=1024).next
        self.pct = {"read": job.percentage_random_read, "write": job.percentage_random_write}
        dist = job.random_distribution
        value, center = job.random_distribution_value, job.random_distribution_center
        pick: dict = {}
        for op in ("read", "write"):
            if dist == "zipf":
                pick[op] = pick.get("read") or Zipf(nranges, value, center, gen)
            elif dist == "pareto":
                pick[op] = pick.get("read") or Pareto(nranges, value, center, gen)
            elif dist == "normal":
                pick[op] = pick.get("read") or Normal(nranges, value, center, self.draw)
            elif dist == "sequence":  # one sequence for reads and writes (the HOWTO names one)
                pick[op] = pick.get("read") or Sequence(job.random_sequence, job.random_sequence_stride, nranges)
            elif dist in ("zoned", "zoned_abs"):
                pick[op] = Zoned(_zones(job, op, nranges, unit), self.draw)
            elif job.random_generator == "lfsr":
                pick[op] = pick.get("read") or Lfsr(nranges, gen)
            else:
                pick[op] = None  # uniform
        self.pick = pick
        self.n = nranges

    def is_random(self, op: str) -> bool:
        pct = self.pct[op]
        return pct >= 100 or (pct > 0 and self.draw() * 100.0 < pct)

    def block(self, op: str) -> int:
        p = self.pick[op]
        u = self.draw()
        return int(u * self.n) if p is None else p.block(u)
