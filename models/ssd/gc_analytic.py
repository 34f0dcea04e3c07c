"""Greedy garbage collection under uniform random page overwrites, analytically: its write
amplification and the steady-state distribution of valid pages per block.

Notation: U user (logical) pages, all mapped; N blocks of b pages that hold data; the spare factor
(over-provisioning) s = (N b - U) / U and alpha = 1 + s = N b / U. Every host write overwrites one
logical page chosen uniformly, so each valid page dies at rate 1 / U per host write and a block
holding j valid pages loses one at rate j / U. Garbage collection reclaims the block with the fewest
valid pages (greedy); its valid pages are copied (programmed again) and the block erased. Write
amplification (WA) = pages programmed / pages the host wrote = b / (b - y), y the victim's mean
number of valid pages.

**The large-block limit** (Hu, Haas, Eleftheriou, Pletka and Bhattacharjee, "Write amplification
analysis in flash-based solid state drives", SYSTOR 2009; Desnoyers, "Analytic modeling of SSD
write performance", SYSTOR 2012, its LRU/FIFO model; Xiang and Kurkoski, "An improved analytic
expression for write amplification in NAND flash", arXiv:1110.4245, for greedy): as b grows a
block's valid fraction becomes a deterministic function of its age, so greedy takes the oldest
block, as FIFO does. A page survives the T (1 - u) host writes between its block's writing and its
collection (T = N b pages are programmed in between, a fraction 1 - u of them by the host) with
probability exp(-alpha (1 - u)), so the victim's valid fraction u solves u = exp(-alpha (1 - u)).
Writing -alpha u exp(-alpha u) = -alpha exp(-alpha) gives u = -W(-alpha exp(-alpha)) / alpha with W
the Lambert W function's principal branch (the other branch gives the trivial u = 1), and
WA = 1 / (1 - u) = alpha / (alpha + W(-alpha exp(-alpha))): :func:`greedy_wa_limit`.

**Blocks of b pages** (mean field, N large; the greedy limit of Van Houdt's d-choices model, "A
mean field model for a class of garbage collection algorithms in flash-based solid state drives",
SIGMETRICS 2013, which MQSim uses to precondition its steady state): a block closes with b valid
pages and steps down one level at a time, spending U / j host writes on average at level j. Blocks
close at lambda = 1 / (b - y) per host write, so level j holds lambda U / j blocks, from b down to
the victim level. With y = k - p (k an integer, 0 <= p < 1), blocks wait at level k for greedy,
a fraction p of them stepping to k - 1 first (collected at once there), so level k holds
p lambda U / k. The valid pages sum to lambda U (b - y) = U whatever y is; the blocks sum to N:

    alpha (b - y) / b = H_b - H(y),    H(k - p) = H_k - p / k    (H_k the k-th harmonic number)

which fixes y (:func:`greedy_mean_field`). As b grows, H_b - H(u b) -> -ln u and the equation
becomes the limit's u = exp(-alpha (1 - u)). Finite blocks do better than the limit (greedy then
finds blocks emptier than the average of their age): at s = 0.075, 7.34 in the limit, 7.15
with b = 256 and 6.64 with b = 64.

Derived here from the stated model; the numbers are :func:`greedy_wa_limit`'s and
:func:`greedy_mean_field`'s own (tests/test_ftl_steady.py checks them against the FTL's counts).
"""

from __future__ import annotations

import math
from dataclasses import dataclass


def victim_valid_fraction(spare: float) -> float:
    """The large-block limit's victim valid fraction u, the root below 1 of u = exp(-(1 + s)(1 - u))."""
    if spare <= 0:
        raise ValueError(f"spare factor {spare}: greedy GC needs physical space beyond the user space (> 0)")
    from scipy.special import lambertw  # (on use: every command imports the SSD model, few need it)

    a = 1.0 + spare
    return float(-lambertw(-a * math.exp(-a), 0).real / a)


def greedy_wa_limit(spare: float) -> float:
    """Write amplification of greedy GC under uniform random writes in the large-block limit (the
    Lambert W form of Hu et al. 2009 / Desnoyers 2012 / Xiang and Kurkoski), spare factor
    ``spare`` = (physical - user) / user."""
    return 1.0 / (1.0 - victim_valid_fraction(spare))


def harmonics(n: int) -> list[float]:
    """H_0 .. H_n, H_k = 1 + 1/2 + ... + 1/k (H_0 = 0)."""
    out = [0.0]
    for i in range(1, n + 1):
        out.append(out[-1] + 1.0 / i)
    return out


@dataclass(frozen=True)
class GreedySteadyState:
    """Greedy GC's mean-field steady state for blocks of ``pages_per_block`` pages."""

    pages_per_block: int
    spare: float
    #: the victim's mean valid pages y = k - p
    victim_valid: float
    #: blocks per level, as fractions of the blocks holding data: share[j] for j valid pages
    share: tuple[float, ...]

    @property
    def write_amplification(self) -> float:
        return self.pages_per_block / (self.pages_per_block - self.victim_valid)


def greedy_mean_field(spare: float, pages_per_block: int) -> GreedySteadyState:
    """Solve alpha (b - y) / b = H_b - H(y) for the victim's mean valid pages y (the module's
    docstring derives it) and the shares of blocks at each level."""
    if spare <= 0:
        raise ValueError(f"spare factor {spare}: greedy GC needs physical space beyond the user space (> 0)")
    b, a = pages_per_block, 1.0 + spare
    h = harmonics(b)

    def excess(k: int) -> float:  # H_b - H_k - alpha (b - k) / b: > 0 below the root, < 0 above it
        return h[b] - h[k] - a * (b - k) / b

    if excess(0) <= 0:  # blocks empty wholly before greedy needs them: victims hold nothing
        y, k, p = 0.0, 0, 0.0
    else:
        k = b - 1
        while excess(k - 1) < 0:  # excess(b - 1) = (1 - alpha) / b < 0
            k -= 1
        # on [k - 1, k] H(y) is linear: excess(k - p) = excess(k) + p (1 / k - alpha / b)
        p = -excess(k) / (1.0 / k - a / b)
        y = k - p
    lam_u = 1.0 / (b - y)  # lambda U: blocks closed per host write, times U
    n = a / b  # the blocks holding data, N / U
    share = [0.0] * (b + 1)
    for j in range(k + 1, b + 1):
        share[j] = lam_u / j / n
    if k > 0:
        share[k] = p * lam_u / k / n
    else:  # the blocks left over wait empty
        share[0] = 1.0 - math.fsum(share)
    return GreedySteadyState(b, spare, y, tuple(share))


def steady_valid_counts(user_pages: int, blocks: int, pages_per_block: int) -> list[int]:
    """Valid pages of each of ``blocks`` blocks holding ``user_pages`` pages in greedy GC's steady
    state (the blocks in order of fullness, fullest first): block i takes the level at quantile
    (i + 1/2) / blocks of :func:`greedy_mean_field`'s distribution, then the rounding's few pages
    are added to (or taken from) blocks in turn so that the counts sum to ``user_pages``."""
    b = pages_per_block
    if blocks * b <= user_pages:
        raise ValueError(f"{blocks} blocks of {b} pages cannot hold {user_pages} pages with space to collect")
    share = greedy_mean_field(blocks * b / user_pages - 1.0, b).share
    counts = []
    level, upto = b, share[b] * blocks
    for i in range(blocks):
        while i + 0.5 > upto and level > 0:
            level -= 1
            upto += share[level] * blocks
        counts.append(level)
    diff = user_pages - sum(counts)
    step = 1 if diff > 0 else -1
    i = 0
    while diff:
        c = counts[i % blocks] + step
        if 0 <= c <= b:
            counts[i % blocks] = c
            diff -= step
        i += 1
    return counts
