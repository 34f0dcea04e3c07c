"""Values near zero in ``stacksim validate``: a relative error says nothing there (fio's 2e-5
context switches per IO, from a timer tick's preemption now and then, against a predicted 0 is
-100%), so a measured value below its metric's absolute tolerance is compared by the difference,
predicted - measured, against that tolerance, and is left out of the MAPE.

Each tolerance is a small fraction of the rate's unit event, which the model's mechanisms produce
one of per IO on the ordinary path (an interrupt-completed synchronous read sleeps and is woken
once, takes one completion interrupt and one device command): 1% of one per IO. CPU utilisation
is a fraction of the CPUs: one percentage point (fio's ``usr_cpu``/``sys_cpu`` are printed to
0.01%, ``/proc/stat`` ticks at 1%-of-a-CPU resolution per 10 ms tick at HZ=100..1000).
"""

from __future__ import annotations

__all__ = ["ABSOLUTE_TOLERANCE", "absolute_tolerance"]

#: metric -> absolute tolerance, in the metric's unit (events per IO; a fraction of the CPUs)
ABSOLUTE_TOLERANCE: dict[str, float] = {
    "context_switches_per_io": 0.01,
    "voluntary_context_switches_per_io": 0.01,
    "involuntary_context_switches_per_io": 0.01,
    "interrupts_per_io": 0.01,
    "cpu_migrations_per_io": 0.01,
    "hybrid_sleeps_per_io": 0.01,
    "device_commands_per_io": 0.01,
    "cpu_utilization": 0.01,
}


def absolute_tolerance(metric: str) -> float | None:
    """``metric``'s absolute tolerance near zero, None when it is always compared relatively."""
    return ABSOLUTE_TOLERANCE.get(metric)
