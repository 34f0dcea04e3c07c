"""A cost bundle: the per-layer cycles and instructions of one uninterrupted stretch of code, as the
CPU runs it on the hot path (built once per run by :class:`models.os.costs.tables.CostTable`).

Cycles = instructions x cycles per instruction (CPI) of the layer's kind of code on a warm core; a
cold core's refetch stalls are separate bundles (the ``cache`` layer: cycles, no instructions).
The instructions are precomputed per bundle, so the hot path only counts bundle uses."""

from __future__ import annotations

__all__ = ["LAYERS", "LAYER_INDEX", "OPTIONAL_LAYERS", "USER", "Cost"]

#: Stack layers reported in ``summary.layers`` (plus "idle", the idle time while IO is pending).
LAYERS = (
    "user",
    "syscall",
    "fs",
    "block",
    "iosched",
    "driver",
    "irq",
    "scheduler",
    "timer",
    "polling",
    "cache",
    "pagecache",
    "writeback",
)
#: Layers reported only by runs that used them (buffered IO): a direct-IO run's summary is unchanged.
OPTIONAL_LAYERS = ("pagecache", "writeback")
LAYER_INDEX = {name: i for i, name in enumerate(LAYERS)}
USER = LAYER_INDEX["user"]


class Cost:
    """A bundle of per-layer cycles executed as one stretch. ``activity`` is the power activity
    factor of the stretch (cycle-weighted user vs kernel); ``actions`` the kernel actions it
    executes, ((index in :data:`ACTIONS`, times), ...). Only the ``user`` layer runs in user mode,
    unless the whole bundle does (``user_space``: a user-space driver's work, as SPDK's, keeps its
    layers and is the task's user time)."""

    __slots__ = (
        "name",
        "idx",
        "cycles",
        "layer_cycles",
        "instructions",
        "layer_instructions",
        "user_cycles",
        "sys_cycles",
        "activity",
        "actions",
    )

    name: str
    idx: int  # its index in the run's table (per-CPU use counts)
    cycles: float
    layer_cycles: tuple[float, ...]  # by LAYERS
    instructions: float
    layer_instructions: tuple[float, ...]  # by LAYERS: layer_cycles / the layer's warm CPI
    user_cycles: float
    sys_cycles: float
    activity: float
    actions: tuple

    def __init__(
        self,
        name: str,
        idx: int,
        parts: dict[str, float],
        activity_user: float,
        activity_kernel: float,
        actions: tuple = (),
        user_space: bool = False,
        cpi: tuple[float, ...] = (),
    ):
        """``cpi``: the warm cycles per instruction of each layer (by LAYERS; 0 = the layer retires
        no instructions, e.g. refetch stalls); empty: no instructions are counted."""
        self.name = name
        self.idx = idx
        self.actions = actions
        lc = [0.0] * len(LAYERS)
        for layer, cyc in parts.items():
            lc[LAYER_INDEX[layer]] += cyc
        self.layer_cycles = tuple(lc)
        ins = [c / cpi[j] if cpi and cpi[j] > 0 else 0.0 for j, c in enumerate(lc)]
        self.layer_instructions = tuple(ins)
        self.instructions = sum(ins)
        self.cycles = sum(lc)
        self.user_cycles = self.cycles if user_space else lc[USER]
        self.sys_cycles = self.cycles - self.user_cycles
        if self.cycles > 0:
            self.activity = (self.user_cycles * activity_user + self.sys_cycles * activity_kernel) / self.cycles
        else:
            self.activity = activity_kernel
