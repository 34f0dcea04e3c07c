"""simpy's environment on the engine's clock (not compiled: it extends a simpy class).

The engine's loop (:meth:`simcore.engine.Engine.run`) advances only ``engine.now``; simpy reads
and writes its clock as ``env._now`` (``env.now``, timeouts, ``succeed()``), here a property over
the engine's attribute, so the two can never differ and the loop sets one attribute per event.
Its events go to the engine's queue, with ids (the same-time tie-break) from the engine's counter."""

from __future__ import annotations

from typing import Any

import simpy
import simpy.events

__all__ = ["ClockedEnvironment"]


class ClockedEnvironment(simpy.Environment):
    """A ``simpy.Environment`` whose clock is ``engine.now`` (ns)."""

    def __init__(self, engine: Any):
        self._engine = engine
        super().__init__()

    def schedule(self, event: Any, priority: Any = simpy.events.NORMAL, delay: Any = 0) -> None:
        """simpy's schedule, into the engine's queue (one queue and one id sequence for simpy
        events and the engine's callbacks: same-time events run in scheduling order)."""
        engine = self._engine
        engine.schedule_simpy(event, priority, engine.now + delay)

    @property
    def _now(self) -> float:  # type: ignore[override]
        return self._engine.now

    @_now.setter
    def _now(self, value: float) -> None:
        self._engine.now = value
