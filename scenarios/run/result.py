"""The outcome of one simulation (:func:`scenarios.run.simulate.simulate`).

A :class:`Result` reads like the JSON document ``stacksim run --json`` writes (``result["summary"]``,
``result["sim"]``, for a host run also fio's ``jobs`` and ``disk_util``) and carries what is not
JSON beside it: the per-IO records, the timeline tracer and, when asked, the simulated system.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import numpy as np

from models.ioengines.fio_run import FioRun


class Result(Mapping):
    """One run's result: a read-only mapping of its JSON-serialisable document, plus

    - ``records``: one row per measured IO (a numpy structured array; times in ns) when the run was
      asked for records, else None, in one format for every kind of run
      (:data:`simcore.stats.RECORD_FIELDS`);
    - ``trace``: the timeline tracer (:class:`simcore.tracing.ChromeTracer`) when one was given;
    - ``model``: the simulated system after the run (:class:`models.host.Host` or
      :class:`models.server.target.Server`) when asked (``keep_model=True``), else None;
    - ``run``: with the model of a fio run on a host, fio's run of its jobs
      (:class:`models.ioengines.fio_run.FioRun`: the job threads, their job control and
      steady-state checks), else None.
    """

    __slots__ = ("data", "records", "trace", "model", "run")

    def __init__(
        self, data: dict[str, Any], records: np.ndarray | None = None, trace=None, model=None, run: FioRun | None = None
    ):
        self.data = data
        self.records = records
        self.trace = trace
        self.model = model
        self.run = run

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.data)

    def __len__(self) -> int:
        return len(self.data)

    def __repr__(self) -> str:
        s = self.data.get("summary", {})
        lat = s.get("latency_us", {}).get("mean")
        return f"<Result {self.data.get('scenario')} on {self.data.get('platform')}: {s.get('ios', 0):,} IOs" + (
            f", mean latency {lat:.2f} us>" if lat is not None else ">"
        )

    @property
    def summary(self) -> dict[str, Any]:
        """stacksim's summary: IOPS, latency (us), CPU use, context switches and interrupts per IO,
        power (W) and energy (J), residency, time per stack layer (ns per IO), ..."""
        return self.data["summary"]

    def to_dict(self) -> dict[str, Any]:
        """The JSON-serialisable document (the object itself, not a copy)."""
        return self.data
