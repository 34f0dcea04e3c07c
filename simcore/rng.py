"""Independent, seeded random streams, one per component.

Each component asks for a stream by a stable name ("ssd0.service", "cpu.governor"); the stream's
seed is derived from the run seed and a CRC of the name, so adding a component never shifts the
draws of another, and the same seed gives the same draws bit for bit.
"""

from __future__ import annotations

import zlib
from itertools import chain, repeat

import numpy as np


class RngStreams:
    """Factory of named numpy ``Generator`` streams derived from one run seed."""

    def __init__(self, seed: int):
        if seed < 0:
            raise ValueError(f"negative seed {seed}")
        self.seed = int(seed)
        self._streams: dict[str, np.random.Generator] = {}

    def stream(self, name: str) -> np.random.Generator:
        """The generator for ``name`` (created on first use, then reused)."""
        gen = self._streams.get(name)
        if gen is None:
            key = zlib.crc32(name.encode("utf-8"))
            gen = np.random.Generator(np.random.PCG64(np.random.SeedSequence([self.seed, key])))
            self._streams[name] = gen
        return gen


class BatchedDraws:
    """Pulls random variates from a stream in batches (one numpy call per ``batch`` draws).

    ``sampler(gen, n)`` returns an array of ``n`` variates. ``next()`` is a cheap Python call on the
    hot path. Determinism holds for a given batch size; two BatchedDraws sharing one generator
    interleave their batches, so changing the batch size changes which values each one gets.
    """

    __slots__ = ("next",)

    def __init__(self, gen: np.random.Generator, sampler, batch: int = 4096):
        batches = (sampler(gen, batch).tolist() for _ in repeat(None))
        #: ``next()`` -> the next variate: a C-level iterator step (a batch is drawn when the
        #: previous one is used up, exactly when a per-draw Python method would draw it)
        self.next = chain.from_iterable(batches).__next__
