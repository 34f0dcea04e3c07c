"""fio's io_uring_cmd ``write_mode`` (scenarios/inputs/fio/write_mode.py): the NVM command each
write is sent as, one mode for all, or drawn at random by the mix's percentages. The device's
side of each command: :mod:`models.ssd.nvm_commands`.
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate

import numpy as np

from models.os.block.request import WRITE_OPCODES
from simcore.rng import BatchedDraws


class WriteModes:
    """One thread's write commands: :meth:`next` per write gives its opcode."""

    def __init__(self, modes: tuple[tuple[str, float], ...], stream: np.random.Generator) -> None:
        self.codes = [WRITE_OPCODES[m] for m, _ in modes]
        total = sum(p for _, p in modes)
        self.bounds = [c / total for c in accumulate(p for _, p in modes)][:-1]
        self.draw = BatchedDraws(stream, lambda g, n: g.random(n)).next if len(modes) > 1 else None

    def next(self) -> int:
        """The next write's opcode."""
        if self.draw is None:
            return self.codes[0]
        return self.codes[bisect_right(self.bounds, self.draw())]
