"""fio's ``fdp=1`` (fio 3.41 dataplacement.c dp_init / dp_fill_dspec_data; HOWTO ``fdp``,
``fdp_pli``, ``fdp_pli_select``): each write names a placement handle (the NVMe Flexible Data
Placement directive's DSPEC) of the job's ``fdp_pli`` list, else every one the device has
(the assembly's choice), in turn (``roundrobin``, fio's default) or drawn at random (``random``).
Where a handle's data then goes is the device's (models/ssd/ftl.py).
"""

from __future__ import annotations

import numpy as np

from simcore.rng import BatchedDraws


class FdpPlacement:
    """One thread's placement handles: :meth:`next` per write."""

    def __init__(self, handles: tuple[int, ...], select: str, stream: np.random.Generator) -> None:
        self.handles = handles
        self.random = select == "random"
        self.i = 0  # roundrobin: the next handle's index
        self.draw = BatchedDraws(stream, lambda g, n: g.random(n)).next if self.random else None

    def next(self) -> int:
        """The next write's placement handle."""
        handles = self.handles
        if self.draw is not None:
            return handles[int(self.draw() * len(handles))]
        i = self.i
        self.i = i + 1 if i + 1 < len(handles) else 0
        return handles[i]
