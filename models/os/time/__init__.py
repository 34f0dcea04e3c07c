"""``kernel/time``: a CPU's hrtimers (``hrtimer.c``), one level of the CPU's runner."""
