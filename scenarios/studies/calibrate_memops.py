"""Calibration of memory operations (``kernel.mem_ops_per_action`` and ``kernel.mem_ops_per_cycle``)
of ``optane900p-e3-1230v5`` against Table 2 of Harris & Altiparmak (HotStorage 2022; package data
``scenarios/data/reference/poll_vs_interrupt_energy.yaml``; loads + stores per
second by kernel directory and function group, 4 KiB random reads, 32 threads), interrupt and
classic-polling columns only.

Unknowns: operations per execution of each (kernel action, cell) pair allowed by
:data:`models.os.costs.memops.ACTION_CELLS` (a switch, a wake-up, a PELT update, ...: counted by the run;
a sub-action of :data:`models.os.costs.memops.MEMOPS_AS` counts as its action), except the actions whose
operations are derived from the data they touch (:data:`models.os.costs.memops.DERIVED_OPS`: known terms,
taken off the targets), and operations per cycle of each (other source of CPU work, cell) pair allowed by
:data:`models.os.costs.memops.SOURCE_CELLS`. The two columns give 24 equations (relative error); a weak
prior (weight ``PRIOR``) pulls every unknown towards the average intensity of the measured kernel
work spread evenly over its cells (for an action: times its cycles), which decides what the two
columns do not exercise. Solved with bounded linear
least squares (scipy ``lsq_linear``, operations >= 0). The hybrid-polling column and every other
thread count are then predictions of the model: what it executes, action by action.

    stacksim calibrate --study memops [--runtime-ms 60] [-o fit.json]
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import lsq_linear

from models.os.costs.memops import ACTION_CELLS, CELLS, FITTED_ACTIONS, KEYS, MEMOPS_AS, SOURCE_CELLS, rates_per_s
from models.os.costs.tables import ACTIONS
from models.platforms import POLL_ENERGY_FIT, optane900p_e3_1230v5
from scenarios.data import reference
from scenarios.run.summary import non_action_cycles  # the summary's own split
from scenarios.studies.builtin import StudyResult, StudyRow
from scenarios.studies.calibrate_poll_energy import run_mode
from scenarios.studies.sweeps.progress import Progress

PRIOR = 0.05
MODES = {"interrupt": "interrupt", "classic_polling": "classic_polling"}


#: the published figures (scenarios/data/reference/poll_vs_interrupt_energy.yaml)
REFERENCE = ("poll_vs_interrupt_energy", "memory_ops_4k_32_threads")


def table2() -> dict:
    """{mode: {key: million loads+stores per s}}, interrupt and classic polling (Table 2)."""
    return reference.values(*REFERENCE)


def source_work(runtime_ms: int = 60, progress=None) -> dict:
    """Per mode, at 4 KiB and 32 threads (the model's own runs): the cycles per second of each
    source not counted as kernel actions, and the kernel actions per second;
    ``progress.update()`` after each run."""
    kcosts = optane900p_e3_1230v5().kernel
    out = {}
    for mode in ("interrupt", "classic_polling", "hybrid_polling"):
        s = run_mode(POLL_ENERGY_FIT, mode, runtime_ms=runtime_ms, threads=32)
        per_s = s["iops"]
        counted = {**s["kernel_actions_per_io"], **s["kernel_sub_actions_per_io"]}
        actions = {a: n * per_s for a, n in counted.items()}
        out[mode] = {"cycles": non_action_cycles(kcosts, s["cycles_per_s"], actions), "actions": actions}
        if progress is not None:
            progress.update()
    return out


def _as_fitted(actions: dict[str, float]) -> dict[str, float]:
    """Executions per second by fitted action: a sub-action of MEMOPS_AS counts as its action."""
    out: dict[str, float] = {}
    for name, n in actions.items():
        a = MEMOPS_AS.get(name, name)
        out[a] = out.get(a, 0.0) + n
    return out


# long: one linear system, rows by mode x published key, columns by (source or action, cell)
def fit(work: dict) -> dict:
    """{"per_cycle": {source: {cell: ops per cycle}}, "per_action": {action: {cell: ops per action}}}."""
    kcosts = optane900p_e3_1230v5().kernel
    cols = [("cycles", src, cell) for src, cells in SOURCE_CELLS.items() for cell in cells] + [
        ("actions", act, cell) for act in FITTED_ACTIONS for cell in ACTION_CELLS[act]
    ]
    meas = table2()
    rows, rhs = [], []
    for mode in ("interrupt", "classic_polling"):
        counts = {"cycles": work[mode]["cycles"], "actions": _as_fitted(work[mode]["actions"])}
        known = rates_per_s({}, {}, None, work[mode]["actions"])  # the derived actions' operations
        for key in KEYS:
            target = meas[mode][key] * 1e6
            scale = 1.0 / max(target, 1e6)  # relative error (absolute below 1 M/s)
            rows.append(
                [counts[kind].get(name, 0.0) * scale if key in CELLS[cell] else 0.0 for kind, name, cell in cols]
            )
            rhs.append((target - known[key]) * scale)
    a = np.array(rows)
    b = np.array(rhs)
    # average intensity of the measured kernel work: kernel memory ops / kernel cycles
    kernel_keys = ("block/", "drivers/nvme/host/", "kernel/sched/", "kernel/time/")
    kernel_srcs = ("block", "iosched", "driver", "polling")
    modes = ("interrupt", "classic_polling")
    ops = sum(meas[m][k] * 1e6 for m in modes for k in kernel_keys)
    cyc = sum(work[m]["cycles"].get(src, 0.0) for m in modes for src in kernel_srcs)
    cyc += sum(sum(kcosts.action_cycles(work[m]["actions"]).values()) for m in modes)
    mean_intensity = ops / cyc

    def prior_of(kind: str, name: str) -> float:
        if kind == "cycles":
            return mean_intensity / len(SOURCE_CELLS[name])
        return mean_intensity * getattr(kcosts, ACTIONS[name][0]) / len(ACTION_CELLS[name])

    prior = np.array([prior_of(kind, name) for kind, name, _ in cols])
    scale_p = np.array([1.0 / max(p, 1e-12) for p in prior]) * PRIOR
    a_full = np.vstack([a, np.diag(scale_p)])
    b_full = np.concatenate([b, prior * scale_p])
    sol = lsq_linear(a_full, b_full, bounds=(0.0, np.inf))
    out: dict[str, dict[str, dict[str, float]]] = {"per_cycle": {}, "per_action": {}}
    for (kind, name, cell), x in zip(cols, sol.x):
        group = "per_cycle" if kind == "cycles" else "per_action"
        out[group].setdefault(name, {})[cell] = float(round(x, 5 if kind == "cycles" else 2))
    return out


def run_study(runtime_ms: float = 60.0, max_iterations: int | None = None, progress: bool = False):
    """``stacksim calibrate --study memops`` (``max_iterations`` does not apply: a linear problem)."""
    prog = Progress(3, enabled=progress, desc="memops")
    try:
        work = source_work(runtime_ms, prog)
    finally:
        prog.close()
    fitted = fit(work)
    meas = table2()
    rows = []
    for mode in ("interrupt", "classic_polling", "hybrid_polling"):
        pred = rates_per_s(fitted["per_cycle"], work[mode]["cycles"], fitted["per_action"], work[mode]["actions"])
        for k in KEYS + ("total",):
            m = meas.get(mode, {}).get(k)
            rows.append(
                StudyRow(
                    f"{mode} {k}",
                    None if m is None else float(m),
                    pred[k] / 1e6,
                    "M/s",
                    fitted=m is not None and k != "total",
                )
            )
    plat = optane900p_e3_1230v5()
    plat = plat.model_copy(
        update={
            "kernel": plat.kernel.model_copy(
                update={"mem_ops_per_cycle": fitted["per_cycle"], "mem_ops_per_action": fitted["per_action"]}
            )
        }
    )
    return StudyResult(
        "memops",
        "models/platforms.py MEM_OPS (per_cycle, per_action)",
        fitted,
        {},
        rows,
        [reference.cite(*REFERENCE)],
        runtime_ms,
        1,
        True,
        [plat],
    )
