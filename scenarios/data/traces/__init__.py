"""Sample block traces (package data) and the scripts that make them, byte for byte:
:mod:`.make_samples` (the MSR, Alibaba and blkparse samples of the trace readers and replay) and
:mod:`.make_timed_sample` (the blkparse Q/D/C sample with measured per-IO timing)."""
